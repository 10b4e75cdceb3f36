//! The rules of memory: what a message is (`message`), one answered turn
//! of a conversation (`turn`), the short-term log (`stm`), what the
//! context holds (`context`), compaction (`compaction`), profiles, topic
//! notes and their index (`ltm`), tiered summaries (`summaries`), expiry
//! (`expiry`), costs and budgets (`ledger`), the failure log of
//! background work (`failures`), whose memory a folder is (`owners`), people
//! and conversations side by side (`people`), search and recall
//! (`search`, `recall`, and ranked auto-recall: `retrieval`), everything
//! of one user at once (`user_data`: stats, erase, delete, export), the
//! move out of the old layout (`migration`), log rotation and pruning
//! (`housekeeping`), work over many owners on threads (`pool`), the
//! instructions given to claude (`prompts`), and the one line format
//! every prompt shows stored messages in (`transcript`).
//!
//! Uses `layout` for every path (but the few names its doc lists as built
//! here), `store` for the bytes on disk and `claude` for LLM calls;
//! prints nothing to stdout.

pub mod compaction;
pub mod context;
pub mod expiry;
pub mod failures;
pub mod housekeeping;
pub mod ledger;
pub mod ltm;
pub mod message;
pub mod migration;
pub mod owners;
pub mod people;
pub mod pool;
pub mod prompts;
pub mod recall;
pub mod retrieval;
pub mod search;
pub mod stm;
pub mod summaries;
pub mod transcript;
pub mod turn;
pub mod user_data;

//! The rules of memory: what a message is, what the context holds, how
//! compaction and profiles work. Uses `store` for the bytes on disk.

pub mod compaction;
pub mod context;
pub mod expiry;
pub mod housekeeping;
pub mod ledger;
pub mod ltm;
pub mod message;
pub mod migration;
pub mod owners;
pub mod people;
pub mod prompts;
pub mod recall;
pub mod search;
pub mod stm;
pub mod summaries;
pub mod user_data;

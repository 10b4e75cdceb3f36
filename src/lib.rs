//! claude-session: memory for chat bots around `claude -p`.
//!
//! The layers, each using only those below it:
//! - `cli` (the arguments, one clap definition for parser, help, man pages
//!   and completions) and `commands` (one module per subcommand, the only
//!   layer that prints to stdout);
//! - `memory`: the rules of memory, from what a message is to compaction,
//!   summaries, search, erase and export;
//! - `claude`: finding and calling `claude -p` and reading its reply, on
//!   `claude::supervise`, which runs a child to its end or a deadline;
//! - `state` (an opened state dir: its layout, config, clock and locks,
//!   the owner and index locks as types; `state::dir`: which state dir,
//!   and what it is on), with `config` (`sessions/config.json`);
//! - `layout`: every path of the file layout (but the few names its doc
//!   lists as built elsewhere) and every name that becomes a path
//!   component, in both directions, and the registry of an owner's files
//!   (`owner_files`);
//! - `store`: bytes on disk (locks, appends, line reads, atomic rewrites,
//!   frontmatter, gzip archives, folder trees), which knows nothing of
//!   users, messages or the layout.
//!
//! `cli::completion` is what TAB offers, read from the state dir. `error` (exit codes and error kinds), `diag` (warnings on
//! stderr), `progress` (a counter on stderr) and `terminal` (text made
//! safe for a terminal) serve every layer.

pub mod claude;
pub mod cli;
pub mod commands;
pub mod config;
pub mod diag;
pub mod error;
pub mod layout;
pub mod memory;
pub mod progress;
pub mod state;
pub mod store;
pub mod terminal;

//! The cost ledgers under `costs/`: maintenance, each sender's, the
//! channel's by month, and where earlier versions kept a sender's.

use std::path::PathBuf;

use super::{Layout, UserId};

impl Layout {
    /// The cost ledgers.
    pub fn costs_dir(&self) -> PathBuf {
        self.sessions.join("costs")
    }

    /// Cost of every LLM call made for maintenance (compaction, summaries).
    pub fn maintenance_ledger_file(&self) -> PathBuf {
        self.costs_dir().join("maintenance.jsonl")
    }

    /// The per-sender ledgers: a folder for each sender.
    pub fn user_ledgers_dir(&self) -> PathBuf {
        self.costs_dir().join("per-user")
    }

    /// The folder of one sender's ledger. One person's files only: a fresh
    /// read on a shared file system lists the folder of a file appended in
    /// place (`store::shared`), and that must not cost more with every
    /// person in the state dir.
    pub fn user_ledger_dir(&self, user: &UserId) -> PathBuf {
        self.user_ledgers_dir().join(user.as_str())
    }

    /// What each `ask` of a sender cost (for budgets and spend reports).
    pub fn user_ledger_file(&self, user: &UserId) -> PathBuf {
        self.user_ledger_dir(user).join("asks.jsonl")
    }

    /// Where earlier versions kept a sender's ledger: one flat folder for
    /// everyone. Moved to [`Layout::user_ledger_file`] when next used.
    pub fn legacy_user_ledger_file(&self, user: &UserId) -> PathBuf {
        self.costs_dir().join("users").join(format!("{user}.jsonl"))
    }

    /// What every `ask` of the channel cost in one month (`YYYY-MM`).
    pub fn channel_ledger_file(&self, month: &str) -> PathBuf {
        self.costs_dir().join(format!("asks-{month}.jsonl"))
    }

    /// Whether a file name in [`Layout::costs_dir`] is a month's channel
    /// ledger (`asks-YYYY-MM.jsonl`).
    pub fn is_channel_ledger(file_name: &str) -> bool {
        file_name.starts_with("asks-") && file_name.ends_with(".jsonl")
    }
}

//! The folders one owner's files go in.

use std::path::PathBuf;

use super::{Layout, UserId};

impl Layout {
    /// Every folder one owner's files are written into or removed from,
    /// areas first: what must never be a symbolic link.
    pub fn owned_dirs(&self, user: &UserId) -> Vec<PathBuf> {
        vec![
            self.stm_root(),
            self.stm_dir(user),
            self.summaries_root(),
            self.summaries_dir(user),
            self.daily_dir(user),
            self.weekly_dir(user),
            self.archive_root(),
            self.archive_dir(user),
            self.exports_root(),
            self.exports_dir(user),
            self.memberships_root(),
            self.memberships_dir(user),
            self.recall_index_root(),
            self.recall_index_dir(user),
            self.ltm_dir(),
            self.profiles_dir(),
            self.sessions.join(".journal"),
            self.costs_dir(),
            self.user_ledgers_dir(),
            self.user_ledger_dir(user),
            self.costs_dir().join("users"),
            self.locks_dir(),
            self.locks_dir().join("users"),
        ]
    }
}

//! Short-term memory: one folder per owner under `stm/`, its log and its
//! rolling summary (the seed's paths).

use std::path::PathBuf;

use super::{Layout, UserId};

impl Layout {
    pub fn stm_root(&self) -> PathBuf {
        self.sessions.join("stm")
    }

    pub fn stm_dir(&self, user: &UserId) -> PathBuf {
        self.stm_root().join(user.as_str())
    }

    pub fn messages_file(&self, user: &UserId) -> PathBuf {
        self.stm_dir(user).join("messages.jsonl")
    }

    pub fn summary_file(&self, user: &UserId) -> PathBuf {
        self.stm_dir(user).join("summary.md")
    }
}

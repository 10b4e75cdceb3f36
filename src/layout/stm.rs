//! Short-term memory: one folder per owner under `stm/`, its log and its
//! rolling summary (the seed's paths).

use std::path::PathBuf;

use super::{Layout, MemoryKey};

impl Layout {
    pub fn stm_root(&self) -> PathBuf {
        self.sessions.join("stm")
    }

    pub fn stm_dir(&self, key: &MemoryKey) -> PathBuf {
        self.stm_root().join(key.as_str())
    }

    pub fn messages_file(&self, key: &MemoryKey) -> PathBuf {
        self.stm_dir(key).join("messages.jsonl")
    }

    pub fn summary_file(&self, key: &MemoryKey) -> PathBuf {
        self.stm_dir(key).join("summary.md")
    }
}

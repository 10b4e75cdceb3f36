//! What this tool keeps per owner beside the seed's tree, in folders the
//! seed never looks at: the recall index, in-chat exports, the compaction
//! journal, membership records, and the private temporary folder.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::{CHAT_EXPORT_TIME_FORMAT, Layout, MemoryKey, UserId};

impl Layout {
    /// Every owner's recall index (derived data: rebuilt from the
    /// archives whenever missing), one folder each; the seed never looks
    /// here.
    pub fn recall_index_root(&self) -> PathBuf {
        self.sessions.join(".recall")
    }

    /// One owner's recall index segments
    /// (`memory::retrieval::index`).
    pub fn recall_index_dir(&self, key: &MemoryKey) -> PathBuf {
        self.recall_index_root().join(key.as_str())
    }

    /// Every person's in-chat exports, one folder each.
    pub fn exports_root(&self) -> PathBuf {
        self.sessions.join("exports")
    }

    /// In-chat `/session export` writes here, inside the state dir.
    pub fn exports_dir(&self, key: &MemoryKey) -> PathBuf {
        self.exports_root().join(key.as_str())
    }

    /// One in-chat export, named by its time:
    /// `export-20260323T032832.123Z.json`.
    pub fn chat_export_file(&self, key: &MemoryKey, made: DateTime<Utc>) -> PathBuf {
        self.exports_dir(key).join(format!(
            "export-{}.json",
            made.format(CHAT_EXPORT_TIME_FORMAT)
        ))
    }

    /// The time an in-chat export was made, from its file name.
    pub fn chat_export_time(file_name: &str) -> Option<DateTime<Utc>> {
        let stamp = file_name.strip_prefix("export-")?.strip_suffix(".json")?;
        chrono::NaiveDateTime::parse_from_str(stamp, CHAT_EXPORT_TIME_FORMAT)
            .ok()
            .map(|t| t.and_utc())
    }

    /// What a compaction is about to do, written before it does it, so a
    /// killed compaction is finished (never repeated) by the next one.
    pub fn compaction_journal_file(&self, key: &MemoryKey) -> PathBuf {
        self.sessions.join(".journal").join(format!("{key}.json"))
    }

    /// Every person's membership records, one folder each.
    pub fn memberships_root(&self) -> PathBuf {
        self.sessions.join("memberships")
    }

    /// The group conversations a user has written in, one empty file each:
    /// what an erase of the user must also clean.
    pub fn memberships_dir(&self, user: &UserId) -> PathBuf {
        self.memberships_root().join(user.as_str())
    }

    pub fn membership_file(&self, user: &UserId, conversation: &MemoryKey) -> PathBuf {
        self.memberships_dir(user).join(conversation.as_str())
    }

    /// Private temporary files (the system prompt handed to claude): kept
    /// in the state dir, so one a killed process left is swept by prune.
    pub fn temp_dir(&self) -> PathBuf {
        self.sessions.join(".tmp")
    }
}

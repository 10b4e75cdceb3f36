//! Lock files under `.locks/` (all but the failure log's, which
//! `memory::failures` names), apart from the data: rewrites rename over
//! data files and expiry removes user folders, neither of which may touch
//! a lock somebody waits on. And the per-message locks and failure
//! records of redelivered messages.

use std::path::PathBuf;

use super::{Layout, MemoryKey};

/// A message id as a file name part (FNV-1a): ids are the platform's, not
/// ours to trust as file names.
fn msg_id_hash(msg_id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in msg_id.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The failure record a temporary file is for, when `name` is one:
/// `.<record>.<pid>.<time>.<n>.tmp` (`store::atomic`'s temporary name),
/// left by a write killed before its rename. Prune never looks under
/// `.locks/`, so only an erase removes it.
fn inflight_temp_record(name: &str) -> Option<&str> {
    let temp = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, _) = temp.rsplit_once(".failed.")?;
    Some(&temp[..stem.len() + ".failed".len()])
}

impl Layout {
    pub fn locks_dir(&self) -> PathBuf {
        self.sessions.join(".locks")
    }

    /// Guards every change to one user's files.
    pub fn user_lock_file(&self, key: &MemoryKey) -> PathBuf {
        self.locks_dir().join("users").join(format!("{key}.lock"))
    }

    /// Held across a compaction's LLM call: one compaction per user.
    pub fn compaction_lock_file(&self, key: &MemoryKey) -> PathBuf {
        self.locks_dir().join("compact").join(format!("{key}.lock"))
    }

    /// Guards `ltm/index.json`.
    pub fn index_lock_file(&self) -> PathBuf {
        self.locks_dir().join("index.lock")
    }

    /// Guards every cost ledger (the senders', the channel's, maintenance).
    pub fn ledger_lock_file(&self) -> PathBuf {
        self.locks_dir().join("ledger.lock")
    }

    /// Held by the process answering one message id, so a redelivery of
    /// the same id waits for that answer instead of asking again.
    pub fn inflight_lock_file(&self, key: &MemoryKey, msg_id: &str) -> PathBuf {
        self.inflight_dir()
            .join(format!("{key}-{:016x}.lock", msg_id_hash(msg_id)))
    }

    /// The per-message locks and failure records of redelivered messages.
    pub fn inflight_dir(&self) -> PathBuf {
        self.locks_dir().join("inflight")
    }

    /// Whose per-message lock or failure record `name` (a file name in
    /// [`Self::inflight_dir`]) is: the owner's folder name, as
    /// [`Self::inflight_lock_file`] wrote it (a record's temporary file
    /// too); `None` for any other name.
    pub fn inflight_owner(name: &str) -> Option<&str> {
        let name = inflight_temp_record(name).unwrap_or(name);
        let stem = name
            .strip_suffix(".lock")
            .or_else(|| name.strip_suffix(".failed"))?;
        // The hash is the last part: an owner's id may hold a `-` itself.
        let (owner, hash) = stem.rsplit_once('-')?;
        (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(owner)
    }

    /// The per-message lock a failure record (or its temporary file, or
    /// the lock itself) in [`Self::inflight_dir`] belongs to.
    pub fn inflight_lock_of(path: &std::path::Path) -> PathBuf {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let name = inflight_temp_record(name).unwrap_or(name);
        match name.strip_suffix(".failed") {
            Some(stem) => path.with_file_name(format!("{stem}.lock")),
            None => path.to_owned(),
        }
    }

    /// Beside the message lock: how the last retry of a redelivered message
    /// failed, so the redeliveries that waited for it share that failure
    /// instead of each calling claude again.
    pub fn inflight_failure_file(&self, key: &MemoryKey, msg_id: &str) -> PathBuf {
        self.inflight_dir()
            .join(format!("{key}-{:016x}.failed", msg_id_hash(msg_id)))
    }

    /// Held for a whole `maintain` pass: one pass at a time.
    pub fn maintain_lock_file(&self) -> PathBuf {
        self.locks_dir().join("maintain.lock")
    }
}

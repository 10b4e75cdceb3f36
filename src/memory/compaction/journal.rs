//! The write-ahead journal of step 3: everything a compaction (or an
//! expiry) will write, written before it, so a process killed midway is
//! finished by the next one without an LLM call and without archiving a
//! line twice.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::diag;
use crate::layout::MemoryKey;
use crate::memory::message::Message;
use crate::state::{OwnerLock, State};
use crate::store::archive;
use crate::store::atomic::write_atomic;
use crate::store::fs::{read_optional, remove_if_exists};

/// Everything step 3 will write, so a replay needs no LLM and no guess.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Journal {
    prefix_len: usize,
    prefix_crc: u32,
    /// The whole new `summary.md` (none for expiry).
    summary: Option<String>,
    archives: Vec<ArchiveStep>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveStep {
    day: NaiveDate,
    /// The archive's size before this compaction: bigger means done.
    size_before: u64,
    /// Byte ranges of the lines, within the prefix.
    lines: Vec<(usize, usize)>,
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

impl Journal {
    pub(super) fn new(
        state: &State,
        user: &MemoryKey,
        prefix: &[u8],
        lines: &[(NaiveDate, std::ops::Range<usize>)],
        summary: Option<String>,
    ) -> anyhow::Result<Self> {
        let mut archives: Vec<ArchiveStep> = Vec::new();
        for (day, range) in lines {
            let step = match archives.iter_mut().find(|s| s.day == *day) {
                Some(step) => step,
                None => {
                    let path = state.layout.archive_file(user, *day);
                    // The real size (not a shared file system's cached
                    // one): a replay compares against it.
                    let size_before = crate::store::fs::len_of(&path)?.unwrap_or(0);
                    archives.push(ArchiveStep {
                        day: *day,
                        size_before,
                        lines: Vec::new(),
                    });
                    archives.last_mut().expect("just pushed")
                }
            };
            step.lines.push((range.start, range.end));
        }
        Ok(Self {
            prefix_len: prefix.len(),
            prefix_crc: crc32(prefix),
            summary,
            archives,
        })
    }
}

/// Write what a compaction is about to do, under the owner's lock (the
/// caller's proof), before it does it.
pub(super) fn write_journal(
    state: &State,
    lock: &OwnerLock,
    journal: &Journal,
) -> anyhow::Result<()> {
    let bytes = serde_json::to_vec(journal)?;
    write_atomic(
        &state.layout.compaction_journal_file(lock.owner()),
        &bytes,
        state.fsync(),
    )
}

/// Finish a compaction a killed process left half done. The caller holds
/// the user lock. Whatever rewrites the log or writes the archive calls
/// this first (compaction, expiry, clear, export, daily summaries); a plain
/// append needs not: the journal's prefix check covers lines added after.
pub fn recover_locked(state: &State, lock: &OwnerLock) -> anyhow::Result<()> {
    let user = lock.owner();
    let path = state.layout.compaction_journal_file(user);
    let Some(bytes) = read_optional(&path)? else {
        return Ok(());
    };
    match serde_json::from_slice::<Journal>(&bytes) {
        Ok(journal) => {
            diag::info(format!("finishing an interrupted compaction of {user}"));
            apply_journal_locked(state, lock, &journal).map(|_| ())
        }
        Err(e) => {
            // Written atomically, so never torn: this is a hand edit or
            // another tool's file. Dropping it risks a duplicate, not a loss.
            diag::warn(format!(
                "{}: unreadable compaction journal ({e}); removed",
                path.display()
            ));
            remove_if_exists(&path).map(|_| ())
        }
    }
}

/// Carry out a journal; each step is skipped when already done. The log
/// must still start with the journal's prefix, else the last step was
/// done and only the journal is left to remove. Returns the number of
/// messages left in the log.
pub(super) fn apply_journal_locked(
    state: &State,
    lock: &OwnerLock,
    journal: &Journal,
) -> anyhow::Result<usize> {
    let user = lock.owner();
    let messages_path = state.layout.messages_file(user);
    let log = read_optional(&messages_path)?.unwrap_or_default();
    let prefix = log.get(..journal.prefix_len);
    if let Some(prefix) = prefix.filter(|p| crc32(p) == journal.prefix_crc) {
        for step in &journal.archives {
            let archive_path = state.layout.archive_file(user, step.day);
            let size = crate::store::fs::len_of(&archive_path)?.unwrap_or(0);
            if size > step.size_before {
                continue; // written before the kill
            }
            let lines: Vec<&[u8]> = step
                .lines
                .iter()
                .map(|&(start, end)| &prefix[start..end])
                .collect();
            archive::append_member(&archive_path, &lines, state.fsync())?;
        }
        if let Some(summary) = &journal.summary {
            write_atomic(
                &state.layout.summary_file(user),
                summary.as_bytes(),
                state.fsync(),
            )?;
        }
        write_atomic(&messages_path, &log[journal.prefix_len..], state.fsync())?;
    }
    remove_if_exists(&state.layout.compaction_journal_file(user))?;
    let rest = log.get(journal.prefix_len..).unwrap_or(&log);
    Ok(rest
        .split(|&b| b == b'\n')
        .filter(|line| Message::parse(line).is_ok())
        .count())
}

//! STM expiry: a user idle for `scheduler.stmExpireDays` has their log
//! moved to the archive and their summary archived, then the STM folder
//! removed. Profiles, summaries and archives stay. The same retirement
//! serves an admin's clear of a user's STM (`session clear`, and
//! `/session clear` in chat).

use chrono::{DateTime, Duration, Utc};

use crate::layout::MemoryKey;
use crate::memory::compaction::archive_whole_log_locked;
use crate::memory::message::is_believable;
use crate::memory::stm;
use crate::state::{OwnerLock, State};
use crate::store::atomic::write_atomic;
use crate::store::fs::{read_optional_text, remove_if_exists};

/// The newest sign of life in a user's STM at `now`: the newest message
/// time (not the last line's: an import appends old history after new
/// messages), or the files' modification time when no line parses. Times
/// from the future (a hand edit, an earlier version) are no sign of life:
/// one of them would keep the log from ever expiring.
pub fn last_activity(
    state: &State,
    user: &MemoryKey,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<DateTime<Utc>>> {
    if let Some(newest) = stm::all_times(state, user)?
        .into_iter()
        .filter(|ts| is_believable(ts, now))
        .max()
    {
        return Ok(Some(newest));
    }
    let modified = [
        state.layout.messages_file(user),
        state.layout.summary_file(user),
    ]
    .iter()
    .filter_map(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
    .max();
    Ok(modified.map(DateTime::<Utc>::from))
}

/// Is the user idle past the expiry age at `now`?
pub fn is_expired(state: &State, user: &MemoryKey, now: DateTime<Utc>) -> anyhow::Result<bool> {
    let age = Duration::days(state.config.scheduler.stm_expire_days as i64);
    // Most users wrote recently: a recent last line settles it without
    // reading the whole log.
    if stm::recent(state, user, 1)?
        .first()
        .is_some_and(|last| is_believable(&last.ts, now) && now - last.ts <= age)
    {
        return Ok(false);
    }
    Ok(last_activity(state, user, now)?.is_some_and(|last| now - last > age))
}

/// Expire one user if still idle, under the user lock (a user who wrote
/// since the check is left alone). Returns the messages archived, or
/// `None` when the user was not expired after all.
pub fn expire_user(
    state: &State,
    user: &MemoryKey,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<usize>> {
    let lock = state.lock_owner(user)?;
    if !is_expired(state, user, now)? {
        return Ok(None);
    }
    let moved = retire_stm_locked(state, &lock, now)?;
    Ok(Some(moved))
}

/// Clear a user's short-term memory now (`session clear`, in-chat `/session
/// clear`), under the user lock: its messages move to the archive, as an
/// expiry moves them. Returns the messages archived.
pub fn clear_stm(state: &State, user: &MemoryKey, now: DateTime<Utc>) -> anyhow::Result<usize> {
    let lock = state.lock_owner(user)?;
    retire_stm_locked(state, &lock, now)
}

/// Move a user's STM out of the way without losing it: the log goes to the
/// archive (journalled), the summary to `archive/<user>/summary-DAY.md`,
/// and the empty folder is removed. The caller holds the user lock.
/// Returns the number of messages archived.
pub fn retire_stm_locked(
    state: &State,
    lock: &OwnerLock,
    now: DateTime<Utc>,
) -> anyhow::Result<usize> {
    let user = lock.owner();
    let moved = archive_whole_log_locked(state, lock)?;
    let summary_path = state.layout.summary_file(user);
    if let Some(summary) = read_optional_text(&summary_path)? {
        let archived = state.layout.archived_summary_file(user, now.date_naive());
        // A second retirement on the same day adds to that day's file; a
        // retirement killed after this write and redone adds nothing twice.
        let text = match read_optional_text(&archived)? {
            Some(before) if before.trim_end().ends_with(summary.trim_end()) => None,
            Some(before) => Some(format!("{}\n\n{summary}", before.trim_end())),
            None => Some(summary),
        };
        if let Some(text) = text {
            write_atomic(&archived, text.as_bytes(), state.fsync())?;
        }
        remove_if_exists(&summary_path)?;
    }
    // Gone only if empty: anything else someone put there stays.
    let _ = std::fs::remove_dir(state.layout.stm_dir(user));
    Ok(moved)
}

//! The failure log: what went wrong where nobody was watching.
//!
//! Background work (the compaction `ask` starts detached, an inline
//! compaction after the reply was sent, a `maintain` pass from cron) has
//! no terminal, or one nobody reads. Each of its failures is appended as
//! one JSON line to `logs/claude-session.jsonl` (`0600`, beside the broker
//! logs), under its own lock; `session status` and `doctor` show the
//! recent ones, and `maintain`'s log rotation archives the log as it does
//! the broker logs. Recording is best effort: a failure log that cannot be
//! written never fails the work it reports on.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::error::exit_code_of;
use crate::layout::Layout;
use crate::memory::message::format_ts;
use crate::state::State;
use crate::store::lock::FileLock;

/// The log's file name in `logs/`.
pub const FILE_NAME: &str = "claude-session.jsonl";

/// A log this big is archived by the next rotation, whatever its age.
const MAX_BYTES: u64 = 1024 * 1024;

/// How many recent failures `session status` and `doctor` show.
pub const SHOWN: usize = 5;

/// One failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub ts: String,
    /// What failed: `compact`, `maintain daily`, …
    pub task: String,
    /// Whose work it was, when it was one person's or conversation's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
    /// The exit code the error carries (5: claude not found, …).
    pub exit: i32,
    pub error: String,
}

impl Failure {
    pub fn time(&self) -> Option<DateTime<Utc>> {
        crate::memory::message::parse_ts(&self.ts).ok()
    }
}

/// Append `error` of `task` (for `who`) to the failure log. Never fails:
/// a log that cannot be written is warned about.
pub fn record(state: &State, task: &str, who: Option<&str>, error: &anyhow::Error) {
    record_text(
        state,
        task,
        who,
        exit_code_of(error).code(),
        &format!("{error:#}"),
    );
}

/// [`record`] of an error already rendered (a `maintain` report line).
pub fn record_text(state: &State, task: &str, who: Option<&str>, exit: i32, error: &str) {
    let failure = Failure {
        ts: format_ts(&state.clock.now()),
        task: task.to_owned(),
        who: who.map(str::to_owned),
        exit,
        // One line, and not a flood: an error quotes claude's output.
        error: crate::terminal::printable(error)
            .chars()
            .take(2_000)
            .collect(),
    };
    let result = (|| -> anyhow::Result<()> {
        let line = serde_json::to_vec(&failure)?;
        let _lock = lock(state)?;
        crate::store::jsonl::append_lines(&path(state), &[&line], state.fsync())
    })();
    if let Err(e) = result {
        crate::diag::warn(format!(
            "could not write the failure log {}: {e:#}",
            path(state).display()
        ));
    }
}

/// The newest `n` failures, oldest first (none when there is no log).
/// Lines that do not parse are skipped.
pub fn recent(state: &State, n: usize) -> anyhow::Result<Vec<Failure>> {
    let mut found = all(state)?;
    let skip = found.len().saturating_sub(n);
    found.drain(..skip);
    Ok(found)
}

/// Every failure in the log, oldest first.
fn all(state: &State) -> anyhow::Result<Vec<Failure>> {
    all_in(&state.layout)
}

fn all_in(layout: &Layout) -> anyhow::Result<Vec<Failure>> {
    let path = layout.logs_dir().join(FILE_NAME);
    let bytes = crate::store::fs::read_optional(&path)?.unwrap_or_default();
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect())
}

/// The failures of the last `hours` hours, newest last, at most [`SHOWN`].
pub fn since(state: &State, now: DateTime<Utc>, hours: i64) -> anyhow::Result<Vec<Failure>> {
    since_in(&state.layout, now, hours)
}

/// [`since`] in a state dir that is not opened (`doctor`).
pub fn since_in(layout: &Layout, now: DateTime<Utc>, hours: i64) -> anyhow::Result<Vec<Failure>> {
    let cutoff = now - Duration::hours(hours);
    let mut found: Vec<Failure> = all_in(layout)?
        .into_iter()
        .filter(|f| f.time().is_some_and(|t| t >= cutoff))
        .collect();
    let skip = found.len().saturating_sub(SHOWN);
    found.drain(..skip);
    Ok(found)
}

/// Archive the failure log (as a broker log is) when its oldest entry is
/// older than `scheduler.logRotateDays` (or it passed 1 MiB); the archive's path, if it was.
/// Under the log's lock, so no failure recorded meanwhile is lost.
pub fn rotate_if_due(
    state: &State,
    now: DateTime<Utc>,
    dry_run: bool,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let path = path(state);
    let Some(first) = all(state)?.into_iter().next() else {
        return Ok(None);
    };
    let cutoff = now - Duration::days(state.config.scheduler.log_rotate_days as i64);
    let too_big = std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_BYTES);
    if !too_big && first.time().is_none_or(|t| t >= cutoff) {
        return Ok(None);
    }
    if dry_run {
        return Ok(Some(path));
    }
    let _lock = lock(state)?;
    crate::memory::housekeeping::rotate_log(state, &path).map(Some)
}

/// `logs/claude-session.jsonl` of the state dir.
pub fn path(state: &State) -> std::path::PathBuf {
    state.layout.logs_dir().join(FILE_NAME)
}

fn lock(state: &State) -> anyhow::Result<FileLock> {
    FileLock::acquire(
        &state.layout.locks_dir().join("failure-log.lock"),
        state.config.lock_timeout(),
        "the failure log",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Clock;
    use crate::state::dir::{EffectiveStateDir, StateDirSource};

    /// The time of a failure is the state's clock, not the system's: a
    /// fixed clock is what the log says.
    #[test]
    fn a_failure_is_dated_by_the_states_clock() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sessions")).unwrap();
        let origin = EffectiveStateDir {
            path: dir.path().to_owned(),
            source: StateDirSource::Flag,
        };
        let at = chrono::DateTime::parse_from_rfc3339("2021-05-06T07:08:09Z")
            .unwrap()
            .with_timezone(&Utc);
        let state = State {
            clock: Clock::Fixed(at),
            ..State::open(origin, None).unwrap()
        };
        record_text(&state, "maintain daily", Some("U1"), 6, "claude failed");
        let logged = recent(&state, 1).unwrap();
        assert_eq!(logged.len(), 1);
        assert_eq!(logged[0].ts, format_ts(&at));
    }
}

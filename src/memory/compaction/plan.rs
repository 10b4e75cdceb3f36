//! Planning over the log: which prefix of `messages.jsonl` leaves it,
//! which archive day takes each of its lines, and whether the log still
//! starts with that prefix when the summary comes back.

use chrono::NaiveDate;

use crate::diag;
use crate::memory::message::Message;
use crate::memory::stm;
use crate::state::{OwnerLock, State};
use crate::store::frontmatter::Document;
use crate::store::fs::open_read;
use crate::store::lines;

/// At most this many bytes of raw lines go into one summarising call; a
/// longer backlog (an import, a disabled compactor) takes several rounds.
const CHUNK_BYTES: u64 = 256 * 1024;

pub(super) enum Planned {
    Nothing { messages: usize },
    Compact(Plan),
}

pub(super) struct Plan {
    /// The exact bytes at the start of the log that will leave it.
    pub(super) prefix: Vec<u8>,
    /// Non-blank lines of the prefix with the day whose archive takes them.
    pub(super) lines: Vec<(NaiveDate, std::ops::Range<usize>)>,
    /// The valid messages among them, for the prompt.
    pub(super) messages: Vec<Message>,
    /// Valid messages in the whole log.
    pub(super) total: usize,
    /// Valid messages beyond the window now (the plan takes them, or its
    /// chunk of them).
    pub(super) beyond_window: usize,
    pub(super) previous: Option<Document>,
}

/// Decide what leaves the log, at most `at_most` valid messages (what is
/// left of the backlog a run found when it started). The caller holds the
/// user lock.
pub(super) fn plan_locked(
    state: &State,
    lock: &OwnerLock,
    force: bool,
    at_most: Option<usize>,
) -> anyhow::Result<Planned> {
    let user = lock.owner();
    let path = state.layout.messages_file(user);
    let Some(file) = open_read(&path)? else {
        return Ok(Planned::Nothing { messages: 0 });
    };
    // Start offsets (and ends, after the newline) of every valid line.
    // Unreadable lines are not counted; the warning comes when they are
    // archived (or read for context).
    let valid = lines::complete_line_spans(&file, &path, |body| Message::parse(body).is_ok())?;
    let total = valid.len();
    let window = state.config.context_window();
    let limit = if force {
        window
    } else {
        state.config.threshold()
    };
    if total <= limit || total <= window {
        return Ok(Planned::Nothing { messages: total });
    }
    let beyond_window = total - window;
    let leaving = beyond_window.min(at_most.unwrap_or(usize::MAX));
    if leaving == 0 {
        return Ok(Planned::Nothing { messages: total });
    }
    // The prefix ends where the first message that stays starts (or, when
    // every message leaves, after the last valid line), cut to a chunk.
    let window_start = if leaving == total {
        valid[total - 1].1
    } else {
        valid[leaving].0
    };
    let prefix_end = valid[1..leaving]
        .iter()
        .map(|&(start, _)| start)
        .find(|&start| start >= CHUNK_BYTES)
        .unwrap_or(window_start);

    let prefix = lines::read_prefix(&file, &path, prefix_end as usize)?;
    let (lines, messages) = archive_days(&prefix, &path, state.clock.now().date_naive());
    Ok(Planned::Compact(Plan {
        prefix,
        lines,
        messages,
        total,
        beyond_window,
        previous: stm::summary(state, user)?,
    }))
}

/// Each non-blank line of `prefix` with the day whose archive takes it
/// (its message's UTC date; an unreadable line goes with its neighbours),
/// and the valid messages among them.
pub(super) fn archive_days(
    prefix: &[u8],
    path: &std::path::Path,
    today: NaiveDate,
) -> (Vec<(NaiveDate, std::ops::Range<usize>)>, Vec<Message>) {
    let mut lines = Vec::new();
    let mut messages = Vec::new();
    let mut unreadable = Vec::new();
    for range in crate::store::lines::nonblank_line_ranges(prefix) {
        match Message::parse(&prefix[range.clone()]) {
            Ok(message) => {
                let day = message.ts.date_naive();
                // Unreadable lines before this one go to its day.
                for index in unreadable.drain(..) {
                    lines.push((day, index));
                }
                lines.push((day, range));
                messages.push(message);
            }
            Err(why) => {
                diag::warn(format!(
                    "{} byte {}: an unreadable line ({why}) is moved to the archive as it is",
                    path.display(),
                    range.start
                ));
                unreadable.push(range);
            }
        }
    }
    let last_day = lines.last().map_or(today, |(day, _)| *day);
    lines.extend(unreadable.into_iter().map(|range| (last_day, range)));
    (lines, messages)
}

/// Whether the log still starts with `prefix` (what a plan read):
/// checked under the owner's lock, which the caller proves it holds.
pub(super) fn prefix_unchanged(
    state: &State,
    lock: &OwnerLock,
    prefix: &[u8],
) -> anyhow::Result<bool> {
    lines::starts_with(&state.layout.messages_file(lock.owner()), prefix)
}

/// The senders named on the plan's user lines (a group conversation).
pub(super) fn senders(plan: &Plan) -> std::collections::BTreeSet<String> {
    plan.messages
        .iter()
        .filter_map(|m| m.sender().map(str::to_owned))
        .collect()
}

//! Planning over the log: which prefix of `messages.jsonl` leaves it,
//! which archive day takes each of its lines, and whether the log still
//! starts with that prefix when the summary comes back.

use std::io::{BufRead as _, BufReader};

use anyhow::Context as _;
use chrono::{NaiveDate, Utc};

use crate::diag;
use crate::layout::UserId;
use crate::memory::message::Message;
use crate::memory::stm;
use crate::state::State;
use crate::store::frontmatter::Document;
use crate::store::fs::open_read;
use crate::store::shared::AlignedReader;

/// At most this many bytes of raw lines go into one summarising call; a
/// longer backlog (an import, a disabled compactor) takes several rounds.
const CHUNK_BYTES: u64 = 256 * 1024;

pub(super) fn more_lines_than(path: &std::path::Path, limit: usize) -> anyhow::Result<bool> {
    let Some(file) = open_read(path)? else {
        return Ok(false);
    };
    let mut reader = BufReader::with_capacity(64 * 1024, AlignedReader::new(&file));
    let mut lines = 0usize;
    loop {
        let buf = reader
            .fill_buf()
            .with_context(|| format!("could not read {}", path.display()))?;
        if buf.is_empty() {
            return Ok(false);
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        if lines > limit {
            return Ok(true);
        }
        let n = buf.len();
        reader.consume(n);
    }
}

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
    pub(super) previous: Option<Document>,
}

/// Decide what leaves the log. The caller holds the user lock.
pub(super) fn plan_locked(state: &State, user: &UserId, force: bool) -> anyhow::Result<Planned> {
    let path = state.layout.messages_file(user);
    let Some(file) = open_read(&path)? else {
        return Ok(Planned::Nothing { messages: 0 });
    };
    // Start offsets (and ends, after the newline) of every valid line.
    let mut valid: Vec<(u64, u64)> = Vec::new();
    // Aligned reads, as a file open with O_DIRECT needs.
    let mut reader = BufReader::with_capacity(64 * 1024, AlignedReader::new(&file));
    let mut offset = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("could not read {}", path.display()))?;
        if n == 0 {
            break;
        }
        let complete = line.last() == Some(&b'\n');
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        // Unreadable lines are not counted; the warning comes when they are
        // archived (or read for context).
        if complete && Message::parse(body).is_ok() {
            valid.push((offset, offset + n as u64));
        }
        offset += n as u64;
    }
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
    let leaving = total - window;
    // The prefix ends where the first kept message starts (or, with a
    // window of 0, after the last valid line), cut to a chunk.
    let window_start = if window == 0 {
        valid[total - 1].1
    } else {
        valid[leaving].0
    };
    let prefix_end = valid[1..leaving]
        .iter()
        .map(|&(start, _)| start)
        .find(|&start| start >= CHUNK_BYTES)
        .unwrap_or(window_start);

    let mut prefix = vec![0u8; prefix_end as usize];
    crate::store::shared::read_exact_at(&file, &mut prefix, 0)
        .with_context(|| format!("could not read {}", path.display()))?;
    let (lines, messages) = archive_days(&prefix, &path);
    Ok(Planned::Compact(Plan {
        prefix,
        lines,
        messages,
        total,
        previous: stm::summary(state, user)?,
    }))
}

/// Each non-blank line of `prefix` with the day whose archive takes it
/// (its message's UTC date; an unreadable line goes with its neighbours),
/// and the valid messages among them.
pub(super) fn archive_days(
    prefix: &[u8],
    path: &std::path::Path,
) -> (Vec<(NaiveDate, std::ops::Range<usize>)>, Vec<Message>) {
    let mut lines = Vec::new();
    let mut messages = Vec::new();
    let mut unreadable = Vec::new();
    let mut start = 0;
    for raw in prefix.split_inclusive(|&b| b == b'\n') {
        let end = start + raw.len() - usize::from(raw.ends_with(b"\n"));
        let range = start..end;
        start += raw.len();
        let body = &prefix[range.clone()];
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match Message::parse(body) {
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
    let last_day = lines
        .last()
        .map_or_else(|| Utc::now().date_naive(), |(day, _)| *day);
    lines.extend(unreadable.into_iter().map(|range| (last_day, range)));
    (lines, messages)
}

pub(super) fn prefix_unchanged(
    state: &State,
    user: &UserId,
    prefix: &[u8],
) -> anyhow::Result<bool> {
    let Some(file) = open_read(&state.layout.messages_file(user))? else {
        return Ok(false);
    };
    let mut now = vec![0u8; prefix.len()];
    Ok(crate::store::shared::read_exact_at(&file, &mut now, 0).is_ok() && now == prefix)
}

/// The senders named on the plan's user lines (a group conversation).
pub(super) fn senders(plan: &Plan) -> std::collections::BTreeSet<String> {
    plan.messages
        .iter()
        .filter_map(|m| m.sender().map(str::to_owned))
        .collect()
}

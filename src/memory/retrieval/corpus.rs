//! What recall searches: every message of one owner (every archive day,
//! oldest first, and the live log, read fresh) and the daily and weekly
//! summaries and the archived rolling summaries (retired by `session
//! clear` or an expiry), each line of a summary its own unit. The rolling
//! summary and the sender's profile are already whole in the context.
//!
//! An archive day whose recall index segment is current
//! ([`super::index`]) is not read: its docs are counted, scored from
//! their postings, and read from the segment only when chosen. Every
//! other day, and the live log, is read whole. Both give the same units
//! in the same order, so recall ranks the same with or without an index.
//! Their scores for a query are [`super::score`]'s.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;

use chrono::{DateTime, NaiveDate, Utc};

use super::index::{self, Segment};
use super::tokenize;

use crate::layout::Layout;
use crate::memory::message::Message;
use crate::memory::owners::Owner;
use crate::memory::transcript;
use crate::memory::{ltm, stm, summaries};
use crate::state::State;
use crate::store::archive;

/// One unit of recall: a stored message, or a line of a summary.
#[derive(Debug, Clone)]
// Nearly every unit is a message: boxing it would cost an allocation each.
#[allow(clippy::large_enum_variant)]
pub enum Item {
    Message(Message),
    Note {
        ts: DateTime<Utc>,
        /// `Daily summary`, `Weekly summary` or `Earlier summary` (a
        /// retired rolling summary).
        label: String,
        text: String,
    },
}

impl Item {
    pub fn ts(&self) -> DateTime<Utc> {
        match self {
            Item::Message(m) => m.ts,
            Item::Note { ts, .. } => *ts,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Item::Message(m) => &m.text,
            Item::Note { text, .. } => text,
        }
    }

    /// How it reads in the context ([`crate::memory::transcript`]).
    pub fn transcript_line(&self) -> String {
        match self {
            Item::Message(m) => transcript::format_message(m),
            Item::Note { ts, label, text } => transcript::format_note(*ts, label, text),
        }
    }
}

/// A unit and where it is stored.
#[derive(Debug, Clone)]
pub struct Unit {
    pub item: Item,
    pub source: Source,
}

/// Where a unit is stored; shown (and in JSON written) as `log`,
/// `archive YYYY-MM-DD`, `daily YYYY-MM-DD`, `weekly YYYY-Www`, `rolling YYYY-MM-DD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The live log.
    Log,
    /// The archive of a day.
    Archive(NaiveDate),
    /// A daily or weekly summary, by its name.
    Daily(String),
    Weekly(String),
    /// A rolling summary retired on that day (`summary-DAY.md`).
    Rolling(NaiveDate),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Log => f.write_str("log"),
            Source::Archive(day) => write!(f, "archive {day}"),
            Source::Daily(name) => write!(f, "daily {name}"),
            Source::Weekly(name) => write!(f, "weekly {name}"),
            Source::Rolling(day) => write!(f, "rolling {day}"),
        }
    }
}

impl serde::Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The owner's messages in time order, then the summaries' lines, all in
/// memory: what [`super::rank`] takes (tests, and a caller that has
/// its units already).
/// Messages come first and are consecutive, so a message's neighbours are
/// the units beside it; `messages` says how many there are.
pub struct Corpus {
    pub units: Vec<Unit>,
    pub messages: usize,
}

/// Units by their place in the corpus: what ranking reads, some of them
/// loaded only when asked for.
pub trait Units {
    /// Units in all (messages, then notes).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Messages: units `0..messages()`.
    fn messages(&self) -> usize;
    /// The unit at `i`, read from an index segment if not in memory.
    fn unit(&self, i: usize) -> anyhow::Result<Unit>;
    /// The unit at `i` if it is in memory; `None` for one still in a
    /// segment: an archive day that holds neither a message of the
    /// recent window nor the one being answered (those days are read
    /// whole), so the window check needs no read.
    fn peek(&self, i: usize) -> Option<&Unit>;
    /// The day (UTC) the unit at `i` was written on.
    fn day(&self, i: usize) -> anyhow::Result<NaiveDate> {
        Ok(super::when::day_of(self.unit(i)?.item.ts()))
    }
}

impl Units for Corpus {
    fn len(&self) -> usize {
        self.units.len()
    }
    fn messages(&self) -> usize {
        self.messages
    }
    fn unit(&self, i: usize) -> anyhow::Result<Unit> {
        Ok(self.units[i].clone())
    }
    fn peek(&self, i: usize) -> Option<&Unit> {
        self.units.get(i)
    }
}

/// Consecutive messages of the corpus.
pub(super) enum Part {
    /// Read whole: an archive day without a current segment (with the
    /// live log's messages of that day), or every day at once.
    Loaded { start: usize, units: Vec<Unit> },
    /// One archive day, left in its segment.
    Indexed {
        start: usize,
        segment: usize,
        doc_start: u32,
        count: u32,
        len_sum: u64,
        /// The first doc's length and characters, the last doc's length.
        first_len: u32,
        first_chars: u32,
        last_len: u32,
        day: NaiveDate,
        /// The day all its messages were written on (`None`: an archive
        /// holding messages of other days too, written by another tool).
        written: Option<NaiveDate>,
    },
}

impl Part {
    fn start(&self) -> usize {
        match self {
            Part::Loaded { start, .. } | Part::Indexed { start, .. } => *start,
        }
    }
}

/// The stored lines of one block of a segment.
type Lines = Vec<Vec<u8>>;

/// One owner's memory as recall reads it.
pub struct View {
    pub(super) parts: Vec<Part>,
    pub(super) notes: Vec<Unit>,
    pub(super) messages: usize,
    pub(super) segments: Vec<Segment>,
    /// Archive days scored from the index, and read whole.
    pub indexed_days: usize,
    pub scanned_days: usize,
    /// Stored blocks already inflated, by segment and block.
    blocks: RefCell<HashMap<(usize, u32), Rc<Lines>>>,
}

/// The live log's messages and an archive day's, in time order: the
/// archive's lines in their order, then the log's lines the archive does
/// not hold (a compaction between the two reads puts lines in both),
/// sorted by time (a stable sort: equal times keep that order).
fn merge_day(archived: Vec<Message>, log: Vec<Message>, day: NaiveDate) -> Vec<Unit> {
    let held: HashSet<(DateTime<Utc>, &str)> =
        archived.iter().map(|m| (m.ts, m.text.as_str())).collect();
    let log: Vec<Message> = log
        .into_iter()
        .filter(|m| !held.contains(&(m.ts, m.text.as_str())))
        .collect();
    let mut units: Vec<Unit> = archived
        .into_iter()
        .map(|m| Unit {
            item: Item::Message(m),
            source: Source::Archive(day),
        })
        .chain(log.into_iter().map(|m| Unit {
            item: Item::Message(m),
            source: Source::Log,
        }))
        .collect();
    units.sort_by_key(|u| u.item.ts());
    units
}

fn archived_messages(state: &State, owner: &Owner, day: NaiveDate) -> anyhow::Result<Vec<Message>> {
    let path = state.layout.archive_file(&owner.key, day);
    let read = archive::read_lines(&path)?;
    for damage in &read.damage {
        crate::diag::warn(format!(
            "{}: {damage}; recalled from what could be read",
            path.display()
        ));
    }
    Ok(read
        .lines
        .iter()
        .filter_map(|line| Message::parse(line).ok())
        .collect())
}

/// The segments of `owner`'s index, by file name; a damaged or
/// unreadable one is warned about and left out (its days are read whole), one of another
/// tokenizer version or an older format left out silently (stale, like a
/// changed archive).
pub fn open_segments(
    state: &State,
    owner: &Owner,
    leave_out: &HashSet<PathBuf>,
) -> anyhow::Result<Vec<Segment>> {
    let dir = state.layout.recall_index_dir(&owner.key);
    let mut segments = Vec::new();
    for name in crate::store::fs::file_names(&dir)? {
        if !name.ends_with(index::SUFFIX) {
            continue;
        }
        let path = dir.join(&name);
        if leave_out.contains(&path) {
            continue;
        }
        match Segment::open(&path) {
            Ok(Some(segment)) if segment.tokenizer_version == tokenize::VERSION => {
                segments.push(segment);
            }
            Ok(_) => {}
            Err(e) if e.downcast_ref::<index::Damaged>().is_some_and(|d| d.stale) => {}
            Err(e) if e.downcast_ref::<index::Damaged>().is_some() => {
                crate::diag::warn(format!("{e}"));
            }
            // Unreadable (a folder or a FIFO by its name, no permission):
            // derived data, so its days are read from the archives, as
            // for damage.
            Err(e) => crate::diag::warn(format!(
                "recall index {} left out ({e:#}); its days are read from the archives",
                path.display()
            )),
        }
    }
    Ok(segments)
}

/// Read `owner`'s memory for recall: the live log fresh, each archive day
/// from its segment if that is current and the day holds none of the
/// messages of `scan_days` (the recent window's days), else from the
/// archive; segments in `leave_out` are not used (found damaged).
pub fn read(
    state: &State,
    owner: &Owner,
    scan_days: &[NaiveDate],
    leave_out: &HashSet<PathBuf>,
) -> anyhow::Result<View> {
    let mut days = Days::read(state, owner)?;
    let segments = open_segments(state, owner, leave_out)?;
    let mut from_index = days.indexed(state, owner, &segments, scan_days)?;

    let mut parts = Parts::default();
    for day in days.all.clone() {
        if let Some((segment, entry)) = from_index.remove(&day) {
            parts.indexed(day, segment, &entry);
            continue;
        }
        let archived = if days.archive.contains(&day) {
            parts.scanned_days += 1;
            archived_messages(state, owner, day)?
        } else {
            Vec::new()
        };
        parts.loaded(merge_day(
            archived,
            days.log.remove(&day).unwrap_or_default(),
            day,
        ));
    }
    let in_order = parts.bounds.windows(2).all(|w| w[0].1 < w[1].0);
    let (list, messages) = if in_order {
        (parts.list, parts.start)
    } else {
        // Archives whose messages are not all of their day (written by
        // another tool): every day read whole, all sorted at once.
        let units = read_all(state, owner)?;
        parts.indexed_days = 0;
        parts.scanned_days = days.archive.len();
        let n = units.len();
        (vec![Part::Loaded { start: 0, units }], n)
    };
    Ok(View {
        parts: list,
        notes: notes(state, owner, &days.retired_summaries)?,
        messages,
        segments,
        indexed_days: parts.indexed_days,
        scanned_days: parts.scanned_days,
        blocks: RefCell::new(HashMap::new()),
    })
}

/// The days an owner's messages are on: what [`read`] walks.
struct Days {
    /// The days with an archive.
    archive: HashSet<NaiveDate>,
    /// The days a rolling summary was retired on (the same folder's
    /// listing).
    retired_summaries: Vec<NaiveDate>,
    /// The live log's messages, by day.
    log: HashMap<NaiveDate, Vec<Message>>,
    /// Every day of either, ascending.
    all: Vec<NaiveDate>,
}

impl Days {
    /// The log first, then the archives: a compaction in between moves
    /// lines from the one to the others, so they are read twice (and
    /// deduplicated), never missed.
    fn read(state: &State, owner: &Owner) -> anyhow::Result<Self> {
        let messages = stm::all_messages_in(&owner.messages_file(state))?;
        let names = crate::store::fs::file_names(&owner.archive_dir(state))?;
        let archive: HashSet<NaiveDate> = names
            .iter()
            .filter_map(|n| Layout::archive_day(n))
            .collect();
        let retired_summaries = retired_summary_days(&names);
        let mut log: HashMap<NaiveDate, Vec<Message>> = HashMap::new();
        for m in messages {
            log.entry(m.ts.date_naive()).or_default().push(m);
        }
        let mut all: Vec<NaiveDate> = archive
            .iter()
            .copied()
            .chain(log.keys().copied())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        all.sort();
        Ok(Days {
            archive,
            retired_summaries,
            log,
            all,
        })
    }

    /// Which days a current segment holds: archived, not in the live log
    /// nor in `scan_days`, and the archive still the one indexed; by day,
    /// with the segment's number and the day's entry.
    fn indexed(
        &self,
        state: &State,
        owner: &Owner,
        segments: &[Segment],
        scan_days: &[NaiveDate],
    ) -> anyhow::Result<HashMap<NaiveDate, (usize, index::DayEntry)>> {
        let archive_dir = owner.archive_dir(state);
        // On a local disk each archive is looked up in its open folder; on
        // a shared one through the careful path (`store::shared`).
        let local_dir = if crate::store::filesystem::is_shared(&archive_dir) || segments.is_empty()
        {
            None
        } else {
            std::fs::File::open(&archive_dir).ok()
        };
        let mut from_index: HashMap<NaiveDate, (usize, index::DayEntry)> = HashMap::new();
        for (s, segment) in segments.iter().enumerate() {
            for entry in &segment.days {
                let usable = self.archive.contains(&entry.day)
                    && !self.log.contains_key(&entry.day)
                    && !scan_days.contains(&entry.day)
                    && !from_index.contains_key(&entry.day)
                    && {
                        let now = match &local_dir {
                            Some(dir) => {
                                index::Identity::current_at(dir, &archive_name(entry.day))?
                            }
                            None => index::Identity::current(
                                &state.layout.archive_file(&owner.key, entry.day),
                            )?,
                        };
                        now == Some(entry.archive)
                    };
                if usable {
                    from_index.insert(entry.day, (s, entry.clone()));
                }
            }
        }
        Ok(from_index)
    }
}

/// The file name of `day`'s archive, as [`Layout::archive_file`] names
/// it, without building its path (asked once an archive day).
fn archive_name(day: NaiveDate) -> String {
    format!("messages-{day}.jsonl.gz")
}

/// The parts of a [`View`] as [`read`] puts them together, day by day.
#[derive(Default)]
struct Parts {
    list: Vec<Part>,
    /// The place of the next part's first message.
    start: usize,
    indexed_days: usize,
    scanned_days: usize,
    /// Each part's first and last time: the parts must follow each other
    /// in time for their concatenation to be the time order.
    bounds: Vec<(i64, i64)>,
}

impl Parts {
    /// A day left in its segment.
    fn indexed(&mut self, day: NaiveDate, segment: usize, entry: &index::DayEntry) {
        self.indexed_days += 1;
        if entry.doc_count == 0 {
            return;
        }
        self.bounds.push((entry.min_ts_ns, entry.max_ts_ns));
        self.list.push(Part::Indexed {
            start: self.start,
            segment,
            doc_start: entry.doc_start,
            count: entry.doc_count,
            len_sum: entry.len_sum,
            first_len: entry.first_len,
            first_chars: entry.first_chars,
            last_len: entry.last_len,
            day,
            written: Some(ns_day(entry.min_ts_ns))
                .filter(|first| *first == ns_day(entry.max_ts_ns)),
        });
        self.start += entry.doc_count as usize;
    }

    /// A day read whole (nothing if it holds no message).
    fn loaded(&mut self, units: Vec<Unit>) {
        let ns = |u: &Unit| match &u.item {
            Item::Message(m) => index::ts_ns(m),
            Item::Note { .. } => 0,
        };
        if let (Some(first), Some(last)) = (units.first(), units.last()) {
            self.bounds.push((ns(first), ns(last)));
            self.start += units.len();
            self.list.push(Part::Loaded {
                start: self.start - units.len(),
                units,
            });
        }
    }
}

/// The day (UTC) of a time in ns.
fn ns_day(ns: i64) -> NaiveDate {
    super::when::day_of(DateTime::from_timestamp_nanos(ns))
}

/// Every message, every archive read whole, in time order.
fn read_all(state: &State, owner: &Owner) -> anyhow::Result<Vec<Unit>> {
    let log = stm::all_messages_in(&owner.messages_file(state))?;
    let mut days = summaries::archive_days_in(&owner.archive_dir(state))?;
    days.sort();
    let mut units: Vec<Unit> = Vec::new();
    for day in days {
        units.extend(
            archived_messages(state, owner, day)?
                .into_iter()
                .map(|m| Unit {
                    item: Item::Message(m),
                    source: Source::Archive(day),
                }),
        );
    }
    let archived: HashSet<(DateTime<Utc>, String)> = units
        .iter()
        .filter_map(|u| match &u.item {
            Item::Message(m) => Some((m.ts, m.text.clone())),
            Item::Note { .. } => None,
        })
        .collect();
    units.extend(
        log.into_iter()
            .filter(|m| !archived.contains(&(m.ts, m.text.clone())))
            .map(|m| Unit {
                item: Item::Message(m),
                source: Source::Log,
            }),
    );
    units.sort_by_key(|u| u.item.ts());
    Ok(units)
}

/// Every message and summary line in memory (no index used).
pub fn read_corpus(state: &State, owner: &Owner) -> anyhow::Result<Corpus> {
    let mut units = read_all(state, owner)?;
    let messages = units.len();
    let names = crate::store::fs::file_names(&owner.archive_dir(state))?;
    units.extend(notes(state, owner, &retired_summary_days(&names))?);
    Ok(Corpus { units, messages })
}

/// The days of the archived rolling summaries among an archive folder's
/// file names, oldest first.
fn retired_summary_days(names: &[String]) -> Vec<NaiveDate> {
    let mut days: Vec<NaiveDate> = names
        .iter()
        .filter_map(|n| Layout::archived_summary_day(n))
        .collect();
    days.sort();
    days
}

/// The lines of the daily and weekly summaries, then of the rolling
/// summaries retired on `retired` (days).
fn notes(state: &State, owner: &Owner, retired: &[NaiveDate]) -> anyhow::Result<Vec<Unit>> {
    let mut units = Vec::new();
    for (dir, kind) in [
        (owner.daily_dir(state), "daily"),
        (owner.weekly_dir(state), "weekly"),
    ] {
        for name in ltm::markdown_names(&dir)? {
            let ts = match kind {
                "daily" => Layout::daily_day(&name),
                _ => Layout::weekly_week(&name)
                    .map(|(year, week)| summaries::Week { year, week }.sunday()),
            };
            let Some(ts) = ts
                .and_then(|d| d.and_hms_opt(23, 59, 59))
                .map(|t| t.and_utc())
            else {
                continue;
            };
            let path = Layout::markdown_file(&dir, &name);
            let Some(text) = stm::read_text_or_warn(&path)? else {
                continue;
            };
            let body = stm::parse_document_or_warn(&text, &path).body;
            let label = match kind {
                "daily" => "Daily summary",
                _ => "Weekly summary",
            };
            let source = match kind {
                "daily" => Source::Daily(name.clone()),
                _ => Source::Weekly(name.clone()),
            };
            push_note_lines(&mut units, ts, label, &body, &source);
        }
    }
    for &day in retired {
        let path = state.layout.archived_summary_file(&owner.key, day);
        let Some(text) = stm::read_text_or_warn(&path)? else {
            continue;
        };
        let ts = retired_summary_time(day);
        for (_, line) in retired_summary_lines(&text, &path) {
            push_note_lines(
                &mut units,
                ts,
                "Earlier summary",
                &line,
                &Source::Rolling(day),
            );
        }
    }
    Ok(units)
}

/// A summary's lines as units, each line (a list item, a heading) its own,
/// with what only marks it up left off.
fn push_note_lines(
    units: &mut Vec<Unit>,
    ts: DateTime<Utc>,
    label: &str,
    body: &str,
    source: &Source,
) {
    for line in body.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '#', ' ']);
        if line.chars().count() < 3 {
            continue;
        }
        units.push(Unit {
            item: Item::Note {
                ts,
                label: label.to_owned(),
                text: line.to_owned(),
            },
            source: source.clone(),
        });
    }
}

/// The body lines of an archived rolling summary, each with its line
/// number in the file (from 1), what recall and phrase search read: a second retirement on
/// the same day appends the next summary, frontmatter and all, after a
/// blank line ([`crate::memory::expiry::retire_stm_locked`]), so each
/// is parsed as the document it was and no frontmatter key is taken for
/// prose. A later one begins at a `---` line after a blank line (LF or
/// CRLF) opening a frontmatter that parses and holds a key compaction
/// writes ([`SUMMARY_KEYS`]); a `---` rule in a body, even with
/// `Word: value` lines after it, stays in it.
pub(crate) fn retired_summary_lines(text: &str, path: &std::path::Path) -> Vec<(usize, String)> {
    let later = ["\n\n---\n", "\n\n---\r\n", "\r\n\r\n---\r\n"]
        .iter()
        .flat_map(|opening| text.match_indices(opening))
        .map(|(at, opening)| at + opening.len() - opening.trim_start().len())
        .filter(|&at| {
            crate::store::frontmatter::Document::parse(&text[at..])
                .is_ok_and(|doc| SUMMARY_KEYS.iter().any(|k| doc.get_str(k).is_some()))
        });
    let mut bounds: Vec<usize> = std::iter::once(0).chain(later).collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds.push(text.len());
    let mut lines = Vec::new();
    for w in bounds.windows(2) {
        let part = &text[w[0]..w[1]];
        let body = stm::parse_document_or_warn(part, path).body;
        let body_start =
            text[..w[0]].matches('\n').count() + part.lines().count() - body.lines().count();
        lines.extend(
            body.lines()
                .enumerate()
                .map(|(i, line)| (body_start + i + 1, line.to_owned())),
        );
    }
    lines
}

/// When a retired rolling summary's lines are dated: the start of the
/// day it was retired on (it tells of what came before).
pub fn retired_summary_time(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(chrono::NaiveTime::MIN).and_utc()
}

/// Keys the frontmatter of a rolling summary holds
/// ([`crate::memory::compaction`] writes them).
const SUMMARY_KEYS: [&str; 2] = ["user_id", "last_compacted"];

impl View {
    /// The part holding message `i`.
    fn part(&self, i: usize) -> &Part {
        let p = self.parts.partition_point(|p| p.start() <= i);
        &self.parts[p - 1]
    }
}

impl Units for View {
    fn len(&self) -> usize {
        self.messages + self.notes.len()
    }

    fn messages(&self) -> usize {
        self.messages
    }

    fn unit(&self, i: usize) -> anyhow::Result<Unit> {
        if let Some(unit) = self.peek(i) {
            return Ok(unit.clone());
        }
        let Part::Indexed {
            start,
            segment,
            doc_start,
            day,
            ..
        } = self.part(i)
        else {
            unreachable!("peek answers for units in memory")
        };
        let doc = doc_start + (i - start) as u32;
        let block = Segment::block_of(doc);
        let cached = self.blocks.borrow().get(&(*segment, block)).cloned();
        let lines = match cached {
            Some(lines) => lines,
            None => {
                let lines = Rc::new(self.segments[*segment].block_lines(block)?);
                self.blocks
                    .borrow_mut()
                    .insert((*segment, block), lines.clone());
                lines
            }
        };
        let path = &self.segments[*segment].path;
        let line = lines
            .get(Segment::place_in_block(doc))
            .ok_or_else(|| index::damaged(path, "a stored block short of docs"))?;
        let message = Message::parse(line)
            .map_err(|why| index::damaged(path, format!("a stored line: {why}")))?;
        Ok(Unit {
            item: Item::Message(message),
            source: Source::Archive(*day),
        })
    }

    fn day(&self, i: usize) -> anyhow::Result<NaiveDate> {
        if i < self.messages
            && let Part::Indexed {
                written: Some(day), ..
            } = self.part(i)
        {
            return Ok(*day);
        }
        Ok(super::when::day_of(self.unit(i)?.item.ts()))
    }

    fn peek(&self, i: usize) -> Option<&Unit> {
        if i >= self.messages {
            return self.notes.get(i - self.messages);
        }
        match self.part(i) {
            Part::Loaded { start, units } => units.get(i - start),
            Part::Indexed { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_is_looked_up_by_the_name_the_layout_gives_it() {
        for (y, m, d) in [(2026, 3, 23), (1, 1, 1), (999, 12, 31), (9999, 12, 31)] {
            let day = NaiveDate::from_ymd_opt(y, m, d).unwrap();
            let name = archive_name(day);
            assert_eq!(Layout::archive_day(&name), Some(day), "{name}");
        }
        assert_eq!(
            archive_name(NaiveDate::from_ymd_opt(2026, 3, 5).unwrap()),
            "messages-2026-03-05.jsonl.gz"
        );
    }

    #[test]
    fn retired_summaries_split_only_where_a_summary_s_frontmatter_begins() {
        let path = std::path::Path::new("summary-2026-03-01.md");
        let doc = |body: &str, eol: &str| {
            format!("---\nuser_id: U1\nlast_compacted: 2026-02-01T10:00:00.000Z\n---\n\n{body}\n")
                .replace('\n', eol)
        };
        for eol in ["\n", "\r\n"] {
            // Joined as `retire_stm_locked` joins them.
            let text = format!(
                "{}{eol}{eol}{}",
                doc("- Talked.", eol).trim_end(),
                doc("- Kyoto in spring.", eol)
            );
            let lines = retired_summary_lines(&text, path);
            let shown: Vec<(usize, &str)> = lines
                .iter()
                .map(|(n, l)| (*n, l.trim_end()))
                .filter(|(_, l)| !l.is_empty())
                .collect();
            // By their line in the file: no frontmatter key is prose.
            assert_eq!(
                shown,
                [(6, "- Talked."), (13, "- Kyoto in spring.")],
                "{eol:?}"
            );
            let in_file: Vec<&str> = text.lines().collect();
            assert_eq!(in_file[12].trim_end(), "- Kyoto in spring.");
        }
        // A rule and `Word: value` lines in a body are prose.
        let body = "- Talked.\n\n---\nPets: Biscuit, a golden retriever puppy.\n---\n\n- Kyoto.";
        let lines = retired_summary_lines(&doc(body, "\n"), path);
        assert!(
            lines.iter().any(|(_, l)| l.starts_with("Pets: Biscuit")),
            "{lines:?}"
        );
    }
}

//! `session search`: everything stored, searched line by line as ripgrep
//! would — short-term logs, gzip archives, summaries (rolling, daily,
//! weekly), profiles and topic notes, of people and conversations alike.
//!
//! Message files are streamed through ripgrep's own line searcher
//! (`grep-searcher`), archives decoded member by member on the fly
//! ([`crate::store::archive::MembersReader`]), so memory stays flat whatever the archive
//! size. The searcher matches a phrase as it is stored (JSON-escaped) on
//! the raw line, a cheap prefilter; only a candidate line is parsed (with
//! `--regex`, which cannot see through the escapes, every line is), and
//! it is a hit only when the match is in its message *text* (not in a key
//! or an id) and the filters pass. Files are searched by as many threads as
//! there are cores. Hits come back newest first; with a limit, no thread
//! ever holds more than that many.

use std::collections::{BTreeSet, BinaryHeap};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, NaiveDate, Utc};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{Searcher, SearcherBuilder, sinks};
use serde::{Deserialize, Serialize};

use crate::error::usage;
use crate::layout::owner_files::{self, Id};
use crate::layout::{Layout, UserId};
use crate::memory::message::{Role, parse_ts};
use crate::memory::owners::{self, Owner, OwnerKind};
use crate::memory::{ltm, summaries};
use crate::state::State;
use crate::store::archive::MembersReader;
use crate::store::frontmatter::Document;

/// What `--kind` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Message,
    Summary,
    Profile,
    Topic,
}

/// Which file of its kind a hit is in: `stm` or `archive` for messages;
/// `rolling`, `daily`, `weekly` for summaries; `profile`; `topic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Stm,
    Archive,
    Rolling,
    Daily,
    Weekly,
    Profile,
    Topic,
}

impl Source {
    /// Its name, as `--json` writes it and the text output says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Stm => "stm",
            Source::Archive => "archive",
            Source::Rolling => "rolling",
            Source::Daily => "daily",
            Source::Weekly => "weekly",
            Source::Profile => "profile",
            Source::Topic => "topic",
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A search, its words and its filters, already checked.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// A phrase (matched literally, case-insensitively) or a regex.
    pub pattern: String,
    pub regex: bool,
    pub user: Option<UserId>,
    pub conversation: Option<UserId>,
    pub role: Option<Role>,
    pub since: Option<DateTime<Utc>>,
    /// Exclusive: hits before this time.
    pub until: Option<DateTime<Utc>>,
    /// Empty: every kind.
    pub kinds: BTreeSet<Kind>,
    /// Only profiles and topic notes carrying every one of these tags.
    pub tags: Vec<String>,
    /// At most this many hits, the newest; `None`: all.
    pub limit: Option<usize>,
    /// Only these owners' memory and no topic notes (recall's scope,
    /// settled by the caller); `None`: every owner.
    pub within: Option<Vec<Owner>>,
}

/// One matching line.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub kind: Kind,
    /// The person or conversation whose memory holds it (topics: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner_kind: Option<OwnerKind>,
    /// Relative to `sessions/`.
    pub file: String,
    /// Line number in the file (in the decompressed text for an archive).
    pub line: u64,
    /// The message's time; a summary's day end; a note's `updated` time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<DateTime<Utc>>,
    pub source: Source,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Who spoke: the sender's id (a person's own user lines: the person).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker_name: Option<String>,
    /// The matching line of the text (one line of a multi-line message).
    pub text: String,
    /// Byte ranges of the matches in `text`.
    pub matches: Vec<(usize, usize)>,
}

/// Hits, newest first, and how much was searched.
#[derive(Debug, Default)]
pub struct Outcome {
    pub hits: Vec<Hit>,
    pub files: usize,
    /// Hits left out by the limit.
    pub more: usize,
}

/// One file to search.
#[derive(Debug, Clone)]
struct Target {
    path: PathBuf,
    kind: Kind,
    source: Source,
    owner: Option<Owner>,
    /// For a message file of a conversation when `--user` is given: only
    /// lines this person sent, or the replies to them.
    about: Option<UserId>,
    size: u64,
}

/// Run a search over the whole state dir.
pub fn search(state: &State, query: &Query) -> anyhow::Result<Outcome> {
    let matchers = Matchers::new(query)?;
    let mut targets = targets(state, query)?;
    // Largest first: the threads end together instead of one finishing a
    // big archive alone.
    targets.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
    let sessions = state.layout.sessions_dir();
    let next = AtomicUsize::new(0);
    let collected = Mutex::new(Collector::new(query.limit));
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(targets.len())
        .max(1);
    let first_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    // Without --user it reads every person's files: on a terminal, say how
    // far it is.
    let progress = crate::progress::Progress::new("search", targets.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut local = Collector::new(query.limit);
                let mut buffers = Buffers::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(target) = targets.get(i) else { break };
                    progress.step();
                    let result =
                        search_target(target, query, &matchers, sessions, &mut buffers, &mut local);
                    if let Err(e) = result {
                        first_error.lock().expect("not poisoned").get_or_insert(e);
                        break;
                    }
                }
                collected.lock().expect("not poisoned").merge(local);
            });
        }
    });
    if let Some(e) = first_error.into_inner().expect("not poisoned") {
        return Err(e);
    }
    let collector = collected.into_inner().expect("not poisoned");
    let more = collector.dropped;
    let mut hits: Vec<Hit> = collector.heap.into_iter().map(|r| r.hit).collect();
    hits.sort_by(newest_first);
    Ok(Outcome {
        hits,
        files: targets.len(),
        more,
    })
}

fn newest_first(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    b.ts.cmp(&a.ts)
        .then_with(|| a.file.cmp(&b.file))
        .then_with(|| a.line.cmp(&b.line))
}

/// The prefilter over raw stored lines and the check over decoded text.
struct Matchers {
    /// Over the stored line; `None` for a regex (it cannot see through
    /// JSON escapes and anchors), so every line is parsed then.
    raw: Option<RegexMatcher>,
    text: regex::Regex,
}

impl Matchers {
    fn new(query: &Query) -> anyhow::Result<Self> {
        let pattern = if query.regex {
            query.pattern.clone()
        } else {
            regex::escape(&query.pattern)
        };
        let text = regex::RegexBuilder::new(&pattern)
            .case_insensitive(true)
            .size_limit(16 << 20)
            .build()
            .map_err(|e| usage(format!("--regex: the pattern does not compile: {e}")))?;
        if text.is_match("") {
            return Err(usage(
                "the search pattern matches empty text, so it would match every line; \
                 give a word or a pattern that needs at least one character",
            ));
        }
        let raw = if query.regex {
            None
        } else {
            // As stored: a quote is `\"`, a backslash `\\`, a newline `\n`.
            let stored = serde_json::to_string(&query.pattern)?;
            let stored = &stored[1..stored.len() - 1];
            Some(
                RegexMatcherBuilder::new()
                    .case_insensitive(true)
                    .fixed_strings(true)
                    .build_literals(&[stored])
                    .map_err(|e| usage(format!("the search phrase: {e}")))?,
            )
        };
        Ok(Self { raw, text })
    }

    /// Match ranges in a line of text.
    fn find(&self, line: &str) -> Vec<(usize, usize)> {
        self.text
            .find_iter(line)
            .filter(|m| !m.is_empty())
            .map(|m| (m.start(), m.end()))
            .collect()
    }
}

// --- which files ----------------------------------------------------------------

/// Which kinds of file a query reads.
struct Wanted {
    messages: bool,
    summaries: bool,
    profiles: bool,
}

fn targets(state: &State, query: &Query) -> anyhow::Result<Vec<Target>> {
    let wants = |kind| query.kinds.is_empty() || query.kinds.contains(&kind);
    // A role or tags only exist on messages or on notes respectively.
    let prose = query.role.is_none();
    let wanted = Wanted {
        messages: wants(Kind::Message) && query.tags.is_empty(),
        summaries: wants(Kind::Summary) && prose && query.tags.is_empty(),
        profiles: wants(Kind::Profile) && prose && query.conversation.is_none(),
    };
    let topics =
        wants(Kind::Topic) && prose && query.conversation.is_none() && query.within.is_none();
    let all = match &query.within {
        Some(within) => within.clone(),
        None => owners::owners(state)?,
    };
    known_conversation(&all, query.conversation.as_ref())?;
    let mut out = Vec::new();
    for owner in &all {
        if let Some(key) = &query.conversation
            && &owner.key != key
        {
            continue;
        }
        // `--user`: the person's own memory, and their lines in groups.
        let own = query.user.as_ref().is_none_or(|u| u == &owner.key);
        let about = match &query.user {
            Some(user) if !own => {
                if owner.kind != OwnerKind::Conversation {
                    continue;
                }
                Some(user)
            }
            _ => None,
        };
        // What the registry says this owner has; what each entry holds
        // decides which of its files are searched, and how.
        for entry in owner_files::entries_of(&owner.key) {
            entry_targets(state, query, &wanted, entry.id, owner, about, &mut out)?;
        }
    }
    if topics {
        let dir = state.layout.topics_dir();
        for name in ltm::markdown_names(&dir)? {
            let path = Layout::markdown_file(&dir, &name);
            push(&mut out, path, Kind::Topic, Source::Topic, None, None);
        }
    }
    Ok(out)
}

/// The files of one registry entry of `owner` that the query reads.
/// `about`: only a person's lines in a conversation (no prose).
fn entry_targets(
    state: &State,
    query: &Query,
    wanted: &Wanted,
    entry: Id,
    owner: &Owner,
    about: Option<&UserId>,
    out: &mut Vec<Target>,
) -> anyhow::Result<()> {
    let prose = about.is_none();
    match entry {
        Id::Stm => {
            if wanted.messages {
                let log = owner.messages_file(state);
                push(out, log, Kind::Message, Source::Stm, Some(owner), about);
            }
            if wanted.summaries && prose {
                let rolling = owner.summary_file(state);
                push(
                    out,
                    rolling,
                    Kind::Summary,
                    Source::Rolling,
                    Some(owner),
                    None,
                );
            }
        }
        // Dated archives; the archived rolling summaries (`summary-DAY.md`)
        // beside them are not searched.
        Id::Archive if wanted.messages => {
            for day in summaries::archive_days_in(&owner.archive_dir(state))? {
                if day_in_range(day, day, query) {
                    let path = state.layout.archive_file(&owner.key, day);
                    push(
                        out,
                        path,
                        Kind::Message,
                        Source::Archive,
                        Some(owner),
                        about,
                    );
                }
            }
        }
        Id::Summaries if wanted.summaries && prose => {
            for (dir, source) in [
                (owner.daily_dir(state), Source::Daily),
                (owner.weekly_dir(state), Source::Weekly),
            ] {
                for name in ltm::markdown_names(&dir)? {
                    if let Some((first, last)) = summary_days(&name)
                        && !day_in_range(first, last, query)
                    {
                        continue;
                    }
                    let path = Layout::markdown_file(&dir, &name);
                    push(out, path, Kind::Summary, source, Some(owner), None);
                }
            }
        }
        Id::Profile if wanted.profiles && prose => {
            if let Some(path) = owner.profile_file(state) {
                push(out, path, Kind::Profile, Source::Profile, Some(owner), None);
            }
        }
        Id::Archive | Id::Summaries | Id::Profile => {}
        // No content: copies, records, derived data, locks, ledgers.
        Id::Exports
        | Id::Journal
        | Id::CompactionLock
        | Id::Memberships
        | Id::MembershipRecords
        | Id::RecallIndex
        | Id::Ledger
        | Id::LegacyLedger
        | Id::OwnerLock => {}
    }
    Ok(())
}

/// A file to search, if it is one.
fn push(
    out: &mut Vec<Target>,
    path: PathBuf,
    kind: Kind,
    source: Source,
    owner: Option<&Owner>,
    about: Option<&UserId>,
) {
    if let Ok(meta) = std::fs::metadata(&path)
        && meta.is_file()
    {
        out.push(Target {
            path,
            kind,
            source,
            owner: owner.cloned(),
            about: about.cloned(),
            size: meta.len(),
        });
    }
}

/// The days a summary file covers: `YYYY-MM-DD` or `YYYY-Www`.
fn summary_days(name: &str) -> Option<(NaiveDate, NaiveDate)> {
    if let Some(day) = Layout::daily_day(name) {
        return Some((day, day));
    }
    let (year, week) = Layout::weekly_week(name)?;
    let week = summaries::Week { year, week };
    Some((week.monday(), week.sunday()))
}

/// Whether days `first..=last` overlap `--since`/`--until`.
fn day_in_range(first: NaiveDate, last: NaiveDate, query: &Query) -> bool {
    let start = first.and_hms_opt(0, 0, 0).expect("midnight").and_utc();
    let end = last.and_hms_opt(23, 59, 59).expect("valid").and_utc();
    query.since.is_none_or(|since| end >= since) && query.until.is_none_or(|until| start < until)
}

fn time_in_range(ts: Option<DateTime<Utc>>, query: &Query) -> bool {
    match ts {
        Some(ts) => {
            query.since.is_none_or(|since| ts >= since)
                && query.until.is_none_or(|until| ts < until)
        }
        None => query.since.is_none() && query.until.is_none(),
    }
}

// --- searching one file -----------------------------------------------------------

/// What a thread keeps from one file to the next: the line searcher (its
/// line buffer) and the archive decoder (its inflate state and input
/// buffer). Made once per thread, not once per file: besides the work,
/// a new decoder per archive left the allocator a hole per archive (see
/// [`MembersReader`]).
struct Buffers {
    searcher: Searcher,
    archive: Option<MembersReader<std::fs::File>>,
}

impl Buffers {
    fn new() -> Self {
        Self {
            searcher: SearcherBuilder::new().line_number(true).build(),
            archive: None,
        }
    }

    /// The archive decoder (made on first use), reading `file` from its
    /// start.
    fn archive_of(
        archive: &mut Option<MembersReader<std::fs::File>>,
        file: std::fs::File,
    ) -> &mut MembersReader<std::fs::File> {
        match archive {
            Some(reader) => {
                reader.reuse(file);
                reader
            }
            None => archive.insert(MembersReader::new(file)),
        }
    }
}

/// The fields of a log line a hit needs, borrowed where it can be.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredLine<'a> {
    #[serde(borrow)]
    ts: std::borrow::Cow<'a, str>,
    role: Role,
    #[serde(borrow)]
    text: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    user_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    user_name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    asked_by: Option<std::borrow::Cow<'a, str>>,
}

fn search_target(
    target: &Target,
    query: &Query,
    matchers: &Matchers,
    sessions: &Path,
    buffers: &mut Buffers,
    hits: &mut Collector,
) -> anyhow::Result<()> {
    let relative = target
        .path
        .strip_prefix(sessions)
        .unwrap_or(&target.path)
        .display()
        .to_string();
    if target.kind != Kind::Message {
        return search_note(target, query, matchers, &relative, hits);
    }
    let mut on_line = |number: u64, line: &[u8]| {
        if let Some(hit) = message_hit(target, query, matchers, &relative, number, line) {
            hits.push(hit);
        }
    };
    let file = match std::fs::File::open(&target.path) {
        Ok(file) => file,
        // Gone since listed (expiry, compaction): nothing to search.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context(format!("could not read {}", target.path.display()))
            );
        }
    };
    let failed = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!("could not search {}", target.path.display()))
    };
    if target.source == Source::Archive {
        let Buffers { searcher, archive } = buffers;
        let reader = Buffers::archive_of(archive, file);
        scan(&mut *reader, matchers, searcher, &mut on_line).map_err(failed)?;
        for damage in reader.damage() {
            crate::diag::warn(format!(
                "{}: {damage}; searched what could be read",
                target.path.display()
            ));
        }
    } else {
        scan(file, matchers, &mut buffers.searcher, &mut on_line).map_err(failed)?;
    }
    Ok(())
}

/// Hand every candidate line (with its number) to `on_line`: the lines the
/// prefilter matches, or every line for a regex.
fn scan(
    reader: impl std::io::Read,
    matchers: &Matchers,
    searcher: &mut Searcher,
    on_line: &mut impl FnMut(u64, &[u8]),
) -> std::io::Result<()> {
    match &matchers.raw {
        Some(raw) => searcher.search_reader(
            raw,
            reader,
            sinks::Bytes(|number, line| {
                on_line(number, line.strip_suffix(b"\n").unwrap_or(line));
                Ok(true)
            }),
        ),
        None => {
            let mut reader = BufReader::with_capacity(64 * 1024, reader);
            let mut line = Vec::new();
            let mut number = 0;
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line)? == 0 {
                    return Ok(());
                }
                number += 1;
                on_line(number, line.strip_suffix(b"\n").unwrap_or(&line));
            }
        }
    }
}

fn message_hit(
    target: &Target,
    query: &Query,
    matchers: &Matchers,
    relative: &str,
    number: u64,
    line: &[u8],
) -> Option<Hit> {
    // A line that does not parse is no message; the other commands warn
    // about it, search only passes it by.
    let stored: StoredLine = serde_json::from_slice(line).ok()?;
    if query.role.is_some_and(|role| role != stored.role) {
        return None;
    }
    if let Some(user) = &target.about {
        let about = stored.user_id.as_deref() == Some(user.as_str())
            || stored.asked_by.as_deref() == Some(user.as_str());
        if !about {
            return None;
        }
    }
    let ts = parse_ts(&stored.ts).ok();
    if !time_in_range(ts, query) {
        return None;
    }
    let (text, matches) = stored
        .text
        .lines()
        .map(|l| (l, matchers.find(l)))
        .find(|(_, m)| !m.is_empty())?;
    let owner = target.owner.as_ref();
    let speaker = match stored.role {
        Role::User => stored.user_id.as_deref().map(str::to_owned).or_else(|| {
            owner
                .filter(|o| o.kind == OwnerKind::Person)
                .map(|o| o.key.to_string())
        }),
        _ => None,
    };
    Some(Hit {
        kind: Kind::Message,
        owner: owner.map(Owner::name),
        owner_kind: owner.map(|o| o.kind),
        file: relative.to_owned(),
        line: number,
        ts,
        source: target.source,
        role: Some(stored.role),
        speaker,
        speaker_name: stored.user_name.map(|n| n.into_owned()),
        text: text.to_owned(),
        matches,
    })
}

/// Summaries, profiles and topic notes: small markdown files, read whole;
/// the body is searched, the frontmatter only gives time and tags.
fn search_note(
    target: &Target,
    query: &Query,
    matchers: &Matchers,
    relative: &str,
    hits: &mut Collector,
) -> anyhow::Result<()> {
    let Some(text) = crate::memory::stm::read_text_or_warn(&target.path)? else {
        return Ok(());
    };
    let doc = crate::memory::stm::parse_document_or_warn(&text, &target.path);
    if !query.tags.is_empty() {
        let tags: Vec<String> = doc
            .get_str_list("tags")
            .iter()
            .map(|t| t.to_lowercase())
            .collect();
        if !query.tags.iter().all(|t| tags.contains(&t.to_lowercase())) {
            return Ok(());
        }
    }
    if let Some(user) = &query.user
        && target.kind == Kind::Topic
        && doc.get_text("owner").as_deref() != Some(user.as_str())
    {
        return Ok(());
    }
    let ts = note_time(target, &doc);
    if !time_in_range(ts, query) {
        return Ok(());
    }
    let body_start = text
        .lines()
        .count()
        .saturating_sub(doc.body.lines().count());
    for (i, line) in doc.body.lines().enumerate() {
        let matches = matchers.find(line);
        if matches.is_empty() {
            continue;
        }
        hits.push(Hit {
            kind: target.kind,
            owner: target.owner.as_ref().map(Owner::name),
            owner_kind: target.owner.as_ref().map(|o| o.kind),
            file: relative.to_owned(),
            line: (body_start + i + 1) as u64,
            ts,
            source: target.source,
            role: None,
            speaker: None,
            speaker_name: None,
            text: line.to_owned(),
            matches,
        });
    }
    Ok(())
}

/// When a note speaks of: a daily summary its day, a weekly one its
/// Sunday (both at the day's end, so they sort after the day's messages);
/// others their `updated`/`last_compacted` key, else the file's mtime.
fn note_time(target: &Target, doc: &Document) -> Option<DateTime<Utc>> {
    let stem = target.path.file_stem()?.to_str()?;
    if matches!(target.source, Source::Daily | Source::Weekly)
        && let Some((_, last)) = summary_days(stem)
    {
        return Some(last.and_hms_opt(23, 59, 59)?.and_utc());
    }
    for key in ["updated", "last_compacted"] {
        if let Some(ts) = doc.get_text(key).and_then(|t| parse_ts(&t).ok()) {
            return Some(ts);
        }
    }
    let modified = std::fs::metadata(&target.path).ok()?.modified().ok()?;
    Some(modified.into())
}

// --- newest first, bounded ------------------------------------------------------

/// Hits ordered so that the heap's top is the one to drop first (the
/// oldest): a limit keeps memory at `limit` hits, whatever matches.
struct Ranked {
    hit: Hit,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        newest_first(&self.hit, &other.hit).is_eq()
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        newest_first(&self.hit, &other.hit)
    }
}

struct Collector {
    /// A max-heap in newest-first order: its top is the oldest hit.
    heap: BinaryHeap<Ranked>,
    limit: Option<usize>,
    dropped: usize,
}

impl Collector {
    fn new(limit: Option<usize>) -> Self {
        Self {
            heap: BinaryHeap::new(),
            limit,
            dropped: 0,
        }
    }

    fn push(&mut self, hit: Hit) {
        self.heap.push(Ranked { hit });
        if let Some(limit) = self.limit
            && self.heap.len() > limit
        {
            self.heap.pop();
            self.dropped += 1;
        }
    }

    fn merge(&mut self, other: Collector) {
        self.dropped += other.dropped;
        for ranked in other.heap {
            self.push(ranked.hit);
        }
    }
}

/// `--conversation K` names one of `all`, or the search is refused: an
/// empty answer would read as "nothing said".
pub fn known_conversation(all: &[Owner], conversation: Option<&UserId>) -> anyhow::Result<()> {
    match conversation {
        Some(key)
            if !all
                .iter()
                .any(|o| &o.key == key && o.kind == OwnerKind::Conversation) =>
        {
            Err(usage(format!(
                "there is no conversation {}; `session conversations` lists them",
                key.conversation_key()
                    .map_or_else(|| key.to_string(), |k| k.as_str().to_owned())
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(ts: i64) -> Hit {
        Hit {
            kind: Kind::Message,
            owner: None,
            owner_kind: None,
            file: "f".into(),
            line: 1,
            ts: DateTime::from_timestamp(ts, 0),
            source: Source::Stm,
            role: None,
            speaker: None,
            speaker_name: None,
            text: String::new(),
            matches: vec![],
        }
    }

    #[test]
    fn a_limit_keeps_the_newest_hits() {
        let mut collector = Collector::new(Some(2));
        for ts in [5, 1, 9, 3, 7] {
            collector.push(hit(ts));
        }
        let mut kept: Vec<i64> = collector
            .heap
            .into_iter()
            .map(|r| r.hit.ts.unwrap().timestamp())
            .collect();
        kept.sort();
        assert_eq!(kept, [7, 9]);
        assert_eq!(collector.dropped, 3);
    }

    #[test]
    fn summary_file_names_give_their_days() {
        let day = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(
            summary_days("2026-03-23"),
            Some((day("2026-03-23"), day("2026-03-23")))
        );
        assert_eq!(
            summary_days("2026-W13"),
            Some((day("2026-03-23"), day("2026-03-29")))
        );
        assert_eq!(summary_days("notes"), None);
    }

    #[test]
    fn a_phrase_is_matched_as_stored_and_in_the_text() {
        let query = Query {
            pattern: "say \"refund\"".into(),
            ..Query::default()
        };
        let matchers = Matchers::new(&query).unwrap();
        let line = br#"{"ts":"2026-03-23T03:28:32Z","role":"user","text":"I SAY \"Refund\" now"}"#;
        let mut found = Vec::new();
        let mut buffers = Buffers::new();
        scan(&line[..], &matchers, &mut buffers.searcher, &mut |n, l| {
            found.push((n, l.to_vec()))
        })
        .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(matchers.find("I SAY \"Refund\" now"), vec![(2, 14)]);
        assert!(
            Matchers::new(&Query {
                pattern: "a*".into(),
                regex: true,
                ..Query::default()
            })
            .is_err()
        );
    }
}

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
//! ever holds more than that many. Which files a query reads is
//! `targets`; searching one of them, `file`.

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
use crate::layout::{Layout, MemoryKey, UserId};
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
    pub conversation: Option<MemoryKey>,
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
    pub(super) path: PathBuf,
    pub(super) kind: Kind,
    pub(super) source: Source,
    pub(super) owner: Option<Owner>,
    /// For a message file of a conversation when `--user` is given: only
    /// lines this person sent, or the replies to them.
    pub(super) about: Option<UserId>,
    pub(super) size: u64,
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
    pub(super) raw: Option<RegexMatcher>,
    pub(super) text: regex::Regex,
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

mod file;
mod targets;

use file::*;
use targets::*;

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
pub fn known_conversation(all: &[Owner], conversation: Option<&MemoryKey>) -> anyhow::Result<()> {
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

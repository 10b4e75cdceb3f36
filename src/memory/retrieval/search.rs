//! Ranked search: the hits of one or more owners' memory for a query,
//! best first, each with its score — what `session search` prints for
//! several words and what the `search_memory` tool answers. The same
//! engine and score as auto-recall ([`super::rank`]), asked differently:
//! every unit with a query term is a hit on its own (no neighbours taken
//! along, no budget, no recent window left out), `keep` narrows them
//! (times, roles, a group member's lines), and the best `limit` are
//! returned.
//!
//! Several owners are ranked as one corpus, so that a term's rarity is
//! weighed over all of them: a small memory's hits would otherwise score
//! low only for being small. Their messages stay apart (a neighbour's
//! share never crosses from one owner to another), and the recency prior
//! is each owner's own, so one owner's scores are what they would be
//! alone but for the term weights.
//!
//! Each owner is read as auto-recall reads it ([`corpus::read`]): the
//! archive days in current recall index segments are scored from their
//! postings, and of their messages only the hits listed (or, with `keep`,
//! every hit) are read; everything else (the live log, a day changed
//! since it was indexed, a damaged segment's days) is read whole.
//! Every owner is counted first ([`View::count`]), then all are scored
//! with the term statistics summed over them. The statistics are those
//! of the owners' messages as one list with an empty message between two
//! owners' (the corpus this ranked before it used the index), so the
//! scores are the same as then; that message is no neighbour of anyone.

use std::collections::HashSet;
use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::corpus::View;
use super::score::Counted;
use super::{Options, Unit, Units, bm25, choose, corpus, index, tokenize};
use crate::memory::owners::Owner;
use crate::state::State;

/// Options that rank every hit alone: no budget, no neighbours taken
/// along, no floor, no recency prior.
fn every_hit() -> Options {
    Options {
        max_chars: usize::MAX,
        max_passages: usize::MAX,
        neighbours: 0,
        min_score: 0.0,
        recency_weight: 0.0,
        explain: false,
    }
}

/// One hit: a stored message or a summary line, whose it is, and its
/// score (BM25 with a share of its neighbours' and the recency prior, as
/// recall scores).
#[derive(Debug, Clone)]
pub struct Hit {
    pub owner: Owner,
    pub unit: Unit,
    pub score: f64,
}

/// The hits, best first, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub hits: Vec<Hit>,
    /// Hits past the limit.
    pub more: usize,
    /// The query's terms; empty when it has nothing to look for (only
    /// stopwords, small talk or punctuation).
    pub terms: Vec<String>,
}

/// What narrows a search's hits: whether to keep a hit (of whom, and
/// what it is).
pub type Keep<'a> = &'a dyn Fn(&Owner, &Unit) -> bool;

/// A hit before it is read (an indexed day's message stays in its
/// segment until it is listed, or a filter asks what it says), and what
/// orders equal ones: as when several owners were one corpus, of two hits
/// of the same score and time a message before a summary line, then the
/// better before its owner's recency prior, then the later owner's, the
/// later in its memory.
struct Candidate {
    score: f64,
    before_recency: f64,
    owner: usize,
    place: usize,
    is_note: bool,
    unit: Option<Unit>,
}

impl Candidate {
    fn read(&mut self, views: &[View]) -> anyhow::Result<&Unit> {
        if self.unit.is_none() {
            self.unit = Some(views[self.owner].unit(self.place)?);
        }
        Ok(self.unit.as_ref().expect("just read"))
    }

    fn ts(&self) -> DateTime<Utc> {
        self.unit.as_ref().expect("read before ordered").item.ts()
    }

    /// Best first; of two equal, the newer (both read).
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.ts().cmp(&a.ts()))
            .then_with(|| a.is_note.cmp(&b.is_note))
            .then_with(|| b.before_recency.total_cmp(&a.before_recency))
            .then_with(|| (b.owner, b.place).cmp(&(a.owner, a.place)))
    }
}

/// Rank `owners`' memory for `query`. Of `options`, the floor
/// (`min_score`) and the recency prior apply; neighbours
/// and budgets do not. `keep` narrows the hits (`None`: every hit is
/// kept, and only those listed are read). Whose memory is the caller's
/// to settle, with [`crate::memory::owners::visible_to`] or as the
/// operator.
pub fn search(
    state: &State,
    owners: &[Owner],
    query: &str,
    limit: Option<usize>,
    options: &Options,
    keep: Option<Keep>,
) -> anyhow::Result<Found> {
    let tokenizer = tokenize::Tokenizer::new();
    let terms = super::query_terms(&tokenizer, query);
    if terms.is_empty() || owners.is_empty() {
        return Ok(Found {
            terms: terms.terms,
            ..Found::default()
        });
    }
    let mut leave_out = HashSet::new();
    loop {
        match rank(
            state, owners, &tokenizer, query, &terms, limit, options, keep, &leave_out,
        ) {
            Ok((hits, more, terms)) => {
                return Ok(Found {
                    hits,
                    more,
                    terms: terms.terms,
                });
            }
            // A segment found damaged midway: warned about, and the
            // search done again with its days read from the archives.
            Err(e) => match e.downcast_ref::<index::Damaged>() {
                Some(damage) if !leave_out.contains(&damage.path) => {
                    crate::diag::warn(format!("{damage}"));
                    leave_out.insert(damage.path.clone());
                }
                _ => return Err(e),
            },
        }
    }
}

/// The best `limit` hits that `keep` keeps, best first, how many more
/// it keeps, and the terms looked for (the words of `query` no message
/// has corrected: [`super::spelling`]); the segments in `leave_out` not
/// used.
#[allow(clippy::too_many_arguments)]
fn rank(
    state: &State,
    owners: &[Owner],
    tokenizer: &tokenize::Tokenizer,
    query: &str,
    terms: &bm25::QueryTerms,
    limit: Option<usize>,
    options: &Options,
    keep: Option<Keep>,
    leave_out: &HashSet<PathBuf>,
) -> anyhow::Result<(Vec<Hit>, usize, bm25::QueryTerms)> {
    let views: Vec<View> = owners
        .iter()
        .map(|owner| corpus::read(state, owner, &[], leave_out))
        .collect::<anyhow::Result<_>>()?;
    let count = |terms: &bm25::QueryTerms| -> anyhow::Result<Vec<Counted>> {
        views
            .iter()
            .map(|view| view.count(tokenizer, terms))
            .collect()
    };
    let mut counted = count(terms)?;
    let mut stats = summed(terms, &counted);
    let fixed = super::spelling::corrected(tokenizer, query, terms, &stats.df, |probe| {
        Ok(summed(probe, &count(probe)?).df)
    })?;
    if let Some(fixed) = &fixed {
        counted = count(fixed)?;
        stats = summed(fixed, &counted);
    }
    let terms = fixed.as_ref().unwrap_or(terms);
    let scorer = bm25::Scorer::new(terms, &stats);
    // The recency prior is applied below, per owner.
    let every = every_hit();
    let mut candidates = Vec::new();
    for (o, (view, counted)) in views.iter().zip(counted).enumerate() {
        let (hits, own) = counted.score_with_own(&scorer)?;
        let n = view.messages();
        for (k, own) in own.into_iter().enumerate() {
            // A search lists what says the words: a message scored only by
            // the words of the one before it (which auto-recall takes as a
            // passage's turn) is left out.
            if !own {
                continue;
            }
            let place = hits.list[k].place as usize;
            // Its own score and its neighbours' shares (within the
            // owner), the dates the query names, as recall scores.
            let before_recency = choose::dated_hit_score(view, n, &hits.list, k, terms, &every)?;
            let recency = if place < n {
                (place + 1) as f64 / n as f64
            } else {
                0.0
            };
            let score = before_recency * (1.0 + options.recency_weight * recency);
            if score < options.min_score {
                continue;
            }
            candidates.push(Candidate {
                score,
                before_recency,
                owner: o,
                place,
                is_note: place >= n,
                unit: None,
            });
        }
    }
    if let Some(keep) = keep {
        // Every hit read and asked about.
        let mut kept = Vec::with_capacity(candidates.len());
        for mut c in candidates {
            if keep(&owners[c.owner], c.read(&views)?) {
                kept.push(c);
            }
        }
        candidates = kept;
    }
    let shown = limit.unwrap_or(usize::MAX).min(candidates.len());
    let more = candidates.len() - shown;
    // By score, then the hits of equal scores among those shown read and
    // put in order (the time decides).
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut i = 0;
    while i < shown {
        let mut j = i + 1;
        while j < candidates.len() && candidates[j].score == candidates[i].score {
            j += 1;
        }
        for c in &mut candidates[i..j] {
            c.read(&views)?;
        }
        candidates[i..j].sort_by(Candidate::order);
        i = j;
    }
    candidates.truncate(shown);
    let hits = candidates
        .into_iter()
        .map(|c| Hit {
            owner: owners[c.owner].clone(),
            unit: c.unit.expect("read when ordered"),
            score: c.score,
        })
        .collect();
    Ok((hits, more, terms.clone()))
}

/// The term statistics of all the owners counted, as one corpus: their
/// messages one list, with an empty message between two owners' (one
/// more doc, scored with the length of the message before it).
fn summed(terms: &bm25::QueryTerms, counted: &[Counted]) -> bm25::Stats {
    let mut stats = bm25::Stats {
        docs: 0,
        total_len: 0,
        previous_len: 0,
        df: vec![0; terms.terms.len()],
    };
    let mut last_before: Option<u32> = None;
    for c in counted {
        let own = c.stats();
        stats.docs += own.docs;
        stats.total_len += own.total_len;
        stats.previous_len += own.previous_len;
        for (all, df) in stats.df.iter_mut().zip(&own.df) {
            *all += df;
        }
        if let Some(last) = c.last_len() {
            if let Some(before) = last_before {
                stats.docs += 1;
                stats.previous_len += u64::from(before);
            }
            last_before = Some(last);
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use chrono::{DateTime, NaiveDate, TimeZone as _, Utc};

    use super::*;
    use crate::memory::message::{Message, Role};
    use crate::memory::owners;
    use crate::memory::retrieval::{Corpus, Item};

    /// The search as it was before it used the recall index, kept as the
    /// reference: every owner read whole into one corpus, an empty
    /// message between two owners', ranked by [`super::super::rank`].
    fn whole_search(
        state: &State,
        owners: &[Owner],
        query: &str,
        limit: Option<usize>,
        options: &Options,
        keep: &dyn Fn(&Owner, &Unit) -> bool,
    ) -> Found {
        struct Origin {
            owner: usize,
            recency: Option<f64>,
        }
        let tokenizer = tokenize::Tokenizer::new();
        let terms = super::super::query_terms(&tokenizer, query);
        let mut messages: Vec<Unit> = Vec::new();
        let mut notes: Vec<Unit> = Vec::new();
        let mut message_origins = Vec::new();
        let mut note_origins = Vec::new();
        for (o, owner) in owners.iter().enumerate() {
            let corpus = corpus::read_corpus(state, owner).unwrap();
            if !messages.is_empty() && corpus.messages > 0 {
                messages.push(Unit {
                    item: Item::Message(Message::new(Role::User, "", DateTime::UNIX_EPOCH)),
                    source: super::super::Source::Log,
                });
                message_origins.push(Origin {
                    owner: o,
                    recency: None,
                });
            }
            let n = corpus.messages;
            for (i, unit) in corpus.units.into_iter().enumerate() {
                if i < n {
                    messages.push(unit);
                    message_origins.push(Origin {
                        owner: o,
                        recency: Some((i + 1) as f64 / n as f64),
                    });
                } else {
                    notes.push(unit);
                    note_origins.push(Origin {
                        owner: o,
                        recency: None,
                    });
                }
            }
        }
        let mut origins = message_origins;
        origins.extend(note_origins);
        let n_messages = messages.len();
        let mut units = messages;
        units.extend(notes);
        let merged = Corpus {
            units,
            messages: n_messages,
        };
        let every = super::every_hit();
        let ranked = super::super::rank(&tokenizer, &merged, &terms, &[], None, &every);
        // With the place in the merged corpus (owner, then place) and the
        // score before the recency prior: the last of the order's ties.
        let mut hits: Vec<(Hit, f64, usize)> = Vec::new();
        for recalled in ranked.units {
            let (before_recency, place) = (recalled.score, recalled.place);
            let unit = recalled.unit;
            let origin = &origins[recalled.place];
            let owner = &owners[origin.owner];
            let score =
                recalled.score * (1.0 + options.recency_weight * origin.recency.unwrap_or(0.0));
            let own = !bm25::count(&tokenizer, &terms, unit.item.text())
                .tf
                .is_empty();
            if score < options.min_score || !keep(owner, &unit) || !own {
                continue;
            }
            let hit = Hit {
                owner: owner.clone(),
                unit,
                score,
            };
            hits.push((hit, before_recency, place));
        }
        let is_note = |h: &Hit| matches!(h.unit.item, Item::Note { .. });
        hits.sort_by(|(a, a_before, a_place), (b, b_before, b_place)| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| b.unit.item.ts().cmp(&a.unit.item.ts()))
                .then_with(|| is_note(a).cmp(&is_note(b)))
                .then_with(|| b_before.total_cmp(a_before))
                .then_with(|| b_place.cmp(a_place))
        });
        let mut hits: Vec<Hit> = hits.into_iter().map(|(hit, _, _)| hit).collect();
        let more = limit.map_or(0, |limit| hits.len().saturating_sub(limit));
        if let Some(limit) = limit {
            hits.truncate(limit);
        }
        Found {
            hits,
            more,
            terms: terms.terms,
        }
    }

    /// A hit as compared: owner, source, time, text, score to the bit.
    type Answered = (String, String, String, String, u64);

    /// What a search answered, and how many hits were past the limit.
    fn answer(found: &Found) -> (Vec<Answered>, usize) {
        let hits = found
            .hits
            .iter()
            .map(|h| {
                (
                    h.owner.key.to_string(),
                    h.unit.source.to_string(),
                    h.unit.item.ts().to_rfc3339(),
                    h.unit.item.text().to_owned(),
                    h.score.to_bits(),
                )
            })
            .collect();
        (hits, found.more)
    }

    const WORDS: [&str; 24] = [
        "pottery",
        "class",
        "garden",
        "roses",
        "Melanie",
        "puppy",
        "Biscuit",
        "hiking",
        "hiked",
        "trail",
        "weather",
        "sunny",
        "dinner",
        "pasta",
        "violin",
        "teacher",
        "Lisbon",
        "vacation",
        "北海道",
        "滑雪",
        "茶道",
        "教室",
        "sister",
        "work",
    ];

    /// A line of words drawn from [`WORDS`] by `seed`.
    fn line(seed: &mut u64, words: usize) -> String {
        (0..words)
            .map(|_| {
                *seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                WORDS[(*seed >> 33) as usize % WORDS.len()]
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 1, d).unwrap()
    }

    /// `n` messages on day `d`, the last one small talk (no word of any
    /// query: see the test).
    fn messages(seed: &mut u64, d: u32, n: usize, sender: Option<&str>) -> Vec<Message> {
        (0..n)
            .map(|k| {
                let role = if k % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                };
                let text = if k + 1 == n {
                    "ok see you later".to_owned()
                } else {
                    line(seed, 3 + k % 9)
                };
                let ts = Utc.from_utc_datetime(&day(d).and_hms_opt(9, 0, 0).unwrap())
                    + chrono::TimeDelta::minutes(k as i64);
                let mut m = Message::new(role, text, ts);
                if role == Role::User {
                    m.user_id = sender.map(str::to_owned);
                }
                m
            })
            .collect()
    }

    fn gzip(messages: &[Message]) -> Vec<u8> {
        let mut lines = Vec::new();
        for m in messages {
            lines.extend(m.to_line());
            lines.push(b'\n');
        }
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&lines).unwrap();
        encoder.finish().unwrap()
    }

    fn write(path: &std::path::Path, bytes: &[u8]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// An empty state dir.
    fn memory_dir(dir: &std::path::Path) -> State {
        std::fs::create_dir_all(dir.join("sessions")).unwrap();
        std::fs::write(dir.join("sessions/config.json"), "{}").unwrap();
        let origin = crate::state::dir::EffectiveStateDir {
            path: dir.to_owned(),
            source: crate::state::dir::StateDirSource::Flag,
        };
        State::open(origin, None).unwrap()
    }

    /// Three people with archives (one also with a live log, two the
    /// same), a person with only a daily summary, and a group
    /// conversation.
    fn memory(dir: &std::path::Path) -> State {
        let state = memory_dir(dir);
        let layout = &state.layout;
        let mut seed = 7;
        let key = |k: &str| crate::layout::MemoryKey::from_folder_name(k).unwrap();
        for (owner, days, sender) in [
            ("U1", 1..7, None),
            ("U2", 3..7, None),
            ("#G1", 2..6, Some("U1")),
        ] {
            for d in days {
                let day_messages = messages(&mut seed, d, 20 + d as usize * 5, sender);
                write(
                    &layout.archive_file(&key(owner), day(d)),
                    &gzip(&day_messages),
                );
            }
        }
        // U4's memory is U2's: hits of equal score and time, which the
        // owner's place decides.
        for d in 3..7 {
            let bytes = std::fs::read(layout.archive_file(&key("U2"), day(d))).unwrap();
            write(&layout.archive_file(&key("U4"), day(d)), &bytes);
        }
        // U1's live log, of a later day.
        let mut log = Vec::new();
        for m in messages(&mut seed, 9, 30, None) {
            log.extend(m.to_line());
            log.push(b'\n');
        }
        write(&layout.messages_file(&key("U1")), &log);
        for (owner, d) in [("U1", 2), ("U3", 4), ("#G1", 3)] {
            let text = format!("- {}\n- {}\n- ok\n", line(&mut seed, 8), line(&mut seed, 5));
            let dir = layout.daily_dir(&key(owner));
            write(
                &crate::layout::Layout::markdown_file(&dir, &day(d).to_string()),
                text.as_bytes(),
            );
        }
        state
    }

    /// The owners' memories as live logs, in a fresh state dir.
    fn logs(dir: &std::path::Path, owners: &[(&str, &[&str])]) -> State {
        let state = memory_dir(dir);
        for (k, (owner, texts)) in owners.iter().enumerate() {
            let mut log = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let ts = Utc
                    .with_ymd_and_hms(2026, 1, 1 + k as u32, 9, i as u32, 0)
                    .unwrap();
                log.extend(Message::new(Role::User, *text, ts).to_line());
                log.push(b'\n');
            }
            let key = crate::layout::MemoryKey::from_folder_name(owner).unwrap();
            write(&state.layout.messages_file(&key), &log);
        }
        state
    }

    /// The last message of one owner is no neighbour of the first of the
    /// next: the next owner's scores do not change when the words move
    /// from the one owner's last message to an earlier one (the same
    /// messages, so the same term statistics).
    #[test]
    fn no_share_of_a_score_crosses_from_one_owner_to_the_next() {
        let first = [
            "how was your day",
            "ok bye then",
            "the pottery class was fun",
        ];
        let moved = [
            "how was your day",
            "the pottery class was fun",
            "ok bye then",
        ];
        let next: &[&str] = &["my pottery class starts monday", "nice", "pottery again"];
        let scores = |a: &[&str]| {
            let dir = tempfile::tempdir().unwrap();
            let state = logs(dir.path(), &[("A1", a), ("B1", next)]);
            let all = owners::owners(&state).unwrap();
            let found = search(
                &state,
                &all,
                "pottery class",
                None,
                &Options {
                    min_score: 0.0,
                    ..Options::default()
                },
                Some(&|owner, _| owner.key.as_str() == "B1"),
            )
            .unwrap();
            answer(&found)
        };
        let (hits, _) = scores(&first);
        assert_eq!(hits.len(), 2);
        assert_eq!(scores(&first), scores(&moved));
    }

    const QUERIES: [&str; 5] = [
        "pottery class in the garden",
        "What is the name of Melanie's puppy?",
        "hiking trail weather",
        "你什么时候去北海道滑雪",
        "what did we have for dinner on 4 January 2026, pasta?",
    ];

    /// Every query over every owner, and over each alone, through the
    /// index path and the whole corpus of before: the same hits, scores
    /// and order.
    fn check_same(state: &State, what: &str) {
        let all = owners::owners(state).unwrap();
        assert_eq!(all.len(), 5, "{all:?}");
        let options = Options {
            min_score: 0.0,
            ..Options::default()
        };
        let users = |owner: &Owner, unit: &Unit| {
            unit.item.ts() >= Utc.with_ymd_and_hms(2026, 1, 3, 0, 0, 0).unwrap()
                && match &unit.item {
                    Item::Message(m) => m.role == Role::User,
                    Item::Note { .. } => owner.key.as_str() != "U3",
                }
        };
        let keeps: [Option<Keep>; 3] = [None, Some(&|_, _| true), Some(&users)];
        let mut scopes: Vec<Vec<Owner>> = vec![all.clone()];
        scopes.extend(all.iter().map(|o| vec![o.clone()]));
        for query in QUERIES {
            for (s, scope) in scopes.iter().enumerate() {
                // Every owner: each filter, with and without a limit.
                let asked: &[(usize, Option<usize>)] = match s {
                    0 => &[
                        (0, None),
                        (0, Some(7)),
                        (1, Some(7)),
                        (2, None),
                        (2, Some(7)),
                    ],
                    _ => &[(0, None)],
                };
                // Without the recency prior, equal scores are common: the
                // time and then the place decide.
                let flat = Options {
                    recency_weight: 0.0,
                    ..options.clone()
                };
                let flat_too: &[(usize, Option<usize>)] = match s {
                    0 => &[(0, Some(7)), (2, None)],
                    _ => &[],
                };
                let runs = asked.iter().map(|a| (a, &options));
                for (&(keep, limit), options) in runs.chain(flat_too.iter().map(|a| (a, &flat))) {
                    let keep = keeps[keep];
                    let want = whole_search(
                        state,
                        scope,
                        query,
                        limit,
                        options,
                        keep.unwrap_or(&|_, _| true),
                    );
                    let got = search(state, scope, query, limit, options, keep).unwrap();
                    assert!(!want.hits.is_empty() || s > 0, "{query}");
                    assert_eq!(
                        answer(&got),
                        answer(&want),
                        "{what}: {query:?} over {scope:?}"
                    );
                }
            }
        }
    }

    fn indexed_days(state: &State) -> (usize, usize) {
        owners::owners(state)
            .unwrap()
            .iter()
            .map(|o| corpus::read(state, o, &[], &HashSet::new()).unwrap())
            .fold((0, 0), |(i, s), v| (i + v.indexed_days, s + v.scanned_days))
    }

    #[test]
    fn ranked_search_through_the_index_is_the_search_of_the_whole_memory() {
        let dir = tempfile::tempdir().unwrap();
        let state = memory(dir.path());
        // No index: every day read whole.
        assert_eq!(indexed_days(&state), (0, 18));
        check_same(&state, "no index");

        let today = Utc::now().date_naive();
        for owner in owners::owners(&state).unwrap() {
            super::super::indexing::update(&state, &owner.key, today, false, &mut |_| {}).unwrap();
        }
        assert_eq!(indexed_days(&state), (18, 0));
        check_same(&state, "indexed");

        // A day grown since it was indexed (another host's compaction):
        // read whole, the others still from the index.
        let key = crate::layout::MemoryKey::from_folder_name("U2").unwrap();
        let path = state.layout.archive_file(&key, day(4));
        let mut grown = std::fs::read(&path).unwrap();
        let mut late = Message::new(
            Role::User,
            "Melanie's puppy Biscuit joined the pottery class",
            Utc.with_ymd_and_hms(2026, 1, 4, 23, 0, 0).unwrap(),
        );
        late.msg_id = Some("late".into());
        grown.extend(gzip(&[late]));
        std::fs::write(&path, grown).unwrap();
        assert_eq!(indexed_days(&state), (17, 1));
        check_same(&state, "a stale day");

        // A segment damaged past its head (found midway, the search done
        // again without it), then at its head (found when opened).
        let seg_dir = state
            .layout
            .recall_index_dir(&crate::layout::MemoryKey::from_folder_name("U1").unwrap());
        let seg = std::fs::read_dir(&seg_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(index::SUFFIX))
            .unwrap();
        let mut bytes = std::fs::read(&seg).unwrap();
        for start in (bytes.len() / 4..bytes.len() - 64).step_by(256) {
            for b in &mut bytes[start..start + 16] {
                *b ^= 0xa5;
            }
        }
        std::fs::write(&seg, &bytes).unwrap();
        check_same(&state, "a segment damaged midway");
        std::fs::write(&seg, &bytes[..100]).unwrap();
        assert_eq!(indexed_days(&state), (11, 7));
        check_same(&state, "a segment damaged at its head");
    }
}

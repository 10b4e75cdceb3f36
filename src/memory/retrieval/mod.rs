//! Ranked recall over one owner's whole memory: the messages of the live
//! log and of every archive, and the lines of the daily, weekly and
//! retired rolling summaries (the current rolling summary and the profile are already whole in
//! the context). Used by `ask` (auto-recall) and `context -- "message"`.
//!
//! - [`tokenize`]: text to terms (NFKC, lower case, English stemming,
//!   CJK bigrams).
//! - [`small_talk`]: whether a message is only small talk (recall then
//!   looks for nothing).
//! - [`expand`]: a query word's nearest words, from a static table.
//! - [`spelling`]: a query word no message has, as the word one edit away.
//! - [`bm25`]: the score of every unit for one query.
//! - [`choose()`]: each hit's score and what the budget takes, with
//!   why (`--explain`).
//! - [`corpus`]: reading the units of one owner, in time order.
//! - [`score`]: their BM25 scores for one query, indexed days from
//!   their postings.
//! - [`search()`]: the same ranking as a search, best first with scores
//!   (`session search` with several words, the `search_memory` tool).
//!
//! A message is scored by BM25 (a term's idf to the power
//! [`bm25::IDF_POWER`]; each English query word with its nearest words
//! at a fraction of its weight, [`expand`]) over its words and half the
//! counts of the message before it, plus a share of its neighbours' scores (the
//! question before an answer, the answer after a question), a small
//! recency prior, and a raise when the query names the day or month it
//! was written on ("on 3 June, 2023", "in June": see [`when`]). The best are taken
//! until the budget (`recall.maxChars`, `recall.maxPassages`) is spent,
//! each with the turn before and after it, no turn twice and none already
//! in the recent window; a hit already taken as another's neighbour
//! brings its own other neighbour (the passage grows). A score under
//! `recall.minScore` is not taken at all, so small talk recalls nothing.
//! A follow-up ("and what about her?") is looked for with the turn or two
//! before it too ([`follow_up_terms`]): only the query's weights change.
//! Whose memory is settled by the caller, with
//! [`crate::memory::owners::visible_to`].

pub mod bm25;
mod choose;
pub mod corpus;
pub mod expand;
pub mod index;
mod index_write;
pub mod indexing;
pub mod score;
pub mod search;
pub mod small_talk;
pub mod spelling;
pub mod tokenize;
pub mod when;

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::config::RecallConfig;
use crate::memory::message::{Message, Role};
use crate::memory::owners::Owner;
use crate::state::State;
pub use choose::choose;
pub use corpus::{Corpus, Item, Source, Unit, Units};
pub use score::Hits;
pub use search::{Found, Hit, search};

/// The weight of each term of the turn or two before a follow-up,
/// against one of its own ([`follow_up_terms`]). Our follow-up set
/// (benches/recall-locomo/fixtures/followup.json): 0 → 26.7%, 0.3 →
/// 80.0%, 0.5 → 93.3%, 0.75 → 96.7%, 1.0 → 100%; LoCoMo dev with every
/// question taken to follow the conversation's last two turns (no time
/// limit): 88.0% / 88.0% / 87.9% / 87.9% at 0 / 0.5 / 0.75 / 1.0 (and,
/// before a message had to look like a follow-up, 86.2% at 0.3).
pub const FOLLOW_UP_SHARE: f64 = 1.0;
/// The longest message (in characters) that may be a follow-up
/// ([`is_follow_up`]); in Chinese or Japanese, in letters.
const FOLLOW_UP_CHARS: usize = 48;
const FOLLOW_UP_CJK_CHARS: usize = 8;
/// The knobs, from config `recall`.
#[derive(Debug, Clone)]
pub struct Options {
    pub max_chars: usize,
    pub max_passages: usize,
    pub min_score: f64,
    pub recency_weight: f64,
    /// Turns taken on each side of a hit.
    pub neighbours: usize,
    /// List the hits considered and not taken too (`--explain`), up to
    /// 40: each read from its archive or segment for its time and text.
    /// Without it ([`Recall::considered`] then holds the taken alone),
    /// the walk stops once nothing more can be taken.
    pub explain: bool,
}

impl Options {
    pub fn from_config(config: &RecallConfig) -> Self {
        Self {
            max_chars: config.max_chars as usize,
            max_passages: config.max_passages as usize,
            min_score: config.min_score,
            recency_weight: config.recency_weight,
            neighbours: config.neighbours as usize,
            explain: false,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self::from_config(&RecallConfig::default())
    }
}

/// One unit in the context: a hit or a neighbour of one.
#[derive(Debug, Clone)]
pub struct Recalled {
    pub unit: Unit,
    /// The score of the passage it belongs to (its hit's).
    pub score: f64,
    /// Its own BM25 score (with the share of the message before it).
    pub own_score: f64,
    /// The unit matched itself (not only a neighbour of a hit).
    pub hit: bool,
    /// Its place in the corpus ranked.
    pub place: usize,
}

/// Why a candidate is or is not in the context.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    Taken,
    /// Under `recall.minScore`.
    BelowFloor,
    /// Already in the recent window (or the message being answered).
    InWindow,
    /// Its turns are all in an earlier passage.
    Duplicate,
    /// `recall.maxChars` would be exceeded.
    OverChars,
    /// `recall.maxPassages` passages were already taken.
    OverPassages,
}

/// One hit considered, for `--explain`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Considered {
    pub ts: DateTime<Utc>,
    pub source: Source,
    pub score: f64,
    pub verdict: Verdict,
    /// The first characters of the text.
    pub text: String,
}

/// What recall found for one message: the units in time order.
#[derive(Debug, Clone, Default)]
pub struct Recall {
    pub units: Vec<Recalled>,
    pub considered: Vec<Considered>,
    /// The query's terms (empty: nothing to look for, e.g. small talk).
    pub terms: Vec<String>,
    /// Units searched.
    pub searched: usize,
    /// Archive days scored from the recall index, and read whole.
    pub indexed_days: usize,
    pub scanned_days: usize,
}

/// Recall for `query` over `owner`'s memory, leaving out `window` (the
/// recent messages the context holds anyway) and the message `skip_id`.
/// `previous`: the turn or two before the message (see
/// [`follow_up_terms`]).
pub fn recall(
    state: &State,
    owner: &Owner,
    query: &str,
    previous: &[&str],
    window: &[Message],
    skip_id: Option<&str>,
    options: &Options,
) -> anyhow::Result<Recall> {
    let tokenizer = tokenize::Tokenizer::new();
    let terms = follow_up_terms(&tokenizer, query, previous);
    if terms.is_empty() || options.max_chars == 0 || options.max_passages == 0 {
        return Ok(Recall {
            terms: terms.terms,
            ..Recall::default()
        });
    }
    // The days of the window are read whole: a segment then never holds
    // one of its messages, and the window check needs no read of it.
    let scan_days: Vec<chrono::NaiveDate> = window.iter().map(|m| m.ts.date_naive()).collect();
    let mut leave_out = HashSet::new();
    loop {
        let view = corpus::read(state, owner, &scan_days, &leave_out)?;
        // The hits ranked as they are scored, not listed: every hit
        // scored again, listed, only for a walk that runs out of them.
        let outcome = (|| {
            let (terms, counted) = counted(&tokenizer, &view, query, &terms)?;
            let scorer = bm25::Scorer::new(&terms, counted.stats());
            let mut best = choose::Best::new(&view, &terms, options);
            counted.score_into(&scorer, &mut best)?;
            choose(
                &view,
                best.finish()?,
                &terms,
                window,
                skip_id,
                options,
                || view.scores(&tokenizer, &terms),
            )
        })();
        match outcome {
            Ok(mut found) => {
                found.indexed_days = view.indexed_days;
                found.scanned_days = view.scanned_days;
                return Ok(found);
            }
            // A segment found damaged midway: warned about, and the whole
            // recall done again with its days read from the archives.
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

/// `view`'s units counted for `terms`, the words of `query` that no
/// message has corrected first ([`spelling`]): the terms counted, and
/// their counts, not scored yet.
fn counted<'t, 'v>(
    tokenizer: &tokenize::Tokenizer,
    view: &'v corpus::View,
    query: &str,
    terms: &'t bm25::QueryTerms,
) -> anyhow::Result<(std::borrow::Cow<'t, bm25::QueryTerms>, score::Counted<'v>)> {
    let counted = view.count(tokenizer, terms)?;
    let fixed = spelling::corrected(tokenizer, query, terms, &counted.stats().df, |probe| {
        Ok(view.count(tokenizer, probe)?.stats().df.clone())
    })?;
    Ok(match fixed {
        None => (std::borrow::Cow::Borrowed(terms), counted),
        Some(fixed) => {
            let counted = view.count(tokenizer, &fixed)?;
            (std::borrow::Cow::Owned(fixed), counted)
        }
    })
}

/// The terms to look for. (Recall looks for none in small talk:
/// [`follow_up_terms`]; a search looks for what it is asked.)
pub fn query_terms(tokenizer: &tokenize::Tokenizer, query: &str) -> bm25::QueryTerms {
    let mut terms = bm25::QueryTerms::new(tokenizer, &without_frame_words(query));
    expand::expand(&mut terms, &name_stems(tokenizer, query));
    terms
}

/// `query` with the words that only frame what it asks blanked out:
/// "kind", "type" or "sort" before "of" ("What kind of art…"), "many"
/// or "much" after "how", "things" after "what" or "which". They say
/// nothing of the topic, yet match any message with "kind words", "a
/// lot" or "so many things" (and "many" brings "few", "lot").
fn without_frame_words(query: &str) -> std::borrow::Cow<'_, str> {
    // Each word (a run of letters): where it is, in lower case.
    let mut words: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut start = None;
    for (i, c) in query.char_indices().chain([(query.len(), ' ')]) {
        match (c.is_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s..i, query[s..i].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    let word = |i: Option<usize>| i.and_then(|i| words.get(i)).map(|(_, w)| w.as_str());
    let mut out = query.to_owned();
    let mut changed = false;
    for (i, (range, w)) in words.iter().enumerate().rev() {
        let (before, after) = (word(i.checked_sub(1)), word(Some(i + 1)));
        let frames = match w.as_str() {
            "kind" | "kinds" | "type" | "types" | "sort" | "sorts" => after == Some("of"),
            "many" | "much" => before == Some("how"),
            "thing" | "things" => matches!(before, Some("what" | "which")),
            _ => false,
        };
        if frames {
            out.replace_range(range.clone(), " ");
            changed = true;
        }
    }
    if changed {
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(query)
    }
}

/// The stems of the words a text names someone or something with: the
/// capitalised words after its first ("I" aside).
pub(super) fn name_stems(tokenizer: &tokenize::Tokenizer, text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .flat_map(|w| tokenizer.terms(w))
        .collect()
}

/// The terms of a message and, if it [`is_follow_up`], at
/// [`FOLLOW_UP_SHARE`] of the weight those of the turn or two before it (`previous`: the sender's last
/// message and the reply to it), so a follow-up ("and what about her?")
/// is looked for with what it follows up. Small talk
/// ([`small_talk::is_small_talk`]) looks for nothing, and so does a message without a word of its own to look for
/// unless it asks something (a `?`): "ok cool" after a question does not
/// recall that question's answers again.
pub fn follow_up_terms(
    tokenizer: &tokenize::Tokenizer,
    query: &str,
    previous: &[&str],
) -> bm25::QueryTerms {
    if small_talk::is_small_talk(query) {
        return query_terms(tokenizer, "");
    }
    let mut terms = query_terms(tokenizer, query);
    let asks = query.contains(['?', '\u{ff1f}']);
    if (terms.is_empty() && !asks) || !is_follow_up(query) {
        return terms;
    }
    for text in previous {
        terms.add_weighted(tokenizer, text, FOLLOW_UP_SHARE);
    }
    terms
}

/// Whether a message may follow up the turn before it rather than stand
/// alone: a short one that names no one (no capitalised word after the
/// first, "I" aside), as "And what does she do for a living?", "Who
/// teaches him?"; in Chinese or Japanese (no capitals, pronouns often
/// left out), one of at most [`FOLLOW_UP_CJK_CHARS`] characters or with a
/// third-person pronoun ("牠幾歲了？", "彼女の仕事は何？"). A question
/// that says whom it is about ("What did Melanie paint recently?") is
/// looked for by its own words only: the turns before it, about
/// something else, would crowd out what it asks for (LoCoMo dev with the
/// conversation's last two turns always added, at 0.3 of the weight:
/// 88.0% → 86.2%; at 0.5: 80.0%; at 1.0: 62.9%).
pub fn is_follow_up(text: &str) -> bool {
    let text = text.trim();
    let letters: Vec<char> = text.chars().filter(|c| c.is_alphanumeric()).collect();
    let cjk = letters.iter().filter(|c| tokenize::is_cjk(**c)).count();
    if cjk * 2 >= letters.len() && cjk > 0 {
        const PRONOUNS: [&str; 8] = ["她", "他", "牠", "它", "彼女", "彼", "あの人", "その人"];
        return letters.len() <= FOLLOW_UP_CJK_CHARS || PRONOUNS.iter().any(|p| text.contains(p));
    }
    let names_someone = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .skip(1)
        .any(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && !matches!(w, "I" | "I'm" | "I'd" | "I'll" | "I've")
        });
    text.chars().count() <= FOLLOW_UP_CHARS && !names_someone
}

/// The characters a unit takes in the context, with its line break.
pub fn unit_chars(unit: &Unit) -> usize {
    unit.item.transcript_line().chars().count() + 1
}

/// Whether `unit` goes on the passage of `before` (the unit stored just
/// before it, recalled too) under that passage's stamp: both messages, of
/// one day, in time order. Otherwise it starts a passage of its own.
pub fn continues(before: &Unit, unit: &Unit) -> bool {
    match (&before.item, &unit.item) {
        (Item::Message(a), Item::Message(b)) => {
            a.ts.date_naive() == b.ts.date_naive() && a.ts <= b.ts
        }
        _ => false,
    }
}

/// What `unit` reads as in the recalled section: a message after
/// `before` (the unit stored just before it, if recalled too) as its
/// passage goes on (`Role: text`,
/// [`crate::memory::transcript::format_in_passage`]), or after a stamp
/// line of its own; a summary as its own line. The one rule the walk
/// counts by ([`passage_chars`]) and the context writes by.
pub fn passage_text(before: Option<&Unit>, unit: &Unit) -> String {
    use crate::memory::transcript::{format_in_passage, format_stamp};
    match &unit.item {
        Item::Message(m) if before.is_some_and(|b| continues(b, unit)) => format_in_passage(m),
        Item::Message(m) => format!("{}\n{}", format_stamp(m.ts), format_in_passage(m)),
        Item::Note { .. } => unit.item.transcript_line(),
    }
}

/// The characters [`passage_text`] takes, with its line break. A message
/// with a stamp line of its own takes what [`unit_chars`] counts (a stamp
/// line takes what the stamp in front of a transcript line does), but
/// for a named sender's, whose line starts with the role's label too.
pub fn passage_chars(before: Option<&Unit>, unit: &Unit) -> usize {
    passage_text(before, unit).chars().count() + 1
}

/// Rank `corpus` for `terms` and take what the budget allows.
pub fn rank(
    tokenizer: &tokenize::Tokenizer,
    corpus: &Corpus,
    terms: &bm25::QueryTerms,
    window: &[Message],
    skip_id: Option<&str>,
    options: &Options,
) -> Recall {
    let counts: Vec<bm25::Counts> = corpus
        .units
        .iter()
        .map(|u| {
            let mut counts = bm25::count(tokenizer, terms, u.item.text());
            // Summed in term order, as the index path sums them.
            counts.tf.sort_unstable();
            counts
        })
        .collect();
    let mut hits = Hits::default();
    for (i, s) in bm25::scores(terms, &counts, corpus.messages)
        .into_iter()
        .enumerate()
    {
        if s > 0.0 {
            hits.list.push(score::Hit {
                place: i as u32,
                chars: score::NO_CHARS,
                raw: s,
            });
        }
    }
    choose::choose_listed(corpus, &hits, terms, window, skip_id, options)
        .expect("a corpus in memory reads")
}

/// Who a recalled message is from, as `--json` names it.
pub fn speaker(message: &Message) -> String {
    match (message.role, message.sender(), message.user_name.as_deref()) {
        (Role::User, Some(id), Some(name)) => format!("{name} ({id})"),
        (Role::User, Some(id), None) => id.to_owned(),
        (role, _, _) => role.label().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone as _;

    fn make(texts: &[(Role, &str)]) -> Corpus {
        let units: Vec<Unit> = texts
            .iter()
            .enumerate()
            .map(|(i, (role, text))| Unit {
                item: Item::Message(Message::new(
                    *role,
                    *text,
                    Utc.timestamp_opt(1_700_000_000 + i as i64 * 60, 0).unwrap(),
                )),
                source: Source::Log,
            })
            .collect();
        Corpus {
            messages: units.len(),
            units,
        }
    }

    /// Ranked, the hits considered listed (as `--explain` lists them).
    fn run(corpus: &Corpus, query: &str, window: &[Message], options: &Options) -> Recall {
        let t = tokenize::Tokenizer::new();
        let q = follow_up_terms(&t, query, &[]);
        let options = Options {
            explain: true,
            ..options.clone()
        };
        rank(&t, corpus, &q, window, None, &options)
    }

    fn texts(recall: &Recall) -> Vec<&str> {
        recall.units.iter().map(|r| r.unit.item.text()).collect()
    }

    fn chatter(n: usize) -> Vec<(Role, &'static str)> {
        (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    (Role::User, "how was your day, anything fun going on lately")
                } else {
                    (
                        Role::Assistant,
                        "pretty quiet here, the weather was nice and sunny",
                    )
                }
            })
            .collect()
    }

    #[test]
    fn a_relevant_old_turn_beats_recent_irrelevant_ones() {
        let mut turns = vec![
            (
                Role::User,
                "My sister Melanie adopted a puppy named Biscuit last spring",
            ),
            (Role::Assistant, "How lovely!"),
        ];
        turns.extend(chatter(200));
        turns.push((
            Role::User,
            "I went to the dentist yesterday, my sister drove me",
        ));
        let corpus = make(&turns);
        let options = Options {
            max_passages: 1,
            ..Options::default()
        };
        let got = run(
            &corpus,
            "What is the name of Melanie's dog puppy?",
            &[],
            &options,
        );
        assert!(texts(&got)[0].contains("Biscuit"), "{:?}", texts(&got));
        // The hit's neighbour (the answer after it) comes along.
        assert_eq!(
            texts(&got),
            [
                "My sister Melanie adopted a puppy named Biscuit last spring",
                "How lovely!"
            ]
        );
    }

    #[test]
    fn neighbours_come_along_once_and_in_time_order() {
        let mut turns = chatter(50);
        turns.push((Role::User, "Where did you go on vacation?"));
        turns.push((Role::Assistant, "We went to Lisbon, and loved the vacation"));
        turns.push((Role::User, "Sounds great"));
        turns.extend(chatter(50));
        let corpus = make(&turns);
        let got = run(&corpus, "vacation Lisbon", &[], &Options::default());
        // Hits on neighbouring turns (the last only by the words of the
        // one before it): one passage that grows by a turn on each side,
        // each turn once, in time order.
        assert_eq!(
            texts(&got),
            [
                "pretty quiet here, the weather was nice and sunny",
                "Where did you go on vacation?",
                "We went to Lisbon, and loved the vacation",
                "Sounds great",
                "how was your day, anything fun going on lately"
            ]
        );
    }

    #[test]
    fn a_hit_taken_as_a_neighbour_brings_its_other_neighbour() {
        let mut turns = chatter(60);
        turns.extend([
            (
                Role::User,
                "I started violin lessons with a new teacher, a violin teacher from Vienna",
            ),
            // A hit only by the words of the turn before it...
            (Role::Assistant, "Wow, when are they?"),
            // ...and the answer, which has none of the words.
            (Role::User, "Every Tuesday evening, for an hour"),
        ]);
        turns.extend(chatter(60));
        let corpus = make(&turns);
        let got = run(&corpus, "violin lessons teacher", &[], &Options::default());
        // The best hit brings its neighbours; the next best was one of
        // them, so the passage grows by the turn after it.
        assert!(got.considered[0].text.starts_with("I started violin"));
        assert_eq!(got.considered[1].verdict, Verdict::Taken);
        assert_eq!(
            texts(&got)[1..],
            [
                "I started violin lessons with a new teacher, a violin teacher from Vienna",
                "Wow, when are they?",
                "Every Tuesday evening, for an hour"
            ]
        );
    }

    #[test]
    fn a_named_day_raises_what_was_written_on_it() {
        let day = |m: u32, d: u32, h: u32| Utc.with_ymd_and_hms(2023, m, d, h, 0, 0).unwrap();
        let mut units = Vec::new();
        let mut add = |ts, text: &str| {
            units.push(Unit {
                item: Item::Message(Message::new(Role::User, text, ts)),
                source: Source::Log,
            })
        };
        for h in 0..20 {
            add(
                day(5, 1, h),
                "how was your day, anything fun going on lately",
            );
        }
        add(day(5, 3, 10), "I joined a pottery class today");
        for h in 0..20 {
            add(
                day(5, 4, h),
                "pretty quiet here, the weather was nice and sunny",
            );
        }
        add(day(6, 20, 10), "I joined a pottery class today");
        add(
            day(6, 20, 11),
            "pretty quiet here, the weather was nice and sunny",
        );
        let corpus = Corpus {
            messages: units.len(),
            units,
        };
        let options = Options {
            max_passages: 1,
            neighbours: 0,
            ..Options::default()
        };
        let (may, june) = (day(5, 3, 10), day(6, 20, 10));
        for (question, written) in [
            // Without a date the newer one wins (the recency prior)...
            ("What class did she join?", june),
            // ...with one, the one written that day, or in that month.
            ("What class did she join on 3 May, 2023?", may),
            ("What class did she join in May 2023?", may),
            ("What class did she join in June 2023?", june),
            // A day named raises the days after it, when it is told
            // about: 3 May is 2 days after 1 May; 20 June is 4 after 16
            // June.
            ("What class did she join on 1 May, 2023?", may),
            ("What class did she join on 16 June, 2023?", june),
            // A month with no year: that month, of any year.
            ("What class did she join in May?", may),
        ] {
            let got = run(&corpus, question, &[], &options);
            assert_eq!(got.units[0].unit.item.ts(), written, "{question}");
        }
    }

    #[test]
    fn words_that_only_frame_a_question_are_not_looked_for() {
        assert_eq!(
            without_frame_words("What kind of art, and how many? Which things?"),
            "What   of art, and how  ? Which  ?"
        );
        // Elsewhere they are words like any other.
        let kept = "She is so kind; many types; a thing of beauty";
        assert_eq!(without_frame_words(kept), kept);
        // "kind" would make the older turn the better match.
        let mut turns = chatter(100);
        turns.insert(30, (Role::User, "your kind words about my art mean a lot"));
        turns.insert(70, (Role::User, "I paint abstract art, mostly sunsets"));
        let corpus = make(&turns);
        let options = Options {
            max_passages: 1,
            neighbours: 0,
            ..Options::default()
        };
        let got = run(&corpus, "What kind of art does she make?", &[], &options);
        assert_eq!(texts(&got), ["I paint abstract art, mostly sunsets"]);
    }

    #[test]
    fn a_word_near_the_query_s_finds_a_turn_without_its_words() {
        let mut turns = chatter(100);
        turns.insert(40, (Role::User, "the kids loved the beach on Sunday"));
        turns.insert(70, (Role::User, "we adopted a dog last week"));
        let corpus = make(&turns);
        let options = Options {
            max_passages: 1,
            neighbours: 0,
            ..Options::default()
        };
        // "children" is not in the turn, "kids" is near it; "pets" and
        // "dog" too.
        let got = run(&corpus, "How many children does she have?", &[], &options);
        assert_eq!(texts(&got), ["the kids loved the beach on Sunday"]);
        let got = run(&corpus, "Which pets does she have?", &[], &options);
        assert_eq!(texts(&got), ["we adopted a dog last week"]);
        // A turn with the query's own word still ranks first.
        turns.insert(10, (Role::User, "both children start school on Monday"));
        let corpus = make(&turns);
        let got = run(&corpus, "How many children does she have?", &[], &options);
        assert_eq!(texts(&got), ["both children start school on Monday"]);
    }

    #[test]
    fn small_talk_and_the_window_recall_nothing() {
        let mut turns = chatter(20);
        turns.push((Role::User, "thanks a lot, ok!"));
        turns.push((Role::User, "謝謝！ありがとう"));
        let corpus = make(&turns);
        for query in [
            "thanks!",
            "ok",
            "hi",
            "👍",
            "Thank you so much",
            "謝謝！",
            "ありがとう",
        ] {
            assert!(
                run(&corpus, query, &[], &Options::default())
                    .units
                    .is_empty(),
                "{query}"
            );
        }
        // What the recent window holds is not recalled again.
        let mut turns = chatter(20);
        turns.push((Role::User, "my cat Tom likes tuna"));
        let corpus = make(&turns);
        let Item::Message(last) = &corpus.units[20].item else {
            unreachable!()
        };
        let got = run(
            &corpus,
            "what does Tom like",
            std::slice::from_ref(last),
            &Options::default(),
        );
        assert!(
            got.units
                .iter()
                .all(|r| r.unit.item.text() != "my cat Tom likes tuna")
        );
        assert_eq!(got.considered[0].verdict, Verdict::InWindow);
    }

    #[test]
    fn a_follow_up_is_looked_for_with_the_turns_before_it() {
        let mut turns = chatter(100);
        turns.insert(
            20,
            (Role::User, "My sister Melanie moved to Porto last spring"),
        );
        turns.insert(
            70,
            (
                Role::User,
                "Melanie works as a pediatric nurse, night shifts",
            ),
        );
        let corpus = make(&turns);
        let t = tokenize::Tokenizer::new();
        let previous = [
            "Where did my sister Melanie move to?",
            "Melanie moved to Porto last spring.",
        ];
        let found = |query: &str, previous: &[&str]| -> Vec<String> {
            let q = follow_up_terms(&t, query, previous);
            rank(&t, &corpus, &q, &[], None, &Options::default())
                .units
                .iter()
                .map(|r| r.unit.item.text().to_owned())
                .collect()
        };
        let job = "Melanie works as a pediatric nurse, night shifts";
        // Alone, "what does she do" has nothing to look for...
        assert!(found("And what does she do for a living?", &[]).is_empty());
        // ...after the turns it follows up, it finds the other fact.
        let got = found("And what does she do for a living?", &previous);
        assert!(got.iter().any(|text| text == job), "{got:?}");
        // A question that names whom it is about stands alone.
        let named = "What did Melanie's sister bring back from Porto?";
        assert_eq!(found(named, &previous), found(named, &[]));
        assert!(is_follow_up("Who teaches him?") && is_follow_up("How old is she?"));
        assert!(!is_follow_up("What did Melanie paint recently?"));
        assert!(is_follow_up("牠幾歲了？") && is_follow_up("彼女の仕事は何？"));
        assert!(!is_follow_up(
            "我下个月要去北海道滑雪，你觉得要带什么装备比较好呢"
        ));
        // Small talk after them, or a message with nothing of its own to
        // look for that asks nothing, recalls nothing.
        for talk in ["thanks!", "ok", "👍", "and her"] {
            assert!(found(talk, &previous).is_empty(), "{talk}");
        }
    }

    /// The characters the context writes for `recalled` (its section
    /// without the header line): what `recall.maxChars` bounds.
    pub(super) fn written(recalled: &[Recalled]) -> usize {
        let parts = crate::memory::context::Parts {
            recalled: recalled.to_vec(),
            ..Default::default()
        };
        let text = crate::memory::context::render(&parts, usize::MAX).text;
        text.chars()
            .count()
            .saturating_sub("[Earlier messages that may be relevant]".len())
    }

    #[test]
    fn the_budget_holds() {
        let turns: Vec<(Role, String)> = (0..300)
            .map(|i| match i % 10 {
                0 => (
                    Role::User,
                    format!("note {i}: the garden needs water and the roses bloom"),
                ),
                _ => (
                    Role::User,
                    format!("note {i}: nothing much happened today at work"),
                ),
            })
            .collect();
        let refs: Vec<(Role, &str)> = turns.iter().map(|(r, t)| (*r, t.as_str())).collect();
        let corpus = make(&refs);
        let options = Options {
            max_chars: 500,
            ..Options::default()
        };
        let got = run(&corpus, "roses garden", &[], &options);
        let used = written(&got.units);
        assert!(!got.units.is_empty());
        assert!(used <= 500, "{used}");
        // Passages of several turns spend one stamp: more is taken than
        // each turn with a stamp of its own would have let in.
        let alone: usize = got.units.iter().map(|r| unit_chars(&r.unit)).sum();
        assert!(alone > 500, "{alone}");
        assert!(
            got.considered
                .iter()
                .any(|c| c.verdict == Verdict::OverChars || c.verdict == Verdict::OverPassages)
        );
    }

    #[test]
    fn cjk_paraphrase_is_found() {
        let mut turns = chatter(100);
        turns.insert(40, (Role::User, "我下个月要去北海道滑雪"));
        turns.insert(70, (Role::User, "来週、京都で茶道の体験教室に行きます"));
        let corpus = make(&turns);
        let options = Options {
            max_passages: 1,
            neighbours: 0,
            ..Options::default()
        };
        let got = run(&corpus, "你什么时候去北海道?", &[], &options);
        assert_eq!(texts(&got), ["我下个月要去北海道滑雪"]);
        let got = run(&corpus, "茶道の教室はいつですか", &[], &options);
        assert_eq!(texts(&got), ["来週、京都で茶道の体験教室に行きます"]);
    }
}

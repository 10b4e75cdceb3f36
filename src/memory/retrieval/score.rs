//! How a [`View`] scores one query: the BM25 score of every unit with
//! any of the query's terms (or whose previous message has one). The
//! archive days left in index segments are scored from their postings,
//! every unit in memory is counted, and both with the statistics of the
//! whole memory, so a day scores the same whichever way it is read.
//! Counting and scoring are two steps ([`View::count`], [`Counted::score`])
//! so that a search over several owners scores each with the statistics
//! of all ([`super::search()`]).

use super::bm25;
use super::corpus::{Part, Units, View};
use super::index;
use super::tokenize::Tokenizer;

/// The message before an indexed day's first doc: its own counts of the
/// query's terms, by term, and its length.
type Before = (Vec<(u16, u16)>, u32);

/// Per segment, per query term: its postings on the days in use, doc
/// numbers turned into places in the corpus.
type Placed = Vec<Vec<Vec<index::Posting>>>;

/// A counted unit with any query term of its own or of the message
/// before it.
struct Doc {
    place: u32,
    chars: u32,
    len: u32,
    previous_len: u32,
    tf: Vec<bm25::Tf>,
}

/// [`Hit::chars`] of a unit not measured yet.
pub const NO_CHARS: u32 = u32::MAX;

/// A unit with a score.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    /// Its place in the corpus.
    pub place: u32,
    /// The characters it takes in the context, where known without
    /// reading it ([`NO_CHARS`] where not).
    pub chars: u32,
    /// Its BM25 score.
    pub raw: f64,
}

/// The units with a score, by place ascending.
#[derive(Debug, Default, Clone)]
pub struct Hits {
    pub list: Vec<Hit>,
}

impl Hits {
    /// The BM25 score of the unit at `place` (0 if it has none).
    pub fn raw_of(&self, place: usize) -> f64 {
        self.list
            .binary_search_by_key(&(place as u32), |h| h.place)
            .map_or(0.0, |k| self.list[k].raw)
    }
}

/// The posting of the doc at `place` in a list sorted by place.
fn posting_at(list: &[index::Posting], place: u32) -> Option<index::Posting> {
    list.binary_search_by_key(&place, |p| p.doc)
        .ok()
        .map(|k| list[k])
}

/// One view counted for a query and not scored yet: what
/// [`View::scores`] scores with its own statistics, and a search over
/// several owners ([`super::search()`]) with theirs summed.
pub struct Counted {
    stats: bm25::Stats,
    counted: Vec<Doc>,
    boundary: Vec<(u32, Before)>,
    per_segment: Placed,
    /// The length of the last message, if there is one.
    last_len: Option<u32>,
}

impl Counted {
    /// The statistics of this view alone.
    pub fn stats(&self) -> &bm25::Stats {
        &self.stats
    }

    /// The length (in terms) of the view's last message.
    pub fn last_len(&self) -> Option<u32> {
        self.last_len
    }

    /// Every counted unit's BM25 score by `scorer` (over this view's
    /// statistics, or more), by place, ascending.
    pub fn score(self, scorer: &bm25::Scorer) -> Hits {
        self.scored(scorer, false).0
    }

    /// [`Counted::score`], and for each hit whether it has a query term
    /// of its own (not only the message before it has one).
    pub fn score_with_own(self, scorer: &bm25::Scorer) -> (Hits, Vec<bool>) {
        self.scored(scorer, true)
    }

    fn scored(self, scorer: &bm25::Scorer, with_own: bool) -> (Hits, Vec<bool>) {
        let Counted {
            counted,
            boundary,
            per_segment,
            ..
        } = self;
        let mut hits: Vec<Hit> = counted
            .iter()
            .map(|d| Hit {
                place: d.place,
                chars: d.chars,
                raw: scorer.score(d.len, d.previous_len, &d.tf),
            })
            .collect();
        let mut own: Vec<bool> = Vec::new();
        if with_own {
            own.extend(counted.iter().map(|d| d.tf.iter().any(|t| t.1 > 0)));
        }
        drop(counted);
        for per_term in per_segment.iter().filter(|p| !p.is_empty()) {
            let from = hits.len();
            merge_segment(per_term, &boundary, scorer, &mut hits);
            if with_own {
                own.extend(hits[from..].iter().map(|h| {
                    per_term
                        .iter()
                        .any(|l| posting_at(l, h.place).is_some_and(|p| p.tf > 0))
                }));
            }
        }
        if !with_own {
            // Sorted runs (the counted units, then each segment): a
            // stable sort merges them.
            hits.retain(|h| h.raw > 0.0);
            hits.sort_by_key(|h| h.place);
            return (Hits { list: hits }, own);
        }
        let mut both: Vec<(Hit, bool)> = hits.into_iter().zip(own).collect();
        both.retain(|(h, _)| h.raw > 0.0);
        both.sort_by_key(|(h, _)| h.place);
        let (hits, own) = both.into_iter().unzip();
        (Hits { list: hits }, own)
    }
}

impl View {
    /// The BM25 score of every unit with any of the query's terms (or
    /// whose previous message has one), by place, ascending: the days in
    /// segments from their postings, the rest counted, with the
    /// statistics of the whole memory either way.
    pub fn scores(&self, tokenizer: &Tokenizer, terms: &bm25::QueryTerms) -> anyhow::Result<Hits> {
        let counted = self.count(tokenizer, terms)?;
        let scorer = bm25::Scorer::new(terms, &counted.stats);
        Ok(counted.score(&scorer))
    }

    /// Every unit with any of the query's terms (or whose previous
    /// message has one) counted, and the view's statistics, not scored
    /// yet ([`Counted::score`]).
    pub fn count(
        &self,
        tokenizer: &Tokenizer,
        terms: &bm25::QueryTerms,
    ) -> anyhow::Result<Counted> {
        let mut stats = bm25::Stats {
            docs: self.len(),
            total_len: 0,
            previous_len: 0,
            df: vec![0; terms.terms.len()],
        };
        let per_segment = self.placed_postings(terms, &mut stats)?;
        let mut counter = Counter {
            tokenizer,
            terms,
            stats: &mut stats,
            counted: Vec::new(),
            boundary: Vec::new(),
            previous: None,
        };
        for part in &self.parts {
            match part {
                Part::Loaded { start, units } => counter.loaded(*start, units),
                Part::Indexed { .. } => counter.indexed(part, &per_segment),
            }
        }
        counter.notes(self.messages, &self.notes);
        let (counted, boundary) = (counter.counted, counter.boundary);
        let last_len = counter.previous.map(|(_, len)| len);
        Ok(Counted {
            stats,
            counted,
            boundary,
            per_segment,
            last_len,
        })
    }

    /// Per segment: its days in use, by doc number, as (first doc,
    /// docs, place of the first doc), ascending.
    fn ranges(&self) -> Vec<Vec<(u32, u32, usize)>> {
        let mut ranges: Vec<Vec<(u32, u32, usize)>> = vec![Vec::new(); self.segments.len()];
        for part in &self.parts {
            if let Part::Indexed {
                start,
                segment,
                doc_start,
                count,
                ..
            } = part
            {
                ranges[*segment].push((*doc_start, *count, *start));
            }
        }
        for r in &mut ranges {
            r.sort_unstable();
        }
        ranges
    }

    /// Each segment's postings of each term, doc numbers turned into
    /// places (docs and days ascend together, so places ascend too),
    /// those of days not in use left out; each doc with a term of its
    /// own counted into `stats.df`. A posting lists a doc with the term
    /// of its own or of the previous doc of its day.
    fn placed_postings(
        &self,
        terms: &bm25::QueryTerms,
        stats: &mut bm25::Stats,
    ) -> anyhow::Result<Placed> {
        let mut per_segment: Placed = vec![Vec::new(); self.segments.len()];
        let mut postings = Vec::new();
        for (s, ranges) in self.ranges().iter().enumerate() {
            if ranges.is_empty() {
                continue;
            }
            let segment = &self.segments[s];
            let mut per_term = Vec::with_capacity(terms.terms.len());
            for (t, term) in terms.terms.iter().enumerate() {
                let mut list = Vec::new();
                if let Some(info) = segment.term(term)? {
                    postings.clear();
                    segment.postings(info, &mut postings)?;
                    list = place(&postings, ranges, &mut stats.df[t]);
                }
                per_term.push(list);
            }
            per_segment[s] = per_term;
        }
        Ok(per_segment)
    }
}

/// `postings` (by doc number) of the days in `ranges` (sorted), as
/// places; `df` counts those with the term of their own.
fn place(
    postings: &[index::Posting],
    ranges: &[(u32, u32, usize)],
    df: &mut u32,
) -> Vec<index::Posting> {
    let mut list = Vec::new();
    let mut r = 0;
    for p in postings {
        while r < ranges.len() && p.doc >= ranges[r].0 + ranges[r].1 {
            r += 1;
        }
        if r == ranges.len() {
            break;
        }
        let (first, _, start) = ranges[r];
        if p.doc < first {
            continue;
        }
        if p.tf > 0 {
            *df += 1;
        }
        list.push(index::Posting {
            doc: (start + (p.doc - first) as usize) as u32,
            ..*p
        });
    }
    list
}

/// Every part in order, the previous message's own counts and length
/// carried from each to the next (across a day, whichever way each is
/// read): the loaded units counted, and for each indexed day's first doc
/// the message before it.
struct Counter<'a> {
    tokenizer: &'a Tokenizer,
    terms: &'a bm25::QueryTerms,
    stats: &'a mut bm25::Stats,
    counted: Vec<Doc>,
    /// By place, ascending (the parts are in order): looked up by a
    /// cursor in the merge, not hashed once per doc.
    boundary: Vec<(u32, Before)>,
    previous: Option<Before>,
}

impl Counter<'_> {
    /// The own counts of `text`, sorted by term, added to the statistics.
    fn own(&mut self, text: &str) -> bm25::Counts {
        let mut own = bm25::count(self.tokenizer, self.terms, text);
        own.tf.sort_unstable();
        self.stats.total_len += u64::from(own.len);
        for &(t, _) in &own.tf {
            self.stats.df[t as usize] += 1;
        }
        own
    }

    /// A part read whole: each unit counted, with the one before it.
    fn loaded(&mut self, start: usize, units: &[super::Unit]) {
        for (k, unit) in units.iter().enumerate() {
            let own = self.own(unit.item.text());
            let (tf, previous_len) = match &self.previous {
                Some((tf, len)) => (bm25::expand(&own.tf, tf), *len),
                None => (bm25::expand(&own.tf, &[]), 0),
            };
            self.stats.previous_len += u64::from(previous_len);
            if !tf.is_empty() {
                self.counted.push(Doc {
                    place: (start + k) as u32,
                    chars: NO_CHARS,
                    len: own.len,
                    previous_len,
                    tf,
                });
            }
            self.previous = Some((own.tf, own.len));
        }
    }

    /// A day left in its segment: its statistics from its entry, its
    /// first doc joined to the message before it, its last doc's own
    /// counts carried on.
    fn indexed(&mut self, part: &Part, per_segment: &Placed) {
        let Part::Indexed {
            start,
            segment,
            count,
            len_sum,
            first_len,
            first_chars,
            last_len,
            ..
        } = part
        else {
            return;
        };
        let lists = &per_segment[*segment];
        let (first, last) = (*start as u32, (*start + *count as usize - 1) as u32);
        self.stats.total_len += len_sum;
        // Within the day, every doc but the last is one's previous.
        self.stats.previous_len += len_sum - u64::from(*last_len);
        if let Some((tf, len)) = self.previous.take() {
            self.stats.previous_len += u64::from(len);
            let listed = lists.iter().any(|l| posting_at(l, first).is_some());
            if listed {
                // Stored without a previous doc (see `index`).
                self.boundary.push((first, (tf, len)));
            } else if !tf.is_empty() {
                // By the words of the message before it alone.
                self.counted.push(Doc {
                    place: first,
                    chars: *first_chars,
                    len: *first_len,
                    previous_len: len,
                    tf: bm25::expand(&[], &tf),
                });
            }
        }
        let own_of_last = lists
            .iter()
            .enumerate()
            .filter_map(|(t, l)| posting_at(l, last).map(|p| (t as u16, p.tf)))
            .filter(|(_, own)| *own > 0)
            .collect();
        self.previous = Some((own_of_last, *last_len));
    }

    /// Summary lines stand alone, after the `messages` messages.
    fn notes(&mut self, messages: usize, notes: &[super::Unit]) {
        for (k, unit) in notes.iter().enumerate() {
            let own = self.own(unit.item.text());
            if !own.tf.is_empty() {
                self.counted.push(Doc {
                    place: (messages + k) as u32,
                    chars: NO_CHARS,
                    len: own.len,
                    previous_len: 0,
                    tf: bm25::expand(&own.tf, &[]),
                });
            }
        }
    }
}

/// One segment's hits: a merge of the terms' lists by place, a day's
/// first doc joined to the message before it (`boundary`).
fn merge_segment(
    per_term: &[Vec<index::Posting>],
    boundary: &[(u32, Before)],
    scorer: &bm25::Scorer,
    hits: &mut Vec<Hit>,
) {
    let mut tf: Vec<bm25::Tf> = Vec::with_capacity(per_term.len());
    let mut own: Vec<(u16, u16)> = Vec::with_capacity(per_term.len());
    let mut heads = vec![0usize; per_term.len()];
    let mut next_boundary = 0;
    loop {
        let mut place = u32::MAX;
        for (t, list) in per_term.iter().enumerate() {
            if let Some(p) = list.get(heads[t]) {
                place = place.min(p.doc);
            }
        }
        if place == u32::MAX {
            break;
        }
        tf.clear();
        let (mut len, mut previous_len, mut chars) = (0, 0, 0);
        for (t, list) in per_term.iter().enumerate() {
            if let Some(p) = list.get(heads[t])
                && p.doc == place
            {
                tf.push((t as u16, p.tf, p.previous_tf));
                (len, previous_len, chars) = (p.len, p.previous_len, p.chars);
                heads[t] += 1;
            }
        }
        while boundary.get(next_boundary).is_some_and(|b| b.0 < place) {
            next_boundary += 1;
        }
        if let Some((_, (before, before_len))) =
            boundary.get(next_boundary).filter(|b| b.0 == place)
        {
            own.clear();
            own.extend(tf.iter().filter(|d| d.1 > 0).map(|&(t, n, _)| (t, n)));
            tf = bm25::expand(&own, before);
            previous_len = *before_len;
        }
        let raw = scorer.score(len, previous_len, &tf);
        hits.push(Hit { place, chars, raw });
    }
}

//! How a [`View`] scores one query: the BM25 score of every unit with
//! any of the query's terms (or whose previous message has one). The
//! archive days left in index segments are scored from their postings,
//! every unit in memory is counted, and both with the statistics of the
//! whole memory, so a day scores the same whichever way it is read.

use super::bm25;
use super::corpus::{Part, Units, View};
use super::index;
use super::tokenize::Tokenizer;

/// The message before an indexed day's first doc: its own counts of the
/// query's terms, by term, and its length.
type Before = (Vec<(u16, u16)>, u32);

/// A segment's days in use, by doc number: (first doc, docs, place of
/// the first doc, number of its part), ascending.
type Ranges = Vec<(u32, u32, usize, usize)>;

/// One segment's postings lists of the query's terms, by term: read and
/// checked once (the first pass: the statistics, each day's first and
/// last doc), decoded again to be scored (the second); `None` for a term
/// no doc of the segment has. Each list as stored, and its postings
/// count.
type Lists = Vec<Option<(Vec<u8>, u32)>>;

/// What the first pass saw of an indexed day's first and last docs.
#[derive(Default)]
struct Ends {
    /// The first doc's postings (term, own count, previous count), by
    /// term, and the length and characters they give it.
    first: Vec<bm25::Tf>,
    first_len: u32,
    first_chars: u32,
    /// The last doc's own counts (those above 0), by term.
    last: Vec<(u16, u16)>,
}

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

/// One view counted for a query and not scored yet: what
/// [`View::scores`] scores with its own statistics, and a search over
/// several owners ([`super::search()`]) with theirs summed.
pub struct Counted<'a> {
    view: &'a View,
    stats: bm25::Stats,
    lists: Vec<Option<Lists>>,
    ends: Vec<Ends>,
    counted: Vec<Doc>,
    boundary: Vec<(u32, usize, Before)>,
    /// The length of the last message, if there is one.
    last_len: Option<u32>,
}

impl Counted<'_> {
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
    pub fn score(self, scorer: &bm25::Scorer) -> anyhow::Result<Hits> {
        let counted: Vec<Hit> = self
            .counted
            .iter()
            .map(|d| Hit {
                place: d.place,
                chars: d.chars,
                raw: scorer.score(d.len, d.previous_len, &d.tf),
            })
            .collect();
        let list =
            self.view
                .second_pass(&self.lists, counted, &self.boundary, &self.ends, scorer)?;
        Ok(Hits { list })
    }

    /// [`Counted::score`], and for each hit whether it has a query term
    /// of its own (not only the message before it has one): from the
    /// counts of the units read, and the postings of the indexed days
    /// read once more (a search's cost, not an `ask`'s).
    pub fn score_with_own(self, scorer: &bm25::Scorer) -> anyhow::Result<(Hits, Vec<bool>)> {
        let mut own = self.own_places()?;
        own.extend(
            self.counted
                .iter()
                .filter(|d| d.tf.iter().any(|t| t.1 > 0))
                .map(|d| d.place),
        );
        own.sort_unstable();
        own.dedup();
        let hits = self.score(scorer)?;
        let flags = hits
            .list
            .iter()
            .map(|h| own.binary_search(&h.place).is_ok())
            .collect();
        Ok((hits, flags))
    }

    /// The places of the indexed docs with a query term of their own.
    fn own_places(&self) -> anyhow::Result<Vec<u32>> {
        let view = self.view;
        let mut places = Vec::new();
        for (s, ranges) in view.ranges().into_iter().enumerate() {
            let Some(Some(per_term)) = self.lists.get(s) else {
                continue;
            };
            for (bytes, df) in per_term.iter().flatten() {
                let mut r = 0;
                view.segments[s].decode(bytes, *df, |p| {
                    if p.tf == 0 {
                        return;
                    }
                    if let Some(&(first, _, start, _)) = in_use(&ranges, &mut r, p.doc) {
                        places.push((start + (p.doc - first) as usize) as u32);
                    }
                })?;
            }
        }
        Ok(places)
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
        counted.score(&scorer)
    }

    /// Every unit with any of the query's terms (or whose previous
    /// message has one) counted, and the view's statistics, not scored
    /// yet ([`Counted::score`]): the first pass over the segments'
    /// postings, and the units read whole counted.
    pub fn count(
        &self,
        tokenizer: &Tokenizer,
        terms: &bm25::QueryTerms,
    ) -> anyhow::Result<Counted<'_>> {
        let mut stats = bm25::Stats {
            docs: self.len(),
            total_len: 0,
            previous_len: 0,
            df: vec![0; terms.terms.len()],
        };
        let mut ends: Vec<Ends> = (0..self.parts.len()).map(|_| Ends::default()).collect();
        let lists = self.first_pass(terms, &mut stats, &mut ends)?;
        let mut counter = Counter {
            tokenizer,
            terms,
            stats: &mut stats,
            counted: Vec::new(),
            boundary: Vec::new(),
            previous: None,
        };
        for (p, part) in self.parts.iter().enumerate() {
            match part {
                Part::Loaded { start, units } => counter.loaded(*start, units),
                Part::Indexed { .. } => counter.indexed(part, p, &ends[p]),
            }
        }
        counter.notes(self.messages, &self.notes);
        let (counted, boundary) = (counter.counted, counter.boundary);
        let last_len = counter.previous.map(|(_, len)| len);
        Ok(Counted {
            view: self,
            stats,
            lists,
            ends,
            counted,
            boundary,
            last_len,
        })
    }

    /// Per segment: its days in use, by doc number.
    fn ranges(&self) -> Vec<Ranges> {
        let mut ranges: Vec<Ranges> = vec![Vec::new(); self.segments.len()];
        for (p, part) in self.parts.iter().enumerate() {
            if let Part::Indexed {
                start,
                segment,
                doc_start,
                count,
                ..
            } = part
            {
                ranges[*segment].push((*doc_start, *count, *start, p));
            }
        }
        for r in &mut ranges {
            r.sort_unstable();
        }
        ranges
    }

    /// Each segment's postings lists of the query's terms, read and
    /// checked, those of days not in use passed over: each doc with a
    /// term of its own counted into `stats.df`, and each day's first and
    /// last doc's postings kept in `ends` (by part). A posting lists a
    /// doc with the term of its own or of the previous doc of its day.
    fn first_pass(
        &self,
        terms: &bm25::QueryTerms,
        stats: &mut bm25::Stats,
        ends: &mut [Ends],
    ) -> anyhow::Result<Vec<Option<Lists>>> {
        let mut all = Vec::with_capacity(self.segments.len());
        for (s, ranges) in self.ranges().into_iter().enumerate() {
            if ranges.is_empty() {
                all.push(None);
                continue;
            }
            let segment = &self.segments[s];
            let mut per_term = Vec::with_capacity(terms.terms.len());
            for (t, term) in terms.terms.iter().enumerate() {
                let Some(info) = segment.term(term)? else {
                    per_term.push(None);
                    continue;
                };
                let bytes = segment.postings_bytes(info)?;
                let df = &mut stats.df[t];
                let mut r = 0;
                segment.decode(&bytes, info.df, |p| {
                    let Some(&(first, count, _, part)) = in_use(&ranges, &mut r, p.doc) else {
                        return;
                    };
                    if p.tf > 0 {
                        *df += 1;
                    }
                    let ends = &mut ends[part];
                    if p.doc == first {
                        ends.first.push((t as u16, p.tf, p.previous_tf));
                        (ends.first_len, ends.first_chars) = (p.len, p.chars);
                    }
                    if p.doc == first + count - 1 && p.tf > 0 {
                        ends.last.push((t as u16, p.tf));
                    }
                })?;
                per_term.push(Some((bytes, info.df)));
            }
            all.push(Some(per_term));
        }
        Ok(all)
    }

    /// Every hit, by place: the parts walked in order, the counted
    /// units' hits (`counted`, by place) taken in turn, and each indexed
    /// day scored from its segment's lists, its terms' postings added up
    /// one term at a time (in term order, as [`bm25::Scorer::score`]
    /// adds them: the same sum), its first doc joined to the message
    /// before it where `boundary` says so. Only scores above 0 are kept.
    fn second_pass(
        &self,
        lists: &[Option<Lists>],
        counted: Vec<Hit>,
        boundary: &[(u32, usize, Before)],
        ends: &[Ends],
        scorer: &bm25::Scorer,
    ) -> anyhow::Result<Vec<Hit>> {
        // Per segment, per term: how far its list is read.
        let mut readers: Vec<Vec<Option<index::Reader>>> =
            (0..lists.len()).map(|s| self.readers(s, lists)).collect();
        // Per segment: the end of the last day scored from it.
        let mut read_to: Vec<u32> = vec![0; lists.len()];
        let postings: usize = lists
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .map(|l| l.1 as usize)
            .sum();
        // Room for every hit; only what is written of it is touched.
        let mut hits = Vec::with_capacity(counted.len() + boundary.len() + postings);
        let keep = |hits: &mut Vec<Hit>, hit: Hit| {
            if hit.raw > 0.0 {
                hits.push(hit);
            }
        };
        let mut counted = counted.into_iter().peekable();
        let mut boundary = boundary.iter().peekable();
        let (mut day, mut chars): (Vec<f64>, Vec<u32>) = (Vec::new(), Vec::new());
        for (p, part) in self.parts.iter().enumerate() {
            let end = match part {
                Part::Loaded { start, units } => start + units.len(),
                Part::Indexed { start, count, .. } => start + *count as usize,
            };
            // (The only counted unit of an indexed day is its first doc.)
            while let Some(hit) = counted.next_if(|h| (h.place as usize) < end) {
                keep(&mut hits, hit);
            }
            let Part::Indexed {
                start,
                segment,
                doc_start,
                count,
                ..
            } = part
            else {
                continue;
            };
            let (first, last) = (*doc_start, doc_start + count);
            if first < read_to[*segment] {
                // Days not in doc order: the lists read again.
                readers[*segment] = self.readers(*segment, lists);
            }
            read_to[*segment] = last;
            day.clear();
            day.resize(*count as usize, 0.0);
            chars.clear();
            chars.resize(*count as usize, 0);
            for (t, reader) in readers[*segment].iter_mut().enumerate() {
                let Some(reader) = reader else {
                    continue;
                };
                while let Some(posting) = reader.next_below(last)? {
                    if posting.doc < first {
                        // Of a day not in use.
                        continue;
                    }
                    let d = (posting.doc - first) as usize;
                    let norm = scorer.norm(posting.len, posting.previous_len);
                    day[d] += scorer.term(t as u16, posting.tf, posting.previous_tf, norm);
                    chars[d] = posting.chars;
                }
            }
            let joined = boundary.next_if(|b| b.1 == p);
            for (d, (&raw, &chars)) in day.iter().zip(&chars).enumerate() {
                let place = (start + d) as u32;
                match joined {
                    Some((_, _, (before, before_len))) if d == 0 => {
                        keep(
                            &mut hits,
                            joined_hit(place, &ends[p], before, *before_len, scorer),
                        );
                    }
                    _ => keep(&mut hits, Hit { place, chars, raw }),
                }
            }
        }
        for hit in counted {
            keep(&mut hits, hit);
        }
        Ok(hits)
    }

    /// A reader of each of segment `s`'s lists, by term.
    fn readers<'a>(
        &'a self,
        s: usize,
        lists: &'a [Option<Lists>],
    ) -> Vec<Option<index::Reader<'a>>> {
        lists[s]
            .iter()
            .flatten()
            .map(|list| {
                list.as_ref()
                    .map(|(bytes, df)| self.segments[s].reader(bytes, *df))
            })
            .collect()
    }
}

/// A day's first doc (at `place`, its postings seen in `ends`) joined
/// to the message before it (its own counts `before`, `before_len`
/// terms): as [`Scorer::score`](bm25::Scorer::score) scores any other.
fn joined_hit(
    place: u32,
    ends: &Ends,
    before: &[(u16, u16)],
    before_len: u32,
    scorer: &bm25::Scorer,
) -> Hit {
    let own: Vec<(u16, u16)> = ends
        .first
        .iter()
        .filter(|d| d.1 > 0)
        .map(|&(t, n, _)| (t, n))
        .collect();
    let tf = bm25::expand(&own, before);
    Hit {
        place,
        chars: ends.first_chars,
        raw: scorer.score(ends.first_len, before_len, &tf),
    }
}

/// The day in use (of `ranges`, sorted) holding doc `doc`, looked for
/// from `*r` on (docs come ascending); `None` for a doc of a day not in
/// use.
#[inline]
fn in_use<'a>(
    ranges: &'a [(u32, u32, usize, usize)],
    r: &mut usize,
    doc: u32,
) -> Option<&'a (u32, u32, usize, usize)> {
    while *r < ranges.len() && doc >= ranges[*r].0 + ranges[*r].1 {
        *r += 1;
    }
    ranges.get(*r).filter(|range| doc >= range.0)
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
    boundary: Vec<(u32, usize, Before)>,
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

    /// A day left in its segment (part `p`, whose first and last docs'
    /// postings are `ends`): its statistics from its entry, its first doc
    /// joined to the message before it, its last doc's own counts carried
    /// on.
    fn indexed(&mut self, part: &Part, p: usize, ends: &Ends) {
        let Part::Indexed {
            start,
            len_sum,
            first_len,
            first_chars,
            last_len,
            ..
        } = part
        else {
            return;
        };
        let first = *start as u32;
        self.stats.total_len += len_sum;
        // Within the day, every doc but the last is one's previous.
        self.stats.previous_len += len_sum - u64::from(*last_len);
        if let Some((tf, len)) = self.previous.take() {
            self.stats.previous_len += u64::from(len);
            if !ends.first.is_empty() {
                // Stored without a previous doc (see `index`).
                self.boundary.push((first, p, (tf, len)));
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
        self.previous = Some((ends.last.clone(), *last_len));
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

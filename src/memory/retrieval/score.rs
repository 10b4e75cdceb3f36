//! How a [`View`] scores one query: the BM25 score of every unit with
//! any of the query's terms (or whose previous message has one). The
//! archive days left in index segments are scored from their postings,
//! every unit in memory is counted, and both with the statistics of the
//! whole memory, so a day scores the same whichever way it is read.

use super::bm25;
use super::corpus::{Part, Units, View};
use super::index;
use super::tokenize::Tokenizer;

/// A message's own counts of the query's terms, by term, and its length.
type Before = (Vec<(u16, u16)>, u32);

/// A segment's days in use, by doc number: (first doc, docs, place of
/// the first doc, number of its part), ascending.
type Ranges = Vec<(u32, u32, usize, usize)>;

/// One segment's postings lists of the query's terms, by term; `None`
/// for a term no doc of the segment has.
type Lists = Vec<Option<List>>;

/// A reader of each of a segment's lists, by term.
type Readers<'a> = Vec<Option<index::Reader<'a, Vec<u8>>>>;

/// A postings list: where it is in its segment (and its postings count),
/// and the list as stored if already read (to count the docs of a
/// segment's days in use); else read when its segment's first day is
/// scored, into the room of another segment's done with.
struct List {
    info: index::TermInfo,
    bytes: Option<Vec<u8>>,
}

/// The message before a unit, as the count of the parts knows it.
#[derive(Debug, Clone)]
enum Previous {
    /// None: the unit is the memory's first message.
    None,
    /// A unit read whole: its own counts, and its length.
    Known(Before),
    /// The last doc of the indexed day of part `.0`, of `.1` terms: its
    /// counts are seen when that day's postings are scored (the day
    /// before, in the same walk of the parts).
    LastOf(usize, u32),
}

impl Previous {
    fn len(&self) -> Option<u32> {
        match self {
            Previous::None => None,
            Previous::Known((_, len)) | Previous::LastOf(_, len) => Some(*len),
        }
    }
}

/// A counted unit with any query term of its own or of the message
/// before it (or whose previous message is an indexed day's last doc).
struct Doc {
    place: u32,
    chars: u32,
    len: u32,
    previous_len: u32,
    /// With the previous message's counts; only its own (previous 0)
    /// when `after` is set.
    tf: Vec<bm25::Tf>,
    /// The part whose last doc is the message before it (an indexed
    /// day), whose counts are added when it is scored.
    after: Option<usize>,
}

/// [`Hit::chars`] of a unit not measured yet.
pub const NO_CHARS: u32 = u32::MAX;

/// A unit with a score.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hit {
    /// Its place in the corpus.
    pub place: u32,
    /// The characters it takes in the context, where known without
    /// reading it ([`NO_CHARS`] where not).
    pub chars: u32,
    /// Its BM25 score.
    pub raw: f64,
}

/// What the hits of one query are handed to as they are scored: each
/// with a score above 0, by place ascending (a day's at a time).
pub trait Sink {
    fn take(&mut self, hits: &[Hit]) -> anyhow::Result<()>;
}

impl Sink for Vec<Hit> {
    fn take(&mut self, hits: &[Hit]) -> anyhow::Result<()> {
        self.extend_from_slice(hits);
        Ok(())
    }
}

/// The units with a score, by place ascending.
#[derive(Debug, Default, Clone)]
pub struct Hits {
    pub list: Vec<Hit>,
}

/// One view counted for a query and not scored yet: what
/// [`View::scores`] scores with its own statistics, and a search over
/// several owners ([`super::search()`]) with theirs summed.
pub struct Counted<'a> {
    view: &'a View,
    stats: bm25::Stats,
    lists: Vec<Option<Lists>>,
    counted: Vec<Doc>,
    /// Each indexed day after the memory's first message (by part,
    /// ascending), and the message before its first doc.
    boundary: Vec<(usize, Previous)>,
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
        // Room for every hit; only what is written of it is touched.
        let postings: usize = self
            .lists
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .map(|l| l.info.df as usize)
            .sum();
        let mut list = Vec::with_capacity(self.counted.len() + self.boundary.len() + postings);
        self.score_into(scorer, &mut list)?;
        Ok(Hits { list })
    }

    /// Every counted unit's BM25 score by `scorer`, handed to `sink` as
    /// it is scored, by place, ascending.
    pub fn score_into<S: Sink + ?Sized>(
        self,
        scorer: &bm25::Scorer,
        sink: &mut S,
    ) -> anyhow::Result<()> {
        self.view
            .walk(self.lists, self.counted, &self.boundary, scorer, sink)
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
            for list in per_term.iter().flatten() {
                let segment = &view.segments[s];
                let read;
                let bytes = match &list.bytes {
                    Some(bytes) => bytes,
                    None => {
                        read = segment.postings_bytes(list.info)?;
                        &read
                    }
                };
                let mut r = 0;
                segment.decode(bytes, list.info.df, |p| {
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

    /// [`View::scores`], each hit handed to `sink` as it is scored
    /// rather than listed.
    pub fn score_into<S: Sink + ?Sized>(
        &self,
        tokenizer: &Tokenizer,
        terms: &bm25::QueryTerms,
        sink: &mut S,
    ) -> anyhow::Result<()> {
        let counted = self.count(tokenizer, terms)?;
        let scorer = bm25::Scorer::new(terms, &counted.stats);
        counted.score_into(&scorer, sink)
    }

    /// Every unit with any of the query's terms (or whose previous
    /// message has one) counted, and the view's statistics, not scored
    /// yet ([`Counted::score`]): the segments' postings lists read (and
    /// their docs with a term of their own counted), and the units read
    /// whole counted.
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
        let lists = self.lists(terms, &mut stats)?;
        let mut counter = Counter {
            tokenizer,
            terms,
            stats: &mut stats,
            counted: Vec::new(),
            boundary: Vec::new(),
            previous: Previous::None,
        };
        for (p, part) in self.parts.iter().enumerate() {
            match part {
                Part::Loaded { start, units } => counter.loaded(*start, units),
                Part::Indexed { .. } => counter.indexed(part, p),
            }
        }
        counter.notes(self.messages, &self.notes);
        let (counted, boundary) = (counter.counted, counter.boundary);
        let last_len = counter.previous.len();
        Ok(Counted {
            view: self,
            stats,
            lists,
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

    /// Each segment's postings lists of the query's terms; the docs with
    /// a term of their own counted into `stats.df`: from the segment's
    /// dictionary where every day of it is in use (its lists read and
    /// checked when scored), else from its postings (read and checked
    /// now), those of days not in use passed over. (A posting lists a doc
    /// with the term of its own or of the previous doc of its day.)
    fn lists(
        &self,
        terms: &bm25::QueryTerms,
        stats: &mut bm25::Stats,
    ) -> anyhow::Result<Vec<Option<Lists>>> {
        // The terms in byte order, as the dictionary is: each of its
        // blocks read once for all the terms in it.
        let mut order: Vec<usize> = (0..terms.terms.len()).collect();
        order.sort_unstable_by(|&a, &b| terms.terms[a].cmp(&terms.terms[b]));
        let keys: Vec<&str> = order.iter().map(|&t| terms.terms[t].as_str()).collect();
        let mut all = Vec::with_capacity(self.segments.len());
        for (s, ranges) in self.ranges().into_iter().enumerate() {
            if ranges.is_empty() {
                all.push(None);
                continue;
            }
            let segment = &self.segments[s];
            let whole =
                ranges.iter().map(|r| u64::from(r.1)).sum::<u64>() == u64::from(segment.docs);
            let mut per_term: Vec<Option<List>> = (0..terms.terms.len()).map(|_| None).collect();
            for (&t, found) in order.iter().zip(segment.terms_sorted(&keys)?) {
                let Some(info) = found else {
                    continue;
                };
                let df = &mut stats.df[t];
                let bytes = if whole {
                    *df += info.own_df;
                    None
                } else {
                    let bytes = segment.postings_bytes(info)?;
                    let mut r = 0;
                    segment.decode(&bytes, info.df, |p| {
                        if p.tf > 0 && in_use(&ranges, &mut r, p.doc).is_some() {
                            *df += 1;
                        }
                    })?;
                    Some(bytes)
                };
                per_term[t] = Some(List { info, bytes });
            }
            all.push(Some(per_term));
        }
        Ok(all)
    }

    /// Every hit handed to `sink`, by place: the parts walked in order,
    /// the counted units' hits (`counted`, by place) scored in turn, and
    /// each indexed day scored from its segment's lists, its terms'
    /// postings added up one term at a time (in term order, as
    /// [`bm25::Scorer::score`] adds them: the same sum), its first doc
    /// joined to the message before it (`boundary`), its last doc's own
    /// counts kept for the message after it; a day's hits handed in at
    /// once. Only scores above 0 are kept.
    fn walk<S: Sink + ?Sized>(
        &self,
        mut lists: Vec<Option<Lists>>,
        counted: Vec<Doc>,
        boundary: &[(usize, Previous)],
        scorer: &bm25::Scorer,
        sink: &mut S,
    ) -> anyhow::Result<()> {
        // Per segment, per term: how far its list is read (once its
        // first day in use is scored, until its last is).
        let mut readers: Vec<Option<Readers>> = (0..lists.len()).map(|_| None).collect();
        // Per segment: the end of the last day scored from it, and the
        // last part of it.
        let mut read_to: Vec<u32> = vec![0; lists.len()];
        let mut last_part: Vec<usize> = vec![0; lists.len()];
        for (p, part) in self.parts.iter().enumerate() {
            if let Part::Indexed { segment, .. } = part {
                last_part[*segment] = p;
            }
        }
        // By term: the room of a list read and done with.
        let mut room: Vec<Vec<u8>> = Vec::new();
        let keep = |sink: &mut S, hit: Hit| {
            if hit.raw > 0.0 {
                sink.take(std::slice::from_ref(&hit))
            } else {
                Ok(())
            }
        };
        let mut counted = counted.into_iter().peekable();
        let mut boundary = boundary.iter().peekable();
        let (mut day, mut chars): (Vec<f64>, Vec<u32>) = (Vec::new(), Vec::new());
        let mut kept: Vec<Hit> = Vec::new();
        // The own counts of the first and last doc of the day being
        // scored, and of the last doc of the indexed day before (of part
        // `last_of`).
        let (mut first_own, mut last_own, mut before_own) = (Vec::new(), Vec::new(), Vec::new());
        let mut last_of = usize::MAX;
        let own_only = |tf: &[bm25::Tf]| tf.iter().map(|&(t, n, _)| (t, n)).collect::<Vec<_>>();
        for (p, part) in self.parts.iter().enumerate() {
            let end = match part {
                Part::Loaded { start, units } => start + units.len(),
                Part::Indexed { start, count, .. } => start + *count as usize,
            };
            while let Some(doc) = counted.next_if(|d| (d.place as usize) < end) {
                let len2 = bm25::doubled(doc.len, doc.previous_len);
                let raw = match doc.after {
                    Some(q) => {
                        debug_assert_eq!(q, last_of);
                        scorer.score(len2, &bm25::expand(&own_only(&doc.tf), &before_own))
                    }
                    None => scorer.score(len2, &doc.tf),
                };
                keep(
                    sink,
                    Hit {
                        place: doc.place,
                        chars: doc.chars,
                        raw,
                    },
                )?;
            }
            let Part::Indexed {
                start,
                segment,
                doc_start,
                count,
                first_len,
                first_chars,
                ..
            } = part
            else {
                continue;
            };
            let (first, last) = (*doc_start, doc_start + count);
            match &mut readers[*segment] {
                None => {
                    let per_term = lists[*segment].take().unwrap_or_default();
                    readers[*segment] = Some(self.readers(*segment, per_term, &mut room)?);
                }
                Some(per_term) if first < read_to[*segment] => {
                    // Days not in doc order: the lists read again.
                    per_term
                        .iter_mut()
                        .flatten()
                        .for_each(index::Reader::rewind);
                }
                Some(_) => {}
            }
            let segment_readers = readers[*segment].as_mut().expect("just read");
            read_to[*segment] = last;
            day.clear();
            day.resize(*count as usize, 0.0);
            // Not cleared: a doc with a score had its characters written
            // by its postings (or the join below) this day.
            if chars.len() < *count as usize {
                chars.resize(*count as usize, 0);
            }
            first_own.clear();
            last_own.clear();
            let last_doc = (count - 1) as usize;
            for (t, reader) in segment_readers.iter_mut().enumerate() {
                let Some(reader) = reader else {
                    continue;
                };
                let t = t as u16;
                while let Some(posting) = reader.next_below(last)? {
                    if posting.doc < first {
                        // Of a day not in use.
                        continue;
                    }
                    let d = (posting.doc - first) as usize;
                    let count = bm25::combined(posting.tf, posting.previous_tf);
                    day[d] += scorer.term(t, count, posting.len2);
                    chars[d] = posting.chars;
                    // (Rare first: whether a posting is of a doc's own
                    // term is a coin toss the branch predictor loses.)
                    if (d == 0 || d == last_doc) && posting.tf > 0 {
                        if d == 0 {
                            first_own.push((t, posting.tf));
                        }
                        if d == last_doc {
                            last_own.push((t, posting.tf));
                        }
                    }
                }
            }
            if let Some((_, before)) = boundary.next_if(|b| b.0 == p) {
                // The first doc joined to the message before it: as
                // `Scorer::score` scores any other.
                let (before_tf, before_len): (&[(u16, u16)], u32) = match before {
                    Previous::Known((tf, len)) => (tf, *len),
                    Previous::LastOf(q, len) => {
                        debug_assert_eq!(*q, last_of);
                        (&before_own, *len)
                    }
                    Previous::None => (&[], 0),
                };
                let tf = bm25::expand(&first_own, before_tf);
                day[0] = scorer.score(bm25::doubled(*first_len, before_len), &tf);
                chars[0] = *first_chars;
            }
            std::mem::swap(&mut before_own, &mut last_own);
            last_of = p;
            // Every doc written, the next written over it unless it has a
            // score: no branch on a coin toss. (Not cleared: what is
            // kept of it is written first.)
            if kept.len() < day.len() {
                kept.resize(day.len(), Hit::default());
            }
            let mut n = 0;
            for (d, (&raw, &chars)) in day.iter().zip(&chars).enumerate() {
                let place = (start + d) as u32;
                kept[n] = Hit { place, chars, raw };
                n += usize::from(raw > 0.0);
            }
            sink.take(&kept[..n])?;
            if last_part[*segment] == p {
                // The segment's lists done with: their room for the next.
                let done = readers[*segment].take().into_iter().flatten();
                for (t, reader) in done.enumerate() {
                    if let Some(reader) = reader {
                        room[t] = reader.into_bytes();
                    }
                }
            }
        }
        // The notes (after the messages).
        for doc in counted {
            let raw = scorer.score(bm25::doubled(doc.len, doc.previous_len), &doc.tf);
            keep(
                sink,
                Hit {
                    place: doc.place,
                    chars: doc.chars,
                    raw,
                },
            )?;
        }
        Ok(())
    }

    /// A reader of each of segment `s`'s lists, by term: those not read
    /// yet read into the room of lists done with (`room`, by term).
    fn readers(
        &self,
        s: usize,
        lists: Lists,
        room: &mut Vec<Vec<u8>>,
    ) -> anyhow::Result<Readers<'_>> {
        let segment = &self.segments[s];
        if room.len() < lists.len() {
            room.resize_with(lists.len(), Vec::new);
        }
        let mut readers = Vec::with_capacity(lists.len());
        for (t, list) in lists.into_iter().enumerate() {
            let Some(List { info, bytes }) = list else {
                readers.push(None);
                continue;
            };
            let bytes = match bytes {
                Some(bytes) => bytes,
                None => {
                    let mut bytes = std::mem::take(&mut room[t]);
                    segment.postings_into(info, &mut bytes)?;
                    bytes
                }
            };
            readers.push(Some(segment.owned_reader(bytes, info.df)));
        }
        Ok(readers)
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
    /// By part, ascending (the parts are in order): looked up by a
    /// cursor in the walk, not hashed once per doc.
    boundary: Vec<(usize, Previous)>,
    previous: Previous,
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

    /// A part read whole: each unit counted, with the one before it (an
    /// indexed day's last doc: counted when scored).
    fn loaded(&mut self, start: usize, units: &[super::Unit]) {
        for (k, unit) in units.iter().enumerate() {
            let own = self.own(unit.item.text());
            let (tf, previous_len, after) = match &self.previous {
                Previous::Known((tf, len)) => (bm25::expand(&own.tf, tf), *len, None),
                Previous::LastOf(p, len) => (bm25::expand(&own.tf, &[]), *len, Some(*p)),
                Previous::None => (bm25::expand(&own.tf, &[]), 0, None),
            };
            self.stats.previous_len += u64::from(previous_len);
            if !tf.is_empty() || after.is_some() {
                self.counted.push(Doc {
                    place: (start + k) as u32,
                    chars: NO_CHARS,
                    len: own.len,
                    previous_len,
                    tf,
                    after,
                });
            }
            self.previous = Previous::Known((own.tf, own.len));
        }
    }

    /// A day left in its segment (part `p`): its statistics from its
    /// entry, its first doc joined to the message before it (when
    /// scored), its last doc the next one's previous.
    fn indexed(&mut self, part: &Part, p: usize) {
        let Part::Indexed {
            len_sum, last_len, ..
        } = part
        else {
            return;
        };
        self.stats.total_len += len_sum;
        // Within the day, every doc but the last is one's previous.
        self.stats.previous_len += len_sum - u64::from(*last_len);
        let previous = std::mem::replace(&mut self.previous, Previous::LastOf(p, *last_len));
        if let Some(len) = previous.len() {
            self.stats.previous_len += u64::from(len);
            self.boundary.push((p, previous));
        }
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
                    after: None,
                });
            }
        }
    }
}

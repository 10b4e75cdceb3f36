//! Taking what the budget allows of one query's hits: each hit scored
//! (its own BM25 score, a share of its neighbours', a small recency
//! prior, a raise for the dates the query names), best first, each with
//! its neighbours as a passage, until `recall.maxChars` or
//! `recall.maxPassages` is spent; and why each hit considered is or is
//! not taken (`--explain`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::{Considered, Hits, Item, Options, Recall, Recalled, Unit, Units, Verdict};
use super::{bm25, passage_chars, score, unit_chars, when};
use crate::memory::message::Message;

/// How much of a neighbour's score a message gets: a question's answer
/// (or an answer's question) is about the same thing. (LoCoMo dev: 0.5
/// found a point more than 0.3.)
const NEIGHBOUR_SHARE: f64 = 0.5;
/// A message written on a day the query names, or on one of the
/// [`when::DAYS_AFTER`] days after it (what happened is told the next
/// days: "last night"), scores this many times more (one in the month it
/// names: [`NAMED_MONTH`]). The days after: LoCoMo dev 89.9% → 90.1%
/// (1 day 90.0%, 2 to 14 days 90.1%; raised ×2 instead of ×3 90.0%,
/// ×1.5 89.9%). LoCoMo dev, with the
/// previous-message counts and growing passages (86.2% without), day /
/// month: ×1.5 / – 87.0%, ×2 / – 87.1%, ×2 / ×1.3 87.4%, ×3 / ×1.5 87.8%,
/// ×3 / ×2 88.0%, ×6 / ×2 87.9%, ×11 / ×3 87.8%.
const NAMED_DAY: f64 = 3.0;
const NAMED_MONTH: f64 = 2.0;

/// The most a stamp line takes (`[YYYY-MM-DD HH:MM]` and its line
/// break; a year past 9999 has a sign and more digits).
const STAMP_LINE_MAX: usize = 24;

/// Hits the walk is given first ([`Best`]).
const FIRST_HITS: usize = 512;
/// Rows `--explain` lists besides what was taken.
const MAX_EXPLAINED: usize = 40;
/// The fewest characters a unit that starts a passage takes in the
/// context: `[YYYY-MM-DD HH:MM]`, `User: x` and their line breaks. One
/// that goes on a passage takes less, but room under this is spent: the
/// walk stops there (LoCoMo dev: the same at 8).
const MIN_UNIT_CHARS: usize = 27;

/// Take what the budget allows of `units`, given the best hits ranked as
/// they were scored (`best`: [`Best::finish`]); `every` scores every
/// unit again, listed, for the rare walk that runs out of them.
pub fn choose(
    units: &dyn Units,
    best: Ranking,
    terms: &bm25::QueryTerms,
    window: &[Message],
    skip_id: Option<&str>,
    options: &Options,
    every: impl FnOnce() -> anyhow::Result<Hits>,
) -> anyhow::Result<Recall> {
    choose_from(units, best, terms, window, skip_id, options, || {
        every().map(Cow::Owned)
    })
}

/// [`choose`] given the BM25 score of every unit that has one (`hits`).
pub fn choose_listed(
    units: &dyn Units,
    hits: &Hits,
    terms: &bm25::QueryTerms,
    window: &[Message],
    skip_id: Option<&str>,
    options: &Options,
) -> anyhow::Result<Recall> {
    choose_first(units, hits, terms, window, skip_id, options, FIRST_HITS)
}

/// [`choose_listed`], the walk given the `first` best hits first.
fn choose_first(
    units: &dyn Units,
    hits: &Hits,
    terms: &bm25::QueryTerms,
    window: &[Message],
    skip_id: Option<&str>,
    options: &Options,
    first: usize,
) -> anyhow::Result<Recall> {
    let mut best = Best::with_first(units, terms, options, first);
    score::Sink::take(&mut best, &hits.list)?;
    let best = best.finish()?;
    choose_from(units, best, terms, window, skip_id, options, || {
        Ok(Cow::Borrowed(hits))
    })
}

fn choose_from<'h>(
    units: &dyn Units,
    best: Ranking,
    terms: &bm25::QueryTerms,
    window: &[Message],
    skip_id: Option<&str>,
    options: &Options,
    every: impl FnOnce() -> anyhow::Result<Cow<'h, Hits>>,
) -> anyhow::Result<Recall> {
    let every_hit: Cow<Hits>;
    // The walk nearly always ends among the best few hundred hits: it
    // is given those first, and goes on over every other hit only if it
    // runs out of them with room left that one of those could take (the
    // same walk: they are the head of the whole order).
    let walked: Vec<usize> = best.order.iter().map(Ranked::place).collect();
    let worst = best
        .order
        .iter()
        .map(Ranked::score)
        .fold(f64::INFINITY, f64::min);
    let mut chooser = Chooser::new(units, &best.kept, window, skip_id, options);
    let ran_out = chooser.run(best.order)?;
    if best.limited && ran_out && !chooser.nothing_else_fits(&walked, worst, best.chars)? {
        every_hit = every()?;
        chooser.go_on(&every_hit.list, &walked, terms)?;
    }
    Ok(Recall {
        units: in_passages(chooser.chosen),
        considered: chooser.considered,
        terms: terms.terms.clone(),
        searched: units.len(),
        indexed_days: 0,
        scanned_days: 0,
    })
}

/// What the walk is given first ([`Best::finish`]).
pub struct Ranking {
    /// The best hits with their scores, in no order.
    order: Vec<Ranked>,
    /// The hits of `order` and every hit within `recall.neighbours`
    /// places of one (what the walk reads of a passage's units), by
    /// place.
    kept: Vec<score::Hit>,
    /// Whether any hit was left out of `order`.
    limited: bool,
    /// How many hits of each size were handed in, `order`'s too.
    chars: CharCounts,
}

/// How many hits take each number of characters in the context (those
/// of [`CharCounts::TOP`] or more counted together): whether a hit left
/// out of the walk's order could still fit the room it left.
pub struct CharCounts(Vec<u32>);

impl CharCounts {
    const TOP: usize = 4096;

    fn new() -> Self {
        Self(vec![0; Self::TOP + 1])
    }

    fn bucket(chars: usize) -> usize {
        chars.min(Self::TOP)
    }

    fn add(&mut self, chars: usize) {
        self.0[Self::bucket(chars)] += 1;
    }

    fn remove(&mut self, chars: usize) {
        let n = &mut self.0[Self::bucket(chars)];
        *n = n.saturating_sub(1);
    }

    /// Whether a hit counted may take `room` characters or fewer.
    fn any_within(&self, room: usize) -> bool {
        self.0[..=Self::bucket(room)].iter().any(|&n| n > 0)
    }
}

/// The characters a hit takes in the context: as scored, else as read
/// (a unit in memory); 0 (fits any room) where neither tells.
fn hit_chars(units: &dyn Units, hit: &score::Hit) -> usize {
    match hit.chars {
        score::NO_CHARS => units.peek(hit.place as usize).map_or(0, unit_chars),
        n => n as usize,
    }
}

/// The hits of one query ranked as they are scored ([`score::Sink`]):
/// each one's score ([`hit_score`], and the raise for the dates the
/// query names) once the hit after it is in, the best [`FIRST_HITS`]
/// kept in a buffer of twice as many cut back to the best when full, a
/// hit no better than the last cut's worst left out; and of the rest
/// only the hits beside one of them. Not the whole list of hits (a
/// million messages can have hundreds of thousands).
pub struct Best<'a> {
    units: &'a dyn Units,
    terms: &'a bm25::QueryTerms,
    options: &'a Options,
    first: usize,
    room: usize,
    n_messages: usize,
    dated: bool,
    bounded: bool,
    top_prior: f64,
    order: Vec<Ranked>,
    worst: Option<Ranked>,
    /// A hit whose bound is under this is left out unscored: the last
    /// cut's worst score (-∞ before a cut, or without a bound).
    skip_below: f64,
    /// The hit before the one not ranked yet, and it (ranked once the
    /// hit after it is in: its neighbour's share).
    before: Option<score::Hit>,
    pending: Option<score::Hit>,
    /// The `recall.neighbours` hits before the pending one.
    recent: Vec<score::Hit>,
    kept: Vec<score::Hit>,
    /// The hits before this place are kept (as they are after one of
    /// `order`).
    keep_to: u64,
    /// Hits handed in.
    total: usize,
    chars: CharCounts,
}

impl<'a> Best<'a> {
    pub fn new(units: &'a dyn Units, terms: &'a bm25::QueryTerms, options: &'a Options) -> Self {
        Self::with_first(units, terms, options, FIRST_HITS)
    }

    fn with_first(
        units: &'a dyn Units,
        terms: &'a bm25::QueryTerms,
        options: &'a Options,
        first: usize,
    ) -> Self {
        let dated = !terms.dates.is_empty();
        // The most a hit's score can be: its own, both hits beside it in
        // the list counted as neighbours (whether they are beside it in
        // time or not), the recency prior at its highest. A hit whose
        // bound is under the last cut's worst score is left out without
        // being scored (the scores are positive, and float sums and
        // products round monotonically: the bound is never under the
        // score). Not with the days a query names (their raise) or a
        // prior that is not a raise.
        let w = options.recency_weight;
        Self {
            units,
            terms,
            options,
            first,
            room: first.saturating_mul(2),
            n_messages: units.messages(),
            dated,
            bounded: !dated && w.is_finite() && w >= 0.0,
            top_prior: 1.0 + w,
            order: Vec::new(),
            worst: None,
            skip_below: f64::NEG_INFINITY,
            before: None,
            pending: None,
            recent: Vec::with_capacity(options.neighbours * 2),
            kept: Vec::new(),
            keep_to: 0,
            total: 0,
            chars: CharCounts::new(),
        }
    }

    /// The hits ranked, once every hit is in.
    pub fn finish(mut self) -> anyhow::Result<Ranking> {
        if let Some(hit) = self.pending.take() {
            let (before, recent) = (self.before, std::mem::take(&mut self.recent));
            self.consider(before.as_ref(), &hit, None, [&recent, &[], &[]], &[])?;
        }
        let first = self.first;
        if self.order.len() > first {
            self.order.select_nth_unstable(first - 1);
            self.order.truncate(first);
        }
        self.compact();
        Ok(Ranking {
            order: self.order,
            kept: self.kept,
            limited: self.total > first,
            chars: self.chars,
        })
    }

    /// `hit` (between `before` and `after`, the hits beside it) scored
    /// and put among the best, unless it is not one of them; if it is,
    /// the hits within reach of it kept: of `back` (the hits before it,
    /// in order) and `ahead` (those after it handed in with it), and
    /// those after it still to come.
    #[inline(never)]
    fn consider(
        &mut self,
        before: Option<&score::Hit>,
        hit: &score::Hit,
        after: Option<&score::Hit>,
        back: [&[score::Hit]; 3],
        ahead: &[score::Hit],
    ) -> anyhow::Result<()> {
        let i = hit.place as usize;
        let mut s = neighbourly(self.n_messages, before, hit, after, self.options);
        if self.dated && i < self.n_messages {
            s *= date_factor(&self.terms.dates, self.units.day(i)?);
        }
        let ranked = Ranked::new(s, hit.place);
        if self.worst.is_some_and(|w| ranked > w) {
            return Ok(());
        }
        let neighbours = self.options.neighbours as u64;
        let place = u64::from(hit.place);
        if self.order.len() == self.room {
            let first = self.first;
            self.order.select_nth_unstable(first - 1);
            self.order.truncate(first);
            let worst = self.order[first - 1];
            self.worst = Some(worst);
            if self.bounded {
                self.skip_below = worst.score();
            }
            self.compact();
            if ranked > worst {
                return Ok(());
            }
        }
        self.order.push(ranked);
        for h in back.into_iter().flatten() {
            if u64::from(h.place) + neighbours >= place {
                self.keep(*h);
            }
        }
        self.keep(*hit);
        for h in ahead {
            if u64::from(h.place) > place + neighbours {
                break;
            }
            self.keep(*h);
        }
        self.keep_to = place + neighbours + 1;
        Ok(())
    }

    /// `hit` kept, if it is not yet (hits are kept by place).
    #[inline]
    fn keep(&mut self, hit: score::Hit) {
        if self.kept.last().is_none_or(|h| h.place < hit.place) {
            self.kept.push(hit);
        }
    }

    /// Only the kept hits within `recall.neighbours` places of one of
    /// `order` still kept. (A hit of `order` to come still has the hits
    /// before it kept if they were: any kept after them is within reach
    /// of one of `order`, and so are they.)
    fn compact(&mut self) {
        let mut places: Vec<u64> = self.order.iter().map(|r| r.place() as u64).collect();
        places.sort_unstable();
        let neighbours = self.options.neighbours as u64;
        let mut j = 0;
        self.kept.retain(|h| {
            let place = u64::from(h.place);
            while j < places.len() && places[j] + neighbours < place {
                j += 1;
            }
            j < places.len() && places[j] <= place + neighbours
        });
    }
}

impl score::Sink for Best<'_> {
    /// Each hit but the last ranked (the hits beside it known); only a
    /// hit whose bound is not under the last cut's worst is scored.
    fn take(&mut self, hits: &[score::Hit]) -> anyhow::Result<()> {
        let Some(last) = hits.last() else {
            return Ok(());
        };
        self.total += hits.len();
        for h in hits {
            self.chars.add(hit_chars(self.units, h));
        }
        let neighbours = self.options.neighbours;
        let recent = std::mem::take(&mut self.recent);
        let pending = self.pending;
        if let Some(p) = &pending {
            let before = self.before;
            self.consider(before.as_ref(), p, hits.first(), [&recent, &[], &[]], hits)?;
        }
        // Those after a hit of the order ranked before.
        for h in hits {
            if u64::from(h.place) >= self.keep_to {
                break;
            }
            self.keep(*h);
        }
        let share = |h: Option<&score::Hit>| NEIGHBOUR_SHARE * h.map_or(0.0, |h| h.raw);
        for k in 0..hits.len() - 1 {
            let before = match k {
                0 => pending.as_ref(),
                _ => Some(&hits[k - 1]),
            };
            let bound = (hits[k].raw + share(before) + share(Some(&hits[k + 1]))) * self.top_prior;
            if bound < self.skip_below {
                continue;
            }
            let back = [
                &recent[..],
                pending.as_slice(),
                &hits[k.saturating_sub(neighbours)..k],
            ];
            self.consider(before, &hits[k], Some(&hits[k + 1]), back, &hits[k + 1..])?;
        }
        // The `neighbours` hits before the last.
        let mut recent = recent;
        if hits.len() > neighbours {
            recent.clear();
            recent.extend_from_slice(&hits[hits.len() - 1 - neighbours..hits.len() - 1]);
        } else {
            recent.extend(pending);
            recent.extend_from_slice(&hits[..hits.len() - 1]);
            let extra = recent.len().saturating_sub(neighbours);
            recent.drain(..extra);
        }
        self.recent = recent;
        self.before = if hits.len() >= 2 {
            Some(hits[hits.len() - 2])
        } else {
            pending
        };
        self.pending = Some(*last);
        Ok(())
    }
}

/// The score of hit `k` of `hits` (by place) ([`hit_score`]), raised for
/// the dates the query names: what recall and ranked search rank by.
#[inline]
pub(super) fn dated_hit_score(
    units: &dyn Units,
    n_messages: usize,
    hits: &[score::Hit],
    k: usize,
    terms: &bm25::QueryTerms,
    options: &Options,
) -> anyhow::Result<f64> {
    let mut s = hit_score(n_messages, hits, k, options);
    let i = hits[k].place as usize;
    if !terms.dates.is_empty() && i < n_messages {
        s *= date_factor(&terms.dates, units.day(i)?);
    }
    Ok(s)
}

/// The score of hit `k` (at place `hits[k].place`) but for the dates
/// the query names; its neighbours, if hits, are the hits beside it.
#[inline]
fn hit_score(n_messages: usize, hits: &[score::Hit], k: usize, options: &Options) -> f64 {
    let before = k.checked_sub(1).and_then(|k| hits.get(k));
    neighbourly(n_messages, before, &hits[k], hits.get(k + 1), options)
}

/// [`hit_score`] of `hit`, given the hits beside it in the list (its
/// neighbours if they are at the places beside it).
#[inline]
fn neighbourly(
    n_messages: usize,
    before: Option<&score::Hit>,
    hit: &score::Hit,
    after: Option<&score::Hit>,
    options: &Options,
) -> f64 {
    let i = hit.place as usize;
    let raw_at = |place: usize, h: Option<&score::Hit>| -> f64 {
        h.filter(|h| h.place as usize == place)
            .map_or(0.0, |h| h.raw)
    };
    let mut s = hit.raw;
    if i < n_messages {
        if i > 0 {
            s += NEIGHBOUR_SHARE * raw_at(i - 1, before);
        }
        if i + 1 < n_messages {
            s += NEIGHBOUR_SHARE * raw_at(i + 1, after);
        }
        let recency = (i + 1) as f64 / n_messages as f64;
        s *= 1.0 + options.recency_weight * recency;
    }
    s
}

/// A hit in the walk's order: best first ([`f64::total_cmp`] of the
/// scores, descending), of two equal the newer (the later place); as
/// integers, so the walk sorts and selects without
/// looking anything up, in 12 bytes a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ranked {
    /// The score's bits ordered as `total_cmp` orders them, inverted,
    /// in two halves.
    high: u32,
    low: u32,
    /// The hit's place, inverted.
    place: u32,
}

impl Ranked {
    fn new(score: f64, place: u32) -> Self {
        let bits = score.to_bits();
        let ordered = !if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        };
        Self {
            high: (ordered >> 32) as u32,
            low: ordered as u32,
            place: !place,
        }
    }

    fn place(&self) -> usize {
        !self.place as usize
    }

    fn score(&self) -> f64 {
        let ordered = !(u64::from(self.high) << 32 | u64::from(self.low));
        f64::from_bits(if ordered >> 63 == 1 {
            ordered ^ (1 << 63)
        } else {
            !ordered
        })
    }
}

/// The walk over the hits, best first, and what it has taken so far.
struct Chooser<'a> {
    units: &'a dyn Units,
    /// The hits of the walk's order and those beside them, by place.
    hits: &'a [score::Hit],
    window: &'a [Message],
    skip_id: Option<&'a str>,
    options: &'a Options,
    /// The places of the units taken, each with its number in `chosen`.
    taken: HashMap<usize, usize>,
    chosen: Vec<Recalled>,
    considered: Vec<Considered>,
    /// Characters and passages spent.
    used: usize,
    passages: usize,
}

impl<'a> Chooser<'a> {
    fn new(
        units: &'a dyn Units,
        hits: &'a [score::Hit],
        window: &'a [Message],
        skip_id: Option<&'a str>,
        options: &'a Options,
    ) -> Self {
        Chooser {
            units,
            hits,
            window,
            skip_id,
            options,
            taken: HashMap::new(),
            chosen: Vec::new(),
            considered: Vec::new(),
            used: 0,
            passages: 0,
        }
    }

    /// The hit at `place`, if it is one (and kept).
    fn hit(&self, place: usize) -> Option<&score::Hit> {
        self.hits
            .binary_search_by_key(&(place as u32), |h| h.place)
            .ok()
            .map(|k| &self.hits[k])
    }

    /// The message being answered, once read.
    fn is_skipped(&self, unit: &Unit) -> bool {
        match &unit.item {
            Item::Message(m) => self.skip_id.is_some() && m.msg_id.as_deref() == self.skip_id,
            Item::Note { .. } => false,
        }
    }

    /// A unit still in a segment is of a day the window does not touch
    /// (see `recall`); the message being answered is looked for in it
    /// once it is read.
    fn excluded(&self, i: usize) -> bool {
        match self.units.peek(i).map(|u| &u.item) {
            Some(Item::Message(m)) => {
                (self.skip_id.is_some() && m.msg_id.as_deref() == self.skip_id)
                    || self.window.iter().any(|w| same_message(w, m))
            }
            Some(Item::Note { .. }) | None => false,
        }
    }

    /// The characters the hit at `i` takes, where known without reading
    /// it.
    fn chars_of(&self, i: usize) -> Option<usize> {
        match self.hit(i).map_or(score::NO_CHARS, |h| h.chars) {
            score::NO_CHARS => self.units.peek(i).map(unit_chars),
            n => Some(n as usize),
        }
    }

    /// Every hit of `order` in turn, best first, until nothing after it
    /// can be taken or listed. Sorted a batch at a time: the loop mostly
    /// stops long before the last. Whether it ran out of `order` (went
    /// past its last hit, or dropped the rest) rather than stopped.
    fn run(&mut self, mut order: Vec<Ranked>) -> anyhow::Result<bool> {
        let mut sorted = 0;
        let mut n = 0;
        while n < order.len() {
            if n == sorted {
                if self.listed_enough() {
                    self.prune(&mut order, sorted);
                    if sorted == order.len() {
                        return Ok(true);
                    }
                }
                sorted = self.sort_batch(&mut order, sorted);
            }
            let (i, s) = (order[n].place(), order[n].score());
            // Nothing after this can be taken or listed.
            let full = self.passages >= self.options.max_passages
                || self.used + MIN_UNIT_CHARS > self.options.max_chars;
            if full && self.listed_enough() {
                return Ok(false);
            }
            let verdict = self.verdict(i, s)?;
            if verdict == Verdict::Taken || !self.listed_enough() {
                let unit = self.units.unit(i)?;
                self.considered.push(Considered {
                    ts: unit.item.ts(),
                    source: unit.source.clone(),
                    score: s,
                    verdict,
                    text: unit.item.text().chars().take(80).collect(),
                });
            }
            if verdict == Verdict::BelowFloor && self.listed_enough() {
                return Ok(false);
            }
            n += 1;
        }
        Ok(true)
    }

    /// After a walk that ran out of the hits it was given (`walked`, the
    /// worst scored `worst`; of all the hits handed in, counted by size
    /// in `chars`): whether no other hit could change what it took.
    /// Every other hit scores no more than `worst`: none is taken if
    /// that is under the floor, or the passages or the room are spent. A
    /// hit not taken that does not fit the room left never will (the
    /// room only shrinks, and taking it as a neighbour needs that room
    /// too); a hit taken as a neighbour may still grow its passage.
    fn nothing_else_fits(
        &self,
        walked: &[usize],
        worst: f64,
        mut chars: CharCounts,
    ) -> anyhow::Result<bool> {
        if !self.listed_enough() {
            return Ok(false);
        }
        let options = self.options;
        if worst < options.min_score
            || self.passages >= options.max_passages
            || self.used + MIN_UNIT_CHARS > options.max_chars
        {
            return Ok(true);
        }
        let room = self.options.max_chars.saturating_sub(self.used);
        let walked_set: HashSet<usize> = walked.iter().copied().collect();
        for &t in self.taken.keys() {
            // Taken as a neighbour, a hit still to come grows its
            // passage by what is beside it, if that fits.
            if !walked_set.contains(&t) && self.hit(t).is_some() {
                let (new, cost) = self.not_taken_around(t)?;
                if !new.is_empty() && self.used + cost <= self.options.max_chars {
                    return Ok(false);
                }
            }
        }
        for &w in walked {
            chars.remove(self.hit(w).map_or(0, |h| hit_chars(self.units, h)));
        }
        Ok(!chars.any_within(room))
    }

    /// The units within `recall.neighbours` places of `i` (the unit
    /// itself, if not a message) not taken yet and not left out, and the
    /// characters they take.
    fn not_taken_around(&self, i: usize) -> anyhow::Result<(Vec<(usize, Unit)>, usize)> {
        let (n_messages, neighbours) = (self.units.messages(), self.options.neighbours);
        let span = if i < n_messages {
            i.saturating_sub(neighbours)..(i + neighbours + 1).min(n_messages)
        } else {
            i..i + 1
        };
        let mut new: Vec<(usize, Unit)> = Vec::new();
        for j in span {
            if !self.taken.contains_key(&j) && !self.excluded(j) {
                let unit = self.units.unit(j)?;
                if !self.is_skipped(&unit) {
                    new.push((j, unit));
                }
            }
        }
        let cost = self.cost(&new);
        Ok((new, cost))
    }

    /// The characters `new` (units not taken, by place) add to the
    /// recalled section once taken: each goes on the passage of the unit
    /// just before it where that is taken or among them
    /// ([`passage_chars`]), and a taken unit just after one of them that
    /// started a passage of its own goes on theirs, its stamp line no
    /// longer written.
    fn cost(&self, new: &[(usize, Unit)]) -> usize {
        let mut before: Option<(usize, &Unit)> = None;
        let (mut cost, mut saved) = (0, 0);
        for (k, (j, unit)) in new.iter().enumerate() {
            let previous = j.checked_sub(1).and_then(|p| match before {
                Some((b, u)) if b == p => Some(u),
                _ => self.taken_unit(p),
            });
            cost += passage_chars(previous, unit);
            let next_is_new = new.get(k + 1).is_some_and(|(n, _)| *n == j + 1);
            if let Some(after) = self.taken_unit(j + 1).filter(|_| !next_is_new) {
                // It started a passage: the unit before it was not taken.
                saved += passage_chars(None, after) - passage_chars(Some(unit), after);
            }
            before = Some((*j, unit));
        }
        // A short turn that joins two passages saves more than it takes;
        // counted as taking nothing (the section only ever grows here).
        cost.saturating_sub(saved)
    }

    /// The unit taken at `place`, if one is.
    fn taken_unit(&self, place: usize) -> Option<&Unit> {
        self.taken.get(&place).map(|&k| &self.chosen[k].unit)
    }

    /// The walk gone on over `every` hit but the `walked` ones, after
    /// running out of those: what it took stays taken (they are the
    /// head of the whole order, so this is the walk of every hit). With
    /// nothing more to list, a hit that cannot change the outcome (see
    /// [`Chooser::prune`]) is left out before it is scored.
    fn go_on(
        &mut self,
        every: &'a [score::Hit],
        walked: &[usize],
        terms: &bm25::QueryTerms,
    ) -> anyhow::Result<()> {
        self.hits = every;
        let walked: HashSet<usize> = walked.iter().copied().collect();
        let prune = self.listed_enough();
        let room = self.options.max_chars.saturating_sub(self.used);
        let may_grow = self.options.neighbours > 0 && room >= MIN_UNIT_CHARS;
        let n_messages = self.units.messages();
        let mut rest = Vec::new();
        for (k, h) in every.iter().enumerate() {
            let place = h.place as usize;
            if walked.contains(&place) {
                continue;
            }
            let taken = self.taken.contains_key(&place);
            if prune
                && !(may_grow && taken)
                && hit_chars(self.units, h)
                    .max(MIN_UNIT_CHARS)
                    .saturating_sub(self.join_slack())
                    > room
            {
                continue;
            }
            let s = dated_hit_score(self.units, n_messages, every, k, terms, self.options)?;
            rest.push(Ranked::new(s, h.place));
        }
        self.run(rest)?;
        Ok(())
    }

    /// How much less than its size alone a hit can take once it joins
    /// passages: taken as a neighbour, it goes on the passage before it
    /// (no stamp of its own), gives back the stamp of the taken unit
    /// after it, and the short turns taken with it may each give back a
    /// stamp more than they take. A hit dropped from the walk must not
    /// fit even so: taken later as a neighbour, it would grow its
    /// passage in the walk over every hit when its turn came, and the
    /// two walks would differ.
    fn join_slack(&self) -> usize {
        (2 + 2 * self.options.neighbours) * STAMP_LINE_MAX
    }

    /// Whether no more hits not taken are listed: enough are, or none
    /// are asked for (not `--explain`: `ask` shows none, and reading each
    /// for its text would cost a stored block inflated).
    fn listed_enough(&self) -> bool {
        !self.options.explain || self.considered.len() >= MAX_EXPLAINED
    }

    /// Nothing more is listed: only a hit over the floor that fits the
    /// room left (which only shrinks: a hit that does not fit now is
    /// never taken, alone or as a neighbour), or that may grow its
    /// passage by a neighbour (taken as one already), can change the
    /// outcome; the rest of `order` after `sorted` is dropped unsorted.
    fn prune(&self, order: &mut Vec<Ranked>, sorted: usize) {
        let room = self.options.max_chars.saturating_sub(self.used);
        let may_grow = self.options.neighbours > 0 && room >= MIN_UNIT_CHARS;
        let mut kept = sorted;
        for r in sorted..order.len() {
            let place = order[r].place();
            if order[r].score() >= self.options.min_score
                && ((may_grow && self.taken.contains_key(&place))
                    || self
                        .chars_of(place)
                        .unwrap_or(MIN_UNIT_CHARS)
                        .saturating_sub(self.join_slack())
                        <= room)
            {
                order[kept] = order[r];
                kept += 1;
            }
        }
        order.truncate(kept);
    }

    /// The next batch of `order` after `sorted` put best first; how many
    /// are sorted now.
    fn sort_batch(&self, order: &mut [Ranked], sorted: usize) -> usize {
        let rest = &mut order[sorted..];
        let batch = (sorted.max(64)).min(rest.len());
        if batch < rest.len() {
            rest.select_nth_unstable(batch - 1);
        }
        rest[..batch].sort_unstable();
        sorted + batch
    }

    /// Whether the hit at place `i` (scored `s`) is taken, and if not why.
    fn verdict(&mut self, i: usize, s: f64) -> anyhow::Result<Verdict> {
        let options = self.options;
        Ok(if s < options.min_score {
            Verdict::BelowFloor
        } else if self.excluded(i) {
            Verdict::InWindow
        } else if self.passages >= options.max_passages {
            Verdict::OverPassages
        } else if !self.taken.contains_key(&i)
            && self.used + self.chars_of(i).unwrap_or(MIN_UNIT_CHARS) > options.max_chars
        {
            // Not even the hit alone fits (known without reading it).
            Verdict::OverChars
        } else {
            self.take(i, s)?
        })
    }

    /// The hit at place `i` with its neighbours not taken yet, if they
    /// fit: a new passage, or a passage grown by it.
    fn take(&mut self, i: usize, s: f64) -> anyhow::Result<Verdict> {
        let max_chars = self.options.max_chars;
        let (new, cost) = self.not_taken_around(i)?;
        Ok(match new.iter().find(|(j, _)| *j == i) {
            None if self.taken.contains_key(&i) && !new.is_empty() => {
                // The hit came in as a neighbour of a better one: its
                // passage grows by the hit's other neighbour (not
                // counted as a passage of its own). LoCoMo dev: 84.6%
                // → 86.2% (85.8% when it counts against
                // `recall.maxPassages`; 87.1% instead of 88.0% at the
                // end when only a hit with words of its own, not only
                // its previous turn's, grows).
                if self.used + cost <= max_chars {
                    self.used += cost;
                    self.push(new, i, s);
                    Verdict::Taken
                } else {
                    Verdict::OverChars
                }
            }
            None if self.taken.contains_key(&i) => Verdict::Duplicate,
            None if self.is_skipped(&self.units.unit(i)?) => Verdict::InWindow,
            None => Verdict::Duplicate,
            Some((_, hit)) if self.used + cost > max_chars => {
                // The hit alone may still fit.
                let alone = self.cost(std::slice::from_ref(&(i, hit.clone())));
                if self.used + alone <= max_chars {
                    self.used += alone;
                    self.passages += 1;
                    let hit = hit.clone();
                    self.push(vec![(i, hit)], i, s);
                    Verdict::Taken
                } else {
                    Verdict::OverChars
                }
            }
            Some(_) => {
                self.used += cost;
                self.passages += 1;
                self.push(new, i, s);
                Verdict::Taken
            }
        })
    }

    /// `units` taken for the hit at place `hit`, scored `score`.
    fn push(&mut self, units: Vec<(usize, Unit)>, hit: usize, score: f64) {
        for (j, unit) in units {
            self.taken.insert(j, self.chosen.len());
            let own_score = self.hit(j).map_or(0.0, |h| h.raw);
            self.chosen.push(recalled(unit, own_score, j, hit, score));
        }
    }
}

fn same_message(a: &Message, b: &Message) -> bool {
    a.ts == b.ts && a.role == b.role && a.text == b.text
}

/// How much a unit written on `day` is raised for the dates a query names.
fn date_factor(dates: &[when::Span], day: chrono::NaiveDate) -> f64 {
    if dates
        .iter()
        .any(|d| d.day && (d.contains(day) || d.is_told_after(day)))
    {
        NAMED_DAY
    } else if dates.iter().any(|d| !d.day && d.contains(day)) {
        NAMED_MONTH
    } else {
        1.0
    }
}

/// `chosen` in time order, a passage at a time: the units stored one
/// after another that [`super::continues`] joins stay together, in the
/// order stored, placed by their first unit's time (a summary after the
/// messages of its time). So the context writes each passage under one
/// stamp, as the walk counted it, even where times are equal or out of
/// order, or a summary's time falls inside a passage.
fn in_passages(mut chosen: Vec<Recalled>) -> Vec<Recalled> {
    chosen.sort_by_key(|r| r.place);
    let mut passages: Vec<Vec<Recalled>> = Vec::new();
    for r in chosen {
        match passages.last_mut() {
            Some(passage)
                if passage.last().is_some_and(|b| {
                    b.place + 1 == r.place && super::continues(&b.unit, &r.unit)
                }) =>
            {
                passage.push(r)
            }
            _ => passages.push(vec![r]),
        }
    }
    passages.sort_by(|a, b| {
        a[0].unit
            .item
            .ts()
            .cmp(&b[0].unit.item.ts())
            .then_with(|| is_note(&a[0]).cmp(&is_note(&b[0])))
            .then_with(|| a[0].place.cmp(&b[0].place))
    });
    passages.into_iter().flatten().collect()
}

fn is_note(r: &Recalled) -> bool {
    matches!(r.unit.item, Item::Note { .. })
}

fn recalled(unit: Unit, own_score: f64, j: usize, hit: usize, score: f64) -> Recalled {
    Recalled {
        unit,
        score,
        own_score,
        hit: j == hit,
        place: j,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::message::Role;
    use chrono::TimeZone as _;

    /// The query's terms and each unit's counts of them, as recall counts.
    fn counted(
        corpus: &super::super::Corpus,
        query: &str,
    ) -> (bm25::QueryTerms, Vec<bm25::Counts>) {
        let tokenizer = super::super::tokenize::Tokenizer::new();
        let terms = bm25::QueryTerms::new(&tokenizer, query);
        let counts = corpus
            .units
            .iter()
            .map(|u| {
                let mut c = bm25::count(&tokenizer, &terms, u.item.text());
                c.tf.sort_unstable();
                c
            })
            .collect();
        (terms, counts)
    }

    /// The best hits ranked as they come, handed in a few at a time,
    /// are exactly the best `first` of every hit ranked (the bound that
    /// leaves hits out unscored, the cuts), with their scores; and the
    /// hits kept are exactly those of the whole list within
    /// `recall.neighbours` places of one of them.
    #[test]
    fn the_best_hits_ranked_as_they_come_are_the_head_of_every_hit_ranked() {
        let words = ["puppy", "garden", "concert", "weather", "sister"];
        let units: Vec<Unit> = (0..3000)
            .map(|i| Unit {
                item: Item::Message(Message::new(
                    Role::User,
                    format!(
                        "note {i} {} {}",
                        words[(i * 7 + 3) % 5],
                        "filler ".repeat(i % 17)
                    ),
                    chrono::Utc
                        .timestamp_opt(1_700_000_000 + i as i64 * 600, 0)
                        .unwrap(),
                )),
                source: super::super::Source::Log,
            })
            .collect();
        let corpus = super::super::Corpus {
            messages: units.len(),
            units,
        };
        for query in [
            "the puppy at the concert",
            "the puppy at the concert on 2023-11-20",
        ] {
            let (terms, counts) = counted(&corpus, query);
            let hits: Vec<score::Hit> = bm25::scores(&terms, &counts, corpus.messages)
                .into_iter()
                .enumerate()
                .filter(|(_, raw)| *raw > 0.0)
                .map(|(i, raw)| score::Hit {
                    place: i as u32,
                    chars: i as u32,
                    raw,
                })
                .collect();
            assert!(hits.len() > 1000);
            assert!(hits.windows(2).any(|w| w[1].place > w[0].place + 2));
            for recency_weight in [0.0, 0.05, 1.0, -0.5] {
                for neighbours in [0, 1, 2, 5] {
                    let options = Options {
                        recency_weight,
                        neighbours,
                        ..Options::default()
                    };
                    let mut all = every_ranked(&corpus, &hits, &terms, &options).unwrap();
                    all.sort_unstable();
                    for first in [1, 7, 64, 512, 5000] {
                        for chunk in [1, 37, hits.len()] {
                            let mut best = Best::with_first(&corpus, &terms, &options, first);
                            for some in hits.chunks(chunk) {
                                score::Sink::take(&mut best, some).unwrap();
                            }
                            let got = best.finish().unwrap();
                            let mut order = got.order.clone();
                            order.sort_unstable();
                            let head = &all[..first.min(all.len())];
                            let case = format!("{query}, {recency_weight}, {neighbours}, {first}");
                            assert_eq!(order, head, "{case}");
                            assert_eq!(got.limited, first < hits.len(), "{case}");
                            let beside: Vec<(u32, u32, u64)> = hits
                                .iter()
                                .filter(|h| {
                                    head.iter()
                                        .any(|r| r.place().abs_diff(h.place as usize) <= neighbours)
                                })
                                .map(|h| (h.place, h.chars, h.raw.to_bits()))
                                .collect();
                            let kept: Vec<(u32, u32, u64)> = got
                                .kept
                                .iter()
                                .map(|h| (h.place, h.chars, h.raw.to_bits()))
                                .collect();
                            assert_eq!(kept, beside, "{case}");
                        }
                    }
                }
            }
        }
    }

    /// Messages of one person, ten minutes apart, in the log.
    fn user_corpus(texts: &[String]) -> super::super::Corpus {
        user_corpus_at(texts, |i| {
            chrono::Utc
                .timestamp_opt(1_700_000_000 + i as i64 * 600, 0)
                .unwrap()
        })
    }

    /// Messages of one person in the log, the `i`th sent at `at(i)`.
    fn user_corpus_at(
        texts: &[String],
        at: impl Fn(usize) -> chrono::DateTime<chrono::Utc>,
    ) -> super::super::Corpus {
        let units: Vec<Unit> = texts
            .iter()
            .enumerate()
            .map(|(i, text)| Unit {
                item: Item::Message(Message::new(Role::User, text.clone(), at(i))),
                source: super::super::Source::Log,
            })
            .collect();
        super::super::Corpus {
            messages: units.len(),
            units,
        }
    }

    /// Every unit of `corpus` with a score for `query`, as the scorer
    /// lists them: its characters known (as an indexed day's are) or not.
    fn listed_hits(
        corpus: &super::super::Corpus,
        query: &str,
        chars_known: bool,
    ) -> (bm25::QueryTerms, Hits) {
        let (terms, counts) = counted(corpus, query);
        let mut hits = Hits::default();
        for (i, raw) in bm25::scores(&terms, &counts, corpus.messages)
            .into_iter()
            .enumerate()
        {
            if raw > 0.0 {
                hits.list.push(score::Hit {
                    place: i as u32,
                    chars: if chars_known {
                        unit_chars(&corpus.units[i]) as u32
                    } else {
                        score::NO_CHARS
                    },
                    raw,
                });
            }
        }
        (terms, hits)
    }

    /// Every hit of `hits` (by place) with its score, in no order.
    fn every_ranked(
        units: &dyn Units,
        hits: &[score::Hit],
        terms: &bm25::QueryTerms,
        options: &Options,
    ) -> anyhow::Result<Vec<Ranked>> {
        let n_messages = units.messages();
        (0..hits.len())
            .map(|k| {
                let s = dated_hit_score(units, n_messages, hits, k, terms, options)?;
                Ok(Ranked::new(s, hits[k].place))
            })
            .collect()
    }

    /// The walk given a few hits first chooses as the walk given all:
    /// when the budget stops it early, when it runs past them, when the
    /// floor does.
    #[test]
    fn the_walk_given_the_best_hits_first_chooses_as_given_all() {
        let words = ["puppy", "garden", "concert", "weather", "sister"];
        let units: Vec<Unit> = (0..1500)
            .map(|i| {
                let text = format!(
                    "note {i} {} {} {}",
                    words[i % 5],
                    words[(i * 7 + 3) % 5],
                    "filler ".repeat(i % 13)
                );
                Unit {
                    item: Item::Message(Message::new(
                        if i % 2 == 0 {
                            Role::User
                        } else {
                            Role::Assistant
                        },
                        text,
                        chrono::Utc
                            .timestamp_opt(1_700_000_000 + i as i64 * 600, 0)
                            .unwrap(),
                    )),
                    source: super::super::Source::Log,
                }
            })
            .collect();
        let corpus = super::super::Corpus {
            messages: units.len(),
            units,
        };
        let (terms, hits) = listed_hits(&corpus, "the puppy at the concert on 2023-11-15", false);
        assert!(hits.list.len() > 1000);
        let shown = |r: &Recall| {
            (
                r.units
                    .iter()
                    .map(|u| (u.place, u.score.to_bits()))
                    .collect::<Vec<_>>(),
                r.considered
                    .iter()
                    .map(|c| (c.ts, c.score.to_bits(), c.verdict))
                    .collect::<Vec<_>>(),
            )
        };
        let defaults = Options::default();
        for options in [
            defaults.clone(),
            // Runs past every hit given first.
            Options {
                max_chars: 1_000_000,
                max_passages: 10_000,
                ..defaults.clone()
            },
            Options {
                min_score: 1e9,
                ..defaults.clone()
            },
            Options {
                max_chars: 100,
                ..defaults.clone()
            },
            // Runs out of the hits given first with room left: the rest
            // is walked only where a hit could still fit, or grow a
            // passage taken as its neighbour.
            Options {
                max_chars: 333,
                ..defaults.clone()
            },
            Options {
                max_chars: 1_000,
                max_passages: 10_000,
                ..defaults.clone()
            },
            Options {
                max_chars: 2_500,
                neighbours: 0,
                max_passages: 10_000,
                ..defaults.clone()
            },
            Options {
                max_chars: 2_500,
                neighbours: 2,
                ..defaults.clone()
            },
        ] {
            let explained = Options {
                explain: true,
                ..options.clone()
            };
            let listed =
                choose_first(&corpus, &hits, &terms, &[], None, &explained, usize::MAX).unwrap();
            for options in [options, explained] {
                let all =
                    choose_first(&corpus, &hits, &terms, &[], None, &options, usize::MAX).unwrap();
                // Without `--explain` the walk stops sooner: what it takes
                // is the same.
                assert_eq!(shown(&all).0, shown(&listed).0, "{options:?}");
                for first in [1, 7, 64, 512] {
                    let some =
                        choose_first(&corpus, &hits, &terms, &[], None, &options, first).unwrap();
                    assert_eq!(shown(&some), shown(&all), "{first} first, {options:?}");
                }
            }
        }
    }

    /// Run out of the hits given first with room left that no other hit
    /// fits, the walk still goes on where a hit taken as a neighbour can
    /// grow its passage by a unit that is no hit.
    #[test]
    fn a_walk_that_runs_out_goes_on_for_a_passage_that_can_grow() {
        // The best hit (2) takes its neighbours 1 and 3 (a hit by its
        // previous turn's words); 1, a hit too, grows its passage by 0,
        // which is no hit, when its turn comes.
        let texts: Vec<String> = [
            "ok then".to_owned(),
            format!("zebra {}", "filler ".repeat(20)),
            "zebra zebra zebra".to_owned(),
            "filler ".repeat(20),
        ]
        .into_iter()
        .chain((0..40).map(|i| format!("nothing here, nothing at all {i}")))
        .collect();
        let corpus = user_corpus(&texts);
        let (terms, hits) = listed_hits(&corpus, "zebra", true);
        // The first passage (under one stamp) leaves room for unit 0 (as
        // it goes on before 1, which then needs no stamp), for no hit,
        // and not for unit 4 after 3.
        let u = &corpus.units;
        let passage = passage_chars(None, &u[1])
            + passage_chars(Some(&u[1]), &u[2])
            + passage_chars(Some(&u[2]), &u[3]);
        let before_1 = passage_chars(None, &u[0]) + passage_chars(Some(&u[0]), &u[1])
            - passage_chars(None, &u[1]);
        // (Room under MIN_UNIT_CHARS would stop the walk.)
        let room = MIN_UNIT_CHARS + 3;
        assert!(before_1 <= room && passage_chars(Some(&u[3]), &u[4]) > room);
        let options = Options {
            max_chars: passage + room,
            min_score: 0.0,
            ..Options::default()
        };
        let places = |h: &[score::Hit]| h.iter().map(|h| h.place).collect::<Vec<_>>();
        assert_eq!(places(&hits.list), [1, 2, 3], "{:?}", hits.list);
        assert!(
            hits.list
                .iter()
                .all(|h| h.chars as usize > room || h.place == 2)
        );
        let all = choose_first(&corpus, &hits, &terms, &[], None, &options, usize::MAX).unwrap();
        let first = choose_first(&corpus, &hits, &terms, &[], None, &options, 1).unwrap();
        let taken = |r: &Recall| r.units.iter().map(|u| u.place).collect::<Vec<_>>();
        assert_eq!(taken(&all), [0, 1, 2, 3], "the hit at 1 grows by 0");
        assert_eq!(taken(&first), taken(&all));
    }

    /// A short turn between two passages of one day joins them: it
    /// saves the second's stamp line, more than it takes itself; it is
    /// taken, counted as taking nothing (not as a negative).
    #[test]
    fn a_short_turn_that_joins_two_passages_is_taken() {
        let texts: Vec<String> = (0..7)
            .map(|i| match i {
                3 => "ok".to_owned(),
                _ => format!("a turn of some length, number {i}"),
            })
            .collect();
        let corpus = user_corpus(&texts);
        let u = &corpus.units;
        let joined = passage_chars(None, &u[4]) - passage_chars(Some(&u[3]), &u[4]);
        assert!(passage_chars(Some(&u[2]), &u[3]) < joined);
        let (_, hits) = listed_hits(&corpus, "turn", true);
        let options = Options::default();
        let mut chooser = Chooser::new(&corpus, &hits.list, &[], None, &options);
        assert_eq!(chooser.take(1, 9.0).unwrap(), Verdict::Taken);
        assert_eq!(chooser.take(5, 8.0).unwrap(), Verdict::Taken);
        let used = chooser.used;
        assert_eq!(chooser.take(3, 1.0).unwrap(), Verdict::Taken);
        assert_eq!(chooser.used, used);
        let mut places: Vec<usize> = chooser.chosen.iter().map(|r| r.place).collect();
        places.sort_unstable();
        assert_eq!(places, (0..7).collect::<Vec<_>>());
    }

    /// The places of the units `r` took, in place order.
    fn sorted_places(r: &Recall) -> Vec<usize> {
        let mut p: Vec<usize> = r.units.iter().map(|u| u.place).collect();
        p.sort_unstable();
        p
    }

    /// A small xorshift: the random corpora below are the same every run.
    struct Xorshift(u64);

    impl Xorshift {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// `n` messages a minute or an hour apart (some at the same time when
    /// `equal_times`), of one or two days, zebras in three of four; and
    /// sometimes two daily summaries stamped 23:59:59, inside a day's run.
    fn random_corpus(rng: &mut Xorshift, n: usize, equal_times: bool) -> super::super::Corpus {
        let mut ts = chrono::Utc.with_ymd_and_hms(2026, 3, 1, 23, 0, 0).unwrap();
        let mut units: Vec<Unit> = Vec::new();
        for i in 0..n {
            ts += chrono::Duration::seconds(match rng.below(10) {
                0 if equal_times => 0,
                1 => 3600,
                _ => 60,
            });
            let zebras = rng.below(4) as usize;
            let filler = rng.below(8) as usize;
            let text = match zebras {
                0 => format!("f{i} {}", "x".repeat(filler * 9)),
                k => format!(
                    "{}{}",
                    "zebra ".repeat(k).trim_end(),
                    " filler words".repeat(filler % 5)
                ),
            };
            let role = if rng.below(2) == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            units.push(Unit {
                item: Item::Message(Message::new(role, text, ts)),
                source: super::super::Source::Log,
            });
        }
        let messages = units.len();
        if rng.below(2) == 0 {
            for day in 1..3 {
                units.push(Unit {
                    item: Item::Note {
                        ts: chrono::Utc
                            .with_ymd_and_hms(2026, 3, day, 23, 59, 59)
                            .unwrap(),
                        label: "Daily summary".into(),
                        text: "zebra all day".into(),
                    },
                    source: super::super::Source::Daily(format!("2026-03-0{day}")),
                });
            }
        }
        super::super::Corpus { units, messages }
    }

    /// On random memories (equal times, summaries inside a day's run,
    /// short turns that join passages, 0 to 3 neighbours): what the
    /// context writes is within `recall.maxChars`, and the walk given the
    /// best few hits first takes what the walk over every hit takes.
    #[test]
    fn passages_stay_within_the_budget_and_the_walks_agree_on_random_memories() {
        let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
        for round in 0..300 {
            let n = 20 + rng.below(if round % 2 == 0 { 60 } else { 300 }) as usize;
            let corpus = random_corpus(&mut rng, n, round % 3 != 0);
            let (terms, mut hits) = listed_hits(&corpus, "zebra", rng.below(2) == 0);
            for h in &mut hits.list {
                h.raw *= 1.0 + rng.below(1000) as f64 / 500.0;
            }
            let options = Options {
                max_chars: 40 + rng.below(if round % 2 == 0 { 600 } else { 3000 }) as usize,
                max_passages: 1 + rng.below(8) as usize,
                min_score: 0.0,
                recency_weight: 0.0,
                neighbours: rng.below(4) as usize,
                explain: rng.below(3) == 0,
            };
            let all =
                choose_first(&corpus, &hits, &terms, &[], None, &options, usize::MAX).unwrap();
            assert!(
                super::super::tests::written(&all.units) <= options.max_chars,
                "round {round}: {options:?}"
            );
            for first in [1, 2, 5, 64] {
                let some =
                    choose_first(&corpus, &hits, &terms, &[], None, &options, first).unwrap();
                assert_eq!(
                    sorted_places(&some),
                    sorted_places(&all),
                    "round {round}, first {first}"
                );
            }
        }
    }

    /// A hit too long to fit alone, dropped from the walk given the best
    /// hits first, can still be taken as a neighbour (joining passages,
    /// it takes less); the walk over every hit then grows its passage
    /// when its turn comes. The walks agree only if such a hit is kept.
    #[test]
    fn a_hit_that_fits_only_as_a_neighbour_is_not_dropped_from_the_walk() {
        let texts: Vec<String> = vec![
            "filler zero".into(),
            "filler one".into(),
            "long filler ".repeat(8),
            "yes".into(),
            "zebra".into(),
            format!("zebra {}", "y".repeat(48)),
            "ok".into(),
            "zebra".into(),
            "fine then".into(),
            "zebra stripes".into(),
            "filler ten".into(),
            "filler eleven".into(),
        ];
        // A minute apart, all of one day.
        let corpus = user_corpus_at(&texts, |i| {
            chrono::Utc
                .with_ymd_and_hms(2026, 3, 1, 10, i as u32, 0)
                .unwrap()
        });
        let u = &corpus.units;
        let alone = |i: usize| unit_chars(&u[i]);
        let (terms, _) = counted(&corpus, "zebra");
        let hit = |place: u32, raw: f64| score::Hit {
            place,
            chars: alone(place as usize) as u32,
            raw,
        };
        let hits = Hits {
            list: vec![hit(4, 10.0), hit(5, 1.0), hit(7, 8.0), hit(9, 100.0)],
        };
        // 9's passage (7 to 11), 4 alone, and one character less than 5
        // takes alone.
        let passage = alone(7)
            + (8..12)
                .map(|i| passage_chars(Some(&u[i - 1]), &u[i]))
                .sum::<usize>();
        let options = Options {
            max_chars: passage + alone(4) + alone(5) - 1,
            min_score: 0.0,
            recency_weight: 0.0,
            neighbours: 2,
            ..Options::default()
        };
        let all = choose_first(&corpus, &hits, &terms, &[], None, &options, usize::MAX).unwrap();
        let first = choose_first(&corpus, &hits, &terms, &[], None, &options, 2).unwrap();
        assert_eq!(sorted_places(&first), sorted_places(&all));
    }

    /// A walk that runs out because the rest is under the floor, or at
    /// `recall.maxPassages`, does not score every hit again: nothing
    /// after the worst it was given can be taken.
    #[test]
    fn a_walk_that_ran_out_at_the_floor_or_the_passages_does_not_go_on() {
        let texts: Vec<String> = (0..700)
            .map(|i| match i % 200 {
                0 => format!("the puppy met a zebra {i}"),
                _ => format!("the puppy slept {i}"),
            })
            .collect();
        let corpus = user_corpus(&texts);
        let (terms, hits) = listed_hits(&corpus, "the puppy and the zebra", true);
        let defaults = Options::default();
        for options in [
            defaults.clone(),
            Options {
                min_score: 0.0,
                max_passages: 1,
                ..defaults.clone()
            },
        ] {
            let mut best = Best::with_first(&corpus, &terms, &options, 64);
            score::Sink::take(&mut best, &hits.list).unwrap();
            let ranking = best.finish().unwrap();
            if options.min_score > 0.0 {
                let worst = ranking
                    .order
                    .iter()
                    .map(Ranked::score)
                    .fold(f64::MAX, f64::min);
                assert!(worst < options.min_score, "the floor is among the first");
            }
            let again = std::cell::Cell::new(false);
            let got = choose(&corpus, ranking, &terms, &[], None, &options, || {
                again.set(true);
                Ok(hits.clone())
            })
            .unwrap();
            let all =
                choose_first(&corpus, &hits, &terms, &[], None, &options, usize::MAX).unwrap();
            let places = |r: &Recall| r.units.iter().map(|u| u.place).collect::<Vec<_>>();
            assert_eq!(places(&got), places(&all), "{options:?}");
            assert!(!got.units.is_empty());
            assert!(!again.get(), "every hit scored again: {options:?}");
        }
    }

    #[test]
    fn the_walk_order_is_total_cmp_descending_then_the_later_hit() {
        let scores = [
            3.5,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1e300,
            -2.0,
            3.5,
            f64::INFINITY,
            7.25,
        ];
        let mut order: Vec<Ranked> = scores
            .iter()
            .enumerate()
            .map(|(k, s)| Ranked::new(*s, k as u32))
            .collect();
        order.sort_unstable();
        let mut expected: Vec<usize> = (0..scores.len()).collect();
        expected.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(b.cmp(&a)));
        assert_eq!(
            order.iter().map(Ranked::place).collect::<Vec<_>>(),
            expected
        );
        for r in &order {
            assert_eq!(r.score().to_bits(), scores[r.place()].to_bits());
        }
    }
}

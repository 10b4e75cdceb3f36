//! Okapi BM25 over a list of documents, for one query at a time.
//!
//! Only the query's terms are counted: each document is tokenized once,
//! its length and the frequency of each query term kept, nothing else —
//! no vocabulary of the whole memory is held.
//!
//! A message is scored with a share of the message before it (BM25F-style
//! document expansion): an answer ("Seven years now!") is found by the
//! words of its question ("How long have you been painting?"). Its own
//! counts and the previous message's are kept apart (so the recall
//! index stores both as integers) and combined only when scored, the
//! same way on every path.

use std::collections::HashMap;

use super::tokenize::Tokenizer;

/// The usual constants (Robertson; Lucene's defaults).
/// (On LoCoMo's dev split, b 0.5, or k1 0.9 with b 0.4, moved the hit
/// rate by less than a point either way.)
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The share of the previous message's term counts (and length) a
/// message is scored with. (LoCoMo dev, with the neighbour score share:
/// 0 → 82.1%, 0.3 → 84.7%, 0.5 → 84.6%, 1.0 → 84.2%; with the next
/// message's counts too at 0.5: 84.6%, at 0.25 after the later rules:
/// 0.1 point less. 0.5, the middle of the plateau.) Fixed: the scorer
/// and the recall index keep counts and lengths doubled, as integers
/// (`2 own + previous`: see [`combined`], [`doubled`]).
pub const PREVIOUS_SHARE: f64 = 0.5;

/// The power a term's idf is raised to: a rare term weighs more against a
/// common one than plain BM25 has it, smoothly (no term is left out). In
/// a person's memory the words in most messages are the speakers' names,
/// "really", "love", and a turn that only names the person twice ("Thanks,
/// Melanie! ... Melanie") otherwise outranks the one turn that says the
/// rare word asked about. LoCoMo dev, with the rules of 5e793d5: 1 →
/// 88.0%, 1.25 → 88.9%, 1.5 → 88.8%, 1.75 → 88.9%, 2 → 88.8%, 2.5 → 88.6%,
/// 3 → 88.7%; 1.5, the middle of the plateau. (Leaving out the frequent
/// terms instead lost 1 to 3 points: see BENCHMARKS.md.)
pub const IDF_POWER: f64 = 1.5;

/// Distinct terms of a query at most.
const MAX_QUERY_TERMS: usize = 512;

/// A query's distinct terms, and how many times each is asked for.
#[derive(Clone)]
pub struct QueryTerms {
    pub terms: Vec<String>,
    index: HashMap<String, usize, super::tokenize::FnvBuild>,
    weights: Vec<f64>,
    /// The days or months the query names ("on 3 June, 2023").
    pub dates: Vec<super::when::Span>,
    /// Terms from here on are expansions ([`QueryTerms::add_expansion`]).
    expanded_from: Option<usize>,
}

impl QueryTerms {
    pub fn new(tokenizer: &Tokenizer, text: &str) -> Self {
        let mut terms = Vec::new();
        let mut index = HashMap::default();
        let mut weights: Vec<f64> = Vec::new();
        tokenizer.each_term(text, &mut |term| match index.get(&term) {
            Some(&i) => weights[i] += 1.0,
            // A long message: its first terms say enough, and the
            // counts stay small.
            None if terms.len() >= MAX_QUERY_TERMS => {}
            None => {
                index.insert(term.clone(), terms.len());
                terms.push(term);
                weights.push(1.0);
            }
        });
        Self {
            terms,
            index,
            weights,
            dates: super::when::spans(text),
            expanded_from: None,
        }
    }

    /// A query of `terms` (distinct), each asked for once: a probe of
    /// which of them the memory has ([`super::spelling`]).
    pub fn of_terms(terms: Vec<String>) -> Self {
        let index = terms
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i))
            .collect();
        Self {
            weights: vec![1.0; terms.len()],
            terms,
            index,
            dates: Vec::new(),
            expanded_from: None,
        }
    }

    /// The number of `term`, if the query has it.
    pub fn position(&self, term: &str) -> Option<usize> {
        self.index.get(term).copied()
    }

    /// The number of `term`, if it is one of the query's own (not an
    /// expansion).
    pub fn own_position(&self, term: &str) -> Option<usize> {
        self.position(term)
            .filter(|&i| self.expanded_from.is_none_or(|from| i < from))
    }

    /// Term `i` becomes `term`, at the same weight; not if the query has
    /// `term` already (whether it changed).
    pub fn rename(&mut self, i: usize, term: &str) -> bool {
        if self.index.contains_key(term) {
            return false;
        }
        self.index.remove(&self.terms[i]);
        self.index.insert(term.to_owned(), i);
        self.terms[i] = term.to_owned();
        true
    }

    /// The weight the query asks for term `i` with.
    pub fn weight(&self, i: usize) -> f64 {
        self.weights[i]
    }

    /// Add `term`, a word near one of the query's own ([`super::expand`]),
    /// at `weight`: not if the query has it of its own (its weight
    /// stays), the larger weight if another term brought it already.
    pub fn add_expansion(&mut self, term: &str, weight: f64) {
        let from = *self.expanded_from.get_or_insert(self.terms.len());
        match self.index.get(term) {
            Some(&i) if i >= from => self.weights[i] = self.weights[i].max(weight),
            Some(_) => {}
            None if self.terms.len() >= MAX_QUERY_TERMS => {}
            None => {
                self.index.insert(term.to_owned(), self.terms.len());
                self.terms.push(term.to_owned());
                self.weights.push(weight);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Add the terms of `text` (an earlier turn of the conversation), each
    /// occurrence asked for `share` times as much as one of the query's
    /// own. Only the query's weights change: documents are scored as
    /// before.
    pub fn add_weighted(&mut self, tokenizer: &Tokenizer, text: &str, share: f64) {
        let (terms, index, weights) = (&mut self.terms, &mut self.index, &mut self.weights);
        tokenizer.each_term(text, &mut |term| match index.get(&term) {
            Some(&i) => weights[i] += share,
            None if terms.len() >= MAX_QUERY_TERMS => {}
            None => {
                index.insert(term.clone(), terms.len());
                terms.push(term);
                weights.push(share);
            }
        });
    }
}

/// One document as BM25 sees it: its length in terms and the count of
/// each query term in it (by the term's number in [`QueryTerms`]).
#[derive(Debug, Clone, Default)]
pub struct Counts {
    pub len: u32,
    pub tf: Vec<(u16, u16)>,
}

pub fn count(tokenizer: &Tokenizer, query: &QueryTerms, text: &str) -> Counts {
    let mut counts = Counts::default();
    tokenizer.each_term(text, &mut |term| {
        counts.len += 1;
        if let Some(&i) = query.index.get(&term) {
            let i = i as u16;
            match counts.tf.iter_mut().find(|(t, _)| *t == i) {
                Some((_, n)) => *n = n.saturating_add(1),
                None => counts.tf.push((i, 1)),
            }
        }
    });
    counts
}

/// What BM25 needs of the whole collection: how many documents, their
/// total length (their own, and the sum of the previous messages'
/// lengths the messages are scored with), and how many hold each query
/// term (of their own).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub docs: usize,
    pub total_len: u64,
    pub previous_len: u64,
    pub df: Vec<u32>,
}

/// A query term's count in a document: its own, and the previous
/// message's.
pub type Tf = (u16, u16, u16);

/// The counts of `own` (sorted by term) with those of `previous` (sorted
/// by term), by term.
pub fn expand(own: &[(u16, u16)], previous: &[(u16, u16)]) -> Vec<Tf> {
    let mut out = Vec::with_capacity(own.len() + previous.len());
    let (mut a, mut b) = (own.iter().peekable(), previous.iter().peekable());
    loop {
        match (a.peek(), b.peek()) {
            (Some(&&(t, n)), Some(&&(u, m))) if t == u => {
                out.push((t, n, m));
                a.next();
                b.next();
            }
            (Some(&&(t, n)), Some(&&(u, _))) if t < u => {
                out.push((t, n, 0));
                a.next();
            }
            (_, Some(&&(u, m))) => {
                out.push((u, 0, m));
                b.next();
            }
            (Some(&&(t, n)), None) => {
                out.push((t, n, 0));
                a.next();
            }
            (None, None) => return out,
        }
    }
}

/// The score of every document for the query (0 for one without any of
/// its terms, nor its previous message's). The first `messages`
/// documents are messages in time order: each counts [`PREVIOUS_SHARE`]
/// of the one before it; the others (summary lines) stand alone.
/// Document frequencies are of the documents' own counts. Each doc's
/// `tf` sorted by term.
pub fn scores(query: &QueryTerms, docs: &[Counts], messages: usize) -> Vec<f64> {
    let previous = |i: usize| (i > 0 && i < messages).then(|| &docs[i - 1]);
    let mut stats = Stats {
        docs: docs.len(),
        total_len: docs.iter().map(|d| u64::from(d.len)).sum(),
        previous_len: (0..docs.len())
            .filter_map(previous)
            .map(|d| u64::from(d.len))
            .sum(),
        df: vec![0; query.terms.len()],
    };
    for doc in docs {
        for &(t, _) in &doc.tf {
            stats.df[t as usize] += 1;
        }
    }
    let scorer = Scorer::new(query, &stats);
    (0..docs.len())
        .map(|i| {
            let (tf, previous_len) = match previous(i) {
                Some(p) => (expand(&docs[i].tf, &p.tf), p.len),
                None => (expand(&docs[i].tf, &[]), 0),
            };
            scorer.score(doubled(docs[i].len, previous_len), &tf)
        })
        .collect()
}

/// Combined counts (`2 own + previous`, [`Scorer::term`]) below this,
/// and doubled lengths (`2 len + previous len`) below [`TABLE_LENGTHS`],
/// have their saturation looked up in [`Scorer`]'s table, built once per
/// query; the others are computed, by the same function. (A posting then
/// costs a load and a multiplication, not two divisions.)
const TABLE_COUNTS: usize = 8;
const TABLE_LENGTHS: usize = 256;

/// BM25 of one collection for one query: what scores a document.
///
/// A document's length and a term's count in it are kept doubled, as
/// integers: `2 len + previous len` (its length with [`PREVIOUS_SHARE`]
/// of the previous message's) and `2 own + previous`; the score of a
/// term is its weight (query weight × idf^[`IDF_POWER`] × (k1 + 1))
/// times the saturation `c / (c + 2 norm)` of its doubled count `c`,
/// which is `tf / (tf + norm)` of the plain count.
pub struct Scorer {
    /// Per term: query weight × idf × (k1 + 1).
    weight: Vec<f64>,
    /// Twice the average length (with the previous messages' share).
    avg_len2: f64,
    /// The saturation of each combined count below [`TABLE_COUNTS`] and
    /// doubled length below [`TABLE_LENGTHS`]: `[count * TABLE_LENGTHS +
    /// len2]`.
    table: Vec<f64>,
}

impl Scorer {
    pub fn new(query: &QueryTerms, stats: &Stats) -> Self {
        let n = stats.docs as f64;
        let avg_len2 = if stats.docs == 0 {
            2.0
        } else {
            ((2.0 * stats.total_len as f64 + stats.previous_len as f64) / n).max(2.0)
        };
        let weight = stats
            .df
            .iter()
            .zip(&query.weights)
            .map(|(&df, &w)| {
                let df = df as f64;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln().powf(IDF_POWER);
                w * idf * (K1 + 1.0)
            })
            .collect();
        let mut scorer = Self {
            weight,
            avg_len2,
            table: Vec::new(),
        };
        let mut table = vec![0.0; TABLE_COUNTS * TABLE_LENGTHS];
        for c in 0..TABLE_COUNTS {
            for l in 0..TABLE_LENGTHS {
                table[c * TABLE_LENGTHS + l] = scorer.saturation_of(c as u32, l as u32);
            }
        }
        scorer.table = table;
        scorer
    }

    /// The score of a document of doubled length `len2` (`2 len +
    /// previous len`) with these counts of query terms (by their number;
    /// summed in the order given).
    pub fn score(&self, len2: u32, tf: &[Tf]) -> f64 {
        tf.iter()
            .map(|&(t, own, previous)| self.term(t, combined(own, previous), len2))
            .sum()
    }

    /// What term `t`, of combined count `count` ([`combined`]) in a
    /// document of doubled length `len2`, adds to its score. Added up in
    /// term order from 0, these are [`Scorer::score`] to the bit: what
    /// lets the index path add them one term at a time.
    #[inline(always)]
    pub fn term(&self, t: u16, count: u32, len2: u32) -> f64 {
        self.weight[t as usize] * self.saturation(count, len2)
    }

    #[inline(always)]
    fn saturation(&self, count: u32, len2: u32) -> f64 {
        if (count as usize) < TABLE_COUNTS && (len2 as usize) < TABLE_LENGTHS {
            self.table[count as usize * TABLE_LENGTHS + len2 as usize]
        } else {
            self.saturation_of(count, len2)
        }
    }

    /// `tf / (tf + norm)`, doubled above and below: what the table holds.
    #[inline(never)]
    fn saturation_of(&self, count: u32, len2: u32) -> f64 {
        let norm2 = 2.0 * K1 * (1.0 - B + B * len2 as f64 / self.avg_len2);
        let c = count as f64;
        c / (c + norm2)
    }
}

/// A term's combined count in a document: twice its own, and the
/// previous message's ([`PREVIOUS_SHARE`] = ½ of it, doubled).
#[inline(always)]
pub fn combined(own: u16, previous: u16) -> u32 {
    2 * u32::from(own) + u32::from(previous)
}

/// A document's doubled length: twice its own, and the previous
/// message's.
#[inline(always)]
pub fn doubled(len: u32, previous_len: u32) -> u32 {
    len.saturating_mul(2).saturating_add(previous_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text's counts of the query's terms, sorted by term (as the
    /// corpus keeps them).
    fn sorted_counts(t: &Tokenizer, q: &QueryTerms, texts: &[&str]) -> Vec<Counts> {
        texts
            .iter()
            .map(|d| {
                let mut c = count(t, q, d);
                c.tf.sort_unstable();
                c
            })
            .collect()
    }

    #[test]
    fn rarer_terms_weigh_more_and_absent_ones_nothing() {
        let t = Tokenizer::new();
        let q = QueryTerms::new(&t, "pottery class");
        let docs: Vec<Counts> = [
            "I signed up for a pottery class",
            "the class was long",
            "the class starts at nine",
            "weather is nice",
        ]
        .iter()
        .map(|d| count(&t, &q, d))
        .collect();
        // Not messages: each stands alone.
        let s = scores(&q, &docs, 0);
        assert!(s[0] > s[1] && s[0] > s[2], "{s:?}");
        assert_eq!(s[3], 0.0);
    }

    #[test]
    fn a_message_is_found_by_the_words_of_the_one_before() {
        let t = Tokenizer::new();
        let q = QueryTerms::new(&t, "How long has she been painting?");
        let texts = [
            "the weather is nice today",
            "how long have you been painting?",
            "seven years now, and I love it",
            "we went to the beach with the kids",
            "my sister called me yesterday",
        ];
        let docs = sorted_counts(&t, &q, &texts);
        let s = scores(&q, &docs, docs.len());
        // The answer has none of the words, but its question does.
        assert!(s[2] > 0.0, "{s:?}");
        assert!(s[2] > s[3] && s[2] > s[4], "{s:?}");
        assert!(s[1] > s[2], "{s:?}");
        // Summary lines (after the messages) do not take the one before.
        let s = scores(&q, &docs, 2);
        assert_eq!(s[2], 0.0);
    }

    #[test]
    fn a_rare_term_outweighs_a_common_one_said_twice() {
        let t = Tokenizer::new();
        let q = QueryTerms::new(&t, "What pottery did Melanie make?");
        // "melanie" is in a third of the messages, "pottery" in one.
        let mut texts = vec![
            "Thanks, Melanie! Melanie, you rock",
            "we went to the lake and then the kids wanted ice cream, \
             so we stopped on the way back and I signed up for a pottery \
             class there before we drove home through the hills",
        ];
        for i in 0..60 {
            texts.push(if i % 3 == 0 {
                "hey Melanie, how was your day"
            } else {
                "the weather was nice and sunny"
            });
        }
        let docs = sorted_counts(&t, &q, &texts);
        let s = scores(&q, &docs, 0);
        // Plain BM25 (idf to the power 1) ranks the name said twice in a
        // short message first.
        assert!(s[1] > s[0], "{s:?}");
    }

    #[test]
    fn counts_are_merged_by_term() {
        assert_eq!(
            expand(&[(0, 2), (3, 1)], &[(1, 1), (3, 4), (5, 1)]),
            [(0, 2, 0), (1, 0, 1), (3, 1, 4), (5, 0, 1)]
        );
        assert_eq!(expand(&[], &[(2, 1)]), [(2, 0, 1)]);
        assert_eq!(expand(&[(2, 1)], &[]), [(2, 1, 0)]);
    }
}

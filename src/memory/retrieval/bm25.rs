//! Okapi BM25 over a list of documents, for one query at a time.
//!
//! Only the query's terms are counted: each document is tokenized once,
//! its length and the frequency of each query term kept, nothing else —
//! no vocabulary of the whole memory is held.

use std::collections::HashMap;

use super::tokenize::Tokenizer;

/// The usual constants (Robertson; Lucene's defaults).
/// (On LoCoMo's dev split, b 0.5, or k1 0.9 with b 0.4, moved the hit
/// rate by less than a point either way.)
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Distinct terms of a query at most.
const MAX_QUERY_TERMS: usize = 512;

/// A query's distinct terms, and how many times each is asked for.
pub struct QueryTerms {
    pub terms: Vec<String>,
    index: HashMap<String, usize, super::tokenize::FnvBuild>,
    weights: Vec<f64>,
    /// The days or months the query names ("on 3 June, 2023").
    pub dates: Vec<super::when::Span>,
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
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
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
/// total length, and how many hold each query term.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub docs: usize,
    pub total_len: u64,
    pub df: Vec<u32>,
}

/// The score of every document for the query (0 for one without any of
/// its terms).
pub fn scores(query: &QueryTerms, docs: &[Counts]) -> Vec<f64> {
    let mut stats = Stats {
        docs: docs.len(),
        total_len: docs.iter().map(|d| u64::from(d.len)).sum(),
        df: vec![0; query.terms.len()],
    };
    for doc in docs {
        for &(t, _) in &doc.tf {
            stats.df[t as usize] += 1;
        }
    }
    scores_with(query, &stats, docs)
}

/// The score of each of `docs` (some documents of a collection, which
/// `stats` describes whole).
pub fn scores_with(query: &QueryTerms, stats: &Stats, docs: &[Counts]) -> Vec<f64> {
    let scorer = Scorer::new(query, stats);
    docs.iter()
        .map(|doc| scorer.score(doc.len, &doc.tf))
        .collect()
}

/// BM25 of one collection for one query: what scores a document.
pub struct Scorer<'a> {
    query: &'a QueryTerms,
    idf: Vec<f64>,
    avg_len: f64,
}

impl<'a> Scorer<'a> {
    pub fn new(query: &'a QueryTerms, stats: &Stats) -> Self {
        let n = stats.docs as f64;
        let avg_len = if stats.docs == 0 {
            1.0
        } else {
            (stats.total_len as f64 / n).max(1.0)
        };
        let idf = stats
            .df
            .iter()
            .map(|&df| {
                let df = df as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        Self {
            query,
            idf,
            avg_len,
        }
    }

    /// The score of a document of `len` terms with these counts of query
    /// terms (by their number; summed in the order given).
    pub fn score(&self, len: u32, tf: &[(u16, u16)]) -> f64 {
        let norm = K1 * (1.0 - B + B * len as f64 / self.avg_len);
        tf.iter()
            .map(|&(t, tf)| {
                let tf = tf as f64;
                self.query.weights[t as usize] * self.idf[t as usize] * tf * (K1 + 1.0)
                    / (tf + norm)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = scores(&q, &docs);
        assert!(s[0] > s[1] && s[0] > s[2], "{s:?}");
        assert_eq!(s[3], 0.0);
    }
}

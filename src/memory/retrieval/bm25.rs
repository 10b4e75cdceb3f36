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
    let n = stats.docs as f64;
    if stats.docs == 0 {
        return vec![0.0; docs.len()];
    }
    let avg_len = (stats.total_len as f64 / n).max(1.0);
    let idf: Vec<f64> = stats
        .df
        .iter()
        .map(|&df| {
            let df = df as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    docs.iter()
        .map(|doc| {
            let norm = K1 * (1.0 - B + B * doc.len as f64 / avg_len);
            doc.tf
                .iter()
                .map(|&(t, tf)| {
                    let tf = tf as f64;
                    query.weights[t as usize] * idf[t as usize] * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum()
        })
        .collect()
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

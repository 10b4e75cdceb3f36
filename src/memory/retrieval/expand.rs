//! Query expansion with word neighbours: a query asks about "children",
//! the turn says "kids". Each English term of a query brings its few
//! nearest words, as extra terms at a fraction of its weight
//! ([`ALPHA`] × their similarity), so a turn with the query's own words
//! still ranks first and one with only a neighbour of them can be found.
//!
//! The neighbours are a static table shipped in the binary
//! (`expansion.txt`, distilled offline by `tools/expansion/distil.py`
//! from the all-MiniLM-L6-v2 sentence-transformers model, Apache-2.0):
//! per stem (as [`super::tokenize`] stems), its nearest other stems by
//! the cosine of the model's embedding of the word alone, best first.
//! No model runs here: a lookup is a binary search over the table's
//! sorted lines, a few dozen string comparisons per query term.

use std::cmp::Ordering;

/// The table: comment lines ("#"), then "stem\tneighbour:cosine*100 ..."
/// lines sorted by bytes.
static TABLE: &str = include_str!("expansion.txt");

/// The share of a query term's weight a neighbour of cosine 1 gets.
/// LoCoMo dev, from 88.8% without (tuned with a table stemmed by
/// Snowball 3, which differs from ours in 43 of 16,137 words): up to 3
/// neighbours of cosine 0.5 or more, 0.15 / 0.3 / 0.6 / 1.0 → 88.9% /
/// 88.9% / 89.1% / 88.8%; up to 6, 0.3 / 0.6 / 0.8 → 89.1% / 89.2% /
/// 88.9%; up to 6 of 0.6 or more (the table as shipped), 0.45 / 0.6 /
/// 0.7 / 0.75 → 88.9% / 89.3% / 89.3% / 89.3%, and of 0.65, 0.7 → 89.2%.
/// With this table: 89.5%.
pub const ALPHA: f64 = 0.6;

/// Add to `query` the neighbours of each of its own terms (the table's,
/// at most 6 of cosine 0.6 or more each), but of `names` (the stems of
/// the names it says: "Joy" is no "happiness") and of CJK terms (not in
/// the table). The query's own terms keep their weights.
pub fn expand(query: &mut super::bm25::QueryTerms, names: &[String]) {
    for i in 0..query.terms.len() {
        let term = &query.terms[i];
        if !term.bytes().all(|b| b.is_ascii_lowercase()) || names.contains(term) {
            continue;
        }
        expand_term(query, i);
    }
}

/// Add to `query` the neighbours of its term `i`.
pub fn expand_term(query: &mut super::bm25::QueryTerms, i: usize) {
    let weight = query.weight(i) * ALPHA;
    for (near, sim) in neighbours(&query.terms[i]) {
        query.add_expansion(near, weight * sim);
    }
}

/// Whether the table has `stem` (an English word with neighbours).
pub fn knows(stem: &str) -> bool {
    find(body(), stem).is_some()
}

/// The neighbours of `stem`, best first, with their cosine (0–1); none
/// for a stem not in the table.
pub fn neighbours(stem: &str) -> Vec<(&'static str, f64)> {
    let Some(line) = find(body(), stem) else {
        return Vec::new();
    };
    line.split('\t')
        .nth(1)
        .unwrap_or("")
        .split(' ')
        .filter_map(|cell| {
            let (word, sim) = cell.rsplit_once(':')?;
            Some((word, sim.parse::<u8>().ok()? as f64 / 100.0))
        })
        .collect()
}

/// The table without its comment lines.
fn body() -> &'static str {
    without_comments(TABLE)
}

/// A shipped list without the comment lines ("#") it begins with.
pub(super) fn without_comments(list: &'static str) -> &'static str {
    let mut rest = list;
    while rest.starts_with('#') {
        rest = rest.split_once('\n').map_or("", |(_, r)| r);
    }
    rest
}

/// The line of `body` (sorted by bytes) whose first field is `key`: a
/// binary search over byte offsets, each probe backed up to its line's
/// start.
pub(super) fn find(body: &'static str, key: &str) -> Option<&'static str> {
    let bytes = body.as_bytes();
    let (mut lo, mut hi) = (0, bytes.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = bytes[lo..mid]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(lo, |i| lo + i + 1);
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        let line = &body[start..end];
        let first = line.split('\t').next().unwrap_or("");
        match first.as_bytes().cmp(key.as_bytes()) {
            Ordering::Equal => return Some(line),
            Ordering::Less => lo = end + 1,
            Ordering::Greater => hi = start,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_well_formed() {
        let mut previous = "";
        let mut lines = 0;
        for line in body().lines() {
            let (stem, cells) = line.split_once('\t').expect("a tab");
            assert!(previous < stem, "{previous:?} before {stem:?}");
            previous = stem;
            for cell in cells.split(' ') {
                let (word, sim) = cell.rsplit_once(':').expect("word:sim");
                assert!(!word.is_empty() && word != stem, "{line}");
                assert!(sim.parse::<u8>().is_ok_and(|s| s <= 100), "{line}");
            }
            lines += 1;
        }
        assert!(lines > 1000, "{lines}");
        // Every line is found by its stem, and nothing else is.
        for line in body().lines().step_by(97) {
            let stem = line.split('\t').next().unwrap();
            assert_eq!(find(body(), stem), Some(line));
        }
        assert_eq!(find(body(), ""), None);
        assert_eq!(find(body(), "zzzzzzzz"), None);
        assert_eq!(find(body(), "aaaaaaaa"), None);
    }

    #[test]
    fn a_word_brings_its_neighbours_and_a_name_none() {
        let t = super::super::tokenize::Tokenizer::new();
        let stems = |text: &str| super::super::query_terms(&t, text).terms;
        // The table's keys are our tokenizer's stems.
        let art = stems("paintings and art");
        assert_eq!(art[..2], ["paint", "art"]);
        assert!(neighbours("paint").iter().any(|(w, _)| *w == "painter"));
        assert!(art.contains(&"artwork".to_owned()), "{art:?}");
        // Best first, each once, none of the query's own again.
        let near = neighbours("pet");
        assert!(near.windows(2).all(|p| p[0].1 >= p[1].1), "{near:?}");
        assert!(stems("my pets").contains(&"dog".to_owned()));
        assert_eq!(art.iter().filter(|s| *s == "paint").count(), 1);
        // A name is not expanded; the same word said as a word is.
        assert!(neighbours("mark").iter().any(|(w, _)| *w == "marker"));
        assert!(!stems("What did Mark bake?").contains(&"marker".to_owned()));
        assert!(stems("what did the mark mean?").contains(&"marker".to_owned()));
        // CJK terms and small talk bring nothing.
        assert_eq!(stems("北海"), ["北海", "北", "海"]);
        assert!(stems("thanks!").is_empty());
    }
}

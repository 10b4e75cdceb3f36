//! A query word no stored message has, looked for as the word one edit
//! away that the memory has: "fesetival" as "festival", "Tennesee" as
//! "Tennessee". People type fast in chat; the memory's own words say
//! what they meant.
//!
//! Only a word of [`MIN_LETTERS`] to [`MAX_LETTERS`] ASCII letters whose term no
//! message has (a shorter one is one edit from too many real words) and
//! that is not a word spelled right (`words.txt`, the whole words of
//! the expansion table's model vocabulary: "national" is no typo of the
//! memory's "notional"), and only when some word one edit from it (a
//! letter left out, added, changed, or two swapped) is a term of the
//! memory: the one the most
//! messages have (of two as common, the first in byte order) takes its
//! place, at its weight. Failing that, a word of the expansion table
//! ([`super::expand`]: an English word, not a name) one edit away does,
//! for its neighbours. Either brings its word neighbours, as a word the
//! person wrote does. A word with nothing near it is left as it is: it
//! simply matches nothing.

use std::collections::HashMap;

use super::bm25::QueryTerms;
use super::expand;
use super::tokenize::{FnvBuild, Tokenizer};

/// The fewest letters a word corrected has.
pub const MIN_LETTERS: usize = 5;
/// The most: a longer "word" is no typo of a word (English's long words
/// are under it), and its one-edit variants (54 per letter, each
/// stemmed) would cost time and memory growing with its length squared.
pub const MAX_LETTERS: usize = 24;
/// The most words of one query corrected, and the most candidate terms
/// looked up for them: bounds the extra lookups.
const MAX_WORDS: usize = 3;
const MAX_CANDIDATES: usize = 4096;

/// `terms` with each of its own terms that no message has (`df`, by
/// term, 0) replaced by the memory's term one edit from the word it came
/// from, if there is one; `None` when nothing changes. `count_df` gives
/// the memory's document frequency of each term of a probe.
pub fn corrected(
    tokenizer: &Tokenizer,
    query: &str,
    terms: &QueryTerms,
    df: &[u32],
    count_df: impl FnOnce(&QueryTerms) -> anyhow::Result<Vec<u32>>,
) -> anyhow::Result<Option<QueryTerms>> {
    let unknown = unknown_words(tokenizer, query, terms, df);
    if unknown.is_empty() {
        return Ok(None);
    }
    // Every candidate of every unknown word, in one probe (a word's
    // hundreds of edits share few stems: each looked up once).
    let mut probe: Vec<String> = Vec::new();
    let mut place: HashMap<String, usize, FnvBuild> = HashMap::default();
    let mut of: Vec<(usize, Vec<usize>)> = Vec::new();
    for (t, word) in unknown {
        let mut mine = Vec::new();
        for variant in one_edit(&word) {
            let Some(stem) = single_term(tokenizer, &variant) else {
                continue;
            };
            if terms.position(&stem).is_some() {
                continue;
            }
            let at = match place.get(&stem) {
                Some(&at) => at,
                None if probe.len() >= MAX_CANDIDATES => continue,
                None => {
                    place.insert(stem.clone(), probe.len());
                    probe.push(stem);
                    probe.len() - 1
                }
            };
            mine.push(at);
        }
        mine.sort_unstable();
        mine.dedup();
        of.push((t, mine));
    }
    let probe = QueryTerms::of_terms(probe);
    let found = count_df(&probe)?;
    let names = super::name_stems(tokenizer, query);
    let mut fixed = terms.clone();
    let mut renamed = Vec::new();
    for (t, candidates) in of {
        let is_name = names.contains(&terms.terms[t]);
        let in_memory = candidates
            .iter()
            .copied()
            .filter(|&c| found[c] > 0)
            .max_by(|&a, &b| {
                found[a]
                    .cmp(&found[b])
                    .then_with(|| probe.terms[b].cmp(&probe.terms[a]))
            });
        // Not in the memory: an English word of the expansion table, for
        // its neighbours (a name has none).
        let in_table = || {
            (!is_name)
                .then(|| {
                    candidates
                        .iter()
                        .copied()
                        .filter(|&c| expand::knows(&probe.terms[c]))
                        .min_by(|&a, &b| probe.terms[a].cmp(&probe.terms[b]))
                })
                .flatten()
        };
        if let Some(c) = in_memory.or_else(in_table)
            && fixed.rename(t, &probe.terms[c])
        {
            renamed.push((t, is_name));
        }
    }
    // As if the person had written it: its neighbours too.
    for &(t, is_name) in &renamed {
        if !is_name {
            expand::expand_term(&mut fixed, t);
        }
    }
    Ok((!renamed.is_empty()).then_some(fixed))
}

/// The query's own terms no message has that came from a word long
/// enough to correct, with that word (lower case), at most
/// [`MAX_WORDS`].
fn unknown_words(
    tokenizer: &Tokenizer,
    query: &str,
    terms: &QueryTerms,
    df: &[u32],
) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for word in query.split(|c: char| !c.is_ascii_alphabetic()) {
        if !(MIN_LETTERS..=MAX_LETTERS).contains(&word.len()) || out.len() >= MAX_WORDS {
            continue;
        }
        let word = word.to_ascii_lowercase();
        let Some(stem) = single_term(tokenizer, &word) else {
            continue;
        };
        // An English word is spelled right: a memory without
        // "national" has "notional", one edit away, and "national"
        // brings its own neighbours ("country"). By the word, not its
        // stem: "writting" is "writ" as a stem, yet a typo.
        if let Some(t) = terms.own_position(&stem)
            && df.get(t) == Some(&0)
            && !is_english_word(&word)
            && !out.iter().any(|(u, _)| *u == t)
        {
            out.push((t, word));
        }
    }
    out
}

/// English words of [`MIN_LETTERS`] or more (lower-case ASCII), spelled
/// right: the whole words of the WordPiece vocabulary the expansion
/// table was distilled with (`tools/expansion/words.py`).
static WORDS: &str = include_str!("words.txt");

/// Whether `word` (lower case) is an English word spelled right.
fn is_english_word(word: &str) -> bool {
    expand::find(expand::without_comments(WORDS), word).is_some()
}

/// The one term of a word (none for a stopword).
fn single_term(tokenizer: &Tokenizer, word: &str) -> Option<String> {
    let mut terms = tokenizer.terms(word);
    (terms.len() == 1).then(|| terms.pop().expect("one term"))
}

/// Every word one edit from `word` (lower-case ASCII letters): a letter
/// left out, two beside each other swapped, one changed, one added.
fn one_edit(word: &str) -> Vec<String> {
    let b = word.as_bytes();
    let n = b.len();
    let mut out = Vec::with_capacity(54 * n + 26);
    let at = |v: Vec<u8>| String::from_utf8(v).expect("ASCII");
    for i in 0..n {
        out.push(at([&b[..i], &b[i + 1..]].concat()));
    }
    for i in 0..n.saturating_sub(1) {
        let mut v = b.to_vec();
        v.swap(i, i + 1);
        out.push(at(v));
    }
    for i in 0..n {
        for c in b'a'..=b'z' {
            if c != b[i] {
                let mut v = b.to_vec();
                v[i] = c;
                out.push(at(v));
            }
        }
    }
    for i in 0..=n {
        for c in b'a'..=b'z' {
            out.push(at([&b[..i], &[c], &b[i..]].concat()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(query: &str, memory: &[(&str, u32)]) -> Vec<String> {
        let tokenizer = Tokenizer::new();
        let terms = QueryTerms::new(&tokenizer, query);
        let df: Vec<u32> = terms
            .terms
            .iter()
            .map(|t| memory.iter().find(|(m, _)| m == t).map_or(0, |m| m.1))
            .collect();
        let got = corrected(&tokenizer, query, &terms, &df, |probe| {
            Ok(probe
                .terms
                .iter()
                .map(|t| memory.iter().find(|(m, _)| m == t).map_or(0, |m| m.1))
                .collect())
        })
        .unwrap();
        got.map_or(terms.terms, |t| t.terms)
    }

    /// The query's own terms as corrected, without the expansions.
    fn own(query: &str, memory: &[(&str, u32)]) -> Vec<String> {
        let n = QueryTerms::new(&Tokenizer::new(), query).terms.len();
        fixed(query, memory)[..n].to_vec()
    }

    #[test]
    fn a_word_longer_than_any_english_word_is_not_looked_for() {
        // One edit from a term the memory has, but far too long to be a
        // typo: left alone, and its variants never made.
        let long = "festivalfestivalfestivals";
        assert!(long.len() > MAX_LETTERS);
        let memory = [("festivalfestivalfestiv", 3)];
        let tokenizer = Tokenizer::new();
        let terms = QueryTerms::new(&tokenizer, long);
        assert!(unknown_words(&tokenizer, long, &terms, &[0]).is_empty());
        assert_eq!(own(long, &memory), terms.terms);
        // At the most letters, still a typo.
        let typo = "festivalfestivalfestivla";
        assert_eq!(typo.len(), MAX_LETTERS);
        let memory = [("festivalfestivalfestiv", 3)];
        assert_eq!(own(typo, &memory), ["festivalfestivalfestiv"]);
    }

    #[test]
    fn a_word_no_message_has_becomes_the_memory_s_word_one_edit_away() {
        // Left out, added, swapped, changed.
        let memory = [("festiv", 3), ("pride", 9), ("tennesse", 1), ("educ", 2)];
        assert_eq!(own("the pride fesetival", &memory), ["pride", "festiv"]);
        assert_eq!(own("been to Tennesee?", &memory), ["tennesse"]);
        assert_eq!(own("her educaton", &memory), ["educ"]);
        assert_eq!(own("the pirde festival", &memory), ["pride", "festiv"]);
        // A word the memory has brings its neighbours, as if typed right.
        assert_eq!(
            fixed("the pride fesetival", &memory),
            ["pride", "festiv", "fest", "celebr"]
        );
        // Not in the memory but an English word: for its neighbours; a
        // name is not looked for in the table.
        let none: [(&str, u32); 0] = [];
        assert_eq!(fixed("a fesetival", &none), ["festiv", "fest", "celebr"]);
        let far = Tokenizer::new().terms("I met Fesetival");
        assert_eq!(fixed("I met Fesetival", &none), far);
        // Of two candidates, the one more messages have.
        let memory = [("cattl", 1), ("castl", 5)];
        assert_eq!(own("a catsle", &memory), ["castl"]);
    }

    #[test]
    fn known_short_and_far_words_are_left_alone() {
        let memory = [("festiv", 3), ("cat", 4), ("hat", 2)];
        // Known: as it is, even with a word one edit away.
        assert_eq!(own("festival cat", &memory), ["festiv", "cat"]);
        // Too short to correct ("hat" is one edit from "cat").
        assert_eq!(own("a bat", &memory), ["bat"]);
        // Two edits away: nothing near, left as it is.
        let far = Tokenizer::new().terms("fstiaval");
        assert_eq!(own("fstiaval", &memory), far);
        // An English word the memory lacks is no typo: "national" is not
        // "notional" (stem "notion"), one edit away.
        let english = [("notion", 7), ("park", 3)];
        assert_eq!(own("a national park", &english), ["nation", "park"]);
        assert_eq!(own("the north side", &[("worth", 5)]), ["north", "side"]);
    }

    #[test]
    fn a_typo_whose_stem_is_a_word_s_is_still_a_typo() {
        // "writting" stems to "writ", "definately" to "defin": not words.
        assert_eq!(own("his writting", &[("write", 3)]), ["write"]);
        assert_eq!(own("definately", &[("definit", 2)]), ["definit"]);
    }

    #[test]
    fn the_word_list_is_sorted_and_finds_its_words() {
        let body = expand::without_comments(WORDS);
        let mut previous = "";
        for line in body.lines() {
            assert!(previous < line, "{previous:?} before {line:?}");
            assert!(line.len() >= MIN_LETTERS && line.bytes().all(|b| b.is_ascii_lowercase()));
            previous = line;
        }
        for w in ["national", "travel", "married", "north", "festival"] {
            assert!(is_english_word(w), "{w}");
        }
        for w in ["fesetival", "writting", "definately", "notaword"] {
            assert!(!is_english_word(w), "{w}");
        }
    }

    #[test]
    fn one_edit_lists_every_kind_of_edit() {
        let edits = one_edit("abc");
        for e in [
            "bc", "ac", "ab", "bac", "acb", "xbc", "abz", "zabc", "abcz", "axbc",
        ] {
            assert!(edits.iter().any(|x| x == e), "{e}");
        }
        assert!(!edits.iter().any(|x| x == "abc"));
    }
}

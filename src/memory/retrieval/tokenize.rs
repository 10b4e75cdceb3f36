//! Text to index terms, the same for what is stored and for a query.
//!
//! 1. Unicode NFKC (full-width letters and digits, half-width katakana and
//!    compatibility forms become their plain forms), then lower case.
//! 2. Runs of letters and digits are words: an English stopword is left
//!    out, every other word is stemmed with Snowball's English stemmer
//!    (`rust-stemmers`), so "hiking", "hiked" and "hikes" meet.
//! 3. Chinese, Japanese and Korean (Han, Hiragana, Katakana, Hangul) have
//!    no spaces between words: a run of them gives its character bigrams
//!    ("北海道" → "北海", "海道") and its characters but kana ("北",
//!    "海", "道": a paraphrase often shares one character and no pair).
//!
//! Whether a whole message is small talk, to look for nothing, is
//! [`super::small_talk`]'s.

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization as _;

/// The version of what [`Tokenizer`] makes of a text: raise it with any
/// change to the terms, so recall index segments made by the old one are
/// stale (read from the archives until rebuilt), never mixed.
pub const VERSION: u32 = 1;

/// Words whose stems are remembered at most (a memory is mostly the same
/// few thousand words again).
const MAX_CACHED_STEMS: usize = 50_000;

/// Turns text into terms; holds the stemmer and the stems already
/// computed, so make one and reuse it.
pub struct Tokenizer {
    stemmer: Stemmer,
    stems: RefCell<HashMap<String, String, FnvBuild>>,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tokenizer {
    pub fn new() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            stems: RefCell::new(HashMap::default()),
        }
    }

    /// Every term of `text`, in order (repeats kept: they are term
    /// frequencies).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.each_term(text, &mut |term| out.push(term));
        out
    }

    /// Calls `emit` with every term of `text`, in order.
    pub fn each_term(&self, text: &str, emit: &mut dyn FnMut(String)) {
        let normal = folded(text);
        let mut word = String::new();
        let mut cjk: Vec<char> = Vec::new();
        let mut chars = normal.chars().peekable();
        while let Some(c) = chars.next() {
            if is_cjk(c) {
                self.flush_word(&mut word, emit);
                cjk.push(c);
                continue;
            }
            flush_cjk(&mut cjk, emit);
            // An apostrophe inside a word stays (the stemmer takes "'s").
            let apostrophe = matches!(c, '\'' | '\u{2019}')
                && !word.is_empty()
                && chars.peek().is_some_and(|n| n.is_alphanumeric());
            if c.is_alphanumeric() {
                word.push(c);
            } else if apostrophe {
                word.push('\'');
            } else {
                self.flush_word(&mut word, emit);
            }
        }
        self.flush_word(&mut word, emit);
        flush_cjk(&mut cjk, emit);
    }

    fn flush_word(&self, word: &mut String, emit: &mut dyn FnMut(String)) {
        if word.is_empty() {
            return;
        }
        // One lookup per word: its stem, or "" for a stopword.
        let cached = self.stems.borrow().get(word.as_str()).cloned();
        let stem = cached.unwrap_or_else(|| {
            let stem = if is_stopword(word) {
                String::new()
            } else {
                self.stemmer.stem(word).trim_end_matches('\'').to_owned()
            };
            let mut stems = self.stems.borrow_mut();
            if stems.len() < MAX_CACHED_STEMS {
                stems.insert(word.clone(), stem.clone());
            }
            stem
        });
        if !stem.is_empty() {
            emit(stem);
        }
        word.clear();
    }
}

/// FNV-1a: the stem cache's keys are short words from our own memory, so
/// SipHash's protection against chosen collisions buys nothing and cost a
/// tenth of recall's time.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub type FnvBuild = std::hash::BuildHasherDefault<Fnv>;

/// `text` as terms are made from it: NFKC, then lower case (step 1).
pub(super) fn folded(text: &str) -> String {
    // ASCII is its own NFKC form.
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        text.nfkc().flat_map(char::to_lowercase).collect()
    }
}

fn flush_cjk(run: &mut Vec<char>, emit: &mut dyn FnMut(String)) {
    match run.len() {
        0 => {}
        1 => emit(run[0].to_string()),
        _ => {
            for pair in run.windows(2) {
                emit(pair.iter().collect());
            }
            // Each character too (but kana, mostly particles and endings):
            // a paraphrase often shares a word of one character (貓, 茶)
            // and no pair. (Our Chinese and Japanese conversations: 85%
            // with bigrams alone, 92.5% with these.)
            for c in run.iter().filter(|c| !is_hiragana(**c)) {
                emit(c.to_string());
            }
        }
    }
    run.clear();
}

fn is_hiragana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x309F)
}

/// Han (with extensions and compatibility ideographs), Hiragana,
/// Katakana (with the prolonged sound mark), and Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x31F0..=0x31FF      // Katakana phonetic extensions
        | 0x3400..=0x4DBF      // Han extension A
        | 0x4E00..=0x9FFF      // Han
        | 0xF900..=0xFAFF      // Han compatibility
        | 0x20000..=0x3FFFF    // Han extensions B–H
        | 0x1100..=0x11FF      // Hangul Jamo
        | 0x3130..=0x318F      // Hangul compatibility Jamo
        | 0xAC00..=0xD7AF) // Hangul syllables
}

/// Words too common to say what a message is about, and the words of
/// small talk ("thanks", "ok", "hi"): a message made only of these
/// recalls nothing.
pub(super) fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Sorted (a test checks), lower case, as NFKC and case folding give them.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "but",
    "by",
    "bye",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "for",
    "from",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "hello",
    "her",
    "here",
    "hers",
    "herself",
    "hey",
    "hi",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "i'm",
    "if",
    "in",
    "into",
    "is",
    "it",
    "it's",
    "its",
    "itself",
    "just",
    "lol",
    "me",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "oh",
    "ok",
    "okay",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "own",
    "please",
    "so",
    "some",
    "such",
    "than",
    "thank",
    "thanks",
    "that",
    "that's",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "thx",
    "to",
    "too",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "what's",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yeah",
    "yes",
    "you",
    "you're",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted() {
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOPWORDS);
    }

    #[test]
    fn english_is_stemmed_and_folded() {
        let t = Tokenizer::new();
        assert_eq!(t.terms("Hiking"), t.terms("hikes"));
        assert_eq!(t.terms("HIKED"), ["hike"]);
        assert_eq!(t.terms("Caroline's adoption"), ["carolin", "adopt"]);
        assert_eq!(t.terms("adopted"), ["adopt"]);
        // Full-width letters are the same word (NFKC).
        assert_eq!(t.terms("ＰＡＲＩＳ"), t.terms("Paris"));
        assert!(t.terms("thanks!").is_empty());
        assert!(t.terms("ok 👍").is_empty());
    }

    #[test]
    fn cjk_runs_give_bigrams() {
        let t = Tokenizer::new();
        // Bigrams, then the characters but kana.
        assert_eq!(t.terms("北海道"), ["北海", "海道", "北", "海", "道"]);
        assert_eq!(
            t.terms("我去北海道了")[..5],
            ["我去", "去北", "北海", "海道", "道了"]
        );
        // A paraphrase sharing no pair shares a character: 橘貓 / 的貓.
        assert!(t.terms("我家的貓").contains(&"貓".to_owned()));
        assert!(t.terms("我養了一隻橘貓").contains(&"貓".to_owned()));
        // Japanese: kana and kanji in one run; half-width katakana is
        // made full-width first.
        assert_eq!(t.terms("ｶﾚｰ")[..2], ["カレ", "レー"]);
        assert!(!t.terms("食べた").contains(&"べ".to_owned()));
        assert_eq!(t.terms("猫"), ["猫"]);
        // Mixed with English: each part its own way.
        assert_eq!(t.terms("在Tokyo工作"), ["在", "tokyo", "工作", "工", "作"]);
        assert_eq!(t.terms("서울에")[..2], ["서울", "울에"]);
    }
}

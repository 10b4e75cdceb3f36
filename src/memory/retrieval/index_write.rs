//! Writing one recall index segment: the bytes of the format
//! [`super::index`] describes and reads, built from the archive days
//! `maintain` and `session reindex` read ([`super::indexing`]).

use std::collections::HashMap;
use std::io::Write as _;

use chrono::Datelike as _;

use super::index::{
    BLOCK_TERMS, DAY_LEN, DayEntry, FORMAT, HEADER_LEN, Identity, MAGIC, Posting, STORE_DOCS,
    crc32, ts_ns,
};
use super::tokenize::{self, Tokenizer};
use crate::memory::message::Message;

/// One archive day's content, read for a build.
pub struct DaySource {
    pub day: chrono::NaiveDate,
    pub archive: Identity,
    /// The archive's lines that are messages, in archive order.
    pub lines: Vec<Vec<u8>>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bytes of a segment over `days` (ascending).
pub fn build(tokenizer: &Tokenizer, days: &[DaySource]) -> Vec<u8> {
    let mut docs = Docs::default();
    for source in days {
        docs.add_day(tokenizer, source);
    }
    let mut terms: Vec<(String, Vec<Posting>)> = docs.postings.into_iter().collect();
    terms.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let dictionary = Dictionary::of(&terms);
    let (store, block_offsets) = store(&docs.stored);

    let days_off = HEADER_LEN as u64;
    let sparse_off = days_off + (docs.days.len() * DAY_LEN) as u64;
    let dict_off = sparse_off + dictionary.sparse.len() as u64;
    let postings_off = dict_off + dictionary.dict.len() as u64;
    let store_off = postings_off + dictionary.postings.len() as u64;
    let blocks_off = store_off + store.len() as u64;

    let mut out = Vec::with_capacity(blocks_off as usize + block_offsets.len() * 8);
    out.extend_from_slice(MAGIC);
    for v in [
        FORMAT,
        tokenize::VERSION,
        docs.days.len() as u32,
        docs.doc,
        terms.len() as u32,
        (block_offsets.len() - 1) as u32,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [
        docs.total_len,
        sparse_off,
        dict_off,
        postings_off,
        store_off,
        blocks_off,
        dictionary.sparse.len() as u64,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    // The head's CRC goes at HEADER_LEN - 4; padding before it.
    out.resize(HEADER_LEN - 4, 0);
    out.extend_from_slice(&[0; 4]);
    for d in &docs.days {
        put_day(&mut out, d);
    }
    out.extend_from_slice(&dictionary.sparse);
    let crc = crc32(&out);
    out[HEADER_LEN - 4..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&dictionary.dict);
    out.extend_from_slice(&dictionary.postings);
    out.extend_from_slice(&store);
    for o in &block_offsets {
        out.extend_from_slice(&o.to_le_bytes());
    }
    out
}

/// One day's entry: `DAY_LEN` bytes.
fn put_day(out: &mut Vec<u8>, d: &DayEntry) {
    out.extend_from_slice(&d.day.num_days_from_ce().to_le_bytes());
    out.extend_from_slice(&d.doc_start.to_le_bytes());
    out.extend_from_slice(&d.doc_count.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    for v in [d.len_sum, d.archive.size, d.archive.ino] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [d.archive.mtime_ns, d.min_ts_ns, d.max_ts_ns] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [d.first_len, d.first_chars, d.last_len, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// The docs of a segment as they are added, day by day: each term's
/// postings, the days' entries, the lines to store.
#[derive(Default)]
struct Docs<'a> {
    days: Vec<DayEntry>,
    postings: HashMap<String, Vec<Posting>, tokenize::FnvBuild>,
    stored: Vec<&'a [u8]>,
    total_len: u64,
    /// The next doc's number (at the end: how many there are).
    doc: u32,
    /// The current doc's term counts, and the previous doc's of its day.
    tf: HashMap<String, u16, tokenize::FnvBuild>,
    previous_tf: HashMap<String, u16, tokenize::FnvBuild>,
}

impl<'a> Docs<'a> {
    /// A day's messages as docs, in time order; a stable sort keeps the
    /// archive's order of equal times.
    fn add_day(&mut self, tokenizer: &Tokenizer, source: &'a DaySource) {
        let mut messages: Vec<(usize, Message)> = source
            .lines
            .iter()
            .enumerate()
            .filter_map(|(i, line)| Message::parse(line).ok().map(|m| (i, m)))
            .collect();
        messages.sort_by_key(|(_, m)| m.ts);
        let doc_start = self.doc;
        let mut len_sum = 0u64;
        self.previous_tf.clear();
        let mut previous_len = 0u32;
        let (mut first_len, mut first_chars) = (0, 0);
        for (line, message) in messages.iter_mut() {
            let (len, chars) = self.add_doc(tokenizer, message, previous_len);
            if self.doc == doc_start {
                (first_len, first_chars) = (len, chars);
            }
            previous_len = len;
            len_sum += u64::from(len);
            self.stored.push(&source.lines[*line]);
            self.doc += 1;
        }
        self.total_len += len_sum;
        self.days.push(DayEntry {
            day: source.day,
            doc_start,
            doc_count: self.doc - doc_start,
            len_sum,
            archive: source.archive,
            min_ts_ns: messages.first().map_or(0, |(_, m)| ts_ns(m)),
            max_ts_ns: messages.last().map_or(0, |(_, m)| ts_ns(m)),
            first_len,
            first_chars,
            last_len: previous_len,
        });
    }

    /// One message as doc `self.doc`: a posting for every term of its own
    /// or of the previous doc of its day; its length and characters.
    fn add_doc(
        &mut self,
        tokenizer: &Tokenizer,
        message: &mut Message,
        previous_len: u32,
    ) -> (u32, u32) {
        let doc = self.doc;
        self.tf.clear();
        let mut len = 0u32;
        let tf = &mut self.tf;
        tokenizer.each_term(&message.text, &mut |term| {
            len += 1;
            let n = tf.entry(term).or_insert(0);
            *n = n.saturating_add(1);
        });
        let chars = transcript_chars(message);
        for (term, &n) in &self.tf {
            self.postings
                .entry(term.clone())
                .or_default()
                .push(Posting {
                    doc,
                    tf: n,
                    previous_tf: self.previous_tf.get(term).copied().unwrap_or(0),
                    len2: super::bm25::doubled(len, previous_len),
                    chars,
                });
        }
        for (term, &n) in &self.previous_tf {
            if !self.tf.contains_key(term) {
                self.postings
                    .entry(term.clone())
                    .or_default()
                    .push(Posting {
                        doc,
                        tf: 0,
                        previous_tf: n,
                        len2: super::bm25::doubled(len, previous_len),
                        chars,
                    });
            }
        }
        std::mem::swap(&mut self.tf, &mut self.previous_tf);
        (len, chars)
    }
}

/// The characters `message` takes in the context, with its line break
/// (moved into an [`super::Item`] to be formatted, and back).
fn transcript_chars(message: &mut Message) -> u32 {
    let item = super::Item::Message(std::mem::replace(
        message,
        Message::new(
            crate::memory::message::Role::User,
            "",
            chrono::DateTime::UNIX_EPOCH,
        ),
    ));
    let chars = item.transcript_line().chars().count() as u32 + 1;
    if let super::Item::Message(m) = item {
        *message = m;
    }
    chars
}

/// The postings of every term, and the dictionary over them in blocks
/// of `BLOCK_TERMS` with its sparse index.
struct Dictionary {
    postings: Vec<u8>,
    dict: Vec<u8>,
    sparse: Vec<u8>,
}

impl Dictionary {
    fn of(terms: &[(String, Vec<Posting>)]) -> Self {
        let mut d = Dictionary {
            postings: Vec::new(),
            dict: Vec::new(),
            sparse: Vec::new(),
        };
        for chunk in terms.chunks(BLOCK_TERMS) {
            let block_start = d.dict.len();
            for (term, list) in chunk {
                d.term(term, list);
            }
            let first = &chunk[0].0;
            put_varint(&mut d.sparse, first.len() as u64);
            d.sparse.extend_from_slice(first.as_bytes());
            put_varint(&mut d.sparse, block_start as u64);
            put_varint(&mut d.sparse, (d.dict.len() - block_start) as u64);
            d.sparse
                .extend_from_slice(&crc32(&d.dict[block_start..]).to_le_bytes());
        }
        d
    }

    /// One term's postings (doc numbers as deltas) and its dictionary row.
    fn term(&mut self, term: &str, list: &[Posting]) {
        let start = self.postings.len();
        let mut last = 0u32;
        for (i, p) in list.iter().enumerate() {
            put_varint(
                &mut self.postings,
                u64::from(if i == 0 { p.doc } else { p.doc - last }),
            );
            put_varint(&mut self.postings, u64::from(p.tf));
            put_varint(&mut self.postings, u64::from(p.previous_tf));
            put_varint(&mut self.postings, u64::from(p.len2));
            match u16::try_from(p.chars) {
                Ok(n) if n < u16::MAX => self.postings.extend_from_slice(&n.to_le_bytes()),
                _ => {
                    self.postings.extend_from_slice(&u16::MAX.to_le_bytes());
                    put_varint(&mut self.postings, u64::from(p.chars));
                }
            }
            last = p.doc;
        }
        put_varint(&mut self.dict, term.len() as u64);
        self.dict.extend_from_slice(term.as_bytes());
        put_varint(&mut self.dict, list.len() as u64);
        let own = list.iter().filter(|p| p.tf > 0).count();
        put_varint(&mut self.dict, own as u64);
        put_varint(&mut self.dict, start as u64);
        put_varint(&mut self.dict, (self.postings.len() - start) as u64);
        self.dict
            .extend_from_slice(&crc32(&self.postings[start..]).to_le_bytes());
    }
}

/// The stored lines in zlib blocks of `STORE_DOCS`, and each block's
/// offset (with the end's).
fn store(stored: &[&[u8]]) -> (Vec<u8>, Vec<u64>) {
    let mut store = Vec::new();
    let mut block_offsets: Vec<u64> = Vec::new();
    for chunk in stored.chunks(STORE_DOCS) {
        block_offsets.push(store.len() as u64);
        let mut raw = Vec::new();
        for line in chunk {
            put_varint(&mut raw, line.len() as u64);
            raw.extend_from_slice(line);
        }
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&raw).expect("writing to a Vec");
        store.extend_from_slice(&encoder.finish().expect("writing to a Vec"));
    }
    block_offsets.push(store.len() as u64);
    (store, block_offsets)
}

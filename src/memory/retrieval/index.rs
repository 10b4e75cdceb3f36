//! The recall index: immutable segments, each covering some archive days
//! of one owner, so an `ask` reads the postings of its query's terms
//! instead of every archived message.
//!
//! Derived data, always rebuildable: `<sessions>/.recall/<owner>/`
//! (a folder the seed never looks at), one `*.seg` file per segment,
//! written whole (temp file + rename, 0600) under the owner's lock by
//! `maintain` (task `index`) and `session reindex`.
//!
//! A segment records, for every day it covers, the identity of the
//! archive it was built from (size, inode, modification time). At query
//! time a day is used from the index only if its archive still has that
//! identity; every other day (no segment, a changed archive, a segment of
//! another tokenizer version, a damaged segment) is read from the archive
//! itself, as without an index: slower, never wrong.
//!
//! This file reads segments; [`super::index_write`] writes one.
//!
//! Layout of a segment (little-endian; varint = LEB128):
//! - header (`HEADER_LEN` bytes): magic, format, tokenizer version, counts,
//!   section offsets, and a CRC-32 of the header and the two tables after
//!   it (the "head");
//! - days: `DAY_LEN` bytes each (day, first doc, docs, terms, archive
//!   identity, first and last message time, the first doc's length and
//!   characters, the last doc's length);
//! - sparse dictionary: every `BLOCK_TERMS`th term with its dictionary
//!   block's place and CRC;
//! - dictionary blocks: term, df (postings), the docs with the term of
//!   their own, postings place and CRC;
//! - postings: per doc, doc number delta, term frequency, the previous
//!   doc's (of the same day: see below), the doubled length `2 len +
//!   previous len` (the doc's own and the previous doc's, as
//!   [`super::bm25::doubled`] scores it), characters (two bytes, not a
//!   varint: a message's line is as often under 128 characters as over,
//!   and a varint's length would be a coin toss for the reader's branch;
//!   `0xFFFF` and a varint for 65,535 and more);
//! - stored lines: the archive lines in doc order, zlib blocks of
//!   `STORE_DOCS` (the checksum of zlib catches damage), and their offsets.
//!
//! Docs are the day's messages in time order (ties: archive order), days
//! ascending: the order recall ranks in, so a doc's neighbours are the
//! docs beside it.
//!
//! A message is scored with a share of the one before it
//! ([`super::bm25::PREVIOUS_SHARE`]), so a doc's postings list every term
//! of its own or of the previous doc of its day, with both counts and
//! both lengths. The first doc of a day has no previous one here: the
//! message before it is the last of the day before in recall's order,
//! which may be read whole or from another segment; recall adds it
//! (from the day's first and last doc lengths kept in its entry).

use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use chrono::NaiveDate;

use crate::memory::message::Message;

pub(super) const MAGIC: &[u8; 8] = b"CSRECALL";
/// 2: postings with the previous doc's counts and length. 3: the two
/// lengths stored as one doubled length, and each term's count of docs
/// with it of their own (so a segment used whole needs no pass over its
/// postings for the statistics).
pub(super) const FORMAT: u32 = 3;
pub(super) const HEADER_LEN: usize = 96;
pub(super) const DAY_LEN: usize = 80;
/// Terms per dictionary block.
pub(super) const BLOCK_TERMS: usize = 64;
/// Stored lines per zlib block.
pub(super) const STORE_DOCS: usize = 16;
/// A segment's docs at most: bounds what `maintain` holds while building.
pub const MAX_SEGMENT_DOCS: usize = 131_072;
/// A segment with fewer docs is rebuilt together with newer days, so the
/// days indexed one by one end up in few files.
pub const KEEP_SEGMENT_DOCS: usize = 32_768;
/// The file name's suffix.
pub const SUFFIX: &str = ".seg";

/// What identifies one version of an archive file: an archive is replaced
/// (renamed over) on every write, so a new version has a new inode and
/// time, and nearly always a new size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub size: u64,
    pub ino: u64,
    pub mtime_ns: i64,
}

impl Identity {
    pub fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Self {
            size: meta.len(),
            ino: meta.ino(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        }
    }

    /// The archive at `path` now; `None` when there is none. On a shared
    /// file system the file the name points to on the server.
    pub fn current(path: &Path) -> anyhow::Result<Option<Self>> {
        Self::current_in(path, crate::store::shared::applies_to(path))
    }

    /// The archive `name` in the open folder `dir` now, on a local file
    /// system (one lookup, no walk of the whole path); `None` when there is
    /// none.
    pub fn current_at(dir: &std::fs::File, name: &str) -> anyhow::Result<Option<Self>> {
        match rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Self {
                size: st.st_size as u64,
                ino: st.st_ino,
                mtime_ns: st.st_mtime * 1_000_000_000 + st.st_mtime_nsec as i64,
            })),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => {
                Err(std::io::Error::from(e)).with_context(|| format!("could not read {name}"))
            }
        }
    }

    /// [`Identity::current`], told whether the folder is on a shared file
    /// system (asked once for a whole folder of archives).
    pub fn current_in(path: &Path, shared: bool) -> anyhow::Result<Option<Self>> {
        if !shared {
            return match std::fs::symlink_metadata(path) {
                Ok(meta) => Ok(Some(Self::of(&meta))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e).with_context(|| format!("could not read {}", path.display())),
            };
        }
        let Some(file) = crate::store::fs::open_read(path)? else {
            return Ok(None);
        };
        let meta = file
            .metadata()
            .with_context(|| format!("could not read {}", path.display()))?;
        Ok(Some(Self::of(&meta)))
    }
}

/// One archive day as a segment covers it.
#[derive(Debug, Clone)]
pub struct DayEntry {
    pub day: NaiveDate,
    pub doc_start: u32,
    pub doc_count: u32,
    /// Sum of the docs' lengths in terms.
    pub len_sum: u64,
    pub archive: Identity,
    pub min_ts_ns: i64,
    pub max_ts_ns: i64,
    /// The first doc's length and characters, and the last doc's length
    /// (0 for a day without docs).
    pub first_len: u32,
    pub first_chars: u32,
    pub last_len: u32,
}

/// A segment's term: where its postings are.
#[derive(Debug, Clone, Copy)]
pub struct TermInfo {
    /// Its postings (docs with the term, or whose previous doc has it).
    pub df: u32,
    /// Its docs with the term of their own.
    pub own_df: u32,
    offset: u64,
    len: u64,
    crc: u32,
}

/// One posting: a doc with the term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// Its number in the segment.
    pub doc: u32,
    /// How often the term is in it, and in the doc before it (of the
    /// same day).
    pub tf: u16,
    pub previous_tf: u16,
    /// Its doubled length: twice its length in terms, plus the doc's
    /// before it (of the same day; none for the first).
    pub len2: u32,
    /// The characters it takes in the context ([`super::unit_chars`]):
    /// what lets ranking see that a hit cannot fit without reading it.
    pub chars: u32,
}

/// What went wrong reading a segment: the segment is damaged (or of
/// another format), and is left out.
#[derive(Debug)]
pub struct Damaged {
    pub path: PathBuf,
    pub why: String,
    /// Not damaged but of an older format: stale, like a segment of an
    /// older tokenizer (left out without a warning, rebuilt).
    pub stale: bool,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "recall index {} is damaged ({}); its days are read from the archives until \
             `claude-session maintain --only index` or `session reindex` rebuilds it",
            self.path.display(),
            self.why
        )
    }
}

impl std::error::Error for Damaged {}

pub fn damaged(path: &Path, why: impl Into<String>) -> anyhow::Error {
    Damaged {
        path: path.to_owned(),
        why: why.into(),
        stale: false,
    }
    .into()
}

pub(super) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

// --- varints ------------------------------------------------------------

/// Reads LEB128 varints out of a byte slice; `None` past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    fn done(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// One varint; a one- or two-byte one (most of a postings list's:
    /// a doc's characters take two) without the loop.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let b = *self.bytes.get(self.pos)?;
        if b & 0x80 == 0 {
            self.pos += 1;
            return Some(u64::from(b));
        }
        if let Some(&b2) = self.bytes.get(self.pos + 1)
            && b2 & 0x80 == 0
        {
            self.pos += 2;
            return Some(u64::from(b & 0x7f) | u64::from(b2) << 7);
        }
        self.varint_long()
    }

    #[inline(never)]
    fn varint_long(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.pos)?;
            self.pos += 1;
            if shift > 63 {
                return None;
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
        }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// A doc's characters: two bytes, or `0xFFFF` and a varint.
    #[inline(always)]
    fn chars(&mut self) -> Option<u64> {
        let b = self.bytes.get(self.pos..self.pos + 2)?;
        self.pos += 2;
        match u16::from_le_bytes([b[0], b[1]]) {
            u16::MAX => self.varint(),
            n => Some(u64::from(n)),
        }
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn le_i64(b: &[u8], at: usize) -> i64 {
    le_u64(b, at) as i64
}

// --- building: `index_write` ---------------------------------------------

pub use super::index_write::{DaySource, build};

/// The time a message is ordered by, in ns (clamped to what fits).
pub fn ts_ns(message: &Message) -> i64 {
    message
        .ts
        .timestamp_nanos_opt()
        .unwrap_or(if message.ts.timestamp() < 0 {
            i64::MIN
        } else {
            i64::MAX
        })
}

// --- reading --------------------------------------------------------------

/// A dictionary block's first term, the block's place and length, and
/// its CRC.
type SparseEntry = (Vec<u8>, u64, u64, u32);

/// An open segment: its head in memory, the rest read on demand.
pub struct Segment {
    pub path: PathBuf,
    file: File,
    file_len: u64,
    pub tokenizer_version: u32,
    pub days: Vec<DayEntry>,
    pub docs: u32,
    pub total_len: u64,
    /// First term of each dictionary block, with the block's place and CRC.
    sparse: Vec<SparseEntry>,
    dict_off: u64,
    postings_off: u64,
    store_off: u64,
    blocks_off: u64,
    blocks: u32,
}

impl Segment {
    /// Open and check the head. A damaged or foreign file is [`Damaged`].
    pub fn open(path: &Path) -> anyhow::Result<Option<Self>> {
        let Some(file) = crate::store::fs::open_read(path)? else {
            return Ok(None);
        };
        let file_len = file
            .metadata()
            .with_context(|| format!("could not read {}", path.display()))?
            .len();
        let mut header = vec![0u8; HEADER_LEN];
        if file_len < HEADER_LEN as u64 {
            return Err(damaged(path, "shorter than its header"));
        }
        read_at(&file, path, &mut header, 0)?;
        let h = Header::parse(path, &header, file_len)?;
        let mut head = vec![0u8; h.dict_off as usize];
        read_at(&file, path, &mut head, 0)?;
        head[HEADER_LEN - 4..HEADER_LEN].fill(0);
        if crc32(&head) != h.crc {
            return Err(damaged(path, "checksum of its head"));
        }
        let days = (0..h.n_days)
            .map(|i| {
                day_entry(
                    path,
                    &head[HEADER_LEN + i * DAY_LEN..HEADER_LEN + (i + 1) * DAY_LEN],
                )
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        check_days(path, &days, h.docs)?;
        let sparse = sparse_table(path, &head[h.sparse_off as usize..])?;
        Ok(Some(Self {
            path: path.to_owned(),
            file,
            file_len,
            tokenizer_version: h.tokenizer_version,
            days,
            docs: h.docs,
            total_len: h.total_len,
            sparse,
            dict_off: h.dict_off,
            postings_off: h.postings_off,
            store_off: h.store_off,
            blocks_off: h.blocks_off,
            blocks: h.blocks,
        }))
    }

    fn read(&self, offset: u64, len: u64) -> anyhow::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_into(offset, len, &mut buf)?;
        Ok(buf)
    }

    /// [`Segment::read`] into `buf` (its room kept: written over, not
    /// allocated and faulted in again).
    fn read_into(&self, offset: u64, len: u64, buf: &mut Vec<u8>) -> anyhow::Result<()> {
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.file_len)
        {
            return Err(damaged(&self.path, "a place past its end"));
        }
        buf.clear();
        buf.resize(len as usize, 0);
        read_at(&self.file, &self.path, buf, offset)
    }

    /// Where the postings of `term` are; `None` when no doc has it (the
    /// tests' one-key lookup: recall looks terms up together).
    #[cfg(test)]
    pub fn term(&self, term: &str) -> anyhow::Result<Option<TermInfo>> {
        Ok(self.terms_sorted(&[term])?.pop().flatten())
    }

    /// [`Segment::term`] of each of `keys` (distinct, sorted by bytes):
    /// each dictionary block read, checked and walked once however many
    /// of them it holds (a typo's probe looks up hundreds of candidates).
    pub fn terms_sorted(&self, keys: &[&str]) -> anyhow::Result<Vec<Option<TermInfo>>> {
        debug_assert!(keys.windows(2).all(|k| k[0] < k[1]), "keys not sorted");
        let mut out = Vec::with_capacity(keys.len());
        // The block read last, and where in it the entries not passed yet
        // begin (the keys come in order: the next is after this one).
        let mut block: Option<(usize, Vec<u8>, usize)> = None;
        for key in keys {
            let key = key.as_bytes();
            let i = self
                .sparse
                .partition_point(|(first, ..)| first.as_slice() <= key);
            if i == 0 {
                out.push(None);
                continue;
            }
            let (_, bytes, at) = match &mut block {
                Some(b) if b.0 == i - 1 => b,
                _ => {
                    let (_, off, len, crc) = &self.sparse[i - 1];
                    let bytes = self.read(self.dict_off + off, *len)?;
                    if crc32(&bytes) != *crc {
                        return Err(damaged(&self.path, "checksum of a dictionary block"));
                    }
                    block.insert((i - 1, bytes, 0))
                }
            };
            let (found, next) = self.find_in_block(bytes, *at, key)?;
            *at = next;
            out.push(found);
        }
        Ok(out)
    }

    /// The entry of `key` in a dictionary block, looked for from byte
    /// `from` (an entry's start, none before it at or after `key`), if
    /// it has one; and where the first entry not before `key` begins.
    fn find_in_block(
        &self,
        block: &[u8],
        from: usize,
        key: &[u8],
    ) -> anyhow::Result<(Option<TermInfo>, usize)> {
        let mut c = Cursor::new(block);
        c.pos = from;
        while !c.done() {
            let start = c.pos;
            let entry = (|| {
                let n = c.varint()? as usize;
                let t = c.take(n)?;
                let df = c.varint()? as u32;
                let own_df = c.varint()? as u32;
                let offset = c.varint()?;
                let len = c.varint()?;
                let crc = c.u32()?;
                Some((
                    t,
                    TermInfo {
                        df,
                        own_df,
                        offset,
                        len,
                        crc,
                    },
                ))
            })()
            .ok_or_else(|| damaged(&self.path, "a dictionary block"))?;
            match entry.0.cmp(key) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Ok((Some(entry.1), start)),
                std::cmp::Ordering::Greater => return Ok((None, start)),
            }
        }
        Ok((None, c.pos))
    }

    /// The postings of a term, doc numbers ascending.
    pub fn postings(&self, info: TermInfo, out: &mut Vec<Posting>) -> anyhow::Result<()> {
        let bytes = self.postings_bytes(info)?;
        // Six bytes a posting at least: a damaged count reserves no more.
        out.reserve((info.df as usize).min(bytes.len() / 6));
        self.decode(&bytes, info.df, |p| out.push(p))
    }

    /// The postings list of a term as stored, its checksum checked: what
    /// [`Segment::decode`] reads (once per pass over it, without a copy
    /// of its postings).
    pub fn postings_bytes(&self, info: TermInfo) -> anyhow::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.postings_into(info, &mut bytes)?;
        Ok(bytes)
    }

    /// [`Segment::postings_bytes`] into `buf`, its room kept.
    pub fn postings_into(&self, info: TermInfo, buf: &mut Vec<u8>) -> anyhow::Result<()> {
        self.read_into(self.postings_off + info.offset, info.len, buf)?;
        if crc32(buf) != info.crc {
            return Err(damaged(&self.path, "checksum of a postings list"));
        }
        Ok(())
    }

    /// Each of the `df` postings in `bytes` (from
    /// [`Segment::postings_bytes`]) handed to `each`, doc numbers
    /// ascending; a list that does not decode, or names a doc past the
    /// segment's, is [`Damaged`].
    #[inline]
    pub fn decode(
        &self,
        bytes: &[u8],
        df: u32,
        mut each: impl FnMut(Posting),
    ) -> anyhow::Result<()> {
        let mut reader = self.reader(bytes, df);
        while let Some(p) = reader.next()? {
            each(p);
        }
        Ok(())
    }

    /// The `df` postings in `bytes` (from [`Segment::postings_bytes`]),
    /// read as they are asked for.
    pub fn reader<'a>(&'a self, bytes: &'a [u8], df: u32) -> Reader<'a> {
        self.reader_of(bytes, df)
    }

    /// [`Segment::reader`] owning the list's bytes (given back by
    /// [`Reader::into_bytes`]).
    pub fn owned_reader(&self, bytes: Vec<u8>, df: u32) -> Reader<'_, Vec<u8>> {
        self.reader_of(bytes, df)
    }

    fn reader_of<B: AsRef<[u8]>>(&self, bytes: B, df: u32) -> Reader<'_, B> {
        Reader {
            segment: self,
            bytes,
            pos: 0,
            doc: 0,
            read: 0,
            df,
            peeked: None,
        }
    }

    /// The stored archive lines of block `block` (docs `block *
    /// STORE_DOCS` on).
    pub fn block_lines(&self, block: u32) -> anyhow::Result<Vec<Vec<u8>>> {
        if block >= self.blocks {
            return Err(damaged(&self.path, "a doc past its docs"));
        }
        let offsets = self.read(self.blocks_off + u64::from(block) * 8, 16)?;
        let (start, end) = (le_u64(&offsets, 0), le_u64(&offsets, 8));
        if start > end || self.store_off + end > self.blocks_off {
            return Err(damaged(&self.path, "a stored block's place"));
        }
        let compressed = self.read(self.store_off + start, end - start)?;
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(compressed.as_slice())
            .read_to_end(&mut raw)
            .map_err(|e| damaged(&self.path, format!("a stored block: {e}")))?;
        let mut c = Cursor::new(&raw);
        let mut lines = Vec::new();
        while !c.done() {
            let line = (|| {
                let n = c.varint()? as usize;
                c.take(n)
            })()
            .ok_or_else(|| damaged(&self.path, "a stored block's lines"))?;
            lines.push(line.to_vec());
        }
        Ok(lines)
    }

    /// The stored archive line of doc `doc`.
    pub fn line(&self, doc: u32) -> anyhow::Result<Vec<u8>> {
        let lines = self.block_lines(doc / STORE_DOCS as u32)?;
        lines
            .into_iter()
            .nth((doc % STORE_DOCS as u32) as usize)
            .ok_or_else(|| damaged(&self.path, "a stored block short of docs"))
    }

    /// Which block holds doc `doc`.
    pub fn block_of(doc: u32) -> u32 {
        doc / STORE_DOCS as u32
    }

    /// Where in its block doc `doc` is.
    pub fn place_in_block(doc: u32) -> usize {
        doc as usize % STORE_DOCS
    }

    /// Read every part: what `session reindex --check`-like callers and
    /// the tests use to find damage anywhere in the file.
    pub fn check_all(&self) -> anyhow::Result<()> {
        let mut postings = Vec::new();
        for (_, off, len, crc) in &self.sparse {
            let block = self.read(self.dict_off + off, *len)?;
            if crc32(&block) != *crc {
                return Err(damaged(&self.path, "checksum of a dictionary block"));
            }
            let mut c = Cursor::new(&block);
            while !c.done() {
                let info = (|| {
                    let n = c.varint()? as usize;
                    c.take(n)?;
                    let df = c.varint()? as u32;
                    let own_df = c.varint()? as u32;
                    let offset = c.varint()?;
                    let len = c.varint()?;
                    let crc = c.u32()?;
                    Some(TermInfo {
                        df,
                        own_df,
                        offset,
                        len,
                        crc,
                    })
                })()
                .ok_or_else(|| damaged(&self.path, "a dictionary block"))?;
                postings.clear();
                self.postings(info, &mut postings)?;
            }
        }
        for block in 0..self.blocks {
            self.block_lines(block)?;
        }
        Ok(())
    }
}

/// A term's postings in one segment, decoded one at a time, doc numbers
/// ascending ([`Segment::reader`]).
pub struct Reader<'a, B: AsRef<[u8]> = &'a [u8]> {
    segment: &'a Segment,
    /// The list, and how far it is read.
    bytes: B,
    pos: usize,
    doc: u64,
    /// Postings decoded, of `df`.
    read: u32,
    df: u32,
    /// One decoded by [`Reader::next_below`] and not taken.
    peeked: Option<Posting>,
}

impl<B: AsRef<[u8]>> Reader<'_, B> {
    /// The next posting; a list that does not decode, or names a doc past
    /// the segment's, is [`Damaged`].
    // Inlined into the loops that score: returned through memory, a
    // posting cost more to take than to decode.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> anyhow::Result<Option<Posting>> {
        if let Some(p) = self.peeked.take() {
            return Ok(Some(p));
        }
        if self.read == self.df {
            return Ok(None);
        }
        let mut c = Cursor {
            bytes: self.bytes.as_ref(),
            pos: self.pos,
        };
        // Each read in turn, not through a closure: the whole posting
        // stays in registers.
        let (Some(delta), Some(tf), Some(previous_tf), Some(len2), Some(chars)) =
            (c.varint(), c.varint(), c.varint(), c.varint(), c.chars())
        else {
            return Err(self.damaged_list());
        };
        self.pos = c.pos;
        self.doc = if self.read == 0 {
            delta
        } else {
            self.doc + delta
        };
        self.read += 1;
        if self.doc >= u64::from(self.segment.docs) {
            return Err(damaged(&self.segment.path, "a doc number past its docs"));
        }
        Ok(Some(Posting {
            doc: self.doc as u32,
            tf: tf.min(u64::from(u16::MAX)) as u16,
            previous_tf: previous_tf.min(u64::from(u16::MAX)) as u16,
            len2: len2.min(u64::from(u32::MAX)) as u32,
            chars: chars as u32,
        }))
    }

    #[cold]
    #[inline(never)]
    fn damaged_list(&self) -> anyhow::Error {
        damaged(&self.segment.path, "a postings list")
    }

    /// The next posting if its doc is below `end` (else it is kept for
    /// the next call).
    #[inline(always)]
    pub fn next_below(&mut self, end: u32) -> anyhow::Result<Option<Posting>> {
        match self.next()? {
            Some(p) if p.doc >= end => {
                self.peeked = Some(p);
                Ok(None)
            }
            other => Ok(other),
        }
    }
}

impl Reader<'_, Vec<u8>> {
    /// Read again from the first posting.
    pub fn rewind(&mut self) {
        (self.pos, self.doc, self.read, self.peeked) = (0, 0, 0, None);
    }

    /// The list's bytes, for another list to be read into.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// A segment's header: its counts and the places of its sections.
struct Header {
    tokenizer_version: u32,
    n_days: usize,
    docs: u32,
    blocks: u32,
    total_len: u64,
    sparse_off: u64,
    dict_off: u64,
    postings_off: u64,
    store_off: u64,
    blocks_off: u64,
    /// The head's CRC.
    crc: u32,
}

impl Header {
    /// The first `HEADER_LEN` bytes of a file of `file_len` bytes, checked:
    /// the magic, the format (an older one is stale), the sections in
    /// order and fitting the size.
    fn parse(path: &Path, header: &[u8], file_len: u64) -> anyhow::Result<Self> {
        if &header[..8] != MAGIC {
            return Err(damaged(path, "not a recall index"));
        }
        let format = le_u32(header, 8);
        if (1..FORMAT).contains(&format) {
            return Err(Damaged {
                path: path.to_owned(),
                why: format!("format {format}, not {FORMAT}"),
                stale: true,
            }
            .into());
        }
        if format != FORMAT {
            return Err(damaged(path, format!("format {format}, not {FORMAT}")));
        }
        let h = Header {
            tokenizer_version: le_u32(header, 12),
            n_days: le_u32(header, 16) as usize,
            docs: le_u32(header, 20),
            blocks: le_u32(header, 28),
            total_len: le_u64(header, 32),
            sparse_off: le_u64(header, 40),
            dict_off: le_u64(header, 48),
            postings_off: le_u64(header, 56),
            store_off: le_u64(header, 64),
            blocks_off: le_u64(header, 72),
            crc: le_u32(header, HEADER_LEN - 4),
        };
        let sparse_len = le_u64(header, 80);
        let ordered = HEADER_LEN as u64 + (h.n_days * DAY_LEN) as u64 == h.sparse_off
            && h.sparse_off + sparse_len == h.dict_off
            && h.dict_off <= h.postings_off
            && h.postings_off <= h.store_off
            && h.store_off <= h.blocks_off
            && h.blocks_off + (u64::from(h.blocks) + 1) * 8 == file_len;
        if !ordered {
            return Err(damaged(path, "its sections do not fit its size"));
        }
        Ok(h)
    }
}

/// One day's entry, from its `DAY_LEN` bytes.
fn day_entry(path: &Path, b: &[u8]) -> anyhow::Result<DayEntry> {
    let day = NaiveDate::from_num_days_from_ce_opt(le_u32(b, 0) as i32)
        .ok_or_else(|| damaged(path, "a day out of range"))?;
    Ok(DayEntry {
        day,
        doc_start: le_u32(b, 4),
        doc_count: le_u32(b, 8),
        len_sum: le_u64(b, 16),
        archive: Identity {
            size: le_u64(b, 24),
            ino: le_u64(b, 32),
            mtime_ns: le_i64(b, 40),
        },
        min_ts_ns: le_i64(b, 48),
        max_ts_ns: le_i64(b, 56),
        first_len: le_u32(b, 64),
        first_chars: le_u32(b, 68),
        last_len: le_u32(b, 72),
    })
}

/// The days' docs each within the segment's `docs` and none in two days
/// (nor a day twice; a day of no message has none): what the walk sizes its buffers by and reads as
/// one day's messages, so a head that passes its checksum yet says
/// otherwise is damage, not a day of four billion messages.
fn check_days(path: &Path, days: &[DayEntry], docs: u32) -> anyhow::Result<()> {
    let mut spans: Vec<(u32, u32)> = Vec::with_capacity(days.len());
    for d in days {
        let end = d.doc_start.checked_add(d.doc_count);
        if end.is_none_or(|end| end > docs) {
            return Err(damaged(path, format!("day {} outside its docs", d.day)));
        }
        spans.push((d.doc_start, d.doc_count));
    }
    spans.sort_unstable();
    let overlap = spans.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0);
    let mut named: Vec<NaiveDate> = days.iter().map(|d| d.day).collect();
    named.sort_unstable();
    if overlap || named.windows(2).any(|w| w[0] == w[1]) {
        return Err(damaged(
            path,
            "two days share docs, or a day is listed twice",
        ));
    }
    Ok(())
}

/// The sparse dictionary: every `BLOCK_TERMS`th term with its block's
/// place and CRC.
fn sparse_table(path: &Path, bytes: &[u8]) -> anyhow::Result<Vec<SparseEntry>> {
    let mut sparse = Vec::new();
    let mut c = Cursor::new(bytes);
    while !c.done() {
        let entry = (|| {
            let n = c.varint()? as usize;
            let term = c.take(n)?.to_vec();
            let off = c.varint()?;
            let len = c.varint()?;
            let crc = c.u32()?;
            Some((term, off, len, crc))
        })()
        .ok_or_else(|| damaged(path, "its dictionary's table"))?;
        sparse.push(entry);
    }
    Ok(sparse)
}

fn read_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> anyhow::Result<()> {
    crate::store::shared::read_exact_at(file, buf, offset).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            damaged(path, "shorter than it says")
        } else {
            anyhow::Error::new(e).context(format!("could not read {}", path.display()))
        }
    })
}

/// The segment file for days `first` to `last`.
pub fn segment_name(first: NaiveDate, last: NaiveDate) -> String {
    format!("{first}_{last}{SUFFIX}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::message::Role;
    use crate::memory::retrieval::tokenize::Tokenizer;
    use chrono::TimeZone as _;

    fn day_of(day: NaiveDate, texts: &[&str]) -> DaySource {
        let lines = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let ts = chrono::Utc.from_utc_datetime(&day.and_hms_opt(10, 0, 0).unwrap())
                    + chrono::TimeDelta::minutes(i as i64);
                Message::new(Role::User, *t, ts).to_line()
            })
            .collect();
        DaySource {
            day,
            archive: Identity {
                size: 1,
                ino: 2,
                mtime_ns: 3,
            },
            lines,
        }
    }

    #[test]
    fn a_message_of_more_than_65535_characters_keeps_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let d1 = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        let long = "garden ".repeat(10_000);
        let t = Tokenizer::new();
        let bytes = build(&t, &[day_of(d1, &[&long, "a short garden"])]);
        let path = dir.path().join("a.seg");
        std::fs::write(&path, &bytes).unwrap();
        let seg = Segment::open(&path).unwrap().unwrap();
        let mut p = Vec::new();
        seg.postings(seg.term("garden").unwrap().unwrap(), &mut p)
            .unwrap();
        assert!(
            seg.days[0].first_chars > 70_000,
            "{}",
            seg.days[0].first_chars
        );
        assert_eq!(p[0].chars, seg.days[0].first_chars);
        assert_eq!((p[1].doc, p[1].tf, p[1].previous_tf), (1, 1, 10_000));
        assert!(p[1].chars < 100);
    }

    /// `bytes` (a segment) with its head changed by `edit` and its
    /// checksum made right again: a head that passes the check yet lies.
    fn rewritten_head(mut bytes: Vec<u8>, edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
        let dict_off = le_u64(&bytes, 48) as usize;
        edit(&mut bytes[..dict_off]);
        bytes[HEADER_LEN - 4..HEADER_LEN].fill(0);
        let crc = crc32(&bytes[..dict_off]);
        bytes[HEADER_LEN - 4..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn a_head_whose_days_lie_about_their_docs_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let d1 = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        let d2 = NaiveDate::from_ymd_opt(2025, 3, 2).unwrap();
        let good = build(
            &Tokenizer::new(),
            &[
                day_of(d1, &["a garden", "two"]),
                day_of(d2, &["three garden"]),
            ],
        );
        let path = dir.path().join("a.seg");
        let opens = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            Segment::open(&path)
        };
        assert!(
            opens(&rewritten_head(good.clone(), |_| {}))
                .unwrap()
                .is_some()
        );
        let day = |i: usize| HEADER_LEN + i * DAY_LEN;
        type Edit = Box<dyn Fn(&mut [u8])>;
        let cases: [(&str, Edit); 4] = [
            (
                "a day of four billion docs",
                Box::new(move |h: &mut [u8]| {
                    h[day(0) + 8..day(0) + 12].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes())
                }),
            ),
            (
                "a day past the last doc",
                Box::new(move |h: &mut [u8]| {
                    h[day(1) + 4..day(1) + 8].copy_from_slice(&3u32.to_le_bytes())
                }),
            ),
            (
                "two days on the same docs",
                Box::new(move |h: &mut [u8]| {
                    h[day(1) + 4..day(1) + 8].copy_from_slice(&0u32.to_le_bytes())
                }),
            ),
            (
                "one day twice",
                Box::new(move |h: &mut [u8]| {
                    let first = h[day(0)..day(0) + 4].to_vec();
                    h[day(1)..day(1) + 4].copy_from_slice(&first)
                }),
            ),
        ];
        for (what, edit) in cases {
            let Err(err) = opens(&rewritten_head(good.clone(), edit)) else {
                panic!("{what}: opened as sound");
            };
            assert!(err.downcast_ref::<Damaged>().is_some(), "{what}: {err:#}");
        }
    }

    #[test]
    fn terms_looked_up_together_are_found_as_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let d1 = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        // Five dictionary blocks of terms, each word in one message.
        let words: Vec<String> = (0..300).map(|i| format!("w{i:03}")).collect();
        let texts: Vec<String> = words.iter().map(|w| format!("{w} garden")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let bytes = build(&Tokenizer::new(), &[day_of(d1, &refs)]);
        let path = dir.path().join("a.seg");
        std::fs::write(&path, &bytes).unwrap();
        let seg = Segment::open(&path).unwrap().unwrap();
        assert!(seg.sparse.len() >= 4, "{}", seg.sparse.len());
        // Present and absent keys, in byte order: before the first term,
        // between terms of one block and of two, after the last.
        let mut keys: Vec<String> = vec!["a".into(), "garden".into(), "w".into()];
        for (i, w) in words.iter().enumerate().step_by(7) {
            keys.push(w.clone());
            keys.push(format!("{w}x"));
            if i % 2 == 0 {
                keys.push(format!("{w}y"));
            }
        }
        keys.push("zzz".into());
        keys.sort();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        let together = seg.terms_sorted(&refs).unwrap();
        assert_eq!(together.len(), keys.len());
        for (key, found) in keys.iter().zip(&together) {
            let alone = seg.term(key).unwrap();
            assert_eq!(
                found.map(|i| (i.df, i.offset)),
                alone.map(|i| (i.df, i.offset)),
                "{key}"
            );
            let expected = match key.as_str() {
                "garden" => Some(300),
                k if words.iter().any(|w| w == k) => Some(1),
                _ => None,
            };
            assert_eq!(found.map(|i| i.own_df), expected, "{key}");
        }
    }

    #[test]
    fn a_segment_gives_back_its_postings_and_lines() {
        let dir = tempfile::tempdir().unwrap();
        let d1 = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        let d2 = NaiveDate::from_ymd_opt(2025, 3, 2).unwrap();
        let many: Vec<String> = (0..100).map(|i| format!("word{i} garden")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let t = Tokenizer::new();
        let bytes = build(
            &t,
            &[
                day_of(d1, &["the garden roses", "puppy"]),
                day_of(d2, &refs),
            ],
        );
        let path = dir.path().join("a.seg");
        std::fs::write(&path, &bytes).unwrap();
        let seg = Segment::open(&path).unwrap().unwrap();
        assert_eq!(seg.docs, 102);
        assert_eq!(seg.days.len(), 2);
        assert_eq!(seg.days[1].doc_start, 2);
        let info = seg.term("garden").unwrap().unwrap();
        // Its docs, and the one after the first (by its previous doc's).
        assert_eq!(info.df, 102);
        let mut p = Vec::new();
        seg.postings(info, &mut p).unwrap();
        // Doubled lengths: 2 len + the previous doc's len.
        assert_eq!((p[0].doc, p[0].tf, p[0].len2), (0, 1, 4));
        assert_eq!(
            (p[1].doc, p[1].tf, p[1].previous_tf, p[1].len2),
            (1, 0, 1, 2 + 2)
        );
        // The first doc of a day has no previous one in its segment.
        assert_eq!((p[2].doc, p[2].previous_tf, p[2].len2), (2, 0, 4));
        assert_eq!((p[3].doc, p[3].previous_tf, p[3].len2), (3, 1, 4 + 2));
        // Docs with the term of their own: the previous doc's alone do
        // not count.
        assert_eq!(info.own_df, 101);
        assert_eq!(
            (
                seg.days[0].first_len,
                seg.days[0].last_len,
                seg.days[1].first_len
            ),
            (2, 1, 2)
        );
        assert!(seg.days[0].first_chars > 0);
        assert!(seg.term("word57").unwrap().is_some());
        assert!(seg.term("absent").unwrap().is_none());
        assert!(seg.term("aaa").unwrap().is_none());
        let line = seg.line(1).unwrap();
        assert_eq!(Message::parse(&line).unwrap().text, "puppy");
        let line = seg.line(101).unwrap();
        assert_eq!(Message::parse(&line).unwrap().text, "word99 garden");

        // Damage anywhere is noticed, never read as something else.
        for at in [3, 100, bytes.len() / 2, bytes.len() - 20] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x55;
            std::fs::write(&path, &bad).unwrap();
            let outcome = Segment::open(&path).and_then(|seg| {
                let seg = seg.unwrap();
                let mut p = Vec::new();
                for term in ["garden", "puppy", "word57", "rose"] {
                    if let Some(info) = seg.term(term)? {
                        seg.postings(info, &mut p)?;
                    }
                }
                seg.check_all()
            });
            let err = outcome.expect_err("damage at {at} unnoticed");
            assert!(err.downcast_ref::<Damaged>().is_some(), "{at}: {err:#}");
        }
    }
}

//! Gzip archives of raw log lines: `messages-YYYY-MM-DD.jsonl.gz` (and
//! rotated broker logs).
//!
//! Each append adds one gzip member, so `zcat` prints every line of every
//! append (a rewrite, for an erase or a delete, leaves one member). The
//! new member is added by an atomic rewrite (old bytes + new member →
//! temp file → rename), not an in-place append: a writer killed mid-write
//! then leaves the old archive intact instead of a torn member that would
//! hide every member written after it. A day's archive of one user is
//! small, so copying it is cheap.
//!
//! Reading decodes member by member; a damaged member (an archive cut in
//! half by someone else's tool) is reported and skipped, and reading goes
//! on at the next member.

use std::io::{Read as _, Write as _};
use std::path::Path;

use anyhow::Context as _;
use flate2::Compression;
use flate2::bufread::GzDecoder;
use flate2::write::GzEncoder;

use crate::store::atomic::write_atomic;
use crate::store::fs::read_optional;

/// Add `lines` (each without its newline) to the archive as one new member.
pub fn append_member(path: &Path, lines: &[&[u8]], fsync: bool) -> anyhow::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    append_bytes_member(path, &joined(lines), fsync)
}

/// Add raw bytes (a rotated log) to a gzip file as one new member.
pub fn append_bytes_member(path: &Path, bytes: &[u8], fsync: bool) -> anyhow::Result<()> {
    let mut all = read_optional(path)?.unwrap_or_default();
    all.extend_from_slice(&member(bytes)?);
    write_atomic(path, &all, fsync)
        .with_context(|| format!("could not write archive {}", path.display()))
}

/// Replace the archive with `lines` in one member (an erase that removes a
/// person's lines from a group's archive); no lines removes the file.
pub fn rewrite(path: &Path, lines: &[&[u8]], fsync: bool) -> anyhow::Result<()> {
    if lines.is_empty() {
        return crate::store::fs::remove_if_exists(path).map(|_| ());
    }
    write_one_member(path, &joined(lines), fsync)
}

/// Replace the file with `bytes` gzipped as one member.
pub fn write_one_member(path: &Path, bytes: &[u8], fsync: bool) -> anyhow::Result<()> {
    write_atomic(path, &member(bytes)?, fsync)
        .with_context(|| format!("could not write archive {}", path.display()))
}

fn joined(lines: &[&[u8]]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for line in lines {
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
    }
    bytes
}

fn member(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()
}

/// What reading an archive gave: its lines, and what could not be read.
#[derive(Debug, Default)]
pub struct ArchiveLines {
    pub lines: Vec<Vec<u8>>,
    pub damage: Vec<String>,
}

/// Every line of every readable member, in order. Missing file: empty.
pub fn read_lines(path: &Path) -> anyhow::Result<ArchiveLines> {
    let Some(bytes) = read_optional(path)? else {
        return Ok(ArchiveLines::default());
    };
    Ok(lines_of(&bytes, path))
}

/// Every line of every readable member of an archive's bytes (read from
/// `path`, named in what is reported as damage).
pub fn lines_of(bytes: &[u8], path: &Path) -> ArchiveLines {
    let mut out = ArchiveLines::default();
    let mut offset = 0;
    while offset < bytes.len() {
        let mut rest = &bytes[offset..];
        let mut decoded = Vec::new();
        let before = rest.len();
        let result = decode_member(&mut rest, &mut decoded);
        let consumed = before - rest.len();
        match result {
            Ok(_) if consumed > 0 => {
                push_lines(&decoded, &mut out.lines);
                offset += consumed;
            }
            outcome => {
                let why = match outcome {
                    Err(e) => e.to_string(),
                    Ok(_) => "not a gzip member".into(),
                };
                // Decode the damaged member again on its own, up to where the
                // next member starts: run into that member's bytes, the
                // decoder fails earlier and loses more of the readable part.
                let next = find_member_start(bytes, offset + 1);
                let mut alone = &bytes[offset..next.unwrap_or(bytes.len())];
                decoded.clear();
                let _ = decode_member(&mut alone, &mut decoded);
                // Keep the complete lines of a cut member; drop its torn end.
                if let Some(last_newline) = decoded.iter().rposition(|&b| b == b'\n') {
                    push_lines(&decoded[..=last_newline], &mut out.lines);
                }
                out.damage.push(format!(
                    "{}: damaged gzip data at byte {offset} ({why})",
                    path.display()
                ));
                match next {
                    Some(next) => offset = next,
                    None => break,
                }
            }
        }
    }
    out
}

/// Decode one member in small steps: what a step decoded before damage is
/// kept, so a cut member loses at most one step of its readable end.
fn decode_member(input: &mut &[u8], out: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut decoder = GzDecoder::new(input);
    let mut step = [0u8; 1024];
    loop {
        match decoder.read(&mut step)? {
            0 => return Ok(out.len()),
            n => out.extend_from_slice(&step[..n]),
        }
    }
}

fn push_lines(decoded: &[u8], lines: &mut Vec<Vec<u8>>) {
    for line in decoded.split(|&b| b == b'\n') {
        if !line.is_empty() {
            lines.push(line.to_vec());
        }
    }
}

/// The next gzip magic (1f 8b, deflate) at or after `from`.
fn find_member_start(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(3)
        .position(|w| w == [0x1f, 0x8b, 0x08])
        .map(|i| from + i)
}

/// The decoded bytes of every member of a gzip file, streamed: memory stays
/// at two small buffers whatever the archive's size. A damaged member is
/// read as far as it decodes, noted in [`MembersReader::damage`], and
/// reading goes on at the next member's magic bytes; a newline is put
/// after the damage so a torn line never glues onto the next member's
/// first line.
///
/// One inflate state and one input buffer serve every member, and with
/// [`MembersReader::reuse`] every file: zlib-rs allocates its state
/// 64-byte aligned, and glibc 2.36 (Debian 12's) cannot hand a freed
/// aligned block back to the next aligned request, so one decoder per
/// member or file could leave a 46 KiB hole behind each (12 MB after
/// 4,000 archives).
pub struct MembersReader<R: std::io::Read> {
    decoder: GzDecoder<Input<R>>,
    /// Every member is read (or the input ended).
    done: bool,
    member_start: u64,
    newline_due: bool,
    damage: Vec<String>,
}

impl<R: std::io::Read> MembersReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            decoder: GzDecoder::new(Input::new(inner)),
            done: false,
            member_start: 0,
            newline_due: false,
            damage: Vec::new(),
        }
    }

    /// Read another file from its start, keeping the decoder's state and
    /// buffer (and forgetting the previous file's damage).
    pub fn reuse(&mut self, inner: R) {
        let mut input = self.decoder.reset(Input::detached());
        input.restart(inner);
        self.decoder.reset(input);
        self.done = false;
        self.member_start = 0;
        self.newline_due = false;
        self.damage.clear();
    }

    /// What could not be read: one entry per damaged stretch, with the
    /// byte offset (in the compressed file) where it starts.
    pub fn damage(&self) -> &[String] {
        &self.damage
    }

    /// Take the input out of the decoder (which is reset on the way).
    fn take_input(&mut self) -> Input<R> {
        self.decoder.reset(Input::detached())
    }

    /// Start the next member at the input's position, unless at its end.
    fn next_member(&mut self, mut input: Input<R>) -> std::io::Result<()> {
        let at_end = input.peek(1)?.is_empty();
        self.member_start = input.position;
        self.decoder.reset(input);
        self.done = at_end;
        Ok(())
    }
}

impl<R: std::io::Read> std::io::Read for MembersReader<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            if self.newline_due {
                self.newline_due = false;
                out[0] = b'\n';
                return Ok(1);
            }
            if self.done {
                return Ok(0);
            }
            // Small steps: a step that runs into damage returns an error
            // and none of what it decoded, so a step is what damage costs.
            let step = out.len().min(8 * 1024);
            match self.decoder.read(&mut out[..step]) {
                Ok(0) => {
                    let input = self.take_input();
                    self.next_member(input)?;
                }
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.damage.push(format!(
                        "damaged gzip data at byte {} ({e})",
                        self.member_start
                    ));
                    let mut input = self.take_input();
                    // Always move on, even when the decoder took nothing.
                    if input.position == self.member_start {
                        input.consume_one()?;
                    }
                    input.skip_to_member_start()?;
                    self.newline_due = true;
                    self.next_member(input)?;
                }
            }
        }
    }
}

/// A buffered reader that knows its position and can look a few bytes
/// ahead across a refill (to find a member's magic bytes).
struct Input<R> {
    /// `None`: a stand-in while the real input is out of the decoder.
    inner: Option<R>,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes consumed so far: the offset of `buf[start]` in the file.
    position: u64,
}

impl<R: std::io::Read> Input<R> {
    fn new(inner: R) -> Self {
        Self {
            inner: Some(inner),
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            position: 0,
        }
    }

    /// Nothing to read, and no buffer: what the decoder holds while the
    /// real input is taken out.
    fn detached() -> Self {
        Self {
            inner: None,
            buf: Box::default(),
            start: 0,
            end: 0,
            position: 0,
        }
    }

    /// Read `inner` from its start, keeping the buffer.
    fn restart(&mut self, inner: R) {
        if self.buf.is_empty() {
            self.buf = vec![0; 64 * 1024].into_boxed_slice();
        }
        self.inner = Some(inner);
        self.start = 0;
        self.end = 0;
        self.position = 0;
    }

    /// At least `n` buffered bytes, fewer only at the end of the input.
    fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.end - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if let Some(inner) = self.inner.as_mut() {
                while self.end < n {
                    match inner.read(&mut self.buf[self.end..]) {
                        Ok(0) => break,
                        Ok(read) => self.end += read,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        Ok(&self.buf[self.start..self.end])
    }

    fn consume_one(&mut self) -> std::io::Result<()> {
        if !self.peek(1)?.is_empty() {
            std::io::BufRead::consume(self, 1);
        }
        Ok(())
    }

    /// Skip to the next `1f 8b 08` (gzip magic, deflate), or to the end.
    fn skip_to_member_start(&mut self) -> std::io::Result<()> {
        loop {
            let available = self.peek(3)?;
            if available.len() < 3 {
                let all = available.len();
                std::io::BufRead::consume(self, all);
                return Ok(());
            }
            match memchr::memchr(0x1f, available) {
                Some(i) if i + 3 <= available.len() => {
                    if available[i..i + 3] == [0x1f, 0x8b, 0x08] {
                        std::io::BufRead::consume(self, i);
                        return Ok(());
                    }
                    std::io::BufRead::consume(self, i + 1);
                }
                // Near the buffer's end: keep it, and look again after a refill.
                Some(i) => {
                    std::io::BufRead::consume(self, i);
                    self.peek(self.buf.len())?;
                    if self.end - self.start < 3 {
                        let all = self.end - self.start;
                        std::io::BufRead::consume(self, all);
                        return Ok(());
                    }
                }
                None => {
                    let all = available.len();
                    std::io::BufRead::consume(self, all);
                }
            }
        }
    }
}

impl<R: std::io::Read> std::io::Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = std::io::BufRead::fill_buf(self)?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::Read> std::io::BufRead for Input<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.start == self.end {
            self.peek(1)
        } else {
            Ok(&self.buf[self.start..self.end])
        }
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.position += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_accumulate_and_zcat_style_reading_sees_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/messages-2026-03-23.jsonl.gz");
        append_member(&path, &[b"one", b"two"], true).unwrap();
        append_member(&path, &[b"three"], true).unwrap();
        let read = read_lines(&path).unwrap();
        assert_eq!(
            read.lines,
            vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
        );
        assert!(read.damage.is_empty());
        // flate2's own multi-member reader agrees (what zcat does).
        let mut all = String::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_string(&mut all)
            .unwrap();
        assert_eq!(all, "one\ntwo\nthree\n");
    }

    #[test]
    fn a_damaged_member_is_reported_and_later_members_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl.gz");
        append_member(&path, &[b"first"], false).unwrap();
        let good_len = std::fs::metadata(&path).unwrap().len() as usize;
        append_member(&path, &[b"second"], false).unwrap();
        append_member(&path, &[b"third"], false).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        // Corrupt the middle member's deflate data.
        bytes[good_len + 12] ^= 0xff;
        bytes[good_len + 13] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let read = read_lines(&path).unwrap();
        assert_eq!(read.lines.first().unwrap(), b"first");
        assert_eq!(read.lines.last().unwrap(), b"third");
        assert_eq!(read.damage.len(), 1);
    }

    #[test]
    fn an_archive_cut_in_half_keeps_what_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl.gz");
        append_member(&path, &[b"first"], false).unwrap();
        let lines: Vec<Vec<u8>> = (0..2000)
            .map(|i| format!("line {i}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = lines.iter().map(|l| l.as_slice()).collect();
        append_member(&path, &refs, false).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let read = read_lines(&path).unwrap();
        assert_eq!(read.lines[0], b"first");
        assert_eq!(read.damage.len(), 1);
    }

    fn streamed(path: &Path) -> (Vec<u8>, Vec<String>) {
        let mut reader = MembersReader::new(std::fs::File::open(path).unwrap());
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        (out, reader.damage().to_vec())
    }

    #[test]
    fn streaming_reads_every_member_and_skips_a_damaged_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl.gz");
        append_member(&path, &[b"first"], false).unwrap();
        let good_len = std::fs::metadata(&path).unwrap().len() as usize;
        let middle: Vec<Vec<u8>> = (0..3000)
            .map(|i| format!("middle {i}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = middle.iter().map(Vec::as_slice).collect();
        append_member(&path, &refs, false).unwrap();
        append_member(&path, &[b"third"], false).unwrap();
        let (clean, damage) = streamed(&path);
        assert!(damage.is_empty());
        assert!(
            clean.starts_with(b"first\nmiddle 0\n") && clean.ends_with(b"middle 2999\nthird\n")
        );
        let mut bytes = std::fs::read(&path).unwrap();
        let at = good_len + (bytes.len() - good_len) / 2;
        for b in &mut bytes[at..at + 8] {
            *b ^= 0x5a;
        }
        std::fs::write(&path, &bytes).unwrap();
        let (out, damage) = streamed(&path);
        assert_eq!(damage.len(), 1, "{damage:?}");
        assert!(
            damage[0].contains(&format!("byte {good_len}")),
            "{damage:?}"
        );
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with("first\nmiddle 0\n"),
            "what decoded before the damage is kept"
        );
        assert!(
            text.ends_with("\nthird\n"),
            "the member after the damage is read: {}",
            &text[text.len() - 40..]
        );
    }

    #[test]
    fn a_reused_reader_reads_the_next_file_whole_and_forgets_old_damage() {
        let dir = tempfile::tempdir().unwrap();
        let cut = dir.path().join("cut.jsonl.gz");
        let lines: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("line {i}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        append_member(&cut, &refs, false).unwrap();
        let bytes = std::fs::read(&cut).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let whole = dir.path().join("whole.jsonl.gz");
        append_member(&whole, &[b"one", b"two"], false).unwrap();
        append_member(&whole, &[b"three"], false).unwrap();

        let mut reader = MembersReader::new(std::fs::File::open(&cut).unwrap());
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(reader.damage().len(), 1);
        for _ in 0..2 {
            reader.reuse(std::fs::File::open(&whole).unwrap());
            out.clear();
            reader.read_to_end(&mut out).unwrap();
            assert_eq!(out, b"one\ntwo\nthree\n");
            assert!(reader.damage().is_empty(), "{:?}", reader.damage());
        }
        reader.reuse(std::fs::File::open(&cut).unwrap());
        out.clear();
        reader.read_to_end(&mut out).unwrap();
        assert!(out.starts_with(b"line 0\nline 1\n"));
        assert_eq!(reader.damage().len(), 1);
    }

    #[test]
    fn streaming_a_cut_archive_keeps_its_start_and_reports_the_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl.gz");
        let lines: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("line {i}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        append_member(&path, &refs, false).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let (out, damage) = streamed(&path);
        assert_eq!(damage.len(), 1);
        assert!(out.starts_with(b"line 0\nline 1\n"));
        // Trailing garbage that is not gzip is damage too, and ends reading.
        std::fs::write(&path, [bytes.as_slice(), b"garbage"].concat()).unwrap();
        let (out, damage) = streamed(&path);
        assert_eq!(damage.len(), 1);
        assert!(out.starts_with(b"line 0\n") && out.windows(10).any(|w| w == b"line 4999\n"));
    }
}

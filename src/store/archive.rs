//! Gzip archives of raw log lines: `messages-YYYY-MM-DD.jsonl.gz`.
//!
//! Each write adds one gzip member, so `zcat` prints every line of every
//! write. The new member is added by an atomic rewrite (old bytes + new
//! member → temp file → rename), not an in-place append: a writer killed
//! mid-write then leaves the old archive intact instead of a torn member
//! that would hide every member written after it. A day's archive of one
//! user is small, so copying it is cheap.
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
    let mut out = ArchiveLines::default();
    let Some(bytes) = read_optional(path)? else {
        return Ok(out);
    };
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
                let next = find_member_start(&bytes, offset + 1);
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
    Ok(out)
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
}

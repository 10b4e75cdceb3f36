//! Lines of a log file as bytes: counting newlines, the spans of complete
//! lines, reading a prefix back, the line ranges of a buffer, and a buffer
//! without some of its lines. What a line means is the caller's business.
//!
//! Reads of a file go through [`AlignedReader`], so they also work on a
//! descriptor opened with `O_DIRECT` (a shared file system).

use std::io::{BufRead as _, BufReader};
use std::ops::Range;
use std::path::Path;

use anyhow::Context as _;

use crate::store::fs::open_read;
use crate::store::shared::{AlignedReader, read_exact_at, retry_stale_whole};

/// Whether the file holds more than `limit` newlines; a missing file holds
/// none. Stops reading once it knows. Without a lock, another host may
/// replace the file while we count: a stale handle starts the count over.
pub fn more_lines_than(path: &Path, limit: usize) -> anyhow::Result<bool> {
    retry_stale_whole(path, || count_past(path, limit))
}

fn count_past(path: &Path, limit: usize) -> anyhow::Result<bool> {
    let Some(file) = open_read(path)? else {
        return Ok(false);
    };
    let mut reader = BufReader::with_capacity(64 * 1024, AlignedReader::new(&file));
    let mut lines = 0usize;
    loop {
        let buf = reader
            .fill_buf()
            .with_context(|| format!("could not read {}", path.display()))?;
        if buf.is_empty() {
            return Ok(false);
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        if lines > limit {
            return Ok(true);
        }
        let n = buf.len();
        reader.consume(n);
    }
}

/// The start offset and end (after the newline) of every complete line of
/// `file` (read from its start) whose bytes without the newline `keep`
/// accepts. A last line without its newline is never complete.
pub fn complete_line_spans(
    file: &std::fs::File,
    path: &Path,
    mut keep: impl FnMut(&[u8]) -> bool,
) -> anyhow::Result<Vec<(u64, u64)>> {
    let mut spans = Vec::new();
    let mut reader = BufReader::with_capacity(64 * 1024, AlignedReader::new(file));
    let mut offset = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("could not read {}", path.display()))?;
        if n == 0 {
            break;
        }
        let complete = line.last() == Some(&b'\n');
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        if complete && keep(body) {
            spans.push((offset, offset + n as u64));
        }
        offset += n as u64;
    }
    Ok(spans)
}

/// The first `len` bytes of `file`.
pub fn read_prefix(file: &std::fs::File, path: &Path, len: usize) -> anyhow::Result<Vec<u8>> {
    let mut prefix = vec![0u8; len];
    read_exact_at(file, &mut prefix, 0)
        .with_context(|| format!("could not read {}", path.display()))?;
    Ok(prefix)
}

/// Whether the file at `path` starts with exactly `prefix` (a missing or
/// shorter file does not).
pub fn starts_with(path: &Path, prefix: &[u8]) -> anyhow::Result<bool> {
    let Some(file) = open_read(path)? else {
        return Ok(false);
    };
    let mut now = vec![0u8; prefix.len()];
    Ok(read_exact_at(&file, &mut now, 0).is_ok() && now == prefix)
}

/// The byte range of each non-blank line of `bytes`, without its newline.
pub fn nonblank_line_ranges(bytes: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut start = 0;
    bytes
        .split_inclusive(|&b| b == b'\n')
        .filter_map(move |raw| {
            let end = start + raw.len() - usize::from(raw.ends_with(b"\n"));
            let range = start..end;
            start += raw.len();
            (!bytes[range.clone()].iter().all(u8::is_ascii_whitespace)).then_some(range)
        })
}

/// `bytes` without the lines `drop` picks. `drop` sees each line without
/// its trailing white space (the line break included); kept lines stay
/// byte for byte.
pub fn without_lines(bytes: &[u8], mut drop: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .filter(|line| !drop(line.trim_ascii_end()))
        .flatten()
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines_are_counted_until_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        assert!(!more_lines_than(&path, 0).unwrap(), "a missing file");
        std::fs::write(&path, b"a\nb\nc").unwrap();
        assert!(more_lines_than(&path, 1).unwrap());
        assert!(!more_lines_than(&path, 2).unwrap());
    }

    #[test]
    fn spans_are_complete_kept_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, b"ok\nno\n\nok\nok").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let spans = complete_line_spans(&file, &path, |line| line == b"ok").unwrap();
        assert_eq!(spans, [(0, 3), (7, 10)]);
        assert_eq!(read_prefix(&file, &path, 6).unwrap(), b"ok\nno\n");
        assert!(starts_with(&path, b"ok\nno").unwrap());
        assert!(!starts_with(&path, b"no").unwrap());
        assert!(!starts_with(&dir.path().join("gone"), b"").unwrap());
    }

    #[test]
    fn ranges_skip_blank_lines_and_drop_keeps_the_rest_exact() {
        let bytes = b"a\n \nbc\r\nd";
        let ranges: Vec<_> = nonblank_line_ranges(bytes).collect();
        assert_eq!(ranges, [0..1, 4..7, 8..9]);
        assert_eq!(without_lines(bytes, |line| line == b"bc"), b"a\n \nd");
        assert_eq!(without_lines(bytes, |_| false), bytes);
    }
}

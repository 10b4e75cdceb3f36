//! Reading lines from the end of a file, in blocks, so that the cost of
//! "the last N messages" does not grow with the file.

use std::fs::File;
use std::io;

/// Default block size: large enough that ten chat messages usually take one read.
pub const BLOCK_SIZE: usize = 64 * 1024;

/// Yields the lines of a file from last to first, without their newlines.
/// A final line without a newline (a torn write) is yielded as it is.
/// Each item carries the byte offset at which the line starts.
pub struct ReverseLines {
    file: File,
    /// Bytes `[start, start + pending.len())` of the file, not yet yielded.
    pending: Vec<u8>,
    start: u64,
    block: usize,
    done: bool,
}

impl ReverseLines {
    pub fn new(file: File) -> io::Result<Self> {
        Self::with_block_size(file, BLOCK_SIZE)
    }

    pub fn with_block_size(file: File, block: usize) -> io::Result<Self> {
        // Not only the size: on a shared file system the cached size can
        // miss what another host appended a moment ago.
        let len = crate::store::shared::real_len(&file)?;
        let mut lines = Self {
            file,
            pending: Vec::new(),
            start: len,
            block: block.max(1),
            done: len == 0,
        };
        // A final newline ends the last line; it does not start an empty one.
        if len > 0 {
            lines.read_block()?;
            if lines.pending.last() == Some(&b'\n') {
                lines.pending.pop();
            }
        }
        Ok(lines)
    }

    /// Prepend the block before `start`. The block grows with `pending` so a
    /// single huge line is read in a logarithmic number of reads.
    fn read_block(&mut self) -> io::Result<()> {
        let want = self.block.max(self.pending.len()) as u64;
        let size = want.min(self.start) as usize;
        let offset = self.start - size as u64;
        let mut chunk = vec![0u8; size + self.pending.len()];
        crate::store::shared::read_exact_at(&self.file, &mut chunk[..size], offset)?;
        chunk[size..].copy_from_slice(&self.pending);
        self.pending = chunk;
        self.start = offset;
        Ok(())
    }
}

impl Iterator for ReverseLines {
    type Item = io::Result<(u64, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            if let Some(i) = self.pending.iter().rposition(|&b| b == b'\n') {
                let line = self.pending.split_off(i + 1);
                self.pending.pop(); // the newline before `line`
                return Some(Ok((self.start + i as u64 + 1, line)));
            }
            if self.start == 0 {
                self.done = true;
                return Some(Ok((0, std::mem::take(&mut self.pending))));
            }
            if let Err(e) = self.read_block() {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

/// The last `n` lines of a file, first to last.
pub fn tail_lines(file: File, n: usize) -> io::Result<Vec<Vec<u8>>> {
    let mut lines = ReverseLines::new(file)?
        .take(n)
        .map(|item| item.map(|(_, line)| line))
        .collect::<io::Result<Vec<_>>>()?;
    lines.reverse();
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn file_with(content: &[u8]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(content).unwrap();
        file
    }

    fn reversed(content: &[u8], block: usize) -> Vec<(u64, Vec<u8>)> {
        ReverseLines::with_block_size(file_with(content), block)
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn lines_come_last_first_with_offsets() {
        for block in [1, 2, 3, 7, 64 * 1024] {
            assert_eq!(
                reversed(b"ab\ncd\nef\n", block),
                vec![
                    (6, b"ef".to_vec()),
                    (3, b"cd".to_vec()),
                    (0, b"ab".to_vec())
                ],
                "block {block}"
            );
        }
    }

    #[test]
    fn torn_last_line_and_empty_lines() {
        assert_eq!(
            reversed(b"a\n\nb", 2),
            vec![(3, b"b".to_vec()), (2, b"".to_vec()), (0, b"a".to_vec())]
        );
        assert!(reversed(b"", 4).is_empty());
        assert_eq!(reversed(b"\n", 4), vec![(0, b"".to_vec())]);
    }

    #[test]
    fn tail_equals_the_end_of_a_full_read() {
        let content: Vec<u8> = (0..500)
            .flat_map(|i| format!("line {i} {}\n", "x".repeat(i % 37)).into_bytes())
            .collect();
        let all: Vec<&[u8]> = content.split(|&b| b == b'\n').collect();
        let all = &all[..all.len() - 1];
        for n in [0, 1, 10, 499, 500, 600] {
            let tail = tail_lines(file_with(&content), n).unwrap();
            let expected: Vec<Vec<u8>> = all[all.len().saturating_sub(n)..]
                .iter()
                .map(|l| l.to_vec())
                .collect();
            assert_eq!(tail, expected, "n = {n}");
        }
    }
}

//! Appending whole lines to a log file.
//!
//! The caller holds the lock of the file's owner. One record is one
//! `write` of the complete line, so a concurrent reader never sees half a
//! record from a living writer; a writer killed mid-line leaves a fragment
//! without a final newline, and the next append starts with a newline so
//! the new record is never glued to it.

use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::Path;

use anyhow::{Context as _, bail};

use crate::store::fs::{open_append, open_creating_parent, sync_dir};

/// Append each of `lines` (without newlines) as one record, in one write.
pub fn append_lines(path: &Path, lines: &[&[u8]], fsync: bool) -> anyhow::Result<()> {
    for line in lines {
        if line.contains(&b'\n') {
            bail!(
                "a record for {} holds a newline; a record must be a single line",
                path.display()
            );
        }
    }
    let mut file = open_creating_parent(path, open_append)?;
    let meta = file
        .metadata()
        .with_context(|| format!("could not stat {}", path.display()))?;
    // A second name for the log (a hard link) would receive every line
    // too, wherever it is.
    if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
        bail!(
            "refused to append to {}: it has {} hard links, so every line would also \
             appear under another name; copy it to a file of its own (cp, then mv over it)",
            path.display(),
            std::os::unix::fs::MetadataExt::nlink(&meta)
        );
    }
    let len = meta.len();
    let mut buffer = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum::<usize>() + 1);
    if len > 0 && !ends_with_newline(&file, len)? {
        buffer.push(b'\n');
    }
    for line in lines {
        buffer.extend_from_slice(line);
        buffer.push(b'\n');
    }
    if let Err(e) = file.write_all(&buffer) {
        // A short write (a full disk) must not leave a torn fragment: cut
        // the file back to where it was. We hold the owner's lock.
        let _ = file.set_len(len);
        return Err(e).with_context(|| format!("could not append to {}", path.display()));
    }
    if fsync {
        file.sync_data()
            .with_context(|| format!("could not sync {}", path.display()))?;
        // A new file's folder entry must survive a power cut too.
        if len == 0
            && let Some(parent) = path.parent()
        {
            sync_dir(parent)?;
        }
    }
    Ok(())
}

fn ends_with_newline(file: &std::fs::File, len: u64) -> anyhow::Result<bool> {
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)
        .context("could not read the last byte of the log")?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torn_fragment_gets_a_newline_before_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n{\"torn").unwrap();
        append_lines(&path, &[b"{\"b\":2}"], false).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"{\"a\":1}\n{\"torn\n{\"b\":2}\n"
        );
    }

    #[test]
    fn several_lines_in_one_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/m.jsonl");
        append_lines(&path, &[b"1", b"2"], true).unwrap();
        append_lines(&path, &[b"3"], true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"1\n2\n3\n");
    }

    #[test]
    fn a_line_with_a_newline_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(append_lines(&dir.path().join("m"), &[b"a\nb"], false).is_err());
    }
}

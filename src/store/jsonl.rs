//! Appending whole lines to a log file.
//!
//! The caller holds the file's lock: its owner's for a chat log, the
//! ledger lock for a cost ledger, the failure log's own for that log. One
//! record is one `write` of the complete line, so a concurrent reader
//! never sees half a record from a living writer; a writer killed
//! mid-line leaves a fragment without a final newline, and the next
//! append starts with a newline so the new record is never glued to it.

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
    // A fresh read on a shared file system lists the folder first only for
    // the files it knows are appended in place (`store::shared`).
    debug_assert!(
        crate::store::shared::appended_in_place(path),
        "{} is appended in place but not named .jsonl",
        path.display()
    );
    if crate::store::shared::applies_to(path) {
        return crate::store::shared::retry_stale(path, || append_shared(path, lines))
            .with_context(|| format!("could not append to {}", path.display()));
    }
    let mut file = open_creating_parent(path, open_append)?;
    let meta = file
        .metadata()
        .with_context(|| format!("could not stat {}", path.display()))?;
    refuse_hard_linked(path, &meta)?;
    let len = meta.len();
    let buffer = record(lines, len > 0 && !ends_with_newline(&file, len)?);
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

/// The bytes of one append: the lines, each ending in a newline, after a
/// newline that ends a torn fragment left by a killed writer.
fn record(lines: &[&[u8]], after_fragment: bool) -> Vec<u8> {
    let mut buffer = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum::<usize>() + 1);
    if after_fragment {
        buffer.push(b'\n');
    }
    for line in lines {
        buffer.extend_from_slice(line);
        buffer.push(b'\n');
    }
    buffer
}

/// An append on a shared file system (see `store::shared`). The client's
/// cached size and name may be a second old, so: open the file the name
/// points to on the server (`shared::open_fresh`); find its real end by reading past the cached size; write;
/// always sync (the lock is released after this returns, and another host
/// must then find the line on the server, not in our write cache); then
/// read the line back through the path. An append that cannot be confirmed
/// is an error, and leaves nothing behind in the file the path names.
/// A second name for the log (a hard link) would receive every line too,
/// wherever it is.
fn refuse_hard_linked(path: &Path, meta: &std::fs::Metadata) -> anyhow::Result<()> {
    let links = std::os::unix::fs::MetadataExt::nlink(meta);
    if links > 1 {
        bail!(
            "refused to append to {}: it has {links} hard links, so every line would also \
             appear under another name; copy it to a file of its own (cp, then mv over it)",
            path.display(),
        );
    }
    Ok(())
}

fn append_shared(path: &Path, lines: &[&[u8]]) -> std::io::Result<()> {
    use crate::store::shared;
    use std::os::unix::fs::MetadataExt as _;
    let stale = || std::io::Error::from_raw_os_error(libc::ESTALE);
    // The file the name points to on the server: the append below must
    // open the same one.
    let reader = shared::open_fresh(path)?;
    let mut file = match open_append(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::store::fs::ensure_parent(path).map_err(std::io::Error::other)?;
            open_append(path)?
        }
        other => other?,
    };
    let meta = file.metadata()?;
    refuse_hard_linked(path, &meta).map_err(std::io::Error::other)?;
    let ino = meta.ino();
    let reader = match reader {
        Some(reader) => reader,
        None => shared::open_fresh(path)?.ok_or_else(stale)?, // we created it
    };
    if reader.metadata()?.ino() != ino {
        return Err(stale()); // opened what the name pointed to before
    }
    // The real end and its last byte, read past the cached size.
    let cached = reader.metadata()?.len();
    let from = cached.saturating_sub(1);
    let mut tail = Vec::new();
    shared::read_to_end_at(&reader, from, &mut tail)?;
    let (end, last) = if tail.is_empty() && from > 0 {
        // Cached bigger than real: the file shrank. Read it all.
        shared::read_to_end_at(&reader, 0, &mut tail)?;
        (tail.len() as u64, tail.last().copied())
    } else {
        (from + tail.len() as u64, tail.last().copied())
    };
    let buffer = record(lines, last.is_some_and(|b| b != b'\n'));
    let written = file.write_all(&buffer).and_then(|()| file.sync_data());
    if let Err(e) = written {
        cut_back_if_ours(&reader, &file, end, &buffer);
        return Err(e);
    }
    if end == 0
        && let Some(parent) = path.parent()
    {
        std::fs::File::open(parent)?.sync_all()?;
    }
    // Confirm through the path: a fresh open says the name still points
    // to the file written, and the server has the record at the end found
    // before (read with O_DIRECT).
    if shared::current_inode(path)? != Some(ino) {
        // The record went to a file no name points to: write it again to
        // the file the name points to now.
        return Err(stale());
    }
    let mut back = vec![0u8; buffer.len()];
    if shared::read_exact_at(&reader, &mut back, end).is_err() || back != buffer {
        cut_back_if_ours(&reader, &file, end, &buffer);
        return Err(std::io::Error::other(
            "the record read back through the path is not the one written; it may or may not \
             be in the log (a redelivery with the same --msg-id is recognised)",
        ));
    }
    Ok(())
}

/// Undo a failed append, but only when what follows `end` is a piece of
/// our own record and nothing else: if `end` came from a stale read,
/// another host's committed lines sit there, and cutting would delete them.
fn cut_back_if_ours(reader: &std::fs::File, file: &std::fs::File, end: u64, buffer: &[u8]) {
    let mut after = Vec::new();
    if crate::store::shared::read_to_end_at(reader, end, &mut after).is_ok()
        && !after.is_empty()
        && buffer.starts_with(&after)
    {
        let _ = file.set_len(end);
        let _ = file.sync_data();
    }
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

    /// The shared-file-system path, run on a local disk: the same bytes,
    /// torn fragments ended, and the record read back.
    #[test]
    fn the_shared_path_appends_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/m.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        append_shared(&path, &[b"1", b"2"]).unwrap();
        append_shared(&path, &[b"3"]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"1\n2\n3\n");
        // A fragment, and a file past one aligned block.
        let long = vec![b'x'; 5000];
        std::fs::write(&path, [long.as_slice(), b"\n{\"torn"].concat()).unwrap();
        append_shared(&path, &[b"{\"b\":2}"]).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [long.as_slice(), b"\n{\"torn\n{\"b\":2}\n"].concat()
        );
    }

    #[test]
    fn a_line_with_a_newline_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(append_lines(&dir.path().join("m"), &[b"a\nb"], false).is_err());
    }
}

//! Reading and writing past the client caches of a shared file system.
//!
//! Measured on GlusterFS (two FUSE mounts of one volume, default options;
//! `tests/shared-fs/`), what one host's client caches for about a second
//! after another host changed a file:
//! - the file's size: a plain read ends where the cached size ends, so
//!   lines another host appended are missing. A read with `O_DIRECT`
//!   (after a sync of the descriptor), carried on to a short read, reads
//!   past it. GlusterFS may pass `O_DIRECT` to the server's disk, so every
//!   such read is aligned;
//! - the name: after another host renamed a new file over it, the name
//!   still leads to the old file for up to a second. Opening it then fails,
//!   or the sync of the descriptor does: `ESTALE`, or `ENOENT` from the sync
//!   (the old file is gone on the server). Measured in the suite with the
//!   old file held open by a third process on either host too: never the
//!   old content, always one of those errors. Retrying the open does not
//!   help until the cache expires; listing the folder does (the client looks
//!   its names up again). A name that was absent is looked up afresh every
//!   time (no negative caching by default): a file another host just
//!   created is found by the open itself;
//! - a file appended in place keeps its inode, and its content as the
//!   client read it last (GlusterFS's quick-read caches whole small files,
//!   and serves even `O_DIRECT` reads from there for a second): measured,
//!   an `O_DIRECT` read and sync missed a line appended through the other
//!   mount 30 times in 30. Listing the folder first made it 0 in 30 (the
//!   listing brings the files' new sizes and times, and the cached content
//!   is dropped). Nothing cheaper found did it (a stat of the path or of
//!   the open file, forced or not, an extended attribute, a second read).
//!
//! So on a shared file system (`filesystem::is_shared`), reads open with
//! `O_DIRECT`, sync, and read to the real end; a stale name shows as an
//! error there, and only then is the folder listed and the open retried.
//! The files appended in place (our `.jsonl` logs and ledgers) have their
//! folder listed before every read, and each lives in a folder of one
//! person's files (or a small shared one, `costs/`): listing costs a server
//! round trip per entry, and `ltm/users/` holds one entry per person, so
//! no read lists a folder that grows with the number of people.
//! An append or a rewrite is always synced and confirmed through the path
//! before it is reported done; and `ESTALE` is retried, after listing the
//! folder, until the lock deadline. On a local disk none of this runs.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long to retry a stale handle, in ms: the lock deadline
/// (`durability.lockTimeoutMs`), set when the state dir is opened.
static STALE_RETRY_MS: AtomicU64 = AtomicU64::new(10_000);

pub fn set_stale_retry(limit: Duration) {
    STALE_RETRY_MS.store(limit.as_millis() as u64, Ordering::Relaxed);
}

/// When a stale handle met now stops being retried: the lock deadline
/// from now.
pub fn stale_deadline() -> Instant {
    Instant::now() + Duration::from_millis(STALE_RETRY_MS.load(Ordering::Relaxed))
}

/// Read size for `O_DIRECT` reads, a multiple of [`ALIGN`].
const CHUNK: usize = 256 * 1024;

/// Offsets and lengths of `O_DIRECT` reads are multiples of this (4096
/// covers every block size), and so are buffer addresses.
const ALIGN: usize = 4096;

pub fn is_stale(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ESTALE)
}

/// Whether files in the folder of `path` need the careful path.
pub fn applies_to(path: &Path) -> bool {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => crate::store::filesystem::is_shared(dir),
        _ => crate::store::filesystem::is_shared(Path::new(".")),
    }
}

/// Run `op` until it does not fail with `ESTALE`, listing the folder of
/// `path` before each retry, for at most the lock deadline. A stale handle
/// after that is returned as the error it is.
pub fn retry_stale<T>(path: &Path, mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let deadline = stale_deadline();
    let mut pause = Duration::from_millis(1);
    loop {
        match op() {
            Err(e) if is_stale(&e) && Instant::now() < deadline => {
                if let Some(dir) = path.parent() {
                    let _ = list(dir);
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// [`retry_stale`] for a longer operation (a read from the end that opens
/// and reads in steps): retried whole while its error is a stale handle.
pub fn retry_stale_whole<T>(
    path: &Path,
    mut op: impl FnMut() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut failure = None;
    let outcome = retry_stale(path, || match op() {
        Ok(value) => Ok(Some(value)),
        Err(e) => {
            let stale = e
                .chain()
                .any(|cause| cause.downcast_ref::<io::Error>().is_some_and(is_stale));
            failure = Some(e);
            if stale {
                Err(io::Error::from_raw_os_error(libc::ESTALE))
            } else {
                Ok(None)
            }
        }
    });
    match (outcome, failure) {
        (Ok(Some(value)), _) => Ok(value),
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
        (Ok(None), None) => unreachable!("no value and no error"),
    }
}

/// List `dir`, so the client looks all its names up again: what makes a
/// stale name (module comment) lead to the file it names on the server.
/// It costs a round trip per entry, so it runs only after a sign of one.
pub fn list(dir: &Path) -> io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        entry?;
    }
    Ok(())
}

/// The inode `path` names now, on the server: the file opened and synced
/// as [`open_fresh`] does (a stale name fails there, and the folder is
/// listed before the next try); `None` when there is none.
pub fn current_inode(path: &Path) -> io::Result<Option<u64>> {
    match open_fresh(path)? {
        Some(file) => Ok(Some(file.metadata()?.ino())),
        None => Ok(None),
    }
}

/// Open `path` read-only past the caches: the folder listed first for a
/// file appended in place, then `O_DIRECT` (plain, when the file system
/// refuses it), then a sync of the open file. Reads of it go through
/// [`read_to_end_at`] and [`read_exact_at`], which keep to aligned ranges.
/// A name the client has cached from before another host replaced the file
/// fails the open or the sync (module comment): then the folder is listed
/// and the open tried again, so the file returned is the one the name
/// points to on the server. `None` when there is none.
pub fn open_fresh(path: &Path) -> io::Result<Option<File>> {
    let in_place = appended_in_place(path);
    retry_stale(path, || {
        if in_place && let Some(dir) = path.parent() {
            list(dir)?;
        }
        open_synced(path)
    })
}

/// Whether `path` is a file appended in place: a `.jsonl` log or ledger.
/// Its folder is listed before every fresh read (module comment), so it
/// must live in a folder that does not grow with the number of people.
pub fn appended_in_place(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// One try of [`open_fresh`]. Every sign of a stale name is `ESTALE`, which
/// [`retry_stale`] answers by listing the folder and trying again.
fn open_synced(path: &Path) -> io::Result<Option<File>> {
    let stale = || io::Error::from_raw_os_error(libc::ESTALE);
    let file = match open_direct(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Absent on the server (a missing name is looked up afresh), or
            // a cached name whose open reached the server and found its
            // old file gone: then the name is still there for a stat.
            return match std::fs::symlink_metadata(path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
                Ok(_) => Err(stale()),
            };
        }
        Err(e) => return Err(e),
    };
    // Measured: `O_DIRECT` alone still missed appended lines now and then;
    // with the sync too, never (it makes GlusterFS's client drop what it
    // cached about the file). And a stale name fails here.
    match file.sync_all() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(stale()),
        other => other?,
    }
    // An old file another process still holds open has no name left.
    if file.metadata()?.nlink() == 0 {
        return Err(stale());
    }
    Ok(Some(file))
}

fn open_direct(path: &Path) -> io::Result<File> {
    let open = |direct: i32| super::regular::open(path, direct);
    match open(libc::O_DIRECT) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => open(0),
        other => other,
    }
}

/// The whole file, to its real end. `None` when it does not exist.
pub fn read_fresh(path: &Path) -> io::Result<Option<Vec<u8>>> {
    retry_stale(path, || {
        let Some(file) = open_fresh(path)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        read_to_end_at(&file, 0, &mut bytes)?;
        Ok(Some(bytes))
    })
}

/// Append to `out` the bytes from `offset` to the real end of the file,
/// not to the size the client has cached. Reads are 4096-aligned in offset
/// and length: GlusterFS passes `O_DIRECT` on to the server's own disk,
/// which refuses unaligned reads; a read shorter than asked is the end.
pub fn read_to_end_at(file: &File, offset: u64, out: &mut Vec<u8>) -> io::Result<()> {
    let mut buffer = AlignedBuffer::new(CHUNK);
    let mut position = offset - offset % ALIGN as u64;
    let mut skip = (offset - position) as usize;
    loop {
        let n = match file.read_at(buffer.as_mut(), position) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n > skip {
            out.extend_from_slice(&buffer.as_mut()[skip..n]);
        }
        skip = skip.saturating_sub(n);
        if n < CHUNK {
            return Ok(());
        }
        position += n as u64;
    }
}

/// `FileExt::read_exact_at` for a file that may be open with `O_DIRECT`:
/// reads the aligned range around `buf` and copies out its part.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let start = offset - offset % ALIGN as u64;
    let end = (offset + buf.len() as u64).div_ceil(ALIGN as u64) * ALIGN as u64;
    let mut aligned = AlignedBuffer::new((end - start) as usize);
    let skip = (offset - start) as usize;
    let mut got = 0;
    // Stop as soon as `buf` is covered, and after a read that ends off the
    // alignment (the end of the file): a read from there would be
    // unaligned, and refused if another host has appended meanwhile.
    while got < skip + buf.len() {
        match file.read_at(&mut aligned.as_mut()[got..], start + got as u64) {
            Ok(0) => break,
            Ok(n) => {
                got += n;
                if got % ALIGN != 0 {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if got < skip + buf.len() {
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
    }
    buf.copy_from_slice(&aligned.as_mut()[skip..skip + buf.len()]);
    Ok(())
}

/// Sequential reads of a file that may be open with `O_DIRECT`, from the
/// start to the real end, every read aligned ([`read_to_end_at`] says
/// why). Wrap it in a `BufReader` to read lines.
pub struct AlignedReader<'a> {
    file: &'a File,
    buffer: AlignedBuffer,
    /// File offset of `buffer`'s first byte, and how many bytes it holds.
    start: u64,
    filled: usize,
    /// File offset of the next byte to hand out.
    position: u64,
}

impl<'a> AlignedReader<'a> {
    pub fn new(file: &'a File) -> Self {
        Self {
            file,
            buffer: AlignedBuffer::new(CHUNK),
            start: 0,
            filled: 0,
            position: 0,
        }
    }
}

impl io::Read for AlignedReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.position >= self.start + self.filled as u64 {
            // Refill from the aligned offset at or before the position: the
            // last block may have grown since (another host's append).
            self.start = self.position - self.position % ALIGN as u64;
            self.filled = loop {
                match self.file.read_at(self.buffer.as_mut(), self.start) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other?,
                }
            };
            if self.position >= self.start + self.filled as u64 {
                return Ok(0);
            }
        }
        let from = (self.position - self.start) as usize;
        let n = out.len().min(self.filled - from);
        out[..n].copy_from_slice(&self.buffer.as_mut()[from..from + n]);
        self.position += n as u64;
        Ok(n)
    }
}

/// The real length of an open file: its size, plus whatever a read past
/// the size still finds (another host's appends the cache has not seen).
pub fn real_len(file: &File) -> io::Result<u64> {
    let cached = file.metadata()?.len();
    let mut extra = Vec::new();
    read_to_end_at(file, cached, &mut extra)?;
    Ok(cached + extra.len() as u64)
}

/// After a write that went to `written` (an open file), make sure `path`
/// names that file now, so the write is in the file others read.
pub fn confirm_names(path: &Path, written: &File) -> anyhow::Result<()> {
    let ino = written.metadata()?.ino();
    let named = retry_stale(path, || current_inode(path))?;
    if named != Some(ino) {
        anyhow::bail!(
            "could not confirm the write to {}: right after it, the name points to \
             another file (a writer that does not take the lock replaced it?)",
            path.display()
        );
    }
    Ok(())
}

/// A heap buffer aligned for `O_DIRECT` (4096 covers every block size).
struct AlignedBuffer {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuffer {
    fn new(len: usize) -> Self {
        let bytes = vec![0u8; len + ALIGN];
        let start = bytes.as_ptr().align_offset(ALIGN);
        Self { bytes, start, len }
    }

    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn fresh_reads_get_every_byte_and_missing_files_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        assert!(read_fresh(&path).unwrap().is_none());
        let content: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
        std::fs::write(&path, &content).unwrap();
        assert_eq!(read_fresh(&path).unwrap().unwrap(), content);
        let file = open_fresh(&path).unwrap().unwrap();
        assert_eq!(real_len(&file).unwrap(), content.len() as u64);
    }

    #[test]
    fn the_aligned_reader_reads_every_byte_in_order() {
        use std::io::Read as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        let content: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let file = open_fresh(&path).unwrap().unwrap();
        let mut reader = std::io::BufReader::with_capacity(1000, AlignedReader::new(&file));
        let mut all = Vec::new();
        reader.read_to_end(&mut all).unwrap();
        assert_eq!(all, content);
    }

    #[test]
    fn real_len_sees_bytes_appended_after_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        let file = File::open(&path).unwrap();
        let mut writer = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writer.write_all(b"two\n").unwrap();
        assert_eq!(real_len(&file).unwrap(), 8);
    }

    #[test]
    fn a_write_is_confirmed_only_while_the_name_points_to_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, b"a\n").unwrap();
        let file = File::open(&path).unwrap();
        confirm_names(&path, &file).unwrap();
        // Another host replaces the file: the write to the old one is not
        // confirmed.
        std::fs::write(dir.path().join("new"), b"b\n").unwrap();
        std::fs::rename(dir.path().join("new"), &path).unwrap();
        let err = confirm_names(&path, &file).unwrap_err();
        assert!(err.to_string().contains("could not confirm"), "{err}");
    }

    #[test]
    fn a_whole_read_starts_over_on_a_stale_handle_and_keeps_other_errors() {
        let path = Path::new("/nowhere/f");
        let mut attempts = 0;
        let value = retry_stale_whole(path, || {
            attempts += 1;
            if attempts == 1 {
                Err(
                    anyhow::Error::new(io::Error::from_raw_os_error(libc::ESTALE))
                        .context("could not read f"),
                )
            } else {
                Ok("read")
            }
        })
        .unwrap();
        assert_eq!((value, attempts), ("read", 2));
        let err = retry_stale_whole(path, || -> anyhow::Result<()> { anyhow::bail!("broken") })
            .unwrap_err();
        assert_eq!(err.to_string(), "broken");
    }

    #[test]
    fn stale_handles_are_retried_until_they_clear_or_the_deadline_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut attempts = 0;
        let value = retry_stale(&path, || {
            attempts += 1;
            if attempts < 3 {
                Err(io::Error::from_raw_os_error(libc::ESTALE))
            } else {
                Ok(7)
            }
        })
        .unwrap();
        assert_eq!((value, attempts), (7, 3));
        let started = Instant::now();
        set_stale_retry(Duration::from_millis(50));
        let err = retry_stale(&path, || -> io::Result<()> {
            Err(io::Error::from_raw_os_error(libc::ESTALE))
        })
        .unwrap_err();
        set_stale_retry(Duration::from_secs(10));
        assert!(is_stale(&err));
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}

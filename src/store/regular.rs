//! Opening a file to read under the state dir: no link followed, no
//! wait on a FIFO, and nothing but a regular file taken (shared by
//! [`super::fs`] and [`super::shared`]).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// What every open for reading under the state dir is given: no link
/// followed, and no wait on a FIFO (whose open blocks until a writer
/// comes: a FIFO named as a log or archive would hang every reader).
const READ_FLAGS: i32 = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;

/// `path` opened to read with [`READ_FLAGS`] (and `extra`, e.g.
/// `O_DIRECT`), if it is a regular file. A non-blocking open of a file
/// someone holds a write lease on (a Samba oplock, an NFS server's
/// delegation, where this host shares the state dir out) fails with
/// `EWOULDBLOCK` rather than wait for the lease to break: a regular file
/// by its name is then opened again, blocking, as before.
pub fn open(path: &Path, extra: i32) -> io::Result<File> {
    let open = |flags: i32| {
        OpenOptions::new()
            .read(true)
            .custom_flags(flags | extra)
            .open(path)
    };
    let file = match open(READ_FLAGS) {
        Err(e)
            if e.raw_os_error() == Some(libc::EWOULDBLOCK)
                && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) =>
        {
            open(READ_FLAGS & !libc::O_NONBLOCK)?
        }
        other => other?,
    };
    regular_file(file)
}

/// `file`, opened with [`READ_FLAGS`], if it is a regular file (reads
/// block again, as a file's do); else an error that says what stands
/// there. A FIFO, a device or a folder is no file of ours.
fn regular_file(file: File) -> io::Result<File> {
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a folder"
        } else {
            "a FIFO, socket or device"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {what}, not a file; move it away"),
        ));
    }
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)?;
    Ok(file)
}

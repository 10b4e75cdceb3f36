//! Opening a file to read under the state dir: no link followed, no
//! wait on a FIFO, and nothing but a regular file taken (shared by
//! [`super::fs`] and [`super::shared`]).

use std::fs::File;
use std::io;

/// What every open for reading under the state dir is given: no link
/// followed, and no wait on a FIFO (whose open blocks until a writer
/// comes: a FIFO named as a log or archive would hang every reader).
pub const READ_FLAGS: i32 = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;

/// `file`, opened with [`READ_FLAGS`], if it is a regular file (reads
/// block again, as a file's do); else an error that says what stands
/// there. A FIFO, a device or a folder is no file of ours.
pub fn regular_file(file: File) -> io::Result<File> {
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

//! Advisory file locks with a deadline.
//!
//! A lock file is never the data file (rewrites rename over data files, so
//! a lock on one would guard an inode nobody reads any more). A lock file
//! may be removed only by its holder; a waiter that then gets the lock
//! notices that the path names another inode (or none) and starts over, so
//! two processes can never both believe they hold "the" lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::store::fs::open_creating_parent;

pub use crate::error::LockTimeout;

/// An exclusive lock, released when dropped (closing the file releases it).
#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Wait up to `timeout` for the lock. `what` names what it guards, for
    /// the error ("user U123").
    pub fn acquire(path: &Path, timeout: Duration, what: &str) -> anyhow::Result<Self> {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(500);
        loop {
            if let Some(lock) = Self::try_acquire(path)? {
                return Ok(lock);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(anyhow::Error::new(LockTimeout {
                    what: what.to_owned(),
                    path: path.to_owned(),
                    waited: timeout,
                }));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Take the lock if it is free; `Ok(None)` if another process holds it.
    ///
    /// On a shared file system every step can meet another host's change:
    /// the open can find the lock file half-created by another mount
    /// (`EEXIST` through `O_CREAT`) or removed (`ESTALE`, `ENOENT`), and so
    /// can the `flock` and the check that the path still names the file.
    /// Each is a lock file that changed under us: start over, for at most
    /// the stale-handle deadline (`durability.lockTimeoutMs`).
    pub fn try_acquire(path: &Path) -> anyhow::Result<Option<Self>> {
        Self::try_acquire_with(
            path,
            crate::store::shared::stale_deadline(),
            |path| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                    .open(path)
            },
            |file| file.try_lock(),
        )
    }

    /// [`FileLock::try_acquire`] with its open and its `flock` given (so a
    /// test can make them fail as a shared file system does).
    fn try_acquire_with(
        path: &Path,
        deadline: Instant,
        open: impl Fn(&Path) -> std::io::Result<File>,
        lock: impl Fn(&File) -> Result<(), TryLockError>,
    ) -> anyhow::Result<Option<Self>> {
        let mut pause = Duration::from_millis(1);
        // Whether `e` is worth starting over for; if so, after a pause.
        let mut start_over = |e: &anyhow::Error| -> bool {
            let changed = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(changed_under_us)
            });
            if !changed || Instant::now() >= deadline {
                return false;
            }
            // Listing the folder makes a FUSE client look the name up again.
            if let Some(dir) = path.parent() {
                let _ = crate::store::shared::list(dir);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
            true
        };
        loop {
            let file = match open_creating_parent(path, &open) {
                Ok(file) => file,
                Err(e) if start_over(&e) => continue,
                Err(e) => return Err(e.context(format!("could not lock {}", path.display()))),
            };
            let failure = match lock(&file) {
                Ok(()) => match still_linked(&file, path) {
                    // The holder before us may have removed the file: then
                    // our lock is on an orphan inode and guards nothing.
                    Ok(true) => {
                        return Ok(Some(Self {
                            file,
                            path: path.to_owned(),
                        }));
                    }
                    Ok(false) => {
                        anyhow::Error::new(std::io::Error::from_raw_os_error(libc::ESTALE))
                            .context("the lock file was replaced while we took it")
                    }
                    Err(e) => {
                        anyhow::Error::new(e).context("checking that the lock file is still there")
                    }
                },
                Err(TryLockError::WouldBlock) => return Ok(None),
                Err(TryLockError::Error(e)) => anyhow::Error::new(e).context("flock"),
            };
            if !start_over(&failure) {
                return Err(failure.context(format!("could not lock {}", path.display())));
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the lock file while holding it (for erasing a user).
    pub fn remove(self) -> anyhow::Result<()> {
        crate::store::fs::remove_if_exists(&self.path)?;
        drop(self.file);
        Ok(())
    }
}

/// An error that means the lock file changed under us (another host
/// created, removed or replaced it): worth starting over.
fn changed_under_us(e: &std::io::Error) -> bool {
    crate::store::shared::is_stale(e)
        || matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::AlreadyExists
        )
}

/// Whether `path` still names the open lock file; `false` when it names
/// another file or none.
fn still_linked(file: &File, path: &Path) -> std::io::Result<bool> {
    let held = file.metadata()?;
    match std::fs::symlink_metadata(path) {
        Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) if crate::store::shared::is_stale(&e) => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_times_out_then_gets_it_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locks/u.lock");
        let first = FileLock::acquire(&path, Duration::from_secs(1), "user u").unwrap();
        let started = Instant::now();
        let err = FileLock::acquire(&path, Duration::from_millis(100), "user u").unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert!(err.downcast_ref::<LockTimeout>().is_some());
        assert_eq!(
            crate::error::exit_code_of(&err),
            crate::error::Exit::LockTimeout
        );
        drop(first);
        FileLock::acquire(&path, Duration::from_millis(100), "user u").unwrap();
    }

    #[test]
    fn removed_lock_file_is_not_shared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("u.lock");
        let first = FileLock::acquire(&path, Duration::from_secs(1), "user u").unwrap();
        first.remove().unwrap();
        let second = FileLock::try_acquire(&path).unwrap().unwrap();
        assert!(path.exists());
        // A third party gets nothing while the second holds the new inode.
        assert!(FileLock::try_acquire(&path).unwrap().is_none());
        drop(second);
    }

    /// What a GlusterFS mount does when another host removes or creates the
    /// lock file at the same moment: each step fails once in a while.
    #[test]
    fn a_lock_file_changing_under_us_is_started_over_at_every_step() {
        use std::cell::Cell;
        use std::io::{Error, ErrorKind};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inflight/m.lock");
        let real_open = |path: &Path| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
        };
        let later = Instant::now() + Duration::from_secs(5);
        for failing_open in [
            Error::from_raw_os_error(libc::ESTALE),
            Error::from(ErrorKind::AlreadyExists),
            Error::from(ErrorKind::NotFound),
        ] {
            let failures = Cell::new(0);
            let kind = failing_open.raw_os_error();
            let open = |p: &Path| {
                if failures.get() < 2 {
                    failures.set(failures.get() + 1);
                    return Err(match kind {
                        Some(code) => Error::from_raw_os_error(code),
                        None => Error::from(failing_open.kind()),
                    });
                }
                real_open(p)
            };
            let lock = FileLock::try_acquire_with(&path, later, open, |f| f.try_lock())
                .unwrap()
                .expect("free");
            assert_eq!(failures.get(), 2);
            drop(lock);
        }
        // The flock itself: a stale handle, then "no such file".
        let failures = Cell::new(0);
        let lock = FileLock::try_acquire_with(&path, later, real_open, |f| {
            failures.set(failures.get() + 1);
            match failures.get() {
                1 => Err(TryLockError::Error(Error::from_raw_os_error(libc::ESTALE))),
                2 => Err(TryLockError::Error(Error::from(ErrorKind::NotFound))),
                _ => f.try_lock(),
            }
        })
        .unwrap()
        .expect("free");
        assert_eq!(failures.get(), 3);
        // A lock held elsewhere is still "held", not an error.
        assert!(FileLock::try_acquire(&path).unwrap().is_none());
        drop(lock);
        // Past the deadline, the stale handle is the error it is, naming
        // the step.
        let err = FileLock::try_acquire_with(&path, Instant::now(), real_open, |_| {
            Err(TryLockError::Error(Error::from_raw_os_error(libc::ESTALE)))
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("flock"), "{err:#}");
        assert!(err.chain().any(|c| {
            c.downcast_ref::<Error>()
                .is_some_and(crate::store::shared::is_stale)
        }));
        // Other errors are not retried.
        let err = FileLock::try_acquire_with(
            &path,
            later,
            |_| Err(Error::from_raw_os_error(libc::EACCES)),
            |f| f.try_lock(),
        )
        .unwrap_err();
        assert!(format!("{err:#}").contains("could not open"), "{err:#}");
    }
}

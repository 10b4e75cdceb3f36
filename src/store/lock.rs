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

use anyhow::Context as _;

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
    pub fn try_acquire(path: &Path) -> anyhow::Result<Option<Self>> {
        loop {
            // A lock file another host removed (an erase) may give a stale
            // handle for a moment: retried.
            let file = open_creating_parent(path, |path| {
                crate::store::shared::retry_stale(path, || {
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .create(true)
                        .truncate(false)
                        .mode(0o600)
                        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                        .open(path)
                })
            })?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Ok(None),
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("could not lock {}", path.display()));
                }
            }
            // The holder before us may have removed the file: then our lock
            // is on an orphan inode and guards nothing. Start over.
            if still_linked(&file, path)? {
                return Ok(Some(Self {
                    file,
                    path: path.to_owned(),
                }));
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

fn still_linked(file: &File, path: &Path) -> anyhow::Result<bool> {
    let held = file
        .metadata()
        .with_context(|| format!("could not stat lock file {}", path.display()))?;
    match std::fs::symlink_metadata(path) {
        Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) if crate::store::shared::is_stale(&e) => Ok(false),
        Err(e) => Err(e).with_context(|| format!("could not stat {}", path.display())),
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
}

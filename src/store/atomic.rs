//! Atomic rewrite: write a uniquely named temporary file in the same
//! folder, fsync it, rename it over the original, fsync the folder. A
//! reader sees the old file or the new one, never a mix; a killed writer
//! leaves at most a `.*.tmp` file that `maintain` sweeps away.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;

use crate::store::fs::{ensure_parent, sync_dir};

/// Suffix of every temporary file we create; `maintain` removes stale ones.
pub const TEMP_SUFFIX: &str = ".tmp";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name no other process or thread will pick: pid, time and a counter.
fn temp_path_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(
        ".{name}.{}.{nanos:x}.{n}{TEMP_SUFFIX}",
        std::process::id()
    ))
}

/// Replace `path` with `bytes`, atomically. `fsync: false` skips the syncs
/// (config `durability.fsync`), never the rename.
///
/// On a shared file system the syncs always run (another host must find
/// the new file's bytes on the server once our lock is released), and the
/// rename is confirmed: the name must point to the file written.
pub fn write_atomic(path: &Path, bytes: &[u8], fsync: bool) -> anyhow::Result<()> {
    ensure_parent(path)?;
    let shared = crate::store::shared::applies_to(path);
    let fsync = fsync || shared;
    let temp = temp_path_for(path);
    let result = (|| -> anyhow::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp)
            .with_context(|| format!("could not create {}", temp.display()))?;
        file.write_all(bytes)
            .with_context(|| format!("could not write {}", temp.display()))?;
        if fsync {
            file.sync_all()
                .with_context(|| format!("could not sync {}", temp.display()))?;
        }
        crate::store::shared::retry_stale(path, || std::fs::rename(&temp, path))
            .with_context(|| format!("could not replace {}", path.display()))?;
        if shared {
            crate::store::shared::confirm_names(path, &file)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result?;
    if fsync && let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/f.md");
        write_atomic(&path, b"one", true).unwrap();
        write_atomic(&path, b"two", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.md")]);
    }

    #[test]
    fn failed_rename_removes_the_temp() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should be: rename fails.
        let path = dir.path().join("f");
        std::fs::create_dir(path.join("x")).unwrap_or(());
        std::fs::create_dir_all(path.join("sub")).unwrap();
        assert!(write_atomic(&path, b"x", false).is_err());
        let count = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(count, 1, "only the folder `f` remains");
    }

    #[test]
    fn temp_names_are_unique() {
        let p = Path::new("/x/messages.jsonl");
        assert_ne!(temp_path_for(p), temp_path_for(p));
    }
}

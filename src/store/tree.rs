//! Whole folder trees: the bytes under a path, a copy, a removal, and the
//! empty folders under one. Symbolic links are never followed: a link is
//! counted, copied and removed as the link it is (or not at all).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::store::atomic::write_atomic;
use crate::store::fs::{ensure_dir, read_optional, remove_if_exists};

/// Bytes under a path (a file or a folder tree); 0 if missing.
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| disk_usage(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

/// Copy the regular files under `from` (a file or a folder) to the same
/// places under `to`, each written atomically; returns how many. A
/// missing `from` copies nothing; links and special files are left out.
pub fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<usize> {
    let Ok(meta) = std::fs::symlink_metadata(from) else {
        return Ok(0);
    };
    if meta.is_dir() {
        let mut count = 0;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            count += copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(count)
    } else if meta.is_file() {
        if let Some(parent) = to.parent() {
            ensure_dir(parent)?;
        }
        let bytes = read_optional(from)?.unwrap_or_default();
        write_atomic(to, &bytes, false)?;
        Ok(1)
    } else {
        Ok(0)
    }
}

/// Remove a file or a whole folder tree; whether there was one.
pub fn remove_tree(path: &Path) -> anyhow::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path)
            .map(|()| true)
            .with_context(|| format!("could not remove {}", path.display())),
        Ok(_) => remove_if_exists(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("could not stat {}", path.display())),
    }
}

/// Folders under and including `folder` that hold nothing but empty
/// folders, deepest first (the order to remove them in).
pub fn empty_folders(folder: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    collect_empty(folder, &mut out)?;
    Ok(out)
}

/// Returns whether `folder` is empty once its empty subfolders are gone.
fn collect_empty(folder: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<bool> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", folder.display())),
    };
    let mut empty = true;
    for entry in entries {
        // Anything that cannot be looked at (it vanished, or a writer is at
        // work) counts as content: prune errs on the side of keeping.
        match entry.and_then(|e| Ok((e.file_type()?, e.path()))) {
            Ok((kind, path)) if kind.is_dir() => empty &= collect_empty(&path, out)?,
            _ => empty = false,
        }
    }
    if empty {
        out.push(folder.to_owned());
    }
    Ok(empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_count_and_remove_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        std::fs::create_dir_all(from.join("a/empty")).unwrap();
        std::fs::write(from.join("a/f"), b"12345").unwrap();
        std::fs::write(from.join("g"), b"123").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", from.join("link")).unwrap();
        let to = dir.path().join("to");
        assert_eq!(copy_tree(&from, &to).unwrap(), 2);
        assert_eq!(std::fs::read(to.join("a/f")).unwrap(), b"12345");
        assert!(
            to.join("link").symlink_metadata().is_err(),
            "links stay out"
        );
        assert_eq!(disk_usage(&to.join("a/f")), 5);
        assert_eq!(disk_usage(&dir.path().join("missing")), 0);
        assert_eq!(
            empty_folders(&from).unwrap(),
            [from.join("a/empty")],
            "a folder with a file is not empty"
        );
        assert!(remove_tree(&from).unwrap());
        assert!(!remove_tree(&from).unwrap());
        assert!(remove_tree(&to.join("g")).unwrap());
    }
}

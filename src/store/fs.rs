//! Opening files and folders the private way: folders `0700`, files `0600`,
//! data files never followed through a symlink (a planted link must not
//! redirect a chat log somewhere else).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::Path;

use anyhow::Context as _;

/// Create a folder and its parents, each `0700`. The folders it creates
/// are fsynced into their parents, so a new user's folder (and the first
/// message in it) survives a power cut. An existing folder costs one stat.
pub fn ensure_dir(path: &Path) -> anyhow::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    // The nearest existing ancestor: everything below it is new.
    let mut existing = path;
    while let Some(parent) = existing.parent() {
        existing = parent;
        if parent.as_os_str().is_empty() || parent.is_dir() {
            break;
        }
    }
    create_dir_racing(path, |path| {
        DirBuilder::new().recursive(true).mode(0o700).create(path)
    })
    .with_context(|| format!("could not create folder {}", path.display()))?;
    let mut created = path;
    while created != existing {
        let Some(parent) = created.parent() else {
            break;
        };
        if !parent.as_os_str().is_empty() {
            // Best effort: a folder that cannot be opened for sync (some
            // network file systems) is still created.
            let _ = File::open(parent).and_then(|dir| dir.sync_all());
        }
        created = parent;
    }
    Ok(())
}

/// `mkdir` (with its parents) that another host may race. On a FUSE mount
/// (GlusterFS) the loser's `mkdir` says `EEXIST` while its client still
/// believes the name absent, so the standard library's "it is a folder
/// now" check fails and the race surfaces as "File exists". Retried,
/// after listing the parent, until the name is seen as a folder (or, for
/// something else in the way, at once an error), for at most the
/// stale-handle deadline.
fn create_dir_racing(path: &Path, mkdir: impl Fn(&Path) -> io::Result<()>) -> io::Result<()> {
    let deadline = crate::store::shared::stale_deadline();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match mkdir(path) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::AlreadyExists | io::ErrorKind::NotFound
                ) || crate::store::shared::is_stale(&e) =>
            {
                if let Some(parent) = path.parent() {
                    let _ = crate::store::shared::list(parent);
                }
                match std::fs::symlink_metadata(path) {
                    Ok(meta) if meta.is_dir() => return Ok(()),
                    // A file or a link in the way: no race, a real error.
                    Ok(_) => return Err(e),
                    Err(_) if std::time::Instant::now() < deadline => {}
                    Err(_) => return Err(e),
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

/// Create the parent folder of `path` if it is missing.
pub fn ensure_parent(path: &Path) -> anyhow::Result<()> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => ensure_dir(parent),
        _ => Ok(()),
    }
}

/// Open for appending (and reading its end), creating it `0600`; refuses
/// a symlink.
///
/// `O_CREAT` without `O_EXCL` cannot fail with "exists" on a local file
/// system, but through FUSE (GlusterFS) a create that races another
/// mount's create of the same name does: the file is there, so opening it
/// again is the right answer, not an error for the broker.
pub fn open_append(path: &Path) -> io::Result<File> {
    let open = || {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    let mut tries = 1;
    loop {
        match open() {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 5 => tries += 1,
            other => return other,
        }
    }
}

/// Why an open failed, in words: `O_NOFOLLOW` on a link reads "Too many
/// levels of symbolic links", which says neither what was refused nor why.
pub fn open_error(path: &Path, e: io::Error) -> anyhow::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return anyhow::anyhow!(
            "refused to open {}: it is a symbolic link, and links under the state dir are \
             never followed (a link could send private data elsewhere); replace it with \
             the real file",
            path.display()
        );
    }
    anyhow::Error::new(e).context(format!("could not open {}", path.display()))
}

/// Refuse folders that are symbolic links: a write or a removal under
/// one would land outside the state dir. `O_NOFOLLOW` covers only the last
/// component of a path, so every folder written into is checked (one
/// `lstat` each). A missing folder is fine: it is created as a real one.
pub fn refuse_linked_dirs(dirs: &[std::path::PathBuf]) -> anyhow::Result<()> {
    for dir in dirs {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(dir)
                    .map(|t| format!(" (to {})", t.display()))
                    .unwrap_or_default();
                anyhow::bail!(
                    "refused to write or remove under {}: it is a symbolic link{target}, and \
                     links under the state dir are never followed; move the data into a real \
                     folder there (or remove the link), then run the command again",
                    dir.display()
                );
            }
            _ => {}
        }
    }
    Ok(())
}

/// Open with `open`; when the folder is missing, create it (`0700`) and
/// try again. The common case (the folder exists) costs no mkdir.
pub fn open_creating_parent(
    path: &Path,
    open: impl Fn(&Path) -> io::Result<File>,
) -> anyhow::Result<File> {
    match open(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            ensure_parent(path)?;
            open(path)
        }
        other => other,
    }
    .map_err(|e| open_error(path, e))
}

/// Open for reading; refuses a symlink, and anything but a regular file. `Ok(None)` when it does not exist.
/// On a shared file system the file is opened past the client's caches
/// (`store::shared`): the one the name points to now, read to its real end.
pub fn open_read(path: &Path) -> anyhow::Result<Option<File>> {
    if crate::store::shared::applies_to(path) {
        return crate::store::shared::open_fresh(path)
            .with_context(|| format!("could not open {}", path.display()));
    }
    match super::regular::open(path, 0) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(open_error(path, e)),
    }
}

/// Read a whole (small) file; `Ok(None)` when it does not exist. On a
/// shared file system, to its real end (`store::shared::read_fresh`).
pub fn read_optional(path: &Path) -> anyhow::Result<Option<Vec<u8>>> {
    use std::io::Read as _;
    if crate::store::shared::applies_to(path) {
        return crate::store::shared::read_fresh(path)
            .with_context(|| format!("could not read {}", path.display()));
    }
    let Some(mut file) = open_read(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .with_context(|| format!("could not read {}", path.display()))?;
    Ok(Some(bytes))
}

/// Read a whole (small) text file; `Ok(None)` when it does not exist.
pub fn read_optional_text(path: &Path) -> anyhow::Result<Option<String>> {
    match read_optional(path)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{} is not valid UTF-8 text", path.display())),
    }
}

/// fsync a folder, so a rename or a new entry in it survives a power cut.
pub fn sync_dir(path: &Path) -> anyhow::Result<()> {
    File::open(path)
        .and_then(|dir| dir.sync_all())
        .with_context(|| format!("could not sync folder {}", path.display()))
}

/// Remove a file; a missing one is fine.
pub fn remove_if_exists(path: &Path) -> anyhow::Result<bool> {
    match crate::store::shared::retry_stale(path, || std::fs::remove_file(path)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("could not remove {}", path.display())),
    }
}

/// The entries of a folder; none when the folder does not exist.
pub fn read_dir_optional(dir: &Path) -> anyhow::Result<Vec<std::fs::DirEntry>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
    };
    entries
        .collect::<io::Result<Vec<_>>>()
        .with_context(|| format!("could not list {}", dir.display()))
}

/// The names (valid UTF-8 only) of the entries of a folder, sorted; none
/// when the folder does not exist.
pub fn file_names(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut names: Vec<String> = read_dir_optional(dir)?
        .into_iter()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// The real length of a file, or `None` when it does not exist: on a
/// shared file system not the size a client has cached.
pub fn len_of(path: &Path) -> anyhow::Result<Option<u64>> {
    let Some(file) = open_read(path)? else {
        return Ok(None);
    };
    crate::store::shared::real_len(&file)
        .map(Some)
        .with_context(|| format!("could not read {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Two hosts making the first folder of a fresh state dir: the loser's
    /// `mkdir` says "File exists" while the folder is not yet seen.
    #[test]
    fn a_folder_made_by_another_host_meanwhile_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions/stm/U1");
        let calls = Cell::new(0);
        create_dir_racing(&path, |p| {
            calls.set(calls.get() + 1);
            if calls.get() == 1 {
                // The other host's mkdir wins; ours is told so, and the
                // standard library's check of the name still fails.
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            DirBuilder::new().recursive(true).create(p)
        })
        .unwrap();
        assert!(path.is_dir());
        assert_eq!(calls.get(), 2);
        // A file in the way is an error at once.
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let err =
            create_dir_racing(&file, |p| DirBuilder::new().recursive(true).create(p)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(ensure_dir(&file).is_err());
    }
}

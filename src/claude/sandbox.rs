//! The private folders one call of claude runs in, and the sweep of those
//! a killed process left behind.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// The private folders one call runs in: `home/` (claude's `HOME` and
/// config dir) and `work/` (its working directory, holding only the
/// attachments of this call). Created 0700 under the system's temporary
/// folder, outside the state dir and the broker's tree; removed on drop.
pub struct Sandbox {
    dir: tempfile::TempDir,
}

/// The name of every private folder a call gets (`$TMPDIR/claude-session-call-*`).
const SANDBOX_PREFIX: &str = "claude-session-call-";

/// How old a call's folder must be before another call removes it: far
/// past any timeout, so only what a killed `ask` left behind goes.
const STALE_SANDBOX: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Remove the folders of calls whose `ask` was killed before it could
/// (they hold copies of chat attachments): this user's, a day old.
fn sweep_stale_sandboxes(base: &Path, ours: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    // The new folder is ours: its owner is who we run as.
    let (Ok(entries), Ok(uid)) = (std::fs::read_dir(base), ours.metadata().map(|m| m.uid())) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .starts_with(SANDBOX_PREFIX)
        {
            continue;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let stale = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > STALE_SANDBOX);
        if meta.is_dir() && meta.uid() == uid && stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Sandbox {
    pub fn new(avoid: &[&Path]) -> anyhow::Result<Self> {
        let mut base = std::env::temp_dir();
        let inside = |base: &Path| {
            avoid.iter().any(|a| {
                let a = std::fs::canonicalize(a).unwrap_or_else(|_| a.to_path_buf());
                let b = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
                b.starts_with(&a)
            })
        };
        // A TMPDIR inside the broker's tree or the state dir would put
        // claude's working directory where it must not be.
        if inside(&base) {
            base = PathBuf::from("/tmp");
        }
        let dir = tempfile::Builder::new()
            .prefix(SANDBOX_PREFIX)
            .tempdir_in(&base)
            .with_context(|| {
                format!(
                    "could not create claude's private folder in {}",
                    base.display()
                )
            })?;
        for sub in ["home", "work"] {
            crate::store::fs::ensure_dir(&dir.path().join(sub))?;
        }
        set_private(dir.path())?;
        sweep_stale_sandboxes(&base, dir.path());
        Ok(Self { dir })
    }

    /// The folder holding `home/` and `work/`: where the system prompt
    /// file goes, inside what a confined claude may read and outside its
    /// working directory.
    pub fn root(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Put an attachment's bytes into the working folder, as `name` (a
    /// plain file name: see `commands::attachments`), so claude (with
    /// `Read` enabled) can read it and nothing else; returns its path.
    pub fn stage(&self, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
        use std::io::Write as _;
        let plain = !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\0']);
        anyhow::ensure!(plain, "{name:?} is not a plain file name");
        let target = self.work().join(name);
        // create_new: a name taken is never written through (a link).
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .and_then(|mut file| file.write_all(bytes))
            .with_context(|| format!("could not copy an attachment for claude to {name}"))?;
        Ok(target)
    }
}

fn set_private(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for path in [dir.to_path_buf(), dir.join("home"), dir.join("work")] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("could not make {} private", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Folders a killed `ask` left (a day old) go; fresh ones, and other
    /// names, stay.
    #[test]
    fn stale_call_folders_are_swept() {
        let base = tempfile::tempdir().unwrap();
        let make = |name: &str, age_hours: u64| {
            let path = base.path().join(name);
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("copy-of-attachment"), "x").unwrap();
            let when =
                std::time::SystemTime::now() - std::time::Duration::from_secs(age_hours * 3600);
            std::fs::File::open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
            path
        };
        let old = make("claude-session-call-old", 48);
        let fresh = make("claude-session-call-fresh", 1);
        let other = make("something-else", 48);
        super::sweep_stale_sandboxes(base.path(), &fresh);
        assert!(!old.exists());
        assert!(fresh.exists());
        assert!(other.exists());
    }
}

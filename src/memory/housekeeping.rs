//! Work on files, not memory: broker log rotation, and prune: empty
//! folders, stale temporary files, the per-message locks a failed `ask`
//! left, and in-chat exports past their retention.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;
use chrono::{DateTime, Duration, Utc};

use crate::layout::{Layout, MemoryKey};
use crate::state::State;
use crate::store::atomic::{TEMP_SUFFIX, write_atomic};
use crate::store::fs::{read_optional, remove_if_exists};
use crate::store::tree::empty_folders;

/// A temp file this old was left by a killed writer: no live write takes
/// an hour.
const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Broker logs older than `scheduler.logRotateDays` (by modification time).
pub fn logs_due(state: &State, now: DateTime<Utc>) -> anyhow::Result<Vec<PathBuf>> {
    let dir = state.layout.logs_dir();
    let entries = crate::store::fs::read_dir_optional(&dir)?;
    let cutoff = now - Duration::days(state.config.scheduler.log_rotate_days as i64);
    let mut due = Vec::new();
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !Layout::is_broker_log(name) {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue; // gone since the listing: the broker rotated it
        };
        if meta.is_file() && DateTime::<Utc>::from(meta.modified()?) < cutoff {
            due.push(entry.path());
        }
    }
    due.sort();
    Ok(due)
}

/// Move one log into `sessions/archive/logs/`, gzipped when
/// `scheduler.archiveCompression`; the original goes only after the
/// archive is on disk. The archive's name carries the log's modification
/// time, so a rotation killed before the removal and done again rewrites
/// the same file instead of archiving the log twice.
pub fn rotate_log(state: &State, log: &Path) -> anyhow::Result<PathBuf> {
    let name = log
        .file_name()
        .and_then(|n| n.to_str())
        .context("a log without a name")?;
    let modified: DateTime<Utc> = std::fs::metadata(log)
        .and_then(|m| m.modified())
        .with_context(|| format!("could not stat {}", log.display()))?
        .into();
    let gzip = state.config.scheduler.archive_compression;
    let target = state.layout.rotated_log_file(name, modified, gzip);
    let bytes = read_optional(log)?.unwrap_or_default();
    if gzip {
        crate::store::archive::write_one_member(&target, &bytes, state.fsync())?;
    } else {
        write_atomic(&target, &bytes, state.fsync())?;
    }
    remove_if_exists(log)?;
    Ok(target)
}

/// What prune removed (or, dry, would remove).
#[derive(Debug, Default, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pruned {
    pub folders: Vec<PathBuf>,
    pub temp_files: Vec<PathBuf>,
    /// In-chat exports past `limits.chatExportRetentionDays`.
    pub exports: Vec<PathBuf>,
}

/// Where one owner's folder is in an area of the layout.
type FolderOf = fn(&Layout, &MemoryKey) -> PathBuf;

/// Remove empty folders below the per-user areas and stale temp files.
/// A user's folders are checked and removed under that user's lock, so a
/// concurrent append (which creates its folder under the same lock) never
/// finds its folder gone between mkdir and open.
pub fn prune(state: &State, dry_run: bool, now: DateTime<Utc>) -> anyhow::Result<Pruned> {
    let mut pruned = Pruned::default();
    let sessions = state.layout.sessions_dir();
    sweep_temp_files(sessions, dry_run, &mut pruned)?;
    sweep_old_exports(state, dry_run, now, &mut pruned)?;
    sweep_inflight_locks(state, dry_run, &mut pruned)?;
    let areas: [(PathBuf, FolderOf); 4] = [
        (state.layout.stm_root(), Layout::stm_dir),
        (state.layout.summaries_root(), Layout::summaries_dir),
        (state.layout.archive_root(), Layout::archive_dir),
        (state.layout.exports_root(), Layout::exports_dir),
    ];
    for (area, folder_of) in areas {
        for user in crate::memory::stm::list_user_dirs(&area)? {
            let folder = folder_of(&state.layout, &user);
            if !has_empty_folders(&folder)? {
                continue;
            }
            if dry_run {
                pruned.folders.extend(empty_folders(&folder)?);
                continue;
            }
            let _lock = state.lock_owner(&user)?;
            for empty in empty_folders(&folder)? {
                if std::fs::remove_dir(&empty).is_ok() {
                    pruned.folders.push(empty);
                }
            }
        }
    }
    Ok(pruned)
}

fn has_empty_folders(folder: &Path) -> anyhow::Result<bool> {
    Ok(!empty_folders(folder)?.is_empty())
}

/// Remove the per-message locks an `ask` that failed left behind (a
/// successful one removes its own), when over an hour old and not held.
fn sweep_inflight_locks(state: &State, dry_run: bool, pruned: &mut Pruned) -> anyhow::Result<()> {
    let dir = state.layout.inflight_dir();
    let entries = crate::store::fs::read_dir_optional(&dir)?;
    let now = SystemTime::now();
    for entry in entries {
        let path = entry.path();
        let old = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= STALE_TEMP_AGE);
        if !old {
            continue;
        }
        if dry_run {
            pruned.temp_files.push(path);
        } else if let Some(lock) = crate::store::lock::FileLock::try_acquire(&path)? {
            lock.remove()?;
            pruned.temp_files.push(path);
        }
    }
    Ok(())
}

/// Remove in-chat exports older than `limits.chatExportRetentionDays`:
/// each is a full copy of a person's data, kept only for them to fetch.
fn sweep_old_exports(
    state: &State,
    dry_run: bool,
    now: DateTime<Utc>,
    pruned: &mut Pruned,
) -> anyhow::Result<()> {
    let days = i64::from(state.config.limits.chat_export_retention_days);
    let root = state.layout.exports_root();
    for user in crate::memory::stm::list_user_dirs(&root)? {
        let dir = state.layout.exports_dir(&user);
        let _lock = (!dry_run).then(|| state.lock_owner(&user)).transpose()?;
        for entry in crate::store::fs::read_dir_optional(&dir)? {
            let name = entry.file_name();
            let Some(made) = name.to_str().and_then(Layout::chat_export_time) else {
                continue;
            };
            if now - made < chrono::Duration::days(days) {
                continue;
            }
            if !dry_run {
                remove_if_exists(&entry.path())?;
            }
            pruned.exports.push(entry.path());
        }
    }
    Ok(())
}

/// Remove `.*.tmp` files older than an hour anywhere under `dir`.
fn sweep_temp_files(dir: &Path, dry_run: bool, pruned: &mut Pruned) -> anyhow::Result<()> {
    let entries = crate::store::fs::read_dir_optional(dir)?;
    let now = SystemTime::now();
    for entry in entries {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_dir() {
            if name != ".locks" {
                sweep_temp_files(&entry.path(), dry_run, pruned)?;
            }
        } else if name.starts_with('.') && name.ends_with(TEMP_SUFFIX) {
            // A live writer renames its temp file away at any moment: a
            // file gone between listing and stat is simply not stale.
            let age = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|m| now.duration_since(m).ok())
                .unwrap_or_default();
            if age >= STALE_TEMP_AGE {
                if !dry_run {
                    remove_if_exists(&entry.path())?;
                }
                pruned.temp_files.push(entry.path());
            }
        }
    }
    Ok(())
}

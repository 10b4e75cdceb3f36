//! Everything of one user, taken as a whole: statistics, the erase that
//! leaves nothing behind, and exports.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use crate::layout::UserId;
use crate::memory::message::Message;
use crate::memory::{compaction, ledger, ltm, stm, summaries};
use crate::state::State;
use crate::store::archive;
use crate::store::atomic::write_atomic;
use crate::store::fs::{ensure_dir, read_optional, read_optional_text, remove_if_exists};

/// One user's numbers, for `status` and `users`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserStats {
    pub user: String,
    pub stm_messages: usize,
    /// User lines they sent in group conversations' short-term logs.
    pub group_messages: usize,
    /// The conversations they wrote in.
    pub conversations: Vec<String>,
    pub compacted: u64,
    pub last_activity: Option<DateTime<Utc>>,
    pub has_summary: bool,
    pub has_profile: bool,
    pub bytes: u64,
    /// From the sender's cost ledger (`ask` calls).
    pub spend: ledger::Spend,
}

/// The user's data, area by area: what an export copies.
pub fn data_paths(state: &State, user: &UserId) -> Vec<PathBuf> {
    let layout = &state.layout;
    vec![
        layout.stm_dir(user),
        layout.profile_file(user),
        layout.summaries_dir(user),
        layout.archive_dir(user),
    ]
}

/// Every file and folder of a user (but the user lock): what an erase removes.
pub fn user_paths(state: &State, user: &UserId) -> Vec<PathBuf> {
    let layout = &state.layout;
    let mut paths = data_paths(state, user);
    paths.extend([
        layout.exports_dir(user),
        layout.compaction_journal_file(user),
        layout.compaction_lock_file(user),
        layout.user_ledger_file(user),
        layout.memberships_dir(user),
    ]);
    paths
}

/// Numbers for one user.
pub fn stats(state: &State, user: &UserId, now: DateTime<Utc>) -> anyhow::Result<UserStats> {
    let mut stats = UserStats {
        user: user.to_string(),
        ..UserStats::default()
    };
    for message in stm::all_messages(state, user)? {
        stats.stm_messages += 1;
        // The newest time, not the last line's (imports append old lines).
        stats.last_activity = stats.last_activity.max(Some(message.ts));
    }
    stats.spend = ledger::user_spend(state, user, now, true)?;
    if let Some(doc) = stm::summary(state, user)? {
        stats.has_summary = true;
        stats.compacted = doc.get_u64("messages_compacted").unwrap_or(0);
    }
    stats.has_profile = state.layout.profile_file(user).exists();
    stats.bytes = user_paths(state, user).iter().map(|p| disk_usage(p)).sum();
    Ok(stats)
}

fn raw_stm_lines(state: &State, user: &UserId) -> anyhow::Result<Vec<Vec<u8>>> {
    let bytes = read_optional(&state.layout.messages_file(user))?.unwrap_or_default();
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(<[u8]>::to_vec)
        .collect())
}

/// Raw lines of every archive, oldest day first.
pub fn archived_lines(state: &State, user: &UserId) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut lines = Vec::new();
    for day in summaries::archive_days(state, user)? {
        let read = archive::read_lines(&state.layout.archive_file(user, day))?;
        for damage in read.damage {
            crate::diag::warn(damage);
        }
        lines.extend(read.lines);
    }
    Ok(lines)
}

pub fn archived_messages(state: &State, user: &UserId) -> anyhow::Result<Vec<Message>> {
    Ok(archived_lines(state, user)?
        .iter()
        .filter_map(|line| Message::parse(line).ok())
        .collect())
}

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

/// Erase everything of a user: STM, profile, summaries, archive, exports,
/// owned topics, index entries, ledger lines, journal and lock files.
/// Returns what was removed.
pub fn erase(state: &State, user: &UserId) -> anyhow::Result<Vec<PathBuf>> {
    // The user's lines in group conversations first, each under that
    // group's lock (never nested in the user's own).
    let mut removed = Vec::new();
    let mut groups = membership_names(state, user)?;
    // Lines written before memberships were recorded (the seed, an older
    // version): every short-term log is looked at too.
    for group in logs_mentioning(state, user)? {
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    for group in groups {
        removed.extend(erase_from_group(state, user, &group)?);
    }
    let lock = state.lock_user(user)?;
    for path in user_paths(state, user) {
        if remove_path(&path)? {
            removed.push(path);
        }
    }
    let owned = owned_topics(state, user)?;
    {
        let _index = state.lock_index()?;
        for slug in &owned {
            let path = state.layout.topic_file(slug);
            if remove_if_exists(&path)? {
                removed.push(path);
            }
        }
        if state.layout.index_file().exists() {
            let mut paths = vec![format!("users/{user}.md")];
            paths.extend(owned.iter().map(|slug| format!("topics/{slug}.md")));
            let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
            ltm::update_index_locked(state, &paths, None)?;
        }
    }
    forget_in_ledger(state, user)?;
    // Last: the lock file itself (waiters notice and start over).
    let lock_path = lock.path().to_owned();
    lock.remove()?;
    removed.push(lock_path);
    Ok(removed)
}

/// The group conversations recorded for a user (file names in
/// `memberships/<user>/`).
fn membership_names(state: &State, user: &UserId) -> anyhow::Result<Vec<UserId>> {
    Ok(
        crate::store::fs::read_dir_optional(&state.layout.memberships_dir(user))?
            .iter()
            .filter_map(|entry| entry.file_name().to_str().and_then(|n| UserId::new(n).ok()))
            .collect(),
    )
}

/// Conversations other than the user's own whose log holds a line the user
/// sent or that answers them.
fn logs_mentioning(state: &State, user: &UserId) -> anyhow::Result<Vec<UserId>> {
    let quoted = serde_json::to_string(user.as_str())?;
    let mut found = Vec::new();
    for key in stm::users(state)? {
        if &key == user {
            continue;
        }
        let bytes = read_optional(&state.layout.messages_file(&key))?.unwrap_or_default();
        let mentions = bytes.split(|&b| b == b'\n').any(|line| {
            std::str::from_utf8(line).is_ok_and(|text| text.contains(&quoted))
                && is_about(line, user)
        });
        if mentions {
            found.push(key);
        }
    }
    Ok(found)
}

/// A line the user sent in a group, or a reply to them there.
fn is_about(line: &[u8], user: &UserId) -> bool {
    Message::parse(line).is_ok_and(|m| {
        m.sender() == Some(user.as_str())
            || m.extra.get("askedBy").and_then(Value::as_str) == Some(user.as_str())
    })
}

/// Record, from the logs and archives, every group each person wrote in
/// (`session reindex`): for state dirs written before memberships were
/// kept, so that an erase reaches archived group lines too. Returns how
/// many memberships there are.
pub fn rebuild_memberships(state: &State) -> anyhow::Result<usize> {
    let mut count = 0;
    for key in summaries::users_with_history(state)? {
        let mut senders = std::collections::BTreeSet::new();
        let stm = read_optional(&state.layout.messages_file(&key))?.unwrap_or_default();
        let lines = stm
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .chain(archived_lines(state, &key)?);
        for line in lines {
            if let Ok(message) = Message::parse(&line)
                && let Some(sender) = message.sender().and_then(|s| UserId::new(s).ok())
                && sender != key
            {
                senders.insert(sender);
            }
        }
        for sender in senders {
            stm::record_membership(state, &sender, &key)?;
            count += 1;
        }
    }
    Ok(count)
}

/// Remove the lines a user sent, and the replies to them (`askedBy`), from
/// a group's log and archives. The group's summary is the LLM's prose and
/// is left as it is.
fn erase_from_group(state: &State, user: &UserId, group: &UserId) -> anyhow::Result<Vec<PathBuf>> {
    let _lock = state.lock_user(group)?;
    compaction::recover_locked(state, group)?;
    let about_user = |line: &[u8]| is_about(line, user);
    let mut changed = Vec::new();
    let log = state.layout.messages_file(group);
    if let Some(bytes) = read_optional(&log)? {
        let kept: Vec<u8> = bytes
            .split_inclusive(|&b| b == b'\n')
            .filter(|line| !about_user(line.trim_ascii_end()))
            .flatten()
            .copied()
            .collect();
        if kept.len() != bytes.len() {
            write_atomic(&log, &kept, state.fsync())?;
            changed.push(log);
        }
    }
    for day in summaries::archive_days(state, group)? {
        let path = state.layout.archive_file(group, day);
        let read = archive::read_lines(&path)?;
        // A rewrite would drop the unreadable part, other people's lines too.
        if let Some(damage) = read.damage.first() {
            anyhow::bail!("{damage}; repair or move it, then erase {user} again");
        }
        let kept: Vec<&[u8]> = read
            .lines
            .iter()
            .map(Vec::as_slice)
            .filter(|line| !about_user(line))
            .collect();
        if kept.len() != read.lines.len() {
            archive::rewrite(&path, &kept, state.fsync())?;
            changed.push(path);
        }
    }
    Ok(changed)
}

fn remove_path(path: &Path) -> anyhow::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path)
            .map(|()| true)
            .with_context(|| format!("could not remove {}", path.display())),
        Ok(_) => remove_if_exists(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("could not stat {}", path.display())),
    }
}

/// Topic notes whose frontmatter `owner` is this user.
pub fn owned_topics(state: &State, user: &UserId) -> anyhow::Result<Vec<crate::layout::TopicSlug>> {
    let mut owned = Vec::new();
    for name in ltm::markdown_names(&state.layout.topics_dir())? {
        let Ok(slug) = crate::layout::TopicSlug::new(&name) else {
            continue;
        };
        let path = state.layout.topic_file(&slug);
        if let Some(text) = read_optional_text(&path)? {
            let doc = stm::parse_document_or_warn(&text, &path);
            if doc.get_text("owner").as_deref() == Some(user.as_str()) {
                owned.push(slug);
            }
        }
    }
    Ok(owned)
}

/// Rewrite the maintenance ledger without the user's lines.
fn forget_in_ledger(state: &State, user: &UserId) -> anyhow::Result<()> {
    let path = state.layout.maintenance_ledger_file();
    let _lock = ledger::lock(state)?;
    let Some(bytes) = read_optional(&path)? else {
        return Ok(());
    };
    let mut kept = Vec::with_capacity(bytes.len());
    let mut changed = false;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let about_user = serde_json::from_slice::<Value>(line.trim_ascii())
            .ok()
            .and_then(|v| {
                v.get("user")
                    .and_then(Value::as_str)
                    .map(|u| u == user.as_str())
            })
            .unwrap_or(false);
        if about_user {
            changed = true;
        } else {
            kept.extend_from_slice(line);
        }
    }
    if changed {
        write_atomic(&path, &kept, state.fsync())?;
    }
    Ok(())
}

/// Copy everything of a user into `out`, in the sessions layout (so the
/// folder can be dropped into another state dir as it is).
pub fn export_dir(state: &State, user: &UserId, out: &Path) -> anyhow::Result<usize> {
    let _lock = state.lock_user(user)?;
    compaction::recover_locked(state, user)?;
    let sessions = state.layout.sessions_dir();
    let mut copied = 0;
    for path in data_paths(state, user) {
        let relative = path
            .strip_prefix(sessions)
            .expect("user paths are under sessions/");
        copied += copy_tree(&path, &out.join(relative))?;
    }
    Ok(copied)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<usize> {
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

/// One JSON document: profile, summary, summaries, and every message from
/// the archives and STM, in order, as stored (unknown fields included).
pub fn export_json(state: &State, user: &UserId, now: DateTime<Utc>) -> anyhow::Result<Value> {
    let _lock = state.lock_user(user)?;
    compaction::recover_locked(state, user)?;
    let mut messages: Vec<Value> = Vec::new();
    for line in archived_lines(state, user)?
        .into_iter()
        .chain(raw_stm_lines(state, user)?)
    {
        match serde_json::from_slice::<Value>(&line) {
            Ok(value) => messages.push(value),
            Err(_) => crate::diag::warn(format!(
                "export of {user}: an unreadable line is left out: {}",
                String::from_utf8_lossy(&line)
            )),
        }
    }
    let document = |path: PathBuf| -> anyhow::Result<Value> {
        Ok(match read_optional_text(&path)? {
            Some(text) => {
                let doc = stm::parse_document_or_warn(&text, &path);
                json!({
                    "frontmatter": serde_json::to_value(&doc.front).unwrap_or(Value::Null),
                    "body": doc.body,
                })
            }
            None => Value::Null,
        })
    };
    let mut daily = serde_json::Map::new();
    let mut weekly = serde_json::Map::new();
    for (dir, map) in [
        (state.layout.daily_dir(user), &mut daily),
        (state.layout.weekly_dir(user), &mut weekly),
    ] {
        for name in ltm::markdown_names(&dir)? {
            map.insert(name.clone(), document(dir.join(format!("{name}.md")))?);
        }
    }
    let mut topics = serde_json::Map::new();
    for slug in owned_topics(state, user)? {
        topics.insert(slug.to_string(), document(state.layout.topic_file(&slug))?);
    }
    Ok(json!({
        "user": user.as_str(),
        "topics": topics,
        "exportedAt": crate::memory::message::format_ts(&now),
        "profile": document(state.layout.profile_file(user))?,
        "summary": document(state.layout.summary_file(user))?,
        "summaries": {"daily": daily, "weekly": weekly},
        "messages": messages,
    }))
}

/// The directory export, as a gzipped tar file at `out`.
pub fn export_tar_gz(state: &State, user: &UserId, out: &Path) -> anyhow::Result<usize> {
    let staging = tempfile::Builder::new()
        .prefix("claude-session-export-")
        .tempdir()
        .context("could not create a temporary folder for the export")?;
    let count = export_dir(state, user, staging.path())?;
    let mut bytes = Vec::new();
    {
        let encoder = flate2::write::GzEncoder::new(&mut bytes, flate2::Compression::default());
        let mut tar = tar::Builder::new(encoder);
        tar.append_dir_all(user.as_str(), staging.path())
            .context("could not build the tar archive")?;
        tar.into_inner()?.finish()?;
    }
    write_atomic(out, &bytes, state.fsync())?;
    Ok(count)
}

/// Every user with any data: STM, profile, summaries or archive.
pub fn known_users(state: &State) -> anyhow::Result<Vec<UserId>> {
    let mut users: std::collections::BTreeSet<UserId> = stm::users(state)?.into_iter().collect();
    users.extend(summaries::users_with_history(state)?);
    users.extend(stm::list_user_dirs(&state.layout.summaries_root())?);
    users.extend(
        ltm::markdown_names(&state.layout.profiles_dir())?
            .iter()
            .filter_map(|name| UserId::new(name).ok()),
    );
    Ok(users.into_iter().collect())
}

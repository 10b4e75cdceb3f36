//! Copies of everything of one user: a folder in the sessions layout, one
//! JSON document, or a gzipped tar of the folder; and the in-chat export
//! (`/session export`), a file the person is sent and prune later removes.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{archived_lines, data_paths, owned_topics};
use crate::layout::{Layout, MemoryKey};
use crate::memory::{compaction, ltm, stm};
use crate::state::State;
use crate::store::atomic::write_atomic;
use crate::store::fs::{ensure_dir, read_optional, read_optional_text};
use crate::store::tree::copy_tree;

/// Copy everything of a user into `out`, in the sessions layout (so the
/// folder can be dropped into another state dir as it is; `session
/// reindex` there indexes the topic notes it brings).
pub fn export_dir(state: &State, user: &MemoryKey, out: &Path) -> anyhow::Result<usize> {
    let lock = state.lock_owner(user)?;
    compaction::recover_locked(state, &lock)?;
    let sessions = state.layout.sessions_dir();
    let mut copied = 0;
    for path in data_paths(state, user) {
        let relative = path
            .strip_prefix(sessions)
            .expect("user paths are under sessions/");
        copied += copy_tree(&path, &out.join(relative))?;
    }
    // Topic notes are shared files, but the ones the owner owns are theirs
    // (the JSON export holds them, an erase removes them): copied too.
    for slug in owned_topics(state, user)? {
        let path = state.layout.topic_file(&slug);
        let relative = path
            .strip_prefix(sessions)
            .expect("topic notes are under sessions/");
        copied += copy_tree(&path, &out.join(relative))?;
    }
    Ok(copied)
}

fn raw_stm_lines(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<Vec<u8>>> {
    let bytes = read_optional(&state.layout.messages_file(user))?.unwrap_or_default();
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(<[u8]>::to_vec)
        .collect())
}

/// One JSON document: profile, summary, summaries (daily, weekly, and the
/// retired rolling ones by the day they were retired, as stored), and
/// every message from the archives and STM, in order, as stored (unknown
/// fields included).
pub fn export_json(state: &State, user: &MemoryKey, now: DateTime<Utc>) -> anyhow::Result<Value> {
    let lock = state.lock_owner(user)?;
    compaction::recover_locked(state, &lock)?;
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
            map.insert(name.clone(), document(Layout::markdown_file(&dir, &name))?);
        }
    }
    // Retired rolling summaries (`session clear`, an expiry), as stored:
    // a file may hold several, each with its own frontmatter.
    let mut retired = serde_json::Map::new();
    let archive_dir = state.layout.archive_dir(user);
    for name in crate::store::fs::file_names(&archive_dir)? {
        let Some(day) = Layout::archived_summary_day(&name) else {
            continue;
        };
        if let Some(text) = read_optional_text(&archive_dir.join(&name))? {
            retired.insert(day.to_string(), Value::String(text));
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
        "profile": match user.person_id() {
            Some(person) => document(state.layout.profile_file(&person))?,
            None => Value::Null,
        },
        "summary": document(state.layout.summary_file(user))?,
        "summaries": {"daily": daily, "weekly": weekly, "retired": retired},
        "messages": messages,
    }))
}

/// [`export_json`] as the bytes of a file: pretty, with a final newline.
pub fn export_json_bytes(
    state: &State,
    user: &MemoryKey,
    now: DateTime<Utc>,
) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(&export_json(state, user, now)?)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The JSON export, as a file at `out`.
pub fn export_json_file(
    state: &State,
    user: &MemoryKey,
    out: &Path,
    now: DateTime<Utc>,
) -> anyhow::Result<usize> {
    write_atomic(out, &export_json_bytes(state, user, now)?, state.fsync())?;
    Ok(1)
}

/// An in-chat `/session export`, made or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatExport {
    /// The JSON export, as this file in the person's exports folder (the
    /// operator hands it over).
    Made { name: String },
    /// `limits.chatExportsPerDay` exports were made today already.
    OverDailyLimit { made_today: usize },
}

/// The JSON export of a person who asked for it in chat, into their
/// exports folder, at most `limits.chatExportsPerDay` a day (each is a
/// full copy of their data).
pub fn export_for_chat(
    state: &State,
    user: &MemoryKey,
    now: DateTime<Utc>,
) -> anyhow::Result<ChatExport> {
    let dir = state.layout.exports_dir(user);
    let made_today = crate::store::fs::read_dir_optional(&dir)?
        .iter()
        .filter_map(|e| Layout::chat_export_time(e.file_name().to_str()?))
        .filter(|made| made.date_naive() == now.date_naive())
        .count();
    if made_today >= state.config.limits.chat_exports_per_day as usize {
        return Ok(ChatExport::OverDailyLimit { made_today });
    }
    let path = state.layout.chat_export_file(user, now);
    write_atomic(&path, &export_json_bytes(state, user, now)?, state.fsync())?;
    let name = path
        .file_name()
        .expect("an export file has a name")
        .to_string_lossy()
        .into_owned();
    Ok(ChatExport::Made { name })
}

/// The directory export, as a gzipped tar file at `out`.
pub fn export_tar_gz(state: &State, user: &MemoryKey, out: &Path) -> anyhow::Result<usize> {
    let (bytes, count) = export_tar_gz_bytes(state, user)?;
    write_atomic(out, &bytes, state.fsync())?;
    Ok(count)
}

/// The directory export as gzipped tar bytes, and how many files it holds.
/// Staged in the state dir's private temporary folder, `0700` whatever
/// the umask: the person's data never sits readable by others.
pub fn export_tar_gz_bytes(state: &State, user: &MemoryKey) -> anyhow::Result<(Vec<u8>, usize)> {
    use std::os::unix::fs::PermissionsExt as _;
    let temp = state.layout.temp_dir();
    ensure_dir(&temp)?;
    let staging = tempfile::Builder::new()
        .prefix(".export-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&temp)
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
    Ok((bytes, count))
}

//! Everything of one user, taken as a whole: which files and folders are
//! theirs (as [`crate::layout::owner_files`] says), whether an id has any data, the people known, and their archived
//! lines. Each use of the whole has its own file: `stats` (numbers for
//! `status` and `users`), `erase` (the erase that leaves nothing behind),
//! `delete` (one message and its reply) and `export` (copies in three
//! formats).

mod delete;
mod erase;
mod export;
mod stats;

use std::path::PathBuf;

use crate::layout::owner_files::{self, OwnerFile};
use crate::layout::{MemoryKey, UserId};
use crate::memory::message::Message;
use crate::memory::{ltm, stm, summaries};
use crate::state::State;
use crate::store::archive;
use crate::store::fs::read_optional_text;

/// Bytes under a path, for the per-area numbers of `session status`.
pub use crate::store::tree::disk_usage;
pub use delete::{Deleted, delete_message};
pub use erase::{erase, rebuild_memberships};
pub use export::{
    ChatExport, export_dir, export_for_chat, export_json, export_json_bytes, export_json_file,
    export_tar_gz, export_tar_gz_bytes,
};
pub use stats::{
    ChannelSpend, ChannelStatus, LtmCounts, StorageBytes, UserStats, owned_bytes, stats,
};

/// The user's data, area by area: what an export copies (the registry's
/// content entries, [`owner_files`]).
pub fn data_paths(state: &State, user: &MemoryKey) -> Vec<PathBuf> {
    owner_files::paths(&state.layout, user, OwnerFile::exported)
}

/// Every file and folder of a user an erase removes as a whole (all but
/// the ledgers and the user lock, which the erase holds).
pub fn user_paths(state: &State, user: &MemoryKey) -> Vec<PathBuf> {
    owner_files::paths(&state.layout, user, OwnerFile::erased)
}

/// Whether anything is stored under this id: a log, profile, summaries,
/// archive, lines in a group, or topic notes it owns. Read commands refuse
/// an id without any, and create nothing (not even a lock file) for it.
pub fn has_data(state: &State, user: &MemoryKey) -> bool {
    owner_files::paths(&state.layout, user, OwnerFile::shows_data)
        .iter()
        .any(|path| std::fs::symlink_metadata(path).is_ok())
        || owned_topics(state, user).is_ok_and(|owned| !owned.is_empty())
}

/// Raw lines of every archive, oldest day first.
pub fn archived_lines(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<Vec<u8>>> {
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

pub fn archived_messages(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<Message>> {
    Ok(archived_lines(state, user)?
        .iter()
        .filter_map(|line| Message::parse(line).ok())
        .collect())
}

/// Topic notes whose frontmatter `owner` is this user.
pub fn owned_topics(
    state: &State,
    user: &MemoryKey,
) -> anyhow::Result<Vec<crate::layout::TopicSlug>> {
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

/// Every person with any data: STM, profile, summaries or archive (not
/// the group and thread conversations).
pub fn known_users(state: &State) -> anyhow::Result<Vec<UserId>> {
    let mut keys: std::collections::BTreeSet<MemoryKey> = stm::users(state)?.into_iter().collect();
    keys.extend(summaries::users_with_history(state)?);
    keys.extend(stm::list_user_dirs(&state.layout.summaries_root())?);
    let mut users: std::collections::BTreeSet<UserId> =
        keys.iter().filter_map(MemoryKey::person_id).collect();
    users.extend(
        ltm::markdown_names(&state.layout.profiles_dir())?
            .iter()
            // A seed profile outside the id rules too, as its folders are.
            .filter_map(|name| UserId::seed_folder(name).ok()),
    );
    Ok(users.into_iter().collect())
}

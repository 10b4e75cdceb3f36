//! Conversations out of the user-id namespace.
//!
//! Up to 0.x a group or thread conversation kept its memory under its key
//! as is (`stm/G1/`), the folder a user `G1` would use: a conversation keyed
//! like a person read and wrote that person's log. Conversations now live
//! behind [`crate::layout::CONVERSATION_MARK`] (`stm/#G1/`). This module
//! moves what the previous layout wrote, when a command first writes to
//! the key (one that only reads reads it where it is) and in `maintain`.
//!
//! What counts as a conversation of the previous layout: a folder whose log
//! (or, with no log, archive) has user lines that all name a sender
//! (`userId`: only conversations wrote that field), or, with no lines at
//! all, that some membership names. A person's own line never names a
//! sender, so a folder holding one stays the person's, even when another
//! user wrote into it through the old shared namespace; a folder with a
//! profile (`ltm/users/<key>.md`) is a person's too.
//!
//! What moves is what [`crate::layout::owner_files`] says a conversation
//! has (but its locks). Every step is one `rename` within its parent
//! (atomic), the log last: a
//! move killed midway leaves the log where it was, so the next touch sees
//! the same conversation and finishes the move. A name present on both
//! sides (a run of this version wrote it meanwhile) is left where it is,
//! with a warning: nothing is overwritten.

use std::path::Path;

use anyhow::Context as _;

use crate::diag;
use crate::layout::owner_files::{self, Class, OwnerFile, Rule};
use crate::layout::{ConversationKey, MemoryKey, UserId};
use crate::memory::message::Message;
use crate::memory::user_data;
use crate::state::State;
use crate::store::fs::{read_dir_optional, read_optional, sync_dir};

/// The memory of conversation `key` for a command that writes: data of the
/// previous layout is moved first, under the locks of both names.
pub fn conversation_for_writing(state: &State, key: &ConversationKey) -> anyhow::Result<MemoryKey> {
    let memory = MemoryKey::conversation(key);
    // The hot path: one stat finds nothing to move.
    if !legacy_exists(state, key) {
        return Ok(memory);
    }
    migrate(state, key)?;
    Ok(memory)
}

/// The memory of conversation `key` for a command that only reads: data of
/// the previous layout is read where it is (a read changes nothing).
pub fn conversation_for_reading(state: &State, key: &ConversationKey) -> anyhow::Result<MemoryKey> {
    let legacy = key.legacy_folder();
    if legacy_exists(state, key) && is_legacy_conversation(state, &legacy)? {
        return Ok(legacy);
    }
    Ok(MemoryKey::conversation(key))
}

/// Whether anything but derived data (which says nothing of its own) of
/// the registry's moved entries is under the bare key.
fn legacy_exists(state: &State, key: &ConversationKey) -> bool {
    let legacy = key.legacy_folder();
    let memory = MemoryKey::conversation(key);
    owner_files::entries_of(&memory)
        .filter(|entry| entry.migrates() && entry.class != Class::Derived)
        .filter_map(|entry| entry.path(&state.layout, &legacy))
        .any(|path| path.symlink_metadata().is_ok())
}

/// Move conversation `key`'s data of the previous layout, if it has any.
/// Whether anything moved.
pub fn migrate(state: &State, key: &ConversationKey) -> anyhow::Result<bool> {
    let legacy = key.legacy_folder();
    let memory = MemoryKey::conversation(key);
    // Both names locked: no writer of either sees a half-moved folder.
    // Nobody else holds both, so the order cannot deadlock.
    let _old = state.lock_owner(&legacy)?;
    let _new = state.lock_owner(&memory)?;
    if !is_legacy_conversation(state, &legacy)? {
        return Ok(false);
    }
    let layout = &state.layout;
    let fsync = state.fsync();
    let mut moved = false;
    // What the registry says a conversation has (but its locks), the
    // short-term folder last: it is what marks the folder as a
    // conversation to move.
    let (last, first): (Vec<&OwnerFile>, Vec<&OwnerFile>) = owner_files::entries_of(&memory)
        .filter(|entry| entry.migrates())
        .partition(|entry| entry.migrated_last());
    for entry in first.into_iter().chain(last) {
        match entry.rule {
            Rule::Own(path) => {
                moved |= move_entry(&path(layout, &legacy), &path(layout, &memory), fsync)?;
            }
            // A person's entry never moves with a conversation; per-message
            // locks are per name (and never migrate).
            Rule::Person(_) | Rule::Inflight => {}
            Rule::InEveryMember => {
                for sender in members(state, &legacy)? {
                    moved |= move_entry(
                        &layout.membership_file(&sender, &legacy),
                        &layout.membership_file(&sender, &memory),
                        fsync,
                    )?;
                }
            }
        }
    }
    if moved {
        diag::info(format!(
            "moved conversation {key} to its own folders (#{key}); \
             conversations no longer share names with users"
        ));
    }
    Ok(moved)
}

/// Every conversation of the previous layout, moved (`maintain`). Returns
/// the keys moved.
pub fn migrate_all(state: &State) -> anyhow::Result<Vec<ConversationKey>> {
    let mut moved = Vec::new();
    for key in candidates(state)? {
        if migrate(state, &key)? {
            moved.push(key);
        }
    }
    Ok(moved)
}

/// The conversations of the previous layout that [`migrate_all`] would
/// move (`maintain --dry-run`); nothing is locked or changed.
pub fn pending(state: &State) -> anyhow::Result<Vec<ConversationKey>> {
    let mut found = Vec::new();
    for key in candidates(state)? {
        if is_legacy_conversation(state, &key.legacy_folder())? {
            found.push(key);
        }
    }
    Ok(found)
}

/// Keys with something left under the bare name that may be a
/// conversation, cheaply: names a membership records (this version
/// recorded one for every sender before writing a group line), and logs
/// that mention a sender at all (groups written before memberships).
fn candidates(state: &State) -> anyhow::Result<Vec<ConversationKey>> {
    let mut candidates = std::collections::BTreeSet::new();
    let layout = &state.layout;
    let memberships = layout.memberships_dir(&UserId::new("x")?);
    let memberships = memberships
        .parent()
        .expect("memberships/<user> has a parent");
    for sender in read_dir_optional(memberships)? {
        for entry in read_dir_optional(&sender.path())? {
            if let Some(key) = entry
                .file_name()
                .to_str()
                .and_then(|n| ConversationKey::new(n).ok())
            {
                candidates.insert(key);
            }
        }
    }
    for entry in read_dir_optional(&layout.stm_root())? {
        if let Some(key) = entry
            .file_name()
            .to_str()
            .and_then(|n| ConversationKey::new(n).ok())
            && !candidates.contains(&key)
            && read_optional(&layout.messages_file(&key.legacy_folder()))
                .ok()
                .flatten()
                .is_some_and(|bytes| contains(&bytes, b"\"userId\""))
        {
            candidates.insert(key);
        }
    }
    let mut left = Vec::new();
    for key in candidates {
        if legacy_exists(state, &key) || !members(state, &key.legacy_folder())?.is_empty() {
            left.push(key);
        }
    }
    Ok(left)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The senders whose memberships name `folder`.
fn members(state: &State, folder: &MemoryKey) -> anyhow::Result<Vec<UserId>> {
    let root = state.layout.memberships_root();
    let mut senders = Vec::new();
    for entry in read_dir_optional(&root)? {
        if let Some(sender) = entry.file_name().to_str().and_then(|n| UserId::new(n).ok())
            && state
                .layout
                .membership_file(&sender, folder)
                .symlink_metadata()
                .is_ok()
        {
            senders.push(sender);
        }
    }
    Ok(senders)
}

/// Whether `folder` (a name a user id could have) holds a conversation of
/// the previous layout. See the module doc for the rule.
fn is_legacy_conversation(state: &State, folder: &MemoryKey) -> anyhow::Result<bool> {
    // A bare name is a person's as far as the layout goes: one with a
    // profile is a person.
    if let Some(person) = folder.person_id()
        && state
            .layout
            .profile_file(&person)
            .symlink_metadata()
            .is_ok()
    {
        return Ok(false);
    }
    let mut named = 0usize;
    let mut personal = 0usize;
    let mut count = |line: &[u8]| {
        if let Ok(message) = Message::parse(line)
            && message.role == crate::memory::message::Role::User
        {
            if message.sender().is_some() {
                named += 1;
            } else {
                personal += 1;
            }
        }
    };
    let log = state.layout.messages_file(folder);
    let bytes = read_optional(&log)?.unwrap_or_default();
    let mut any = false;
    for line in bytes.split(|&b| b == b'\n') {
        any |= Message::parse(line).is_ok();
        count(line);
    }
    if !any {
        for line in user_data::archived_lines(state, folder)? {
            count(&line);
        }
    }
    if personal > 0 {
        if named > 0 {
            diag::warn(format!(
                "{}: lines of user {folder} and lines of other senders written \
                 there as conversation {folder} by an earlier version; kept as \
                 {folder}'s own (see `session show --user {folder}`)",
                log.display()
            ));
        }
        return Ok(false);
    }
    if named > 0 {
        return Ok(true);
    }
    Ok(!members(state, folder)?.is_empty())
}

/// Rename `from` to `to`; a folder whose target exists is merged entry by
/// entry; a name on both sides stays where it is (warned). Whether
/// anything moved.
fn move_entry(from: &Path, to: &Path, fsync: bool) -> anyhow::Result<bool> {
    let Ok(meta) = from.symlink_metadata() else {
        return Ok(false);
    };
    if meta.file_type().is_symlink() {
        diag::warn(format!(
            "{} is a symbolic link; not moved (links are never followed under the state dir)",
            from.display()
        ));
        return Ok(false);
    }
    if to.symlink_metadata().is_err() {
        crate::store::fs::ensure_parent(to)?;
        std::fs::rename(from, to)
            .with_context(|| format!("could not move {} to {}", from.display(), to.display()))?;
        if fsync {
            for dir in [from.parent(), to.parent()].into_iter().flatten() {
                sync_dir(dir)?;
            }
        }
        return Ok(true);
    }
    if !(meta.is_dir() && to.is_dir()) {
        diag::warn(format!(
            "{} and {} both exist; the first is left where it is, nothing overwritten",
            from.display(),
            to.display()
        ));
        return Ok(false);
    }
    let mut moved = false;
    for entry in read_dir_optional(from)? {
        moved |= move_entry(&entry.path(), &to.join(entry.file_name()), fsync)?;
    }
    // Empty now, unless a name was on both sides.
    let _ = std::fs::remove_dir(from);
    Ok(moved)
}

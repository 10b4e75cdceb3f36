//! The erase that leaves nothing behind: a user's own files, their lines
//! in group conversations (and the replies to them), the topic notes they
//! own, their index entries and ledger lines; and the membership records
//! that let an erase find the groups.

use std::path::PathBuf;

use serde_json::Value;

use super::{archived_lines, owned_topics, user_paths};
use crate::layout::{Layout, MemoryKey, UserId};
use crate::memory::message::Message;
use crate::memory::{compaction, ledger, ltm, stm, summaries};
use crate::state::State;
use crate::store::archive;
use crate::store::atomic::write_atomic;
use crate::store::fs::{read_optional, remove_if_exists};
use crate::store::lines::without_lines;
use crate::store::tree::remove_tree;

/// Erase everything of a user: STM, profile, summaries, archive, exports,
/// owned topics, index entries, ledger lines, journal and lock files.
/// Returns what was removed.
pub fn erase(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<PathBuf>> {
    // A linked folder would make the erase remove the link and report
    // success while the data stays where it points: refuse before anything.
    crate::store::fs::refuse_linked_dirs(&state.layout.owned_dirs(user))?;
    // A person's parts: their cost ledger, the groups they wrote in, their
    // profile's index entry. A conversation has none of them.
    let person = user.person_id();
    // First the mark an ask in flight looks for before it logs a reply,
    // with what budgets need (amounts and times) and nothing else.
    if let Some(person) = &person {
        ledger::keep_for_budgets_only(state, person, state.clock.now())?;
    }
    // The user's lines in group conversations, each under that group's
    // lock (never nested in the user's own).
    let mut removed = Vec::new();
    let mut groups = match &person {
        Some(person) => membership_names(state, person)?,
        None => Vec::new(),
    };
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
    let lock = state.lock_owner(user)?;
    for path in user_paths(state, user) {
        if remove_tree(&path)? {
            removed.push(path);
        }
    }
    removed.extend(erase_inflight(state, user)?);
    let owned = owned_topics(state, user)?;
    {
        let index = state.lock_index()?;
        for slug in &owned {
            let path = state.layout.topic_file(slug);
            if remove_if_exists(&path)? {
                removed.push(path);
            }
        }
        if state.layout.index_file().exists() {
            let mut paths: Vec<String> = person.iter().map(Layout::profile_index_key).collect();
            paths.extend(owned.iter().map(Layout::topic_index_key));
            let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
            ltm::update_index_locked(state, &index, &paths, None)?;
        }
    }
    forget_in_ledger(state, user)?;
    // Last: the lock file itself (waiters notice and start over).
    let lock_path = lock.path().to_owned();
    lock.remove()?;
    removed.push(lock_path);
    Ok(removed)
}

/// The owner's per-message locks and failure records (their names hold
/// the owner's id; a failure record, the error an answer failed with),
/// which an `ask` that failed leaves until `maintain` prunes them. One
/// held by an `ask` still answering is left to it: it removes its own
/// lock when done, and its reply is not logged (`append_answer`).
fn erase_inflight(state: &State, owner: &MemoryKey) -> anyhow::Result<Vec<PathBuf>> {
    // Each lock with the records (and their temporary files) beside it.
    let mut owned: std::collections::BTreeMap<PathBuf, Vec<PathBuf>> = Default::default();
    for entry in crate::store::fs::read_dir_optional(&state.layout.inflight_dir())? {
        if entry.file_name().to_str().and_then(Layout::inflight_owner) != Some(owner.as_str()) {
            continue;
        }
        let path = entry.path();
        let lock = Layout::inflight_lock_of(&path);
        let beside = owned.entry(lock.clone()).or_default();
        if path != lock {
            beside.push(path);
        }
    }
    let mut removed = Vec::new();
    for (path, beside) in owned {
        let Some(lock) = crate::store::lock::FileLock::try_acquire(&path)? else {
            continue;
        };
        for file in beside {
            if remove_if_exists(&file)? {
                removed.push(file);
            }
        }
        lock.remove()?;
        removed.push(path);
    }
    Ok(removed)
}

/// The group conversations recorded for a user (file names in
/// `memberships/<user>/`).
fn membership_names(state: &State, user: &UserId) -> anyhow::Result<Vec<MemoryKey>> {
    Ok(
        crate::store::fs::read_dir_optional(&state.layout.memberships_dir(user))?
            .iter()
            .filter_map(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .and_then(MemoryKey::from_folder_name)
            })
            .collect(),
    )
}

/// Conversations other than the user's own whose log holds a line the user
/// sent or that answers them.
fn logs_mentioning(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<MemoryKey>> {
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
fn is_about(line: &[u8], user: &MemoryKey) -> bool {
    Message::parse(line).is_ok_and(|m| m.is_about(user.as_str()))
}

/// Record, from the logs and archives, every group each person wrote in
/// (`session reindex`): for state dirs written before memberships were
/// kept, so that an erase reaches archived group lines too. Returns how
/// many memberships there are.
pub fn rebuild_memberships(state: &State) -> anyhow::Result<usize> {
    let mut count = 0;
    for key in summaries::users_with_history(state)? {
        let mut senders = std::collections::BTreeSet::new();
        // One unreadable log or archive is warned about; the rest is rebuilt.
        let read = read_optional(&state.layout.messages_file(&key))
            .map(Option::unwrap_or_default)
            .and_then(|stm| Ok((stm, archived_lines(state, &key)?)));
        let (stm, archived) = match read {
            Ok(read) => read,
            Err(e) => {
                crate::diag::warn(format!("{e:#}; its memberships are not rebuilt"));
                continue;
            }
        };
        let lines = stm
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .chain(archived);
        for line in lines {
            if let Ok(message) = Message::parse(&line)
                && let Some(sender) = message.sender().and_then(|s| UserId::new(s).ok())
                && MemoryKey::person(&sender) != key
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
fn erase_from_group(
    state: &State,
    user: &MemoryKey,
    group: &MemoryKey,
) -> anyhow::Result<Vec<PathBuf>> {
    let lock = state.lock_owner(group)?;
    compaction::recover_locked(state, &lock)?;
    let about_user = |line: &[u8]| is_about(line, user);
    let mut changed = Vec::new();
    let log = state.layout.messages_file(group);
    if let Some(bytes) = read_optional(&log)? {
        let kept = without_lines(&bytes, about_user);
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
            // The index of that day holds the erased lines' text.
            crate::memory::retrieval::indexing::forget_day_locked(state, &lock, day)?;
            changed.push(path);
        }
    }
    Ok(changed)
}

/// Rewrite the maintenance ledger without the user's lines.
fn forget_in_ledger(state: &State, user: &MemoryKey) -> anyhow::Result<()> {
    let path = state.layout.maintenance_ledger_file();
    let _lock = ledger::lock(state)?;
    let Some(bytes) = read_optional(&path)? else {
        return Ok(());
    };
    let kept = without_lines(&bytes, |line| {
        serde_json::from_slice::<Value>(line)
            .ok()
            .and_then(|v| {
                v.get("user")
                    .and_then(Value::as_str)
                    .map(|u| u == user.as_str())
            })
            .unwrap_or(false)
    });
    if kept.len() != bytes.len() {
        write_atomic(&path, &kept, state.fsync())?;
    }
    Ok(())
}

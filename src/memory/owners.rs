//! Whose memory a folder holds: a person's or a conversation's (a group or
//! a thread, `--conversation KEY`).
//!
//! Today both live in the same `stm/<key>/`, `archive/<key>/` and
//! `summaries/<key>/` folders; a conversation is told apart by the
//! `memberships/<person>/<key>` records written when someone speaks in it,
//! and, for logs written before those records existed, by user lines that
//! carry a `userId`. This module is the one place that knows this: search,
//! `session users` and `session conversations` ask it, so that a layout
//! with a namespace of its own for conversations changes only this file.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::layout::UserId;
use crate::memory::stm;
use crate::state::State;
use crate::store::fs::{open_read, read_dir_optional};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OwnerKind {
    Person,
    Conversation,
}

/// One owner of memory and the places its memory lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Owner {
    pub key: UserId,
    pub kind: OwnerKind,
}

impl Owner {
    pub fn messages_file(&self, state: &State) -> PathBuf {
        state.layout.messages_file(&self.key)
    }

    pub fn summary_file(&self, state: &State) -> PathBuf {
        state.layout.summary_file(&self.key)
    }

    pub fn archive_dir(&self, state: &State) -> PathBuf {
        state.layout.archive_dir(&self.key)
    }

    pub fn daily_dir(&self, state: &State) -> PathBuf {
        state.layout.daily_dir(&self.key)
    }

    pub fn weekly_dir(&self, state: &State) -> PathBuf {
        state.layout.weekly_dir(&self.key)
    }

    /// A person's profile; conversations have none.
    pub fn profile_file(&self, state: &State) -> Option<PathBuf> {
        (self.kind == OwnerKind::Person).then(|| state.layout.profile_file(&self.key))
    }
}

/// Every owner with any memory (short-term log, archive, summaries or
/// profile), people and conversations, sorted by kind then key.
pub fn owners(state: &State) -> anyhow::Result<Vec<Owner>> {
    let layout = &state.layout;
    let mut keys: BTreeSet<UserId> = stm::users(state)?.into_iter().collect();
    keys.extend(
        stm::list_user_dirs(&layout.archive_root())?
            .into_iter()
            // archive/logs holds rotated broker logs, not an owner.
            .filter(|k| k.as_str() != "logs"),
    );
    keys.extend(stm::list_user_dirs(&layout.summaries_root())?);
    keys.extend(
        crate::memory::ltm::markdown_names(&layout.profiles_dir())?
            .iter()
            .filter_map(|name| UserId::new(name).ok()),
    );
    let conversations = conversation_keys(state, &keys)?;
    let mut owners: Vec<Owner> = keys
        .into_iter()
        .map(|key| {
            let kind = if conversations.contains(&key) {
                OwnerKind::Conversation
            } else {
                OwnerKind::Person
            };
            Owner { key, kind }
        })
        .collect();
    owners.sort();
    Ok(owners)
}

/// The owner `key`, with its kind, if it has any memory.
pub fn find(state: &State, key: &UserId) -> anyhow::Result<Option<Owner>> {
    Ok(owners(state)?.into_iter().find(|o| &o.key == key))
}

/// Which of `keys` are conversations: named by a membership record, or
/// whose short-term log starts with a line a sender is named on.
fn conversation_keys(state: &State, keys: &BTreeSet<UserId>) -> anyhow::Result<BTreeSet<UserId>> {
    let root = state.layout.sessions_dir().join("memberships");
    let mut found = BTreeSet::new();
    for person in read_dir_optional(&root)? {
        for record in read_dir_optional(&person.path())? {
            if let Some(key) = record
                .file_name()
                .to_str()
                .and_then(|n| UserId::new(n).ok())
            {
                found.insert(key);
            }
        }
    }
    for key in keys {
        if !found.contains(key) && log_names_a_sender(state, key)? {
            found.insert(key.clone());
        }
    }
    Ok(found)
}

/// Whether the first few KB of the log hold a `"userId"` key: a group's
/// log has one on every user line, a person's log never.
fn log_names_a_sender(state: &State, key: &UserId) -> anyhow::Result<bool> {
    let Some(file) = open_read(&state.layout.messages_file(key))? else {
        return Ok(false);
    };
    let mut head = Vec::with_capacity(8192);
    file.take(8192).read_to_end(&mut head)?;
    Ok(memchr::memmem::find(&head, b"\"userId\"").is_some())
}

/// The memory `person` may see: their own (never a conversation's key
/// passed as a person), or with `conversation` that conversation's, if
/// they wrote in it (a membership record); `None`: nothing. The one rule
/// of who sees which owner (recall's scoping asks it); a layout that keeps
/// conversations apart changes only this function. A few file lookups, not
/// a scan of every owner: `mcp` runs it once per `ask`.
pub fn visible_to(
    state: &State,
    person: &UserId,
    conversation: Option<&UserId>,
) -> anyhow::Result<Option<Owner>> {
    Ok(match conversation {
        None => (!log_names_a_sender(state, person)?).then(|| Owner {
            key: person.clone(),
            kind: OwnerKind::Person,
        }),
        Some(key) => {
            (key != person && state.layout.membership_file(person, key).exists()).then(|| Owner {
                key: key.clone(),
                kind: OwnerKind::Conversation,
            })
        }
    })
}

/// Every person: owners that are people, and everyone a membership record
/// names (a group-only sender has no folder of their own).
pub fn people(state: &State) -> anyhow::Result<Vec<UserId>> {
    let all = owners(state)?;
    let conversations: BTreeSet<&UserId> = all
        .iter()
        .filter(|o| o.kind == OwnerKind::Conversation)
        .map(|o| &o.key)
        .collect();
    let mut people: BTreeSet<UserId> = all
        .iter()
        .filter(|o| o.kind == OwnerKind::Person)
        .map(|o| o.key.clone())
        .collect();
    let root = state.layout.sessions_dir().join("memberships");
    for entry in read_dir_optional(&root)? {
        if let Some(id) = entry.file_name().to_str().and_then(|n| UserId::new(n).ok())
            && !conversations.contains(&id)
        {
            people.insert(id);
        }
    }
    Ok(people.into_iter().collect())
}

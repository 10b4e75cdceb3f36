//! Whose memory a folder holds: a person's or a conversation's (a group or
//! a thread, `--conversation KEY`).
//!
//! A conversation's memory lives under `#KEY` (`stm/#KEY/`,
//! `archive/#KEY/` …, see [`crate::layout::CONVERSATION_MARK`]), a name no
//! person can have; a person who only wrote in groups has no folder but a
//! `memberships/<person>/` record. Search, `session users` and `session
//! conversations` ask this module, so the rule lives in one place. Group
//! data of the layout before conversations had their own namespace counts as
//! a person's until `maintain` (task `migrate`) or the key's next write
//! moves it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

use crate::layout::{MemoryKey, UserId};
use crate::memory::stm;
use crate::state::State;
use crate::store::fs::read_dir_optional;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OwnerKind {
    Person,
    Conversation,
}

/// One owner of memory and the places its memory lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Owner {
    pub key: MemoryKey,
    pub kind: OwnerKind,
}

impl Owner {
    /// The name people use: a user id, or a conversation's key (without
    /// the `#` of its folder).
    pub fn name(&self) -> String {
        match self.key.conversation_key() {
            Some(key) => key.as_str().to_owned(),
            None => self.key.to_string(),
        }
    }

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
        self.key
            .person_id()
            .map(|person| state.layout.profile_file(&person))
    }
}

/// Every owner with any memory (short-term log, archive, summaries or
/// profile), people and conversations, sorted by kind then key.
pub fn owners(state: &State) -> anyhow::Result<Vec<Owner>> {
    let layout = &state.layout;
    let mut keys: BTreeSet<MemoryKey> = stm::users(state)?.into_iter().collect();
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
            .filter_map(|name| UserId::new(name).ok())
            .map(|person| MemoryKey::person(&person)),
    );
    let mut owners: Vec<Owner> = keys
        .into_iter()
        .map(|key| {
            let kind = if key.is_conversation() {
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
pub fn find(state: &State, key: &MemoryKey) -> anyhow::Result<Option<Owner>> {
    Ok(owners(state)?.into_iter().find(|o| &o.key == key))
}

/// The memory `person` may see: their own (never a conversation's), or
/// with `conversation` (its `#KEY` memory) that conversation's, if they
/// wrote in it (a membership record); `None`: nothing. The one rule of who
/// sees which owner (recall's scoping asks it). A file lookup or two, not a
/// scan of every owner: `mcp` runs it once per `ask`.
pub fn visible_to(
    state: &State,
    person: &UserId,
    conversation: Option<&MemoryKey>,
) -> anyhow::Result<Option<Owner>> {
    // A `UserId` is never a conversation's key: the type says "a person".
    Ok(match conversation {
        None => Some(Owner {
            key: MemoryKey::person(person),
            kind: OwnerKind::Person,
        }),
        Some(key) => (key.is_conversation() && state.layout.membership_file(person, key).exists())
            .then(|| Owner {
                key: key.clone(),
                kind: OwnerKind::Conversation,
            }),
    })
}

/// Every person: owners that are people, and everyone a membership record
/// names (a group-only sender has no folder of their own).
pub fn people(state: &State) -> anyhow::Result<Vec<UserId>> {
    let mut people: BTreeSet<UserId> = owners(state)?
        .iter()
        .filter_map(|o| o.key.person_id())
        .collect();
    // A memberships folder is a person's: a `UserId` never names a
    // conversation.
    for entry in read_dir_optional(&state.layout.memberships_root())? {
        if let Some(id) = entry.file_name().to_str().and_then(|n| UserId::new(n).ok()) {
            people.insert(id);
        }
    }
    Ok(people.into_iter().collect())
}

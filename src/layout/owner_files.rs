//! The one registry of an owner's files: every file and folder that
//! belongs to one person or one conversation, where it is (a rule of
//! [`Layout`]), what may be found in it, and what it is ([`Class`]), which
//! says what each use of "an owner's files" does with it:
//!
//! | class        | erase                 | export | stats | shows data |
//! |--------------|-----------------------|--------|-------|------------|
//! | `Content`    | removed               | copied | yes   | yes        |
//! | `Pointer`    | removed               | no     | yes   | yes        |
//! | `Derived`    | removed (holds text)  | no     | yes   | no         |
//! | `Record`     | removed               | no     | yes   | no         |
//! | `Lock`       | removed               | no     | yes   | no         |
//! | `OwnerLock`  | removed last          | no     | no    | no         |
//! | `Ledger`     | kept, amounts only    | no     | no    | no         |
//!
//! (A conversation's numbers count its content only: see
//! [`OwnerFile::counted_for`].) Migration moves a conversation's entries
//! that are not locks, the short-term folder last ([`OwnerFile::migrates`]).
//! Erase, export, `has_data`, the numbers, migration, the folders refused
//! as links and search's targets (a `match` on [`Id`]) read it, so a file
//! added to an owner is added once, in [`ENTRIES`], and
//! `tests/owner_files.rs` fails for any file of an owner found on disk that
//! no entry names.
//!
//! Files of nobody in particular (the config, the LTM index, the channel's
//! and maintenance ledgers, topic notes, channel-wide locks, broker logs)
//! are told by [`is_shared_file`]: an erase rewrites some of them (the
//! index, the maintenance ledger) and removes the topic notes an owner
//! owns, but they are no owner's.

use std::path::{Component, Path, PathBuf};

use super::{Layout, MemoryKey, UserId};

/// What an owner's file is: see the module doc's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// What the owner said and what was made of it: logs, summaries,
    /// archives, the profile. Erased and exported.
    Content,
    /// A record that points at content kept elsewhere (the groups a person
    /// wrote in): erased, not exported; its presence alone means the
    /// owner has data.
    Pointer,
    /// Rebuilt from content whenever missing (the recall index): erased,
    /// as it holds content's text; never exported.
    Derived,
    /// What this tool keeps about its own work for the owner (the
    /// compaction journal, finished before any export reads; in-chat
    /// exports, copies pruned after their retention): erased, not exported.
    Record,
    /// A lock file besides the owner's lock: erased, not exported.
    Lock,
    /// The lock over every file of the owner: held by an erase, so removed
    /// last (waiters notice and start over).
    OwnerLock,
    /// What the owner's asks cost: an erase keeps the amounts and times
    /// budgets need; never exported.
    Ledger,
}

/// Whose entry it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    Person,
    Conversation,
    Both,
}

/// Where an entry is.
#[derive(Clone, Copy)]
pub enum Rule {
    /// One path per owner.
    Own(fn(&Layout, &MemoryKey) -> PathBuf),
    /// One path per person (a conversation has none).
    Person(fn(&Layout, &UserId) -> PathBuf),
    /// A file in every member's memberships folder, named by the
    /// conversation: `memberships/<person>/<conversation>`.
    InEveryMember,
    /// Files in the folder of everyone's per-message locks, named by the
    /// owner and a message id's hash: `.locks/inflight/<owner>-<hash>.lock`
    /// and `.failed` (what an `ask` that failed leaves until `maintain`
    /// prunes it).
    Inflight,
}

/// What an entry may hold below its path: a test of the path relative
/// to it (`daily/2026-03-23.md`). A file holds nothing.
#[derive(Clone, Copy)]
pub enum Holds {
    File,
    Folder(fn(&Path) -> bool),
}

/// Which entry: a `match` on it (search's, for one) must say what it
/// does with an entry added later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    Stm,
    Profile,
    Summaries,
    Archive,
    Exports,
    Journal,
    CompactionLock,
    Memberships,
    MembershipRecords,
    Inflight,
    RecallIndex,
    Ledger,
    LegacyLedger,
    OwnerLock,
}

/// One kind of file or folder of an owner.
#[derive(Clone, Copy)]
pub struct OwnerFile {
    pub id: Id,
    /// What it is called in messages and tests.
    pub name: &'static str,
    pub class: Class,
    pub whose: Whose,
    pub rule: Rule,
    pub holds: Holds,
    /// Fixed folders inside it (as a folder's own, never links).
    pub inner: &'static [&'static str],
    /// What marks an owner as there at all: the short-term folder (what
    /// the owners' list and migration go by).
    pub marks_owner: bool,
}

impl std::fmt::Debug for OwnerFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// One name of a relative path: `Some("x")` for `x`, `None` for `a/b`.
fn single(relative: &Path) -> Option<&str> {
    let mut parts = relative.components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(name)), None) => name.to_str(),
        _ => None,
    }
}

fn in_stm(relative: &Path) -> bool {
    matches!(single(relative), Some("messages.jsonl" | "summary.md"))
}

fn in_summaries(relative: &Path) -> bool {
    let (Some(folder), Some(name)) = (
        relative.parent().and_then(|p| single(p)),
        relative.file_name().and_then(|n| n.to_str()),
    ) else {
        return false;
    };
    let stem = Layout::markdown_stem(name);
    match folder {
        "daily" => stem.and_then(Layout::daily_day).is_some(),
        "weekly" => stem.and_then(Layout::weekly_week).is_some(),
        _ => false,
    }
}

fn in_archive(relative: &Path) -> bool {
    single(relative).is_some_and(|name| {
        Layout::archive_day(name).is_some() || Layout::archived_summary_day(name).is_some()
    })
}

fn in_exports(relative: &Path) -> bool {
    single(relative).is_some_and(|name| Layout::chat_export_time(name).is_some())
}

fn in_memberships(relative: &Path) -> bool {
    single(relative).is_some_and(|name| MemoryKey::from_folder_name(name).is_some())
}

/// The recall index's segments: their names are the index's own
/// (`memory::retrieval::index`).
fn anything(_: &Path) -> bool {
    true
}

fn in_ledger(relative: &Path) -> bool {
    single(relative) == Some("asks.jsonl")
}

/// Every entry, in the order an erase removes them (the owner's lock
/// last) and an export copies them.
pub const ENTRIES: &[OwnerFile] = &[
    OwnerFile {
        id: Id::Stm,
        name: "short-term memory (stm/<owner>/: log, rolling summary)",
        class: Class::Content,
        whose: Whose::Both,
        rule: Rule::Own(Layout::stm_dir),
        holds: Holds::Folder(in_stm),
        inner: &[],
        marks_owner: true,
    },
    OwnerFile {
        id: Id::Profile,
        name: "profile (ltm/users/<person>.md)",
        class: Class::Content,
        whose: Whose::Person,
        rule: Rule::Person(Layout::profile_file),
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Summaries,
        name: "tiered summaries (summaries/<owner>/daily, weekly)",
        class: Class::Content,
        whose: Whose::Both,
        rule: Rule::Own(Layout::summaries_dir),
        holds: Holds::Folder(in_summaries),
        inner: &["daily", "weekly"],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Archive,
        name: "archive (archive/<owner>/: rotated logs, archived summaries)",
        class: Class::Content,
        whose: Whose::Both,
        rule: Rule::Own(Layout::archive_dir),
        holds: Holds::Folder(in_archive),
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Exports,
        name: "in-chat exports (exports/<person>/)",
        class: Class::Record,
        whose: Whose::Person,
        rule: Rule::Own(Layout::exports_dir),
        holds: Holds::Folder(in_exports),
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Journal,
        name: "compaction journal (.journal/<owner>.json)",
        class: Class::Record,
        whose: Whose::Both,
        rule: Rule::Own(Layout::compaction_journal_file),
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::CompactionLock,
        name: "compaction lock (.locks/compact/<owner>.lock)",
        class: Class::Lock,
        whose: Whose::Both,
        rule: Rule::Own(Layout::compaction_lock_file),
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Memberships,
        name: "memberships (memberships/<person>/: the groups they wrote in)",
        class: Class::Pointer,
        whose: Whose::Person,
        rule: Rule::Person(Layout::memberships_dir),
        holds: Holds::Folder(in_memberships),
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::MembershipRecords,
        name: "membership records naming a conversation (memberships/<person>/<conversation>)",
        class: Class::Pointer,
        whose: Whose::Conversation,
        rule: Rule::InEveryMember,
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Inflight,
        name: "per-message locks and failure records (.locks/inflight/<owner>-<hash>.lock, .failed)",
        class: Class::Lock,
        whose: Whose::Both,
        rule: Rule::Inflight,
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::RecallIndex,
        name: "recall index (.recall/<owner>/)",
        class: Class::Derived,
        whose: Whose::Both,
        rule: Rule::Own(Layout::recall_index_dir),
        holds: Holds::Folder(anything),
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::Ledger,
        name: "cost ledger (costs/per-user/<person>/asks.jsonl)",
        class: Class::Ledger,
        whose: Whose::Person,
        rule: Rule::Person(Layout::user_ledger_dir),
        holds: Holds::Folder(in_ledger),
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::LegacyLedger,
        name: "cost ledger of earlier versions (costs/users/<person>.jsonl)",
        class: Class::Ledger,
        whose: Whose::Person,
        rule: Rule::Person(Layout::legacy_user_ledger_file),
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
    OwnerFile {
        id: Id::OwnerLock,
        name: "owner lock (.locks/users/<owner>.lock)",
        class: Class::OwnerLock,
        whose: Whose::Both,
        rule: Rule::Own(Layout::user_lock_file),
        holds: Holds::File,
        inner: &[],
        marks_owner: false,
    },
];

impl OwnerFile {
    /// Whether this entry is one of `owner`'s (a person's or a
    /// conversation's).
    pub fn applies_to(&self, owner: &MemoryKey) -> bool {
        match self.whose {
            Whose::Both => true,
            Whose::Person => !owner.is_conversation(),
            Whose::Conversation => owner.is_conversation(),
        }
    }

    /// Its one path for `owner`; `None` for an entry of many files in
    /// folders that are not the owner's ([`Rule::InEveryMember`],
    /// [`Rule::Inflight`]).
    pub fn path(&self, layout: &Layout, owner: &MemoryKey) -> Option<PathBuf> {
        match self.rule {
            Rule::Own(path) => Some(path(layout, owner)),
            Rule::Person(path) => owner.person_id().map(|person| path(layout, &person)),
            Rule::InEveryMember | Rule::Inflight => None,
        }
    }

    /// An erase removes it (the owner's lock last, by the erase itself).
    pub fn erased(&self) -> bool {
        !matches!(self.class, Class::Ledger | Class::OwnerLock)
    }

    /// An export copies it.
    pub fn exported(&self) -> bool {
        self.class == Class::Content
    }

    /// Its presence alone means the owner has data: read commands accept
    /// the id.
    pub fn shows_data(&self) -> bool {
        matches!(self.class, Class::Content | Class::Pointer)
    }

    /// Counted in the bytes of the owner's row (`session users`,
    /// `session conversations`): for a person, everything an erase
    /// removes; for a conversation, its content only (as the numbers were
    /// first kept).
    pub fn counted_for(&self, owner: &MemoryKey) -> bool {
        if owner.is_conversation() {
            self.exported()
        } else {
            self.erased()
        }
    }

    /// Migration moves it with a conversation kept under its bare key:
    /// what a conversation has, but its locks (they are per name). The
    /// recall index too: derived, but the archives keep their identity
    /// when moved.
    pub fn migrates(&self) -> bool {
        self.whose != Whose::Person && !matches!(self.class, Class::Lock | Class::OwnerLock)
    }

    /// Moved last: the short-term folder is what marks a folder as a
    /// conversation to move, so a move killed midway is finished next time.
    pub fn migrated_last(&self) -> bool {
        self.marks_owner
    }

    /// Whether `path` (anything under the sessions dir) is this entry for
    /// `owner`, or something it may hold.
    pub fn names(&self, layout: &Layout, owner: &MemoryKey, path: &Path) -> bool {
        let own = match self.rule {
            Rule::Own(rule) => rule(layout, owner),
            Rule::Person(rule) => match owner.person_id() {
                Some(person) => rule(layout, &person),
                None => return false,
            },
            Rule::InEveryMember => {
                let Ok(relative) = path.strip_prefix(layout.memberships_root()) else {
                    return false;
                };
                let mut parts = relative.components();
                let person = parts.next().and_then(|p| p.as_os_str().to_str());
                return parts
                    .next()
                    .is_some_and(|c| c.as_os_str() == owner.as_str())
                    && parts.next().is_none()
                    && person.is_some_and(|p| UserId::new(p).is_ok());
            }
            Rule::Inflight => {
                return path.parent() == Some(layout.inflight_dir().as_path())
                    && path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(Layout::inflight_owner)
                        == Some(owner.as_str());
            }
        };
        if path == own {
            return true;
        }
        match (self.holds, path.strip_prefix(&own)) {
            (Holds::Folder(holds), Ok(relative)) => {
                holds(relative) || self.inner.iter().any(|inner| relative == Path::new(inner))
            }
            _ => false,
        }
    }
}

/// The entries of one owner.
pub fn entries_of(owner: &MemoryKey) -> impl Iterator<Item = &'static OwnerFile> + '_ {
    ENTRIES.iter().filter(move |entry| entry.applies_to(owner))
}

/// The paths of `owner`'s entries that pass `which`, in registry order.
pub fn paths(
    layout: &Layout,
    owner: &MemoryKey,
    which: impl Fn(&OwnerFile) -> bool,
) -> Vec<PathBuf> {
    entries_of(owner)
        .filter(|entry| which(entry))
        .filter_map(|entry| entry.path(layout, owner))
        .collect()
}

/// The entry that names `path` as `owner`'s, if any.
pub fn entry_naming(layout: &Layout, owner: &MemoryKey, path: &Path) -> Option<&'static OwnerFile> {
    entries_of(owner).find(|entry| entry.names(layout, owner, path))
}

/// Files of the state dir that are nobody's: the config, the LTM index,
/// the channel's and the maintenance ledger, topic notes, channel-wide
/// locks (not the per-message ones: [`Rule::Inflight`]), broker logs.
/// Whether `path` (under the state dir) is one.
pub fn is_shared_file(layout: &Layout, path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let parent = path.parent().unwrap_or(path);
    path == layout.config_file()
        || path == layout.index_file()
        || path == layout.maintenance_ledger_file()
        || path == layout.index_lock_file()
        || path == layout.ledger_lock_file()
        || path == layout.maintain_lock_file()
        || (parent == layout.costs_dir() && Layout::is_channel_ledger(name))
        || (parent == layout.topics_dir() && Layout::markdown_stem(name).is_some())
        || parent == layout.logs_dir()
        || parent == layout.archive_logs_dir()
}

impl Layout {
    /// Every folder one owner's files are written into or removed from,
    /// areas first: what must never be a symbolic link. The folders from
    /// `sessions/` down to each of the owner's entries (and an entry's own
    /// fixed folders).
    pub fn owned_dirs(&self, user: &MemoryKey) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut add = |dir: PathBuf| {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        };
        // Every entry, whatever the owner's kind: a conversation's lock
        // also guards the folders a person's entries use (a sender's
        // membership record is written beside a group line).
        for entry in ENTRIES {
            let path = match entry.rule {
                Rule::Own(rule) => rule(self, user),
                // A person's entry has the same areas above it for every
                // owner, so a conversation's lock guards them too; the
                // entry's own folder is named by the key's text as a
                // person's would be (it never exists for a conversation).
                Rule::Person(rule) => rule(self, &UserId::folder_of(user)),
                Rule::InEveryMember => continue,
                // One of its files: the folders above it are what count.
                Rule::Inflight => self.inflight_lock_file(user, ""),
            };
            let mut chain: Vec<PathBuf> = path
                .ancestors()
                .skip(1)
                .take_while(|dir| dir.starts_with(&self.sessions) && *dir != self.sessions)
                .map(Path::to_path_buf)
                .collect();
            chain.reverse();
            chain.into_iter().for_each(&mut add);
            if let Holds::Folder(_) = entry.holds {
                add(path.clone());
                for inner in entry.inner {
                    add(path.join(inner));
                }
            }
        }
        dirs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::ConversationKey;

    /// The folders an erase and the user lock refuse as links, every one.
    #[test]
    fn owned_dirs_are_the_folders_of_every_entry() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let owned = layout.owned_dirs(&MemoryKey::person(&u));
        let s = |p: &str| PathBuf::from(format!("/s/sessions/{p}"));
        for want in [
            "stm",
            "stm/U1",
            "summaries",
            "summaries/U1",
            "summaries/U1/daily",
            "summaries/U1/weekly",
            "archive",
            "archive/U1",
            "exports",
            "exports/U1",
            "memberships",
            "memberships/U1",
            ".recall",
            ".recall/U1",
            "ltm",
            "ltm/users",
            ".journal",
            "costs",
            "costs/per-user",
            "costs/per-user/U1",
            "costs/users",
            ".locks",
            ".locks/compact",
            ".locks/inflight",
            ".locks/users",
        ] {
            assert!(owned.contains(&s(want)), "{want}: {owned:?}");
        }
        assert_eq!(owned.len(), 25, "{owned:?}");
        // The same folders for a conversation's key.
        let g = MemoryKey::conversation(&ConversationKey::new("G1").unwrap());
        let of_g: Vec<String> = layout
            .owned_dirs(&g)
            .iter()
            .map(|d| d.display().to_string().replace("#G1", "U1"))
            .collect();
        let of_u: Vec<String> = owned.iter().map(|d| d.display().to_string()).collect();
        assert_eq!(of_g, of_u);
        assert!(
            owned
                .iter()
                .all(|dir| dir.starts_with(layout.sessions_dir()))
        );
    }

    #[test]
    fn each_file_of_an_owner_is_named_by_one_entry() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let k = MemoryKey::person(&u);
        let g = MemoryKey::conversation(&ConversationKey::new("G1").unwrap());
        let day = chrono::NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        for (owner, path) in [
            (&k, layout.messages_file(&k)),
            (&k, layout.summary_file(&k)),
            (&k, layout.daily_file(&k, day)),
            (&k, layout.weekly_file(&k, 2026, 13)),
            (&k, layout.archive_file(&k, day)),
            (&k, layout.archived_summary_file(&k, day)),
            (&k, layout.membership_file(&u, &g)),
            (&g, layout.membership_file(&u, &g)),
            (&k, layout.user_ledger_file(&u)),
            (&g, layout.compaction_lock_file(&g)),
        ] {
            assert!(
                entry_naming(&layout, owner, &path).is_some(),
                "{}",
                path.display()
            );
        }
        for (owner, path) in [
            (&k, layout.stm_dir(&k).join("notes.txt")),
            (&k, layout.daily_dir(&k).join("2026-13-01.md")),
            (&g, layout.profiles_dir().join("#G1.md")),
            (&k, layout.messages_file(&g)),
        ] {
            assert!(
                entry_naming(&layout, owner, &path).is_none(),
                "{}",
                path.display()
            );
        }
        assert!(ENTRIES.iter().filter(|e| e.migrated_last()).count() == 1);
    }
}

//! The tag index of topic notes and profiles (`ltm/index.json`): kept up
//! to date under its own lock, rebuilt from the notes on demand.

use super::*;

/// One entry of `ltm/index.json`, in the seed's schema (`type`, and
/// `path` relative to `sessions/`: `ltm/users/U1.md`), so the seed's
/// search, `forget` and `clear all` work on an index this tool wrote.
/// Reads this tool's older form too (`kind`, `users/U1.md`); extra fields
/// (`title`) are ignored by the seed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    #[serde(rename = "type", alias = "kind")]
    pub kind: IndexKind,
    pub id: String,
    /// Relative to `ltm/` in memory (`users/U1.md`); `ltm/users/U1.md` on disk.
    #[serde(
        serialize_with = "write_index_path",
        deserialize_with = "read_index_path"
    )]
    pub path: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
}

pub(super) fn write_index_path<S: serde::Serializer>(path: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{INDEX_PATH_PREFIX}{path}"))
}

pub(super) fn read_index_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::Deserialize as _;
    let path = String::deserialize(d)?;
    Ok(path
        .strip_prefix(INDEX_PATH_PREFIX)
        .map_or(path.clone(), str::to_owned))
}

/// What an index entry is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexKind {
    /// A person's profile (`ltm/users/<user>.md`).
    User,
    /// A topic note (`ltm/topics/<slug>.md`).
    Topic,
    /// A type another tool wrote: kept as it is, like the entry.
    #[serde(untagged)]
    Other(String),
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Index {
    pub version: u32,
    pub entries: Vec<IndexEntry>,
}

impl IndexEntry {
    pub fn for_user(user: &UserId, doc: &Document) -> Self {
        Self {
            kind: IndexKind::User,
            id: user.to_string(),
            path: Layout::profile_index_key(user),
            tags: doc.get_str_list("tags"),
            title: doc.get_str("display_name").map(str::to_owned),
            updated: doc.get_str("updated").map(str::to_owned),
        }
    }

    pub fn for_topic(slug: &crate::layout::TopicSlug, doc: &Document) -> Self {
        Self {
            kind: IndexKind::Topic,
            id: slug.to_string(),
            path: Layout::topic_index_key(slug),
            tags: doc.get_str_list("tags"),
            title: doc.get_str("title").map(str::to_owned),
            updated: doc.get_str("updated").map(str::to_owned),
        }
    }
}

/// Read the index; an unreadable or foreign-shaped one is rebuilt from the
/// files (it holds nothing the files do not).
pub fn read_index(state: &State) -> anyhow::Result<Index> {
    let path = state.layout.index_file();
    match read_optional_text(&path)? {
        None => Ok(Index {
            version: 1,
            entries: Vec::new(),
        }),
        Some(text) => match serde_json::from_str::<Index>(&text) {
            Ok(index) => Ok(index),
            Err(e) => {
                crate::diag::warn(format!(
                    "{}: not an index this version reads ({e}); rebuilding it from the files",
                    path.display()
                ));
                build_index(state)
            }
        },
    }
}

/// Scan profiles and topics into a fresh index.
pub fn build_index(state: &State) -> anyhow::Result<Index> {
    let mut entries = Vec::new();
    for (dir, kind) in [
        (state.layout.profiles_dir(), IndexKind::User),
        (state.layout.topics_dir(), IndexKind::Topic),
    ] {
        for name in markdown_names(&dir)? {
            let path = Layout::markdown_file(&dir, &name);
            // One unreadable file is warned about; the index holds the rest.
            let text = match crate::memory::stm::read_text_or_warn(&path) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) => {
                    crate::diag::warn(format!("{e:#}; left out of the index"));
                    continue;
                }
            };
            let doc = crate::memory::stm::parse_document_or_warn(&text, &path);
            let entry = match kind {
                IndexKind::User => match UserId::seed_folder(&name) {
                    Ok(user) => IndexEntry::for_user(&user, &doc),
                    Err(_) => continue,
                },
                _ => match crate::layout::TopicSlug::new(&name) {
                    Ok(slug) => IndexEntry::for_topic(&slug, &doc),
                    Err(_) => continue,
                },
            };
            entries.push(entry);
        }
    }
    Ok(Index {
        version: 1,
        entries,
    })
}

/// Names (without `.md`) of the markdown files in a folder, sorted.
pub fn markdown_names(dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut names: Vec<String> = crate::store::fs::file_names(dir)?
        .iter()
        .filter_map(|name| Layout::markdown_stem(name))
        .filter(|stem| !stem.starts_with('.'))
        .map(str::to_owned)
        .collect();
    // By stem: `a.md` before `a-b.md`, as before.
    names.sort();
    Ok(names)
}

/// Replace (or with `None`, remove) the entry at `path` in the index,
/// under the index lock.
pub fn update_index(state: &State, path: &str, entry: Option<IndexEntry>) -> anyhow::Result<()> {
    let lock = state.lock_index()?;
    update_index_locked(state, &lock, &[path], entry)
}

/// Remove the entries at `paths` and add `entry`, under the index lock
/// (topic notes are written under it too).
pub fn update_index_locked(
    state: &State,
    lock: &IndexLock,
    paths: &[&str],
    entry: Option<IndexEntry>,
) -> anyhow::Result<()> {
    let mut index = read_index(state)?;
    index.entries.retain(|e| !paths.contains(&e.path.as_str()));
    if let Some(entry) = entry {
        index.entries.push(entry);
        index.entries.sort_by(|a, b| a.path.cmp(&b.path));
    }
    write_index_locked(state, lock, &index)
}

/// Refresh the index entry of one user's profile from its file.
pub fn index_profile(state: &State, user: &UserId) -> anyhow::Result<()> {
    let path = state.layout.profile_file(user);
    let entry = read_optional_text(&path)?.map(|text| {
        IndexEntry::for_user(
            user,
            &crate::memory::stm::parse_document_or_warn(&text, &path),
        )
    });
    update_index(state, &Layout::profile_index_key(user), entry)
}

/// Write the whole index, under its lock.
pub fn write_index_locked(state: &State, _lock: &IndexLock, index: &Index) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(index)?;
    bytes.push(b'\n');
    write_atomic(&state.layout.index_file(), &bytes, state.fsync())
}

/// Delete a topic note and its index entry. With `owner`, only a note
/// whose frontmatter `owner` is that user (in-chat `forget`). Returns
/// whether a note was deleted.
pub fn forget_topic(
    state: &State,
    slug: &crate::layout::TopicSlug,
    owner: Option<&UserId>,
) -> anyhow::Result<bool> {
    let path = state.layout.topic_file(slug);
    let lock = state.lock_index()?;
    let Some(text) = read_optional_text(&path)? else {
        return Ok(false);
    };
    if let Some(owner) = owner {
        let doc = crate::memory::stm::parse_document_or_warn(&text, &path);
        if doc.get_text("owner").as_deref() != Some(owner.as_str()) {
            return Ok(false);
        }
    }
    crate::store::fs::remove_if_exists(&path)?;
    update_index_locked(state, &lock, &[&Layout::topic_index_key(slug)], None)?;
    Ok(true)
}

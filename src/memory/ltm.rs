//! Long-term memory: user profiles (`ltm/users/<user>.md`), topic notes
//! (`ltm/topics/<slug>.md`) and the tag index (`ltm/index.json`): the
//! facts compaction merges in, and what admins do by hand (validate, set
//! and edit a profile; list, set and forget topics; rebuild the index).

use chrono::{DateTime, Utc};

use crate::layout::{INDEX_PATH_PREFIX, Layout, UserId};
use crate::memory::message::{DEFAULT_CHANNEL, format_ts};
use crate::state::{IndexLock, OwnerLock, State};
use crate::store::atomic::write_atomic;
use crate::store::frontmatter::Document;
use crate::store::fs::read_optional_text;

/// The skeleton the seed's `createUserProfile` writes for a new user.
pub fn skeleton_profile(
    user: &UserId,
    display_name: &str,
    channel: Option<&str>,
    now: DateTime<Utc>,
) -> Document {
    let mut doc = Document::default();
    doc.set("user_id", user.as_str());
    // No name is left out, not written as `display_name: ""`.
    if !display_name.trim().is_empty() {
        doc.set("display_name", display_name);
    }
    doc.set("channel", channel.unwrap_or(DEFAULT_CHANNEL));
    doc.set("created", format_ts(&now));
    doc.set("updated", format_ts(&now));
    doc.set_str_list("tags", Vec::<String>::new());
    doc.body = "## Preferences\n\n## Notes\n".into();
    doc
}

/// Write the skeleton profile unless the user has one. The caller holds
/// the user lock. Returns whether it was created.
pub fn ensure_profile_locked(
    state: &State,
    lock: &OwnerLock,
    display_name: &str,
    channel: Option<&str>,
    now: DateTime<Utc>,
) -> anyhow::Result<bool> {
    let user = lock.owner();
    let path = state.layout.profile_file(user);
    if read_optional_text(&path)?.is_some() {
        return Ok(false);
    }
    let doc = skeleton_profile(user, display_name, channel, now);
    write_atomic(&path, doc.render().as_bytes(), state.fsync())?;
    Ok(true)
}

/// Give a person the skeleton profile, named as the broker knows them
/// (`ask --display-name`), unless they have a profile; index it.
pub fn ensure_profile(
    state: &State,
    user: &UserId,
    display_name: &str,
    channel: Option<&str>,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    // Brokers pass a name on every message: look before locking.
    if state.layout.profile_file(user).exists() {
        return Ok(());
    }
    let created = {
        let lock = state.lock_user(user)?;
        ensure_profile_locked(state, &lock, display_name, channel, now)?
    };
    if created {
        index_profile(state, user)?;
    }
    Ok(())
}

/// Durable facts about a user, as compaction's structured answer gives them.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct ProfileFacts {
    pub name: Option<String>,
    pub language: Option<String>,
    pub timezone: Option<String>,
    #[serde(deserialize_with = "lenient_list")]
    pub preferences: Vec<String>,
    #[serde(deserialize_with = "lenient_list")]
    pub topics: Vec<String>,
    #[serde(deserialize_with = "lenient_list")]
    pub tags: Vec<String>,
}

impl ProfileFacts {
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.language.is_none()
            && self.timezone.is_none()
            && self.preferences.is_empty()
            && self.topics.is_empty()
            && self.tags.is_empty()
    }
}

/// A list of strings; `null` or a single string are accepted too.
fn lenient_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    use serde::Deserialize as _;
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Array(items) => items
            .into_iter()
            .filter_map(|v| v.as_str().map(|s| s.trim().to_owned()))
            .filter(|s| !s.is_empty())
            .collect(),
        serde_json::Value::String(s) if !s.trim().is_empty() => vec![s.trim().to_owned()],
        _ => Vec::new(),
    })
}

const PREFERENCES: &str = "## Preferences";
const TOPICS: &str = "## Ongoing Topics";

/// Merge facts into the user's profile, in the seed's sections. Nothing an
/// admin wrote is removed: a `- Language:` line is updated in place, other
/// facts are added as bullets if not already there. The caller holds the
/// user lock. Returns the profile as written.
pub fn merge_facts_locked(
    state: &State,
    lock: &OwnerLock,
    facts: &ProfileFacts,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<Document>> {
    let user = lock.owner();
    if facts.is_empty() {
        return Ok(None);
    }
    let path = state.layout.profile_file(user);
    let name = facts.name.as_deref().filter(|n| !n.trim().is_empty());
    let mut doc = match read_optional_text(&path)? {
        Some(text) => Document::parse(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e}; fix the profile (claude-session session profile --edit) so facts can be merged",
                path.display()
            )
        })?,
        None => {
            let name = name.unwrap_or(user.as_str());
            skeleton_profile(user, name, state.channel.as_ref().map(|c| c.as_str()), now)
        }
    };
    if let Some(name) = name
        && doc
            .get_str("display_name")
            .is_none_or(|n| n == user.as_str())
    {
        doc.set("display_name", name);
    }
    let mut body = doc.body.clone();
    for (label, value) in [
        ("Name", &facts.name),
        ("Language", &facts.language),
        ("Timezone", &facts.timezone),
    ] {
        if let Some(value) = value.as_deref().filter(|v| !v.trim().is_empty()) {
            body = set_labelled_bullet(&body, PREFERENCES, label, value);
        }
    }
    for preference in &facts.preferences {
        body = add_bullet(&body, PREFERENCES, preference);
    }
    for topic in &facts.topics {
        body = add_bullet(&body, TOPICS, topic);
    }
    doc.body = body;
    let tags = doc
        .get_str_list("tags")
        .into_iter()
        .chain(facts.tags.clone());
    doc.set_str_list("tags", normalise_tags(tags));
    doc.set("updated", format_ts(&now));
    write_atomic(&path, doc.render().as_bytes(), state.fsync())?;
    Ok(Some(doc))
}

/// Tags as they are written: in the case the person (or the model) used,
/// one line each, trimmed, without a comma, the first of a case-insensitive
/// duplicate kept. Matching (`session search --tag`) ignores case; the
/// seed's own `searchByTags` does not, so `TOEIC` stays `TOEIC`.
///
/// The seed's frontmatter parser splits a tag list on commas, so no tag
/// can hold one: a comma is read as the seed reads it, as two tags
/// (`"exam, english"` is `exam` and `english`), the one form both tools
/// read back the same.
pub fn normalise_tags(tags: impl IntoIterator<Item = impl AsRef<str>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        for part in tag.as_ref().split(',') {
            let part = one_line(part);
            if !part.is_empty() && !out.iter().any(|t| t.to_lowercase() == part.to_lowercase()) {
                out.push(part);
            }
        }
    }
    out
}

/// The line range of a `## Heading` section's content (after the heading,
/// up to the next `## ` heading), adding the section at the end if missing.
fn section_range(body: &str, heading: &str) -> (String, usize, usize) {
    let mut body = body.trim_end().to_owned();
    let find = |b: &str| {
        let mut offset = 0;
        for line in b.split_inclusive('\n') {
            if line.trim_end() == heading {
                return Some(offset + line.len());
            }
            offset += line.len();
        }
        None
    };
    let start = match find(&body) {
        Some(start) => start,
        None => {
            if !body.is_empty() {
                body.push_str("\n\n");
            }
            body.push_str(heading);
            body.push('\n');
            body.len()
        }
    };
    if !body.ends_with('\n') {
        body.push('\n');
    }
    let start = start.min(body.len());
    let end = body[start..]
        .find("\n## ")
        .map_or(body.len(), |i| start + i + 1);
    (body, start, end)
}

fn set_labelled_bullet(body: &str, heading: &str, label: &str, value: &str) -> String {
    let (body, start, end) = section_range(body, heading);
    let prefix = format!("- {label}:");
    let section = &body[start..end];
    let new_line = format!("{prefix} {}", one_line(value));
    let mut lines: Vec<String> = section.lines().map(str::to_owned).collect();
    match lines
        .iter()
        .position(|l| l.to_lowercase().starts_with(&prefix.to_lowercase()))
    {
        Some(i) => lines[i] = new_line,
        None => insert_bullet(&mut lines, new_line),
    }
    splice(&body, start, end, &lines)
}

fn add_bullet(body: &str, heading: &str, item: &str) -> String {
    let (body, start, end) = section_range(body, heading);
    let item = one_line(item);
    let mut lines: Vec<String> = body[start..end].lines().map(str::to_owned).collect();
    let known = lines.iter().any(|l| {
        l.trim_start_matches(['-', '*', ' '])
            .eq_ignore_ascii_case(&item)
    });
    if !known {
        insert_bullet(&mut lines, format!("- {item}"));
    }
    splice(&body, start, end, &lines)
}

/// After the section's last non-blank line.
fn insert_bullet(lines: &mut Vec<String>, bullet: String) {
    let at = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    lines.insert(at, bullet);
}

fn splice(body: &str, start: usize, end: usize, lines: &[String]) -> String {
    let mut section = lines.join("\n");
    section = section.trim_end().to_owned();
    section.push('\n');
    if end < body.len() {
        section.push('\n');
    }
    format!("{}{}{}", &body[..start], section, &body[end..])
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

// --- the index ---------------------------------------------------------------

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

fn write_index_path<S: serde::Serializer>(path: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{INDEX_PATH_PREFIX}{path}"))
}

fn read_index_path<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
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

// --- for admins: whole profiles and topic notes -------------------------------

/// A profile or topic note as stored: its path, its text, and the text
/// parsed (a broken frontmatter is warned about and read as all body).
#[derive(Debug, Clone)]
pub struct Note {
    pub path: std::path::PathBuf,
    pub text: String,
    pub doc: Document,
}

fn read_note(path: std::path::PathBuf) -> anyhow::Result<Option<Note>> {
    let Some(text) = read_optional_text(&path)? else {
        return Ok(None);
    };
    let doc = crate::memory::stm::parse_document_or_warn(&text, &path);
    Ok(Some(Note { path, text, doc }))
}

/// The user's profile, if they have one.
pub fn read_profile(state: &State, user: &UserId) -> anyhow::Result<Option<Note>> {
    read_note(state.layout.profile_file(user))
}

/// The topic note, if there is one.
pub fn read_topic(state: &State, slug: &crate::layout::TopicSlug) -> anyhow::Result<Option<Note>> {
    read_note(state.layout.topic_file(slug))
}

/// A profile an admin gives (`--set`, `--edit`): it must parse, its tags
/// be a list, and it must name the right user (added when missing).
/// `updated` is set to `now`.
pub fn validate_profile(user: &UserId, text: &str, now: DateTime<Utc>) -> anyhow::Result<Document> {
    use crate::error::usage;
    if text.trim().is_empty() {
        return Err(usage(
            "the new profile is empty; nothing was changed (to erase a profile, use \
             `session clear --all`)",
        ));
    }
    let mut doc = Document::parse(text).map_err(|e| usage(format!("the new profile: {e}")))?;
    if let Some(tags) = doc.front.get("tags")
        && !tags.is_sequence()
    {
        return Err(usage(
            "the new profile's tags must be a list, like `tags: [tea, kayak]`; fix the frontmatter",
        ));
    }
    if doc.front.contains_key("tags") {
        let given = doc.get_str_list("tags");
        doc.set_str_list("tags", normalise_tags(given));
    }
    match doc.get_text("user_id").as_deref() {
        Some(id) if id != user.as_str() => {
            return Err(usage(format!(
                "the new profile says user_id: {id}, but it is for {user}; fix the frontmatter"
            )));
        }
        Some(_) => {}
        None => doc.set("user_id", user.as_str()),
    }
    doc.set("updated", format_ts(&now));
    Ok(doc)
}

/// Replace the user's profile with `doc` (an admin's `--set`) and refresh
/// its index entry. The name and the creation time stay unless `doc` gives
/// them: a profile body pasted alone must not drop them. Returns the path.
pub fn set_profile(
    state: &State,
    user: &UserId,
    mut doc: Document,
) -> anyhow::Result<std::path::PathBuf> {
    let path = state.layout.profile_file(user);
    {
        let _lock = state.lock_user(user)?;
        if let Some(old) = crate::memory::stm::read_text_or_warn(&path)? {
            let old = crate::memory::stm::parse_document_or_warn(&old, &path);
            for key in ["display_name", "created"] {
                if doc.front.get(key).is_none()
                    && let Some(value) = old.front.get(key)
                {
                    doc.set(key, value.clone());
                }
            }
        }
        write_atomic(&path, doc.render().as_bytes(), state.fsync())?;
    }
    index_profile(state, user)?;
    Ok(path)
}

/// The text an editor starts from: the stored profile, else the skeleton.
pub fn profile_draft(state: &State, user: &UserId, now: DateTime<Utc>) -> anyhow::Result<String> {
    Ok(
        match read_optional_text(&state.layout.profile_file(user))? {
            Some(text) => text,
            None => skeleton_profile(user, user.as_str(), None, now).render(),
        },
    )
}

/// Write an edited profile, unless the file changed since `before` (the
/// text the editor started from) was read: a compaction may have merged
/// facts meanwhile, and what the admin did not see is never overwritten.
/// Returns the path written, or `None` when the file changed.
pub fn replace_profile_if_unchanged(
    state: &State,
    user: &UserId,
    before: &str,
    doc: &Document,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    let path = state.layout.profile_file(user);
    {
        let _lock = state.lock_user(user)?;
        let now = read_optional_text(&path)?.unwrap_or_default();
        let unchanged = now == before || (now.is_empty() && !path.exists());
        if !unchanged {
            return Ok(None);
        }
        write_atomic(&path, doc.render().as_bytes(), state.fsync())?;
    }
    index_profile(state, user)?;
    Ok(Some(path))
}

/// One topic note as `session topics` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TopicListing {
    pub slug: String,
    pub title: Option<String>,
    pub tags: Vec<String>,
    /// The frontmatter's `owner`: the person whose in-chat `forget` may delete it.
    pub owner: Option<String>,
    pub updated: Option<String>,
}

/// Every topic note, by slug.
pub fn topics(state: &State) -> anyhow::Result<Vec<TopicListing>> {
    let mut listed = Vec::new();
    for name in markdown_names(&state.layout.topics_dir())? {
        let Ok(slug) = crate::layout::TopicSlug::new(&name) else {
            continue;
        };
        let Some(note) = read_topic(state, &slug)? else {
            continue;
        };
        let entry = IndexEntry::for_topic(&slug, &note.doc);
        listed.push(TopicListing {
            slug: slug.to_string(),
            title: entry.title,
            tags: entry.tags,
            owner: note.doc.get_str("owner").map(str::to_owned),
            updated: entry.updated,
        });
    }
    Ok(listed)
}

/// Write a topic note an admin gives (markdown, optional frontmatter) and
/// its index entry. The title defaults to the slug; `tags`, when given,
/// replace the note's (as `normalise_tags` writes them). Returns the path.
pub fn set_topic(
    state: &State,
    slug: &crate::layout::TopicSlug,
    text: &str,
    tags: &[String],
    now: DateTime<Utc>,
) -> anyhow::Result<std::path::PathBuf> {
    use crate::error::usage;
    let mut doc = Document::parse(text).map_err(|e| usage(format!("the topic note: {e}")))?;
    if doc.body.trim().is_empty() {
        return Err(usage(
            "the topic note is empty; give its text in FILE or on stdin",
        ));
    }
    if doc.get_str("title").is_none() {
        doc.set("title", slug.as_str());
    }
    if !tags.is_empty() {
        doc.set_str_list("tags", normalise_tags(tags));
    } else if doc.front.contains_key("tags") {
        let given = doc.get_str_list("tags");
        doc.set_str_list("tags", normalise_tags(given));
    }
    doc.set("updated", format_ts(&now));
    let path = state.layout.topic_file(slug);
    // Topic notes are shared: the LTM index lock guards them too.
    let lock = state.lock_index()?;
    write_atomic(&path, doc.render().as_bytes(), state.fsync())?;
    let entry = IndexEntry::for_topic(slug, &doc);
    update_index_locked(state, &lock, &[&entry.path.clone()], Some(entry))?;
    Ok(path)
}

/// Rebuild `ltm/index.json` from the files. Returns how many entries it has.
pub fn reindex(state: &State) -> anyhow::Result<usize> {
    let lock = state.lock_index()?;
    let index = build_index(state)?;
    write_index_locked(state, &lock, &index)?;
    Ok(index.entries.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_bullets_update_in_place_and_admin_text_stays() {
        let body =
            "## Preferences\n- Language: English\n- Likes tea\n\n## Notes (admin)\nVIP customer.\n";
        let body = set_labelled_bullet(body, PREFERENCES, "Language", "Traditional Chinese");
        let body = set_labelled_bullet(&body, PREFERENCES, "Timezone", "UTC+8");
        let body = add_bullet(&body, TOPICS, "TOEIC 860 preparation");
        let body = add_bullet(&body, TOPICS, "toeic 860 preparation");
        assert_eq!(
            body,
            "## Preferences\n- Language: Traditional Chinese\n- Likes tea\n- Timezone: UTC+8\n\n\
             ## Notes (admin)\nVIP customer.\n\n## Ongoing Topics\n- TOEIC 860 preparation\n"
        );
    }

    #[test]
    fn the_index_is_written_in_the_seed_schema_and_both_forms_read() {
        let seed = r#"{"version":1,"entries":[{"type":"user","id":"U1","path":"ltm/users/U1.md","tags":["toeic"],"updated":"2026-03-23T03:28:32.000Z"}]}"#;
        let ours = r#"{"version":1,"entries":[{"kind":"topic","id":"t","path":"topics/t.md","tags":[],"title":"T"}]}"#;
        let seed: Index = serde_json::from_str(seed).unwrap();
        let ours: Index = serde_json::from_str(ours).unwrap();
        assert_eq!(seed.entries[0].kind, IndexKind::User);
        assert_eq!(seed.entries[0].path, "users/U1.md");
        assert_eq!(ours.entries[0].kind, IndexKind::Topic);
        assert_eq!(ours.entries[0].path, "topics/t.md");
        let written: serde_json::Value = serde_json::to_value(&seed.entries[0]).unwrap();
        assert_eq!(written["type"], "user");
        assert_eq!(written["path"], "ltm/users/U1.md");
        assert!(written.get("kind").is_none());
        // A type another tool wrote survives a rewrite.
        let other: IndexEntry =
            serde_json::from_str(r#"{"type":"note","id":"n","path":"ltm/notes/n.md"}"#).unwrap();
        assert_eq!(other.kind, IndexKind::Other("note".into()));
        assert_eq!(serde_json::to_value(&other).unwrap()["type"], "note");
    }

    #[test]
    fn facts_parse_leniently() {
        let facts: ProfileFacts = serde_json::from_str(
            r#"{"name": "Kevin", "language": null, "preferences": "short answers", "topics": null, "extra": 1}"#,
        )
        .unwrap();
        assert_eq!(facts.name.as_deref(), Some("Kevin"));
        assert_eq!(facts.preferences, vec!["short answers"]);
        assert!(facts.topics.is_empty());
    }
}

//! What admins do by hand: whole profiles (validate, set, edit as a
//! draft) and topic notes (list, set, forget).

use super::*;

/// A profile or topic note as stored: its path, its text, and the text
/// parsed (a broken frontmatter is warned about and read as all body).
#[derive(Debug, Clone)]
pub struct Note {
    pub path: std::path::PathBuf,
    pub text: String,
    pub doc: Document,
}

pub(super) fn read_note(path: std::path::PathBuf) -> anyhow::Result<Option<Note>> {
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
        let _lock = state.lock_person(user)?;
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
        let _lock = state.lock_person(user)?;
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

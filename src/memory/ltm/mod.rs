//! Long-term memory: user profiles (`ltm/users/<user>.md`), topic notes
//! (`ltm/topics/<slug>.md`) and the tag index (`ltm/index.json`): the
//! facts compaction merges in, and what admins do by hand (validate, set
//! and edit a profile; list, set and forget topics; rebuild the index).
//! The tag index is `index`, the admins' whole-file work `admin`.

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
    let user = &lock.person()?;
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
        let lock = state.lock_person(user)?;
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
    let user = &lock.person()?;
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

mod admin;
mod index;

pub use admin::*;
pub use index::*;

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

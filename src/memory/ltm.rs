//! Long-term memory: user profiles (`ltm/users/<user>.md`), topic notes
//! (`ltm/topics/<slug>.md`) and the tag index (`ltm/index.json`).

use chrono::{DateTime, Utc};
use serde_yaml::Value;

use crate::layout::UserId;
use crate::memory::message::format_ts;
use crate::state::State;
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
    doc.set("display_name", display_name);
    if let Some(channel) = channel {
        doc.set("channel", channel);
    }
    doc.set("created", format_ts(&now));
    doc.set("updated", format_ts(&now));
    doc.set("tags", Value::Sequence(Vec::new()));
    doc.body = "## Preferences\n\n## Notes\n".into();
    doc
}

/// Write the skeleton profile unless the user has one. The caller holds
/// the user lock. Returns whether it was created.
pub fn ensure_profile_locked(
    state: &State,
    user: &UserId,
    display_name: &str,
    channel: Option<&str>,
    now: DateTime<Utc>,
) -> anyhow::Result<bool> {
    let path = state.layout.profile_file(user);
    if read_optional_text(&path)?.is_some() {
        return Ok(false);
    }
    let doc = skeleton_profile(user, display_name, channel, now);
    write_atomic(&path, doc.render().as_bytes(), state.fsync())?;
    Ok(true)
}

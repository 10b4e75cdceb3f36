//! Long-term memory under `ltm/`: profiles, topic notes, the seed's index
//! and its keys; and the markdown notes' naming (`<stem>.md`) that
//! profiles, topic notes and summaries share.

use std::path::{Path, PathBuf};

use super::{Layout, TopicSlug, UserId};

impl Layout {
    pub fn ltm_dir(&self) -> PathBuf {
        self.sessions.join("ltm")
    }

    pub fn profiles_dir(&self) -> PathBuf {
        self.ltm_dir().join("users")
    }

    pub fn profile_file(&self, user: &UserId) -> PathBuf {
        Self::markdown_file(&self.profiles_dir(), user.as_str())
    }

    pub fn topics_dir(&self) -> PathBuf {
        self.ltm_dir().join("topics")
    }

    pub fn topic_file(&self, slug: &TopicSlug) -> PathBuf {
        Self::markdown_file(&self.topics_dir(), slug.as_str())
    }

    pub fn index_file(&self) -> PathBuf {
        self.ltm_dir().join("index.json")
    }

    /// A profile's key in `ltm/index.json` (relative to `ltm/`, see
    /// [`super::INDEX_PATH_PREFIX`]): `users/U1.md`.
    pub fn profile_index_key(user: &UserId) -> String {
        format!("users/{user}.md")
    }

    /// A topic note's key in `ltm/index.json`: `topics/toeic.md`.
    pub fn topic_index_key(slug: &TopicSlug) -> String {
        format!("topics/{slug}.md")
    }

    // --- markdown notes ----------------------------------------------------
    //
    // Profiles, topic notes and summaries are `<name>.md` files; listings
    // go by the name without `.md` (the stem).

    /// The note `<stem>.md` in `dir` (a folder of this layout).
    pub fn markdown_file(dir: &Path, stem: &str) -> PathBuf {
        dir.join(format!("{stem}.md"))
    }

    /// The stem of a note's file name (`U1.md` → `U1`); `None` for any
    /// other file.
    pub fn markdown_stem(file_name: &str) -> Option<&str> {
        file_name.strip_suffix(".md")
    }
}

//! The names that become path components, validated: user ids (and the
//! seed's folders outside the id rules), conversation keys and the mark
//! that keeps them apart, the memory keys made of either (whose memory a
//! folder holds), topic slugs, channel names.

use std::fmt;

use crate::error::usage;

/// Longest id or slug accepted, in bytes. Real platform ids are far shorter
/// (LINE: 33, Teams: about 90); anything longer is a mistake or an attack.
pub const MAX_NAME_LEN: usize = 128;

/// Characters allowed in a user id besides ASCII letters and digits: enough
/// for Slack `U0123ABC`, Telegram `-100123`, Teams `29:1a-b`, WhatsApp
/// `8869…@c.us`, nothing that is a path separator, a control character, a
/// shell metacharacter or a look-alike of one.
const ID_PUNCTUATION: &[char] = &['-', '_', '.', ':', '@', '+', '='];
const SLUG_PUNCTUATION: &[char] = &['-', '_', '.'];

fn validate_name(
    kind: &str,
    value: &str,
    punctuation: &[char],
    reserved: &[&str],
) -> anyhow::Result<()> {
    let shown = shorten(value);
    if reserved.contains(&value) {
        return Err(usage(format!(
            "the {kind} {shown} is reserved: the layout uses that folder name for itself"
        )));
    }
    if value.is_empty() {
        return Err(usage(format!(
            "the {kind} is empty; give a non-empty {kind}"
        )));
    }
    if value.trim().is_empty() {
        return Err(usage(format!(
            "the {kind} is blank (only white space); give a non-empty {kind}"
        )));
    }
    if value.len() > MAX_NAME_LEN {
        return Err(usage(format!(
            "the {kind} {shown} is {} bytes long; at most {MAX_NAME_LEN} are allowed",
            value.len()
        )));
    }
    if value.starts_with('.') {
        return Err(usage(format!(
            "the {kind} {shown} starts with '.'; such names would hide or leave their folder"
        )));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || punctuation.contains(c)))
    {
        let allowed: String = punctuation.iter().map(|c| format!(" {c}")).collect();
        return Err(usage(format!(
            "the {kind} {shown} holds {}; a {kind} may hold only ASCII letters, digits and{allowed}",
            describe_char(bad)
        )));
    }
    Ok(())
}

fn describe_char(c: char) -> String {
    match c {
        '/' => "'/' (a path separator)".into(),
        '\0' => "a NUL byte".into(),
        c if c.is_control() => format!("the control character U+{:04X}", c as u32),
        c if c.is_ascii() => format!("{c:?}"),
        c => format!("the non-ASCII character {c:?} (U+{:04X})", c as u32),
    }
}

/// Quote a name for an error message, cut so a 10 KB id does not flood it.
fn shorten(value: &str) -> String {
    let cut: String = value.chars().take(40).collect();
    if cut.len() < value.len() {
        format!("{:?}…", cut)
    } else {
        format!("{cut:?}")
    }
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $punct:expr, $reserved:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn new(value: &str) -> anyhow::Result<Self> {
                validate_name($kind, value, $punct, $reserved)?;
                Ok(Self(value.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

    };
}

macro_rules! strict_from_str {
    ($name:ident) => {
        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                Self::new(s).map_err(|e| e.to_string())
            }
        }
    };
}

name_type!(
    /// A person's user id, safe as one path component. Whose memory a
    /// folder holds, a person's or a conversation's, is a [`MemoryKey`].
    UserId,
    "user id",
    ID_PUNCTUATION,
    // `archive/logs/` holds the rotated broker logs.
    &["logs"]
);
strict_from_str!(TopicSlug);
strict_from_str!(ChannelName);

// --- seed folders outside the id rules ----------------------------------------
//
// The seed library took any user id as a folder name, so a state dir it
// wrote can hold `stm/Kevin Lee/` or `stm/#1 fan/`. This tool never makes
// such a folder (`ask` and `append` keep the id rules), but it lists them
// (with a warning) and lets the admin commands reach them by name.

/// Longest seed folder name accepted: a file name's limit on Linux.
const MAX_SEED_FOLDER_LEN: usize = 255;

impl UserId {
    /// A folder name found on disk that breaks the id rules but is still
    /// one safe path component: not empty, no `/`, NUL or control
    /// character, not hidden (`.`), not a name the layout reserves.
    pub fn seed_folder(name: &str) -> anyhow::Result<Self> {
        if Self::new(name).is_ok() {
            return Self::new(name);
        }
        let unsafe_char = name.chars().find(|c| {
            *c == '/' || c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
        });
        // `#` and a valid key is a conversation's folder (see
        // [`MemoryKey::conversation`]): never a person's, not even the seed's.
        let conversation = name
            .strip_prefix(CONVERSATION_MARK)
            .is_some_and(|key| ConversationKey::new(key).is_ok());
        if conversation {
            anyhow::bail!(
                "{name:?} names a conversation's memory, not a person's; use --conversation {:?}",
                &name[CONVERSATION_MARK.len_utf8()..]
            );
        }
        if name.is_empty()
            || name.len() > MAX_SEED_FOLDER_LEN
            || name.starts_with('.')
            || name == "logs"
            || unsafe_char.is_some()
        {
            // The strict rules say what is wrong best.
            return Self::new(name);
        }
        Ok(Self(name.to_owned()))
    }

    /// Whether this id keeps the id rules (only seed folders break them).
    pub fn follows_id_rules(&self) -> bool {
        validate_name("user id", &self.0, ID_PUNCTUATION, &["logs"]).is_ok()
    }

    /// A usage error unless the id keeps the id rules: what `ask` and
    /// `append`, which create folders, require.
    pub fn require_id_rules(&self) -> anyhow::Result<()> {
        validate_name("user id", &self.0, ID_PUNCTUATION, &["logs"])
    }
}

/// `--user` is parsed leniently (no I/O at parse time); which commands
/// accept an id outside the rules is decided when the state dir is open.
impl std::str::FromStr for UserId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::seed_folder(s).map_err(|e| e.to_string())
    }
}

name_type!(
    /// A group's or thread's key (`--conversation`), checked as a user id
    /// is. Its files are never a person's: see [`MemoryKey::conversation`].
    ConversationKey,
    "conversation key",
    ID_PUNCTUATION,
    &[]
);
strict_from_str!(ConversationKey);
name_type!(
    /// A topic slug, safe as one path component.
    TopicSlug,
    "topic slug",
    SLUG_PUNCTUATION,
    &[]
);
name_type!(
    /// A channel name (`--channel`), safe as one path component.
    ChannelName,
    "channel name",
    ID_PUNCTUATION,
    &[]
);

/// What starts the folder name of a conversation's memory (`stm/#G1/`,
/// `archive/#G1/` …). No user id may hold it, so a conversation keyed like
/// a person (`--conversation bob`) can never name that person's files.
/// Not `.` (hidden: tools and the seed's readers skip such folders), not a
/// shell expansion at the start of a word (`~`, `!`, `$`), not special on
/// any platform's file systems (`:`, `*`, `?`).
pub const CONVERSATION_MARK: char = '#';

/// Whose memory a folder holds: a person's (their user id, the seed's
/// folders outside the id rules included) or a group's or thread's
/// conversation (`#KEY`, behind [`CONVERSATION_MARK`]). Every per-owner
/// path of the layout is named by one; a [`UserId`] is only ever a person.
///
/// A person's id is not a memory's name by itself, so a call that means
/// "this person's memory" says so:
///
/// ```compile_fail
/// use claude_session::layout::{Layout, UserId};
/// let layout = Layout::new("/s");
/// layout.messages_file(&UserId::new("U1").unwrap());
/// ```
///
/// ```
/// use claude_session::layout::{Layout, MemoryKey, UserId};
/// let layout = Layout::new("/s");
/// let memory = MemoryKey::person(&UserId::new("U1").unwrap());
/// assert!(layout.messages_file(&memory).ends_with("stm/U1/messages.jsonl"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryKey(String);

impl MemoryKey {
    /// A person's memory: the folder named by their id.
    pub fn person(user: &UserId) -> Self {
        Self(user.0.clone())
    }

    /// The memory of a group or thread conversation: `#KEY`.
    pub fn conversation(key: &ConversationKey) -> Self {
        Self(format!("{CONVERSATION_MARK}{}", key.as_str()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this names a conversation's memory, not a person's.
    pub fn is_conversation(&self) -> bool {
        self.conversation_key().is_some()
    }

    /// The conversation key, when this names a conversation's memory. A
    /// seed folder such as `#1 fan` (no valid key after the `#`) is a
    /// person's.
    pub fn conversation_key(&self) -> Option<ConversationKey> {
        self.0
            .strip_prefix(CONVERSATION_MARK)
            .and_then(|key| ConversationKey::new(key).ok())
    }

    /// The person whose memory this is; `None` for a conversation's.
    pub fn person_id(&self) -> Option<UserId> {
        (!self.is_conversation()).then(|| UserId(self.0.clone()))
    }

    /// Whose memory this is, as one of the two.
    pub fn of(&self) -> MemoryOf {
        match self.conversation_key() {
            Some(key) => MemoryOf::Conversation(key),
            None => MemoryOf::Person(UserId(self.0.clone())),
        }
    }

    /// The owner of a per-key folder or file name (`stm/<name>`,
    /// `memberships/<user>/<name>` …): a user id, or `#` and a valid
    /// conversation key. Anything else (left by hand or another tool) is
    /// nobody's.
    pub fn from_folder_name(name: &str) -> Option<Self> {
        match name.strip_prefix(CONVERSATION_MARK) {
            Some(key) => ConversationKey::new(key)
                .ok()
                .map(|key| Self::conversation(&key)),
            None => UserId::new(name).ok().map(|user| Self::person(&user)),
        }
    }
}

/// Whose memory a [`MemoryKey`] names: [`MemoryKey::of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryOf {
    Person(UserId),
    Conversation(ConversationKey),
}

impl UserId {
    /// The key's folder name read as a person's id, whatever the key is:
    /// only for the folders above a person's entries, the same for every
    /// owner (see [`super::Layout::owned_dirs`]).
    pub(super) fn folder_of(key: &MemoryKey) -> Self {
        Self(key.0.clone())
    }
}

impl fmt::Display for MemoryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ConversationKey {
    /// The memory folder name this conversation used before conversations
    /// had their own namespace (the key as is, shared with user ids): what
    /// [`crate::memory::migration`] moves from.
    pub fn legacy_folder(&self) -> MemoryKey {
        MemoryKey(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::layout::Layout;

    #[test]
    fn real_platform_ids_are_accepted() {
        for id in [
            "U0123ABC",
            "U4af4980629f5c7b1e8d4c3b2a1f0e9d8",
            "-1001234567890",
            "29:1a2b-c",
            "886912345678@c.us",
            "1234567890",
        ] {
            assert!(UserId::new(id).is_ok(), "{id} should be accepted");
        }
    }

    #[test]
    fn ids_that_escape_hide_or_confuse_are_refused() {
        let long = "a".repeat(200);
        for id in [
            "", ".", "..", "../x", ".hidden", "a/b", "a\0b", "a\nb", "a\\b", "U１２", "a b",
            "logs", &long,
        ] {
            assert!(UserId::new(id).is_err(), "{id:?} should be refused");
        }
    }

    #[test]
    fn seed_folders_outside_the_rules_are_safe_components() {
        for name in ["Kevin Lee", "#1 fan", "Ünïcode", "a: b [c]"] {
            let id = UserId::seed_folder(name).unwrap();
            assert!(!id.follows_id_rules(), "{name}");
            assert!(id.require_id_rules().is_err());
        }
        for name in [
            "",
            ".",
            "..",
            ".x",
            "a/b",
            "a\0b",
            "a\nb",
            "logs",
            &"x".repeat(256),
        ] {
            assert!(
                UserId::seed_folder(name).is_err(),
                "{name:?} should be refused"
            );
        }
        assert!(UserId::seed_folder("U1").unwrap().follows_id_rules());
        // A conversation's folder is no seed user's.
        assert!(UserId::seed_folder("#bob").is_err());
        assert!(UserId::seed_folder("#1 fan").is_ok());
    }

    #[test]
    fn a_conversation_never_names_a_persons_folder() {
        let key = ConversationKey::new("bob").unwrap();
        let memory = MemoryKey::conversation(&key);
        assert_ne!(memory, MemoryKey::person(&UserId::new("bob").unwrap()));
        assert!(UserId::new(memory.as_str()).is_err(), "no user id is #bob");
        assert!(memory.is_conversation());
        assert_eq!(MemoryKey::from_folder_name("#bob"), Some(memory.clone()));
        assert_eq!(
            MemoryKey::from_folder_name("bob"),
            UserId::new("bob").ok().map(|u| MemoryKey::person(&u))
        );
        assert_eq!(MemoryKey::from_folder_name("#"), None);
        assert_eq!(MemoryKey::from_folder_name("##bob"), None);
        assert_eq!(MemoryKey::from_folder_name("#../x"), None);
        let layout = Layout::new("/s");
        assert_eq!(
            layout.messages_file(&memory),
            Path::new("/s/sessions/stm/#bob/messages.jsonl")
        );
        assert_eq!(
            layout.user_lock_file(&memory),
            Path::new("/s/sessions/.locks/users/#bob.lock")
        );
    }
}

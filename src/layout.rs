//! Every path of the file layout, in both directions: where each file and
//! folder of a state dir is, and what a name found there says (the day of
//! an archive or a daily summary, the week of a weekly one, the time of an
//! export, the key of an index entry); and the validation of the names
//! that become path components. Other modules build no name of this
//! layout: they ask [`Layout`], or join names they listed from disk.
//!
//! The tree under `<state-dir>/sessions/` is the TypeScript seed's, kept
//! exactly so a state dir moves between the two unchanged. What this tool
//! adds lives in folders the seed never looks at (`.locks/`, `.tmp` names).

use std::fmt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, Utc};

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
    /// Whose memory folder: a person's user id, safe as one path component,
    /// or (built by [`UserId::conversation`]) a group's or thread's key
    /// behind [`CONVERSATION_MARK`], which no user id may hold.
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
        // [`UserId::conversation`]): never a person's, not even the seed's.
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
    /// is. Its files are never a person's: see [`UserId::conversation`].
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

impl UserId {
    /// The memory folder of a group or thread conversation: `#KEY`.
    pub fn conversation(key: &ConversationKey) -> Self {
        Self(format!("{CONVERSATION_MARK}{}", key.as_str()))
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

    /// The owner of a per-key folder or file name (`stm/<name>`,
    /// `memberships/<user>/<name>` …): a user id, or `#` and a valid
    /// conversation key. Anything else (left by hand or another tool) is
    /// nobody's.
    pub fn from_folder_name(name: &str) -> Option<Self> {
        match name.strip_prefix(CONVERSATION_MARK) {
            Some(key) => ConversationKey::new(key)
                .ok()
                .map(|key| Self::conversation(&key)),
            None => Self::new(name).ok(),
        }
    }
}

impl ConversationKey {
    /// The memory folder name this conversation used before conversations
    /// had their own namespace (the key as is, shared with user ids): what
    /// [`crate::memory::migration`] moves from.
    pub fn legacy_folder(&self) -> UserId {
        UserId(self.0.clone())
    }
}

/// A message id as a file name part (FNV-1a): ids are the platform's, not
/// ours to trust as file names.
fn msg_id_hash(msg_id: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in msg_id.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// How a day is written in file names (`messages-2026-03-23.jsonl.gz`,
/// `daily/2026-03-23.md`).
const DAY_FORMAT: &str = "%Y-%m-%d";

/// How a rotated broker log's modification time is written in its name.
const ROTATED_LOG_TIME_FORMAT: &str = "%Y%m%dT%H%M%SZ";

/// How an in-chat export's time is written in its name.
const CHAT_EXPORT_TIME_FORMAT: &str = "%Y%m%dT%H%M%S%.3fZ";

/// Where the seed's index paths start from: `sessions/`, so an entry's
/// path on disk is `ltm/users/U1.md`; in memory it is `users/U1.md`.
pub const INDEX_PATH_PREFIX: &str = "ltm/";

/// The paths of one state dir.
#[derive(Debug, Clone)]
pub struct Layout {
    state_dir: PathBuf,
    sessions: PathBuf,
}

impl Layout {
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        let state_dir = state_dir.into();
        let sessions = state_dir.join("sessions");
        Self {
            state_dir,
            sessions,
        }
    }

    /// The seed's default place for a channel: `./.claude/channels/NAME`.
    pub fn channel_state_dir(channel: &ChannelName) -> PathBuf {
        Path::new(".claude").join("channels").join(channel.as_str())
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    pub fn config_file(&self) -> PathBuf {
        self.sessions.join("config.json")
    }

    // --- short-term memory -------------------------------------------------

    pub fn stm_root(&self) -> PathBuf {
        self.sessions.join("stm")
    }

    pub fn stm_dir(&self, user: &UserId) -> PathBuf {
        self.stm_root().join(user.as_str())
    }

    pub fn messages_file(&self, user: &UserId) -> PathBuf {
        self.stm_dir(user).join("messages.jsonl")
    }

    pub fn summary_file(&self, user: &UserId) -> PathBuf {
        self.stm_dir(user).join("summary.md")
    }

    // --- long-term memory --------------------------------------------------

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
    /// [`INDEX_PATH_PREFIX`]): `users/U1.md`.
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

    // --- tiered summaries --------------------------------------------------

    pub fn summaries_root(&self) -> PathBuf {
        self.sessions.join("summaries")
    }

    pub fn summaries_dir(&self, user: &UserId) -> PathBuf {
        self.summaries_root().join(user.as_str())
    }

    pub fn daily_dir(&self, user: &UserId) -> PathBuf {
        self.summaries_dir(user).join("daily")
    }

    pub fn daily_file(&self, user: &UserId, day: NaiveDate) -> PathBuf {
        Self::markdown_file(&self.daily_dir(user), &day.format(DAY_FORMAT).to_string())
    }

    /// The day of a daily summary, from its stem (`2026-03-23`).
    pub fn daily_day(stem: &str) -> Option<NaiveDate> {
        NaiveDate::parse_from_str(stem, DAY_FORMAT).ok()
    }

    pub fn weekly_dir(&self, user: &UserId) -> PathBuf {
        self.summaries_dir(user).join("weekly")
    }

    /// `YYYY-Www.md`, ISO week-numbering year and week.
    pub fn weekly_file(&self, user: &UserId, iso_year: i32, week: u32) -> PathBuf {
        Self::markdown_file(&self.weekly_dir(user), &format!("{iso_year:04}-W{week:02}"))
    }

    /// The ISO year and week of a weekly summary, from its stem
    /// (`2026-W13`); `None` unless that week exists.
    pub fn weekly_week(stem: &str) -> Option<(i32, u32)> {
        let (year, week) = stem.split_once("-W")?;
        let (year, week) = (year.parse().ok()?, week.parse().ok()?);
        NaiveDate::from_isoywd_opt(year, week, chrono::Weekday::Mon)?;
        Some((year, week))
    }

    // --- archive -----------------------------------------------------------

    pub fn archive_root(&self) -> PathBuf {
        self.sessions.join("archive")
    }

    pub fn archive_dir(&self, user: &UserId) -> PathBuf {
        self.archive_root().join(user.as_str())
    }

    pub fn archive_file(&self, user: &UserId, day: NaiveDate) -> PathBuf {
        self.archive_dir(user)
            .join(format!("messages-{}.jsonl.gz", day.format(DAY_FORMAT)))
    }

    /// The day of an archive, from its file name
    /// (`messages-2026-03-23.jsonl.gz`); `None` for any other file.
    pub fn archive_day(file_name: &str) -> Option<NaiveDate> {
        let day = file_name
            .strip_prefix("messages-")?
            .strip_suffix(".jsonl.gz")?;
        NaiveDate::parse_from_str(day, DAY_FORMAT).ok()
    }

    pub fn archived_summary_file(&self, user: &UserId, day: NaiveDate) -> PathBuf {
        self.archive_dir(user)
            .join(format!("summary-{}.md", day.format(DAY_FORMAT)))
    }

    /// Rotated broker logs.
    pub fn archive_logs_dir(&self) -> PathBuf {
        self.archive_root().join("logs")
    }

    /// Where a broker log goes when rotated: its stem and its modification
    /// time (`broker-slack-20260323T032832Z.log`), gzipped (`.log.gz`) or
    /// not, in [`Layout::archive_logs_dir`].
    pub fn rotated_log_file(&self, log_name: &str, modified: DateTime<Utc>, gzip: bool) -> PathBuf {
        let stem = log_name.strip_suffix(".log").unwrap_or(log_name);
        let name = format!("{stem}-{}.log", modified.format(ROTATED_LOG_TIME_FORMAT));
        self.archive_logs_dir()
            .join(if gzip { format!("{name}.gz") } else { name })
    }

    /// Broker logs (`broker-*.log`) live beside `sessions/`, as in the seed.
    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir.join("logs")
    }

    /// Whether a file name in [`Layout::logs_dir`] is a broker's log.
    pub fn is_broker_log(file_name: &str) -> bool {
        file_name.starts_with("broker-") && file_name.ends_with(".log")
    }

    /// Every owner's recall index (derived data: rebuilt from the
    /// archives whenever missing), one folder each; the seed never looks
    /// here.
    pub fn recall_index_root(&self) -> PathBuf {
        self.sessions.join(".recall")
    }

    /// One owner's recall index segments
    /// (`memory::retrieval::index`).
    pub fn recall_index_dir(&self, user: &UserId) -> PathBuf {
        self.recall_index_root().join(user.as_str())
    }

    /// Every person's in-chat exports, one folder each.
    pub fn exports_root(&self) -> PathBuf {
        self.sessions.join("exports")
    }

    /// In-chat `/session export` writes here, inside the state dir.
    pub fn exports_dir(&self, user: &UserId) -> PathBuf {
        self.exports_root().join(user.as_str())
    }

    /// One in-chat export, named by its time:
    /// `export-20260323T032832.123Z.json`.
    pub fn chat_export_file(&self, user: &UserId, made: DateTime<Utc>) -> PathBuf {
        self.exports_dir(user).join(format!(
            "export-{}.json",
            made.format(CHAT_EXPORT_TIME_FORMAT)
        ))
    }

    /// The time an in-chat export was made, from its file name.
    pub fn chat_export_time(file_name: &str) -> Option<DateTime<Utc>> {
        let stamp = file_name.strip_prefix("export-")?.strip_suffix(".json")?;
        chrono::NaiveDateTime::parse_from_str(stamp, CHAT_EXPORT_TIME_FORMAT)
            .ok()
            .map(|t| t.and_utc())
    }

    /// What a compaction is about to do, written before it does it, so a
    /// killed compaction is finished (never repeated) by the next one.
    pub fn compaction_journal_file(&self, user: &UserId) -> PathBuf {
        self.sessions.join(".journal").join(format!("{user}.json"))
    }

    /// The cost ledgers.
    pub fn costs_dir(&self) -> PathBuf {
        self.sessions.join("costs")
    }

    /// Cost of every LLM call made for maintenance (compaction, summaries).
    pub fn maintenance_ledger_file(&self) -> PathBuf {
        self.costs_dir().join("maintenance.jsonl")
    }

    /// The per-sender ledgers: a folder for each sender.
    pub fn user_ledgers_dir(&self) -> PathBuf {
        self.costs_dir().join("per-user")
    }

    /// The folder of one sender's ledger. One person's files only: a fresh
    /// read on a shared file system lists the folder of a file appended in
    /// place (`store::shared`), and that must not cost more with every
    /// person in the state dir.
    pub fn user_ledger_dir(&self, user: &UserId) -> PathBuf {
        self.user_ledgers_dir().join(user.as_str())
    }

    /// What each `ask` of a sender cost (for budgets and spend reports).
    pub fn user_ledger_file(&self, user: &UserId) -> PathBuf {
        self.user_ledger_dir(user).join("asks.jsonl")
    }

    /// Where earlier versions kept a sender's ledger: one flat folder for
    /// everyone. Moved to [`Layout::user_ledger_file`] when next used.
    pub fn legacy_user_ledger_file(&self, user: &UserId) -> PathBuf {
        self.costs_dir().join("users").join(format!("{user}.jsonl"))
    }

    /// What every `ask` of the channel cost in one month (`YYYY-MM`).
    pub fn channel_ledger_file(&self, month: &str) -> PathBuf {
        self.costs_dir().join(format!("asks-{month}.jsonl"))
    }

    /// Whether a file name in [`Layout::costs_dir`] is a month's channel
    /// ledger (`asks-YYYY-MM.jsonl`).
    pub fn is_channel_ledger(file_name: &str) -> bool {
        file_name.starts_with("asks-") && file_name.ends_with(".jsonl")
    }

    /// Every person's membership records, one folder each.
    pub fn memberships_root(&self) -> PathBuf {
        self.sessions.join("memberships")
    }

    /// The group conversations a user has written in, one empty file each:
    /// what an erase of the user must also clean.
    pub fn memberships_dir(&self, user: &UserId) -> PathBuf {
        self.memberships_root().join(user.as_str())
    }

    pub fn membership_file(&self, user: &UserId, conversation: &UserId) -> PathBuf {
        self.memberships_dir(user).join(conversation.as_str())
    }

    /// Private temporary files (the system prompt handed to claude): kept
    /// in the state dir, so one a killed process left is swept by prune.
    pub fn temp_dir(&self) -> PathBuf {
        self.sessions.join(".tmp")
    }

    /// Every folder one owner's files are written into or removed from,
    /// areas first: what must never be a symbolic link.
    pub fn owned_dirs(&self, user: &UserId) -> Vec<PathBuf> {
        vec![
            self.stm_root(),
            self.stm_dir(user),
            self.summaries_root(),
            self.summaries_dir(user),
            self.daily_dir(user),
            self.weekly_dir(user),
            self.archive_root(),
            self.archive_dir(user),
            self.exports_root(),
            self.exports_dir(user),
            self.memberships_root(),
            self.memberships_dir(user),
            self.recall_index_root(),
            self.recall_index_dir(user),
            self.ltm_dir(),
            self.profiles_dir(),
            self.sessions.join(".journal"),
            self.costs_dir(),
            self.user_ledgers_dir(),
            self.user_ledger_dir(user),
            self.costs_dir().join("users"),
            self.locks_dir(),
            self.locks_dir().join("users"),
        ]
    }

    // --- locks -------------------------------------------------------------
    //
    // Lock files live apart from the data: rewrites rename over data files
    // and expiry removes user folders, neither of which may touch a lock
    // somebody waits on.

    pub fn locks_dir(&self) -> PathBuf {
        self.sessions.join(".locks")
    }

    /// Guards every change to one user's files.
    pub fn user_lock_file(&self, user: &UserId) -> PathBuf {
        self.locks_dir().join("users").join(format!("{user}.lock"))
    }

    /// Held across a compaction's LLM call: one compaction per user.
    pub fn compaction_lock_file(&self, user: &UserId) -> PathBuf {
        self.locks_dir()
            .join("compact")
            .join(format!("{user}.lock"))
    }

    /// Guards `ltm/index.json`.
    pub fn index_lock_file(&self) -> PathBuf {
        self.locks_dir().join("index.lock")
    }

    /// Guards the maintenance ledger.
    pub fn ledger_lock_file(&self) -> PathBuf {
        self.locks_dir().join("ledger.lock")
    }

    /// Held by the process answering one message id, so a redelivery of
    /// the same id waits for that answer instead of asking again.
    pub fn inflight_lock_file(&self, conversation: &UserId, msg_id: &str) -> PathBuf {
        self.inflight_dir()
            .join(format!("{conversation}-{:016x}.lock", msg_id_hash(msg_id)))
    }

    /// The per-message locks and failure records of redelivered messages.
    pub fn inflight_dir(&self) -> PathBuf {
        self.locks_dir().join("inflight")
    }

    /// Beside the message lock: how the last retry of a redelivered message
    /// failed, so the redeliveries that waited for it share that failure
    /// instead of each calling claude again.
    pub fn inflight_failure_file(&self, conversation: &UserId, msg_id: &str) -> PathBuf {
        self.inflight_dir().join(format!(
            "{conversation}-{:016x}.failed",
            msg_id_hash(msg_id)
        ))
    }

    /// Held for a whole `maintain` pass: one pass at a time.
    pub fn maintain_lock_file(&self) -> PathBuf {
        self.locks_dir().join("maintain.lock")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let memory = UserId::conversation(&key);
        assert_ne!(memory, UserId::new("bob").unwrap());
        assert!(UserId::new(memory.as_str()).is_err(), "no user id is #bob");
        assert!(memory.is_conversation());
        assert_eq!(UserId::from_folder_name("#bob"), Some(memory.clone()));
        assert_eq!(UserId::from_folder_name("bob"), UserId::new("bob").ok());
        assert_eq!(UserId::from_folder_name("#"), None);
        assert_eq!(UserId::from_folder_name("##bob"), None);
        assert_eq!(UserId::from_folder_name("#../x"), None);
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

    /// Every path the seed's library writes, where its README
    /// (`seed-memory.md`, "Storage Layout") puts it, seed folder names too.
    #[test]
    fn every_seed_path_is_where_the_seed_puts_it() {
        let layout = Layout::new(Layout::channel_state_dir(
            &ChannelName::new("slack").unwrap(),
        ));
        let s = ".claude/channels/slack/sessions";
        let u = UserId::seed_folder("Kevin Lee").unwrap();
        let t = TopicSlug::new("toeic").unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        let cases: Vec<(PathBuf, String)> = vec![
            (
                layout.state_dir().to_owned(),
                ".claude/channels/slack".into(),
            ),
            (layout.sessions_dir().to_owned(), s.into()),
            (layout.config_file(), format!("{s}/config.json")),
            (layout.stm_root(), format!("{s}/stm")),
            (layout.stm_dir(&u), format!("{s}/stm/Kevin Lee")),
            (
                layout.messages_file(&u),
                format!("{s}/stm/Kevin Lee/messages.jsonl"),
            ),
            (
                layout.summary_file(&u),
                format!("{s}/stm/Kevin Lee/summary.md"),
            ),
            (layout.ltm_dir(), format!("{s}/ltm")),
            (layout.profiles_dir(), format!("{s}/ltm/users")),
            (
                layout.profile_file(&u),
                format!("{s}/ltm/users/Kevin Lee.md"),
            ),
            (layout.topics_dir(), format!("{s}/ltm/topics")),
            (layout.topic_file(&t), format!("{s}/ltm/topics/toeic.md")),
            (layout.index_file(), format!("{s}/ltm/index.json")),
            (layout.summaries_root(), format!("{s}/summaries")),
            (layout.summaries_dir(&u), format!("{s}/summaries/Kevin Lee")),
            (
                layout.daily_dir(&u),
                format!("{s}/summaries/Kevin Lee/daily"),
            ),
            (
                layout.daily_file(&u, day),
                format!("{s}/summaries/Kevin Lee/daily/2026-03-23.md"),
            ),
            (
                layout.weekly_dir(&u),
                format!("{s}/summaries/Kevin Lee/weekly"),
            ),
            (
                layout.weekly_file(&u, 2026, 3),
                format!("{s}/summaries/Kevin Lee/weekly/2026-W03.md"),
            ),
            (layout.archive_root(), format!("{s}/archive")),
            (layout.archive_dir(&u), format!("{s}/archive/Kevin Lee")),
            (
                layout.archive_file(&u, day),
                format!("{s}/archive/Kevin Lee/messages-2026-03-23.jsonl.gz"),
            ),
            (
                layout.archived_summary_file(&u, day),
                format!("{s}/archive/Kevin Lee/summary-2026-03-23.md"),
            ),
            (
                Layout::markdown_file(&layout.profiles_dir(), "U1"),
                format!("{s}/ltm/users/U1.md"),
            ),
        ];
        for (path, want) in cases {
            assert_eq!(path, Path::new(&want));
        }
        // Index entries: `path` relative to `sessions/` on disk.
        for (key, file) in [
            (Layout::profile_index_key(&u), layout.profile_file(&u)),
            (Layout::topic_index_key(&t), layout.topic_file(&t)),
        ] {
            let on_disk = format!("{INDEX_PATH_PREFIX}{key}");
            assert_eq!(layout.sessions_dir().join(on_disk), file);
        }
    }

    /// What this tool adds: in folders the seed never looks at, or (broker
    /// logs) where the seed's own rotation puts them.
    #[test]
    fn every_path_of_our_own_is_outside_the_seed_areas() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let g = UserId::conversation(&ConversationKey::new("G1").unwrap());
        let made = DateTime::parse_from_rfc3339("2026-03-23T03:28:32.123Z")
            .unwrap()
            .with_timezone(&Utc);
        let cases: Vec<(PathBuf, &str)> = vec![
            (layout.logs_dir(), "/s/logs"),
            (layout.archive_logs_dir(), "/s/sessions/archive/logs"),
            (
                layout.rotated_log_file("broker-slack.log", made, false),
                "/s/sessions/archive/logs/broker-slack-20260323T032832Z.log",
            ),
            (
                layout.rotated_log_file("broker-slack.log", made, true),
                "/s/sessions/archive/logs/broker-slack-20260323T032832Z.log.gz",
            ),
            (layout.exports_root(), "/s/sessions/exports"),
            (layout.exports_dir(&u), "/s/sessions/exports/U1"),
            (
                layout.chat_export_file(&u, made),
                "/s/sessions/exports/U1/export-20260323T032832.123Z.json",
            ),
            (
                layout.compaction_journal_file(&u),
                "/s/sessions/.journal/U1.json",
            ),
            (layout.costs_dir(), "/s/sessions/costs"),
            (
                layout.maintenance_ledger_file(),
                "/s/sessions/costs/maintenance.jsonl",
            ),
            (layout.user_ledgers_dir(), "/s/sessions/costs/per-user"),
            (
                layout.user_ledger_file(&u),
                "/s/sessions/costs/per-user/U1/asks.jsonl",
            ),
            (
                layout.legacy_user_ledger_file(&u),
                "/s/sessions/costs/users/U1.jsonl",
            ),
            (
                layout.channel_ledger_file("2026-03"),
                "/s/sessions/costs/asks-2026-03.jsonl",
            ),
            (layout.memberships_root(), "/s/sessions/memberships"),
            (layout.memberships_dir(&u), "/s/sessions/memberships/U1"),
            (
                layout.membership_file(&u, &g),
                "/s/sessions/memberships/U1/#G1",
            ),
            (layout.temp_dir(), "/s/sessions/.tmp"),
            (layout.locks_dir(), "/s/sessions/.locks"),
            (
                layout.user_lock_file(&u),
                "/s/sessions/.locks/users/U1.lock",
            ),
            (
                layout.compaction_lock_file(&u),
                "/s/sessions/.locks/compact/U1.lock",
            ),
            (layout.index_lock_file(), "/s/sessions/.locks/index.lock"),
            (layout.ledger_lock_file(), "/s/sessions/.locks/ledger.lock"),
            (
                layout.maintain_lock_file(),
                "/s/sessions/.locks/maintain.lock",
            ),
            (layout.inflight_dir(), "/s/sessions/.locks/inflight"),
            (
                layout.inflight_lock_file(&g, "m1"),
                "/s/sessions/.locks/inflight/#G1-08a98b07b5509b6b.lock",
            ),
            (
                layout.inflight_failure_file(&g, "m1"),
                "/s/sessions/.locks/inflight/#G1-08a98b07b5509b6b.failed",
            ),
        ];
        let seed_areas = ["config.json", "stm", "ltm", "summaries", "archive"];
        for (path, want) in &cases {
            assert_eq!(path, Path::new(want));
            // Broker logs are where the seed keeps and rotates them.
            let Ok(inside) = path.strip_prefix(layout.sessions_dir()) else {
                continue;
            };
            if !inside.starts_with("archive/logs") {
                let area = inside.components().next().unwrap().as_os_str();
                assert!(!seed_areas.contains(&area.to_str().unwrap()), "{want}");
            }
        }
        // Every folder an owner's files go in.
        let owned = layout.owned_dirs(&u);
        for user_path in [
            layout.messages_file(&u),
            layout.daily_file(&u, made.date_naive()),
            layout.weekly_file(&u, 2026, 13),
            layout.archive_file(&u, made.date_naive()),
            layout.chat_export_file(&u, made),
            layout.membership_file(&u, &g),
            layout.profile_file(&u),
            layout.compaction_journal_file(&u),
            layout.user_ledger_file(&u),
            layout.user_lock_file(&u),
        ] {
            let parent = user_path.parent().unwrap().to_owned();
            assert!(owned.contains(&parent), "{}", parent.display());
        }
        assert!(
            owned
                .iter()
                .all(|dir| dir.starts_with(layout.sessions_dir()))
        );
    }

    /// Each name parser undoes its path builder, and takes no other name.
    #[test]
    fn file_names_read_back_to_what_named_them() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        let name = |path: PathBuf| path.file_name().unwrap().to_str().unwrap().to_owned();
        assert_eq!(
            Layout::archive_day(&name(layout.archive_file(&u, day))),
            Some(day)
        );
        let daily = name(layout.daily_file(&u, day));
        assert_eq!(
            Layout::markdown_stem(&daily).and_then(Layout::daily_day),
            Some(day)
        );
        let weekly = name(layout.weekly_file(&u, 2026, 3));
        assert_eq!(
            Layout::markdown_stem(&weekly).and_then(Layout::weekly_week),
            Some((2026, 3))
        );
        assert_eq!(
            Layout::markdown_stem(&name(layout.profile_file(&u))),
            Some("U1")
        );
        let made = DateTime::parse_from_rfc3339("2026-03-23T03:28:32.123Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            Layout::chat_export_time(&name(layout.chat_export_file(&u, made))),
            Some(made)
        );
        assert!(Layout::is_channel_ledger(&name(
            layout.channel_ledger_file("2026-03")
        )));
        assert!(Layout::is_broker_log("broker-slack.log"));
        for other in [
            "summary-2026-03-23.md",
            "messages-2026-03-23.jsonl",
            "x.gz",
            "",
        ] {
            assert_eq!(Layout::archive_day(other), None, "{other}");
        }
        for other in ["2026-W54", "2026-W00", "notes", "2026-13-01"] {
            assert_eq!(Layout::weekly_week(other), None, "{other}");
            assert_eq!(Layout::daily_day(other), None, "{other}");
        }
        assert_eq!(Layout::markdown_stem("U1.json"), None);
        assert_eq!(Layout::chat_export_time("export-yesterday.json"), None);
        assert!(!Layout::is_channel_ledger("maintenance.jsonl"));
        assert!(!Layout::is_broker_log(
            "broker-slack-20260323T032832Z.log.gz"
        ));
    }

    /// The seed's own files (tests/fixtures/seed-state) are found where
    /// the layout looks, and its index paths are the keys the layout makes.
    #[test]
    fn the_seed_fixture_is_where_the_layout_looks() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed-state");
        let layout = Layout::new(&root);
        assert!(layout.config_file().is_file());
        assert!(layout.index_file().is_file());
        let mut folders: Vec<String> = std::fs::read_dir(layout.stm_root())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        folders.sort();
        assert_eq!(folders.len(), 6, "{folders:?}");
        for folder in &folders {
            let user = UserId::seed_folder(folder).unwrap();
            assert!(layout.messages_file(&user).is_file(), "{folder}");
        }
        let u = UserId::new("U0123ABC").unwrap();
        assert!(layout.summary_file(&u).is_file());
        let kevin = UserId::seed_folder("Kevin Lee").unwrap();
        assert!(layout.profile_file(&kevin).is_file());
        let toeic = TopicSlug::new("toeic").unwrap();
        assert!(layout.topic_file(&toeic).is_file());
        let days: Vec<NaiveDate> = std::fs::read_dir(layout.daily_dir(&u))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                Layout::markdown_stem(&name).and_then(Layout::daily_day)
            })
            .collect();
        assert_eq!(days, [NaiveDate::from_ymd_opt(2026, 3, 21).unwrap()]);
        assert!(layout.daily_file(&u, days[0]).is_file());
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(layout.index_file()).unwrap()).unwrap();
        for entry in index["entries"].as_array().unwrap() {
            let id = entry["id"].as_str().unwrap();
            let key = match entry["type"].as_str().unwrap() {
                "user" => Layout::profile_index_key(&UserId::seed_folder(id).unwrap()),
                _ => Layout::topic_index_key(&TopicSlug::new(id).unwrap()),
            };
            assert_eq!(entry["path"], format!("{INDEX_PATH_PREFIX}{key}"));
            assert!(
                layout
                    .sessions_dir()
                    .join(entry["path"].as_str().unwrap())
                    .is_file()
            );
        }
    }

    #[test]
    fn paths_follow_the_seed_layout() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        assert_eq!(
            layout.messages_file(&u),
            Path::new("/s/sessions/stm/U1/messages.jsonl")
        );
        assert_eq!(
            layout.archive_file(&u, day),
            Path::new("/s/sessions/archive/U1/messages-2026-03-23.jsonl.gz")
        );
        assert_eq!(
            layout.weekly_file(&u, 2026, 3),
            Path::new("/s/sessions/summaries/U1/weekly/2026-W03.md")
        );
        assert_eq!(
            layout.profile_file(&u),
            Path::new("/s/sessions/ltm/users/U1.md")
        );
    }
}

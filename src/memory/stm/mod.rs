//! Short-term memory: `stm/<user>/messages.jsonl` and `summary.md`, and
//! what reading and writing them takes: the membership records an append
//! leaves, the memory folders there are, the warned (never silenced) read
//! of a markdown file, and delivery (`delivery`) — the lookup of a redelivered message
//! id, the claim of a message id while it is answered (and the wait of a
//! redelivery behind it), the answer appended under the lock, a line
//! appended once per id, and the import of a batch of seed lines.

use std::fs::File;

use crate::diag;
use crate::layout::{MemoryKey, UserId};
use crate::memory::message::{LineKeys, Message};
use crate::state::{OwnerLock, State};
use crate::store::frontmatter::Document;
use crate::store::fs::open_read;
use crate::store::jsonl::append_lines;
use crate::store::tail::ReverseLines;

/// Append messages to the user's (or group's) log. The caller holds its
/// lock. The groups their senders write in are recorded first, so no line
/// of a person exists that an erase of that person cannot find.
pub fn append_locked(state: &State, lock: &OwnerLock, messages: &[Message]) -> anyhow::Result<()> {
    let user = lock.owner();
    for message in messages {
        record_sender(state, message, user)?;
    }
    let lines: Vec<Vec<u8>> = messages.iter().map(Message::to_line).collect();
    write_lines(state, user, &lines)
}

/// Append already-validated raw lines (imports keep their bytes), with
/// their senders' memberships recorded first, as [`append_locked`].
pub fn append_raw_locked(state: &State, lock: &OwnerLock, lines: &[Vec<u8>]) -> anyhow::Result<()> {
    let user = lock.owner();
    for line in lines {
        if let Ok(message) = Message::parse(line) {
            record_sender(state, &message, user)?;
        }
    }
    write_lines(state, user, lines)
}

fn write_lines(state: &State, user: &MemoryKey, lines: &[Vec<u8>]) -> anyhow::Result<()> {
    let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    append_lines(&state.layout.messages_file(user), &refs, state.fsync())
}

fn record_sender(state: &State, message: &Message, key: &MemoryKey) -> anyhow::Result<()> {
    match message.sender().and_then(|s| UserId::new(s).ok()) {
        Some(sender) => record_membership(state, &sender, key),
        None => Ok(()),
    }
}

/// Note, once and durably, that `sender` wrote in the group conversation
/// `key`, so an erase of the sender can find their lines there.
pub fn record_membership(state: &State, sender: &UserId, key: &MemoryKey) -> anyhow::Result<()> {
    let path = state.layout.membership_file(sender, key);
    if key == &MemoryKey::person(sender) || path.exists() {
        return Ok(());
    }
    crate::store::fs::ensure_parent(&path)?;
    crate::store::fs::open_append(&path)
        .map(drop)
        .map_err(|e| {
            anyhow::Error::new(e).context(format!("could not create {}", path.display()))
        })?;
    if state.fsync()
        && let Some(parent) = path.parent()
    {
        crate::store::fs::sync_dir(parent)?;
    }
    Ok(())
}

/// A reply as stored: at most `max_bytes` (`limits.maxReplyBytes`), cut
/// at a character boundary with a marker saying so.
pub fn cap_reply(text: &str, max_bytes: u64) -> String {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    if text.len() <= max {
        return text.to_owned();
    }
    let marker = format!(
        "\n[… reply cut: {} bytes in all, over limits.maxReplyBytes …]",
        text.len()
    );
    let mut end = max.saturating_sub(marker.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{marker}", &text[..end])
}

/// The last `n` valid messages, oldest first. Lines that do not parse are
/// skipped with a warning and left on disk untouched.
pub fn recent(state: &State, user: &MemoryKey, n: usize) -> anyhow::Result<Vec<Message>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let path = state.layout.messages_file(user);
    // Read without the lock, the log may be replaced by another host's
    // compaction meanwhile: a stale handle starts the read over.
    crate::store::shared::retry_stale_whole(&path, || recent_once(&path, n))
}

fn recent_once(path: &std::path::Path, n: usize) -> anyhow::Result<Vec<Message>> {
    let Some(file) = open_read(path)? else {
        return Ok(Vec::new());
    };
    let mut messages = Vec::with_capacity(n.min(1024));
    for item in reverse_lines(file, path)? {
        let (offset, line) = item?;
        if let Some(message) = parse_or_warn(&line, path, offset) {
            messages.push(message);
            if messages.len() == n {
                break;
            }
        }
    }
    messages.reverse();
    Ok(messages)
}

fn reverse_lines(file: File, path: &std::path::Path) -> anyhow::Result<ReverseLines> {
    use anyhow::Context as _;
    ReverseLines::new(file).with_context(|| format!("could not read {}", path.display()))
}

/// The time of every line of the log that has one, oldest first (for
/// scans that need only dates: cheaper than whole messages).
pub fn all_times(
    state: &State,
    user: &MemoryKey,
) -> anyhow::Result<Vec<chrono::DateTime<chrono::Utc>>> {
    let bytes =
        crate::store::fs::read_optional(&state.layout.messages_file(user))?.unwrap_or_default();
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| LineKeys::parse(line)?.time())
        .collect())
}

/// Every valid message of the log, oldest first, with warnings for the
/// lines that do not parse. STM is kept small by compaction, so a whole
/// read is fine off the hot path of `ask`.
pub fn all_messages(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<Message>> {
    all_messages_in(&state.layout.messages_file(user))
}

/// [`all_messages`] of a log given by path (an owner's, see `owners`).
pub fn all_messages_in(path: &std::path::Path) -> anyhow::Result<Vec<Message>> {
    let path = path.to_owned();
    let bytes = crate::store::fs::read_optional(&path)?.unwrap_or_default();
    let mut offset = 0u64;
    let mut messages = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        if let Some(message) = parse_or_warn(line, &path, offset) {
            messages.push(message);
        }
        offset += line.len() as u64 + 1;
    }
    Ok(messages)
}

/// Parse a log line, or warn (naming file and byte offset) and skip it.
/// Blank lines are skipped silently: a torn-write repair leaves them.
pub fn parse_or_warn(line: &[u8], path: &std::path::Path, offset: u64) -> Option<Message> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match Message::parse(line) {
        Ok(message) => Some(message),
        Err(why) => {
            diag::warn(format!(
                "{} byte {offset}: skipped a line that is not a valid message ({why}); \
                 it stays in the file",
                path.display()
            ));
            None
        }
    }
}

/// The rolling summary, if any compaction has written one.
pub fn summary(state: &State, user: &MemoryKey) -> anyhow::Result<Option<Document>> {
    let path = state.layout.summary_file(user);
    let Some(text) = read_text_or_warn(&path)? else {
        return Ok(None);
    };
    Ok(Some(parse_document_or_warn(&text, &path)))
}

/// A markdown file for building memory: bytes that are not UTF-8 (a bad
/// hand edit) are warned about and replaced, so memory is never silenced.
pub fn read_text_or_warn(path: &std::path::Path) -> anyhow::Result<Option<String>> {
    let Some(bytes) = crate::store::fs::read_optional(path)? else {
        return Ok(None);
    };
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            diag::warn(format!(
                "{} is not valid UTF-8 (byte {}); using it with the bad bytes replaced; \
                 fix or rewrite the file",
                path.display(),
                e.utf8_error().valid_up_to()
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }))
}

/// Parse a markdown file for reading; a broken frontmatter is warned about
/// and the whole text used as body, so a hand edit never silences memory.
pub fn parse_document_or_warn(text: &str, path: &std::path::Path) -> Document {
    Document::parse(text).unwrap_or_else(|e| {
        diag::warn(format!(
            "{}: {e}; using the whole file as text",
            path.display()
        ));
        Document {
            front: Default::default(),
            body: text.to_owned(),
        }
    })
}

/// Every memory with an STM folder, people and conversations (`#KEY`),
/// sorted: what maintenance walks. Seed folders outside the id rules are
/// listed with a warning; names that are neither are skipped with one.
pub fn users(state: &State) -> anyhow::Result<Vec<MemoryKey>> {
    list_user_dirs(&state.layout.stm_root())
}

/// The people with an STM folder, sorted (no conversations).
pub fn people(state: &State) -> anyhow::Result<Vec<UserId>> {
    Ok(users(state)?
        .iter()
        .filter_map(MemoryKey::person_id)
        .collect())
}

/// The group and thread conversations with an STM folder, sorted.
pub fn conversations(state: &State) -> anyhow::Result<Vec<crate::layout::ConversationKey>> {
    Ok(users(state)?
        .iter()
        .filter_map(MemoryKey::conversation_key)
        .collect())
}

/// The owners (user ids and `#` conversation keys) among the folders in
/// `dir`, sorted. A folder the seed made for an id outside this tool's id
/// rules (`Kevin Lee`, `fan#1`) is listed, with a warning once per run; one
/// that is no safe path component (or not UTF-8) is skipped with a warning.
pub fn list_user_dirs(dir: &std::path::Path) -> anyhow::Result<Vec<MemoryKey>> {
    let entries = crate::store::fs::read_dir_optional(dir)?;
    let mut users = Vec::new();
    for entry in entries {
        let kind = entry.file_type();
        if kind.as_ref().is_ok_and(|t| t.is_symlink()) {
            diag::warn(format!(
                "{} is a symbolic link; skipped (links under the state dir are never \
                 followed); move the data into a real folder there",
                entry.path().display()
            ));
            continue;
        }
        if !kind.is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            warn_once(format!(
                "{}: a folder name that is not UTF-8; skipped (rename it to the user's id)",
                entry.path().display()
            ));
            continue;
        };
        if let Some(user) = MemoryKey::from_folder_name(name) {
            users.push(user);
            continue;
        }
        match UserId::seed_folder(name) {
            Ok(user) => {
                warn_once(format!(
                    "{}: the user folder {name:?} is outside this tool's id rules (the seed \
                     library made it); it is listed and maintained, and admin commands reach it \
                     with --user {name:?}, but ask and append refuse the id: have the broker \
                     use the platform's id, or export and erase it",
                    dir.display()
                ));
                users.push(MemoryKey::person(&user));
            }
            // `.locks`, `.tmp` and `archive/logs` are this tool's own.
            Err(_) if name.starts_with('.') || name == "logs" => {}
            Err(e) => warn_once(format!("{}: skipped: {e:#}", entry.path().display())),
        }
    }
    users.sort();
    Ok(users)
}

/// A warning said once per process, however many listings meet its cause.
fn warn_once(message: String) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&message) {
        diag::warn(&message);
        said.push(message);
    }
}

/// What the log holds for one platform message id: was it logged (and
/// with which text), and which reply answers it: the assistant line whose
/// `replyTo` names it, or, as the seed logs answers without `replyTo`, an
/// assistant line without one right after the message.
#[derive(Debug, Default)]
pub struct Delivery {
    pub logged: bool,
    /// The text the id was first logged with.
    pub text: Option<String>,
    pub reply: Option<Message>,
}

/// How far back a redelivery is looked for: platforms re-send within
/// minutes, so the last thousand lines of the log are generous, and keep
/// the lookup (done under the lock) bounded whatever the log's size. Lines
/// are counted, not timed: imports and `append --ts` put old times at the
/// end, and must not hide what came before.
const REDELIVERY_WINDOW_LINES: usize = 1000;

/// Look a message id up in the last lines of STM, then, when STM is shorter
/// than that (compaction moved the rest), in the archives of yesterday,
/// today and the message's own day. The caller holds the conversation's
/// lock.
pub fn find_delivery(
    state: &State,
    lock: &OwnerLock,
    msg_id: &str,
    ts: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<Delivery> {
    let key = lock.owner();
    let mut delivery = Delivery::default();
    // The id as it appears in a line; lines without it are not parsed.
    let quoted = serde_json::to_string(msg_id)?;
    // `line`, and the line after it in the file (for a seed answer).
    let mut check = |line: &[u8], next: Option<&[u8]>| {
        if !std::str::from_utf8(line).is_ok_and(|text| text.contains(&quoted)) {
            return;
        }
        let Some(keys) = LineKeys::parse(line) else {
            return;
        };
        if keys.msg_id.as_deref() == Some(msg_id) {
            delivery.logged = true;
        }
        if keys.msg_id.as_deref() == Some(msg_id) && keys.role.as_deref() == Some("user") {
            if delivery.text.is_none() {
                delivery.text = Message::parse(line).ok().map(|m| m.text);
            }
            if delivery.reply.is_none()
                && let Some(next) = next.and_then(|n| Message::parse(n).ok())
                && next.role == crate::memory::message::Role::Assistant
                && next.answers(msg_id)
            {
                delivery.reply = Some(next);
            }
        }
        if keys.reply_to.as_deref() == Some(msg_id) {
            // The explicit `replyTo` wins over a seed-style neighbour.
            delivery.reply = Message::parse(line).ok();
        }
    };
    let path = state.layout.messages_file(key);
    let mut reached_start = true;
    if let Some(file) = open_read(&path)? {
        let mut after: Option<Vec<u8>> = None;
        for (scanned, item) in reverse_lines(file, &path)?.enumerate() {
            if scanned == REDELIVERY_WINDOW_LINES {
                reached_start = false;
                break;
            }
            let line = item?.1;
            check(&line, after.as_deref());
            after = Some(line);
        }
    }
    if reached_start {
        let now = state.clock.now();
        let mut days = vec![
            (now - chrono::Duration::days(1)).date_naive(),
            now.date_naive(),
            ts.date_naive(),
        ];
        days.sort();
        days.dedup();
        for day in days {
            let archived = crate::store::archive::read_lines(&state.layout.archive_file(key, day))?;
            for (i, line) in archived.lines.iter().enumerate() {
                check(line, archived.lines.get(i + 1).map(Vec::as_slice));
            }
        }
    }
    Ok(delivery)
}

mod delivery;

pub use delivery::*;

//! Short-term memory: `stm/<user>/messages.jsonl` and `summary.md`.

use std::fs::File;

use crate::diag;
use crate::layout::UserId;
use crate::memory::message::{LineKeys, Message};
use crate::state::State;
use crate::store::frontmatter::Document;
use crate::store::fs::open_read;
use crate::store::jsonl::append_lines;
use crate::store::tail::ReverseLines;

/// Append messages to the user's (or group's) log. The caller holds its
/// lock. The groups their senders write in are recorded first, so no line
/// of a person exists that an erase of that person cannot find.
pub fn append_locked(state: &State, user: &UserId, messages: &[Message]) -> anyhow::Result<()> {
    for message in messages {
        record_sender(state, message, user)?;
    }
    let lines: Vec<Vec<u8>> = messages.iter().map(Message::to_line).collect();
    write_lines(state, user, &lines)
}

/// Append already-validated raw lines (imports keep their bytes), with
/// their senders' memberships recorded first, as [`append_locked`].
pub fn append_raw_locked(state: &State, user: &UserId, lines: &[Vec<u8>]) -> anyhow::Result<()> {
    for line in lines {
        if let Ok(message) = Message::parse(line) {
            record_sender(state, &message, user)?;
        }
    }
    write_lines(state, user, lines)
}

fn write_lines(state: &State, user: &UserId, lines: &[Vec<u8>]) -> anyhow::Result<()> {
    let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    append_lines(&state.layout.messages_file(user), &refs, state.fsync())
}

fn record_sender(state: &State, message: &Message, key: &UserId) -> anyhow::Result<()> {
    match message.sender().and_then(|s| UserId::new(s).ok()) {
        Some(sender) => record_membership(state, &sender, key),
        None => Ok(()),
    }
}

/// Note, once and durably, that `sender` wrote in the group conversation
/// `key`, so an erase of the sender can find their lines there.
pub fn record_membership(state: &State, sender: &UserId, key: &UserId) -> anyhow::Result<()> {
    let path = state.layout.membership_file(sender, key);
    if key == sender || path.exists() {
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

/// The last `n` valid messages, oldest first. Lines that do not parse are
/// skipped with a warning and left on disk untouched.
pub fn recent(state: &State, user: &UserId, n: usize) -> anyhow::Result<Vec<Message>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let path = state.layout.messages_file(user);
    let Some(file) = open_read(&path)? else {
        return Ok(Vec::new());
    };
    let mut messages = Vec::with_capacity(n.min(1024));
    for item in reverse_lines(file, &path)? {
        let (offset, line) = item?;
        if let Some(message) = parse_or_warn(&line, &path, offset) {
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
    user: &UserId,
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
pub fn all_messages(state: &State, user: &UserId) -> anyhow::Result<Vec<Message>> {
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
pub fn summary(state: &State, user: &UserId) -> anyhow::Result<Option<Document>> {
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

/// Every user with an STM folder, sorted. Folders whose names are not
/// valid ids (left by hand or by another tool) are skipped.
pub fn users(state: &State) -> anyhow::Result<Vec<UserId>> {
    list_user_dirs(&state.layout.stm_root())
}

/// Valid user ids among the folder names in `dir`, sorted.
pub fn list_user_dirs(dir: &std::path::Path) -> anyhow::Result<Vec<UserId>> {
    let entries = crate::store::fs::read_dir_optional(dir)?;
    let mut users = Vec::new();
    for entry in entries {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        if let Some(user) = entry.file_name().to_str().and_then(|n| UserId::new(n).ok()) {
            users.push(user);
        }
    }
    users.sort();
    Ok(users)
}

/// What the log holds for one platform message id: was it logged, and
/// which reply answers it (`replyTo`).
#[derive(Debug, Default)]
pub struct Delivery {
    pub logged: bool,
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
    key: &UserId,
    msg_id: &str,
    ts: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<Delivery> {
    let mut delivery = Delivery::default();
    // The id as it appears in a line; lines without it are not parsed.
    let quoted = serde_json::to_string(msg_id)?;
    let mut check = |line: &[u8]| {
        if !std::str::from_utf8(line).is_ok_and(|text| text.contains(&quoted)) {
            return;
        }
        let Some(keys) = LineKeys::parse(line) else {
            return;
        };
        if keys.msg_id.as_deref() == Some(msg_id) {
            delivery.logged = true;
        }
        if delivery.reply.is_none() && keys.reply_to.as_deref() == Some(msg_id) {
            delivery.reply = Message::parse(line).ok();
        }
    };
    let path = state.layout.messages_file(key);
    let mut reached_start = true;
    if let Some(file) = open_read(&path)? {
        for (scanned, item) in reverse_lines(file, &path)?.enumerate() {
            if scanned == REDELIVERY_WINDOW_LINES {
                reached_start = false;
                break;
            }
            check(&item?.1);
        }
    }
    if reached_start {
        let now = chrono::Utc::now();
        let mut days = vec![
            (now - chrono::Duration::days(1)).date_naive(),
            now.date_naive(),
            ts.date_naive(),
        ];
        days.sort();
        days.dedup();
        for day in days {
            let archived = crate::store::archive::read_lines(&state.layout.archive_file(key, day))?;
            for line in &archived.lines {
                check(line);
            }
        }
    }
    Ok(delivery)
}

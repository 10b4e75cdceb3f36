//! Deleting one message (`session delete`, LINE's "unsend"): the line a
//! person sent with that `msgId`, and the reply that answers it, from the
//! live log and from every archive of the memory it is in, under that
//! memory's lock. Deleting what is already gone changes nothing.
//!
//! The rolling summary and daily and weekly summaries are the LLM's prose
//! and are left as they are (as an erase leaves a group's summary).

use std::path::PathBuf;

use serde::Serialize;

use crate::layout::{MemoryKey, UserId};
use crate::memory::message::{Message, Role};
use crate::memory::{compaction, summaries};
use crate::state::State;
use crate::store::archive;
use crate::store::atomic::write_atomic;
use crate::store::fs::read_optional;

/// What a delete removed.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    /// The sender's lines with that id (one, unless it was stored twice).
    pub messages: usize,
    /// The replies that answer it.
    pub replies: usize,
    /// The files rewritten (the log, archives).
    pub files: Vec<PathBuf>,
}

impl Deleted {
    pub fn nothing(&self) -> bool {
        self.messages == 0 && self.replies == 0
    }
}

/// Remove the message `msg_id` that `sender` sent in memory `owner` (their
/// own, or a conversation's), and the replies to it.
pub fn delete_message(
    state: &State,
    owner: &MemoryKey,
    sender: &UserId,
    msg_id: &str,
) -> anyhow::Result<Deleted> {
    let in_conversation = owner != &MemoryKey::person(sender);
    let lock = state.lock_owner(owner)?;
    // A compaction killed midway is finished first: its journal may hold
    // the very line.
    compaction::recover_locked(state, &lock)?;
    let mut deleted = Deleted::default();
    let target = |m: &Message| {
        m.role == Role::User
            && m.msg_id.as_deref() == Some(msg_id)
            && (!in_conversation || m.sender() == Some(sender.as_str()))
    };
    let reply = |m: &Message| {
        m.role == Role::Assistant
            && m.reply_to.as_deref() == Some(msg_id)
            && (!in_conversation || m.asked_by.as_deref().is_none_or(|a| a == sender.as_str()))
    };

    let log = state.layout.messages_file(owner);
    if let Some(bytes) = read_optional(&log)? {
        let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
        let drop = marked(&lines, &target, &reply, &mut deleted);
        if drop.iter().any(|&d| d) {
            let kept: Vec<u8> = lines
                .iter()
                .zip(&drop)
                .filter(|(_, d)| !**d)
                .flat_map(|(line, _)| line.iter().copied())
                .collect();
            write_atomic(&log, &kept, state.fsync())?;
            deleted.files.push(log);
        }
    }
    for day in summaries::archive_days(state, owner)? {
        let path = state.layout.archive_file(owner, day);
        let read = archive::read_lines(&path)?;
        let lines: Vec<&[u8]> = read.lines.iter().map(Vec::as_slice).collect();
        let drop = marked(&lines, &target, &reply, &mut deleted);
        if !drop.iter().any(|&d| d) {
            continue;
        }
        // A rewrite would drop the unreadable part, other lines too.
        if let Some(damage) = read.damage.first() {
            anyhow::bail!("{damage}; repair or move it, then delete {msg_id} again");
        }
        let kept: Vec<&[u8]> = lines
            .iter()
            .zip(&drop)
            .filter(|(_, d)| !**d)
            .map(|(line, _)| *line)
            .collect();
        archive::rewrite(&path, &kept, state.fsync())?;
        // The index of that day holds the deleted line's text.
        crate::memory::retrieval::indexing::forget_day_locked(state, &lock, day)?;
        deleted.files.push(path);
    }
    Ok(deleted)
}

/// Which of `lines` go: the target lines, the replies naming them, and an
/// answer without `replyTo` right after a target (the seed logs answers
/// so). Counts them into `deleted`.
fn marked(
    lines: &[&[u8]],
    target: &dyn Fn(&Message) -> bool,
    reply: &dyn Fn(&Message) -> bool,
    deleted: &mut Deleted,
) -> Vec<bool> {
    let mut drop = vec![false; lines.len()];
    let mut after_target = false;
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_ascii_end();
        if body.is_empty() {
            continue;
        }
        let Ok(message) = Message::parse(body) else {
            after_target = false;
            continue;
        };
        if target(&message) {
            drop[i] = true;
            deleted.messages += 1;
            after_target = true;
            continue;
        }
        let unnamed_answer = after_target
            && message.role == Role::Assistant
            && message.reply_to.is_none()
            && !message.extra.contains_key("replyTo");
        if reply(&message) || unnamed_answer {
            drop[i] = true;
            deleted.replies += 1;
        }
        after_target = false;
    }
    drop
}

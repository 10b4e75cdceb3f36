//! Answering a message: the lookup of a redelivered id, the claim on an id
//! while it is answered (and the wait of a redelivery behind it), the
//! answer appended under the lock.

use super::*;
use crate::layout::MemoryKey;

/// The claim on a platform message id by the process answering it: while
/// it is held, a redelivery of the id waits for this answer instead of
/// making its own call. A file lock, removed when the answer is out.
#[derive(Debug)]
pub struct Claim {
    lock: crate::store::lock::FileLock,
    /// Where a failed answer is noted for the redeliveries waiting on it.
    failure_note: std::path::PathBuf,
    fsync: bool,
    clock: crate::state::Clock,
}

impl Claim {
    /// Give the id up: the answer is out. A failure to remove the lock
    /// file only leaves a file prune sweeps.
    pub fn release(self) {
        if let Err(e) = self.lock.remove() {
            diag::warn(format!("could not remove a message lock: {e:#}"));
        }
    }

    /// Note how this answer failed, for the redeliveries waiting behind
    /// it. Best effort: without the note each of them retries, as before.
    pub fn record_failure(&self, e: &anyhow::Error) {
        let note = serde_json::json!({
            "ts": crate::memory::message::format_ts(&self.clock.now()),
            "exit": crate::error::exit_code_of(e).code(),
            "error": format!("{e:#}"),
        });
        let _ = crate::store::atomic::write_atomic(
            &self.failure_note,
            note.to_string().as_bytes(),
            self.fsync,
        );
    }

    /// The answer succeeded: an older failure note no longer applies.
    pub fn clear_failure(&self) {
        let _ = crate::store::fs::remove_if_exists(&self.failure_note);
    }

    /// The failure of an answer that ended while this process waited for
    /// the claim (noted at or after `since`), as that answer's error.
    pub fn failed_since(&self, since: chrono::DateTime<chrono::Utc>) -> Option<anyhow::Error> {
        use crate::error::{Exit, failure};
        let bytes = crate::store::fs::read_optional(&self.failure_note).ok()??;
        let note: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        let ts = crate::memory::message::parse_ts(note.get("ts")?.as_str()?).ok()?;
        if ts < since {
            return None;
        }
        let exit =
            Exit::from_code(note.get("exit")?.as_i64()? as i32).unwrap_or(Exit::ClaudeFailed);
        Some(failure(
            exit,
            format!(
                "another delivery of this message just retried and failed: {}",
                note.get("error")?.as_str()?
            ),
        ))
    }
}

impl Claim {
    fn new(
        state: &State,
        key: &MemoryKey,
        msg_id: &str,
        lock: crate::store::lock::FileLock,
    ) -> Self {
        Self {
            lock,
            failure_note: state.layout.inflight_failure_file(key, msg_id),
            fsync: state.fsync(),
            clock: state.clock,
        }
    }
}

/// How a message to answer was taken in ([`take_in`]).
#[derive(Debug)]
pub enum Intake<T> {
    /// Its id is logged already (a platform re-sending it): nothing was
    /// logged; what the log holds for the id.
    Redelivery(Box<Delivery>),
    /// The message is logged. `read` is what was read just before (the
    /// context, which must not hold the message itself), or `None` when
    /// no answer is to be made; `claim` holds its id (when it has one and
    /// nobody else holds it) until the answer is out.
    Logged {
        read: Option<T>,
        claim: Option<Claim>,
    },
}

/// Take a message to answer into the conversation `key`'s log, in one
/// hold of its lock: look for an earlier delivery of its id (then nothing
/// is logged), run `read` (what the answer needs from memory), log the
/// message, and claim its id. `read` is `None` when no answer will be
/// made (a budget cap): the message is logged, its id not claimed.
pub fn take_in<T>(
    state: &State,
    key: &MemoryKey,
    message: &Message,
    read: Option<impl FnOnce() -> anyhow::Result<T>>,
) -> anyhow::Result<Intake<T>> {
    let lock = state.lock_owner(key)?;
    if let Some(id) = &message.msg_id {
        let delivery = find_delivery(state, &lock, id, message.ts)?;
        if delivery.logged {
            return Ok(Intake::Redelivery(Box::new(delivery)));
        }
    }
    let Some(read) = read else {
        append_locked(state, &lock, std::slice::from_ref(message))?;
        return Ok(Intake::Logged {
            read: None,
            claim: None,
        });
    };
    let claim = match &message.msg_id {
        Some(id) => {
            crate::store::lock::FileLock::try_acquire(&state.layout.inflight_lock_file(key, id))?
                .map(|lock| Claim::new(state, key, id, lock))
        }
        None => None,
    };
    let read = read()?;
    append_locked(state, &lock, std::slice::from_ref(message))?;
    Ok(Intake::Logged {
        read: Some(read),
        claim,
    })
}

/// Wait, at most `wait`, for whoever claimed message `msg_id` to finish
/// answering it, then claim it. Still claimed after `wait`: exit 124, as
/// the answer is as late as a claude call that timed out.
pub fn wait_for_claim(
    state: &State,
    key: &MemoryKey,
    msg_id: &str,
    wait: std::time::Duration,
) -> anyhow::Result<Claim> {
    let lock_path = state.layout.inflight_lock_file(key, msg_id);
    match crate::store::lock::FileLock::acquire(&lock_path, wait, "message") {
        Ok(lock) => Ok(Claim::new(state, key, msg_id, lock)),
        Err(e) if e.downcast_ref::<crate::error::LockTimeout>().is_some() => {
            Err(crate::error::failure(
                crate::error::Exit::ClaudeTimeout,
                format!(
                    "message {msg_id} is still being answered by another process after {} s; \
                     deliver it again later to get that answer",
                    wait.as_secs()
                ),
            ))
        }
        Err(e) => Err(e),
    }
}

/// [`find_delivery`] and `read` in one hold of the conversation's lock:
/// what the log holds for the id, and the memory to answer it with.
pub fn find_delivery_and<T>(
    state: &State,
    key: &MemoryKey,
    msg_id: &str,
    ts: chrono::DateTime<chrono::Utc>,
    read: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<(Delivery, T)> {
    let lock = state.lock_owner(key)?;
    let delivery = find_delivery(state, &lock, msg_id, ts)?;
    Ok((delivery, read()?))
}

/// Log an assistant's answer in the conversation `key`, unless the person
/// who asked (`asker`) was erased since `asked_at`: an erase is final, and
/// nothing of that turn goes back into their (or the group's) log.
/// Returns whether it was logged.
pub fn append_answer(
    state: &State,
    key: &MemoryKey,
    asker: &UserId,
    asked_at: chrono::DateTime<chrono::Utc>,
    answer: &Message,
) -> anyhow::Result<bool> {
    let lock = state.lock_owner(key)?;
    if crate::memory::ledger::erased_since(state, asker, asked_at)? {
        diag::warn(format!(
            "{asker} was erased while claude answered; the reply is not logged"
        ));
        return Ok(false);
    }
    append_locked(state, &lock, std::slice::from_ref(answer))?;
    Ok(true)
}

/// Log one message a broker hands over (`append`), unless it is logged
/// already: a platform re-sending the same event (its `msgId` is in the
/// log), or a broker retrying an answer (the message it answers, its
/// `replyTo`, has an answer logged). Returns whether it was a duplicate,
/// and so not logged.
pub fn append_once(state: &State, key: &MemoryKey, message: &Message) -> anyhow::Result<bool> {
    let lock = state.lock_owner(key)?;
    let duplicate = match (&message.msg_id, &message.reply_to) {
        (Some(id), _) if find_delivery(state, &lock, id, message.ts)?.logged => true,
        (_, Some(answered)) => find_delivery(state, &lock, answered, message.ts)?
            .reply
            .is_some(),
        _ => false,
    };
    if !duplicate {
        append_locked(state, &lock, std::slice::from_ref(message))?;
    }
    Ok(duplicate)
}

/// Append already-validated lines (`append --jsonl`) under the user's lock.
pub fn import(state: &State, user: &MemoryKey, lines: &[Vec<u8>]) -> anyhow::Result<()> {
    let lock = state.lock_owner(user)?;
    append_raw_locked(state, &lock, lines)
}

//! `session clear`: a user's short-term memory moved to the archive, or
//! with `--all` everything of the user erased; asks first unless `--yes`.
//! And `session delete`: one message and its reply.

use std::io::{IsTerminal as _, Write as _};

use chrono::Utc;
use serde::Serialize;

use crate::commands::{Output, print_json, print_text};
use crate::error::usage;
use crate::layout::{MemoryKey, UserId};
use crate::memory::{expiry, user_data};
use crate::state::State;

pub(super) fn clear(
    state: &State,
    user: &UserId,
    all: bool,
    yes: bool,
    output: Output,
) -> anyhow::Result<()> {
    if !yes {
        let what = if all {
            format!("erase EVERYTHING stored about {user} (STM, profile, summaries, archive)")
        } else {
            format!("clear the short-term memory of {user} (messages move to the archive)")
        };
        if !std::io::stdin().is_terminal() {
            return Err(usage(format!(
                "refusing to {what} without confirmation: stdin is not a terminal; add --yes"
            )));
        }
        eprint!("{what}? [y/N] ");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("nothing changed");
            return Ok(());
        }
    }
    if all {
        let removed = user_data::erase(state, &MemoryKey::person(user))?;
        if output.json {
            return print_json(&Erased {
                user: user.as_str(),
                erased: &removed,
            });
        }
        return print_text(&format!(
            "erased everything of {user}: {} file(s) and folder(s) removed",
            removed.len()
        ));
    }
    let moved = expiry::clear_stm(state, &MemoryKey::person(user), Utc::now())?;
    if output.json {
        return print_json(&Cleared {
            user: user.as_str(),
            archived_messages: moved,
        });
    }
    print_text(&format!(
        "cleared the short-term memory of {user}: {moved} message(s) moved to the archive"
    ))
}

/// `session clear --all --json`.
#[derive(Serialize)]
struct Erased<'a> {
    user: &'a str,
    erased: &'a [std::path::PathBuf],
}

/// `session clear --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Cleared<'a> {
    user: &'a str,
    archived_messages: usize,
}

/// `session delete --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeleteJson<'a> {
    user: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    conversation: Option<&'a str>,
    msg_id: &'a str,
    /// Whether anything was removed now (false: it was already gone).
    deleted: bool,
    #[serde(flatten)]
    report: &'a crate::memory::user_data::Deleted,
}

/// `session delete`: one message and its reply, from the log and archives.
pub(super) fn delete(
    state: &State,
    owner: &MemoryKey,
    sender: &UserId,
    msg_id: &str,
    output: Output,
) -> anyhow::Result<()> {
    let report = crate::memory::user_data::delete_message(state, owner, sender, msg_id)?;
    let key = owner.conversation_key();
    if output.json {
        return print_json(&DeleteJson {
            user: sender.as_str(),
            conversation: key.as_ref().map(|k| k.as_str()),
            msg_id,
            deleted: !report.nothing(),
            report: &report,
        });
    }
    let whose = match key {
        Some(key) => format!("{sender} in conversation {}", key.as_str()),
        None => sender.to_string(),
    };
    print_text(&if report.nothing() {
        format!(
            "no message {msg_id:?} of {whose} is stored (already deleted, or never logged); \
             nothing changed"
        )
    } else {
        format!(
            "deleted message {msg_id:?} of {whose} and {} reply(ies), from {} file(s)",
            report.replies,
            report.files.len()
        )
    })
}

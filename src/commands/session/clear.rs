//! `session clear`: a user's short-term memory moved to the archive, or
//! with `--all` everything of the user erased; asks first unless `--yes`.

use std::io::{IsTerminal as _, Write as _};

use chrono::Utc;
use serde::Serialize;

use crate::commands::{Output, print_json, print_text};
use crate::error::usage;
use crate::layout::UserId;
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
        let removed = user_data::erase(state, user)?;
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
    let moved = expiry::clear_stm(state, user, Utc::now())?;
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

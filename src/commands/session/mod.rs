//! `session …`: memory management for admins at a terminal (tables on a
//! TTY, `--json` for scripts).
//!
//! This file dispatches each subcommand and holds what several of them
//! share: the listing (JSON, or a table), a note's `--json`, the "wrote"
//! report and reading FILE or stdin. One file per group of subcommands:
//! `status` (channel-wide and one user's numbers), `users` (`users` and
//! `conversations`), `show`, `clear` (and `clear --all`, the erase; `delete`, one message),
//! `profile` (show, `--set`, `--edit`), `topics` (`topics`, `topic
//! show|set`, `forget`, `reindex`) and `export`. `session search` is
//! `commands::search`.

mod clear;
mod export;
mod profile;
mod show;
mod status;
mod topics;
mod users;

pub use status::describe_failure;

use crate::layout::MemoryKey;
use std::io::Read as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::cli::{DayOrTime, SessionArgs, SessionCommand, TopicCommand};
use crate::commands::style::{Fit, Style, table_width, table_within};
use crate::commands::{Output, existing_user, print_json, print_text, writable_user};
use crate::error::usage;
use crate::memory::migration;
use crate::state::State;
use clear::{clear, delete};
use export::export;
use profile::profile;
use show::show;
use status::{status, user_status};
use topics::{forget, reindex, topic_set, topic_show, topics};
use users::{conversations, users};

/// Whether this subcommand writes what it was given (and so may start a
/// new state dir), rather than reading or managing what is there.
pub fn writes(args: &SessionArgs) -> bool {
    match &args.command {
        SessionCommand::Profile { set, edit, .. } => set.is_some() || *edit,
        SessionCommand::Topic {
            command: TopicCommand::Set { .. },
        } => true,
        _ => false,
    }
}

pub fn run(state: &State, args: &SessionArgs, output: Output) -> anyhow::Result<()> {
    let style = Style::detect();
    match &args.command {
        SessionCommand::Status { user: None } => status(state, output, style),
        SessionCommand::Status { user: Some(user) } => {
            existing_user(state, &MemoryKey::person(user))?;
            user_status(state, user, output)
        }
        SessionCommand::Users { sort, limit } => users(state, *sort, *limit, output, style),
        SessionCommand::Conversations { sort, limit } => {
            conversations(state, *sort, *limit, output, style)
        }
        SessionCommand::Show {
            user,
            conversation,
            count,
            archive,
            since,
        } => {
            let key = match conversation {
                Some(key) => migration::conversation_for_reading(state, key)?,
                None => MemoryKey::person(user.as_ref().expect("clap requires one")),
            };
            existing_user(state, &key)?;
            show(
                state,
                &key,
                *count,
                *archive,
                since.map(DayOrTime::start),
                output,
                style,
            )
        }
        SessionCommand::Clear { user, all, yes } => {
            existing_user(state, &MemoryKey::person(user))?;
            clear(state, user, *all, *yes, output)
        }
        SessionCommand::Delete {
            user,
            msg_id,
            conversation,
        } => {
            let owner = match conversation {
                Some(key) => migration::conversation_for_writing(state, key)?,
                None => MemoryKey::person(user),
            };
            existing_user(state, &owner)?;
            delete(state, &owner, user, msg_id, output)
        }
        SessionCommand::Profile { user, set, edit } => {
            writable_user(state, user)?;
            profile(state, user, set.as_deref(), *edit, output)
        }
        SessionCommand::Topics => topics(state, output, style),
        SessionCommand::Topic {
            command: TopicCommand::Show { slug },
        } => topic_show(state, slug, output),
        SessionCommand::Topic {
            command: TopicCommand::Set { slug, file, tags },
        } => topic_set(state, slug, file.as_deref(), tags, output),
        SessionCommand::Forget { slug } => forget(state, slug, output),
        SessionCommand::Search(args) => crate::commands::search::run(state, args, output),
        SessionCommand::Export { user, out, format } => {
            let memory = MemoryKey::person(user);
            existing_user(state, &memory)?;
            export(state, &memory, out, *format, output)
        }
        SessionCommand::Reindex => reindex(state, output),
    }
}

/// A listing: the items as JSON, or a table of `headers` with a row per
/// item (a note on stderr instead when there are none and `empty` says
/// what to tell).
fn print_listing<T: serde::Serialize>(
    items: &[T],
    output: Output,
    style: Style,
    empty: Option<&str>,
    headers: &[&str],
    fit: Fit,
    row: impl Fn(&T) -> Vec<String>,
) -> anyhow::Result<()> {
    if output.json {
        return print_json(&items);
    }
    if let Some(note) = empty.filter(|_| items.is_empty()) {
        crate::diag::warn(note);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = items.iter().map(row).collect();
    print_text(&table_within(style, headers, &rows, table_width(), fit))
}

/// `session profile --json` and `session topic show --json`: the note's
/// frontmatter and body, under whose (or which) it is.
#[derive(Serialize)]
struct NoteJson<'a> {
    #[serde(flatten)]
    of: NoteOf<'a>,
    frontmatter: Value,
    body: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum NoteOf<'a> {
    User(&'a str),
    Slug(&'a str),
}

fn report_written(output: Output, id: &str, path: &Path) -> anyhow::Result<()> {
    if output.json {
        print_json(&Written { id, written: path })
    } else {
        print_text(&format!("wrote {}", path.display()))
    }
}

/// `--json` of a profile or topic note written.
#[derive(Serialize)]
struct Written<'a> {
    id: &'a str,
    written: &'a Path,
}

/// FILE, or stdin for `-` (or no file).
fn read_input(source: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    if source.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| usage(format!("could not read stdin as UTF-8 text: {e}")))?;
    } else {
        text = std::fs::read_to_string(source)
            .map_err(|e| usage(format!("could not read {}: {e}", source.display())))?;
    }
    Ok(text)
}

//! `session profile`: show a user's profile, set it from a file or stdin,
//! or edit it in `$VISUAL`/`$EDITOR` (written only if nobody changed it
//! meanwhile).

use std::io::{Read as _, Write as _};
use std::path::Path;

use anyhow::Context as _;
use chrono::Utc;

use super::{NoteJson, NoteOf, read_input, report_written};
use crate::commands::style::printable;
use crate::commands::{Output, print_json, print_text};
use crate::error::{Exit, failure, usage};
use crate::layout::UserId;
use crate::memory::ltm;
use crate::state::State;

pub(super) fn profile(
    state: &State,
    user: &UserId,
    set: Option<&Path>,
    edit: bool,
    output: Output,
) -> anyhow::Result<()> {
    if let Some(source) = set {
        let doc = ltm::validate_profile(user, &read_input(source)?, Utc::now())?;
        let path = ltm::set_profile(state, user, doc)?;
        return report_written(output, user.as_str(), &path);
    }
    if edit {
        return edit_profile(state, user, output);
    }
    match ltm::read_profile(state, user)? {
        Some(note) if output.json => print_json(&NoteJson {
            of: NoteOf::User(user.as_str()),
            frontmatter: serde_json::to_value(&note.doc.front)?,
            body: &note.doc.body,
        }),
        Some(note) => print_text(&printable(&note.text)),
        // Nothing to show is "not found" (exit 9), as for `show`.
        None => Err(failure(
            Exit::UnknownUser,
            format!(
                "{user} has no profile; write one with `session profile --user {user} --set FILE`"
            ),
        )),
    }
}

fn edit_profile(state: &State, user: &UserId, output: Output) -> anyhow::Result<()> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .ok_or_else(|| usage("set $VISUAL or $EDITOR to edit a profile"))?;
    let before = ltm::profile_draft(state, user, Utc::now())?;
    let mut draft = tempfile::Builder::new()
        .prefix("claude-session-profile-")
        .suffix(".md")
        .tempfile()
        .context("could not create a temporary file to edit")?;
    draft.write_all(before.as_bytes())?;
    draft.flush()?;
    let status = editor_command(&editor, draft.path())
        .status()
        .with_context(|| format!("could not start the editor `{editor}`"))?;
    if !status.success() {
        return Err(usage(format!(
            "the editor `{editor}` failed ({status}); the profile is unchanged"
        )));
    }
    let mut after = String::new();
    std::fs::File::open(draft.path())?.read_to_string(&mut after)?;
    if after == before {
        eprintln!("no changes");
        return Ok(());
    }
    let doc = ltm::validate_profile(user, &after, Utc::now())?;
    match ltm::replace_profile_if_unchanged(state, user, &before, &doc)? {
        Some(path) => report_written(output, user.as_str(), &path),
        None => {
            let (_, kept) = draft.keep().context("could not keep your edit")?;
            Err(usage(format!(
                "{} changed while you were editing (new facts were merged); nothing \
                 was written; your edit is kept in {}; run --edit again",
                state.layout.profile_file(user).display(),
                kept.display()
            )))
        }
    }
}

/// `$EDITOR FILE` as git runs it: through `sh -c '$EDITOR "$@"'`, so an
/// editor with arguments (`code --wait`), quotes or a path with spaces
/// (`"/opt/My Editor/bin/edit" -w`) runs as the shell reads it, and the
/// file name is passed as one argument whatever it holds.
fn editor_command(editor: &str, file: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(editor)
        .arg(file);
    command
}

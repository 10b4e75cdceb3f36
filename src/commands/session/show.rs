//! `session show`: a user's or conversation's messages with time, speaker
//! and text (`-n`, `--since`, `--archive`), or the stored lines as
//! `--json`.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::commands::style::{Style, display_width, escape_for_terminal, printable};
use crate::commands::{Output, print_json, print_text};
use crate::layout::MemoryKey;
use crate::memory::message::Message;
use crate::memory::{stm, user_data};
use crate::state::State;

#[allow(clippy::too_many_arguments)]
pub(super) fn show(
    state: &State,
    user: &MemoryKey,
    count: Option<usize>,
    archive: bool,
    since: Option<DateTime<Utc>>,
    output: Output,
    style: Style,
) -> anyhow::Result<()> {
    // Each message with whether it came from an archive.
    let mut messages: Vec<(Message, bool)> = Vec::new();
    if archive {
        messages.extend(
            user_data::archived_messages(state, user)?
                .into_iter()
                .map(|m| (m, true)),
        );
    }
    messages.extend(
        stm::all_messages(state, user)?
            .into_iter()
            .map(|m| (m, false)),
    );
    if let Some(since) = since {
        messages.retain(|(m, _)| m.ts >= since);
    }
    if let Some(n) = count {
        let skip = messages.len().saturating_sub(n);
        messages.drain(..skip);
    }
    if output.json {
        // With --archive, each message says where it came from.
        let shown: Vec<ShownMessage> = messages
            .iter()
            .map(|(message, archived)| {
                let mut message = message.clone();
                if archive {
                    // Ours wins over a stored line's own `archived` key.
                    message.extra.shift_remove("archived");
                }
                ShownMessage {
                    message,
                    archived: archive.then_some(*archived),
                }
            })
            .collect();
        return print_json(&shown);
    }
    if messages.is_empty() {
        crate::diag::warn(format!("no messages of {user} to show"));
        return Ok(());
    }
    print_text(&render(&messages, archive, style))
}

/// The messages as a terminal shows them: time, (with --archive) where
/// each came from, the speaker padded to one width, the text indented.
fn render(messages: &[(Message, bool)], archive: bool, style: Style) -> String {
    let speakers: Vec<String> = messages.iter().map(|(m, _)| speaker(m)).collect();
    let width = speakers
        .iter()
        .map(|w| display_width(w))
        .max()
        .unwrap_or(0)
        .max(9);
    let mut out = String::new();
    for ((message, archived), who) in messages.iter().zip(&speakers) {
        let stamp = message.ts.format("%Y-%m-%d %H:%M").to_string();
        let marker = match (archive, archived) {
            (false, _) => String::new(),
            (true, true) => format!("{}  ", style.dim("archive")),
            (true, false) => "stm      ".to_owned(),
        };
        let text = printable(&message.text);
        let mut lines = text.lines();
        out.push_str(&format!(
            "{}  {marker}{}{}  {}\n",
            style.dim(&stamp),
            style.role(who),
            " ".repeat(width - display_width(who)),
            lines.next().unwrap_or_default()
        ));
        let indent = 18 + marker_width(archive) + width + 2;
        for line in lines {
            out.push_str(&format!("{}{line}\n", " ".repeat(indent)));
        }
    }
    out.trim_end().to_owned()
}

/// One message of `session show --json`: the line as stored, and with
/// --archive whether it came from an archive.
#[derive(Serialize)]
struct ShownMessage {
    #[serde(flatten)]
    message: Message,
    #[serde(skip_serializing_if = "Option::is_none")]
    archived: Option<bool>,
}

fn marker_width(archive: bool) -> usize {
    if archive { 9 } else { 0 }
}

/// Who spoke a line: in a group, `Alice (U1)` from the line's `userName`
/// and `userId`; otherwise the role.
fn speaker(message: &Message) -> String {
    let role = message.role.label().to_lowercase();
    let name = message.user_name.as_deref().map(escape_for_terminal);
    match (message.sender(), name) {
        (Some(id), Some(name)) => format!("{name} ({})", escape_for_terminal(id)),
        (Some(id), None) => escape_for_terminal(id),
        (None, _) => role,
    }
}

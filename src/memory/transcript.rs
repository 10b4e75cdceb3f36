//! Stored text as lines of a transcript, the one format every prompt
//! shows messages in (the context, compaction, the summaries, recall):
//! `[YYYY-MM-DD HH:MM] Role: text`, continuation lines indented, so no text
//! a user sent can pose as another turn or a section. Recalled messages
//! are passages: a stamp line, then each message of the passage as
//! `Role: text` ([`format_stamp`], [`format_in_passage`]).

use chrono::{DateTime, Utc};

use crate::memory::message::Message;

/// `[YYYY-MM-DD HH:MM] Role: text`, continuation lines indented. In a
/// group conversation a user line names its sender: `Alice (U123): text`.
pub fn format_message(message: &Message) -> String {
    let stamp = format_stamp(message.ts);
    let speaker = speaker(message);
    with_continuations(format!("{stamp} {speaker}: "), &message.text)
}

/// `[YYYY-MM-DD HH:MM]`: what a transcript line starts with, and the
/// line a passage of recalled messages starts with (its first one's).
pub fn format_stamp(ts: DateTime<Utc>) -> String {
    format!("[{}]", ts.format("%Y-%m-%d %H:%M"))
}

/// A message under a passage's stamp ([`format_stamp`]): `Role: text`,
/// continuation lines indented. The line starts with the role's label
/// whoever wrote it (`User Alice (U9): text` in a group), so no sender's
/// name or id, whatever characters it starts with, can pose as a stamp
/// or as a line of the message before.
pub fn format_in_passage(message: &Message) -> String {
    let speaker = match (message.sender(), message.user_name.as_deref()) {
        (Some(id), Some(name)) => format!(
            "{} {} ({})",
            message.role.label(),
            one_line(name),
            one_line(id)
        ),
        _ => speaker(message),
    };
    with_continuations(format!("{speaker}: "), &message.text)
}

/// Who wrote `message`, as a transcript names them.
fn speaker(message: &Message) -> String {
    match (message.sender(), message.user_name.as_deref()) {
        (Some(id), Some(name)) => format!("{} ({})", one_line(name), one_line(id)),
        (Some(id), None) => format!("{} ({})", message.role.label(), one_line(id)),
        _ => message.role.label().to_owned(),
    }
}

/// A line of a summary: `[YYYY-MM-DD] Daily summary: text`.
pub fn format_note(ts: DateTime<Utc>, label: &str, text: &str) -> String {
    with_continuations(format!("[{}] {label}: ", ts.format("%Y-%m-%d")), text)
}

fn with_continuations(mut out: String, text: &str) -> String {
    let mut lines = split_lines(text);
    out.push_str(lines.next().unwrap_or_default());
    for line in lines {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}

/// A name on one line, so it cannot break the turn format either.
fn one_line(text: &str) -> String {
    split_lines(text).collect::<Vec<_>>().join(" ")
}

/// Lines, breaking on every character a reader could take as a line break;
/// `\r\n` (as Windows clients and some platforms send) is one break.
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .flat_map(|line| line.split(['\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}']))
}

//! In-chat commands: `/session …` (alias `/memory …`) typed by a person in
//! chat, answered from disk without an LLM call, on their own data only.

use chrono::Utc;

use crate::layout::{MemoryKey, TopicSlug, UserId};
use crate::memory::user_data::{self, ChatExport};
use crate::memory::{expiry, ltm};
use crate::state::State;

/// A parsed in-chat command. Anything not understood is `Help`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatCommand {
    /// `status`: what is remembered.
    Status,
    /// `clear`: the recent conversation moves to the archive.
    Clear,
    /// `clear all`: everything of the person is erased.
    ClearAll,
    /// `profile`: the stored profile.
    Profile,
    /// `forget <topic>`: a topic note the person owns.
    Forget(String),
    /// `export`: all the person's data, as a file the operator hands over.
    Export,
    /// `help`, or anything not understood.
    Help,
    /// A command text over several lines: answered, never run.
    MultiLine,
}

/// `Some` when the text is an in-chat command. A command is one line: a
/// text that starts with one and goes on over more lines (`/session
/// clear` then `all`) is answered with help, never run as another command.
pub fn parse(text: &str) -> Option<ChatCommand> {
    let mut words = text.split_whitespace();
    let head = words.next()?;
    if !matches!(head, "/session" | "/memory") {
        return None;
    }
    if text.trim().contains([
        '\n', '\r', '\u{2028}', '\u{2029}', '\u{85}', '\u{b}', '\u{c}',
    ]) {
        return Some(ChatCommand::MultiLine);
    }
    let action = words.next().unwrap_or("help").to_ascii_lowercase();
    let args: Vec<&str> = words.collect();
    Some(match (action.as_str(), args.as_slice()) {
        ("status", _) => ChatCommand::Status,
        ("clear", []) => ChatCommand::Clear,
        ("clear", ["all"]) => ChatCommand::ClearAll,
        ("profile", _) => ChatCommand::Profile,
        ("forget", [topic]) => ChatCommand::Forget((*topic).to_owned()),
        ("export", _) => ChatCommand::Export,
        _ => ChatCommand::Help,
    })
}

pub const HELP: &str = "\
Memory commands:
/session status - what I remember about you
/session clear - forget our recent conversation (keeps your profile)
/session clear all - forget everything about you
/session profile - show your stored profile
/session forget <topic> - delete a topic note you own
/session export - export all your data
/session help - this list
(/memory works the same way)";

/// Answer an in-chat command for `user`, on `user`'s data only.
pub fn execute(state: &State, user: &UserId, command: &ChatCommand) -> anyhow::Result<String> {
    let now = Utc::now();
    let memory = &MemoryKey::person(user);
    Ok(match command {
        ChatCommand::Status => {
            let stats = user_data::stats(state, memory, now)?;
            let mut reply = format!(
                "I remember {} recent message(s) of ours",
                stats.stm_messages
            );
            if stats.compacted > 0 {
                reply.push_str(&format!(
                    " and a summary of {} older one(s)",
                    stats.compacted
                ));
            }
            reply.push('.');
            reply.push_str(if stats.has_profile {
                " I keep a profile of you (/session profile shows it)."
            } else {
                " I keep no profile of you."
            });
            reply
        }
        // Nothing stored: nothing to lock (no lock file for a stranger).
        ChatCommand::Clear if !user_data::has_data(state, memory) => {
            "There is no conversation of ours to clear.".to_owned()
        }
        ChatCommand::Clear => {
            let moved = expiry::clear_stm(state, memory, now)?;
            format!(
                "Done: I cleared our recent conversation ({moved} message(s) set aside). \
                 Your profile stays; /session clear all erases everything."
            )
        }
        ChatCommand::ClearAll => {
            user_data::erase(state, memory)?;
            "Done: everything I stored about you is erased.".to_owned()
        }
        ChatCommand::Profile => match ltm::read_profile(state, user)? {
            Some(note) => {
                let body = note.doc.body.trim();
                if body.is_empty() {
                    "Your profile is empty.".to_owned()
                } else {
                    format!("Your profile:\n{body}")
                }
            }
            None => "I keep no profile of you yet.".to_owned(),
        },
        ChatCommand::Forget(topic) => match TopicSlug::new(topic) {
            Ok(slug) if ltm::forget_topic(state, &slug, Some(user))? => {
                format!("Done: I forgot the topic note \"{slug}\".")
            }
            // The same answer for "missing" and "someone else's": no probing.
            _ => format!("You have no topic note named \"{topic}\"."),
        },
        ChatCommand::Export => match user_data::export_for_chat(state, memory, now)? {
            ChatExport::OverDailyLimit { made_today } => format!(
                "You have made {made_today} export(s) today, the daily limit; \
                 please try again tomorrow."
            ),
            // The file's name only: the server's paths are not the chat's business.
            ChatExport::Made { name } => format!(
                "Your data is exported as {name}; the operator can hand it to you. \
                 It is kept for {} day(s).",
                state.config.limits.chat_export_retention_days
            ),
        },
        ChatCommand::MultiLine => {
            format!("A /session command is one line; nothing was done.\n{HELP}")
        }
        ChatCommand::Help => HELP.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/sessions"), None);
        assert_eq!(parse("/session"), Some(ChatCommand::Help));
        assert_eq!(
            parse("  /memory forget  toeic "),
            Some(ChatCommand::Forget("toeic".to_owned()))
        );
        assert_eq!(parse("/session CLEAR all"), Some(ChatCommand::ClearAll));
        assert_eq!(parse("/session clear ALL"), Some(ChatCommand::Help));
        assert_eq!(parse("/session clear\nall"), Some(ChatCommand::MultiLine));
    }
}

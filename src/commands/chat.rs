//! In-chat commands: `/session …` (alias `/memory …`) typed by a person in
//! chat, answered from disk without an LLM call, on their own data only.

use chrono::Utc;

use crate::layout::{TopicSlug, UserId};
use crate::memory::{expiry, ltm, stm, user_data};
use crate::state::State;
use crate::store::fs::read_optional_text;

/// A parsed in-chat command: the action and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatCommand {
    pub action: String,
    pub args: Vec<String>,
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
        return Some(ChatCommand {
            action: MULTI_LINE.to_owned(),
            args: Vec::new(),
        });
    }
    let action = words.next().unwrap_or("help").to_ascii_lowercase();
    Some(ChatCommand {
        action,
        args: words.map(str::to_owned).collect(),
    })
}

/// The action of a command text over several lines: answered, never run.
const MULTI_LINE: &str = "\n";

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
    Ok(match (command.action.as_str(), command.args.as_slice()) {
        ("status", _) => {
            let stats = user_data::stats(state, user, now)?;
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
        ("clear", []) if !user_data::has_data(state, user) => {
            "There is no conversation of ours to clear.".to_owned()
        }
        ("clear", []) => {
            let moved = {
                let _lock = state.lock_user(user)?;
                expiry::retire_stm_locked(state, user, now)?
            };
            format!(
                "Done: I cleared our recent conversation ({moved} message(s) set aside). \
                 Your profile stays; /session clear all erases everything."
            )
        }
        ("clear", [all]) if all == "all" => {
            user_data::erase(state, user)?;
            "Done: everything I stored about you is erased.".to_owned()
        }
        ("profile", _) => {
            let path = state.layout.profile_file(user);
            match read_optional_text(&path)? {
                Some(text) => {
                    let doc = stm::parse_document_or_warn(&text, &path);
                    let body = doc.body.trim();
                    if body.is_empty() {
                        "Your profile is empty.".to_owned()
                    } else {
                        format!("Your profile:\n{body}")
                    }
                }
                None => "I keep no profile of you yet.".to_owned(),
            }
        }
        ("forget", [topic]) => match TopicSlug::new(topic) {
            Ok(slug) if ltm::forget_topic(state, &slug, Some(user))? => {
                format!("Done: I forgot the topic note \"{slug}\".")
            }
            // The same answer for "missing" and "someone else's": no probing.
            _ => format!("You have no topic note named \"{topic}\"."),
        },
        ("export", _) => {
            let dir = state.layout.exports_dir(user);
            let limit = state.config.limits.chat_exports_per_day;
            let today = crate::store::fs::read_dir_optional(&dir)?
                .iter()
                .filter_map(|e| crate::memory::housekeeping::export_time(e.file_name().to_str()?))
                .filter(|made| made.date_naive() == now.date_naive())
                .count();
            if today >= limit as usize {
                return Ok(format!(
                    "You have made {today} export(s) today, the daily limit; \
                     please try again tomorrow."
                ));
            }
            let name = format!("export-{}.json", now.format("%Y%m%dT%H%M%S%.3fZ"));
            let document = user_data::export_json(state, user, now)?;
            let mut bytes = serde_json::to_vec_pretty(&document)?;
            bytes.push(b'\n');
            crate::store::atomic::write_atomic(&dir.join(&name), &bytes, state.fsync())?;
            // The file's name only: the server's paths are not the chat's business.
            format!(
                "Your data is exported as {name}; the operator can hand it to you. \
                 It is kept for {} day(s).",
                state.config.limits.chat_export_retention_days
            )
        }
        (MULTI_LINE, _) => format!("A /session command is one line; nothing was done.\n{HELP}"),
        _ => HELP.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/sessions"), None);
        assert_eq!(parse("/session").unwrap().action, "help");
        let c = parse("  /memory forget  toeic ").unwrap();
        assert_eq!(
            (c.action.as_str(), c.args),
            ("forget", vec!["toeic".to_string()])
        );
    }
}

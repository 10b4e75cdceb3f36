//! In-chat commands: `/session …` (alias `/memory …`) typed by a person in
//! chat, answered from disk without an LLM call, on their own data only.

use crate::layout::UserId;
use crate::state::State;

/// A parsed in-chat command: the action and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatCommand {
    pub action: String,
    pub args: Vec<String>,
}

/// `Some` when the text is an in-chat command.
pub fn parse(text: &str) -> Option<ChatCommand> {
    let mut words = text.split_whitespace();
    let head = words.next()?;
    if !matches!(head, "/session" | "/memory") {
        return None;
    }
    let action = words.next().unwrap_or("help").to_ascii_lowercase();
    Some(ChatCommand {
        action,
        args: words.map(str::to_owned).collect(),
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

pub fn execute(_state: &State, _user: &UserId, _command: &ChatCommand) -> anyhow::Result<String> {
    Ok(HELP.to_owned())
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

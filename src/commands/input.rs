//! Turning `ask`/`append` arguments into a message: the text (argument or
//! stdin), the fields that travel with it, and `ask`'s base system prompt.

use std::io::{IsTerminal as _, Read as _};

use anyhow::Context as _;

use chrono::{DateTime, Utc};

use crate::claude::SystemPromptMode;
use crate::cli::{AskArgs, MessageArgs};
use crate::error::usage;
use crate::memory::message::{DEFAULT_CHANNEL, Message, Role};
use crate::state::State;

/// The error for a message over `limits.maxMessageBytes` (`len`: its
/// size in bytes, or a bound on it; `outcome`: what came of it).
pub fn too_long(len: &str, max_bytes: u64, outcome: &str) -> anyhow::Error {
    usage(format!(
        "the message is {len} bytes long; at most {max_bytes} are accepted \
         (limits.maxMessageBytes in config.json); {outcome}"
    ))
}

/// The sender and conversation ids of a message to log: they become new
/// folders, so they must keep the id rules (a seed folder outside them is
/// reached by the admin commands only).
pub fn check_ids(args: &MessageArgs) -> anyhow::Result<()> {
    // A conversation key keeps the id rules at parse time already.
    args.user.require_id_rules()
}

/// The message text: the arguments joined by spaces, else all of stdin.
/// Never prompts: stdin on a terminal with no text is a usage error. A
/// text over `max_bytes` (`limits.maxMessageBytes`) is refused, and stdin
/// is read no further than that.
pub fn message_text(args: &MessageArgs, max_bytes: u64) -> anyhow::Result<String> {
    let too_long = |len: String| too_long(&len, max_bytes, "nothing was logged");
    let text = if !args.text.is_empty() {
        let len: usize = args.text.iter().map(String::len).sum::<usize>() + args.text.len() - 1;
        if len as u64 > max_bytes {
            return Err(too_long(len.to_string()));
        }
        args.text.join(" ")
    } else {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(usage(
                "no message text: give it as an argument (`-- \"text\"`) or on stdin",
            ));
        }
        let mut bytes = Vec::new();
        // One byte past the limit (plus a trailing newline) tells "too long".
        stdin
            .lock()
            .take(max_bytes.saturating_add(3))
            .read_to_end(&mut bytes)?;
        let content = bytes
            .strip_suffix(b"\n")
            .map(|b| b.strip_suffix(b"\r").unwrap_or(b))
            .unwrap_or(&bytes);
        if content.len() as u64 > max_bytes {
            return Err(too_long("more than".to_owned() + &format!(" {max_bytes}")));
        }
        String::from_utf8(bytes).map_err(|e| {
            usage(format!(
                "the message on stdin is not valid UTF-8 (bad byte at offset {}); \
                 send UTF-8 text",
                e.utf8_error().valid_up_to()
            ))
        })?
    };
    // `echo text |` adds a newline that is not part of the message.
    let text = text.trim_end_matches(['\n', '\r']).to_owned();
    if text.trim().is_empty() {
        return Err(usage("the message text is empty; there is nothing to log"));
    }
    Ok(text)
}

/// `--display-name`, unless it is blank: a broker passing the platform's
/// empty name gets no name written (rather than `display_name: ""`).
pub fn display_name(args: &MessageArgs) -> Option<&str> {
    args.display_name
        .as_deref()
        .filter(|name| !name.trim().is_empty())
}

/// A message built from the shared arguments.
pub fn build_message(
    state: &State,
    args: &MessageArgs,
    role: Role,
    text: String,
    ts: DateTime<Utc>,
) -> anyhow::Result<Message> {
    // In a group conversation each user line says who sent it.
    let mut message = match (role, &args.conversation) {
        (Role::User, Some(_)) => {
            Message::user_line(text, ts, Some((args.user.as_str(), display_name(args))))
        }
        _ => Message::new(role, text, ts),
    };
    message.msg_id = args.msg_id.clone();
    message.thread_id = args.thread.clone();
    message.group_id = args.group.clone();
    message.channel = Some(
        args.source
            .clone()
            .or_else(|| state.channel.as_ref().map(|c| c.to_string()))
            .unwrap_or_else(|| DEFAULT_CHANNEL.to_owned()),
    );
    if !args.attach.is_empty() {
        message.attachments = Some(args.attach.clone());
    }
    Ok(message)
}

/// The base prompt and how it reaches claude. `--append-system-prompt`
/// (or no base prompt at all) keeps claude's own system prompt.
pub fn base_system_prompt(
    state: &State,
    args: &AskArgs,
    now: DateTime<Utc>,
) -> anyhow::Result<(SystemPromptMode, Option<String>)> {
    if let Some(text) = &args.append_system_prompt {
        return Ok((SystemPromptMode::Append, Some(text.clone())));
    }
    if let Some(text) = &args.system_prompt {
        return Ok((SystemPromptMode::Replace, Some(text.clone())));
    }
    if let Some(path) = &args.system_prompt_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("could not read --system-prompt-file {}", path.display()))
            .map_err(|e| crate::error::usage(format!("{e:#}")))?;
        return Ok((SystemPromptMode::Replace, Some(text)));
    }
    // No base prompt configured: ours, written for chat. Claude Code's
    // own coding-agent prompt only when asked for (--append-system-prompt).
    // Ours says what day it is: claude in bare mode (see `claude`) does not.
    let text = (state.config.ask.system_prompt.clone()).unwrap_or_else(|| {
        format!(
            "{}\nToday is {} (UTC).",
            crate::memory::prompts::CHAT_BASE_PROMPT,
            now.format("%A, %Y-%m-%d")
        )
    });
    Ok((SystemPromptMode::Replace, Some(text)))
}

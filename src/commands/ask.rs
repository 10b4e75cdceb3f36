//! `ask`: a message from the arguments, one turn of the conversation
//! ([`crate::memory::turn`]), the reply on stdout.
//!
//! 1. An in-chat `/session` or `/memory` command is answered from disk.
//! 2. Everything that can fail on bad input (the base prompt, the
//!    conversation, the runner, the attachments) fails before anything is
//!    logged.
//! 3. The turn logs the message, calls claude, logs the reply, and hands
//!    it here to print (text, `--json`, or the end of a `--stream`).
//! 4. Stdout is closed, so the broker can send the reply, and a
//!    compaction that was due runs.
//!
//! `--stream` changes only how claude's output is read and printed
//! ([`crate::commands::reply_stream`]): the reply is logged by the same code, after claude
//! has finished, and the `done` event is the `--json` object.

use serde::Serialize;
use serde_json::Value;

use crate::cli::{AskArgs, OutputFormat};
use crate::commands::attachments::Attachments;
use crate::commands::input::{
    base_system_prompt, build_message, check_ids, display_name, message_text,
};
use crate::commands::reply_stream::ReplyStream;
use crate::commands::{Output, Purpose, chat, claude_runner, print_json, print_text};
use crate::layout::{ConversationKey, MemoryKey, UserId};
use crate::memory::message::Role;
use crate::memory::turn::{Ended, Shown, Turn};
use crate::state::State;

pub fn run(state: &State, args: &AskArgs, output: Output) -> anyhow::Result<()> {
    let json = output.json || args.output_format == Some(OutputFormat::Json);
    let stream = (args.stream || (state.config.ask.stream && !args.no_stream))
        .then(|| ReplyStream::new(json));
    let printer = Printer {
        sender: &args.message.user,
        conversation: args.message.conversation.as_ref(),
        json,
        stream: stream.as_ref(),
    };
    let result = ask(state, args, &printer);
    if let (Err(e), Some(stream)) = (&result, &stream) {
        stream.error(e);
    }
    result
}

fn ask(state: &State, args: &AskArgs, printer: &Printer) -> anyhow::Result<()> {
    let now = state.clock.now();
    let sender = &args.message.user;
    check_ids(&args.message)?;
    let text = message_text(&args.message, state.config.limits.max_message_bytes)?;

    if let Some(command) = chat::parse(&text) {
        // In-chat commands act on the sender's own data, never a group's.
        let reply = chat::execute(state, sender, &command)?;
        return printer.print_command(&reply);
    }

    // Everything that can fail on bad input fails before anything is logged.
    let (mode, mut base) = base_system_prompt(state, args, now)?;
    let conversation = match &args.message.conversation {
        Some(key) => Some(crate::memory::migration::conversation_for_writing(
            state, key,
        )?),
        None => None,
    };
    let key = &conversation.unwrap_or_else(|| MemoryKey::person(sender));
    let mut claude = claude_runner(state, &args.claude, Purpose::Reply)?;
    if state.config.ask.recall {
        crate::commands::mcp::enable_recall(state, &mut claude, &mut base, sender, key)?;
    }
    let message = build_message(state, &args.message, Role::User, text, now)?;
    let attachments = Attachments::read(&message, &state.config.limits)?;
    let on_text = printer
        .stream
        .map(|stream| move |piece: &str| stream.delta(piece));
    let turn = Turn {
        state,
        sender,
        key,
        display_name: display_name(&args.message),
        claude,
        mode,
        base,
        message,
        input: &|text, sandbox| attachments.for_claude(text, sandbox),
        on_text: on_text.as_ref().map(|f| f as &dyn Fn(&str)),
    };

    let ended = turn.take(args.no_compact, &mut |shown| printer.print(shown))?;
    // A broker that reads stdout to its end must not wait for compaction.
    close_stdout();
    if ended == (Ended::Answered { compact_due: true }) {
        turn.compact_after_reply(&|compactor| {
            crate::commands::compact::start_in_background(state, key, compactor)
        });
    }
    Ok(())
}

/// Point stdout at /dev/null, so whoever reads our output sees its end now.
fn close_stdout() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // Replaces fd 1; everything printed was flushed by the printer.
        let _ = rustix::stdio::dup2_stdout(&null);
    }
}

/// Where and how replies go: whole, as `--json`, or as the end of a stream.
struct Printer<'a> {
    sender: &'a UserId,
    conversation: Option<&'a ConversationKey>,
    json: bool,
    stream: Option<&'a ReplyStream>,
}

impl Printer<'_> {
    /// A reply of the turn. One object for `--json` and the `done` event.
    fn print(&self, shown: Shown) -> anyhow::Result<()> {
        let object = || AskJson {
            usage: shown.reply.and_then(|r| r.usage.as_ref()),
            cost_usd: shown.reply.and_then(|r| r.cost_usd),
            compacted: shown.compacted,
            replayed: shown.replayed,
            conflict: shown.conflict,
            budget_stopped: shown.budget_stopped,
            ..AskJson::new(shown.text, self.sender, self.conversation)
        };
        self.emit(shown.text, object)
    }

    /// The answer to an in-chat command.
    fn print_command(&self, reply: &str) -> anyhow::Result<()> {
        self.emit(reply, || AskJson {
            command: true,
            ..AskJson::new(reply, self.sender, self.conversation)
        })
    }

    fn emit<'a>(&self, text: &str, object: impl Fn() -> AskJson<'a>) -> anyhow::Result<()> {
        match self.stream {
            Some(stream) => stream.done(text, &object()),
            None if self.json => print_json(&object()),
            None => print_text(text),
        }
    }
}

/// What `ask --json` prints, and the `done` event of `--stream --json`
/// carries: the reply and how it came about.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskJson<'a> {
    pub reply: &'a str,
    /// The sender.
    pub user: &'a str,
    /// `--conversation`, when the message was to a group or thread.
    pub conversation: Option<&'a str>,
    /// claude's token usage, as it reports it; none without a call.
    pub usage: Option<&'a Value>,
    pub cost_usd: Option<f64>,
    /// A compaction was due and started.
    pub compacted: bool,
    /// The reply already logged for this message id, not a new call.
    pub replayed: bool,
    /// The message id was logged before with different text.
    pub conflict: bool,
    /// A budget cap stopped the call; the reply is `budget.message`.
    pub budget_stopped: bool,
    /// An in-chat `/session` command, answered from disk.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub command: bool,
}

impl<'a> AskJson<'a> {
    fn new(reply: &'a str, user: &'a UserId, conversation: Option<&'a ConversationKey>) -> Self {
        Self {
            reply,
            user: user.as_str(),
            conversation: conversation.map(ConversationKey::as_str),
            usage: None,
            cost_usd: None,
            compacted: false,
            replayed: false,
            conflict: false,
            budget_stopped: false,
            command: false,
        }
    }
}

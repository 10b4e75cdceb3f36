//! `ask`: the whole per-message flow.
//!
//! 1. An in-chat `/session` or `/memory` command is answered from disk.
//! 2. Under the user lock: read the context, then log the user message
//!    (so the message is not sent twice, as prompt and as context).
//! 3. Run claude without holding any lock.
//! 4. Log the reply under the lock again, print it.
//!
//! `--stream` changes only how claude's output is read and printed
//! ([`reply_stream`]): the reply is logged by the same code, after claude
//! has finished, and the `done` event is the `--json` object.

use anyhow::Context as _;
use chrono::Utc;
use serde::Serialize;
use serde_json::Value;

use crate::claude::{Claude, Reply, Request, SystemPromptMode};
use crate::cli::{AskArgs, OutputFormat};
use crate::commands::attachments::Attachments;
use crate::commands::input::{build_message, check_ids, message_text};
use crate::commands::reply_stream::ReplyStream;
use crate::commands::{Output, Purpose, chat, claude_runner, print_json, print_text};
use crate::config::CompactionMode;
use crate::error::{Exit, failure};
use crate::layout::{ConversationKey, UserId};
use crate::memory::compaction;
use crate::memory::context;
use crate::memory::message::{Message, Role};
use crate::memory::stm::{self, Intake};
use crate::memory::{ledger, ltm};
use crate::state::State;

/// What the seed's brokers put between the base prompt and the context.
pub const CONTEXT_HEADING: &str = "\n\n## Recent conversation context:\n";

/// Everything one ask works with, settled before anything is logged.
struct Turn<'a> {
    state: &'a State,
    args: &'a AskArgs,
    /// Who sent the message: their profile is injected, their budget counts.
    sender: &'a UserId,
    /// Whose short-term memory: the sender's, or a group's (--conversation).
    key: &'a UserId,
    claude: Claude,
    mode: SystemPromptMode,
    base: Option<String>,
    message: Message,
    /// The message's attachments, read and checked before it is logged.
    attachments: Attachments,
    json: bool,
    /// `--stream` (or config `ask.stream`, unless `--no-stream`).
    stream: Option<&'a ReplyStream>,
}

pub fn run(state: &State, args: &AskArgs, output: Output) -> anyhow::Result<()> {
    let json = output.json || args.output_format == Some(OutputFormat::Json);
    let stream = (args.stream || (state.config.ask.stream && !args.no_stream))
        .then(|| ReplyStream::new(json));
    let result = ask(state, args, json, stream.as_ref());
    if let (Err(e), Some(stream)) = (&result, &stream) {
        stream.error(e);
    }
    result
}

fn ask(
    state: &State,
    args: &AskArgs,
    json: bool,
    stream: Option<&ReplyStream>,
) -> anyhow::Result<()> {
    let sender = &args.message.user;
    check_ids(&args.message)?;
    let text = message_text(&args.message, state.config.limits.max_message_bytes)?;

    if let Some(command) = chat::parse(&text) {
        // In-chat commands act on the sender's own data, never a group's.
        let reply = chat::execute(state, sender, &command)?;
        let object = AskJson {
            command: true,
            ..AskJson::new(&reply, sender, args.message.conversation.as_ref())
        };
        return if let Some(stream) = stream {
            stream.done(&reply, &object)
        } else if json {
            print_json(&object)
        } else {
            print_text(&reply)
        };
    }

    // Everything that can fail on bad input fails before anything is logged.
    let (mode, mut base) = base_system_prompt(state, args)?;
    let conversation = match &args.message.conversation {
        Some(key) => Some(crate::memory::migration::conversation_for_writing(
            state, key,
        )?),
        None => None,
    };
    let key = conversation.as_ref().unwrap_or(sender);
    let mut claude = claude_runner(state, &args.claude, Purpose::Reply)?;
    if state.config.ask.recall {
        crate::commands::mcp::enable_recall(state, &mut claude, &mut base, sender, key)?;
    }
    let message = build_message(state, &args.message, Role::User, text, Utc::now())?;
    let attachments = Attachments::read(&message, &state.config.limits)?;
    let turn = Turn {
        state,
        args,
        sender,
        key,
        claude,
        mode,
        base,
        message,
        attachments,
        json,
        stream,
    };
    let now = turn.message.ts;

    if let Some(name) = crate::commands::input::display_name(&args.message) {
        let channel = turn.message.channel.as_deref();
        ltm::ensure_profile(state, sender, name, channel, now)?;
    }
    let over_budget = ledger::ask_cap_reached(state, sender, now)?;

    // One hold of the conversation lock: check for a redelivery, read the
    // context, log the message, and claim the message id.
    let query = context::Query {
        text: &turn.message.text,
        msg_id: turn.message.msg_id.as_deref(),
    };
    // Recall is added after the lock is released (see below).
    let read_context = || context::gather(state, turn.key, sender, state.config.context_window());
    let intake = stm::take_in(
        state,
        turn.key,
        &turn.message,
        over_budget.is_none().then_some(read_context),
    )?;
    let (parts, claim) = match (intake, over_budget) {
        (Intake::Redelivery(delivery), over_budget) => {
            let id = turn
                .message
                .msg_id
                .as_deref()
                .expect("only an id is redelivered");
            return redelivered(&turn, id, *delivery, over_budget);
        }
        (
            Intake::Logged {
                read: Some(parts),
                claim,
            },
            _,
        ) => (parts, claim),
        (Intake::Logged { read: None, .. }, over_budget) => {
            let why = over_budget.expect("no context is read only over budget");
            return refuse_over_budget(&turn, &why);
        }
    };

    // Out of the lock, the message logged: it is no passage of its own.
    let mut parts = parts;
    context::add_recall(
        state,
        turn.key,
        sender,
        &mut parts,
        query,
        Some(&turn.message),
    )?;
    let reply = answer(&turn, &parts)?;
    let compact_due = !args.no_compact
        && state.config.compacting.enabled
        && compaction::may_need(state, turn.key, false).unwrap_or(false);
    let shown = Shown {
        compacted: compact_due,
        ..Shown::default()
    };
    print_reply(&turn, &reply.text, Some(&reply), shown)?;
    if let Some(claim) = claim {
        claim.release();
    }
    // A broker that reads stdout to its end must not wait for compaction.
    close_stdout();

    // The reply is out; the broker can send it while we tidy up.
    if compact_due {
        // Compaction has its own model (compacting.model), not the reply's.
        let mut compactor = turn.claude.clone();
        // Nor the reply's recall tools.
        compactor.mcp_config = None;
        compactor.allowed_tools = state.config.ask.allowed_tools.clone();
        compactor.model = state
            .config
            .compacting
            .model
            .clone()
            .filter(|m| !m.is_empty());
        let result = match state.config.compacting.mode {
            CompactionMode::Inline => compaction::compact_user(
                state,
                turn.key,
                &|| Ok(Some(compactor.clone())),
                compaction::Options::default(),
            )
            .and_then(compaction::Outcome::budget_stop_as_error)
            .map(|_| ()),
            CompactionMode::Background => spawn_background_compaction(state, turn.key, &compactor),
        };
        // The answer was delivered: a failed compaction is retried by the
        // next ask or by maintain, not reported as a failed ask.
        if let Err(e) = result {
            crate::memory::failures::record(
                state,
                "compaction after a reply",
                Some(turn.key.as_str()),
                &e,
            );
            crate::diag::warn(format!(
                "compaction of {} after the reply failed: {e:#}",
                turn.key
            ));
        }
    }
    Ok(())
}

/// Point stdout at /dev/null, so whoever reads our output sees its end now.
fn close_stdout() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // Replaces fd 1; everything printed was flushed by print_reply.
        let _ = rustix::stdio::dup2_stdout(&null);
    }
}

/// What `ask` answers when a budget cap is reached (config `budget.message`).
const BUDGET_MESSAGE: &str = "Sorry, I can't answer right now: my budget for this period is used up. Please try again later.";

/// Call claude with the context and log its reply (with usage and cost).
fn answer(turn: &Turn, parts: &context::Parts) -> anyhow::Result<Reply> {
    let state = turn.state;
    let rendered = context::render(parts, state.config.stm.max_context_chars as usize);
    let sandbox = turn.claude.sandbox()?;
    let given = turn.attachments.for_claude(&turn.message.text, &sandbox);
    let request = Request {
        system_prompt: system_prompt(turn.mode, turn.base.clone(), &rendered.text),
        prompt: &given.prompt,
        json_schema: None,
        images: &given.images,
        read_work_folder: given.read_work_folder,
    };
    // The one difference streaming makes: how claude's output is read.
    let reply = match turn.stream {
        Some(stream) => turn
            .claude
            .call_streaming_in(&sandbox, request, &mut |piece| stream.delta(piece))?,
        None => turn.claude.call_in(&sandbox, request)?,
    };
    drop(sandbox);
    let now = Utc::now();
    let message = &turn.message;
    let stored = stm::cap_reply(&reply.text, state.config.limits.max_reply_bytes);
    let mut answer = Message::reply_line(message, stored, now);
    answer.usage = reply.usage.clone();
    answer.cost_usd = reply.cost_usd;
    // The reply is paid for and the user waits for it: a failure to log it
    // is reported, but does not keep the reply from being printed.
    if let Err(e) = stm::append_answer(state, turn.key, turn.sender, message.ts, &answer) {
        crate::diag::warn(format!(
            "the reply could not be logged in {}'s memory: {e:#}",
            turn.key
        ));
    }
    if let Err(e) = ledger::record_ask(state, turn.sender, &reply, now) {
        crate::diag::warn(format!("could not record the cost of this answer: {e:#}"));
    }
    Ok(reply)
}

/// The same message id again (a platform re-sending a webhook): print the
/// reply already given; if the first delivery is still being answered,
/// wait for it; if it failed, answer now without logging the message twice.
fn redelivered(
    turn: &Turn,
    id: &str,
    delivery: stm::Delivery,
    over_budget: Option<String>,
) -> anyhow::Result<()> {
    // The same id with other text: a broker reusing ids, not a redelivery.
    // The first answer stands (the id is taken), but never silently.
    let conflict = delivery
        .text
        .as_ref()
        .is_some_and(|logged| logged != &turn.message.text);
    if conflict {
        crate::diag::warn(format!(
            "message id {id} was already logged with different text; answering with the reply \
             to that first message; give each message its own --msg-id"
        ));
    }
    let replayed = Shown {
        replayed: true,
        conflict,
        ..Shown::default()
    };
    if let Some(reply) = delivery.reply {
        return print_reply(turn, &reply.text, None, replayed);
    }
    let state = turn.state;
    let wait = turn.claude.timeout + std::time::Duration::from_secs(5);
    let waiting_since = Utc::now();
    let claim = stm::wait_for_claim(state, turn.key, id, wait)?;
    let (delivery, parts) = stm::find_delivery_and(state, turn.key, id, turn.message.ts, || {
        let query = context::Query {
            text: &turn.message.text,
            msg_id: Some(id),
        };
        let mut parts = context::gather(
            state,
            turn.key,
            turn.sender,
            state.config.context_window() + 1,
        )?;
        parts.messages.retain(|m| m.msg_id.as_deref() != Some(id));
        Ok((parts, query))
    })?;
    let (mut parts, query) = parts;
    context::add_recall(state, turn.key, turn.sender, &mut parts, query, None)?;
    let text = match (delivery.reply, over_budget) {
        (Some(reply), _) => reply.text,
        // The first attempt failed or was killed: answer it now, if the
        // budget still allows a call.
        (None, Some(why)) => {
            drop(claim);
            return refuse_over_budget(turn, &why);
        }
        (None, None) => {
            if let Some(shared) = claim.failed_since(waiting_since) {
                drop(claim);
                return Err(shared);
            }
            let reply = match answer(turn, &parts) {
                Ok(reply) => {
                    claim.clear_failure();
                    reply
                }
                Err(e) => {
                    claim.record_failure(&e);
                    drop(claim);
                    return Err(e);
                }
            };
            let fresh = Shown {
                conflict,
                ..Shown::default()
            };
            print_reply(turn, &reply.text, Some(&reply), fresh)?;
            claim.release();
            return Ok(());
        }
    };
    print_reply(turn, &text, None, replayed)?;
    claim.release();
    Ok(())
}

/// The budget note on stdout (for the chat), the reason on stderr, exit 7.
fn refuse_over_budget(turn: &Turn, why: &str) -> anyhow::Result<()> {
    let budget = &turn.state.config.budget;
    let text = budget.message.as_deref().unwrap_or(BUDGET_MESSAGE);
    let stopped = Shown {
        budget_stopped: true,
        ..Shown::default()
    };
    print_reply(turn, text, None, stopped)?;
    Err(failure(Exit::OverBudget, format!("no call made: {why}")))
}

/// How a printed reply came about, for `--json` and the `done` event.
#[derive(Debug, Clone, Copy, Default)]
struct Shown {
    /// A compaction was due and started.
    compacted: bool,
    /// The reply already logged for this message id, not a new call.
    replayed: bool,
    /// The message id was logged before with different text.
    conflict: bool,
    /// A budget cap stopped the call; the reply is `budget.message`.
    budget_stopped: bool,
}

/// The reply on stdout: whole, or (streaming) the end of the stream. One
/// object for `--json` and the `done` event alike.
fn print_reply(turn: &Turn, text: &str, reply: Option<&Reply>, shown: Shown) -> anyhow::Result<()> {
    let object = || AskJson {
        usage: reply.and_then(|r| r.usage.as_ref()),
        cost_usd: reply.and_then(|r| r.cost_usd),
        compacted: shown.compacted,
        replayed: shown.replayed,
        conflict: shown.conflict,
        budget_stopped: shown.budget_stopped,
        ..AskJson::new(text, turn.sender, turn.args.message.conversation.as_ref())
    };
    match turn.stream {
        Some(stream) => stream.done(text, &object()),
        None if turn.json => print_json(&object()),
        None => print_text(text),
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

/// Start `claude-session compact --user U` detached, in its own process
/// group, so the broker is not held up and does not kill it.
fn spawn_background_compaction(
    state: &State,
    user: &UserId,
    claude: &Claude,
) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt as _;
    let exe = std::env::current_exe().context("could not find this program to start compaction")?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--state-dir")
        .arg(state.layout.state_dir())
        .arg("-q");
    if let Some(channel) = &state.channel {
        command.arg("--channel").arg(channel.as_str());
    }
    command
        .arg("compact")
        .arg("--background")
        .args(match user.conversation_key() {
            Some(key) => ["--conversation".to_owned(), key.as_str().to_owned()],
            None => ["--user".to_owned(), user.as_str().to_owned()],
        })
        .arg("--claude-bin")
        .arg(&claude.program)
        .arg("--timeout")
        .arg(claude.timeout.as_secs().to_string());
    // The model is compact's own default (compacting.model), as the
    // compactor's; the --claude-arg values go along, as inline
    // compaction uses them too.
    for arg in &claude.extra_args {
        command.arg(format!("--claude-arg={arg}"));
    }
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .context("could not start a background compaction")?;
    Ok(())
}

/// The base prompt and how it reaches claude. `--append-system-prompt`
/// (or no base prompt at all) keeps claude's own system prompt.
fn base_system_prompt(
    state: &State,
    args: &AskArgs,
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
            Utc::now().format("%A, %Y-%m-%d")
        )
    });
    Ok((SystemPromptMode::Replace, Some(text)))
}

/// Base prompt, then the seed's heading and the context block.
fn system_prompt(
    mode: SystemPromptMode,
    base: Option<String>,
    context: &str,
) -> Option<(SystemPromptMode, String)> {
    let mut text = base.unwrap_or_default();
    if !context.is_empty() {
        text.push_str(CONTEXT_HEADING);
        text.push_str(context);
    }
    let text = text.trim_start_matches('\n').to_owned();
    (!text.is_empty()).then_some((mode, text))
}

//! `ask`: the whole per-message flow.
//!
//! 1. An in-chat `/session` or `/memory` command is answered from disk.
//! 2. Under the user lock: read the context, then log the user message
//!    (so the message is not sent twice, as prompt and as context).
//! 3. Run claude without holding any lock.
//! 4. Log the reply under the lock again, print it.

use anyhow::Context as _;
use chrono::Utc;
use serde_json::{Value, json};

use crate::claude::{Claude, Reply, Request, Sandbox, SystemPromptMode};
use crate::cli::{AskArgs, OutputFormat};
use crate::commands::input::{build_message, message_text};
use crate::commands::{Output, Purpose, chat, claude_runner, print_json, print_text};
use crate::config::CompactionMode;
use crate::error::{Exit, failure};
use crate::layout::UserId;
use crate::memory::compaction;
use crate::memory::context;
use crate::memory::message::{Message, Role};
use crate::memory::stm;
use crate::memory::{ledger, ltm};
use crate::state::State;
use crate::store::lock::FileLock;

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
    json: bool,
}

pub fn run(state: &State, args: &AskArgs, output: Output) -> anyhow::Result<()> {
    let json = output.json || args.output_format == Some(OutputFormat::Json);
    let sender = &args.message.user;
    let text = message_text(&args.message)?;

    if let Some(command) = chat::parse(&text) {
        // In-chat commands act on the sender's own data, never a group's.
        let reply = chat::execute(state, sender, &command)?;
        return if json {
            print_json(&json!({"reply": reply, "user": sender.as_str(), "command": true}))
        } else {
            print_text(&reply)
        };
    }

    // Everything that can fail on bad input fails before anything is logged.
    let (mode, mut base) = base_system_prompt(state, args)?;
    let key = args.message.conversation.as_ref().unwrap_or(sender);
    let mut claude = claude_runner(state, &args.claude, Purpose::Reply)?;
    if state.config.ask.recall {
        crate::commands::mcp::enable_recall(state, &mut claude, &mut base, sender, key)?;
    }
    let turn = Turn {
        state,
        args,
        sender,
        key,
        claude,
        mode,
        base,
        message: build_message(state, &args.message, Role::User, text, Utc::now())?,
        json,
    };
    let now = turn.message.ts;

    // Brokers pass --display-name on every message: look before locking.
    if let Some(name) = &args.message.display_name
        && !state.layout.profile_file(sender).exists()
    {
        let created = {
            let _lock = state.lock_user(sender)?;
            let channel = turn.message.channel.as_deref();
            ltm::ensure_profile_locked(state, sender, name, channel, now)?
        };
        if created {
            ltm::index_profile(state, sender)?;
        }
    }
    let over_budget = ledger::ask_cap_reached(state, sender, now)?;

    // One hold of the conversation lock: check for a redelivery, read the
    // context, log the message, and claim the message id.
    let (parts, inflight) = {
        let _lock = state.lock_user(turn.key)?;
        if let Some(id) = &turn.message.msg_id {
            let delivery = stm::find_delivery(state, turn.key, id, now)?;
            if delivery.logged {
                drop(_lock);
                return redelivered(&turn, id, delivery.reply, over_budget);
            }
        }
        if let Some(why) = over_budget {
            stm::append_locked(state, turn.key, std::slice::from_ref(&turn.message))?;
            drop(_lock);
            return refuse_over_budget(&turn, &why);
        }
        let inflight = match &turn.message.msg_id {
            Some(id) => FileLock::try_acquire(&state.layout.inflight_lock_file(turn.key, id))?,
            None => None,
        };
        let parts = context::gather(state, turn.key, sender, state.config.context_window())?;
        stm::append_locked(state, turn.key, std::slice::from_ref(&turn.message))?;
        (parts, inflight)
    };

    let reply = answer(&turn, &parts)?;
    let compact_due = !args.no_compact
        && state.config.compacting.enabled
        && compaction::may_need(state, turn.key, false).unwrap_or(false);
    print_reply(&turn, &reply.text, Some(&reply), compact_due)?;
    if let Some(inflight) = inflight {
        release(inflight);
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
            .map(|_| ()),
            CompactionMode::Background => spawn_background_compaction(state, turn.key, &compactor),
        };
        // The answer was delivered: a failed compaction is retried by the
        // next ask or by maintain, not reported as a failed ask.
        if let Err(e) = result {
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
    use std::os::fd::AsRawFd as _;
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // SAFETY: dup2 onto fd 1 replaces our stdout; everything printed
        // was flushed by print_reply.
        unsafe {
            libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO);
        }
    }
}

/// What `ask` answers when a budget cap is reached (config `budget.message`).
const BUDGET_MESSAGE: &str = "Sorry, I can't answer right now: my budget for this period is used up. Please try again later.";

/// Call claude with the context and log its reply (with usage and cost).
fn answer(turn: &Turn, parts: &context::Parts) -> anyhow::Result<Reply> {
    let state = turn.state;
    let rendered = context::render(parts, state.config.stm.max_context_chars as usize);
    let mut sandbox = turn.claude.sandbox()?;
    let prompt = prompt_with_attachments(&turn.message, &mut sandbox);
    let reply = turn.claude.call_in(
        &sandbox,
        Request {
            system_prompt: system_prompt(turn.mode, turn.base.clone(), &rendered.text),
            prompt: &prompt,
            json_schema: None,
        },
    )?;
    drop(sandbox);
    let now = Utc::now();
    let message = &turn.message;
    let mut answer = Message::new(Role::Assistant, reply.text.clone(), now);
    answer.channel = message.channel.clone();
    answer.thread_id = message.thread_id.clone();
    answer.group_id = message.group_id.clone();
    if let Some(id) = &message.msg_id {
        answer
            .extra
            .insert("replyTo".into(), Value::from(id.as_str()));
    }
    // In a group, whom the reply answers: an erase of that person takes it too.
    if turn.key != turn.sender {
        answer
            .extra
            .insert("askedBy".into(), Value::from(turn.sender.as_str()));
    }
    if let Some(usage) = &reply.usage {
        answer.extra.insert("usage".into(), usage.clone());
    }
    if let Some(cost) = reply.cost_usd {
        answer.extra.insert("costUsd".into(), Value::from(cost));
    }
    // The reply is paid for and the user waits for it: a failure to log it
    // is reported, but does not keep the reply from being printed.
    let logged = state
        .lock_user(turn.key)
        .and_then(|_lock| stm::append_locked(state, turn.key, std::slice::from_ref(&answer)));
    if let Err(e) = logged {
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
    reply: Option<Message>,
    over_budget: Option<String>,
) -> anyhow::Result<()> {
    if let Some(reply) = reply {
        return print_reply(turn, &reply.text, None, false);
    }
    let state = turn.state;
    let wait = turn.claude.timeout + std::time::Duration::from_secs(5);
    let inflight = FileLock::acquire(
        &state.layout.inflight_lock_file(turn.key, id),
        wait,
        "message",
    )
    .map_err(|e| match crate::error::exit_code_of(&e) {
        Exit::LockTimeout => failure(
            Exit::ClaudeTimeout,
            format!(
                "message {id} is still being answered by another process after {} s; \
                 deliver it again later to get that answer",
                wait.as_secs()
            ),
        ),
        _ => e,
    })?;
    let (delivery, parts) = {
        let _lock = state.lock_user(turn.key)?;
        let delivery = stm::find_delivery(state, turn.key, id, turn.message.ts)?;
        let mut parts = context::gather(
            state,
            turn.key,
            turn.sender,
            state.config.context_window() + 1,
        )?;
        parts.messages.retain(|m| m.msg_id.as_deref() != Some(id));
        (delivery, parts)
    };
    let text = match (delivery.reply, over_budget) {
        (Some(reply), _) => reply.text,
        // The first attempt failed or was killed: answer it now, if the
        // budget still allows a call.
        (None, Some(why)) => {
            drop(inflight);
            return refuse_over_budget(turn, &why);
        }
        (None, None) => answer(turn, &parts)?.text,
    };
    print_reply(turn, &text, None, false)?;
    release(inflight);
    Ok(())
}

/// The budget note on stdout (for the chat), the reason on stderr, exit 7.
fn refuse_over_budget(turn: &Turn, why: &str) -> anyhow::Result<()> {
    let budget = &turn.state.config.budget;
    let text = budget.message.as_deref().unwrap_or(BUDGET_MESSAGE);
    print_reply(turn, text, None, false)?;
    Err(failure(Exit::OverBudget, format!("no call made: {why}")))
}

/// Remove a per-message lock; a failure only leaves a file prune sweeps.
fn release(inflight: FileLock) {
    if let Err(e) = inflight.remove() {
        crate::diag::warn(format!("could not remove a message lock: {e:#}"));
    }
}

fn print_reply(
    turn: &Turn,
    text: &str,
    reply: Option<&Reply>,
    compacted: bool,
) -> anyhow::Result<()> {
    if turn.json {
        print_json(&json!({
            "reply": text,
            "user": turn.sender.as_str(),
            "conversation": turn.args.message.conversation.as_ref().map(UserId::as_str),
            "usage": reply.and_then(|r| r.usage.clone()),
            "costUsd": reply.and_then(|r| r.cost_usd),
            "compacted": compacted,
        }))
    } else {
        print_text(text)
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
        .args(["compact", "--user", user.as_str(), "--claude-bin"])
        .arg(&claude.program)
        .arg("--timeout")
        .arg(claude.timeout.as_secs().to_string());
    // compact's own default is compacting.model: pass --model only when
    // it was overridden.
    if let Some(model) = &claude.model
        && state.config.compacting.model.as_ref() != Some(model)
    {
        command.arg("--model").arg(model);
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
    let text = (state.config.ask.system_prompt.clone())
        .unwrap_or_else(|| crate::memory::prompts::CHAT_BASE_PROMPT.to_owned());
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

/// The message, then its attachments as the seed's broker lists them,
/// each copied into claude's working folder: the only files it may read.
fn prompt_with_attachments(message: &Message, sandbox: &mut Sandbox) -> String {
    let mut prompt = message.text.clone();
    if let Some(attachments) = message.attachments.as_ref().filter(|a| !a.is_empty()) {
        prompt.push_str("\n\nAttached files (use Read tool to view):");
        for attachment in attachments {
            prompt.push_str("\n- ");
            match sandbox.stage(std::path::Path::new(&attachment.path)) {
                Ok(copy) => prompt.push_str(&copy.to_string_lossy()),
                Err(e) => {
                    crate::diag::warn(format!("{e:#}; the attachment is left out"));
                    prompt.push_str("(could not be attached)");
                }
            }
            if let Some(name) = &attachment.name {
                prompt.push_str(&format!(" ({name})"));
            }
        }
    }
    prompt
}

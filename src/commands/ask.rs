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

use crate::claude::{Claude, SystemPromptMode};
use crate::cli::{AskArgs, OutputFormat};
use crate::commands::input::{build_message, message_text};
use crate::commands::{Output, chat, claude_runner, print_json, print_text};
use crate::config::CompactionMode;
use crate::layout::UserId;
use crate::memory::compaction;
use crate::memory::context;
use crate::memory::ltm;
use crate::memory::message::{Message, Role};
use crate::memory::stm;
use crate::state::State;

/// What the seed's brokers put between the base prompt and the context.
pub const CONTEXT_HEADING: &str = "\n\n## Recent conversation context:\n";

pub fn run(state: &State, args: &AskArgs, output: Output) -> anyhow::Result<()> {
    let json = output.json || args.output_format == Some(OutputFormat::Json);
    let user = &args.message.user;
    let text = message_text(&args.message)?;

    if let Some(command) = chat::parse(&text) {
        let reply = chat::execute(state, user, &command)?;
        return if json {
            print_json(&json!({"reply": reply, "user": user.as_str(), "command": true}))
        } else {
            print_text(&reply)
        };
    }

    // Everything that can fail on bad input fails before anything is logged.
    let claude = claude_runner(state, &args.claude)?;
    let (mode, base) = base_system_prompt(state, args)?;
    let message = build_message(state, &args.message, Role::User, text, Utc::now())?;

    let parts = {
        let _lock = state.lock_user(user)?;
        if let Some(name) = &args.display_name
            && ltm::ensure_profile_locked(
                state,
                user,
                name,
                message.channel.as_deref(),
                message.ts,
            )?
        {
            ltm::index_profile(state, user)?;
        }
        let parts = context::gather(state, user, state.config.context_window())?;
        stm::append_locked(state, user, std::slice::from_ref(&message))?;
        parts
    };
    let rendered = context::render(&parts, state.config.stm.max_context_chars as usize);

    let reply = claude.call(
        system_prompt(mode, base, &rendered.text),
        &prompt_with_attachments(&message),
    )?;

    let mut answer = Message::new(Role::Assistant, reply.text.clone(), Utc::now());
    answer.channel = message.channel.clone();
    answer.thread_id = message.thread_id.clone();
    answer.group_id = message.group_id.clone();
    if let Some(id) = &message.msg_id {
        answer
            .extra
            .insert("replyTo".into(), Value::from(id.as_str()));
    }
    if let Some(usage) = &reply.usage {
        answer.extra.insert("usage".into(), usage.clone());
    }
    if let Some(cost) = reply.cost_usd {
        answer.extra.insert("costUsd".into(), Value::from(cost));
    }
    {
        let _lock = state.lock_user(user)?;
        stm::append_locked(state, user, std::slice::from_ref(&answer))?;
    }

    let compact_due = !args.no_compact
        && state.config.compacting.enabled
        && compaction::may_need(state, user, false).unwrap_or(false);
    if json {
        print_json(&json!({
            "reply": reply.text,
            "user": user.as_str(),
            "usage": reply.usage,
            "costUsd": reply.cost_usd,
            "compacted": compact_due,
        }))?;
    } else {
        print_text(&reply.text)?;
    }

    // The reply is out; the broker can send it while we tidy up.
    if compact_due {
        let result = match state.config.compacting.mode {
            CompactionMode::Inline => compaction::compact_user(
                state,
                user,
                &|| Ok(claude.clone()),
                compaction::Options::default(),
            )
            .map(|_| ()),
            CompactionMode::Background => spawn_background_compaction(state, user, &claude),
        };
        // The answer was delivered: a failed compaction is retried by the
        // next ask or by maintain, not reported as a failed ask.
        if let Err(e) = result {
            crate::diag::warn(format!(
                "compaction of {user} after the reply failed: {e:#}"
            ));
        }
    }
    Ok(())
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
    if let Some(model) = &claude.model {
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
    match &state.config.ask.system_prompt {
        Some(text) => Ok((SystemPromptMode::Replace, Some(text.clone()))),
        None => Ok((SystemPromptMode::Append, None)),
    }
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

/// The message, then its attachments as the seed's broker lists them.
fn prompt_with_attachments(message: &Message) -> String {
    let mut prompt = message.text.clone();
    if let Some(attachments) = message.attachments.as_ref().filter(|a| !a.is_empty()) {
        prompt.push_str("\n\nAttached files (use Read tool to view):");
        for attachment in attachments {
            prompt.push_str("\n- ");
            prompt.push_str(&attachment.path);
            if let Some(name) = &attachment.name {
                prompt.push_str(&format!(" ({name})"));
            }
        }
    }
    prompt
}

//! `context`: print the memory block `ask` would inject.

use serde::Serialize;

use crate::cli::ContextArgs;
use crate::commands::style::{Style, table};
use crate::commands::{Output, print_json, print_text};
use crate::memory::context::{self, Fate};
use crate::state::State;

pub fn run(state: &State, args: &ContextArgs, output: Output) -> anyhow::Result<()> {
    if args.show_config {
        return show_config(state);
    }
    let user = args.user.as_ref().expect("clap requires --user");
    let key = match &args.conversation {
        Some(key) => crate::memory::migration::conversation_for_reading(state, key)?,
        None => user.clone(),
    };
    super::existing_user(state, &key)?;
    if &key != user {
        super::writable_user(state, user)?;
    }
    let window = args
        .window
        .map_or(state.config.context_window(), |n| n as usize);
    let budget = state.config.stm.max_context_chars as usize;
    let parts = context::gather(state, &key, user, window)?;
    let rendered = context::render(&parts, budget);
    if output.json {
        return print_json(&ContextJson {
            profile: parts.profile.as_deref(),
            summary: parts.summary.as_deref(),
            messages: &parts.messages,
            text: &rendered.text,
            explain: args.explain.then(|| Explained {
                budget_chars: budget,
                used_chars: rendered.text.chars().count(),
                estimated_tokens: context::estimate_tokens(&rendered.text),
                parts: &rendered.parts,
            }),
        });
    }
    if args.explain {
        return print_text(&explain(&rendered, budget, window));
    }
    if parts.is_empty() {
        return Ok(());
    }
    // On a terminal stored text must not drive it; piped, the block is
    // exactly what `ask` would inject (a broker may hand it to claude).
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return print_text(&crate::commands::style::printable(&rendered.text));
    }
    print_text(&rendered.text)
}

/// One row per part: size, estimated tokens, and what the budget did.
fn explain(rendered: &context::Rendered, budget: usize, window: usize) -> String {
    let mut message_number = 0;
    let rows: Vec<Vec<String>> = rendered
        .parts
        .iter()
        .map(|part| {
            let name = if part.kind == "message" {
                message_number += 1;
                format!("message {message_number}")
            } else {
                part.kind.to_owned()
            };
            let why = match part.fate {
                Fate::Kept => String::new(),
                Fate::Cut => format!("cut to {} to fit stm.maxContextChars", part.used_chars),
                Fate::Dropped => "dropped: over stm.maxContextChars (oldest go first)".into(),
            };
            vec![
                name,
                part.chars.to_string(),
                part.used_chars.to_string(),
                part.used_tokens.to_string(),
                format!("{:?}", part.fate).to_lowercase(),
                why,
            ]
        })
        .collect();
    let used = rendered.text.chars().count();
    format!(
        "{}\n\ntotal: {used} of {budget} characters (stm.maxContextChars), ~{} tokens; \
         window: the last {window} messages (stm.contextWindow)",
        table(
            Style::detect(),
            &["PART", "CHARS", "USED", "~TOKENS", "FATE", "WHY"],
            &rows
        ),
        context::estimate_tokens(&rendered.text)
    )
}

/// The effective configuration, and which state dir it belongs to: the
/// path, where it came from, and whether anybody has written it yet.
fn show_config(state: &State) -> anyhow::Result<()> {
    let origin = &state.origin;
    let value = ShownConfig {
        state_dir: ShownStateDir {
            path: &origin.path,
            source: origin.source,
            exists: origin.in_use(),
        },
        config: &state.config,
    };
    print_text(&serde_json::to_string_pretty(&value)?)
}

/// `context --json`: the parts, the block, and with `--explain` what the
/// size budget did.
#[derive(Serialize)]
struct ContextJson<'a> {
    profile: Option<&'a str>,
    summary: Option<&'a str>,
    messages: &'a [crate::memory::message::Message],
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<Explained<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Explained<'a> {
    budget_chars: usize,
    used_chars: usize,
    estimated_tokens: usize,
    parts: &'a [context::PartReport],
}

/// `context --show-config`: the effective configuration and its state dir.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShownConfig<'a> {
    state_dir: ShownStateDir<'a>,
    config: &'a crate::config::Config,
}

#[derive(Serialize)]
struct ShownStateDir<'a> {
    path: &'a std::path::Path,
    source: crate::state_dir::StateDirSource,
    exists: bool,
}

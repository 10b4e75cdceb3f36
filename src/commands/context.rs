//! `context`: print the memory block `ask` would inject.

use serde_json::json;

use crate::cli::ContextArgs;
use crate::commands::{Output, print_json, print_text};
use crate::memory::context;
use crate::state::State;

pub fn run(state: &State, args: &ContextArgs, output: Output) -> anyhow::Result<()> {
    if args.show_config {
        return print_text(&serde_json::to_string_pretty(&state.config)?);
    }
    let user = args.user.as_ref().expect("clap requires --user");
    let window = args
        .window
        .map_or(state.config.context_window(), |n| n as usize);
    let parts = context::gather(state, user, window)?;
    let rendered = context::render(&parts, state.config.stm.max_context_chars as usize);
    if output.json {
        return print_json(&json!({
            "profile": parts.profile,
            "summary": parts.summary,
            "messages": parts.messages,
            "text": rendered.text,
        }));
    }
    if parts.is_empty() {
        return Ok(());
    }
    print_text(&rendered.text)
}

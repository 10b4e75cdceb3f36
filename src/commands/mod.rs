//! One module per subcommand, each with its `run`. This is the only layer
//! that prints to stdout.

pub mod append;
pub mod ask;
pub mod chat;
pub mod compact;
pub mod complete;
pub mod context;
pub mod doctor;
pub mod input;
pub mod maintain;
pub mod mcp;
pub mod progress;
pub mod search;
pub mod session;
pub mod style;

use std::path::PathBuf;
use std::time::Duration;

use crate::claude::{self, Claude};

use crate::cli::{ClaudeArgs, Cli, Command};
use crate::error::usage;
use crate::layout::Layout;
use crate::state::State;

/// Options every command sees, resolved from the global flags.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let output = Output { json: cli.json };
    let state = || open_state(&cli);
    match &cli.command {
        Command::Append(args) => append::run(&state()?, args, output),
        Command::Context(args) => context::run(&state()?, args, output),
        Command::Ask(args) => ask::run(&state()?, args, output),
        Command::Compact(args) => compact::run(&state()?, args, output),
        Command::Maintain(args) => maintain::run(&state()?, args, output),
        Command::Session(args) => session::run(&state()?, args, output),
        // doctor reports a missing state dir or a broken config as a check.
        Command::Doctor(args) => doctor::run(state_dir(&cli), cli.channel.clone(), args, output),
        Command::Mcp(args) => mcp::run(&state()?, args),
    }
}

/// `--state-dir` (or its env var) wins; else `--channel` names the seed's
/// default folder; neither is a usage error.
fn state_dir(cli: &Cli) -> anyhow::Result<PathBuf> {
    match (&cli.state_dir, &cli.channel) {
        (Some(dir), _) if dir.as_os_str().is_empty() => Err(usage(
            "--state-dir (or CLAUDE_SESSION_STATE_DIR) is empty; give a folder",
        )),
        (Some(dir), _) => Ok(dir.clone()),
        (None, Some(channel)) => Ok(Layout::channel_state_dir(channel)),
        (None, None) => Err(usage(
            "no state dir given: pass --state-dir DIR (or set CLAUDE_SESSION_STATE_DIR), \
             or --channel NAME for ./.claude/channels/NAME",
        )),
    }
}

fn open_state(cli: &Cli) -> anyhow::Result<State> {
    State::open(state_dir(cli)?, cli.channel.clone())
}

/// What a claude call is for: background work has its own model setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Reply,
    Compaction,
    Summary,
}

/// More variables claude may see, on top of `ask.env` (names or
/// `PREFIX*`, comma-separated): for a broker that cannot edit the config.
pub const CLAUDE_ENV_VAR: &str = "CLAUDE_SESSION_CLAUDE_ENV";

/// Find claude and settle its options: flags first, then config.
pub fn claude_runner(state: &State, args: &ClaudeArgs, purpose: Purpose) -> anyhow::Result<Claude> {
    let config = &state.config;
    let model = args.model.clone().or_else(|| match purpose {
        Purpose::Reply => None,
        Purpose::Compaction => config.compacting.model.clone(),
        Purpose::Summary => config.summaries.model.clone(),
    });
    let mut env = config.ask.env.clone();
    if let Some(extra) = std::env::var_os(CLAUDE_ENV_VAR) {
        env.extend(
            extra
                .to_string_lossy()
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty() && *n != "*")
                .map(str::to_owned),
        );
    }
    Ok(Claude {
        program: claude::find(args.claude_bin.as_deref())?,
        model: model.filter(|m| !m.is_empty()),
        extra_args: args.claude_args.clone(),
        timeout: Duration::from_secs(args.timeout.unwrap_or(config.ask.timeout_seconds)),
        temp_dir: state.layout.temp_dir(),
        tools: config.ask.tools.clone(),
        allowed_tools: config.ask.allowed_tools.clone(),
        max_retries: config.ask.max_retries,
        env,
        mcp_config: None,
    })
}

/// Print a value as one line of JSON on stdout.
pub fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Print text on stdout, ending it with a newline.
pub fn print_text(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

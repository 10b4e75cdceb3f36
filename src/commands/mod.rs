//! The command layer: one module per subcommand, each with its `run`
//! (`append`, `ask`, `compact`, `context`, `doctor`, `init`, `maintain`, `mcp`,
//! `session`, and `search` for `session search`), and beside them what
//! they use: the in-chat `/session` commands (`chat`), message input
//! (`input`), what an attached file becomes (`attachments`) and
//! presentation (`style`, `reply_stream`). This file dispatches, opens the
//! state dir, checks user ids, finds claude and prints JSON and text.
//!
//! A command is thin: arguments in, one `memory` (or `state`) call per
//! step, the answer rendered. The only layer that prints to stdout; it
//! never touches `store` (files, locks, bytes) itself, and a test below
//! keeps it so. The rules of memory are `memory`'s.

pub mod append;
pub mod ask;
pub mod attachments;
pub mod chat;
pub mod compact;
pub mod context;
pub mod doctor;
pub mod init;
pub mod input;
pub mod maintain;
pub mod mcp;
pub mod reply_stream;
pub mod search;
pub mod session;
pub mod style;

use std::time::Duration;

use crate::claude::{self, Claude};

use crate::cli::{ClaudeArgs, Cli, Command};
use crate::error::{Exit, failure};
use crate::layout::{MemoryKey, MemoryOf, UserId};
use crate::memory::user_data;
use crate::state::State;
use crate::state::dir::{self as state_dir, EffectiveStateDir};

/// Options every command sees, resolved from the global flags.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let output = Output { json: cli.json };
    // `ask` and `append` create the default state dir or `--channel`'s
    // folder on first use, as brokers need, and so do an admin's `profile
    // --set` and `topic set` (which write what they were given); an
    // explicit `--state-dir` must already be one (`init` makes it), and
    // every other command refuses a state dir nobody has written.
    let state = |creates: bool| open_state(&cli, creates);
    match &cli.command {
        Command::Append(args) => append::run(&state(true)?, args, output),
        Command::Ask(args) => ask::run(&state(true)?, args, output),
        Command::Context(args) => context::run(&state(args.show_config)?, args, output),
        Command::Compact(args) => compact::run(&state(false)?, args, output),
        Command::Maintain(args) => maintain::run(&state(false)?, args, output),
        Command::Session(args) => session::run(&state(session::writes(args))?, args, output),
        // doctor reports a missing state dir or a broken config as a check.
        Command::Doctor(args) => {
            doctor::run(effective_state_dir(&cli), cli.channel.clone(), args, output)
        }
        Command::Mcp(args) => mcp::run(&state(false)?, args),
        Command::Init(args) => init::run(&cli, args, output),
    }
}

/// The effective state dir of these flags and where it came from (for
/// `doctor` and `context --show-config`).
pub fn effective_state_dir(cli: &Cli) -> anyhow::Result<EffectiveStateDir> {
    state_dir::resolve_from_env(cli.state_dir.as_deref(), cli.channel.as_ref())
}

fn open_state(cli: &Cli, may_be_new: bool) -> anyhow::Result<State> {
    let dir = effective_state_dir(cli)?;
    let may_create = may_be_new && dir.created_on_first_use();
    if !may_create && !dir.in_use() {
        // No seed folder can be there: an id outside the rules is the
        // first thing to report.
        for user in cli.command.user_ids() {
            user.require_id_rules()?;
        }
        dir.require_in_use()?;
    }
    State::open(dir, cli.channel.clone())
}

/// A read or admin command's `--user` (or `--conversation`): it must have
/// something stored (exit 9 otherwise, before any lock file is made). An
/// id outside the id rules reaches a seed folder of that exact name, and is
/// a usage error when there is none.
pub fn existing_user(state: &State, key: &MemoryKey) -> anyhow::Result<()> {
    if user_data::has_data(state, key) {
        return Ok(());
    }
    let what = match key.of() {
        MemoryOf::Person(person) => {
            person.require_id_rules()?;
            format!("user {:?}", person.as_str())
        }
        MemoryOf::Conversation(conversation) => format!("conversation {:?}", conversation.as_str()),
    };
    Err(failure(
        Exit::UnknownUser,
        format!(
            "no {what} in {}: nothing is stored under that id; check the id \
             (`claude-session session users` lists the known ones) and the state dir",
            state.layout.state_dir().display()
        ),
    ))
}

/// An id a command may create data for (`ask`, `append`, `profile --set`):
/// it keeps the id rules, unless it names a seed folder already there.
pub fn writable_user(state: &State, user: &UserId) -> anyhow::Result<()> {
    if user.follows_id_rules() || user_data::has_data(state, &MemoryKey::person(user)) {
        return Ok(());
    }
    user.require_id_rules()
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

/// More paths a confined claude may write, on top of `ask.writablePaths`
/// (comma-separated, absolute): for a broker that cannot edit the config.
pub const CLAUDE_WRITABLE_VAR: &str = "CLAUDE_SESSION_CLAUDE_WRITABLE";

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
    let mut writable = config.ask.writable_paths.clone();
    if let Some(extra) = std::env::var_os(CLAUDE_WRITABLE_VAR) {
        writable.extend(
            std::env::split_paths(&extra.to_string_lossy().replace(',', ":"))
                .filter(|p| p.is_absolute()),
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
        confinement: config.ask.confinement,
        readable: config.ask.readable_paths.clone(),
        writable,
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

#[cfg(test)]
mod tests {
    /// Commands are thin: they call `memory` (and `state`) for anything on
    /// disk, never `store` directly. Read from the sources, so a new
    /// command file is checked too.
    #[test]
    fn no_command_reaches_into_store() {
        fn sources(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).expect("src/commands is readable") {
                let path = entry.expect("a readable entry").path();
                if path.is_dir() {
                    sources(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    found.push(path);
                }
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/commands");
        let mut files = Vec::new();
        sources(&dir, &mut files);
        assert!(files.len() > 10, "found the command files: {files:?}");
        // Built here, so this test's own text does not match.
        let path = ["store", "::"].concat();
        let group = ["crate", "::{"].concat();
        let mut offending = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("a readable source");
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                let names_store =
                    code.contains(&path) || (code.contains(&group) && code.contains("store"));
                if names_store {
                    offending.push(format!(
                        "{}:{}: {}",
                        file.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
        assert!(
            offending.is_empty(),
            "commands/ must go through memory (or state), not the store module:\n{}",
            offending.join("\n")
        );
    }
}

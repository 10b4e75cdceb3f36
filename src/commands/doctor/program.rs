//! The checks of claude itself: the program and its version, the
//! credential it will send, what each enabled tool exposes, whether it
//! runs confined, and (`--live`) one real call.

use super::{Check, Setup, Status};
use crate::claude::confine::{self, Support};
use crate::claude::{self, KNOWN_GOOD_VERSION, NEWEST_TESTED_VERSION, TESTED_VERSIONS};
use crate::commands::{Purpose, claude_runner};
use crate::error::{Exit, exit_code_of};
use crate::layout::Layout;
use crate::state::State;
use std::time::{Duration, Instant};

pub(super) fn claude_found(setup: &Setup) -> Check {
    const NAME: &str = "claude";
    let program = match claude::find(setup.args.claude.claude_bin.as_deref()) {
        Ok(program) => program,
        Err(e) => {
            return Check::fail(
                NAME,
                Exit::ClaudeNotFound,
                format!("{e:#}"),
                format!(
                    "npm install -g @anthropic-ai/claude-code@{KNOWN_GOOD_VERSION}, or set CLAUDE_BIN"
                ),
            );
        }
    };
    let version = match version_of(&program) {
        Ok(version) => version,
        Err(why) => {
            return Check::fail(
                NAME,
                Exit::ClaudeFailed,
                format!("{} --version failed: {why}", program.display()),
                "reinstall Claude Code, or point CLAUDE_BIN at a working claude",
            );
        }
    };
    let version: String = version
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(60)
        .collect();
    let found = version.split_whitespace().next().unwrap_or("").to_owned();
    let detail = format!("{} ({version})", program.display());
    let tested = TESTED_VERSIONS.join(" and ");
    let install = format!(
        "npm install -g @anthropic-ai/claude-code@{NEWEST_TESTED_VERSION} (node 22 or newer) \
         or @{KNOWN_GOOD_VERSION} (node 20)"
    );
    match supported(&found) {
        Standing::Tested => Check::ok(NAME, format!("{detail}; a tested release")),
        Standing::InRange => Check::ok(
            NAME,
            format!("{detail}; within the supported range (tested: {tested})"),
        ),
        Standing::TooOld => Check::warn(
            NAME,
            format!("{detail}; older than the oldest supported, {KNOWN_GOOD_VERSION}"),
            install,
        ),
        Standing::Newer => Check::warn(
            NAME,
            format!("{detail}; newer than the newest tested, {NEWEST_TESTED_VERSION}"),
            format!("check it with `doctor --live`, or {install}"),
        ),
        Standing::Unknown => Check::warn(
            NAME,
            format!("{detail}; not a Claude Code version (tested: {tested})"),
            format!("point CLAUDE_BIN at Claude Code: {install}"),
        ),
    }
}

/// Where a `claude --version` stands against the tested releases.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Standing {
    Tested,
    InRange,
    TooOld,
    Newer,
    Unknown,
}

pub(super) fn supported(version: &str) -> Standing {
    let parse = |v: &str| -> Option<Vec<u64>> {
        let parts: Option<Vec<u64>> = v.split('.').map(|p| p.parse().ok()).collect();
        parts.filter(|p| p.len() == 3)
    };
    let (Some(found), Some(oldest), Some(newest)) = (
        parse(version),
        parse(KNOWN_GOOD_VERSION),
        parse(NEWEST_TESTED_VERSION),
    ) else {
        return Standing::Unknown;
    };
    if TESTED_VERSIONS.contains(&version) {
        Standing::Tested
    } else if found < oldest {
        Standing::TooOld
    } else if found > newest {
        Standing::Newer
    } else {
        Standing::InRange
    }
}

/// `claude --version`, with a deadline and the same private HOME as a
/// call, run by the one runner of children ([`crate::claude::supervise`]).
pub(super) fn version_of(program: &std::path::Path) -> Result<String, String> {
    use crate::claude::supervise::{Program, RunError, run_with_timeout};
    use std::ffi::OsString;
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let env = [
        (
            OsString::from("PATH"),
            std::env::var_os("PATH").unwrap_or_default(),
        ),
        (OsString::from("HOME"), home.path().into()),
    ];
    let program = Program {
        path: program,
        args: &[OsString::from("--version")],
        env: &env,
        cwd: home.path(),
        landlock: None,
    };
    match run_with_timeout(&program, b"", Duration::from_secs(30), None) {
        Ok(out) if out.status.success() => {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        }
        Ok(out) => Err(format!("it {}", out.status)),
        Err(RunError::TimedOut) => Err("no answer within 30 s".into()),
        Err(RunError::Spawn(e) | RunError::Wait(e)) => Err(e.to_string()),
    }
}

pub(super) fn authentication(setup: &Setup) -> Check {
    const NAME: &str = "auth";
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let found: Vec<&str> = [
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_AUTH_TOKEN",
    ]
    .into_iter()
    .filter(|name| set(name))
    .collect();
    if !found.is_empty() {
        return Check::ok(NAME, credential_in_use(&found));
    }
    let passes_config_dir = setup
        .config
        .as_ref()
        .is_ok_and(|c| c.ask.env.iter().any(|n| n == "CLAUDE_CONFIG_DIR"))
        && set("CLAUDE_CONFIG_DIR");
    if passes_config_dir {
        return Check::warn(
            NAME,
            "no key or token in the environment; claude gets CLAUDE_CONFIG_DIR (ask.env) and may \
             find a login there",
            "prefer ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN (`claude setup-token`)",
        );
    }
    Check::fail(
        NAME,
        Exit::ClaudeFailed,
        "neither ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN is set; claude runs with a private \
         HOME, so a `claude login` in ~/.claude is not seen",
        "export ANTHROPIC_API_KEY=… (console.anthropic.com) or CLAUDE_CODE_OAUTH_TOKEN=… \
         (from `claude setup-token`, for a subscription) in the broker's environment",
    )
}

/// Which of the set credentials claude sends: with several set, only
/// one reaches the API (the real CLI's tests pin this), so an operator
/// who meant the subscription token learns that the key is billed.
pub(super) fn credential_in_use(found: &[&str]) -> String {
    let has = |name| found.contains(&name);
    let used = if has("ANTHROPIC_AUTH_TOKEN") && has("ANTHROPIC_API_KEY") {
        "both ANTHROPIC_API_KEY (x-api-key) and ANTHROPIC_AUTH_TOKEN (a bearer token)"
    } else if has("ANTHROPIC_AUTH_TOKEN") {
        "ANTHROPIC_AUTH_TOKEN (as a bearer token)"
    } else if has("ANTHROPIC_API_KEY") {
        "ANTHROPIC_API_KEY"
    } else {
        "CLAUDE_CODE_OAUTH_TOKEN (the subscription)"
    };
    if found.len() == 1 {
        format!("{} set; claude uses it", found[0])
    } else {
        let only = if used.starts_with("both") {
            ""
        } else {
            "only "
        };
        format!("{} set; claude sends {only}{used}", found.join(", "))
    }
}

/// One row per enabled tool: what a chat user can make claude do with it.
pub(super) fn tools(setup: &Setup) -> Vec<Check> {
    const NAME: &str = "tool";
    let Ok(config) = &setup.config else {
        return Vec::new();
    };
    let confined =
        confine::decide(config.ask.confinement, confine::support()) == confine::Decision::Confine;
    config
        .ask
        .tools
        .iter()
        .map(|tool| {
            Check::warn(
                NAME,
                format!("{tool}: {}", exposure(tool, confined)),
                "enable a tool only if the bot needs it; narrow it in ask.allowedTools \
                 (\"Bash(date)\") and keep ask.confinement on",
            )
        })
        .collect()
}

/// What enabling a tool exposes to whoever chats with the bot.
pub fn exposure(tool: &str, confined: bool) -> String {
    let files = if confined {
        "claude's own folder, its install and the system's files (confined: not the state dir, \
         the broker's tree or $HOME)"
    } else {
        "every file the broker's user can read (unconfined)"
    };
    match tool {
        "Bash" => format!(
            "runs commands as the broker's user, sees every process's argv (ps) and the \
             network, and reads {files}"
        ),
        "Read" => format!("reads {files}"),
        "Grep" | "Glob" => format!("lists and searches the names and contents of {files}"),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            format!("writes files; reads {files}")
        }
        "WebFetch" | "WebSearch" => {
            "makes requests the model chooses (a chat user can steer them), and can carry \
             what it read out"
                .to_owned()
        }
        "Task" | "Agent" => "starts sub-agents with the same tools".to_owned(),
        _ => {
            "not known to this tool; see Claude Code's documentation for what it reaches".to_owned()
        }
    }
}

/// Whether claude runs confined: active, available but off, or missing.
pub(super) fn confinement(setup: &Setup) -> Check {
    let mode = setup
        .config
        .as_ref()
        .map(|c| c.ask.confinement)
        .unwrap_or_default();
    confinement_check(mode, confine::support())
}

pub(super) fn confinement_check(mode: confine::Mode, support: Support) -> Check {
    const NAME: &str = "confinement";
    let kernel = match support {
        Support::Available(abi) => format!("Landlock ABI {abi}"),
        Support::NotEnabled => "Landlock built in but not enabled at boot".to_owned(),
        Support::Missing => "no Landlock in this kernel".to_owned(),
    };
    match confine::decide(mode, support) {
        confine::Decision::Confine => Check::ok(
            NAME,
            format!(
                "active ({kernel}): claude reads only its install, the system's files and its \
                 own folder"
            ),
        ),
        confine::Decision::RunUnconfined if mode == confine::Mode::Off => Check::warn(
            NAME,
            format!("off (ask.confinement), {kernel}: claude can read what the broker's user can"),
            "set ask.confinement to \"best-effort\" (the default) or \"required\"",
        ),
        confine::Decision::RunUnconfined => Check::warn(
            NAME,
            format!("unavailable ({kernel}): claude runs unconfined"),
            "run on Linux 5.13 or newer with Landlock enabled (lsm=…,landlock); until then keep \
             tools off",
        ),
        confine::Decision::Refuse => Check::fail(
            NAME,
            Exit::ClaudeNotFound,
            format!("required (ask.confinement) but unavailable: {kernel}; every ask will fail"),
            "enable Landlock (lsm=…,landlock on the kernel command line), or set \
             ask.confinement to \"best-effort\"",
        ),
    }
}

pub(super) fn live_call(setup: &Setup) -> Check {
    const NAME: &str = "live";
    if !setup.args.live {
        return Check {
            status: Status::Skipped,
            ..Check::ok(NAME, "one real call with --live")
        };
    }
    let (Some(origin), Ok(config)) = (&setup.origin, &setup.config) else {
        return Check {
            status: Status::Skipped,
            ..Check::ok(NAME, "needs a state dir and a valid config")
        };
    };
    let state = State {
        layout: Layout::new(origin.path.clone()),
        config: config.clone(),
        channel: setup.channel.clone(),
        origin: origin.clone(),
        clock: crate::state::Clock::System,
    };
    // The prompt file goes to a folder of our own: doctor creates nothing
    // in the state dir.
    let scratch = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            return Check::fail(
                NAME,
                Exit::State,
                format!("no temporary folder: {e}"),
                "check TMPDIR",
            );
        }
    };
    let result =
        claude_runner(&state, &setup.args.claude, Purpose::Reply).and_then(|mut claude| {
            claude.temp_dir = scratch.path().to_owned();
            let started = Instant::now();
            claude
                .call(
                    Some((
                        claude::SystemPromptMode::Replace,
                        "You are a health check. Answer with the single word: ok".into(),
                    )),
                    "ok?",
                )
                .map(|reply| (reply, started.elapsed()))
        });
    match result {
        Ok((reply, took)) => Check::ok(
            NAME,
            format!(
                "answered {:?} in {:.1} s{}",
                reply.text.chars().take(40).collect::<String>(),
                took.as_secs_f64(),
                reply
                    .cost_usd
                    .map_or(String::new(), |c| format!(", ${c:.4}"))
            ),
        ),
        Err(e) => {
            let exit = exit_code_of(&e);
            Check::fail(NAME, exit, format!("{e:#}"), live_fix(exit))
        }
    }
}

/// What to do about a failed live call, by what failed.
pub(super) fn live_fix(exit: Exit) -> String {
    let again = "then run doctor --live again";
    match exit {
        Exit::ClaudeNotFound => format!(
            "npm install -g @anthropic-ai/claude-code@{NEWEST_TESTED_VERSION}, or set CLAUDE_BIN \
             to your claude; {again}"
        ),
        Exit::ClaudeFailed => format!(
            "check the key or token (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN from `claude \
             setup-token`) and the model (--model); {again}"
        ),
        Exit::ClaudeUnavailable => format!(
            "a rate limit, an overload or no route to the API: check the network and the proxy \
             variables (HTTPS_PROXY), wait a minute; {again}"
        ),
        Exit::ClaudeTimeout => {
            format!("raise ask.timeoutSeconds in config.json, or check the network; {again}")
        }
        Exit::OverBudget => format!(
            "raise the budget.* caps in config.json, or wait for the next day or month; {again}"
        ),
        Exit::LockTimeout | Exit::State => {
            format!("check that TMPDIR and the state dir are writable by this user; {again}")
        }
        _ => format!(
            "check doctor's flags (--model, --claude-bin) and the ask.* settings in \
             config.json; {again}"
        ),
    }
}

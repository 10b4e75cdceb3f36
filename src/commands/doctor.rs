//! `doctor`: everything a broker needs before going live, checked one by
//! one, each saying ok or what to fix.
//!
//! A check is a function in [`CHECKS`]: it gets the [`Setup`] and returns
//! a [`Check`]. Checks are independent (one failing does not stop the
//! others), so adding one is adding a function and a line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::claude::confine::{self, Support};
use crate::claude::{self, KNOWN_GOOD_VERSION, NEWEST_TESTED_VERSION, TESTED_VERSIONS};
use crate::cli::DoctorArgs;
use crate::commands::{Output, Purpose, claude_runner, print_json, print_text};
use crate::config::Config;
use crate::error::{Exit, exit_code_of, failure};
use crate::layout::{ChannelName, Layout};
use crate::state::State;
use crate::state_dir::EffectiveStateDir;

/// What the checks look at, resolved once.
pub struct Setup<'a> {
    pub state_dir: Result<PathBuf, String>,
    /// Which flag, variable or default chose the state dir.
    pub origin: Option<EffectiveStateDir>,
    pub channel: Option<ChannelName>,
    pub args: &'a DoctorArgs,
    /// The config, when it loads.
    pub config: Result<Config, String>,
    /// Its unknown keys, one sentence each (with the key probably meant).
    pub unknown_keys: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Works, but not as recommended.
    Warn,
    Fail,
    /// Not run (e.g. the live call without --live).
    Skipped,
}

/// `doctor --json`: whether every check passed, and each check.
#[derive(Debug, Serialize)]
struct Report<'a> {
    ok: bool,
    checks: &'a [Check],
}

/// One check's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    /// What to do about a warning or a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    #[serde(skip)]
    pub exit: Exit,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Self {
        Self {
            name,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
            exit: Exit::Success,
        }
    }

    fn warn(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            status: Status::Warn,
            fix: Some(fix.into()),
            ..Self::ok(name, detail)
        }
    }

    fn fail(
        name: &'static str,
        exit: Exit,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            status: Status::Fail,
            fix: Some(fix.into()),
            exit,
            ..Self::ok(name, detail)
        }
    }
}

type CheckFn = fn(&Setup) -> Vec<Check>;

/// Every check, in the order shown; most give one row, `tools` one per
/// enabled tool.
const CHECKS: &[CheckFn] = &[
    |s| vec![claude_found(s)],
    |s| vec![authentication(s)],
    |s| vec![state_dir(s)],
    |s| vec![file_system(s)],
    |s| vec![config(s)],
    tools,
    |s| vec![confinement(s)],
    |s| vec![recent_failures(s)],
    |s| vec![live_call(s)],
];

pub fn run(
    state_dir: anyhow::Result<EffectiveStateDir>,
    channel: Option<ChannelName>,
    args: &DoctorArgs,
    output: Output,
) -> anyhow::Result<()> {
    let origin = state_dir.as_ref().ok().cloned();
    let state_dir = state_dir.map(|dir| dir.path).map_err(|e| format!("{e:#}"));
    // Unknown keys are the config check's to report, not warnings.
    let (config, unknown_keys) = match &state_dir {
        Ok(dir) => match Config::load_reporting(&Layout::new(dir.clone()).config_file()) {
            Ok((config, unknown)) => (Ok(config), unknown),
            Err(e) => (Err(format!("{e:#}")), Vec::new()),
        },
        Err(_) => (Ok(Config::default()), Vec::new()),
    };
    let setup = Setup {
        state_dir,
        origin,
        channel,
        args,
        config,
        unknown_keys,
    };
    let checks: Vec<Check> = CHECKS.iter().flat_map(|check| check(&setup)).collect();
    let failed = checks.iter().find(|c| c.status == Status::Fail);
    if output.json {
        print_json(&Report {
            ok: failed.is_none(),
            checks: &checks,
        })?;
    } else {
        let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
        let mut lines = Vec::new();
        for check in &checks {
            let tag = match check.status {
                Status::Ok => "ok",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
                Status::Skipped => "skip",
            };
            lines.push(format!("{tag:<5} {:<width$} {}", check.name, check.detail));
            if let Some(fix) = &check.fix {
                lines.push(format!("      {:<width$} fix: {fix}", ""));
            }
        }
        print_text(&lines.join("\n"))?;
    }
    match failed {
        Some(check) => Err(failure(
            check.exit,
            format!("doctor: the {} check failed; see above", check.name),
        )),
        None => Ok(()),
    }
}

fn claude_found(setup: &Setup) -> Check {
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
enum Standing {
    Tested,
    InRange,
    TooOld,
    Newer,
    Unknown,
}

fn supported(version: &str) -> Standing {
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
/// call, run by the one runner of children ([`crate::supervise`]).
fn version_of(program: &std::path::Path) -> Result<String, String> {
    use crate::supervise::{Program, RunError, run_with_timeout};
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

fn authentication(setup: &Setup) -> Check {
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
fn credential_in_use(found: &[&str]) -> String {
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
fn tools(setup: &Setup) -> Vec<Check> {
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
fn confinement(setup: &Setup) -> Check {
    let mode = setup
        .config
        .as_ref()
        .map(|c| c.ask.confinement)
        .unwrap_or_default();
    confinement_check(mode, confine::support())
}

fn confinement_check(mode: confine::Mode, support: Support) -> Check {
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

/// The state dir check, saying which flag, variable or default chose it.
fn state_dir(setup: &Setup) -> Check {
    let mut check = state_dir_usable(setup);
    if let Some(origin) = &setup.origin {
        check.detail = format!(
            "{} (from {}): {}",
            origin.path.display(),
            origin.source,
            check.detail
        );
    }
    check
}

/// The file system under the state dir: a shared one the tool was not
/// proven on gets a warning (README, "Shared file systems").
fn file_system(setup: &Setup) -> Check {
    const NAME: &str = "file-system";
    let Ok(dir) = &setup.state_dir else {
        return Check {
            status: Status::Skipped,
            ..Check::ok(NAME, "needs a state dir")
        };
    };
    match crate::state_dir::file_system(dir) {
        Ok(fs) => match fs.warning() {
            Some(warning) => Check::warn(
                NAME,
                warning,
                "run tests/shared-fs/suite.py against two mounts of it before going live",
            ),
            None if fs.shared => Check::ok(NAME, format!("{} (shared, tested)", fs.name)),
            None => Check::ok(NAME, format!("{} (local)", fs.name)),
        },
        Err(e) => Check::warn(
            NAME,
            format!(
                "could not tell the file system under {}: {e}",
                dir.display()
            ),
            "check that the state dir's folder is readable",
        ),
    }
}

fn state_dir_usable(setup: &Setup) -> Check {
    const NAME: &str = "state-dir";
    let dir = match &setup.state_dir {
        Ok(dir) => dir,
        Err(e) => {
            return Check::fail(
                NAME,
                Exit::Usage,
                e.clone(),
                "pass --state-dir DIR or --channel NAME",
            );
        }
    };
    let layout = Layout::new(dir.clone());
    let sessions = layout.sessions_dir();
    let mode = match crate::state_dir::folder_mode(sessions) {
        Ok(mode) => mode,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // An explicit state dir is never created on first use (a
            // vanished mount must not be filled): it must be made once.
            if setup
                .origin
                .as_ref()
                .is_some_and(|o| !o.created_on_first_use())
            {
                return Check::fail(
                    NAME,
                    Exit::State,
                    format!(
                        "{} does not exist: this is no state dir",
                        sessions.display()
                    ),
                    format!(
                        "if its file system should be mounted there, mount it; a new state dir \
                         is made once with `claude-session init {}`",
                        dir.display()
                    ),
                );
            }
            return Check::warn(
                NAME,
                format!("{} does not exist yet", sessions.display()),
                "the first append or ask creates it (0700); check that its parent is writable",
            );
        }
        Err(e) => {
            return Check::fail(
                NAME,
                Exit::State,
                format!("could not read {}: {e}", sessions.display()),
                "check the path and its permissions",
            );
        }
    };
    if mode & 0o077 != 0 {
        return Check::fail(
            NAME,
            Exit::State,
            format!(
                "{} has mode {mode:03o}: other users can reach chat logs",
                sessions.display()
            ),
            format!("chmod 700 {}", sessions.display()),
        );
    }
    match crate::state_dir::probe_write(sessions) {
        Ok(file_mode) => Check::ok(
            NAME,
            format!(
                "{} writable, mode {mode:03o} (files {file_mode:03o})",
                sessions.display()
            ),
        ),
        Err(e) => Check::fail(
            NAME,
            Exit::State,
            format!("cannot write in {}: {e}", sessions.display()),
            "run as the user that owns it, or fix its permissions",
        ),
    }
}

fn config(setup: &Setup) -> Check {
    const NAME: &str = "config";
    match (&setup.state_dir, &setup.config) {
        (Err(_), _) => Check {
            status: Status::Skipped,
            ..Check::ok(NAME, "no state dir, so no config.json to check")
        },
        (Ok(dir), Err(e)) => {
            let path = Layout::new(dir.clone()).config_file();
            Check::fail(
                NAME,
                Exit::Usage,
                e.clone(),
                format!(
                    "correct that key or line in {} (`claude-session context --show-config` \
                     prints the settings once it loads), or move the file aside to run on the \
                     defaults",
                    path.display()
                ),
            )
        }
        (Ok(dir), Ok(_)) if !setup.unknown_keys.is_empty() => {
            let path = Layout::new(dir.clone()).config_file();
            Check::warn(
                NAME,
                setup.unknown_keys.join("; "),
                format!(
                    "rename each key in {} to the one it meant, or remove it; until then its \
                     default is used",
                    path.display()
                ),
            )
        }
        (Ok(dir), Ok(config)) => {
            let path = Layout::new(dir.clone()).config_file();
            let tools = if config.ask.tools.is_empty() {
                "no tools".to_owned()
            } else {
                format!("tools {}", config.ask.tools.join(","))
            };
            // A bare tool name allows that tool everywhere (`Read` then
            // reads any file of the host, not only claude's folder).
            let open: Vec<&str> = config
                .ask
                .allowed_tools
                .iter()
                .filter(|rule| !rule.contains('('))
                .map(String::as_str)
                .collect();
            if !open.is_empty() {
                return Check::warn(
                    NAME,
                    format!(
                        "ask.allowedTools allows {} without a pattern: a chat user can make \
                         claude use it on anything the broker's user can reach",
                        open.join(", ")
                    ),
                    "remove them (ask.tools alone lets Read read claude's own folder) or narrow \
                     them, like \"Bash(date)\"",
                );
            }
            let what = if path.exists() {
                "valid"
            } else {
                "absent, defaults used"
            };
            Check::ok(NAME, format!("{} {what}; {tools}", path.display()))
        }
    }
}

fn live_call(setup: &Setup) -> Check {
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

/// What to do about a failure of background work, by its exit code.
fn failure_fix(exit: i32) -> String {
    match Exit::from_code(exit) {
        Some(
            exit @ (Exit::ClaudeNotFound
            | Exit::ClaudeFailed
            | Exit::ClaudeUnavailable
            | Exit::ClaudeTimeout
            | Exit::OverBudget),
        ) => live_fix(exit),
        Some(Exit::Usage) => "correct the config value or id it names".to_owned(),
        Some(Exit::LockTimeout) => {
            "another process held a lock too long: check for a stuck claude-session, or raise \
             durability.lockTimeoutMs"
                .to_owned()
        }
        _ => "check that the state dir's file system is mounted, writable and not full".to_owned(),
    }
}

/// What to do about a failed live call, by what failed.
fn live_fix(exit: Exit) -> String {
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

/// Failures of background work in the last day (the failure log).
fn recent_failures(setup: &Setup) -> Check {
    const NAME: &str = "background";
    let Ok(dir) = &setup.state_dir else {
        return Check {
            status: Status::Skipped,
            ..Check::ok(NAME, "needs a state dir")
        };
    };
    let layout = Layout::new(dir.clone());
    match crate::memory::failures::since_in(&layout, chrono::Utc::now(), 24) {
        Ok(found) if found.is_empty() => {
            Check::ok(NAME, "no failure of background work in the last 24 hours")
        }
        Ok(found) => Check::warn(
            NAME,
            format!(
                "{} failure(s) of background work in the last 24 hours; the newest: {}",
                found.len(),
                crate::commands::session::describe_failure(found.last().expect("not empty"))
            ),
            format!(
                "for the newest: {}. `claude-session session status` lists the recent ones, \
                 {} holds them all",
                failure_fix(found.last().expect("not empty").exit),
                layout
                    .logs_dir()
                    .join(crate::memory::failures::FILE_NAME)
                    .display()
            ),
        ),
        Err(e) => Check::warn(
            NAME,
            format!("could not read the failure log: {e:#}"),
            "check that the state dir's logs/ folder is readable",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_stand_against_the_tested_range() {
        assert_eq!(supported(KNOWN_GOOD_VERSION), Standing::Tested);
        assert_eq!(supported(NEWEST_TESTED_VERSION), Standing::Tested);
        assert_eq!(supported("2.1.250"), Standing::InRange);
        assert_eq!(supported("2.1.9"), Standing::TooOld);
        assert_eq!(supported("1.0.128"), Standing::TooOld);
        assert_eq!(supported("2.2.0"), Standing::Newer);
        assert_eq!(supported("fake"), Standing::Unknown);
        assert_eq!(supported("2.1"), Standing::Unknown);
    }

    #[test]
    fn confinement_is_reported_in_each_state() {
        use confine::Mode;
        let row = |mode, support| {
            let c = confinement_check(mode, support);
            (c.status, c.detail)
        };
        let (status, detail) = row(Mode::BestEffort, Support::Available(7));
        assert_eq!(status, Status::Ok);
        assert!(detail.starts_with("active (Landlock ABI 7)"), "{detail}");
        let (status, detail) = row(Mode::Required, Support::Available(7));
        assert_eq!(status, Status::Ok, "{detail}");
        let (status, detail) = row(Mode::BestEffort, Support::Missing);
        assert_eq!(status, Status::Warn);
        assert!(detail.starts_with("unavailable (no Landlock"), "{detail}");
        let (status, detail) = row(Mode::BestEffort, Support::NotEnabled);
        assert_eq!(status, Status::Warn);
        assert!(detail.contains("not enabled at boot"), "{detail}");
        let (status, detail) = row(Mode::Off, Support::Available(7));
        assert_eq!(status, Status::Warn);
        assert!(detail.starts_with("off (ask.confinement)"), "{detail}");
        let check = confinement_check(Mode::Required, Support::Missing);
        assert_eq!(check.status, Status::Fail);
        assert_eq!(check.exit, Exit::ClaudeNotFound);
        assert!(
            check.detail.contains("every ask will fail"),
            "{}",
            check.detail
        );
    }

    #[test]
    fn several_credentials_name_the_one_claude_sends() {
        assert_eq!(
            credential_in_use(&["ANTHROPIC_API_KEY"]),
            "ANTHROPIC_API_KEY set; claude uses it"
        );
        assert_eq!(
            credential_in_use(&["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"]),
            "ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN set; claude sends only ANTHROPIC_API_KEY"
        );
        assert!(
            credential_in_use(&["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
                .ends_with("claude sends both ANTHROPIC_API_KEY (x-api-key) and ANTHROPIC_AUTH_TOKEN (a bearer token)")
        );
    }

    #[test]
    fn each_tool_says_what_it_exposes() {
        assert!(exposure("Bash", false).contains("argv"));
        assert!(exposure("Read", false).contains("every file the broker's user can read"));
        assert!(exposure("Read", true).contains("confined"));
        assert!(exposure("Glob", true).contains("names"));
        assert!(exposure("WebFetch", true).contains("requests the model chooses"));
        assert!(exposure("Frobnicate", true).contains("not known"));
    }
}

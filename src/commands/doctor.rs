//! `doctor`: everything a broker needs before going live, checked one by
//! one, each saying ok or what to fix.
//!
//! A check is a function in [`CHECKS`]: it gets the [`Setup`] and returns
//! a [`Check`]. Checks are independent (one failing does not stop the
//! others), so adding one is adding a function and a line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::claude::{self, KNOWN_GOOD_VERSION};
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

type CheckFn = fn(&Setup) -> Check;

/// Every check, in the order shown.
const CHECKS: &[CheckFn] = &[
    claude_found,
    authentication,
    state_dir,
    file_system,
    config,
    recent_failures,
    live_call,
];

pub fn run(
    state_dir: anyhow::Result<EffectiveStateDir>,
    channel: Option<ChannelName>,
    args: &DoctorArgs,
    output: Output,
) -> anyhow::Result<()> {
    let origin = state_dir.as_ref().ok().cloned();
    let state_dir = state_dir.map(|dir| dir.path).map_err(|e| format!("{e:#}"));
    let config = match &state_dir {
        Ok(dir) => {
            Config::load(&Layout::new(dir.clone()).config_file()).map_err(|e| format!("{e:#}"))
        }
        Err(_) => Ok(Config::default()),
    };
    let setup = Setup {
        state_dir,
        origin,
        channel,
        args,
        config,
    };
    let checks: Vec<Check> = CHECKS.iter().map(|check| check(&setup)).collect();
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
    if found == KNOWN_GOOD_VERSION {
        Check::ok(NAME, detail)
    } else {
        Check::warn(
            NAME,
            format!("{detail}; tested with {KNOWN_GOOD_VERSION}"),
            format!(
                "npm install -g @anthropic-ai/claude-code@{KNOWN_GOOD_VERSION} for the tested \
                 release, or check this one with `doctor --live`"
            ),
        )
    }
}

/// `claude --version`, with a deadline and the same private HOME as a call.
fn version_of(program: &std::path::Path) -> Result<String, String> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut child = std::process::Command::new(program)
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) if status.success() => break,
            Some(status) => return Err(format!("it {status}")),
            None if started.elapsed() > Duration::from_secs(30) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("no answer within 30 s".into());
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut out = String::new();
    use std::io::Read as _;
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut out)
        .map_err(|e| e.to_string())?;
    Ok(out.trim().to_owned())
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
        return Check::ok(NAME, format!("{} set", found.join(", ")));
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
        (Ok(_), Err(e)) => Check::fail(
            NAME,
            Exit::Usage,
            e.clone(),
            "fix config.json as the message says",
        ),
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
            Check::fail(
                NAME,
                exit,
                format!("{e:#}"),
                "see the message; then run doctor --live again",
            )
        }
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
                "fix what it names; `claude-session session status` lists the recent ones, \
                 {} holds them all",
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

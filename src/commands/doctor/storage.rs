//! The checks of the state dir: which one and why, its file system, its
//! folder's mode and writability, the config, and recent failures of
//! background work.

use super::program::live_fix;
use super::{Check, Setup, Status};
use crate::error::Exit;
use crate::layout::Layout;

/// The state dir check, saying which flag, variable or default chose it.
pub(super) fn state_dir(setup: &Setup) -> Check {
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
pub(super) fn file_system(setup: &Setup) -> Check {
    const NAME: &str = "file-system";
    let Ok(dir) = &setup.state_dir else {
        return Check {
            status: Status::Skipped,
            ..Check::ok(NAME, "needs a state dir")
        };
    };
    match crate::state::dir::file_system(dir) {
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

pub(super) fn state_dir_usable(setup: &Setup) -> Check {
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
    let mode = match crate::state::dir::folder_mode(sessions) {
        Ok(mode) => mode,
        Err(e) => return missing_state_dir(setup, dir, sessions, &e),
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
    match crate::state::dir::probe_write(sessions) {
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

/// The state-dir check when its `sessions/` folder cannot be read.
pub(super) fn missing_state_dir(
    setup: &Setup,
    dir: &std::path::Path,
    sessions: &std::path::Path,
    e: &std::io::Error,
) -> Check {
    const NAME: &str = "state-dir";
    if e.kind() != std::io::ErrorKind::NotFound {
        return Check::fail(
            NAME,
            Exit::State,
            format!("could not read {}: {e}", sessions.display()),
            "check the path and its permissions",
        );
    }
    // An explicit state dir is never created on first use (a vanished
    // mount must not be filled): it must be made once.
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
    Check::warn(
        NAME,
        format!("{} does not exist yet", sessions.display()),
        "the first append or ask creates it (0700); check that its parent is writable",
    )
}

pub(super) fn config(setup: &Setup) -> Check {
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

/// What to do about a failure of background work, by its exit code.
pub(super) fn failure_fix(exit: i32) -> String {
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

/// Failures of background work in the last day (the failure log).
pub(super) fn recent_failures(setup: &Setup) -> Check {
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

//! `doctor`: everything a broker needs before going live, checked one by
//! one, each saying ok or what to fix.
//!
//! A check is a function in [`CHECKS`]: it gets the [`Setup`] and returns
//! its rows, each a [`Check`] (one for most, one per enabled tool for
//! `tools`). Checks are independent (one failing does not stop the
//! others), so adding one is adding a function and a line. The checks of
//! claude are in `program`, those of the state dir in `storage`.

use std::path::PathBuf;

use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::commands::{Output, print_json, print_text};
use crate::config::Config;
use crate::error::{Exit, failure};
use crate::layout::{ChannelName, Layout};
use crate::state::dir::EffectiveStateDir;

mod program;
mod storage;

use program::*;
use storage::*;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::confine::{self, Support};
    use crate::claude::{KNOWN_GOOD_VERSION, NEWEST_TESTED_VERSION};

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

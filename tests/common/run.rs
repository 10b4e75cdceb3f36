//! Running the built binary and saying what it must do, as a sentence:
//!
//! ```ignore
//! env.run(["ask", "--user", "U1", "--", "hi"])
//!     .fails(Exit::ClaudeNotFound)
//!     .stderr_has("claude");
//! ```
//!
//! [`TestEnv::run`] starts a [`Run`] (arguments, environment, stdin); its
//! [`Run::succeeds`] or [`Run::fails`] runs it, checks the exit code and
//! gives a [`Done`], whose checks chain and whose getters end the sentence
//! (`.stdout()`, `.json()`). A failed check shows the command line, the
//! exit code, stdout and stderr, at the caller's line.

use std::ffi::OsStr;
use std::process::Output;

use serde_json::Value;

use super::{TestEnv, fake_claude};

/// The tool's exit codes; their documented numbers are pinned by
/// [`the_exit_codes_are_the_ones_the_tool_documents`], so a renumbering
/// fails the tests instead of moving them along with it.
pub use claude_session::error::Exit;

/// A command about to run: the built binary in the sealed environment of
/// [`TestEnv::cmd`], its arguments, environment and stdin.
#[must_use = "a Run does nothing until .succeeds(), .fails(…) or .output()"]
pub struct Run {
    cmd: assert_cmd::Command,
    shown: Vec<String>,
}

impl TestEnv {
    /// `claude-session --state-dir <state> ARGS…`.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Run::new(self.cmd()).args(args)
    }

    /// `claude-session --state-dir <state> ask --claude-bin <fake> ARGS…`.
    pub fn ask<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run(["ask", "--claude-bin"])
            .arg(fake_claude())
            .args(args)
    }
}

impl Run {
    /// A prepared command (e.g. [`TestEnv::cmd_without_state_dir`]) with
    /// no arguments shown yet.
    pub fn new(cmd: assert_cmd::Command) -> Self {
        Self {
            cmd,
            shown: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.shown.push(arg.as_ref().to_string_lossy().into_owned());
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        args.into_iter().fold(self, Run::arg)
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    /// Every `(key, value)` of `vars` set.
    pub fn envs<'a>(self, vars: impl IntoIterator<Item = &'a (&'a str, &'a str)>) -> Self {
        vars.into_iter().fold(self, |run, (k, v)| run.env(k, v))
    }

    /// What the command reads on stdin (by default nothing: it is closed).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.cmd.write_stdin(bytes);
        self
    }

    /// Run it and return what it did, whatever its exit.
    pub fn output(mut self) -> Output {
        self.cmd.output().expect("the binary runs")
    }

    /// Run it; it must exit 0.
    #[track_caller]
    pub fn succeeds(self) -> Done {
        self.exits(Exit::Success)
    }

    /// Run it; it must exit with `exit` (not 0).
    #[track_caller]
    pub fn fails(self, exit: Exit) -> Done {
        assert_ne!(exit, Exit::Success, "use .succeeds()");
        self.exits(exit)
    }

    #[track_caller]
    fn exits(self, exit: Exit) -> Done {
        let shown = self.shown.join(" ");
        Done::checked(self.output(), shown, exit)
    }
}

/// A process spawned by hand (to run beside others) ended with `exit`:
/// the same checks as [`Run::fails`] and [`Run::succeeds`] give.
#[track_caller]
pub fn exited(output: Output, exit: Exit) -> Done {
    Done::checked(output, "(spawned by the test)".to_owned(), exit)
}

/// A command that ran and exited as it should; what it printed.
pub struct Done {
    output: Output,
    shown: String,
}

impl Done {
    #[track_caller]
    fn checked(output: Output, shown: String, exit: Exit) -> Self {
        let done = Done { output, shown };
        if done.output.status.code() != Some(exit.code()) {
            done.fail(&format!("expected exit {} ({exit:?})", exit.code()));
        }
        done
    }

    #[track_caller]
    fn fail(&self, what: &str) -> ! {
        panic!(
            "`claude-session {}`: {what}; it exited with {}\n--- stdout\n{}\n--- stderr\n{}",
            self.shown,
            self.output.status,
            String::from_utf8_lossy(&self.output.stdout),
            self.stderr()
        )
    }

    /// Stdout must be exactly `expected`.
    #[track_caller]
    pub fn stdout_is(self, expected: &str) -> Self {
        if self.stdout() != expected {
            self.fail(&format!("stdout should be {expected:?}"));
        }
        self
    }

    /// Stdout must contain `needle`.
    #[track_caller]
    pub fn stdout_has(self, needle: &str) -> Self {
        if !self.stdout().contains(needle) {
            self.fail(&format!("stdout should contain {needle:?}"));
        }
        self
    }

    /// Stdout must not contain `needle`.
    #[track_caller]
    pub fn stdout_lacks(self, needle: &str) -> Self {
        if self.stdout().contains(needle) {
            self.fail(&format!("stdout should not contain {needle:?}"));
        }
        self
    }

    /// Stderr must be exactly `expected`.
    #[track_caller]
    pub fn stderr_is(self, expected: &str) -> Self {
        if self.stderr() != expected {
            self.fail(&format!("stderr should be {expected:?}"));
        }
        self
    }

    /// Stderr must contain `needle`.
    #[track_caller]
    pub fn stderr_has(self, needle: &str) -> Self {
        if !self.stderr().contains(needle) {
            self.fail(&format!("stderr should contain {needle:?}"));
        }
        self
    }

    /// Stdout as UTF-8.
    #[track_caller]
    pub fn stdout(&self) -> String {
        String::from_utf8(self.output.stdout.clone()).expect("stdout is UTF-8")
    }

    /// Stderr as UTF-8 (lossy).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Stdout parsed as one JSON value.
    #[track_caller]
    pub fn json(&self) -> Value {
        let text = self.stdout();
        serde_json::from_str(text.trim()).unwrap_or_else(|e| {
            self.fail(&format!("stdout should be one JSON value ({e})"));
        })
    }

    /// Stdout as JSON Lines: every line parsed.
    #[track_caller]
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout()
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    self.fail(&format!("stdout line {line:?} should be JSON ({e})"))
                })
            })
            .collect()
    }
}

#[test]
fn the_exit_codes_are_the_ones_the_tool_documents() {
    // The README's and the man page's table, written out again.
    let documented = [
        (Exit::Success, 0),
        (Exit::Usage, 2),
        (Exit::State, 3),
        (Exit::LockTimeout, 4),
        (Exit::ClaudeNotFound, 5),
        (Exit::ClaudeFailed, 6),
        (Exit::OverBudget, 7),
        (Exit::UnknownUser, 9),
        (Exit::ClaudeUnavailable, 75),
        (Exit::ClaudeTimeout, 124),
    ];
    assert_eq!(documented.map(|(exit, _)| exit), Exit::ALL);
    for (exit, code) in documented {
        assert_eq!(exit.code(), code, "{exit:?}");
    }
}

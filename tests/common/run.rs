//! Running the built binary and saying what it must do, as a sentence:
//!
//! ```ignore
//! env.run(["ask", "--user", "U1", "--", "hi"])
//!     .fails(Exit::ClaudeNotFound)
//!     .stderr_has("claude");
//! ```
//!
//! [`TestEnv::run`] (or [`TestEnv::ask`], [`TestEnv::compact`],
//! [`TestEnv::run_without_state_dir`]) starts a [`Run`] (arguments,
//! environment, current dir, stdin, time limit); its [`Run::succeeds`] or
//! [`Run::fails`] runs it, checks the exit code and gives a [`Done`], whose
//! checks chain and whose getters end the sentence (`.stdout()`,
//! `.json()`). A failed check shows the command line, the exit code,
//! stdout and stderr, at the caller's line.
//!
//! A process that must run beside the test is [`Run::spawn`]ed and its
//! output checked with [`exited`]; where a test collects failures instead
//! of stopping at the first, [`Run::output`] and [`exit_of`] name the exit.
//! Exit codes are always named ([`Exit`]), never numbers.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::{TestEnv, fake_claude};

/// The tool's exit codes; their documented numbers are pinned by
/// [`the_exit_codes_are_the_ones_the_tool_documents`], so a renumbering
/// fails the tests instead of moving them along with it.
pub use claude_session::error::Exit;

/// A command about to run: the built binary in the sealed environment of
/// [`TestEnv::sealed`], its arguments, environment, current directory,
/// stdin and time limit.
#[must_use = "a Run does nothing until .succeeds(), .fails(…), .output() or .spawn()"]
pub struct Run {
    cmd: Command,
    stdin: Option<Vec<u8>>,
    timeout: Option<Duration>,
    shown: Vec<String>,
}

impl TestEnv {
    /// `claude-session --state-dir <state> ARGS…`.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Run::new(self.process()).args(args)
    }

    /// `claude-session ARGS…`: no `--state-dir` (for `init`, `--channel`,
    /// `CLAUDE_SESSION_STATE_DIR`, the default state dir, `--help`).
    pub fn run_without_state_dir<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Run::new(self.sealed(super::binary())).args(args)
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

    /// `claude-session --state-dir <state> compact --claude-bin <fake>
    /// ARGS…` (what the fake answers is the caller's `FAKE_CLAUDE_REPLY`).
    pub fn compact<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run(["compact", "--claude-bin"])
            .arg(fake_claude())
            .args(args)
    }
}

impl Run {
    /// A prepared command (e.g. [`TestEnv::sealed`] of the binary) with
    /// no arguments shown yet.
    pub fn new(cmd: Command) -> Self {
        Self {
            cmd,
            stdin: None,
            timeout: None,
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

    /// `key` taken out of the sealed environment.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.cmd.env_remove(key);
        self
    }

    /// Run in `dir` instead of the test's temporary folder.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cmd.current_dir(dir);
        self
    }

    /// What the command reads on stdin (by default nothing: it is closed).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Kill it if it has not ended after `limit` (a hang fails the test
    /// instead of holding it).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Run it and return what it did, whatever its exit.
    pub fn output(self) -> Output {
        let mut cmd = assert_cmd::Command::from_std(self.cmd);
        if let Some(stdin) = self.stdin {
            cmd.write_stdin(stdin);
        }
        if let Some(limit) = self.timeout {
            cmd.timeout(limit);
        }
        cmd.output().expect("the binary runs")
    }

    /// Start it beside the test: stdin empty (unless [`Run::stdin`] gave
    /// it bytes, written at once), stdout and stderr piped. Wait for it
    /// with `child.wait_with_output()` and check that with [`exited`].
    pub fn spawn(self) -> Child {
        self.spawn_with(Stdio::piped)
    }

    fn spawn_with(mut self, output: fn() -> Stdio) -> Child {
        assert!(self.timeout.is_none(), "a spawned Run has no time limit");
        let stdin = self.stdin.take();
        self.cmd
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(output())
            .stderr(output());
        let mut child = self.cmd.spawn().expect("the binary starts");
        if let Some(bytes) = stdin {
            use std::io::Write as _;
            let mut pipe = child.stdin.take().expect("stdin is piped");
            pipe.write_all(&bytes).expect("write the child's stdin");
        }
        child
    }

    /// [`Run::spawn`] with stdin a pipe left open, for a process the test
    /// talks to (`mcp`): write to `child.stdin`, read `child.stdout`.
    pub fn spawn_interactive(mut self) -> Child {
        assert!(
            self.stdin.is_none() && self.timeout.is_none(),
            "an interactive Run reads what the test writes, with no time limit"
        );
        self.cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        self.cmd.spawn().expect("the binary starts")
    }

    /// [`Run::spawn`] for a process the test may kill and whose output
    /// nobody reads: stdout and stderr go nowhere.
    pub fn spawn_silent(self) -> Child {
        self.spawn_with(Stdio::null)
    }

    /// The prepared `std::process::Command` (for a test that must set up
    /// what the builder does not, e.g. a `pre_exec` hook).
    pub fn into_command(self) -> Command {
        assert!(
            self.stdin.is_none() && self.timeout.is_none(),
            "stdin and timeout belong to .output()"
        );
        self.cmd
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

    /// Run it; it must exit with `exit`, whichever it is (for a table of
    /// cases some of which succeed).
    #[track_caller]
    pub fn exits(self, exit: Exit) -> Done {
        let shown = self.shown.join(" ");
        Done::checked(self.output(), shown, exit)
    }
}

/// The exit of a finished command by name (`None`: killed by a signal,
/// or a number the tool does not document).
pub fn exit_of(output: &Output) -> Option<Exit> {
    output.status.code().and_then(Exit::from_code)
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

    /// Stderr must contain at least one of `needles`.
    #[track_caller]
    pub fn stderr_has_one_of(self, needles: &[&str]) -> Self {
        if !needles.iter().any(|needle| self.stderr().contains(needle)) {
            self.fail(&format!("stderr should contain one of {needles:?}"));
        }
        self
    }

    /// What the process left: exit status, stdout and stderr as bytes.
    pub fn output(&self) -> &Output {
        &self.output
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

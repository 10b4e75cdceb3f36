//! Shared harness of the integration tests: a private temporary state dir,
//! the built binary run in a sealed environment, and readers for what it
//! wrote (message logs) and for what the fake `claude` recorded.
//!
//! Every test file does `mod common;` and uses what it needs, so some of
//! these helpers are unused in a given test crate.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// One test's world: a temporary folder holding the state dir (`state/`),
/// a home folder (`home/`) and the fake claude's call log (`claude-log/`).
/// Everything is removed when the value is dropped.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

/// What the fake claude was given on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    /// The arguments, without the program name.
    pub argv: Vec<String>,
    /// Everything it read on stdin.
    pub stdin: String,
    /// The contents of its `--system-prompt-file` or
    /// `--append-system-prompt-file` (empty when neither was given).
    pub system_prompt: String,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("claude-session-test-")
            .tempdir()
            .expect("create a temporary folder");
        Self { dir }
    }

    /// `<tmp>/state`: passed as `--state-dir` by [`TestEnv::cmd`]. Not
    /// created here: the tool must create what it needs.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `<tmp>/sessions` of the state dir.
    pub fn sessions_dir(&self) -> PathBuf {
        self.state_dir().join("sessions")
    }

    /// `<tmp>/home`, created: the `HOME` of every command.
    pub fn home(&self) -> PathBuf {
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(&home).expect("create the test HOME");
        home
    }

    /// `<tmp>/claude-log`: where the fake claude records its calls
    /// (`FAKE_CLAUDE_LOG`).
    pub fn claude_log(&self) -> PathBuf {
        self.dir.path().join("claude-log")
    }

    /// The built binary with `--state-dir <state_dir>` as first arguments,
    /// in a sealed environment (see [`TestEnv::cmd_without_state_dir`]).
    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = self.cmd_without_state_dir();
        cmd.arg("--state-dir").arg(self.state_dir());
        cmd
    }

    /// The built binary in a sealed environment: only PATH (inherited),
    /// HOME (= [`TestEnv::home`]), LANG=C.UTF-8 and FAKE_CLAUDE_LOG (=
    /// [`TestEnv::claude_log`]) are set, so no `CLAUDE_SESSION_STATE_DIR`,
    /// `CLAUDE_BIN`, `NO_COLOR` … of the developer's shell leaks in. The
    /// current directory is the test's temporary folder, so a relative
    /// path (or `--channel`) can never write into the source tree; call
    /// `.current_dir(…)` to change it.
    pub fn cmd_without_state_dir(&self) -> assert_cmd::Command {
        let mut cmd =
            assert_cmd::Command::cargo_bin("claude-session").expect("the binary is built");
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("LANG", "C.UTF-8")
            .env("FAKE_CLAUDE_LOG", self.claude_log())
            .current_dir(self.dir.path());
        cmd
    }

    /// Number of calls the fake claude recorded (0 if it never ran).
    pub fn claude_calls(&self) -> usize {
        match std::fs::read_to_string(self.claude_log().join("calls")) {
            Ok(text) => text.lines().filter(|l| !l.trim().is_empty()).count(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => panic!("read {}: {e}", self.claude_log().join("calls").display()),
        }
    }

    /// The `n`th recorded call of the fake claude, counting from 1.
    pub fn claude_call(&self, n: usize) -> RecordedCall {
        let dir = self.claude_log().join(format!("call-{n}"));
        let read = |name: &str| {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && name != "argv" => {
                    String::new()
                }
                Err(e) => panic!(
                    "read {} (the fake claude recorded {} call(s)): {e}",
                    path.display(),
                    self.claude_calls()
                ),
            }
        };
        RecordedCall {
            argv: read("argv").lines().map(str::to_owned).collect(),
            stdin: read("stdin"),
            system_prompt: read("system-prompt"),
        }
    }

    /// Write `state/sessions/config.json`, creating its folders.
    pub fn write_config(&self, json: &str) {
        let path = self.sessions_dir().join("config.json");
        write_file(&path, json.as_bytes());
    }

    /// `state/sessions/stm/<user>`.
    pub fn stm_dir(&self, user: &str) -> PathBuf {
        self.sessions_dir().join("stm").join(user)
    }

    /// `state/sessions/stm/<user>/messages.jsonl`.
    pub fn messages_path(&self, user: &str) -> PathBuf {
        self.stm_dir(user).join("messages.jsonl")
    }

    /// `state/sessions/.locks/users/<user>.lock`.
    pub fn user_lock_path(&self, user: &str) -> PathBuf {
        self.sessions_dir()
            .join(".locks")
            .join("users")
            .join(format!("{user}.lock"))
    }

    /// The raw bytes of the user's log (empty if it does not exist).
    pub fn read_bytes(&self, user: &str) -> Vec<u8> {
        match std::fs::read(self.messages_path(user)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("read {}: {e}", self.messages_path(user).display()),
        }
    }

    /// The lines of the user's log, without newlines (empty if it does not
    /// exist). Panics if the file is not UTF-8.
    pub fn read_lines(&self, user: &str) -> Vec<String> {
        let bytes = self.read_bytes(user);
        let text = String::from_utf8(bytes).expect("messages.jsonl is UTF-8");
        text.lines().map(str::to_owned).collect()
    }

    /// Every line of the user's log parsed as JSON; panics on a bad line.
    pub fn messages(&self, user: &str) -> Vec<serde_json::Value> {
        self.read_lines(user)
            .iter()
            .enumerate()
            .map(|(i, line)| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!("line {} of {user}'s log is not JSON ({e}): {line:?}", i + 1)
                })
            })
            .collect()
    }

    /// Write a message log by hand (for seed-format and torn-line fixtures).
    pub fn write_messages_raw(&self, user: &str, bytes: &[u8]) {
        write_file(&self.messages_path(user), bytes);
    }
}

/// The fake `claude` (a POSIX sh script; its header lists the environment
/// variables it understands).
pub fn fake_claude() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake-claude"))
}

/// The built binary, for tests that spawn it with `std::process::Command`.
pub fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("claude-session")
}

/// Write a file, creating its parent folders.
pub fn write_file(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("create {}: {e}", parent.display()));
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Unix permission bits (`0o600`) of a path, not following a symlink.
pub fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("stat {}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// Stdout of a finished command as UTF-8.
pub fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Stderr of a finished command as UTF-8 (lossy).
pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

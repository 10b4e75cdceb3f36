//! Shared harness of the integration tests: a private temporary state dir,
//! the built binary run in a sealed environment, and readers for what it
//! wrote (message logs) and for what the fake `claude` recorded. Every
//! helper the modules share lives here, once:
//!
//! - [`run`], `env.run([...]).fails(Exit::Usage).stderr_has("...")`;
//! - [`context`], the context block as the model reads it;
//! - [`disk`], archives, snapshots of a tree, markdown frontmatter;
//! - [`fixtures`], message lines and what the fake claude answers;
//! - [`events`], `ask --stream --json` events;
//! - [`process`], other processes, as `/proc` shows them;
//! - [`real_claude`], the real Claude Code CLI and a mock Messages API.

pub mod context;
pub mod disk;
pub mod events;
pub mod fixtures;
pub mod process;
pub mod real_claude;
pub mod run;

pub use context::*;
pub use disk::*;
pub use events::*;
pub use fixtures::*;
pub use process::*;
pub use run::{Exit, Run, exit_of, exited};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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
    /// A world whose state dir was made the documented way, by
    /// `claude-session init` (an explicit `--state-dir` must already be a
    /// state dir): it holds an empty `sessions/` and nothing else.
    pub fn new() -> Self {
        let env = Self::uninitialised();
        env.run_without_state_dir(["init"])
            .arg(env.state_dir())
            .succeeds();
        env
    }

    /// A world with no state dir at all: `<tmp>/state` does not exist.
    pub fn uninitialised() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("claude-session-test-")
            .tempdir()
            .expect("create a temporary folder");
        // Made here: a confined claude may write only into what exists.
        std::fs::create_dir(dir.path().join("claude-log")).expect("create the fake's log folder");
        Self { dir }
    }

    /// `<tmp>/state`: passed as `--state-dir` by [`TestEnv::run`]. Made by
    /// [`TestEnv::new`] with `init`; the tool creates everything in it.
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

    /// `program` in a sealed environment: only PATH (inherited), HOME (=
    /// [`TestEnv::home`]), LANG=C.UTF-8 and FAKE_CLAUDE_LOG (=
    /// [`TestEnv::claude_log`]) are set, so no `CLAUDE_SESSION_STATE_DIR`,
    /// `CLAUDE_BIN`, `NO_COLOR` … of the developer's shell leaks in. The
    /// current directory is the test's temporary folder, so a relative
    /// path (or `--channel`) can never write into the source tree; call
    /// `.current_dir(…)` to change it.
    pub fn sealed(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("LANG", "C.UTF-8")
            .env("FAKE_CLAUDE_LOG", self.claude_log())
            // claude's environment is an allowlist: let the fake's settings through.
            .env("CLAUDE_SESSION_CLAUDE_ENV", "FAKE_CLAUDE_*")
            // ... and, confined, let it write its record.
            .env("CLAUDE_SESSION_CLAUDE_WRITABLE", self.claude_log())
            .current_dir(self.dir.path());
        cmd
    }

    /// The built binary as a plain `std::process::Command`, in the
    /// [`TestEnv::sealed`] environment and with `--state-dir <state_dir>`
    /// as first arguments: what [`TestEnv::run`] starts from.
    pub fn process(&self) -> Command {
        let mut cmd = self.sealed(binary());
        cmd.arg("--state-dir").arg(self.state_dir());
        cmd
    }

    /// `sh -c SCRIPT` in the sealed environment (without FAKE_CLAUDE_LOG),
    /// with `BIN` (the built binary) and `STATE` (the state dir) set.
    pub fn sh(&self, script: &str) -> Command {
        let mut cmd = self.sealed("sh");
        cmd.args(["-c", script])
            .env_remove("FAKE_CLAUDE_LOG")
            .env("BIN", binary())
            .env("STATE", self.state_dir());
        cmd
    }

    /// Writer number `writer`: a [`TestEnv::sh`] loop of `count` appends
    /// for `U1` (msgIds `w<writer>-<i>`, texts `writer <writer> message
    /// <i>`) that stops at the first failure.
    pub fn append_writer(&self, writer: usize, count: usize) -> Command {
        let script = r#"
            i=0
            while [ "$i" -lt "$COUNT" ]; do
                "$BIN" --state-dir "$STATE" append --user U1 --msg-id "w$WRITER-$i" \
                    -- "writer $WRITER message $i" || exit 1
                i=$((i + 1))
            done
        "#;
        let mut cmd = self.sh(script);
        cmd.env("WRITER", writer.to_string())
            .env("COUNT", count.to_string());
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

    /// `state/sessions/ltm/users/<user>.md`: the user's profile.
    pub fn profile_path(&self, user: &str) -> PathBuf {
        self.sessions_dir()
            .join("ltm")
            .join("users")
            .join(format!("{user}.md"))
    }

    /// `state/sessions/.journal/<user>.json`: a compaction's journal.
    pub fn journal_path(&self, user: &str) -> PathBuf {
        self.sessions_dir()
            .join(".journal")
            .join(format!("{user}.json"))
    }

    /// `state/sessions/archive/<user>`: the user's gzip archives.
    pub fn archive_dir(&self, user: &str) -> PathBuf {
        self.sessions_dir().join("archive").join(user)
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

    /// The roles of the user's log, in order.
    pub fn roles(&self, user: &str) -> Vec<String> {
        self.messages(user)
            .iter()
            .map(|m| m["role"].as_str().unwrap_or("?").to_owned())
            .collect()
    }

    /// Write a message log by hand (for seed-format and torn-line fixtures).
    pub fn write_messages_raw(&self, user: &str, bytes: &[u8]) {
        write_file(&self.messages_path(user), bytes);
    }

    /// Import `lines` for `user` with `append --jsonl` (one process, one
    /// locked append; the bytes of each line are kept as given); panics
    /// unless it succeeds.
    pub fn import(&self, user: &str, lines: &[String]) {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.path().join(format!("import-{user}-{n}.jsonl"));
        let mut text = lines.join("\n");
        text.push('\n');
        write_file(&path, text.as_bytes());
        self.run(["append", "--user", user, "--jsonl"])
            .arg(&path)
            .succeeds();
    }
}

impl TestEnv {
    /// `append FLAGS… -- TEXT`; panics unless it succeeds.
    #[track_caller]
    pub fn append(&self, flags: &[&str], text: &str) {
        self.run(["append"])
            .args(flags)
            .args(["--", text])
            .succeeds();
    }

    /// Replace a user's profile through `session profile --set -`.
    #[track_caller]
    pub fn set_profile(&self, user: &str, text: &str) {
        self.run(["session", "profile", "--user", user, "--set", "-"])
            .stdin(text)
            .succeeds();
    }
}

/// The fake `claude` (a POSIX sh script; its header lists the environment
/// variables it understands).
pub fn fake_claude() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake-claude"))
}

/// One stored message as `append --jsonl` takes it, with its newline: a
/// line of the histories the recall tests import.
pub fn history_line(ts: &str, role: &str, text: &str, msg_id: &str) -> String {
    serde_json::json!({"ts": ts, "role": role, "text": text, "msgId": msg_id}).to_string() + "\n"
}

/// `lines` (JSONL, one message a line) imported as `user`'s with `append
/// --jsonl`, then compacted with the fake (`--force`): most of them end up
/// in the archives, as weeks of chat would.
#[track_caller]
pub fn import_and_compact(env: &TestEnv, user: &str, lines: &str) {
    let import = env.dir.path().join(format!("history-{user}.jsonl"));
    write_file(&import, lines.as_bytes());
    env.run(["append", "--user", user, "--jsonl"])
        .arg(&import)
        .succeeds();
    env.run(["compact", "--user", user, "--force", "--claude-bin"])
        .arg(fake_claude())
        .env(
            "FAKE_CLAUDE_REPLY",
            fixtures::compaction_reply("They chatted about their days.", serde_json::json!({})),
        )
        .succeeds();
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

/// Poll `done` every `every` for up to `limit`; whether it came true (it
/// is asked once more at the end).
pub fn wait_for(limit: Duration, every: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(every);
    }
    done()
}

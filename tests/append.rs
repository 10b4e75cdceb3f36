//! `append`: logging messages, importing seed lines, message text rules,
//! torn lines, locks, file modes, config handling and where the state dir is.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Exit, TestEnv, mode_of, write_file};
use serde_json::{Value, json};

const SEED_USER_LINE: &str =
    r#"{"ts":"2026-03-23T03:28:32Z","role":"user","text":"hi","msgId":"123","channel":"slack"}"#;

#[test]
fn append_writes_one_seed_format_line() {
    let env = TestEnv::new();
    env.run([
        "append", "--user", "U1", "--msg-id", "m-1", "--source", "slack",
    ])
    .args(["--ts", "2026-03-23T03:28:32Z", "--", "hello", "world"])
    .succeeds()
    .stdout_is("");
    let messages = env.messages("U1");
    assert_eq!(messages.len(), 1);
    let m = &messages[0];
    assert_eq!(m["role"], "user");
    assert_eq!(m["text"], "hello world", "arguments are joined by spaces");
    assert_eq!(m["msgId"], "m-1");
    assert_eq!(m["channel"], "slack");
    let ts = m["ts"].as_str().expect("ts is a string");
    assert!(
        ts == "2026-03-23T03:28:32Z" || ts == "2026-03-23T03:28:32.000Z",
        "ts is RFC 3339 UTC with Z: {ts}"
    );
    // Only the seed's camelCase keys; nothing snake_case or null.
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["ts", "role", "text", "msgId", "channel"], "{m}");
}

#[test]
fn append_json_output_and_roles() {
    let env = TestEnv::new();
    let reply = env
        .run([
            "--json",
            "append",
            "--user",
            "U1",
            "--role",
            "assistant",
            "--",
            "Hello!",
        ])
        .succeeds()
        .json();
    assert_eq!(reply["user"], "U1");
    assert_eq!(reply["appended"], 1);
    env.run(["append", "--user", "U1", "--role", "system", "--", "note"])
        .succeeds();
    env.run(["append", "--user", "U1", "--role", "bot", "--", "x"])
        .fails(Exit::Usage);
    let roles: Vec<Value> = env
        .messages("U1")
        .iter()
        .map(|m| m["role"].clone())
        .collect();
    assert_eq!(roles, [json!("assistant"), json!("system")]);
}

#[test]
fn empty_text_is_refused() {
    let env = TestEnv::new();
    for text in ["", "   ", "\n"] {
        env.run(["append", "--user", "U1", "--", text])
            .fails(Exit::Usage)
            .stderr_has("empty");
    }
    // No text and an empty stdin: nothing to log either.
    env.run(["append", "--user", "U1"])
        .stdin("")
        .fails(Exit::Usage);
    assert!(!env.messages_path("U1").exists());
}

#[test]
fn text_from_stdin() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1"])
        .stdin("line one\nline two\n")
        .succeeds();
    let messages = env.messages("U1");
    assert_eq!(messages.len(), 1);
    assert_eq!(
        messages[0]["text"], "line one\nline two",
        "the trailing newline of `echo` is not part of the message"
    );
}

#[test]
fn invalid_utf8_on_stdin_is_refused_and_nothing_written() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1"])
        .stdin(b"caf\xe9 \xff\xfe".to_vec())
        .fails(Exit::Usage)
        .stderr_has("UTF-8");
    assert!(!env.messages_path("U1").exists());
    assert!(!env.stm_dir("U1").exists());
}

// --- imports ---------------------------------------------------------------

#[test]
fn jsonl_import_keeps_lines_byte_for_byte() {
    let env = TestEnv::new();
    // Odd key order, spaces, unknown fields: all must survive untouched.
    let lines = [
        SEED_USER_LINE,
        r#"{"role":"assistant", "ts":"2026-03-23T03:28:33Z","text":"Hello!","msgId":"resp-1","channel":"slack","usage":{"input_tokens":12,"output_tokens":7,"cost_usd":0.0123},"foo":1}"#,
    ];
    let import = env.dir.path().join("import.jsonl");
    let content = format!("{}\n{}\n", lines[0], lines[1]);
    write_file(&import, content.as_bytes());
    let reply = env
        .run(["--json", "append", "--user", "U1", "--jsonl"])
        .arg(&import)
        .succeeds()
        .json();
    assert_eq!(reply["appended"], 2);
    assert_eq!(env.read_bytes("U1"), content.as_bytes());

    // The unknown fields are also kept when the line is read back.
    let context = env
        .run(["--json", "context", "--user", "U1"])
        .succeeds()
        .json();
    let last = &context["messages"][1];
    assert_eq!(last["usage"]["output_tokens"], 7, "{context}");
    assert_eq!(last["foo"], 1, "{context}");
}

#[test]
fn jsonl_import_from_stdin() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--jsonl", "-"])
        .stdin(format!("{SEED_USER_LINE}\n"))
        .succeeds();
    assert_eq!(env.read_lines("U1"), [SEED_USER_LINE]);
}

#[test]
fn jsonl_import_with_one_bad_line_imports_nothing() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "already here"])
        .succeeds();
    let before = env.read_bytes("U1");
    let import = env.dir.path().join("import.jsonl");
    write_file(
        &import,
        format!(
            "{SEED_USER_LINE}\n{}\n{SEED_USER_LINE}\n",
            r#"{"ts":"yesterday","role":"user","text":"bad time"}"#
        )
        .as_bytes(),
    );
    env.run(["append", "--user", "U1", "--jsonl"])
        .arg(&import)
        .fails(Exit::Usage)
        .stderr_has("line 2");
    assert_eq!(env.read_bytes("U1"), before, "the log is unchanged");

    // Not JSON at all, a wrong role, a missing text: each rejects the batch.
    for bad in [
        "not json",
        r#"{"ts":"2026-03-23T03:28:32Z","role":"bot","text":"x"}"#,
        r#"{"ts":"2026-03-23T03:28:32Z","role":"user"}"#,
    ] {
        write_file(&import, format!("{SEED_USER_LINE}\n{bad}\n").as_bytes());
        env.run(["append", "--user", "U2", "--jsonl"])
            .arg(&import)
            .fails(Exit::Usage);
        assert!(!env.messages_path("U2").exists(), "{bad}");
    }
}

// --- torn lines ------------------------------------------------------------

#[test]
fn torn_last_line_is_skipped_kept_and_never_glued() {
    let env = TestEnv::new();
    let torn = r#"{"ts":"2026"#;
    let original = format!("{SEED_USER_LINE}\n{torn}");
    env.write_messages_raw("U1", original.as_bytes());

    env.run(["context", "--user", "U1"])
        .succeeds()
        .stdout_has("[2026-03-23 03:28] User: hi")
        // A skipped line is warned about.
        .stderr_has("warning");
    assert_eq!(
        env.read_bytes("U1"),
        original.as_bytes(),
        "reading changes nothing"
    );

    env.run([
        "append",
        "--user",
        "U1",
        "--msg-id",
        "after",
        "--",
        "after the tear",
    ])
    .succeeds();
    let lines = env.read_lines("U1");
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0], SEED_USER_LINE);
    assert_eq!(
        lines[1], torn,
        "the fragment stays on disk, on its own line"
    );
    let new: Value = serde_json::from_str(&lines[2]).expect("the new record parses alone");
    assert_eq!(new["text"], "after the tear");
    assert!(env.read_bytes("U1").ends_with(b"\n"));

    // Both real messages are read; the fragment in the middle is skipped.
    env.run(["context", "--user", "U1"])
        .succeeds()
        .stdout_has("User: hi")
        .stdout_has("User: after the tear")
        .stderr_has("warning");
}

// --- locks -----------------------------------------------------------------

/// A `flock(1)` holding a lock file in its own process group; the whole
/// group (flock and its `sleep`, which inherits the lock) is killed on drop.
struct LockHolder {
    child: Child,
}

impl LockHolder {
    fn hold(path: &std::path::Path) -> Self {
        use std::os::unix::process::CommandExt as _;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut child = Command::new("flock")
            .arg(path)
            .args(["sh", "-c", "echo locked; exec sleep 30"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("run flock(1)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "locked", "flock got the lock");
        Self { child }
    }

    fn release(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", self.child.id())])
                .status();
            let _ = self.child.wait();
        }
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        self.release();
    }
}

#[test]
fn held_user_lock_times_out_with_exit_4_then_append_succeeds_after_release() {
    let env = TestEnv::new();
    env.write_config(r#"{"durability":{"lockTimeoutMs":300}}"#);
    let mut holder = LockHolder::hold(&env.user_lock_path("U1"));

    let started = Instant::now();
    env.run(["append", "--user", "U1", "--", "blocked"])
        .fails(Exit::LockTimeout)
        .stderr_has("lock");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "gave up early: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(5),
        "waited too long: {waited:?}"
    );
    assert!(
        env.read_lines("U1").is_empty(),
        "nothing written without the lock"
    );

    // Another user is not blocked by U1's lock.
    env.run(["append", "--user", "U2", "--", "free"]).succeeds();

    holder.release();
    let started = Instant::now();
    env.run(["append", "--user", "U1", "--", "now free"])
        .succeeds();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(env.messages("U1")[0]["text"], "now free");
}

// --- file modes ------------------------------------------------------------

#[test]
fn created_files_are_0600_and_folders_0700() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "private"])
        .succeeds();
    assert_eq!(mode_of(&env.messages_path("U1")), 0o600, "messages.jsonl");
    assert_eq!(mode_of(&env.stm_dir("U1")), 0o700, "stm/U1");
    assert_eq!(mode_of(&env.sessions_dir().join("stm")), 0o700, "stm");
    assert_eq!(mode_of(&env.sessions_dir()), 0o700, "sessions");
    assert_eq!(mode_of(&env.user_lock_path("U1")), 0o600, "the lock file");
}

// --- config ----------------------------------------------------------------

#[test]
fn malformed_config_is_refused_with_line_and_column() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {,}}"#);
    for args in [
        &["append", "--user", "U1", "--", "hi"][..],
        &["context", "--user", "U1"][..],
    ] {
        let stderr = env.run(args).fails(Exit::Usage).stderr();
        let at = stderr
            .find("config.json:1:")
            .unwrap_or_else(|| panic!("no file:line: in {stderr}"));
        let column = &stderr[at + "config.json:1:".len()..];
        assert!(
            column.starts_with(|c: char| c.is_ascii_digit()),
            "a column follows the line: {stderr}"
        );
    }
    assert!(
        !env.messages_path("U1").exists(),
        "no fall-back to defaults"
    );
}

#[test]
fn wrong_type_in_config_names_the_key() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {"contextWindow": "ten"}}"#);
    env.run(["append", "--user", "U1", "--", "hi"])
        .fails(Exit::Usage)
        .stderr_has("stm.contextWindow");
    assert!(!env.messages_path("U1").exists());
}

#[test]
fn unknown_config_key_warns_but_works() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {"contextWindw": 5}, "durability": {"fsync": false}}"#);
    env.run(["append", "--user", "U1", "--", "hi"])
        .succeeds()
        .stderr_has("warning")
        .stderr_has("contextWindw");
    assert_eq!(env.messages("U1").len(), 1);
}

// --- where the state dir is ------------------------------------------------

/// Issue 17: with neither flag, the platform's state directory for the
/// user: `$XDG_STATE_HOME/claude-session`, else
/// `~/.local/state/claude-session`; never the current directory.
#[test]
fn neither_state_dir_nor_channel_uses_the_default_state_dir() {
    let env = TestEnv::new();
    env.run_without_state_dir(["append", "--user", "U1", "--", "hi"])
        .succeeds();
    let home_default = env
        .home()
        .join(".local/state/claude-session/sessions/stm/U1/messages.jsonl");
    assert!(
        home_default.exists(),
        "not in ~/.local/state/claude-session"
    );
    assert!(!env.dir.path().join(".claude").exists());

    let xdg = env.dir.path().join("xdg-state");
    env.run_without_state_dir(["append", "--user", "U2", "--", "hi"])
        .env("XDG_STATE_HOME", &xdg)
        .succeeds();
    assert!(
        xdg.join("claude-session/sessions/stm/U2/messages.jsonl")
            .exists()
    );

    // context --show-config says which state dir and why.
    let shown = env
        .run_without_state_dir(["context", "--show-config"])
        .env("XDG_STATE_HOME", &xdg)
        .succeeds()
        .json();
    assert_eq!(
        shown["stateDir"]["path"],
        xdg.join("claude-session").display().to_string()
    );
    assert_eq!(shown["stateDir"]["source"], "xdg-state-home");
    assert_eq!(shown["stateDir"]["exists"], true);
    assert_eq!(shown["config"]["stm"]["contextWindow"], 10);
}

/// With no HOME either, there is nowhere to put the default: a usage error
/// naming both flags.
#[test]
fn no_state_dir_flag_and_no_home_is_a_usage_error_naming_both() {
    let env = TestEnv::new();
    env.run_without_state_dir(["append", "--user", "U1", "--", "hi"])
        .env_remove("HOME")
        .fails(Exit::Usage)
        .stderr_has("--state-dir")
        .stderr_has("--channel");
    assert!(!env.dir.path().join(".claude").exists());
}

#[test]
fn channel_uses_dot_claude_channels_name_in_the_current_dir() {
    let env = TestEnv::uninitialised();
    let cwd = env.dir.path().join("broker");
    std::fs::create_dir_all(&cwd).unwrap();
    env.run_without_state_dir(["--channel", "slack", "append", "--user", "U1", "--", "hi"])
        .current_dir(&cwd)
        .succeeds();
    let log = cwd.join(".claude/channels/slack/sessions/stm/U1/messages.jsonl");
    let text = std::fs::read_to_string(&log).expect("the log is under ./.claude/channels/slack");
    let line: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(line["text"], "hi");
    assert_eq!(
        line["channel"], "slack",
        "--channel is recorded as the source"
    );
    assert!(!env.state_dir().exists());

    env.run_without_state_dir(["--channel", "slack", "context", "--user", "U1"])
        .current_dir(&cwd)
        .succeeds()
        .stdout_has("User: hi");

    // A channel name is a path component too.
    env.run_without_state_dir(["--channel", "../evil", "append", "--user", "U1", "--", "hi"])
        .current_dir(&cwd)
        .fails(Exit::Usage);
    assert!(!cwd.join(".claude/evil").exists());
}

// --- issue 13: empty ids and future times ---------------------------------------

#[test]
fn empty_or_blank_message_thread_group_and_conversation_ids_are_refused() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--msg-id", "m-0", "--", "first"])
        .succeeds();
    let before = env.read_bytes("U1");
    for (flag, value) in [
        ("--msg-id", ""),
        ("--msg-id", "   "),
        ("--msg-id", "\t"),
        ("--thread", ""),
        ("--thread", " "),
        ("--group", ""),
        ("--conversation", ""),
        ("--conversation", "  "),
    ] {
        let err = env
            .run(["append", "--user", "U1", flag, value, "--", "lost?"])
            .fails(Exit::Usage)
            .stderr();
        assert!(
            err.contains(flag) && (err.contains("empty") || err.contains("blank")),
            "{flag} {value:?}: the refusal names the flag and why: {err}"
        );
        assert_eq!(
            env.read_bytes("U1"),
            before,
            "{flag} {value:?}: nothing logged"
        );
    }
    // And ask: no call, nothing logged.
    env.ask(["--user", "U1", "--msg-id", "", "--", "hi"])
        .fails(Exit::Usage);
    assert_eq!(env.claude_calls(), 0);
    assert_eq!(env.read_bytes("U1"), before);
}

#[test]
fn a_time_in_the_future_is_refused_beyond_a_small_clock_skew() {
    let env = TestEnv::new();
    env.run([
        "append",
        "--user",
        "U1",
        "--ts",
        "2999-01-01T00:00:00Z",
        "--",
        "x",
    ])
    .fails(Exit::Usage)
    .stderr_has("future");
    assert!(!env.messages_path("U1").exists());
    // A minute ahead (clocks of two hosts) is fine.
    let soon = (chrono::Utc::now() + chrono::Duration::seconds(60))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    env.run(["append", "--user", "U1", "--ts", &soon, "--", "x"])
        .succeeds();
    // An import line from the future is refused too, all or nothing.
    env.run(["append", "--user", "U2", "--jsonl", "-"])
        .stdin(
            "{\"ts\":\"2026-03-01T00:00:00Z\",\"role\":\"user\",\"text\":\"a\"}\n\
             {\"ts\":\"2999-01-01T00:00:00Z\",\"role\":\"user\",\"text\":\"b\"}\n",
        )
        .fails(Exit::Usage);
    assert!(!env.messages_path("U2").exists());
}

/// `--jsonl` imports into a person's own log: with `--conversation` it
/// would put a group's lines there, so the two are refused together.
#[test]
fn a_jsonl_import_cannot_name_a_conversation() {
    let env = TestEnv::new();
    let file = env.dir.path().join("import.jsonl");
    std::fs::write(
        &file,
        "{\"ts\":\"2026-03-01T00:00:00Z\",\"role\":\"user\",\"text\":\"hi\"}\n",
    )
    .unwrap();
    env.run(["append", "--user", "U1", "--conversation", "G1", "--jsonl"])
        .arg(&file)
        .fails(Exit::Usage);
    assert!(!env.messages_path("U1").exists());
}

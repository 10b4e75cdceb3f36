//! Operators' mistakes never look like success (issue 17): a state dir
//! that does not exist, an unknown user, a quiet cron run, a reused
//! message id, a broker that logs replies itself.

use std::path::Path;
use std::time::Duration;

use crate::common::{Exit, Run, TestEnv, fake_claude, stdout_of, tree};

// --- 9: a state dir that does not exist -------------------------------------

/// `session users`/`status` printed zeros and `maintain` created the dir
/// and reported success: a typo in a crontab did nothing forever.
#[test]
fn read_commands_and_maintain_refuse_a_state_dir_that_does_not_exist() {
    let env = TestEnv::uninitialised();
    for args in [
        &["session", "users"][..],
        &["session", "status"],
        &["session", "topics"],
        &["session", "search", "x"],
        &["maintain"],
        &["maintain", "--dry-run"],
        &["compact", "--all"],
    ] {
        env.run(args)
            .fails(Exit::State)
            .stdout_is("")
            .stderr_has(&env.state_dir().display().to_string())
            .stderr_has("check the --state-dir path");
        assert!(!env.state_dir().exists(), "{args:?} created the state dir");
    }
    // The variable is named as the source when it gave the path.
    env.run_without_state_dir(["maintain", "-q"])
        .env("CLAUDE_SESSION_STATE_DIR", env.state_dir())
        .fails(Exit::State)
        .stderr_has("check CLAUDE_SESSION_STATE_DIR");
    assert!(!env.state_dir().exists());
}

#[test]
fn channel_from_the_wrong_folder_is_refused_with_the_likely_fix() {
    let env = TestEnv::new();
    let broker = env.dir.path().join("broker");
    std::fs::create_dir_all(&broker).unwrap();
    env.run_without_state_dir(["--channel", "slack", "append", "--user", "U1", "--", "hi"])
        .current_dir(&broker)
        .succeeds();
    // cron runs in $HOME, not in the broker's folder.
    env.run_without_state_dir(["--channel", "slack", "session", "users"])
        .fails(Exit::State)
        .stderr_has(".claude/channels/slack")
        .stderr_has("relative to the current folder");
    assert!(!env.dir.path().join(".claude").exists());
    env.run_without_state_dir(["--channel", "slack", "session", "users"])
        .current_dir(&broker)
        .succeeds()
        .stdout_has("U1");
}

#[test]
fn ask_and_append_refuse_an_explicit_state_dir_that_init_did_not_make() {
    for first in ["ask", "append"] {
        let env = TestEnv::uninitialised();
        // A folder that is there but empty: a mount point whose file
        // system is gone.
        std::fs::create_dir_all(env.state_dir()).unwrap();
        let run = |run: Run| {
            let mut run = run.args([first, "--user", "U1"]);
            if first == "ask" {
                run = run.arg("--claude-bin").arg(fake_claude());
            }
            run.args(["--msg-id", "m1", "--", "hello"])
        };
        run(env.run([] as [&str; 0]))
            .fails(Exit::State)
            .stdout_is("")
            .stderr_has(&env.state_dir().display().to_string())
            .stderr_has("is its file system mounted?")
            .stderr_has("claude-session init");
        run(env
            .run_without_state_dir([] as [&str; 0])
            .env("CLAUDE_SESSION_STATE_DIR", env.state_dir()))
        .fails(Exit::State)
        .stderr_has("check CLAUDE_SESSION_STATE_DIR");
        for args in [
            &["session", "profile", "--user", "U1", "--set", "-"][..],
            &["session", "topic", "set", "tea", "-"],
        ] {
            env.run(args).stdin("x").fails(Exit::State);
        }
        assert_eq!(
            std::fs::read_dir(env.state_dir()).unwrap().count(),
            0,
            "{first} created something in the empty folder"
        );
        assert_eq!(env.claude_calls(), 0);
        // Made once, it works, and every command works on it.
        env.run(["init", &env.state_dir().display().to_string()])
            .succeeds()
            .stdout_has("made a state dir");
        run(env.run([] as [&str; 0])).succeeds();
        assert_eq!(env.messages("U1")[0]["text"], "hello", "{first}");
        env.run(["session", "users"]).succeeds();
        env.run(["maintain", "-q"]).succeeds().stdout_is("");
        // A second init changes nothing.
        let before = tree(&env.sessions_dir());
        let shown = env.run(["--json", "init"]).succeeds().json();
        assert_eq!(shown["created"], false);
        assert_eq!(tree(&env.sessions_dir()), before);
    }
}

/// The implicit places stay easy: the default state dir and `--channel`'s
/// folder are made on first use, with no `init`.
#[test]
fn the_default_state_dir_and_channel_are_created_on_first_use() {
    let env = TestEnv::uninitialised();
    env.run_without_state_dir(["append", "--user", "U1", "--", "hi"])
        .succeeds();
    assert!(
        env.home()
            .join(".local/state/claude-session/sessions/stm/U1")
            .is_dir()
    );
    env.run_without_state_dir(["--channel", "slack", "append", "--user", "U1", "--", "hi"])
        .succeeds();
    assert!(
        env.dir
            .path()
            .join(".claude/channels/slack/sessions/stm/U1")
            .is_dir()
    );
}

/// `init` with both a folder and another `--state-dir` is ambiguous.
#[test]
fn init_refuses_two_different_folders() {
    let env = TestEnv::uninitialised();
    env.run(["init", "/elsewhere/x"])
        .fails(Exit::Usage)
        .stderr_has("give one");
    assert!(!Path::new("/elsewhere").exists());
    assert!(!env.state_dir().exists());
}

// --- 10: an unknown user ------------------------------------------------------

#[test]
fn an_unknown_user_is_exit_9_on_every_read_command_and_makes_no_lock() {
    let env = TestEnv::new();
    env.append(&["--user", "U1"], "hi");
    let out = env.dir.path().join("ghost-export");
    for args in [
        &["session", "status", "--user", "ghost"][..],
        &["session", "show", "--user", "ghost"],
        &["session", "show", "--conversation", "ghost"],
        &[
            "session",
            "export",
            "--user",
            "ghost",
            "--out",
            out.to_str().unwrap(),
        ],
        &["session", "clear", "--user", "ghost", "--yes"],
        &["session", "clear", "--user", "ghost", "--all", "--yes"],
        &["context", "--user", "ghost"],
        &["compact", "--user", "ghost"],
    ] {
        env.run(args)
            .fails(Exit::UnknownUser)
            .stdout_is("")
            .stderr_has("\"ghost\"")
            .stderr_has("nothing is stored");
    }
    assert!(!out.exists(), "an empty export was written");
    let locks = env.sessions_dir().join(".locks");
    let names: Vec<String> = tree(&locks)
        .into_keys()
        .filter(|p| p.contains("ghost"))
        .collect();
    assert!(names.is_empty(), "lock files for an unknown id: {names:?}");
    assert!(!env.stm_dir("ghost").exists());
    // The known user still works, and a bad id is still a usage error.
    env.run(["session", "status", "--user", "U1"]).succeeds();
    env.run(["session", "status", "--user", "../x"])
        .fails(Exit::Usage);
}

// --- 11: maintain -q and --dry-run --------------------------------------------

#[test]
fn quiet_maintain_prints_nothing_on_success_and_errors_on_stderr() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm":{"contextWindow":2},"compacting":{"threshold":3}}"#);
    for i in 0..5 {
        env.append(&["--user", "U1"], &format!("message {i}"));
    }
    // An old broker log to rotate (into archive/logs/, no user folder).
    let log = env.state_dir().join("logs").join("broker-slack.log");
    crate::common::write_file(&log, b"old\n");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(old)
        .unwrap();
    // Success: nothing at all, however much was done.
    env.run(["maintain", "-q", "--claude-bin"])
        .arg(fake_claude())
        .env(
            "FAKE_CLAUDE_REPLY",
            r#"{"summary":"They talked.","facts":{}}"#,
        )
        .succeeds()
        .stdout_is("")
        .stderr_is("");
    assert!(
        env.stm_dir("U1").join("summary.md").exists(),
        "it did the work"
    );
    assert!(!log.exists(), "the log was rotated");
    // archive/logs/ is no user folder: listing users says nothing of it.
    env.run(["session", "users"]).succeeds().stderr_is("");
    // A second, idle run: still nothing.
    env.run(["maintain", "-q", "--claude-bin"])
        .arg(fake_claude())
        .succeeds()
        .stdout_is("")
        .stderr_is("");

    // An error: on stderr, with the error's own exit code (5: no claude).
    for i in 5..10 {
        env.append(&["--user", "U1"], &format!("message {i}"));
    }
    env.run([
        "maintain",
        "-q",
        "--only",
        "compact",
        "--claude-bin",
        "/nonexistent/claude",
    ])
    .fails(Exit::ClaudeNotFound)
    .stdout_is("")
    .stderr_has("compact: U1:")
    .stderr_has("does not exist");
}

#[test]
fn a_dry_run_estimates_the_llm_calls_it_lists() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm":{"contextWindow":2},"compacting":{"threshold":3}}"#);
    for user in ["U1", "U2"] {
        for day in [20, 21] {
            env.run(["append", "--user", user, "--ts"])
                .arg(format!("2026-03-{day}T10:00:00Z"))
                .args(["--", "hello"])
                .succeeds();
        }
    }
    env.append(&["--user", "U1"], "a");
    env.append(&["--user", "U1"], "b");
    let now = "2026-03-22T12:00:00Z";
    let out = env
        .run(["--json", "maintain"])
        .args(["--dry-run", "--only", "compact,daily", "--now", now])
        .succeeds();
    let report = out.json();
    // U1 over the threshold: 1 compaction; days 20 and 21 of U1 and U2: 4 dailies.
    assert_eq!(report["llmCallsEstimated"], 5, "{report}");
    assert_eq!(report["llmCalls"], 0);
    let text = env
        .run([
            "maintain",
            "--dry-run",
            "--only",
            "compact,daily",
            "--now",
            now,
        ])
        .output();
    assert!(
        stdout_of(&text).contains("about 5 for the work listed"),
        "{}",
        stdout_of(&text)
    );
    assert_eq!(env.claude_calls(), 0);
}

// --- 27: a sender's ledger lives in a folder of its own ---------------------------

#[test]
fn a_ledger_where_earlier_versions_kept_it_counts_and_moves_to_its_own_folder() {
    let env = TestEnv::new();
    let legacy = env.sessions_dir().join("costs/users/U1.jsonl");
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
    std::fs::write(&legacy, format!("{{\"ts\":\"{now}\",\"costUsd\":1.5}}\n")).unwrap();
    env.write_config(r#"{"budget": {"dailyUsd": 1.0}}"#);
    // Today's 1.50 in the old place is over the 1.00 a day.
    env.ask(["--user", "U1", "--", "hello"])
        .fails(Exit::OverBudget);
    assert_eq!(env.claude_calls(), 0);
    assert!(
        !legacy.exists(),
        "the old ledger is left in the flat folder"
    );
    let moved = env.sessions_dir().join("costs/per-user/U1/asks.jsonl");
    assert!(
        std::fs::read_to_string(&moved).unwrap().contains("1.5"),
        "not moved to {}",
        moved.display()
    );
    // Another sender's old ledger stays where it is until they are seen.
    env.ask(["--user", "U2", "--", "hello"]).succeeds();
    assert!(
        env.sessions_dir()
            .join("costs/per-user/U2/asks.jsonl")
            .exists()
    );
}

// --- 14: ask --json says how the reply came about -----------------------------

#[test]
fn ask_json_flags_a_replay_a_conflict_and_a_budget_stop() {
    let env = TestEnv::new();
    let first = env
        .ask(["--json", "--user", "U1", "--msg-id", "m1", "--", "hello"])
        .succeeds()
        .json();
    assert_eq!(first["replayed"], false, "{first}");
    assert_eq!(first["conflict"], false);
    assert_eq!(first["budgetStopped"], false);

    let again = env
        .ask(["--json", "--user", "U1", "--msg-id", "m1", "--", "hello"])
        .succeeds()
        .stderr_is("");
    let again_json = again.json();
    assert_eq!(again_json["replayed"], true, "{again_json}");
    assert_eq!(again_json["conflict"], false);
    assert_eq!(again_json["reply"], "fake reply to: hello");

    // The same id, other text: not silently the old reply.
    let reused = env
        .ask([
            "--json",
            "--user",
            "U1",
            "--msg-id",
            "m1",
            "--",
            "something else",
        ])
        .succeeds();
    let reused_json = reused.json();
    assert_eq!(reused_json["conflict"], true, "{reused_json}");
    assert_eq!(reused_json["replayed"], true);
    assert!(
        reused
            .stderr()
            .contains("already logged with different text"),
        "{}",
        reused.stderr()
    );
    assert_eq!(env.claude_calls(), 1);

    env.write_config(r#"{"budget": {"dailyUsd": 0.01}}"#);
    let stopped = env
        .ask(["--json", "--user", "U1", "--msg-id", "m2", "--", "more"])
        .fails(Exit::OverBudget);
    let stopped_json = stopped.json();
    assert_eq!(stopped_json["budgetStopped"], true, "{stopped_json}");
    assert_eq!(stopped_json["replayed"], false);
}

// --- 15: append --reply-to ----------------------------------------------------

#[test]
fn append_reply_to_logs_replies_as_ask_does_and_redelivery_works() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--msg-id", "1711.1", "--", "hi"])
        .succeeds();
    env.run([
        "append",
        "--user",
        "U1",
        "--role",
        "assistant",
        "--reply-to",
        "1711.1",
    ])
    .args(["--", "Hello!"])
    .succeeds();
    let log = env.messages("U1");
    assert_eq!(log[1]["replyTo"], "1711.1", "{log:?}");
    // The same answer again (a broker retrying): logged once.
    env.run(["--json", "append", "--user", "U1", "--role", "assistant"])
        .args(["--reply-to", "1711.1", "--", "Hello!"])
        .succeeds()
        .stdout_has("\"duplicate\":true");
    assert_eq!(env.messages("U1").len(), 2);
    // A redelivery through ask is answered from the log.
    let replay = env
        .ask(["--json", "--user", "U1", "--msg-id", "1711.1", "--", "hi"])
        .succeeds()
        .json();
    assert_eq!(replay["reply"], "Hello!", "{replay}");
    assert_eq!(replay["replayed"], true);
    assert_eq!(env.claude_calls(), 0);
    // Only an assistant line answers.
    env.run(["append", "--user", "U1", "--reply-to", "1711.1", "--", "x"])
        .fails(Exit::Usage)
        .stderr_has("--role assistant");
}

// --- 4 and 5 on the command line: what the parser accepts ---------------------

#[test]
fn a_negative_id_is_accepted_wherever_an_id_goes() {
    let env = TestEnv::new();
    env.run([
        "append", "--user", "-42", "--msg-id", "-7", "--thread", "-1", "--group", "-100",
    ])
    .args(["--", "hi"])
    .succeeds();
    env.run([
        "append",
        "--user",
        "-42",
        "--role",
        "assistant",
        "--reply-to",
        "-7",
        "--",
        "yo",
    ])
    .succeeds();
    let log = env.messages("-42");
    assert_eq!(log[0]["msgId"], "-7");
    assert_eq!(log[0]["threadId"], "-1");
    assert_eq!(log[0]["groupId"], "-100");
    assert_eq!(log[1]["replyTo"], "-7");
    for args in [
        &["session", "status", "--user", "-42"][..],
        &["session", "show", "-u", "-42"],
        &["context", "-u", "-42"],
        &["compact", "--user", "-42", "--dry-run"],
    ] {
        env.run(args).succeeds();
    }
    // A real flag after --user is still a flag (no value given).
    env.run(["session", "show", "--user", "--archive"])
        .fails(Exit::Usage);
}

/// In chat, `/session clear` from somebody with nothing stored answers so,
/// and makes no lock file for them.
#[test]
fn chat_clear_from_a_stranger_makes_no_lock_file() {
    let env = TestEnv::new();
    env.append(&["--user", "U1"], "hi");
    env.ask(["--user", "U2", "--", "/session clear"])
        .succeeds()
        .stdout_has("no conversation of ours");
    let strangers: Vec<_> = tree(&env.sessions_dir())
        .into_keys()
        .filter(|p| p.contains("U2"))
        .collect();
    assert!(strangers.is_empty(), "{strangers:?}");
}

// --- issue 25, 1: an unknown flag is an error, not the message ---------------

/// `ask --user U1 --stram -- hi` sent `--stram -- hi` to claude and into
/// memory; `--msgid 5` lost redelivery safety; `--conversaton C1` put a
/// group message into a private log. Any token before `--` that looks like
/// a flag and is not one is a usage error naming it, with a suggestion,
/// and nothing is stored or called.
#[test]
fn an_unknown_flag_before_the_separator_is_a_usage_error_naming_it() {
    let env = TestEnv::new();
    env.append(&["--user", "U1"], "first");
    let before = tree(&env.sessions_dir());
    for (args, named, suggested) in [
        (
            &["ask", "--user", "U1", "--stram", "--", "hi"][..],
            "--stram",
            "--stream",
        ),
        (
            &["ask", "--user", "U1", "--msgid", "5", "--", "hi"],
            "--msgid",
            "--msg-id",
        ),
        (
            &["ask", "--user", "U1", "--conversaton", "C1", "--", "hi"],
            "--conversaton",
            "--conversation",
        ),
        (
            &["ask", "--user", "U1", "hi", "--stram"],
            "--stram",
            "--stream",
        ),
        (&["ask", "--usr", "U1", "--", "hi"], "--usr", "--user"),
        (
            &["append", "--user", "U1", "--rol", "assistant", "--", "hi"],
            "--rol",
            "--role",
        ),
        (&["append", "--usr", "U1", "--", "hi"], "--usr", "--user"),
        (
            &["append", "--user", "U1", "hello", "--msgid", "5"],
            "--msgid",
            "--msg-id",
        ),
        (
            &["context", "--user", "U1", "--windw", "5"],
            "--windw",
            "--window",
        ),
    ] {
        let run = if args[0] == "ask" {
            env.ask(&args[1..])
        } else {
            env.run(args)
        };
        run.fails(Exit::Usage)
            .stderr_has(&format!("'{named}'"))
            .stderr_has(&format!("'{suggested}'"));
    }
    // A text that starts with `-` is an error too before `--` …
    env.run(["append", "--user", "U1", "-5 degrees"])
        .fails(Exit::Usage)
        .stderr_has("--");
    assert_eq!(
        tree(&env.sessions_dir()),
        before,
        "a refused command changed the state dir"
    );
    assert_eq!(env.claude_calls(), 0, "a refused ask called claude");
    // … and is the message after it, or on stdin.
    env.append(&["--user", "U1"], "--stram -5 degrees");
    env.run(["append", "--user", "U1"])
        .stdin("-x on stdin")
        .succeeds();
    let texts: Vec<String> = env
        .messages("U1")
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(texts, ["first", "--stram -5 degrees", "-x on stdin"]);
}

/// `--help` says where a text that starts with `-` goes.
#[test]
fn help_says_a_text_starting_with_a_dash_goes_after_the_separator() {
    let env = TestEnv::new();
    for command in ["ask", "append"] {
        env.run([command, "--help"])
            .succeeds()
            .stdout_has("starts with `-`");
    }
}

// --- issue 25, 5: an operator sees what failed --------------------------------

/// `ask`'s background compaction ran with its output thrown away: a
/// compaction that failed there was seen by nobody. Its failure goes to
/// `logs/claude-session.jsonl` (0600), and `session status` and `doctor` show it.
#[test]
fn a_failed_background_compaction_reaches_the_failure_log_status_and_doctor() {
    let env = TestEnv::new();
    // The wrapper below runs the fake from tests/: a confined claude may
    // run only what its own folder holds, unless told.
    let tests = fake_claude().parent().unwrap().to_owned();
    env.write_config(&format!(
        r#"{{"stm":{{"contextWindow":2}},"compacting":{{"threshold":3}},
            "ask":{{"readablePaths":["{}"]}}}}"#,
        tests.display()
    ));
    for i in 0..5 {
        env.append(&["--user", "U1"], &format!("message {i}"));
    }
    // A claude that answers the reply, then refuses every later call.
    let claude = env.dir.path().join("claude-then-401");
    // In the fake's log folder: a confined claude may write only there.
    let answered = env.claude_log().join("answered");
    crate::common::write_file(
        &claude,
        format!(
            "#!/bin/sh\nif [ -e '{answered}' ]; then\n  \
             FAKE_CLAUDE_IS_ERROR=1 FAKE_CLAUDE_REPLY='Failed to authenticate. API Error: 401 invalid x-api-key' \
             exec '{fake}' \"$@\"\nfi\ntouch '{answered}'\nexec '{fake}' \"$@\"\n",
            answered = answered.display(),
            fake = fake_claude().display()
        )
        .as_bytes(),
    );
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.run(["ask", "--user", "U1", "--claude-bin"])
        .arg(&claude)
        .args(["--", "hi"])
        .succeeds()
        .stdout_has("fake reply to: hi");
    let log = env.state_dir().join("logs/claude-session.jsonl");
    assert!(
        crate::common::wait_for(Duration::from_secs(20), Duration::from_millis(50), || {
            std::fs::read_to_string(&log).is_ok_and(|t| t.ends_with('\n'))
        }),
        "the background compaction's failure was not logged"
    );
    assert_eq!(crate::common::mode_of(&log), 0o600);
    let text = std::fs::read_to_string(&log).unwrap();
    let entry: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(entry["task"], "background compaction");
    assert_eq!(entry["who"], "U1");
    assert_eq!(entry["exit"], Exit::ClaudeFailed.code());
    assert!(entry["error"].as_str().unwrap().contains("401"), "{entry}");

    env.run(["session", "status"])
        .succeeds()
        .stdout_has("background compaction (U1)")
        .stdout_has("401");
    let status = env.run(["--json", "session", "status"]).succeeds().json();
    assert_eq!(status["recentFailures"][0]["task"], "background compaction");
    let doctor = env
        .run(["--json", "doctor", "--claude-bin"])
        .arg(fake_claude())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .output();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "background")
        .unwrap_or_else(|| panic!("no background check: {report}"))
        .clone();
    assert_eq!(check["status"], "warn", "{check}");
    assert!(check["detail"].as_str().unwrap().contains("401"), "{check}");
    // Issue 25: a fix for what failed (exit 6: the credentials), not "fix what it names".
    assert!(
        check["fix"].as_str().unwrap().contains("ANTHROPIC_API_KEY"),
        "{check}"
    );
}

/// With `claude` missing, `maintain -q` printed one error per user and day
/// (78 lines for 13 users × 6 days) on every cron run. After the first
/// failure that every user would meet, the LLM tasks stop and one line
/// says why; the other tasks still run; the failure is logged.
#[test]
fn maintain_stops_its_llm_tasks_after_a_failure_every_user_would_meet() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm":{"contextWindow":2},"compacting":{"threshold":3}}"#);
    for user in ["U1", "U2", "U3", "U4"] {
        for day in 15..21 {
            env.run(["append", "--user", user, "--ts"])
                .arg(format!("2026-03-{day}T10:00:00Z"))
                .args(["--", "hello"])
                .succeeds();
        }
    }
    let done = env
        .run([
            "maintain",
            "-q",
            "--now",
            "2026-03-22T12:00:00Z",
            "--claude-bin",
            "/nonexistent/claude",
        ])
        .fails(Exit::ClaudeNotFound)
        .stdout_is("");
    let stderr = done.stderr();
    assert_eq!(
        stderr.lines().count(),
        1,
        "one line, not one per user: {stderr}"
    );
    assert!(stderr.contains("LLM tasks stopped"), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");

    let report = env
        .run([
            "--json",
            "maintain",
            "--now",
            "2026-03-22T12:00:00Z",
            "--claude-bin",
            "/nonexistent/claude",
        ])
        .fails(Exit::ClaudeNotFound)
        .json();
    assert_eq!(report["errors"], 1, "{report}");
    let tasks = report["tasks"].as_array().unwrap();
    let task = |name: &str| tasks.iter().find(|t| t["task"] == name).unwrap().clone();
    assert!(
        task("daily")["leftForNextRun"].as_u64().unwrap() >= 6,
        "{report}"
    );
    assert_eq!(task("prune")["errors"], serde_json::json!([]));
    assert_eq!(task("stm-expiry")["errors"], serde_json::json!([]));
    let logged =
        std::fs::read_to_string(env.state_dir().join("logs/claude-session.jsonl")).unwrap();
    assert!(logged.contains("maintain compact"), "{logged}");
}

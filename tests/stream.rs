//! `ask --stream` with the fake claude (which prints stream-json events
//! with delays when asked for `--output-format stream-json`): what reaches
//! stdout and when, what is logged, and how failures, timeouts, replays and
//! concurrent deliveries end. The same against the real CLI and a mock of
//! the API is in `tests/real_claude.rs`.

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::Child;
use std::time::Duration;

use crate::common::{
    Exit, TestEnv, event_deltas, event_kinds, exit_of, redelivered_while_streaming, stderr_of,
    stdout_of, stream_events, wait_for, write_file,
};
use serde_json::Value;

/// Six words: six deltas from the fake.
const REPLY: &str = "one two three four five six";

/// `ask --stream --json` spawned with the fake claude, stdout piped.
fn spawn_stream(env: &TestEnv, args: &[&str], envs: &[(&str, &str)]) -> Child {
    env.ask(["--stream", "--json"])
        .args(args)
        .envs(envs)
        .spawn()
}

#[test]
fn the_first_delta_is_out_while_claude_is_still_writing() {
    let env = TestEnv::new();
    let mut child = spawn_stream(
        &env,
        &["--user", "U1", "--msg-id", "m1", "--", "hi"],
        &[
            ("FAKE_CLAUDE_REPLY", REPLY),
            ("FAKE_CLAUDE_CHUNK_DELAY", "0.4"),
        ],
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // Causal, not timed: when the first delta is readable, the reply is
    // neither complete nor logged, and ask is still running.
    let still_running = child.try_wait().unwrap().is_none();
    let logged_then = env.roles("U1");
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();

    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["type"], "delta");
    assert_eq!(first["text"], "one ");
    assert!(still_running, "ask had already finished at the first delta");
    assert_eq!(logged_then, ["user"], "no reply was logged yet");
    assert!(status.success());
    let all = stream_events(&format!("{first}\n{rest}"));
    assert_eq!(event_deltas(&all), REPLY);
    assert_eq!(all.len(), 7, "six deltas and done: {all:?}");
}

#[test]
fn plain_text_pieces_are_flushed_as_they_come() {
    let env = TestEnv::new();
    let mut child = env
        .ask(["--stream", "--user", "U1", "--", "hi"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .env("FAKE_CLAUDE_CHUNK_DELAY", "0.4")
        .spawn();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    // No line break comes until the end: only a flush gets a piece out.
    let n = stdout.read(&mut first).unwrap();
    let still_running = child.try_wait().unwrap().is_none();
    let logged_then = env.roles("U1");
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(&first[..n], b"one ");
    assert!(still_running);
    assert_eq!(logged_then, ["user"]);
    assert_eq!(
        [&first[..n], &rest[..]].concat(),
        format!("{REPLY}\n").as_bytes()
    );
}

#[test]
fn json_lines_are_deltas_then_one_done_and_the_deltas_are_the_logged_reply() {
    let env = TestEnv::new();
    let reply = "Line \"one\"\\ \t tab\nline two — 你好 ";
    let out = env
        .ask(["--stream", "--json", "--user", "U1", "--msg-id", "m1"])
        .args(["--", "hello"])
        .env("FAKE_CLAUDE_REPLY", reply)
        .succeeds();
    let all = stream_events(&out.stdout());
    let kinds = event_kinds(&all);
    assert!(kinds.len() > 2, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"done"));
    assert!(kinds[..kinds.len() - 1].iter().all(|k| *k == "delta"));

    let logged = env.messages("U1");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
    assert_eq!(logged[1]["text"], reply);
    assert_eq!(event_deltas(&all), reply);
    let done = all.last().unwrap();
    assert_eq!(done["reply"], reply);
    assert_eq!(done["user"], "U1");
    assert_eq!(done["replayed"], false);
    assert_eq!(done["compacted"], false);
    assert_eq!(done["costUsd"], 0.0123);
    assert_eq!(done["usage"]["output_tokens"], 7);
    // The usage and cost are logged as without streaming.
    assert_eq!(logged[1]["costUsd"], 0.0123);
    assert_eq!(logged[1]["usage"]["output_tokens"], 7);
    assert_eq!(logged[1]["replyTo"], "m1");
}

#[test]
fn plain_streaming_prints_the_same_bytes_and_logs_the_same_lines_as_without() {
    let streamed = TestEnv::new();
    let whole = TestEnv::new();
    let reply = "first line\nsecond  line ";
    let run = |env: &TestEnv, stream: &str| {
        env.ask([stream, "--user", "U1", "--msg-id", "m1", "--", "hello"])
            .env("FAKE_CLAUDE_REPLY", reply)
            .succeeds()
            .stdout()
    };
    let a = run(&streamed, "--stream");
    let b = run(&whole, "--no-stream");
    assert_eq!(a, b);
    assert_eq!(a, format!("{reply}\n"));
    let strip = |mut m: Value| {
        m.as_object_mut().unwrap().remove("ts");
        m
    };
    let a_lines: Vec<Value> = streamed.messages("U1").into_iter().map(strip).collect();
    let b_lines: Vec<Value> = whole.messages("U1").into_iter().map(strip).collect();
    assert_eq!(a_lines, b_lines);
    // The stream was asked for, the plain call was not.
    let argv = |env: &TestEnv| {
        std::fs::read_to_string(env.claude_log().join("call-1").join("argv")).unwrap()
    };
    assert!(argv(&streamed).contains("stream-json\n--verbose\n--include-partial-messages\n"));
    assert!(!argv(&whole).contains("stream-json"));
}

#[test]
fn a_stream_failing_midway_ends_on_an_error_event_and_logs_no_reply() {
    let env = TestEnv::new();
    let out = env
        .ask(["--stream", "--json", "--user", "U1", "--msg-id", "m1"])
        .args(["--", "hello"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .env("FAKE_CLAUDE_STREAM_FAIL_AFTER", "2")
        .output();
    // A stream cut off midway: a retry may work (exit 75).
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeUnavailable),
        "{}",
        stderr_of(&out)
    );
    let all = stream_events(&stdout_of(&out));
    assert_eq!(event_kinds(&all), ["delta", "delta", "error"]);
    assert_eq!(event_deltas(&all), "one two ");
    let error = &all[2];
    assert_eq!(error["exit"], Exit::ClaudeUnavailable.code());
    assert!(
        error["message"].as_str().unwrap().contains("Stream ended"),
        "{error}"
    );
    assert!(stderr_of(&out).contains("Stream ended"));
    assert_eq!(env.roles("U1"), ["user"], "user line kept, no reply");

    // Plain text: what was printed, a line break, the exit code.
    env.ask(["--stream", "--user", "U1", "--", "again"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .env("FAKE_CLAUDE_STREAM_FAIL_AFTER", "3")
        .fails(Exit::ClaudeUnavailable)
        .stdout_is("one two three \n");
    assert_eq!(env.roles("U1"), ["user", "user"]);
}

#[test]
fn a_final_reply_that_is_not_the_streamed_text_is_an_error() {
    let env = TestEnv::new();
    let out = env
        .ask(["--stream", "--json", "--user", "U1", "--", "hello"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .env("FAKE_CLAUDE_RESULT", "something else entirely")
        .fails(Exit::ClaudeFailed);
    let all = stream_events(&out.stdout());
    assert_eq!(event_kinds(&all).last(), Some(&"error"));
    assert!(!event_kinds(&all).contains(&"done"));
    assert_eq!(env.roles("U1"), ["user"]);
}

#[test]
fn a_result_longer_than_the_stream_prints_the_rest_as_a_delta() {
    let env = TestEnv::new();
    // A program that ignores the stream flag and prints one envelope.
    let out = env
        .ask(["--stream", "--json", "--user", "U1", "--", "hello"])
        .env("FAKE_CLAUDE_FORMAT", "json")
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .succeeds();
    let all = stream_events(&out.stdout());
    assert_eq!(event_kinds(&all), ["delta", "done"]);
    assert_eq!(event_deltas(&all), REPLY);

    // And one printing plain text: streamed line by line.
    let out = env
        .ask(["--stream", "--json", "--user", "U2", "--", "hello"])
        .env("FAKE_CLAUDE_FORMAT", "text")
        .env("FAKE_CLAUDE_REPLY", "line one\nline two")
        .succeeds();
    let all = stream_events(&out.stdout());
    assert_eq!(event_kinds(&all), ["delta", "delta", "done"]);
    assert_eq!(event_deltas(&all), "line one\nline two");
    assert_eq!(env.messages("U2")[1]["text"], "line one\nline two");
}

#[test]
fn a_timeout_midway_kills_claude_and_what_it_started() {
    let env = TestEnv::new();
    let out = env
        .ask(["--stream", "--json", "--timeout", "2", "--user", "U1"])
        .args(["--", "hello"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .env("FAKE_CLAUDE_CHUNK_DELAY", "1.5")
        .env("FAKE_CLAUDE_GRANDCHILD", "1")
        .timeout(Duration::from_secs(30))
        .output();
    let pid_file = env.claude_log().join("grandchild.pid");
    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dead = wait_for(Duration::from_secs(3), Duration::from_millis(50), || {
        std::fs::read_to_string(format!("/proc/{grandchild}/stat")).map_or(true, |stat| {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next());
            matches!(state, Some("Z" | "X"))
        })
    });
    if !dead {
        // SAFETY: kill(2) on a pid this test's fake claude started.
        unsafe {
            libc::kill(grandchild, libc::SIGKILL);
        }
    }
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeTimeout),
        "{}",
        stderr_of(&out)
    );
    assert!(dead, "claude's child {grandchild} was killed too");
    let all = stream_events(&stdout_of(&out));
    let kinds = event_kinds(&all);
    assert_eq!(kinds.last(), Some(&"error"), "{kinds:?}");
    assert!(kinds.contains(&"delta"), "a delta came before the timeout");
    assert!(!kinds.contains(&"done"));
    assert_eq!(all.last().unwrap()["exit"], Exit::ClaudeTimeout.code());
    assert_eq!(env.roles("U1"), ["user"]);
}

#[test]
fn replays_commands_and_budget_notes_have_the_same_shape() {
    let env = TestEnv::new();
    env.ask(["--stream", "--json", "--user", "U1", "--msg-id", "m1"])
        .args(["--", "hello"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .succeeds();

    let replay = env
        .ask(["--stream", "--json", "--user", "U1", "--msg-id", "m1"])
        .args(["--", "hello"])
        .succeeds();
    let all = stream_events(&replay.stdout());
    assert_eq!(event_kinds(&all), ["delta", "done"]);
    assert_eq!(event_deltas(&all), REPLY);
    assert_eq!(all[1]["replayed"], true);
    assert_eq!(all[1]["reply"], REPLY);
    assert_eq!(env.claude_calls(), 1, "a replay makes no call");

    let command = env
        .ask([
            "--stream",
            "--json",
            "--user",
            "U1",
            "--",
            "/session status",
        ])
        .succeeds();
    let all = stream_events(&command.stdout());
    assert_eq!(event_kinds(&all), ["delta", "done"]);
    assert_eq!(all[1]["command"], true);
    assert_eq!(event_deltas(&all), all[1]["reply"].as_str().unwrap());

    write_file(
        &env.sessions_dir().join("config.json"),
        br#"{"budget": {"dailyUsd": 0.01, "message": "Budget used up."}}"#,
    );
    let refused = env
        .ask(["--stream", "--json", "--user", "U1", "--", "more"])
        .fails(Exit::OverBudget);
    let all = stream_events(&refused.stdout());
    assert_eq!(
        event_kinds(&all),
        ["delta", "done"],
        "no error event after done"
    );
    assert_eq!(event_deltas(&all), "Budget used up.");
    assert_eq!(env.claude_calls(), 1);

    // Plain text: the same bytes as without streaming.
    let plain = env
        .ask(["--stream", "--user", "U1", "--msg-id", "m1", "--", "hello"])
        .output();
    assert_eq!(stdout_of(&plain), format!("{REPLY}\n"));
}

#[test]
fn a_redelivery_while_the_first_streams_waits_and_prints_the_final_reply() {
    let env = TestEnv::new();
    let envs = [
        ("FAKE_CLAUDE_REPLY", REPLY),
        ("FAKE_CLAUDE_CHUNK_DELAY", "0.3"),
    ];
    let args = ["--user", "U1", "--msg-id", "m1", "--", "hello"];
    let (first_events, second_events) =
        redelivered_while_streaming(spawn_stream(&env, &args, &envs), || {
            spawn_stream(&env, &args, &envs)
        });
    assert_eq!(event_deltas(&first_events), REPLY);
    assert_eq!(event_kinds(&second_events), ["delta", "done"]);
    assert_eq!(event_deltas(&second_events), REPLY);
    assert_eq!(env.claude_calls(), 1, "one claude call for two deliveries");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
}

#[test]
fn config_ask_stream_makes_it_the_default_and_no_stream_turns_it_off() {
    let env = TestEnv::new();
    write_file(
        &env.sessions_dir().join("config.json"),
        br#"{"ask": {"stream": true}}"#,
    );
    let out = env
        .ask(["--json", "--user", "U1", "--", "hello"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .succeeds();
    let all = stream_events(&out.stdout());
    assert_eq!(event_kinds(&all).len(), 7, "streamed by config: {all:?}");

    let out = env
        .ask(["--json", "--no-stream", "--user", "U1", "--", "hello"])
        .env("FAKE_CLAUDE_REPLY", REPLY)
        .succeeds();
    let all = stream_events(&out.stdout());
    assert_eq!(all.len(), 1);
    assert_eq!(all[0]["reply"], REPLY);
    assert!(all[0].get("type").is_none(), "the plain --json object");

    // The last of --stream / --no-stream wins.
    let out = env
        .ask([
            "--json",
            "--no-stream",
            "--stream",
            "--user",
            "U1",
            "--",
            "hi",
        ])
        .output();
    assert_eq!(
        stream_events(&stdout_of(&out)).last().unwrap()["type"],
        "done"
    );
}

#[test]
fn bad_input_with_stream_json_is_an_error_event_too() {
    let env = TestEnv::new();
    let out = env
        .ask(["--stream", "--json", "--user", "U1", "--", ""])
        .fails(Exit::Usage);
    let all = stream_events(&out.stdout());
    assert_eq!(event_kinds(&all), ["error"]);
    assert_eq!(all[0]["exit"], Exit::Usage.code());
    assert!(!out.stderr().is_empty());
}

#[test]
fn a_broker_that_stops_reading_still_gets_the_reply_logged() {
    let env = TestEnv::new();
    let mut child = spawn_stream(
        &env,
        &["--user", "U1", "--msg-id", "m1", "--", "hi"],
        &[
            ("FAKE_CLAUDE_REPLY", REPLY),
            ("FAKE_CLAUDE_CHUNK_DELAY", "0.2"),
        ],
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    assert!(status.success(), "a closed stdout is not a failure");
    let logged = env.messages("U1");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
    assert_eq!(logged[1]["text"], REPLY);
}

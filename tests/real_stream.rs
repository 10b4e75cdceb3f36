//! `ask --stream` end to end: the real Claude Code CLI (the pinned npm
//! package) against the loopback mock of the Messages API streaming its
//! answer in chunks with delays between them.

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::Child;
use std::time::Duration;

use crate::common::real_claude::{MockApi, RealCli, real_cli_test};
use crate::common::{
    Exit, TestEnv, event_deltas, event_kinds, exit_of, live_processes_with,
    redelivered_while_streaming, stderr_of, stdout_of, stream_events,
};
use serde_json::json;

/// 320 characters: the mock sends text in 16-character deltas, so 20
/// text chunks (and six framing events around them).
fn long_text() -> String {
    let text: String = (0..20).map(|i| format!("piece {i:02} of 20, ")).collect();
    assert_eq!(text.chars().count(), 20 * 16);
    text
}

fn spawn_ask(cli: RealCli, env: &TestEnv, mock: &MockApi, args: &[&str]) -> Child {
    env.real(cli, mock)
        .args(["ask", "--stream", "--json"])
        .args(args)
        .spawn()
}

fn signal(pid: i32, signal: libc::c_int) {
    // SAFETY: kill(2) on the mock this test started.
    unsafe {
        libc::kill(pid, signal);
    }
}

real_cli_test!(the_first_delta_is_out_before_the_mock_sends_its_last_chunk);
fn the_first_delta_is_out_before_the_mock_sends_its_last_chunk(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    let text = long_text();
    // 0.25 s between events: under load, claude may fall a little behind
    // the socket; the stream must still be under way when it prints.
    mock.push(json!({"text": text, "chunk_delay": 0.25}));
    let mock_pid = live_processes_with("cmdline", &mock.dir.path().display().to_string())
        .first()
        .expect("the mock's process")
        .pid;

    let mut child = spawn_ask(
        cli,
        &env,
        &mock,
        &["--user", "U1", "--msg-id", "m1", "--", "hi"],
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // Freeze the mock now. Had it sent its last chunk already, ask would
    // finish and log the reply while the mock is stopped; it does not.
    signal(mock_pid, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(1500));
    let running = child.try_wait().unwrap().is_none();
    let logged_then = env.roles("U1");
    signal(mock_pid, libc::SIGCONT);

    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{stderr}");
    assert!(running, "ask had finished while the mock was stopped");
    assert_eq!(
        logged_then,
        ["user"],
        "no reply logged while the mock was stopped"
    );

    let all = stream_events(&format!("{first}{rest}"));
    let kinds = event_kinds(&all);
    assert_eq!(kinds[0], "delta", "{first}");
    assert_eq!(kinds.last(), Some(&"done"));
    assert_eq!(kinds.iter().filter(|k| **k == "done").count(), 1);
    assert!(kinds[..kinds.len() - 1].iter().all(|k| *k == "delta"));
    assert!(kinds.len() >= 10, "streamed in pieces: {kinds:?}");
    // The deltas are the reply, as logged and as `done` carries it.
    let messages = env.messages("U1");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
    assert_eq!(messages[1]["text"], text.as_str());
    assert_eq!(event_deltas(&all), text);
    let done = all.last().unwrap();
    assert_eq!(done["reply"], text.as_str());
    assert_eq!(done["replayed"], false);
    assert_eq!(done["usage"], messages[1]["usage"]);
    assert_eq!(done["costUsd"], messages[1]["costUsd"]);
    assert_eq!(mock.count(), 1, "one API request");
}

real_cli_test!(a_connection_dropped_midway_is_an_error_event_and_no_reply_line);
fn a_connection_dropped_midway_is_an_error_event_and_no_reply_line(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    // message_start, content_block_start, three text deltas, then the
    // connection goes.
    mock.push(json!({"text": long_text(), "chunk_delay": 0.05, "drop_after": 5}));
    mock.set_default(json!({"text": "an answer to a second request"}));
    let out = env
        .real(cli, &mock)
        .args([
            "ask", "--stream", "--json", "--user", "U1", "--msg-id", "m1",
        ])
        .args(["--", "hi"])
        .output();
    let code = out.status.code();
    // Lost connection: a retry may work.
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeUnavailable),
        "{}",
        stderr_of(&out)
    );
    let all = stream_events(&stdout_of(&out));
    let kinds = event_kinds(&all);
    assert_eq!(kinds.last(), Some(&"error"), "{all:?}");
    assert!(!kinds.contains(&"done"));
    assert_eq!(
        event_deltas(&all),
        long_text()[..48],
        "what came before the drop"
    );
    let error = all.last().unwrap();
    assert_eq!(error["exit"].as_i64(), code.map(i64::from));
    assert!(!error["message"].as_str().unwrap().is_empty());
    assert_eq!(env.roles("U1"), ["user"], "user line kept, no reply");
    // claude did not ask again without streaming (its fallback), which
    // would end on another answer than the one shown. 2.1.332 asks again
    // streaming (an `api_retry`): the second answer reaches neither the
    // chat (the deltas above) nor memory.
    let asked = if cli == RealCli::OLDEST { 1 } else { 2 };
    assert_eq!(mock.count(), asked);
}

real_cli_test!(a_timeout_midway_kills_claude_and_everything_it_started);
fn a_timeout_midway_kills_claude_and_everything_it_started(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    // Claude starts within the timeout even on a loaded machine, and the
    // stream (26 events, 3 s apart) does not end within it.
    mock.push(json!({"text": long_text(), "chunk_delay": 3.0}));
    let out = env
        .real(cli, &mock)
        .args([
            "ask",
            "--stream",
            "--json",
            "--timeout",
            "25",
            "--user",
            "U1",
        ])
        .args(["--", "hi"])
        .timeout(Duration::from_secs(90))
        .output();
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeTimeout),
        "{}",
        stderr_of(&out)
    );
    let all = stream_events(&stdout_of(&out));
    let kinds = event_kinds(&all);
    assert!(kinds.contains(&"delta"), "a delta came before: {kinds:?}");
    assert_eq!(kinds.last(), Some(&"error"));
    assert_eq!(all.last().unwrap()["exit"], Exit::ClaudeTimeout.code());
    assert_eq!(env.roles("U1"), ["user"]);
    // Nothing that was given the mock's address is still running.
    let left = live_processes_with("environ", &mock.base_url());
    assert!(left.is_empty(), "left running: {left:?}");
}

real_cli_test!(two_concurrent_deliveries_of_one_id_make_one_request_and_print_the_same_text);
fn two_concurrent_deliveries_of_one_id_make_one_request_and_print_the_same_text(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    let text = long_text();
    mock.push(json!({"text": text, "chunk_delay": 0.1}));
    mock.set_default(json!({"text": "a second request was made"}));
    let args = ["--user", "U1", "--msg-id", "m1", "--", "hi"];

    let (first_events, second_events) =
        redelivered_while_streaming(spawn_ask(cli, &env, &mock, &args), || {
            spawn_ask(cli, &env, &mock, &args)
        });
    assert_eq!(event_deltas(&first_events), text);
    assert_eq!(event_deltas(&second_events), text);
    assert_eq!(event_kinds(&second_events), ["delta", "done"]);
    assert_eq!(mock.count(), 1, "one API request for two deliveries");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
}

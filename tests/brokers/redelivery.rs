//! Platform redeliveries: the same message id twice, even at the same
//! instant, after a failure, after compaction, while the first call runs.

use super::*;

#[test]
fn append_with_a_known_msg_id_is_a_duplicate_and_not_logged_twice() {
    let env = TestEnv::new();
    let append = |json: &[&str], id: &str, text: &str| {
        env.run(json)
            .args(["append", "--user", "U1", "--msg-id", id, "--", text])
            .succeeds()
    };
    append(&[], "ev-1", "hello once").stdout_is("");
    // The second append says it is a duplicate.
    append(&[], "ev-1", "hello once").stdout_has("duplicate");
    assert_eq!(env.read_lines("U1").len(), 1, "{:?}", env.read_lines("U1"));

    let value = append(&["--json"], "ev-1", "hello once").json();
    assert_eq!(value["duplicate"], true, "{value}");
    assert_eq!(value["appended"], 0, "{value}");
    assert_eq!(env.read_lines("U1").len(), 1);

    // A new id is logged, and says so.
    let fresh = append(&["--json"], "ev-2", "hello twice").json();
    assert_eq!(fresh["duplicate"], false);
    assert_eq!(env.read_lines("U1").len(), 2);
    assert_eq!(env.claude_calls(), 0);
}

#[test]
fn ask_redelivered_after_it_completed_prints_the_same_reply_without_a_call() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--msg-id", "m-1"])
        .env("FAKE_CLAUDE_REPLY", "the one true answer")
        .args(["--", "what is the answer?"])
        .succeeds()
        .stdout_is("the one true answer\n");
    assert_eq!(env.claude_calls(), 1);
    let log_before = env.read_bytes("U1");

    // The fake would answer differently now: a second call would show.
    env.ask(["--user", "U1", "--msg-id", "m-1"])
        .env("FAKE_CLAUDE_REPLY", "a different answer")
        .args(["--", "what is the answer?"])
        .succeeds()
        .stdout_is("the one true answer\n");
    assert_eq!(env.claude_calls(), 1, "a redelivery makes no claude call");
    assert_eq!(
        env.read_bytes("U1"),
        log_before,
        "a redelivery logs nothing new"
    );

    let json = env
        .ask(["--user", "U1", "--msg-id", "m-1", "--output-format", "json"])
        .env("FAKE_CLAUDE_REPLY", "a different answer")
        .args(["--", "what is the answer?"])
        .succeeds();
    assert_eq!(json.json()["reply"], "the one true answer");
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_bytes("U1"), log_before);
}

#[test]
fn two_simultaneous_deliveries_of_one_message_make_one_call() {
    let env = TestEnv::new();
    let spawn = || {
        env.ask(["--user", "U1", "--msg-id", "race-1", "--", "are you there?"])
            .env("FAKE_CLAUDE_SLEEP", "1")
            .spawn()
    };
    let a = spawn();
    let b = spawn();
    let a = a.wait_with_output().expect("wait for the first ask");
    let b = b.wait_with_output().expect("wait for the second ask");
    let a = exited(a, Exit::Success);
    let b = exited(b, Exit::Success);
    assert_eq!(a.stdout(), "fake reply to: are you there?\n");
    assert_eq!(a.stdout(), b.stdout(), "both print the same reply");
    assert_eq!(env.claude_calls(), 1, "exactly one claude call");
    let messages = env.messages("U1");
    assert_eq!(
        deliveries(&messages, "race-1"),
        (1, 1),
        "one user line and one reply: {messages:?}"
    );
    assert_eq!(messages.len(), 2, "{messages:?}");
}

#[test]
fn redelivery_after_a_failed_attempt_answers_without_logging_the_message_twice() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--", "an earlier message"])
        .succeeds();
    env.ask(["--user", "U1", "--msg-id", "m-7"])
        .env("FAKE_CLAUDE_EXIT", "1")
        .args(["--", "please answer this"])
        .fails(Exit::ClaudeFailed);
    assert_eq!(env.claude_calls(), 2);
    assert_eq!(deliveries(&env.messages("U1"), "m-7"), (1, 0));

    env.ask(["--user", "U1", "--msg-id", "m-7"])
        .env("FAKE_CLAUDE_REPLY", "answered at last")
        .args(["--", "please answer this"])
        .succeeds()
        .stdout_is("answered at last\n");
    assert_eq!(
        env.claude_calls(),
        3,
        "the redelivery calls claude once more"
    );
    let call = env.claude_call(3);
    assert_eq!(call.stdin, "please answer this");
    assert!(
        !call.system_prompt.contains("please answer this"),
        "the message goes as the prompt, not also as context: {:?}",
        call.system_prompt
    );
    assert!(
        call.system_prompt.contains("an earlier message"),
        "the earlier turns are still context: {:?}",
        call.system_prompt
    );
    let messages = env.messages("U1");
    assert_eq!(
        deliveries(&messages, "m-7"),
        (1, 1),
        "the user line once, the reply once: {messages:?}"
    );
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[3]["text"], "answered at last");

    // And now it is answered: one more redelivery is free.
    env.ask(["--user", "U1", "--msg-id", "m-7"])
        .args(["--", "please answer this"])
        .succeeds()
        .stdout_is("answered at last\n");
    assert_eq!(env.claude_calls(), 3);
    assert_eq!(env.messages("U1").len(), 4);
}

#[test]
fn redelivery_is_recognised_after_compaction_moved_the_first_to_the_archive() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {"contextWindow": 0}, "compacting": {"threshold": 2}}"#);
    env.ask(["--user", "U1", "--msg-id", "arch-1"])
        .env("FAKE_CLAUDE_REPLY", "archived answer")
        .args(["--", "remember this"])
        .succeeds();
    assert_eq!(env.claude_calls(), 1);
    env.run(["compact", "--user", "U1", "--force", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_REPLY", "They talked.")
        .succeeds();
    assert_eq!(env.claude_calls(), 2);
    assert!(
        env.messages("U1").is_empty(),
        "compaction with a window of 0 moved everything: {:?}",
        env.messages("U1")
    );
    let archived = env.archived_messages("U1");
    assert_eq!(deliveries(&archived, "arch-1"), (1, 1), "{archived:?}");

    env.ask(["--user", "U1", "--msg-id", "arch-1"])
        .env("FAKE_CLAUDE_REPLY", "a second answer")
        .args(["--", "remember this"])
        .succeeds()
        .stdout_is("archived answer\n");
    assert_eq!(env.claude_calls(), 2, "no claude call for a redelivery");
    assert!(env.messages("U1").is_empty(), "{:?}", env.messages("U1"));

    let dup = env
        .run([
            "--json",
            "append",
            "--user",
            "U1",
            "--msg-id",
            "arch-1",
            "--",
            "remember this",
        ])
        .succeeds();
    assert_eq!(dup.json()["duplicate"], true);
    assert!(env.messages("U1").is_empty());
}

/// An old line appended after the first delivery (an import, `append
/// --ts`) must not hide it from the redelivery lookup.
#[test]
fn a_backdated_line_does_not_hide_a_delivery() {
    let env = TestEnv::new();
    let first = env
        .ask(["--user", "U1", "--msg-id", "m1"])
        .args(["--", "hello"])
        .succeeds();
    env.run([
        "append",
        "--user",
        "U1",
        "--ts",
        "2020-01-01T00:00:00Z",
        "--msg-id",
        "old-1",
        "--",
        "from the old system",
    ])
    .succeeds();
    let again = env
        .ask(["--user", "U1", "--msg-id", "m1"])
        .args(["--", "hello"])
        .succeeds();
    assert_eq!(env.claude_calls(), 1, "the redelivery made no call");
    assert_eq!(again.stdout(), first.stdout());
    assert_eq!(env.messages("U1").len(), 3, "nothing logged twice");
    // The same backfill delivered twice is logged once.
    for _ in 0..2 {
        env.run([
            "append",
            "--user",
            "U1",
            "--ts",
            "2020-01-02T00:00:00Z",
            "--msg-id",
            "old-2",
            "--",
            "older still",
        ])
        .succeeds();
    }
    assert_eq!(env.messages("U1").len(), 4);
}

/// The first delivery of m-1 (failing, slowly), then five redeliveries
/// started while it runs; `retry_env` is the fake claude's for them.
fn first_fails_and_five_wait(env: &TestEnv, retry_env: &[(&str, &str)]) -> Vec<Output> {
    let spawn = |extra: &[(&str, &str)]| {
        env.ask(["--user", "U1", "--msg-id", "m-1", "--", "hello"])
            .envs(extra)
            .spawn()
    };
    let first = spawn(&[
        ("FAKE_CLAUDE_SLEEP", "1"),
        ("FAKE_CLAUDE_EXIT", "1"),
        ("FAKE_CLAUDE_STDERR", "boom"),
    ]);
    assert!(crate::common::wait_for(
        std::time::Duration::from_secs(10),
        std::time::Duration::from_millis(20),
        || env.claude_calls() == 1
    ));
    let waiting: Vec<_> = (0..5).map(|_| spawn(retry_env)).collect();
    let first = first.wait_with_output().unwrap();
    assert_ne!(exit_of(&first), Some(Exit::Success));
    waiting
        .into_iter()
        .map(|child| child.wait_with_output().unwrap())
        .collect()
}

#[test]
fn redeliveries_waiting_on_a_failed_first_call_are_served_by_one_retry() {
    let env = TestEnv::new();
    for out in first_fails_and_five_wait(&env, &[]) {
        exited(out, Exit::Success).stdout_is("fake reply to: hello\n");
    }
    assert_eq!(env.claude_calls(), 2, "the failed call and one retry");
    let (logged, replies) = deliveries(&env.messages("U1"), "m-1");
    assert_eq!((logged, replies), (1, 1));
}

#[test]
fn a_failed_retry_is_shared_by_the_redeliveries_that_waited_for_it() {
    let env = TestEnv::new();
    let outs = first_fails_and_five_wait(
        &env,
        &[
            ("FAKE_CLAUDE_EXIT", "1"),
            ("FAKE_CLAUDE_STDERR", "still down"),
        ],
    );
    for out in outs {
        exited(out, Exit::ClaudeFailed);
    }
    assert_eq!(
        env.claude_calls(),
        2,
        "the failed call and one failed retry, not one per redelivery"
    );
    // A later redelivery (claude back) is answered.
    env.ask(["--user", "U1", "--msg-id", "m-1"])
        .args(["--", "hello"])
        .succeeds();
    assert_eq!(env.claude_calls(), 3);
}

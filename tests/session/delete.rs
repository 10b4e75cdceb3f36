//! `session delete --user U --msg-id ID` (issue 25.10): the message and
//! the reply that answers it leave the live log and the archives; a second
//! delete says it is gone and exits 0; search no longer finds either.

use super::*;
use crate::common::line_with;

fn texts(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn delete_removes_the_message_and_its_reply_from_the_log_and_the_archives() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    for (id, text) in [
        ("m1", "first secret"),
        ("m2", "second secret"),
        ("m3", "third secret"),
    ] {
        env.ask(["--user", "U1", "--msg-id", id, "--", text])
            .succeeds();
    }
    env.append(&["--user", "U2", "--msg-id", "m1"], "U2's own m1 stays");
    // Window 3: m1 and its reply, and m2's question go to the archive.
    compact_force(&env, "U1");
    assert_eq!(env.archived_lines("U1").len(), 3);
    env.run(["session", "search", "secret"])
        .succeeds()
        .stdout_has("first secret")
        .stdout_has("fake reply to: third secret");

    // In the archive: the message and its reply.
    let report = env
        .run([
            "--json", "session", "delete", "--user", "U1", "--msg-id", "m1",
        ])
        .succeeds()
        .json();
    assert_eq!(report["deleted"], true, "{report}");
    assert_eq!(report["messages"], 1);
    assert_eq!(report["replies"], 1);
    assert_eq!(texts(&env.archived_lines("U1")), ["second secret"]);
    // Split: the question archived, the reply in the live log.
    env.run(["session", "delete", "--user", "U1", "--msg-id", "m2"])
        .succeeds()
        .stdout_has("deleted message \"m2\" of U1 and 1 reply(ies), from 2 file(s)");
    assert!(env.archived_lines("U1").is_empty());
    // In the live log.
    env.run(["session", "delete", "--user", "U1", "--msg-id", "m3"])
        .succeeds();
    assert_eq!(
        env.read_lines("U1"),
        Vec::<String>::new(),
        "nothing of U1 is left"
    );
    assert_eq!(texts(&env.read_lines("U2")), ["U2's own m1 stays"]);

    // Again: gone, exit 0, nothing changed.
    let before = tree(&env.sessions_dir());
    env.run(["session", "delete", "--user", "U1", "--msg-id", "m1"])
        .succeeds()
        .stdout_has("already deleted");
    let again = env
        .run([
            "--json", "session", "delete", "--user", "U1", "--msg-id", "m1",
        ])
        .succeeds()
        .json();
    assert_eq!(again["deleted"], false);
    assert_eq!(again["messages"], 0);
    assert_eq!(tree(&env.sessions_dir()), before);
    // Search finds neither the messages nor the replies.
    env.run(["session", "search", "secret"])
        .succeeds()
        .stdout_lacks("secret");
    // A person with nothing stored is exit 9, as for the other admin commands.
    env.run(["session", "delete", "--user", "ghost", "--msg-id", "m1"])
        .fails(Exit::UnknownUser);
}

#[test]
fn delete_in_a_conversation_takes_only_that_senders_message_and_the_reply_to_them() {
    let env = TestEnv::new();
    for (user, id, text) in [("U1", "g1", "from one"), ("U2", "g2", "from two")] {
        env.ask([
            "--user",
            user,
            "--conversation",
            "C1",
            "--msg-id",
            id,
            "--",
            text,
        ])
        .succeeds();
    }
    // Another sender's id is not the one named.
    env.run([
        "session",
        "delete",
        "--user",
        "U2",
        "--conversation",
        "C1",
        "--msg-id",
        "g1",
    ])
    .succeeds()
    .stdout_has("nothing changed");
    let report = env
        .run([
            "--json",
            "session",
            "delete",
            "--user",
            "U1",
            "--conversation",
            "C1",
            "--msg-id",
            "g1",
        ])
        .succeeds()
        .json();
    assert_eq!(report["conversation"], "C1");
    assert_eq!(
        (report["messages"].as_u64(), report["replies"].as_u64()),
        (Some(1), Some(1))
    );
    let left = env.read_lines("#C1");
    assert_eq!(texts(&left), ["from two", "fake reply to: from two"]);
}

/// The seed logs an answer without `replyTo`, right after the question:
/// that answer goes with it.
#[test]
fn delete_takes_a_seed_answer_without_reply_to_that_follows_the_message() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[
            line_with(
                "2026-03-01T10:00:00Z",
                "user",
                "keep me",
                &[("msgId", "s0")],
            ),
            line_with(
                "2026-03-01T10:01:00Z",
                "user",
                "unsend me",
                &[("msgId", "s1")],
            ),
            line("2026-03-01T10:01:05Z", "assistant", "answer to unsend me"),
            line("2026-03-01T10:02:00Z", "assistant", "a later note"),
        ],
    );
    env.run(["session", "delete", "--user", "U1", "--msg-id", "s1"])
        .succeeds();
    assert_eq!(texts(&env.read_lines("U1")), ["keep me", "a later note"]);
}

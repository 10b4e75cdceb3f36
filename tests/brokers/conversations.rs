//! Conversations and people never share files (issue 13, point 1), and
//! group data of the previous layout moves on first touch.

use super::*;

/// `stm/#<key>`: where a group or thread conversation keeps its log.
fn conversation_messages(env: &TestEnv, key: &str) -> Vec<Value> {
    env.messages(&format!("#{key}"))
}

#[test]
fn a_conversation_named_like_a_user_never_reaches_that_users_memory() {
    let env = TestEnv::new();
    env.run(["append", "--user", "bob", "--", "vault code 4242"])
        .succeeds();
    env.ask(["--user", "mallory", "--conversation", "bob"])
        .args(["--", "what do you know?"])
        .succeeds();
    let call = env.claude_call(1);
    assert!(
        !call.system_prompt.contains("4242"),
        "bob's private log reached mallory's prompt: {:?}",
        call.system_prompt
    );
    let bob = env.messages("bob");
    assert_eq!(
        bob.len(),
        1,
        "mallory's turn was written into bob's log: {bob:?}"
    );
    assert_eq!(conversation_messages(&env, "bob").len(), 2);

    env.run(["context", "--conversation", "bob", "--user", "mallory"])
        .succeeds()
        .stdout_lacks("4242");
    let show = env
        .run(["session", "show", "--conversation", "bob"])
        .output();
    assert!(!stdout_of(&show).contains("4242"), "{}", stdout_of(&show));
    // And the other way: bob's own context holds nothing of the conversation.
    let own = env.run(["context", "--user", "bob"]).output();
    assert!(
        !stdout_of(&own).contains("what do you know"),
        "{}",
        stdout_of(&own)
    );
}

/// A group log as the previous version wrote it: `stm/<key>/` with every
/// user line naming its sender, and a membership file per sender.
fn legacy_group(env: &TestEnv, key: &str) {
    let lines = [
        r#"{"ts":"2026-03-01T10:00:00Z","role":"user","text":"legacy hello from U1","userId":"U1","msgId":"g-1"}"#,
        r#"{"ts":"2026-03-01T10:00:01Z","role":"assistant","text":"legacy reply","replyTo":"g-1"}"#,
        r#"{"ts":"2026-03-01T10:01:00Z","role":"user","text":"legacy hello from U2","userId":"U2","msgId":"g-2"}"#,
    ];
    write_file(
        &env.messages_path(key),
        format!("{}\n", lines.join("\n")).as_bytes(),
    );
    write_file(
        &env.sessions_dir()
            .join("summaries")
            .join(key)
            .join("daily/2026-03-01.md"),
        b"---\nuser_id: G\n---\nLEGACY-DAILY\n",
    );
    write_file(
        &env.archive_dir(key).join("messages-2026-02-01.jsonl.gz"),
        &{
            use std::io::Write as _;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(b"{\"ts\":\"2026-02-01T10:00:00Z\",\"role\":\"user\",\"text\":\"LEGACY-ARCHIVED\",\"userId\":\"U1\"}\n")
                .unwrap();
            gz.finish().unwrap()
        },
    );
    for sender in ["U1", "U2"] {
        write_file(
            &env.sessions_dir()
                .join("memberships")
                .join(sender)
                .join(key),
            b"",
        );
    }
}

fn assert_migrated(env: &TestEnv, key: &str) {
    let sessions = env.sessions_dir();
    for old in [
        sessions.join("stm").join(key),
        sessions.join("summaries").join(key),
        sessions.join("archive").join(key),
        sessions.join("memberships/U1").join(key),
    ] {
        assert!(!old.exists(), "{} is left behind", old.display());
    }
    let new = format!("#{key}");
    assert!(
        sessions
            .join("summaries")
            .join(&new)
            .join("daily/2026-03-01.md")
            .is_file()
    );
    assert!(
        sessions
            .join("archive")
            .join(&new)
            .join("messages-2026-02-01.jsonl.gz")
            .is_file()
    );
    assert!(sessions.join("memberships/U1").join(&new).is_file());
    assert!(sessions.join("memberships/U2").join(&new).is_file());
}

#[test]
fn group_data_of_the_previous_layout_moves_on_first_touch_with_nothing_lost() {
    let env = TestEnv::new();
    legacy_group(&env, "G1");
    env.ask(["--user", "U3", "--conversation", "G1"])
        .args(["--", "and me"])
        .succeeds();
    let call = env.claude_call(1);
    assert!(
        call.system_prompt.contains("legacy hello from U2"),
        "the old group log is still the group's context: {:?}",
        call.system_prompt
    );
    let lines = conversation_messages(&env, "G1");
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0]["text"], "legacy hello from U1");
    assert_migrated(&env, "G1");
    // An erase of U1 still finds their lines through the moved membership.
    env.run(["session", "clear", "--user", "U1", "--all", "--yes"])
        .succeeds();
    let left = conversation_messages(&env, "G1");
    assert!(
        left.iter().all(|m| m["userId"] != "U1"),
        "U1's group lines survived their erase: {left:?}"
    );
}

#[test]
fn maintain_moves_group_data_of_the_previous_layout_and_finishes_a_killed_move() {
    let env = TestEnv::new();
    legacy_group(&env, "G1");
    legacy_group(&env, "G2");
    // A move killed midway: G2's archive already moved, the rest not.
    let sessions = env.sessions_dir();
    std::fs::rename(sessions.join("archive/G2"), sessions.join("archive/#G2")).unwrap();
    // A person's own log is never taken for a group, even one another
    // user wrote into through the old shared namespace.
    env.run(["append", "--user", "bob", "--", "vault code 4242"])
        .succeeds();
    write_file(&env.sessions_dir().join("memberships/mallory/bob"), b"");
    let before_bob = env.read_bytes("bob");

    for _ in 0..2 {
        env.run(["maintain", "--only", "migrate"]).succeeds();
    }
    assert_migrated(&env, "G1");
    assert_migrated(&env, "G2");
    assert_eq!(conversation_messages(&env, "G2").len(), 3);
    assert_eq!(env.read_bytes("bob"), before_bob, "bob's own log stays his");
    assert!(!sessions.join("stm/#bob").exists());
}

//! The in-chat `/session` commands: answered from disk without claude,
//! never logged, and a person reaches only their own data.

use super::*;

/// U1 with three messages, a profile and a topic of their own.
fn u1_with_a_topic(env: &TestEnv) -> Vec<String> {
    env.write_config(CONFIG);
    let lines = eight_lines("u1");
    env.import("U1", &lines[..3]);
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nLikes oolong tea.\n");
    set_topic(env, "tea", "---\nowner: U1\n---\n\nOolong.\n", None);
    lines[..3].to_vec()
}

#[test]
fn in_chat_help_lists_every_command_and_answers_an_unknown_one() {
    let env = TestEnv::new();
    u1_with_a_topic(&env);
    let help = chat(&env, "U1", "/session help");
    for command in [
        "/session status",
        "/session clear",
        "/session clear all",
        "/session profile",
        "/session forget",
        "/session export",
        "/session help",
    ] {
        assert!(help.contains(command), "{command} in help:\n{help}");
    }
    assert_eq!(
        chat(&env, "U1", "/session frobnicate"),
        help,
        "unknown → help"
    );
    assert_eq!(chat(&env, "U1", "/session"), help, "no action → help");
}

#[test]
fn in_chat_status_is_answered_from_stdin_too_and_memory_is_an_alias() {
    let env = TestEnv::new();
    u1_with_a_topic(&env);
    let status = chat(&env, "U1", "/session status");
    assert!(status.contains('3'), "3 messages: {status}");
    // The text on stdin, as brokers send it, is a command too.
    let out = env
        .ask(["--user", "U1"])
        .stdin("/session status\n")
        .succeeds();
    assert_eq!(out.stdout().trim_end(), status);
    assert_eq!(env.claude_calls(), 0);
    assert_eq!(
        chat(&env, "U1", "/memory status"),
        status,
        "/memory is an alias"
    );
}

#[test]
fn in_chat_profile_and_export_answer_from_disk_and_log_nothing() {
    let env = TestEnv::new();
    let lines = u1_with_a_topic(&env);
    let stm_before = env.read_bytes("U1");
    let profile = chat(&env, "U1", "/session profile");
    assert!(profile.contains("Likes oolong tea."), "{profile}");

    let exported = chat(&env, "U1", "/session export");
    let path = exported_file(&env, "U1", &exported);
    let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["user"], json!("U1"));
    assert_eq!(doc["messages"], Value::Array(parsed(&lines)));

    assert_eq!(env.read_bytes("U1"), stm_before, "nothing logged so far");
    no_command_logged(&env);
}

#[test]
fn in_chat_forget_removes_the_topic_and_its_index_entry() {
    let env = TestEnv::new();
    u1_with_a_topic(&env);
    let forgot = chat(&env, "U1", "/session forget tea");
    assert!(forgot.contains("tea"), "{forgot}");
    assert!(!topic_path(&env, "tea").exists());
    assert!(index_entry(&env, "ltm/topics/tea.md").is_none());
}

#[test]
fn in_chat_clear_archives_the_messages_and_keeps_the_profile() {
    let env = TestEnv::new();
    let lines = u1_with_a_topic(&env);
    let cleared = chat(&env, "U1", "/session clear");
    assert!(cleared.contains('3'), "{cleared}");
    assert!(!env.messages_path("U1").exists());
    assert_eq!(env.archived_lines("U1"), lines);
    assert!(env.profile_path("U1").exists(), "clear keeps the profile");
}

#[test]
fn in_chat_clear_all_leaves_only_budget_amounts_and_no_command_costs_anything() {
    let env = TestEnv::new();
    u1_with_a_topic(&env);
    chat(&env, "U1", "/session clear");
    let erased = chat(&env, "U1", "/session clear all");
    assert!(!erased.is_empty());
    // Only what budgets need stays: amounts and times (issue 13).
    let left: Vec<String> = tree(&env.sessions_dir())
        .into_keys()
        .filter(|k| k.contains("U1") && !"costs/per-user/U1/asks.jsonl".starts_with(k.as_str()))
        .collect();
    assert!(left.is_empty(), "left of U1: {left:?}");
    assert_budget_only(&env, "U1");
    assert_eq!(
        chat(&env, "U1", "/session profile"),
        chat(&env, "U9", "/session profile"),
        "U1 now has no profile, like a stranger"
    );
    no_command_logged(&env);
    assert!(
        !env.stm_dir("U9").exists(),
        "a command alone creates no STM"
    );
    // The erase leaves its mark (issue 13), but no command costs anything.
    let costs = files(&env.sessions_dir().join("costs"));
    assert!(
        costs
            .values()
            .all(|bytes| !String::from_utf8_lossy(bytes).contains("costUsd")),
        "no cost is recorded for a command: {costs:?}"
    );
}

/// U1 with a secret in every place, and U2 beside them.
fn u1_and_u2(env: &TestEnv) {
    env.import(
        "U1",
        &[
            line("2026-03-20T08:00:00Z", "user", "U1SECRET message"),
            line("2026-03-20T08:01:00Z", "assistant", "noted"),
        ],
    );
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nU1SECRET profile.\n");
    set_topic(env, "tea", "---\nowner: U1\n---\n\nU1SECRET tea.\n", None);
    env.import(
        "U2",
        &[line("2026-03-21T08:00:00Z", "user", "hello from two")],
    );
    env.set_profile("U2", "---\ndisplay_name: Two\n---\n\nTwo likes coffee.\n");
}

/// All U1 has, to check that U2's commands leave it as it was.
struct U1Before {
    paths: BTreeMap<String, Option<Vec<u8>>>,
    tea: Vec<u8>,
    tea_entry: Value,
    u1_entry: Value,
}

impl U1Before {
    fn of(env: &TestEnv) -> Self {
        Self {
            paths: paths_of(env, "U1"),
            tea: std::fs::read(topic_path(env, "tea")).unwrap(),
            tea_entry: index_entry(env, "ltm/topics/tea.md").expect("tea indexed"),
            u1_entry: index_entry(env, "ltm/users/U1.md").expect("U1 indexed"),
        }
    }

    #[track_caller]
    fn intact(&self, env: &TestEnv, what: &str) {
        assert!(
            paths_of(env, "U1") == self.paths,
            "{what}: U1's files changed"
        );
        assert_eq!(
            std::fs::read(topic_path(env, "tea")).ok().as_deref(),
            Some(self.tea.as_slice()),
            "{what}: U1's topic changed"
        );
        assert_eq!(
            index_entry(env, "ltm/topics/tea.md"),
            Some(self.tea_entry.clone()),
            "{what}"
        );
        assert_eq!(
            index_entry(env, "ltm/users/U1.md"),
            Some(self.u1_entry.clone()),
            "{what}"
        );
    }
}

#[test]
fn in_chat_forget_of_another_users_note_answers_as_for_a_missing_one() {
    let env = TestEnv::new();
    u1_and_u2(&env);
    let u1 = U1Before::of(&env);
    let theirs = chat(&env, "U2", "/session forget tea");
    let missing = chat(&env, "U2", "/session forget nosuchtopic");
    assert_eq!(
        theirs.replace("tea", "X"),
        missing.replace("nosuchtopic", "X")
    );
    for attempt in [
        "/session forget ../users/U1",
        "/session forget ../topics/tea",
        "/memory forget tea",
    ] {
        chat(&env, "U2", attempt);
    }
    u1.intact(&env, "forget");

    no_command_logged(&env);
}

#[test]
fn in_chat_profile_status_and_export_show_the_users_own_data_whatever_is_named() {
    let env = TestEnv::new();
    u1_and_u2(&env);
    let u1 = U1Before::of(&env);
    for text in [
        "/session profile",
        "/session profile U1",
        "/memory profile --user U1",
    ] {
        let reply = chat(&env, "U2", text);
        assert!(reply.contains("Two likes coffee."), "`{text}`: {reply}");
        assert!(!reply.contains("U1SECRET"), "`{text}`: {reply}");
    }
    let status = chat(&env, "U2", "/session status U1");
    assert_eq!(status, chat(&env, "U2", "/session status"));
    assert!(
        status.contains('1') && !status.contains('2'),
        "U2 has 1 message: {status}"
    );

    for text in ["/session export", "/session export U1"] {
        let reply = chat(&env, "U2", text);
        let path = exported_file(&env, "U2", &reply);
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(!written.contains("U1SECRET"), "`{text}` exported U1's data");
        assert!(
            written.contains("hello from two"),
            "`{text}` exported U2's data"
        );
    }
    assert!(!env.sessions_dir().join("exports/U1").exists());
    u1.intact(&env, "export");

    no_command_logged(&env);
}

#[test]
fn in_chat_clear_and_clear_all_of_a_user_leave_another_alone() {
    let env = TestEnv::new();
    u1_and_u2(&env);
    let u1 = U1Before::of(&env);
    // Naming U1 is no syntax; clear and clear all of U2 leave U1 alone.
    let help = chat(&env, "U2", "/session help");
    assert_eq!(chat(&env, "U2", "/session clear U1"), help);
    assert!(
        env.messages_path("U2").exists(),
        "an unknown form changes nothing"
    );
    u1.intact(&env, "clear U1");
    chat(&env, "U2", "/session clear");
    assert!(
        !env.messages_path("U2").exists(),
        "U2's own STM was cleared"
    );
    u1.intact(&env, "clear");
    chat(&env, "U2", "/session clear all");
    assert!(!env.profile_path("U2").exists(), "U2's own data is erased");
    u1.intact(&env, "clear all");
    no_command_logged(&env);
}

#[test]
fn a_chat_command_spans_one_line_only() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-01T10:00:00Z", "user", "keep me")]);
    env.set_profile("U1", "---\nuser_id: U1\n---\n\nLikes tea.\n");
    let reply = chat(&env, "U1", "/session clear\nall");
    assert!(reply.contains("one line"), "{reply}");
    assert!(
        env.profile_path("U1").exists(),
        "`clear\\nall` is not `clear all`"
    );
    assert_eq!(env.messages("U1").len(), 1, "nor `clear`: nothing was done");
}

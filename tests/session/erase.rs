//! `session clear` and `clear --all` (the erase): what moves to the
//! archive, what is left of an erased user (nothing but budget amounts),
//! and that everyone else stays byte for byte.

use super::*;

#[test]
fn clear_moves_the_short_term_memory_to_the_archive() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = eight_lines("u1");
    env.import("U1", &lines);
    compact_force(&env, "U1");
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nStays.\n");
    let profile_before = std::fs::read(env.profile_path("U1")).unwrap();

    let text = env
        .run(["session", "clear", "--user", "U1", "--yes"])
        .succeeds()
        .stdout();
    assert!(text.contains("3 message(s) moved to the archive"), "{text}");
    assert!(!env.stm_dir("U1").exists(), "STM of U1 is gone");
    assert_eq!(
        env.archived_lines("U1"),
        lines,
        "the archive holds every line, in order, byte for byte"
    );
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let summary = env
        .sessions_dir()
        .join(format!("archive/U1/summary-{today}.md"));
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap_or_default()
            .contains(SUMMARY),
        "the summary is archived to {}",
        summary.display()
    );
    assert_eq!(
        std::fs::read(env.profile_path("U1")).unwrap(),
        profile_before,
        "the profile stays"
    );

    let u2 = eight_lines("u2");
    env.import("U2", &u2[..4]);
    let v = env
        .run(["--json", "session", "clear", "--user", "U2", "--yes"])
        .succeeds()
        .json();
    assert_eq!(v, json!({"user": "U2", "archivedMessages": 4}));
    assert!(!env.messages_path("U2").exists());
    assert_eq!(env.archived_lines("U2"), u2[..4]);
}

#[test]
fn clear_all_without_yes_off_a_terminal_is_refused_and_removes_nothing() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &eight_lines("u1"));
    compact_force(&env, "U1");
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nStays.\n");
    let before = tree(&env.sessions_dir());

    for json in [&[][..], &["--json"]] {
        // Even a "y" on a pipe is not a confirmation.
        env.run(json)
            .args(["session", "clear", "--user", "U1", "--all"])
            .stdin("y\n")
            .fails(Exit::Usage)
            // The error says how.
            .stderr_has("--yes");
        assert_eq!(tree(&env.sessions_dir()), before, "nothing changed");
    }
}

#[test]
fn clear_all_text_reports_what_it_erased() {
    let env = TestEnv::new();
    env.import("U1", &eight_lines("u1")[..2]);
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nGoes.\n");
    let text = env
        .run(["session", "clear", "--user", "U1", "--all", "--yes"])
        .succeeds()
        .stdout();
    assert!(text.contains("erased everything of U1"), "{text}");
    assert!(!env.stm_dir("U1").exists());
    assert!(!env.profile_path("U1").exists());
    assert!(index_entry(&env, "ltm/users/U1.md").is_none());
}

const U: &str = "UERASE7";
const V: &str = "VKEEP3";

/// U and V with something in every place a user's data goes: log,
/// archive, summaries, profile, an owned topic, an export, a lock, the
/// maintenance ledger; a journal of U and a topic nobody owns.
fn two_users_with_everything(env: &TestEnv) {
    env.write_config(CONFIG);
    for (user, slug) in [(U, "u-notes"), (V, "v-notes")] {
        env.import(user, &eight_lines(user));
        compact_force(env, user); // archive, summary, ledger line, compaction lock
        env.run(["session", "clear", "--user", user, "--yes"])
            .succeeds(); // archived summary
        env.import(user, &eight_lines(user)[..3]);
        // A real ask: an assistant line, the user lock, a skeleton profile.
        env.run([
            "ask",
            "--user",
            user,
            "--display-name",
            user,
            "--msg-id",
            "m1",
            "--claude-bin",
        ])
        .arg(fake_claude())
        .args(["--", "hello there"])
        .succeeds();
        env.set_profile(
            user,
            &format!("---\nuser_id: {user}\ndisplay_name: {user}\ntags: [x]\n---\n\nProfile.\n"),
        );
        set_topic(
            env,
            slug,
            &format!("---\nowner: {user}\n---\n\nA note of its owner.\n"),
            Some("notes"),
        );
        for (dir, name) in [("daily", "2026-03-20.md"), ("weekly", "2026-W12.md")] {
            write_file(
                &env.sessions_dir()
                    .join(format!("summaries/{user}/{dir}/{name}")),
                format!("---\nuser_id: {user}\n---\n\nSummary.\n").as_bytes(),
            );
        }
        env.ask(["--user", user, "--", "/session export"])
            .succeeds();
    }
    // A journal a killed compaction would leave.
    write_file(
        &env.sessions_dir().join(format!(".journal/{U}.json")),
        b"{}\n",
    );
    // A topic nobody owns stays.
    set_topic(env, "shared", "A shared note.\n", None);

    let u_before = paths_of(env, U);
    for expected in [
        format!("stm/{U}/messages.jsonl"),
        format!("ltm/users/{U}.md"),
        format!("summaries/{U}/daily/2026-03-20.md"),
        format!("exports/{U}/"),
        format!(".locks/users/{U}.lock"),
        format!(".journal/{U}.json"),
    ] {
        assert!(
            u_before.contains_key(&expected),
            "the fixture has {expected}: {:?}",
            u_before.keys().collect::<Vec<_>>()
        );
    }
    assert!(
        u_before
            .keys()
            .any(|k| k.starts_with(&format!("archive/{U}/")))
    );
    assert!(!ledger_lines(env, U).is_empty(), "the ledger names {U}");
    assert!(index_entry(env, &format!("ltm/users/{U}.md")).is_some());
    assert!(index_entry(env, "ltm/topics/u-notes.md").is_some());
}

/// `session clear --user U --all --yes`, in JSON.
fn erase_u(env: &TestEnv) -> Value {
    env.run(["--json", "session", "clear", "--user", U, "--all", "--yes"])
        .succeeds()
        .json()
}

#[test]
fn clear_all_reports_what_it_erased() {
    let env = TestEnv::new();
    two_users_with_everything(&env);
    let v = erase_u(&env);
    assert_eq!(v["user"], json!(U), "{v}");
    assert!(
        !v["erased"].as_array().expect("erased list").is_empty(),
        "{v}"
    );
}

#[test]
fn clear_all_leaves_nothing_of_the_user_anywhere() {
    let env = TestEnv::new();
    two_users_with_everything(&env);
    erase_u(&env);
    let sessions = env.sessions_dir();
    // Nothing under sessions/ names U: no path, no file content, but the
    // amounts and times its budget needs (issue 13).
    let after = tree(&sessions);
    assert_budget_only(&env, U);
    let budget = format!("costs/per-user/{U}/asks.jsonl");
    let left: Vec<&String> = after
        .keys()
        // The budget's ledger and its folder.
        .filter(|k| k.contains(U) && !budget.starts_with(k.as_str()))
        .collect();
    assert!(left.is_empty(), "paths of {U} left behind: {left:?}");
    for (path, bytes) in &after {
        let Some(bytes) = bytes else { continue };
        let text = if path.ends_with(".gz") {
            gunzip(&sessions.join(path))
        } else {
            bytes.clone()
        };
        assert!(
            !String::from_utf8_lossy(&text).contains(U),
            "{path} still mentions {U}: {}",
            String::from_utf8_lossy(&text)
        );
    }
    assert!(
        !topic_path(&env, "u-notes").exists(),
        "U's own topic is gone"
    );
    assert!(index_entry(&env, "ltm/topics/u-notes.md").is_none());
    assert!(ledger_lines(&env, U).is_empty());
}

#[test]
fn clear_all_leaves_other_users_and_shared_notes_untouched() {
    let env = TestEnv::new();
    two_users_with_everything(&env);
    let mut v_before = paths_of(&env, V);
    v_before.insert(
        "ltm/topics/v-notes.md".into(),
        Some(std::fs::read(topic_path(&env, "v-notes")).unwrap()),
    );
    let shared_before = std::fs::read(topic_path(&env, "shared")).unwrap();
    let v_ledger = ledger_lines(&env, V);
    assert!(!v_ledger.is_empty());
    let v_index: Vec<Value> = index_entries(&env)
        .into_iter()
        .filter(|e| e.to_string().contains(V) || e["path"] == json!("ltm/topics/v-notes.md"))
        .collect();
    assert_eq!(v_index.len(), 2, "profile and topic of {V}: {v_index:?}");

    erase_u(&env);

    // V is untouched, byte for byte.
    let mut v_after = paths_of(&env, V);
    v_after.insert(
        "ltm/topics/v-notes.md".into(),
        std::fs::read(topic_path(&env, "v-notes")).ok(),
    );
    assert_eq!(
        v_after.keys().collect::<Vec<_>>(),
        v_before.keys().collect::<Vec<_>>()
    );
    for (path, bytes) in &v_before {
        assert!(v_after[path] == *bytes, "{path} of {V} changed");
    }
    assert_eq!(
        std::fs::read(topic_path(&env, "shared")).unwrap(),
        shared_before
    );
    assert_eq!(ledger_lines(&env, V), v_ledger);
    let v_index_after: Vec<Value> = index_entries(&env)
        .into_iter()
        .filter(|e| e.to_string().contains(V) || e["path"] == json!("ltm/topics/v-notes.md"))
        .collect();
    assert_eq!(v_index_after, v_index);
    assert_eq!(
        env.run(["--json", "session", "status"]).succeeds().json()["users"],
        json!(1)
    );
}

#[test]
fn erasing_a_user_whose_id_is_logs_keeps_the_rotated_broker_logs() {
    // `archive/logs/` holds the rotated broker logs of everyone; it is also
    // where the archive of a user named `logs` would go.
    let env = TestEnv::new();
    write_file(
        &env.state_dir().join("logs/broker-slack.log"),
        b"2026-03-20 08:00 U1 asked something\n",
    );
    env.run([
        "maintain",
        "--only",
        "log-rotation",
        "--now",
        "2030-01-01T00:00:00Z",
    ])
    .succeeds();
    let logs = env.sessions_dir().join("archive/logs");
    let rotated = std::fs::read_dir(&logs)
        .ok()
        .and_then(|mut entries| entries.next())
        .and_then(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.to_string_lossy().contains("broker-slack-"));
    assert!(rotated.is_some(), "the fixture: a rotated broker log");
    let rotated = rotated.unwrap();
    let before = std::fs::read(&rotated).unwrap();

    let out = env
        .run(["session", "clear", "--user", "logs", "--all", "--yes"])
        .output();
    assert!(
        matches!(exit_of(&out), Some(Exit::Success | Exit::Usage)),
        "erased, or the id refused: {}",
        stderr_of(&out)
    );
    assert!(
        std::fs::read(&rotated).ok() == Some(before),
        "erasing the user `logs` removed (or changed) every user's rotated broker logs"
    );
}

/// Telegram and Discord ids are numbers; unquoted in YAML they are ints.
#[test]
fn a_profile_naming_another_numeric_user_is_refused() {
    let env = TestEnv::new();
    let file = env.dir.path().join("other.md");
    write_file(&file, b"---\nuser_id: 987654321\n---\n\nSomeone else.\n");
    env.run([
        "session",
        "profile",
        "--user",
        "123456789",
        "--set",
        s(&file),
    ])
    .fails(Exit::Usage);
    assert!(!env.profile_path("123456789").exists());

    // The same id, unquoted, is the right user.
    write_file(&file, b"---\nuser_id: 123456789\n---\n\nMe.\n");
    env.run([
        "session",
        "profile",
        "--user",
        "123456789",
        "--set",
        s(&file),
    ])
    .succeeds();
    assert!(env.profile_path("123456789").exists());
}

#[test]
fn a_numeric_user_owns_a_topic_whose_owner_is_written_unquoted() {
    let env = TestEnv::new();
    set_topic(&env, "mine", "---\nowner: 123456789\n---\n\nMine.\n", None);
    set_topic(
        &env,
        "also-mine",
        "---\nowner: 123456789\n---\n\nMine too.\n",
        None,
    );

    let reply = chat(&env, "123456789", "/session forget mine");
    assert!(
        !topic_path(&env, "mine").exists(),
        "the owner's /session forget deletes it; reply: {reply}"
    );

    env.run(["session", "clear", "--user", "123456789", "--all", "--yes"])
        .succeeds();
    assert!(
        !topic_path(&env, "also-mine").exists(),
        "clear --all removes the topics the user owns"
    );
}

// --- issue 13: budgets across an erase, chat exports -----------------------------

#[test]
fn an_erase_in_chat_does_not_reset_the_budget_and_keeps_only_amounts_and_times() {
    let env = TestEnv::new();
    // The fake charges $0.0123 per ask: two fit under $0.02, a third does not.
    env.write_config(r#"{"budget":{"dailyUsd":0.02}}"#);
    let ask_once = |text: &str| env.ask(["--user", "U1", "--", text]).output();
    assert!(ask_once("first secret question").status.success());
    let reply = ask_once("/session clear all");
    assert!(
        stdout_of(&reply).contains("erased"),
        "{}",
        stdout_of(&reply)
    );
    assert!(ask_once("second").status.success());
    let third = ask_once("third");
    assert_eq!(
        exit_of(&third),
        Some(Exit::OverBudget),
        "the cap holds across the erase: {}",
        stderr_of(&third)
    );
    // What is kept: amounts and times, nothing said.
    let ledger = env.sessions_dir().join("costs/per-user/U1/asks.jsonl");
    let text = std::fs::read_to_string(&ledger).unwrap();
    assert!(!text.contains("secret"), "{text}");
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for key in v.as_object().unwrap().keys() {
            assert!(
                ["ts", "costUsd", "erasedAt", "input_tokens", "output_tokens"]
                    .contains(&key.as_str()),
                "{key} in {line}"
            );
        }
    }
}

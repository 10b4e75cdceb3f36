//! The registry of an owner's files (`layout::owner_files`) against a
//! state dir that used every feature once, for a person and for a group
//! conversation: every file on disk is named by the registry (or is one of
//! the channel's shared files), an erase leaves nothing of the person but
//! what the registry keeps (the ledger), and an export holds every content
//! file. A file some feature writes that the registry does not name fails
//! here, before an erase silently skips it.

use std::path::{Path, PathBuf};

use claude_session::layout::owner_files::{self, Class, Holds};
use claude_session::layout::{ConversationKey, Layout, MemoryKey, UserId};

use super::common::*;

const PERSON: &str = "U1";
const OTHER: &str = "U2";
const GROUP: &str = "G1";

fn ask_as(env: &TestEnv, user: &str, group: Option<&str>, msg_id: &str, text: &str) {
    let mut run = env.run([
        "ask",
        "--user",
        user,
        "--display-name",
        user,
        "--msg-id",
        msg_id,
    ]);
    if let Some(group) = group {
        run = run.args(["--conversation", group]);
    }
    run.arg("--claude-bin")
        .arg(fake_claude())
        .args(["--", text])
        .succeeds();
}

/// Lines over four past days, for archives, daily and weekly summaries.
fn history() -> String {
    let mut text = String::new();
    for i in 0..8 {
        let line = serde_json::json!({
            "ts": format!("2026-03-{}T{:02}:15:00Z", 20 + i / 2, 8 + i),
            "role": if i % 2 == 0 { "user" } else { "assistant" },
            "text": format!("old message {i}"),
            "msgId": format!("old-{i}"),
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text
}

fn import(env: &TestEnv, flags: &[&str], lines: &str, name: &str) {
    let path = env.dir.path().join(name);
    write_file(&path, lines.as_bytes());
    env.run(["append"])
        .args(flags)
        .arg("--jsonl")
        .arg(&path)
        .succeeds();
}

/// Every feature once, for PERSON and for the conversation GROUP (in which
/// OTHER writes too).
fn populate(env: &TestEnv) {
    env.write_config(r#"{"stm":{"contextWindow":3}}"#);
    // History, compacted: archives, rolling summary, maintenance ledger.
    import(env, &["--user", PERSON], &history(), "u1.jsonl");
    for i in 0..8 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let ts = format!("2026-03-{}T{:02}:15:00Z", 20 + i / 2, 8 + i);
        let id = format!("old-{i}");
        env.append(
            &[
                "--user",
                OTHER,
                "--conversation",
                GROUP,
                "--role",
                role,
                "--ts",
                &ts,
                "--msg-id",
                &id,
            ],
            &format!("old group message {i}"),
        );
    }
    for who in [["--user", PERSON], ["--conversation", GROUP]] {
        env.run(["compact"])
            .args(who)
            .args(["--force", "--claude-bin"])
            .arg(fake_claude())
            .env(
                "FAKE_CLAUDE_REPLY",
                compaction_reply("They chatted.", serde_json::json!({})),
            )
            .succeeds();
    }
    // Every maintenance task (daily and weekly summaries, the recall index;
    // the expiry of both short-term logs).
    env.run(["maintain", "--now", "2026-04-01T12:00:00Z", "--claude-bin"])
        .arg(fake_claude())
        .succeeds();
    // Asks, 1:1 and in the group, one with an attachment: log lines, the
    // locks, a skeleton profile, the sender's and the channel's ledger,
    // the membership record.
    let attachment = env.dir.path().join("note.txt");
    write_file(&attachment, b"an attached note\n");
    env.run(["ask", "--user", PERSON, "--msg-id", "a1", "--attach"])
        .arg(&attachment)
        .arg("--claude-bin")
        .arg(fake_claude())
        .args(["--", "see the note"])
        .succeeds();
    ask_as(env, PERSON, None, "m1", "hello there");
    ask_as(env, PERSON, Some(GROUP), "g1", "hello group");
    ask_as(env, OTHER, Some(GROUP), "g2", "hello from two");
    env.append(
        &["--user", PERSON, "--role", "assistant"],
        "an appended reply",
    );
    // A profile and a topic note PERSON owns; a topic nobody owns.
    let profile = env.dir.path().join("profile.md");
    write_file(&profile, b"---\ndisplay_name: One\n---\n\nLikes tea.\n");
    env.run(["session", "profile", "--user", PERSON, "--set"])
        .arg(&profile)
        .succeeds();
    for (slug, text) in [
        ("u1-notes", "---\nowner: U1\n---\n\nA note of U1.\n"),
        ("shared", "A shared note.\n"),
    ] {
        let path = env.dir.path().join(format!("{slug}.md"));
        write_file(&path, text.as_bytes());
        env.run(["session", "topic", "set", slug])
            .arg(&path)
            .succeeds();
    }
    // The in-chat export, then a clear (an archived rolling summary), then
    // a line again.
    env.ask(["--user", PERSON, "--", "/session export"])
        .succeeds();
    env.run(["session", "clear", "--user", PERSON, "--yes"])
        .succeeds();
    ask_as(env, PERSON, None, "m2", "back again");
    // An ask that failed, and its redelivery that failed again: the
    // message's lock and the failure record are left for prune.
    for _ in 0..2 {
        env.run(["ask", "--user", PERSON, "--msg-id", "f1", "--claude-bin"])
            .arg(fake_claude())
            .env("FAKE_CLAUDE_EXIT", "1")
            .args(["--", "this one fails"])
            .fails(Exit::ClaudeFailed);
    }
    // What a killed compaction leaves (only a crash makes one), and a
    // failure record's write killed before its rename.
    write_file(&env.sessions_dir().join(".journal/U1.json"), b"{}\n");
    write_file(
        &env.sessions_dir()
            .join(".locks/inflight/.U1-08988b07b5422838.failed.4242.18a3f.0.tmp"),
        b"{\"error\":\"the error\"}",
    );
}

fn owners() -> Vec<MemoryKey> {
    vec![
        MemoryKey::person(&UserId::new(PERSON).unwrap()),
        MemoryKey::person(&UserId::new(OTHER).unwrap()),
        MemoryKey::conversation(&ConversationKey::new(GROUP).unwrap()),
    ]
}

/// Every file under `root`, sorted.
fn all_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

fn relative(env: &TestEnv, path: &Path) -> String {
    path.strip_prefix(env.sessions_dir())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_file_of_a_populated_state_dir_is_named_by_the_registry() {
    let env = TestEnv::new();
    populate(&env);
    let layout = Layout::new(env.state_dir());
    let files = all_files(&env.state_dir());
    let mut unnamed = Vec::new();
    let mut named: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for path in &files {
        if owner_files::is_shared_file(&layout, path) {
            continue;
        }
        let entries: Vec<_> = owners()
            .iter()
            .filter_map(|owner| owner_files::entry_naming(&layout, owner, path))
            .collect();
        if entries.is_empty() {
            unnamed.push(relative(&env, path));
        }
        named.extend(entries.iter().map(|e| e.name));
    }
    assert!(
        unnamed.is_empty(),
        "files named by no registry entry (add them to layout::owner_files::ENTRIES):\n{}",
        unnamed.join("\n")
    );
    // The fixture really used every feature: each entry is on disk but
    // the legacy ledger (earlier versions wrote it).
    for entry in owner_files::ENTRIES {
        if !(entry.class == Class::Ledger && matches!(entry.holds, Holds::File)) {
            assert!(
                named.contains(entry.name),
                "the fixture has no {}: {:?}",
                entry.name,
                files.iter().map(|p| relative(&env, p)).collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn an_erase_leaves_only_what_the_registry_keeps_and_an_export_holds_all_content() {
    let env = TestEnv::new();
    populate(&env);
    let layout = Layout::new(env.state_dir());
    let id = UserId::new(PERSON).unwrap();
    let person = MemoryKey::person(&id);
    let out = env.dir.path().join("export");
    env.run(["session", "export", "--user", PERSON, "--out"])
        .arg(&out)
        .succeeds();
    let mut content = 0;
    let mut missing = Vec::new();
    for path in all_files(&env.state_dir()) {
        let Some(entry) = owner_files::entry_naming(&layout, &person, &path) else {
            continue;
        };
        let copy = out.join(path.strip_prefix(env.sessions_dir()).unwrap());
        if entry.exported() {
            content += 1;
            if std::fs::read(&copy).ok() != std::fs::read(&path).ok() {
                missing.push(relative(&env, &path));
            }
        } else {
            assert!(!copy.exists(), "{} is exported", relative(&env, &path));
        }
    }
    assert!(content >= 6, "log, summaries, archives, profile: {content}");
    assert!(missing.is_empty(), "content the export misses: {missing:?}");
    // The topic note PERSON owns goes along (a shared file, but theirs);
    // the one nobody owns does not.
    let owned_note = layout.topics_dir().join("u1-notes.md");
    for copied in all_files(&out) {
        let original = env.sessions_dir().join(copied.strip_prefix(&out).unwrap());
        assert!(
            original == owned_note
                || owner_files::entry_naming(&layout, &person, &original)
                    .is_some_and(|e| e.exported()),
            "the export holds {}, no content of {PERSON}",
            copied.display()
        );
    }
    let exported_note = out.join(owned_note.strip_prefix(env.sessions_dir()).unwrap());
    assert_eq!(
        std::fs::read(&exported_note).ok(),
        std::fs::read(&owned_note).ok(),
        "the export holds the topic note {PERSON} owns"
    );
    // The JSON export holds the retired rolling summaries too, as stored;
    // a stray file whose name only parses as a day is not one.
    let stray = layout.archive_dir(&person).join("summary-2026-3-23.md");
    std::fs::write(&stray, "not a retired summary\n").unwrap();
    let json_out = env.dir.path().join("export.json");
    env.run([
        "session", "export", "--user", PERSON, "--format", "json", "--out",
    ])
    .arg(&json_out)
    .succeeds();
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_out).unwrap()).unwrap();
    let retired = &document["summaries"]["retired"];
    let mut seen = 0;
    for path in all_files(&layout.archive_dir(&person)) {
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some(day) = Layout::archived_summary_day(name) else {
            continue;
        };
        if path == stray {
            continue;
        }
        seen += 1;
        assert_eq!(
            retired[day.to_string()].as_str(),
            Some(std::fs::read_to_string(&path).unwrap().as_str()),
            "{name} in the JSON export: {retired}"
        );
    }
    assert!(seen >= 1, "the fixture retires a rolling summary (a clear)");
    assert_eq!(
        retired.as_object().map(|o| o.len()),
        Some(seen),
        "{retired}"
    );
    std::fs::remove_file(&stray).unwrap();

    env.run(["session", "clear", "--user", PERSON, "--all", "--yes"])
        .succeeds();
    let left: Vec<String> = all_files(&env.state_dir())
        .iter()
        .filter(|path| {
            owner_files::entry_naming(&layout, &person, path)
                .is_some_and(|entry| entry.class != Class::Ledger)
        })
        .map(|path| relative(&env, path))
        .collect();
    assert!(left.is_empty(), "files of {PERSON} an erase left: {left:?}");
    let ledger = layout.user_ledger_file(&id);
    assert!(ledger.exists(), "the ledger stays, for budgets");
    // The conversation stays, without the person's lines.
    let group = MemoryKey::conversation(&ConversationKey::new(GROUP).unwrap());
    let log = read(&layout.messages_file(&group));
    assert!(
        log.contains("hello from two") && !log.contains("hello group"),
        "{log}"
    );
}

/// The compaction lock's folder is refused as a link, as every other
/// folder of an owner is: an erase removed `.locks/compact/<user>.lock`
/// through a linked `.locks/compact/`, wherever the link pointed.
#[test]
fn an_erase_removes_nothing_through_a_linked_compaction_lock_folder() {
    let env = TestEnv::new();
    env.append(&["--user", PERSON], "hello");
    let elsewhere = env.dir.path().join("elsewhere");
    write_file(&elsewhere.join("U1.lock"), b"not the tool's to touch\n");
    let link = env.sessions_dir().join(".locks/compact");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    env.run(["session", "clear", "--user", PERSON, "--all", "--yes"])
        .fails(Exit::State)
        .stderr_has("symbolic link");
    assert!(
        elsewhere.join("U1.lock").exists(),
        "removed through the link"
    );
    assert!(env.messages_path(PERSON).exists(), "nothing erased");
}

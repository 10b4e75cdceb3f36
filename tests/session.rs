//! `session …` (the admin commands) and the in-chat `/session` commands:
//! what each prints in text and `--json`, what it changes on disk, what an
//! erase leaves behind (nothing of the user, everything of the others), an
//! export that imports back into the same messages, and that a person in
//! chat reaches only their own data, without any LLM call.

mod chat;
mod damaged;
mod delete;
mod erase;
mod escaping;
mod export;
mod profile;
mod show;
mod status;
mod topics;
mod users;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{
    Exit, TestEnv, compaction_reply, exit_of, fake_claude, files, gunzip, line, read_markdown,
    stderr_of, stdout_of, tree, write_file, yaml_strs,
};
use serde_json::{Value, json};

/// Small window, high threshold: `compact --force` archives all but 3.
const CONFIG: &str = r#"{"stm":{"contextWindow":3},"compacting":{"threshold":50}}"#;
const SUMMARY: &str = "They talked about tea and kayaks.";

// --- running the binary ----------------------------------------------------------

fn s(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

// --- fixtures ---------------------------------------------------------------------

/// `compact --user U --force` with the fake claude answering [`SUMMARY`].
fn compact_force(env: &TestEnv, user: &str) {
    env.run(["compact", "--user", user, "--force", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_REPLY", compaction_reply(SUMMARY, json!({})))
        .succeeds();
}

/// Eight messages over four March days, some with fields this tool does
/// not know (kept as they are), the assistant ones with a cost.
fn eight_lines(tag: &str) -> Vec<String> {
    (0..8)
        .map(|i| {
            let ts = format!("2026-03-{}T{:02}:15:00Z", 20 + i / 2, 8 + i);
            let mut v = json!({"ts": ts, "role": if i % 2 == 0 { "user" } else { "assistant" },
                "text": format!("{tag} message {i}"), "msgId": format!("{tag}-{i}")});
            match i {
                1 => {
                    v["costUsd"] = json!(0.01);
                    v["usage"] = json!({"input_tokens": 10, "output_tokens": 3});
                }
                2 => v["mood"] = json!({"x": [1, 2], "y": null}),
                4 => {
                    v["attachments"] = json!([{"type": "image", "path": "/tmp/a.png", "name": "a.png", "size": 7}]);
                    v["threadId"] = json!("t1");
                }
                5 => v["text"] = json!(format!("{tag} message 5\nsecond line\n  indented third")),
                _ => {}
            }
            v.to_string()
        })
        .collect()
}

fn parsed(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect()
}

fn topic_path(env: &TestEnv, slug: &str) -> PathBuf {
    env.sessions_dir()
        .join("ltm/topics")
        .join(format!("{slug}.md"))
}

fn index_path(env: &TestEnv) -> PathBuf {
    env.sessions_dir().join("ltm/index.json")
}

fn index_entries(env: &TestEnv) -> Vec<Value> {
    let text = std::fs::read_to_string(index_path(env)).expect("read ltm/index.json");
    let index: Value = serde_json::from_str(&text).expect("index.json is JSON");
    index["entries"]
        .as_array()
        .expect("index.json has entries")
        .clone()
}

fn index_entry(env: &TestEnv, path: &str) -> Option<Value> {
    index_entries(env)
        .into_iter()
        .find(|e| e["path"].as_str() == Some(path))
}

/// Write a topic note with `session topic set SLUG FILE`.
fn set_topic(env: &TestEnv, slug: &str, text: &str, tags: Option<&str>) {
    let path = env.dir.path().join(format!("topic-{slug}.md"));
    write_file(&path, text.as_bytes());
    let mut args = vec!["session", "topic", "set", slug, s(&path)];
    if let Some(tags) = tags {
        args.extend(["--tags", tags]);
    }
    env.run(&args).succeeds();
}

// --- reading what is on disk -----------------------------------------------------

/// The same as `human_bytes` of the tool: `5 B`, `2.0 KB`.
fn human(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let units = ["KB", "MB", "GB", "TB"];
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < units.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", units[unit])
}

/// The line of a key/value listing whose key is `key`, without the key.
fn row<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(key)
                .filter(|rest| rest.starts_with("  "))
                .map(str::trim)
        })
        .unwrap_or_else(|| panic!("no `{key}` row in:\n{text}"))
}

/// Every path under sessions/ whose path names `user`, with its bytes.
fn paths_of(env: &TestEnv, user: &str) -> BTreeMap<String, Option<Vec<u8>>> {
    tree(&env.sessions_dir())
        .into_iter()
        .filter(|(path, _)| path.contains(user))
        .collect()
}

/// After an erase the user's cost ledger holds amounts and times only.
fn assert_budget_only(env: &TestEnv, user: &str) {
    let path = env
        .sessions_dir()
        .join(format!("costs/per-user/{user}/asks.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for key in v.as_object().unwrap().keys() {
            assert!(
                ["ts", "costUsd", "erasedAt"].contains(&key.as_str()),
                "{key} kept in {line}"
            );
        }
    }
}

/// Lines of the maintenance ledger that mention `user`.
fn ledger_lines(env: &TestEnv, user: &str) -> Vec<String> {
    std::fs::read_to_string(env.sessions_dir().join("costs/maintenance.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(user))
        .map(str::to_owned)
        .collect()
}

// --- in-chat commands ----------------------------------------------------------------

/// `ask` with the fake claude; require success; return the reply.
fn chat(env: &TestEnv, user: &str, text: &str) -> String {
    let out = env.ask(["--user", user, "--", text]).succeeds();
    assert_eq!(env.claude_calls(), 0, "`{text}` called claude");
    let reply = out.stdout().trim_end().to_owned();
    assert!(
        !reply.is_empty()
            && reply.len() < 1000
            && reply.lines().count() <= 12
            && !reply.contains('\x1b')
            && !reply.starts_with('{')
            && !reply.starts_with('['),
        "`{text}`: a short plain-text reply, got:\n{reply}"
    );
    reply
}

/// The export file an in-chat `/session export` reply names: by its file
/// name only (a chat user never sees the server's paths), under the
/// user's own `exports/` folder.
fn exported_file(env: &TestEnv, user: &str, reply: &str) -> PathBuf {
    assert!(
        !reply.contains('/') || !reply.contains(&env.state_dir().display().to_string()),
        "the reply shows a server path: {reply}"
    );
    let name = reply
        .split_whitespace()
        .map(|w| {
            w.trim_end_matches(['.', ',', ';', ')'])
                .trim_start_matches('(')
        })
        .find(|w| w.starts_with("export-"))
        .unwrap_or_else(|| panic!("an export file name in: {reply}"));
    let path = env.sessions_dir().join("exports").join(user).join(name);
    assert!(path.is_file(), "{} exists", path.display());
    path
}

/// No STM line of anyone holds a command.
fn no_command_logged(env: &TestEnv) {
    for (path, bytes) in files(&env.sessions_dir().join("stm")) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("/session") && !text.contains("/memory"),
            "a command was logged in {path}: {text}"
        );
    }
    if let Ok(entries) = std::fs::read_dir(env.state_dir().join("logs")) {
        for entry in entries {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
            assert!(!text.contains("/session"), "logged: {text}");
        }
    }
}

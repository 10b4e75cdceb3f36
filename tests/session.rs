//! `session …` (the admin commands) and the in-chat `/session` commands:
//! what each prints in text and `--json`, what it changes on disk, what an
//! erase leaves behind (nothing of the user, everything of the others), an
//! export that imports back into the same messages, and that a person in
//! chat reaches only their own data, without any LLM call.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{TestEnv, fake_claude, stderr_of, stdout_of, write_file};
use serde_json::{Value, json};

/// Small window, high threshold: `compact --force` archives all but 3.
const CONFIG: &str = r#"{"stm":{"contextWindow":3},"compacting":{"threshold":50}}"#;
const SUMMARY: &str = "They talked about tea and kayaks.";

// --- running the binary ----------------------------------------------------------

fn run(env: &TestEnv, args: &[&str]) -> Output {
    env.cmd().args(args).output().expect("run claude-session")
}

/// Run, require success, return stdout.
fn ok(env: &TestEnv, args: &[&str]) -> String {
    let out = run(env, args);
    assert!(
        out.status.success(),
        "`{}` failed with {:?}: {}",
        args.join(" "),
        out.status.code(),
        stderr_of(&out)
    );
    stdout_of(&out)
}

/// Run with `--json`, require success, parse stdout.
fn ok_json(env: &TestEnv, args: &[&str]) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let text = ok(env, &full);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("`{}` printed no JSON ({e}): {text}", args.join(" ")))
}

/// Require exit code `code`; return stderr.
fn expect_exit(out: &Output, code: i32, what: &str) -> String {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: expected exit {code}; stdout: {} stderr: {}",
        stdout_of(out),
        stderr_of(out)
    );
    stderr_of(out)
}

fn s(path: &Path) -> &str {
    path.to_str().expect("temporary paths are UTF-8")
}

// --- fixtures ---------------------------------------------------------------------

fn line(ts: &str, role: &str, text: &str) -> String {
    json!({"ts": ts, "role": role, "text": text}).to_string()
}

/// `compact --user U --force` with the fake claude answering [`SUMMARY`].
fn compact_force(env: &TestEnv, user: &str) {
    let out = env
        .cmd()
        .args(["compact", "--user", user, "--force", "--claude-bin"])
        .arg(fake_claude())
        .env(
            "FAKE_CLAUDE_REPLY",
            json!({"summary": SUMMARY, "facts": {}}).to_string(),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "compact failed: {}", stderr_of(&out));
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

/// Write a profile with `session profile --set FILE`.
fn set_profile(env: &TestEnv, user: &str, text: &str) {
    let path = env.dir.path().join(format!("profile-{user}.md"));
    write_file(&path, text.as_bytes());
    ok(
        env,
        &["session", "profile", "--user", user, "--set", s(&path)],
    );
}

/// Write a topic note with `session topic set SLUG FILE`.
fn set_topic(env: &TestEnv, slug: &str, text: &str, tags: Option<&str>) {
    let path = env.dir.path().join(format!("topic-{slug}.md"));
    write_file(&path, text.as_bytes());
    let mut args = vec!["session", "topic", "set", slug, s(&path)];
    if let Some(tags) = tags {
        args.extend(["--tags", tags]);
    }
    ok(env, &args);
}

/// Split a markdown file into its frontmatter and body.
fn markdown(path: &Path) -> (serde_yaml::Mapping, String) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let rest = text
        .strip_prefix("---\n")
        .unwrap_or_else(|| panic!("{} has no frontmatter: {text}", path.display()));
    let end = rest.find("\n---\n").expect("frontmatter is closed");
    let front: serde_yaml::Mapping = if rest[..end].trim().is_empty() {
        serde_yaml::Mapping::new()
    } else {
        serde_yaml::from_str(&rest[..end]).expect("frontmatter is YAML")
    };
    (front, rest[end + 5..].to_owned())
}

fn yaml_strs(front: &serde_yaml::Mapping, key: &str) -> Vec<String> {
    front
        .get(key)
        .and_then(serde_yaml::Value::as_sequence)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

// --- reading what is on disk -----------------------------------------------------

/// Every file (bytes) and folder (`None`) under `root`, by relative path.
fn tree(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Only the files of a [`tree`].
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    tree(root)
        .into_iter()
        .filter_map(|(k, v)| v.map(|bytes| (k, bytes)))
        .collect()
}

/// Total bytes of the files under `root`.
fn bytes_under(root: &Path) -> u64 {
    files(root).values().map(|b| b.len() as u64).sum()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a gzip file");
    out
}

/// Every archived line of a user, oldest day first.
fn archived_lines(env: &TestEnv, user: &str) -> Vec<String> {
    let dir = env.sessions_dir().join("archive").join(user);
    let mut lines = Vec::new();
    for (name, bytes) in files(&dir) {
        if name.starts_with("messages-") && name.ends_with(".jsonl.gz") {
            let text = String::from_utf8(gunzip(&bytes)).expect("archive is UTF-8");
            lines.extend(text.lines().map(str::to_owned));
        }
    }
    lines
}

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

// --- status --------------------------------------------------------------------

#[test]
fn status_channel_wide_counts_users_messages_ltm_and_storage_per_area() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &eight_lines("u1"));
    compact_force(&env, "U1"); // 3 stay in STM, 5 archived, a summary
    env.import("U2", &eight_lines("u2")[..2]);
    set_profile(&env, "U1", "---\ndisplay_name: One\n---\n\nLikes tea.\n");
    set_profile(
        &env,
        "U3",
        "---\ndisplay_name: Three\n---\n\nProfile only.\n",
    );
    set_topic(&env, "tea", "Oolong.\n", Some("drinks"));
    write_file(
        &env.sessions_dir().join("summaries/U2/daily/2026-03-20.md"),
        b"---\nuser_id: U2\n---\n\nA day.\n",
    );

    let v = ok_json(&env, &["session", "status"]);
    assert_eq!(v["users"], json!(3), "U1, U2 and U3 (profile only): {v}");
    assert_eq!(v["stmMessages"], json!(5), "3 of U1 + 2 of U2: {v}");
    assert_eq!(v["ltm"]["profiles"], json!(2), "{v}");
    assert_eq!(v["ltm"]["topics"], json!(1), "{v}");
    let sessions = env.sessions_dir();
    let expected: BTreeMap<&str, u64> = ["stm", "ltm", "summaries", "archive"]
        .into_iter()
        .map(|area| (area, bytes_under(&sessions.join(area))))
        .collect();
    for (area, bytes) in &expected {
        assert!(*bytes > 0, "the fixture has something in {area}");
        assert_eq!(
            v["storageBytes"][*area],
            json!(*bytes),
            "storageBytes.{area}: {v}"
        );
    }

    let text = ok(&env, &["session", "status"]);
    assert_eq!(row(&text, "users"), "3", "{text}");
    assert!(
        row(&text, "messages").starts_with("5 "),
        "messages row: {text}"
    );
    assert!(
        row(&text, "LTM entries").contains("2 profile(s), 1 topic(s)"),
        "{text}"
    );
    assert_eq!(
        row(&text, "storage"),
        format!(
            "stm {}, ltm {}, summaries {}, archive {}",
            human(expected["stm"]),
            human(expected["ltm"]),
            human(expected["summaries"]),
            human(expected["archive"])
        ),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour off a TTY: {text:?}");
}

/// `ask` with the fake claude replying at the given cost; require success.
fn ask_costing(env: &TestEnv, user: &str, text: &str, cost: &str) {
    let out = env
        .cmd()
        .args(["ask", "--user", user, "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_COST", cost)
        .args(["--", text])
        .output()
        .unwrap();
    assert!(out.status.success(), "ask: {}", stderr_of(&out));
}

/// The dollars spent in total: `costUsd` (as the brief names it) or
/// `totalUsd`.
fn spend_total(v: &Value) -> f64 {
    let spend = &v["spend"];
    spend
        .get("costUsd")
        .or_else(|| spend.get("totalUsd"))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no spend.costUsd in {v}"))
}

#[test]
fn status_of_one_user_counts_compacted_messages_and_spend_including_the_archive() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let old: Vec<String> = (0..4)
        .map(|i| line(&format!("2026-03-20T09:0{i}:00Z"), "user", "old"))
        .collect();
    env.import("U1", &old);
    // Three replies today, at known prices (12 input, 7 output tokens each).
    ask_costing(&env, "U1", "first", "0.25");
    ask_costing(&env, "U1", "second", "0.5");
    ask_costing(&env, "U1", "third", "0.125");
    let costs: Vec<f64> = env
        .messages("U1")
        .iter()
        .filter_map(|m| m["costUsd"].as_f64())
        .collect();
    assert_eq!(
        costs,
        [0.25, 0.5, 0.125],
        "assistant lines carry their cost"
    );
    let last_ts = env.messages("U1").last().unwrap()["ts"].clone();

    let check = |v: &Value, stm: u64, compacted: u64, has_summary: bool| {
        assert_eq!(v["user"], json!("U1"), "{v}");
        assert_eq!(v["stmMessages"], json!(stm), "{v}");
        assert_eq!(v["compacted"], json!(compacted), "{v}");
        assert_eq!(v["hasSummary"], json!(has_summary), "{v}");
        assert_eq!(v["hasProfile"], json!(false), "{v}");
        assert_eq!(v["lastActivity"], last_ts, "{v}");
        // The compaction's own call is maintenance, not the user's spend.
        for (key, got) in [
            ("costUsd", spend_total(v)),
            (
                "todayUsd",
                v["spend"]["todayUsd"].as_f64().unwrap_or(f64::NAN),
            ),
            (
                "monthUsd",
                v["spend"]["monthUsd"].as_f64().unwrap_or(f64::NAN),
            ),
        ] {
            assert!(
                (got - 0.875).abs() < 1e-9,
                "spend.{key} = {got}, want 0.875: {v}"
            );
        }
        assert_eq!(v["spend"]["inputTokens"], json!(36), "{v}");
        assert_eq!(v["spend"]["outputTokens"], json!(21), "{v}");
    };
    check(
        &ok_json(&env, &["session", "status", "--user", "U1"]),
        10,
        0,
        false,
    );

    // 10 lines, window 3: the first reply (0.25) goes to the archive.
    compact_force(&env, "U1");
    assert_eq!(env.read_lines("U1").len(), 3, "compaction kept the window");
    let archived = archived_lines(&env, "U1");
    assert_eq!(archived.len(), 7);
    assert!(
        archived.iter().any(|l| l.contains("\"costUsd\":0.25")),
        "{archived:?}"
    );
    let v = ok_json(&env, &["session", "status", "--user", "U1"]);
    check(&v, 3, 7, true);
    assert!(v["bytes"].as_u64().unwrap() > 0, "{v}");

    let text = ok(&env, &["session", "status", "--user", "U1"]);
    assert_eq!(row(&text, "user"), "U1", "{text}");
    assert_eq!(
        row(&text, "messages"),
        "3 in short-term memory, 7 compacted",
        "{text}"
    );
    assert_eq!(row(&text, "summary"), "yes", "{text}");
    assert_eq!(row(&text, "profile"), "no", "{text}");
    let last = chrono::DateTime::parse_from_rfc3339(last_ts.as_str().unwrap()).unwrap();
    assert!(
        row(&text, "last activity").starts_with(&last.format("%Y-%m-%d %H:%M").to_string()),
        "{text}"
    );
    let spend = row(&text, "spend");
    assert!(
        spend.contains("$0.8750 today")
            && spend.contains("$0.8750 this month")
            && spend.contains("$0.8750 in total")
            && spend.contains("36 input and 21 output tokens"),
        "{text}"
    );
}

// --- users ------------------------------------------------------------------------

fn user_order(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("users --json is an array")
        .iter()
        .map(|u| u["user"].as_str().unwrap().to_owned())
        .collect()
}

fn text_rows(text: &str) -> Vec<String> {
    let mut lines = text.lines();
    let header = lines.next().expect("a header line");
    assert!(header.starts_with("USER"), "header first: {text}");
    lines
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .collect()
}

#[test]
fn users_lists_one_row_per_user_sorted_by_activity_messages_or_size_and_limited() {
    let env = TestEnv::new();
    let a: Vec<String> = (0..5)
        .map(|i| line(&format!("2026-03-20T08:0{i}:00Z"), "user", "a"))
        .collect();
    env.import("UA", &a);
    env.import(
        "UB",
        &[line("2026-03-21T08:00:00Z", "user", &"b".repeat(5000))],
    );
    env.import(
        "UC",
        &[
            line("2026-03-23T08:00:00Z", "user", "c"),
            line("2026-03-23T08:01:00Z", "assistant", "c"),
        ],
    );
    set_profile(&env, "UD", "---\ndisplay_name: D\n---\n\nOnly a profile.\n");
    // UE: only an archive is left after a clear.
    env.import("UE", &[line("2026-03-19T08:00:00Z", "user", "e")]);
    ok(&env, &["session", "clear", "--user", "UE", "--yes"]);

    // Users without STM (no activity, no messages) come last, in some order.
    let tail_is_d_and_e = |order: &[String]| {
        let mut tail = order[3..].to_vec();
        tail.sort();
        assert_eq!(tail, ["UD", "UE"], "{order:?}");
    };
    let by_activity = ok_json(&env, &["session", "users", "--sort", "activity"]);
    assert_eq!(user_order(&by_activity)[..3], ["UC", "UB", "UA"]);
    tail_is_d_and_e(&user_order(&by_activity));
    let default = ok_json(&env, &["session", "users"]);
    assert_eq!(
        user_order(&default),
        user_order(&by_activity),
        "activity is the default"
    );
    let counts: Vec<u64> = by_activity
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["stmMessages"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [2, 1, 5, 0, 0]);

    let by_messages = ok_json(&env, &["session", "users", "--sort", "messages"]);
    assert_eq!(user_order(&by_messages)[..3], ["UA", "UC", "UB"]);
    tail_is_d_and_e(&user_order(&by_messages));

    let by_size = ok_json(&env, &["session", "users", "--sort", "size"]);
    let sizes: Vec<u64> = by_size
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(user_order(&by_size)[0], "UB", "{by_size}");
    assert!(
        sizes.windows(2).all(|w| w[0] >= w[1]),
        "largest first: {sizes:?}"
    );
    assert_eq!(sizes.len(), 5, "one row per user");

    for (sort, json) in [
        ("activity", &by_activity),
        ("messages", &by_messages),
        ("size", &by_size),
    ] {
        let text = ok(&env, &["session", "users", "--sort", sort]);
        assert_eq!(text_rows(&text), user_order(json), "--sort {sort}:\n{text}");
    }

    let limited = ok_json(
        &env,
        &["session", "users", "--sort", "messages", "--limit", "2"],
    );
    assert_eq!(user_order(&limited), ["UA", "UC"]);
    let text = ok(
        &env,
        &["session", "users", "--sort", "activity", "--limit", "2"],
    );
    assert_eq!(text_rows(&text), ["UC", "UB"], "{text}");
}

// --- show -----------------------------------------------------------------------

#[test]
fn show_prints_time_role_and_text_with_count_since_and_archive() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm":{"contextWindow":2},"compacting":{"threshold":50}}"#);
    let lines = vec![
        line("2026-03-20T08:00:00Z", "user", "first"),
        line("2026-03-21T09:30:00Z", "assistant", "two lines\nof reply"),
        line("2026-03-22T10:00:00Z", "user", "third"),
        line("2026-03-22T10:01:00Z", "system", "fourth\n  indented\nend"),
        line("2026-03-23T11:45:00Z", "assistant", "fifth"),
    ];
    env.import("U1", &lines);

    let text = ok(&env, &["session", "show", "--user", "U1"]);
    let expected = [
        "2026-03-20 08:00  user       first",
        "2026-03-21 09:30  assistant  two lines",
        "                             of reply",
        "2026-03-22 10:00  user       third",
        "2026-03-22 10:01  system     fourth",
        "                               indented",
        "                             end",
        "2026-03-23 11:45  assistant  fifth",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected, "{text}");

    let texts = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("show --json is an array")
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = ok_json(&env, &["session", "show", "--user", "U1"]);
    assert_eq!(all.as_array().unwrap().len(), 5);
    assert_eq!(all[1]["role"], json!("assistant"));
    let ts = all[1]["ts"].as_str().expect("ts");
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(ts).map(|t| t.to_utc()),
        chrono::DateTime::parse_from_rfc3339("2026-03-21T09:30:00Z").map(|t| t.to_utc()),
        "{ts}"
    );
    assert_eq!(
        texts(&ok_json(
            &env,
            &["session", "show", "--user", "U1", "-n", "2"]
        )),
        ["fourth\n  indented\nend", "fifth"]
    );
    let text = ok(&env, &["session", "show", "--user", "U1", "-n", "2"]);
    assert_eq!(text.lines().collect::<Vec<_>>(), expected[4..], "{text}");
    assert_eq!(
        texts(&ok_json(
            &env,
            &["session", "show", "--user", "U1", "--since", "2026-03-22"]
        )),
        ["third", "fourth\n  indented\nend", "fifth"]
    );
    let text = ok(
        &env,
        &["session", "show", "--user", "U1", "--since", "2026-03-22"],
    );
    assert_eq!(text.lines().collect::<Vec<_>>(), expected[3..], "{text}");
    assert_eq!(
        texts(&ok_json(
            &env,
            &[
                "session",
                "show",
                "--user",
                "U1",
                "--since",
                "2026-03-22",
                "-n",
                "1"
            ]
        )),
        ["fifth"]
    );

    let out = run(
        &env,
        &["session", "show", "--user", "U1", "--since", "last week"],
    );
    expect_exit(&out, 2, "--since last week");

    // After a compaction only 2 stay in STM; --archive shows all, oldest first.
    compact_force(&env, "U1");
    assert_eq!(
        texts(&ok_json(&env, &["session", "show", "--user", "U1"])),
        ["fourth\n  indented\nend", "fifth"]
    );
    let all = ok_json(&env, &["session", "show", "--user", "U1", "--archive"]);
    assert_eq!(
        texts(&all),
        [
            "first",
            "two lines\nof reply",
            "third",
            "fourth\n  indented\nend",
            "fifth"
        ]
    );
    // --archive marks where each line comes from.
    let text = ok(&env, &["session", "show", "--user", "U1", "--archive"]);
    let expected = [
        "2026-03-20 08:00  archive  user       first",
        "2026-03-21 09:30  archive  assistant  two lines",
        "                                      of reply",
        "2026-03-22 10:00  archive  user       third",
        "2026-03-22 10:01  stm      system     fourth",
        "                                        indented",
        "                                      end",
        "2026-03-23 11:45  stm      assistant  fifth",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected, "{text}");
    assert_eq!(
        texts(&ok_json(
            &env,
            &[
                "session",
                "show",
                "--user",
                "U1",
                "--archive",
                "--since",
                "2026-03-21"
            ]
        )),
        [
            "two lines\nof reply",
            "third",
            "fourth\n  indented\nend",
            "fifth"
        ]
    );
}

// --- clear ------------------------------------------------------------------------

#[test]
fn clear_moves_the_short_term_memory_to_the_archive() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = eight_lines("u1");
    env.import("U1", &lines);
    compact_force(&env, "U1");
    set_profile(&env, "U1", "---\ndisplay_name: One\n---\n\nStays.\n");
    let profile_before = std::fs::read(env.profile_path("U1")).unwrap();

    let text = ok(&env, &["session", "clear", "--user", "U1", "--yes"]);
    assert!(text.contains("3 message(s) moved to the archive"), "{text}");
    assert!(!env.stm_dir("U1").exists(), "STM of U1 is gone");
    assert_eq!(
        archived_lines(&env, "U1"),
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
    let v = ok_json(&env, &["session", "clear", "--user", "U2", "--yes"]);
    assert_eq!(v, json!({"user": "U2", "archivedMessages": 4}));
    assert!(!env.messages_path("U2").exists());
    assert_eq!(archived_lines(&env, "U2"), u2[..4]);
}

#[test]
fn clear_all_without_yes_off_a_terminal_is_refused_and_removes_nothing() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &eight_lines("u1"));
    compact_force(&env, "U1");
    set_profile(&env, "U1", "---\ndisplay_name: One\n---\n\nStays.\n");
    let before = tree(&env.sessions_dir());

    for json in [false, true] {
        let mut cmd = env.cmd();
        if json {
            cmd.arg("--json");
        }
        // Even a "y" on a pipe is not a confirmation.
        let out = cmd
            .args(["session", "clear", "--user", "U1", "--all"])
            .write_stdin("y\n")
            .output()
            .unwrap();
        let err = expect_exit(&out, 2, "clear --all without --yes");
        assert!(err.contains("--yes"), "the error says how: {err}");
        assert_eq!(tree(&env.sessions_dir()), before, "nothing changed");
    }
}

#[test]
fn clear_all_text_reports_what_it_erased() {
    let env = TestEnv::new();
    env.import("U1", &eight_lines("u1")[..2]);
    set_profile(&env, "U1", "---\ndisplay_name: One\n---\n\nGoes.\n");
    let text = ok(
        &env,
        &["session", "clear", "--user", "U1", "--all", "--yes"],
    );
    assert!(text.contains("erased everything of U1"), "{text}");
    assert!(!env.stm_dir("U1").exists());
    assert!(!env.profile_path("U1").exists());
    assert!(index_entry(&env, "ltm/users/U1.md").is_none());
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
    let path = env.sessions_dir().join(format!("costs/users/{user}.jsonl"));
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

#[test]
fn clear_all_leaves_nothing_of_the_user_anywhere_and_other_users_untouched() {
    const U: &str = "UERASE7";
    const V: &str = "VKEEP3";
    let env = TestEnv::new();
    env.write_config(CONFIG);
    for (user, slug) in [(U, "u-notes"), (V, "v-notes")] {
        env.import(user, &eight_lines(user));
        compact_force(&env, user); // archive, summary, ledger line, compaction lock
        ok(&env, &["session", "clear", "--user", user, "--yes"]); // archived summary
        env.import(user, &eight_lines(user)[..3]);
        // A real ask: an assistant line, the user lock, a skeleton profile.
        let out = env
            .cmd()
            .args([
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
            .output()
            .unwrap();
        assert!(out.status.success(), "ask: {}", stderr_of(&out));
        set_profile(
            &env,
            user,
            &format!("---\nuser_id: {user}\ndisplay_name: {user}\ntags: [x]\n---\n\nProfile.\n"),
        );
        set_topic(
            &env,
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
        let out = env
            .cmd()
            .args(["ask", "--user", user, "--claude-bin"])
            .arg(fake_claude())
            .args(["--", "/session export"])
            .output()
            .unwrap();
        assert!(out.status.success(), "/session export: {}", stderr_of(&out));
    }
    // A journal a killed compaction would leave.
    write_file(
        &env.sessions_dir().join(format!(".journal/{U}.json")),
        b"{}\n",
    );
    // A topic nobody owns stays.
    set_topic(&env, "shared", "A shared note.\n", None);

    let sessions = env.sessions_dir();
    let u_before = paths_of(&env, U);
    for expected in [
        format!("stm/{U}/messages.jsonl"),
        format!("ltm/users/{U}.md"),
        format!("summaries/{U}/daily/2026-03-20.md"),
        format!("exports/{U}"),
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
    assert!(!ledger_lines(&env, U).is_empty(), "the ledger names {U}");
    assert!(index_entry(&env, &format!("ltm/users/{U}.md")).is_some());
    assert!(index_entry(&env, "ltm/topics/u-notes.md").is_some());

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

    let v = ok_json(&env, &["session", "clear", "--user", U, "--all", "--yes"]);
    assert_eq!(v["user"], json!(U), "{v}");
    assert!(
        !v["erased"].as_array().expect("erased list").is_empty(),
        "{v}"
    );

    // Nothing under sessions/ names U: no path, no file content, but the
    // amounts and times its budget needs (issue 13).
    let after = tree(&sessions);
    assert_budget_only(&env, U);
    let budget = format!("costs/users/{U}.jsonl");
    let left: Vec<&String> = after
        .keys()
        .filter(|k| k.contains(U) && **k != budget)
        .collect();
    assert!(left.is_empty(), "paths of {U} left behind: {left:?}");
    for (path, bytes) in &after {
        let Some(bytes) = bytes else { continue };
        let text = if path.ends_with(".gz") {
            gunzip(bytes)
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
    assert_eq!(ok_json(&env, &["session", "status"])["users"], json!(1));
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
    ok(
        &env,
        &[
            "maintain",
            "--only",
            "log-rotation",
            "--now",
            "2030-01-01T00:00:00Z",
        ],
    );
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

    let out = run(
        &env,
        &["session", "clear", "--user", "logs", "--all", "--yes"],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
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
    let out = run(
        &env,
        &[
            "session",
            "profile",
            "--user",
            "123456789",
            "--set",
            s(&file),
        ],
    );
    expect_exit(&out, 2, "user_id: 987654321 for user 123456789");
    assert!(!env.profile_path("123456789").exists());

    // The same id, unquoted, is the right user.
    write_file(&file, b"---\nuser_id: 123456789\n---\n\nMe.\n");
    ok(
        &env,
        &[
            "session",
            "profile",
            "--user",
            "123456789",
            "--set",
            s(&file),
        ],
    );
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

    ok(
        &env,
        &["session", "clear", "--user", "123456789", "--all", "--yes"],
    );
    assert!(
        !topic_path(&env, "also-mine").exists(),
        "clear --all removes the topics the user owns"
    );
}

// --- profile ------------------------------------------------------------------------

const PROFILE: &str = "---\nuser_id: U1\ndisplay_name: Kevin\nchannel: line\n\
tags: [toeic, student]\nfavourite_drink: oolong\n---\n\n## Preferences\n- Language: Traditional Chinese\n";

#[test]
fn profile_shows_sets_from_a_file_or_stdin_and_refuses_a_wrong_or_broken_one() {
    let env = TestEnv::new();
    let path = env.dir.path().join("kevin.md");
    write_file(&path, PROFILE.as_bytes());
    let text = ok(
        &env,
        &["session", "profile", "--user", "U1", "--set", s(&path)],
    );
    let profile = env.profile_path("U1");
    assert!(text.contains(s(&profile)), "says where: {text}");
    let (front, body) = markdown(&profile);
    assert_eq!(front.get("user_id").and_then(|v| v.as_str()), Some("U1"));
    assert_eq!(
        front.get("favourite_drink").and_then(|v| v.as_str()),
        Some("oolong"),
        "unknown keys are kept"
    );
    assert_eq!(
        body.trim(),
        "## Preferences\n- Language: Traditional Chinese"
    );
    let entry = index_entry(&env, "ltm/users/U1.md").expect("indexed");
    assert_eq!(entry["title"], json!("Kevin"));
    assert_eq!(entry["tags"], json!(["toeic", "student"]));

    let shown = ok(&env, &["session", "profile", "--user", "U1"]);
    for needle in [
        "user_id: U1",
        "display_name: Kevin",
        "favourite_drink: oolong",
        "- Language: Traditional Chinese",
    ] {
        assert!(shown.contains(needle), "{needle} in:\n{shown}");
    }
    let v = ok_json(&env, &["session", "profile", "--user", "U1"]);
    assert_eq!(v["user"], json!("U1"));
    assert_eq!(v["frontmatter"]["display_name"], json!("Kevin"));
    assert_eq!(v["frontmatter"]["tags"], json!(["toeic", "student"]));
    assert!(v["body"].as_str().unwrap().contains("Traditional Chinese"));

    // From stdin; a missing user_id is filled in.
    let out = env
        .cmd()
        .args(["--json", "session", "profile", "--user", "U1", "--set", "-"])
        .write_stdin("---\ndisplay_name: Kev\n---\n\nNew body from stdin.\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], json!("U1"), "{v}");
    assert_eq!(v["written"], json!(s(&profile)), "{v}");
    let (front, body) = markdown(&profile);
    assert_eq!(front.get("user_id").and_then(|v| v.as_str()), Some("U1"));
    assert_eq!(
        front.get("display_name").and_then(|v| v.as_str()),
        Some("Kev")
    );
    assert_eq!(body.trim(), "New body from stdin.");
    assert_eq!(
        index_entry(&env, "ltm/users/U1.md").unwrap()["title"],
        json!("Kev")
    );

    // Refused: another user's id, or frontmatter that never closes.
    let before = tree(&env.sessions_dir());
    let wrong = "---\nuser_id: U2\ndisplay_name: Mallory\n---\n\nNot U1.\n";
    let unclosed = "---\nuser_id: U1\ndisplay_name: Cut\n\nthe closing line is missing\n";
    for (what, text) in [
        ("another user's id", wrong),
        ("unclosed frontmatter", unclosed),
    ] {
        let file = env.dir.path().join("bad-profile.md");
        write_file(&file, text.as_bytes());
        let out = run(
            &env,
            &["session", "profile", "--user", "U1", "--set", s(&file)],
        );
        expect_exit(&out, 2, what);
        let out = env
            .cmd()
            .args(["session", "profile", "--user", "U1", "--set", "-"])
            .write_stdin(text)
            .output()
            .unwrap();
        expect_exit(&out, 2, what);
        assert_eq!(tree(&env.sessions_dir()), before, "{what}: nothing changed");
    }
    assert!(!env.profile_path("U2").exists());
    // A user without a profile gets it refused too.
    let file = env.dir.path().join("bad-profile.md");
    write_file(&file, wrong.as_bytes());
    let out = run(
        &env,
        &["session", "profile", "--user", "U3", "--set", s(&file)],
    );
    expect_exit(&out, 2, "U2's profile for U3");
    assert!(!env.profile_path("U3").exists());
}

#[test]
fn profile_edit_runs_the_editor_and_saves_and_needs_an_editor() {
    let env = TestEnv::new();
    let script = env.dir.path().join("append-line.sh");
    write_file(
        &script,
        b"#!/bin/sh\nprintf '%s\\n' '- Likes green tea' >> \"$1\"\n",
    );
    // Run through `sh` so no just-written file is exec'd (ETXTBSY).
    let editor = format!("sh {}", s(&script));
    let path = env.dir.path().join("kevin.md");
    write_file(&path, PROFILE.as_bytes());
    ok(
        &env,
        &["session", "profile", "--user", "U1", "--set", s(&path)],
    );

    let out = env
        .cmd()
        .args(["session", "profile", "--user", "U1", "--edit"])
        .env("EDITOR", &editor)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = std::fs::read_to_string(env.profile_path("U1")).unwrap();
    assert!(
        text.trim_end().ends_with("- Likes green tea"),
        "the line is saved: {text}"
    );
    assert!(text.contains("- Language: Traditional Chinese"), "{text}");
    assert!(text.contains("favourite_drink: oolong"), "{text}");

    // A user without a profile: the skeleton, edited, is saved.
    let out = env
        .cmd()
        .args(["--json", "session", "profile", "--user", "U5", "--edit"])
        .env("EDITOR", &editor)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], json!("U5"), "{v}");
    let (front, body) = markdown(&env.profile_path("U5"));
    assert_eq!(front.get("user_id").and_then(|v| v.as_str()), Some("U5"));
    assert!(body.contains("- Likes green tea"), "{body}");
    assert!(index_entry(&env, "ltm/users/U5.md").is_some());

    // Neither EDITOR nor VISUAL: a usage error, nothing changes.
    let before = tree(&env.sessions_dir());
    let out = run(&env, &["session", "profile", "--user", "U1", "--edit"]);
    let err = expect_exit(&out, 2, "--edit without an editor");
    assert!(err.contains("EDITOR"), "{err}");
    let out = run(&env, &["session", "profile", "--user", "U6", "--edit"]);
    expect_exit(&out, 2, "--edit without an editor");
    assert_eq!(tree(&env.sessions_dir()), before);
}

/// A compaction merging facts while the editor is open must not be
/// overwritten by the edit: nothing is written and the edit is kept.
#[test]
fn profile_edit_refuses_to_overwrite_a_change_made_meanwhile() {
    let env = TestEnv::new();
    let path = env.dir.path().join("kevin.md");
    write_file(&path, PROFILE.as_bytes());
    ok(
        &env,
        &["session", "profile", "--user", "U1", "--set", s(&path)],
    );
    let profile = env.profile_path("U1");
    // The "editor" edits its draft and, meanwhile, someone else changes
    // the profile itself.
    let script = env.dir.path().join("racing-editor.sh");
    write_file(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' '- from the editor' >> \"$1\"\n\
             printf '%s\\n' '- merged meanwhile' >> '{}'\n",
            s(&profile)
        )
        .as_bytes(),
    );
    let out = env
        .cmd()
        .args(["session", "profile", "--user", "U1", "--edit"])
        .env("EDITOR", format!("sh {}", s(&script)))
        .output()
        .unwrap();
    let err = expect_exit(&out, 2, "an edit racing a change");
    assert!(err.contains("changed while you were editing"), "{err}");
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(
        text.contains("- merged meanwhile"),
        "the change made meanwhile stays: {text}"
    );
    assert!(!text.contains("- from the editor"), "{text}");
    let kept = err
        .split("your edit is kept in ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .expect("the message names where the edit is kept");
    let draft = std::fs::read_to_string(kept.trim()).unwrap();
    assert!(draft.contains("- from the editor"), "{draft}");
    let _ = std::fs::remove_file(kept.trim());
}

// --- topics, forget, search, reindex ------------------------------------------------

#[test]
fn topics_topic_show_and_topic_set_with_tags_update_the_index() {
    let env = TestEnv::new();
    set_topic(
        &env,
        "tea",
        "---\ntitle: Tea notes\nowner: U1\nsource: admin\n---\n\nOolong is best at 90 degrees.\n",
        Some("Drinks, green"),
    );
    let (front, body) = markdown(&topic_path(&env, "tea"));
    assert_eq!(yaml_strs(&front, "tags"), ["drinks", "green"]);
    assert_eq!(
        front.get("title").and_then(|v| v.as_str()),
        Some("Tea notes")
    );
    assert_eq!(front.get("owner").and_then(|v| v.as_str()), Some("U1"));
    assert_eq!(front.get("source").and_then(|v| v.as_str()), Some("admin"));
    assert!(front.get("updated").is_some());
    assert_eq!(body.trim(), "Oolong is best at 90 degrees.");
    let entry = index_entry(&env, "ltm/topics/tea.md").expect("tea is indexed");
    assert_eq!(entry["type"], json!("topic"));
    assert_eq!(entry["id"], json!("tea"));
    assert_eq!(entry["tags"], json!(["drinks", "green"]));
    assert_eq!(entry["title"], json!("Tea notes"));

    // From stdin, no tags: the title defaults to the slug.
    let out = env
        .cmd()
        .args(["--json", "session", "topic", "set", "coffee"])
        .write_stdin("Espresso, short.\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], json!("coffee"), "{v}");
    assert_eq!(
        index_entry(&env, "ltm/topics/coffee.md").unwrap()["title"],
        json!("coffee")
    );

    let list = ok_json(&env, &["session", "topics"]);
    let slugs: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["coffee", "tea"]);
    assert_eq!(list[1]["tags"], json!(["drinks", "green"]));
    assert_eq!(list[1]["owner"], json!("U1"));
    assert_eq!(list[1]["title"], json!("Tea notes"));
    let text = ok(&env, &["session", "topics"]);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("SLUG"), "{text}");
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[1].starts_with("coffee"), "{text}");
    assert!(
        rows[2].starts_with("tea")
            && rows[2].contains("Tea notes")
            && rows[2].contains("drinks,green")
            && rows[2].contains("U1"),
        "{text}"
    );

    let shown = ok(&env, &["session", "topic", "show", "tea"]);
    assert_eq!(
        shown.trim_end(),
        std::fs::read_to_string(topic_path(&env, "tea"))
            .unwrap()
            .trim_end()
    );
    let v = ok_json(&env, &["session", "topic", "show", "tea"]);
    assert_eq!(v["slug"], json!("tea"));
    assert_eq!(v["frontmatter"]["owner"], json!("U1"));
    assert_eq!(
        v["body"].as_str().unwrap().trim(),
        "Oolong is best at 90 degrees."
    );
    expect_exit(
        &run(&env, &["session", "topic", "show", "nope"]),
        2,
        "show nope",
    );

    // Setting again replaces the entry, tags and all.
    set_topic(&env, "tea", "Now sencha.\n", Some("a,b"));
    let entries: Vec<Value> = index_entries(&env)
        .into_iter()
        .filter(|e| e["path"] == json!("ltm/topics/tea.md"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["tags"], json!(["a", "b"]));
    let (front, _) = markdown(&topic_path(&env, "tea"));
    assert_eq!(yaml_strs(&front, "tags"), ["a", "b"]);
}

#[test]
fn forget_removes_the_note_and_its_index_entry_and_refuses_an_unknown_slug() {
    let env = TestEnv::new();
    set_topic(&env, "tea", "Oolong.\n", Some("drinks"));
    set_topic(&env, "coffee", "Espresso.\n", Some("drinks"));
    set_topic(&env, "cocoa", "Hot.\n", None);

    let text = ok(&env, &["session", "forget", "tea"]);
    assert!(text.contains("tea"), "{text}");
    assert!(!topic_path(&env, "tea").exists());
    assert!(index_entry(&env, "ltm/topics/tea.md").is_none());
    assert!(index_entry(&env, "ltm/topics/coffee.md").is_some());

    let v = ok_json(&env, &["session", "forget", "coffee"]);
    assert_eq!(v, json!({"forgotten": "coffee"}));
    assert!(!topic_path(&env, "coffee").exists());
    assert!(index_entry(&env, "ltm/topics/coffee.md").is_none());

    let before = tree(&env.sessions_dir());
    expect_exit(&run(&env, &["session", "forget", "tea"]), 2, "forget again");
    expect_exit(
        &run(&env, &["--json", "session", "forget", "nope"]),
        2,
        "forget unknown",
    );
    assert_eq!(tree(&env.sessions_dir()), before);
    assert!(topic_path(&env, "cocoa").exists());
}

#[test]
fn search_finds_topic_lines_with_their_numbers_and_filters_by_tag() {
    let env = TestEnv::new();
    set_topic(
        &env,
        "kayak-trips",
        "---\ntitle: Trips\n---\n\n# Kayak trips\n\nWe kayak on Sundays.\nNothing here.\nBring the KAYAK paddles.\n",
        Some("water"),
    );
    set_topic(
        &env,
        "hiking",
        "Mostly hiking.\n\nOnce a kayak too.\n",
        Some("outdoor"),
    );
    set_topic(&env, "tea", "Oolong.\n", Some("water"));

    let search = |args: &[&str]| -> Vec<Value> {
        let mut full = vec!["--json", "session", "search"];
        full.extend_from_slice(args);
        ok(&env, &full)
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect()
    };
    let hits = search(&["kayak"]);
    let sessions = env.sessions_dir();
    let mut numbered = Vec::new();
    for hit in &hits {
        assert_eq!(hit["kind"], "topic");
        let file = std::fs::read_to_string(sessions.join(hit["file"].as_str().unwrap())).unwrap();
        let n = hit["line"].as_u64().unwrap() as usize;
        let text = hit["text"].as_str().unwrap();
        assert!(
            text.to_lowercase().contains("kayak"),
            "a matching line: {text}"
        );
        assert_eq!(
            file.lines().nth(n - 1),
            Some(text),
            "line {n} is what is shown"
        );
        numbered.push(format!("{}:{n}", hit["file"].as_str().unwrap()));
    }
    assert_eq!(
        numbered.len(),
        4,
        "3 lines of kayak-trips, 1 of hiking: {hits:#?}"
    );
    let text = ok(&env, &["session", "search", "kayak"]);
    for n in &numbered {
        assert!(text.contains(n.as_str()), "`{n}` in:\n{text}");
    }
    assert!(!text.contains("tea.md"), "{text}");

    let only = search(&["kayak", "--tag", "outdoor"]);
    let files: Vec<&str> = only.iter().map(|h| h["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["ltm/topics/hiking.md"]);
    let text = ok(&env, &["session", "search", "kayak", "--tag", "water"]);
    assert!(
        text.contains("kayak-trips.md") && !text.contains("hiking.md"),
        "{text}"
    );
}

#[test]
fn reindex_rebuilds_the_index_from_profiles_and_topics() {
    let env = TestEnv::new();
    set_profile(
        &env,
        "U1",
        "---\ndisplay_name: One\ntags: [a]\n---\n\nOne.\n",
    );
    set_profile(&env, "U2", "---\ndisplay_name: Two\n---\n\nTwo.\n");
    set_topic(&env, "tea", "Oolong.\n", Some("drinks"));
    set_topic(
        &env,
        "coffee",
        "---\ntitle: Coffee\n---\n\nEspresso.\n",
        None,
    );
    let sorted = |mut entries: Vec<Value>| {
        entries.sort_by_key(|e| e["path"].as_str().unwrap().to_owned());
        entries
    };
    let before = sorted(index_entries(&env));
    assert_eq!(before.len(), 4, "{before:?}");

    std::fs::remove_file(index_path(&env)).unwrap();
    let text = ok(&env, &["session", "reindex"]);
    assert!(text.contains("4 entries"), "{text}");
    assert_eq!(sorted(index_entries(&env)), before);

    std::fs::remove_file(index_path(&env)).unwrap();
    let v = ok_json(&env, &["session", "reindex"]);
    assert_eq!(v, json!({"entries": 4, "memberships": 0}));
    assert_eq!(sorted(index_entries(&env)), before);
}

#[test]
fn session_help_lists_every_subcommand() {
    let env = TestEnv::new();
    let text = ok(&env, &["session", "help"]);
    for sub in [
        "status", "users", "show", "clear", "profile", "topics", "topic", "forget", "search",
        "export", "reindex",
    ] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
            "`{sub}` in:\n{text}"
        );
    }
    assert!(!env.state_dir().exists(), "help touches no state");
}

// --- export -----------------------------------------------------------------------

/// U1 with archive + STM + summary + profile + daily and weekly summaries,
/// and U2 beside it. Returns U1's lines.
fn export_fixture(env: &TestEnv) -> Vec<String> {
    env.write_config(CONFIG);
    let lines = eight_lines("u1");
    env.import("U1", &lines);
    compact_force(env, "U1");
    set_profile(env, "U1", "---\ndisplay_name: One\n---\n\nLikes tea.\n");
    write_file(
        &env.sessions_dir().join("summaries/U1/daily/2026-03-20.md"),
        b"---\nuser_id: U1\ndate: 2026-03-20\n---\n\nA day of tea.\n",
    );
    write_file(
        &env.sessions_dir().join("summaries/U1/weekly/2026-W12.md"),
        b"---\nuser_id: U1\nweek: 2026-W12\n---\n\nA week of tea.\n",
    );
    env.import("U2", &eight_lines("u2")[..3]);
    set_profile(env, "U2", "---\ndisplay_name: Two\n---\n\nLikes coffee.\n");
    lines
}

/// The files of U1 under sessions/, by path relative to sessions/.
fn u1_files(env: &TestEnv) -> BTreeMap<String, Vec<u8>> {
    files(&env.sessions_dir())
        .into_iter()
        .filter(|(path, _)| {
            path.starts_with("stm/U1/")
                || path == "ltm/users/U1.md"
                || path.starts_with("summaries/U1/")
                || path.starts_with("archive/U1/")
        })
        .collect()
}

#[test]
fn export_as_a_dir_mirrors_the_sessions_layout_and_never_overwrites() {
    let env = TestEnv::new();
    export_fixture(&env);
    let out_dir = env.dir.path().join("export-dir");
    let text = ok(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&out_dir),
            "--format",
            "dir",
        ],
    );
    let expected = u1_files(&env);
    for key in [
        "stm/U1/messages.jsonl",
        "stm/U1/summary.md",
        "ltm/users/U1.md",
        "summaries/U1/daily/2026-03-20.md",
        "summaries/U1/weekly/2026-W12.md",
    ] {
        assert!(expected.contains_key(key), "the fixture has {key}");
    }
    assert!(
        expected
            .keys()
            .any(|k| k.starts_with("archive/U1/messages-"))
    );
    let got = files(&out_dir);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the export holds exactly U1's files, at their sessions/ paths"
    );
    assert!(got == expected, "byte for byte");
    assert!(
        text.contains(&format!("({} file(s))", expected.len())),
        "{text}"
    );

    // Again into the same (now non-empty) folder: refused, untouched.
    let out = run(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&out_dir),
            "--format",
            "dir",
        ],
    );
    expect_exit(&out, 2, "export into a non-empty folder");
    assert!(files(&out_dir) == expected);

    // The default format is dir; --json reports it.
    let second = env.dir.path().join("export-dir-2");
    let v = ok_json(
        &env,
        &["session", "export", "--user", "U1", "--out", s(&second)],
    );
    assert_eq!(v["user"], json!("U1"));
    assert_eq!(v["files"], json!(expected.len()));
    assert!(files(&second) == expected);
}

#[test]
fn export_as_json_holds_everything_in_order_and_never_overwrites() {
    let env = TestEnv::new();
    let lines = export_fixture(&env);
    let out = env.dir.path().join("u1.json");
    let v = ok_json(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&out),
            "--format",
            "json",
        ],
    );
    assert_eq!(v["user"], json!("U1"), "{v}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["user"], json!("U1"));
    assert_eq!(doc["profile"]["frontmatter"]["user_id"], json!("U1"));
    assert_eq!(
        doc["profile"]["body"].as_str().unwrap().trim(),
        "Likes tea."
    );
    assert_eq!(doc["summary"]["body"].as_str().unwrap().trim(), SUMMARY);
    assert_eq!(
        doc["summary"]["frontmatter"]["messages_compacted"],
        json!(5)
    );
    assert_eq!(
        doc["summaries"]["daily"]["2026-03-20"]["body"]
            .as_str()
            .unwrap()
            .trim(),
        "A day of tea."
    );
    assert_eq!(
        doc["summaries"]["weekly"]["2026-W12"]["body"]
            .as_str()
            .unwrap()
            .trim(),
        "A week of tea."
    );
    assert_eq!(
        doc["messages"],
        Value::Array(parsed(&lines)),
        "archived messages, then STM, unknown fields kept"
    );
    assert!(!doc.to_string().contains("u2 message"), "only U1's data");

    // An existing file is never overwritten.
    let existing = env.dir.path().join("keep.json");
    write_file(&existing, b"keep me\n");
    for format in ["json", "dir", "tar.gz"] {
        let out = run(
            &env,
            &[
                "session",
                "export",
                "--user",
                "U1",
                "--out",
                s(&existing),
                "--format",
                format,
            ],
        );
        expect_exit(&out, 2, &format!("--format {format} onto a file"));
        assert_eq!(std::fs::read(&existing).unwrap(), b"keep me\n");
    }
    let text = ok(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&env.dir.path().join("b.json")),
            "--format",
            "json",
        ],
    );
    assert!(text.contains("exported U1"), "{text}");
}

#[test]
fn export_as_tar_gz_holds_the_dir_export() {
    let env = TestEnv::new();
    export_fixture(&env);
    let out = env.dir.path().join("u1.tar.gz");
    ok(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&out),
            "--format",
            "tar.gz",
        ],
    );
    let listing = std::process::Command::new("tar")
        .arg("tzf")
        .arg(&out)
        .output()
        .unwrap();
    assert!(listing.status.success(), "tar tzf: {}", stderr_of(&listing));
    let names: BTreeSet<String> = stdout_of(&listing)
        .lines()
        .map(|l| l.trim_end_matches('/').to_owned())
        .collect();
    let expected = u1_files(&env);
    for path in expected.keys() {
        assert!(
            names.contains(&format!("U1/{path}")),
            "U1/{path} in the tar listing: {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.contains("U2")), "{names:?}");

    let unpacked = env.dir.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&out)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(files(&unpacked.join("U1")) == expected, "the same bytes");

    let again = run(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&out),
            "--format",
            "tar.gz",
        ],
    );
    expect_exit(&again, 2, "tar.gz onto an existing file");
}

#[test]
fn an_exported_json_imports_back_into_the_same_messages() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let first = eight_lines("u1");
    env.import("U1", &first);
    compact_force(&env, "U1");
    let more: Vec<String> = eight_lines("late")
        .into_iter()
        .map(|l| l.replace("2026-03-", "2026-04-"))
        .collect();
    env.import("U1", &more[..2]);
    assert_eq!(archived_lines(&env, "U1").len(), 5);
    assert_eq!(env.read_lines("U1").len(), 5);

    let out = env.dir.path().join("u1.json");
    ok(
        &env,
        &[
            "session",
            "export",
            "--user",
            "U1",
            "--out",
            s(&out),
            "--format",
            "json",
        ],
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let messages = doc["messages"].as_array().expect("messages").clone();
    let mut all = first.clone();
    all.extend_from_slice(&more[..2]);
    assert_eq!(messages, parsed(&all));

    let fresh = TestEnv::new();
    let jsonl: Vec<String> = messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    fresh.import("U1", &jsonl);
    assert_eq!(
        fresh.messages("U1"),
        messages,
        "the same messages, same order, unknown fields kept"
    );
    assert_eq!(fresh.messages("U1").len(), 10);
    assert_eq!(
        fresh.messages("U1")[2]["mood"],
        json!({"x": [1, 2], "y": null})
    );
}

// --- in-chat commands ----------------------------------------------------------------

/// `ask` with the fake claude; require success; return the reply.
fn chat(env: &TestEnv, user: &str, text: &str) -> String {
    let out = env
        .cmd()
        .args(["ask", "--user", user, "--claude-bin"])
        .arg(fake_claude())
        .args(["--", text])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "`{text}` from {user} failed: {}",
        stderr_of(&out)
    );
    assert_eq!(env.claude_calls(), 0, "`{text}` called claude");
    let reply = stdout_of(&out).trim_end().to_owned();
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

#[test]
fn in_chat_commands_are_answered_from_disk_without_claude_and_not_logged() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = eight_lines("u1");
    env.import("U1", &lines[..3]);
    set_profile(
        &env,
        "U1",
        "---\ndisplay_name: One\n---\n\nLikes oolong tea.\n",
    );
    set_topic(&env, "tea", "---\nowner: U1\n---\n\nOolong.\n", None);
    let stm_before = env.read_bytes("U1");

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

    let status = chat(&env, "U1", "/session status");
    assert!(status.contains('3'), "3 messages: {status}");
    // The text on stdin, as brokers send it, is a command too.
    let out = env
        .cmd()
        .args(["ask", "--user", "U1", "--claude-bin"])
        .arg(fake_claude())
        .write_stdin("/session status\n")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(stdout_of(&out).trim_end(), status);
    assert_eq!(env.claude_calls(), 0);
    assert_eq!(
        chat(&env, "U1", "/memory status"),
        status,
        "/memory is an alias"
    );

    let profile = chat(&env, "U1", "/session profile");
    assert!(profile.contains("Likes oolong tea."), "{profile}");

    let exported = chat(&env, "U1", "/session export");
    let path = exported_file(&env, "U1", &exported);
    let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["user"], json!("U1"));
    assert_eq!(doc["messages"], Value::Array(parsed(&lines[..3])));

    assert_eq!(env.read_bytes("U1"), stm_before, "nothing logged so far");
    no_command_logged(&env);

    let forgot = chat(&env, "U1", "/session forget tea");
    assert!(forgot.contains("tea"), "{forgot}");
    assert!(!topic_path(&env, "tea").exists());
    assert!(index_entry(&env, "ltm/topics/tea.md").is_none());

    let cleared = chat(&env, "U1", "/session clear");
    assert!(cleared.contains('3'), "{cleared}");
    assert!(!env.messages_path("U1").exists());
    assert_eq!(archived_lines(&env, "U1"), lines[..3]);
    assert!(env.profile_path("U1").exists(), "clear keeps the profile");

    let erased = chat(&env, "U1", "/session clear all");
    assert!(!erased.is_empty());
    // Only what budgets need stays: amounts and times (issue 13).
    let left: Vec<String> = tree(&env.sessions_dir())
        .into_keys()
        .filter(|k| k.contains("U1") && k != "costs/users/U1.jsonl")
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

#[test]
fn in_chat_a_user_reaches_only_their_own_data() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[
            line("2026-03-20T08:00:00Z", "user", "U1SECRET message"),
            line("2026-03-20T08:01:00Z", "assistant", "noted"),
        ],
    );
    set_profile(
        &env,
        "U1",
        "---\ndisplay_name: One\n---\n\nU1SECRET profile.\n",
    );
    set_topic(&env, "tea", "---\nowner: U1\n---\n\nU1SECRET tea.\n", None);
    env.import(
        "U2",
        &[line("2026-03-21T08:00:00Z", "user", "hello from two")],
    );
    set_profile(
        &env,
        "U2",
        "---\ndisplay_name: Two\n---\n\nTwo likes coffee.\n",
    );

    let u1_before = paths_of(&env, "U1");
    let tea_before = std::fs::read(topic_path(&env, "tea")).unwrap();
    let tea_entry = index_entry(&env, "ltm/topics/tea.md").expect("tea indexed");
    let u1_entry = index_entry(&env, "ltm/users/U1.md").expect("U1 indexed");
    let u1_intact = |what: &str| {
        assert!(
            paths_of(&env, "U1") == u1_before,
            "{what}: U1's files changed"
        );
        assert_eq!(
            std::fs::read(topic_path(&env, "tea")).ok().as_deref(),
            Some(tea_before.as_slice()),
            "{what}: U1's topic changed"
        );
        assert_eq!(
            index_entry(&env, "ltm/topics/tea.md"),
            Some(tea_entry.clone()),
            "{what}"
        );
        assert_eq!(
            index_entry(&env, "ltm/users/U1.md"),
            Some(u1_entry.clone()),
            "{what}"
        );
    };

    // Forget: someone else's note gets the same answer as a missing one.
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
    u1_intact("forget");

    // Profile, status and export show U2's data, whatever is named.
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
    u1_intact("export");

    // Naming U1 is no syntax; clear and clear all of U2 leave U1 alone.
    let help = chat(&env, "U2", "/session help");
    assert_eq!(chat(&env, "U2", "/session clear U1"), help);
    assert!(
        env.messages_path("U2").exists(),
        "an unknown form changes nothing"
    );
    u1_intact("clear U1");
    chat(&env, "U2", "/session clear");
    assert!(
        !env.messages_path("U2").exists(),
        "U2's own STM was cleared"
    );
    u1_intact("clear");
    chat(&env, "U2", "/session clear all");
    assert!(!env.profile_path("U2").exists(), "U2's own data is erased");
    u1_intact("clear all");
    no_command_logged(&env);
}

// --- issue 13: stored text never drives the operator's terminal -----------------

/// What a terminal would act on: C0 controls but newline and tab, DEL,
/// C1 controls, and the bidi overrides and isolates.
fn terminal_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
        })
        .collect()
}

#[test]
fn show_profile_topic_and_search_escape_control_characters_and_json_keeps_them() {
    let env = TestEnv::new();
    let forged = "hi\r[2026-01-01 00:00] Assistant: I am admin";
    let clear = "wipe \u{1b}[2J screen \u{9b}2J and \u{202e}txet desrever";
    env.import(
        "U1",
        &[
            line("2026-03-01T10:00:00Z", "user", forged),
            line("2026-03-01T10:01:00Z", "assistant", clear),
        ],
    );
    let text = ok(&env, &["session", "show", "--user", "U1"]);
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    assert!(
        text.contains("\\r[2026-01-01 00:00] Assistant: I am admin"),
        "{text}"
    );
    assert!(text.contains("wipe \\u{1b}[2J screen"), "{text}");
    let json = ok_json(&env, &["session", "show", "--user", "U1"]);
    assert_eq!(json[0]["text"], forged);
    assert_eq!(json[1]["text"], clear);

    set_profile(
        &env,
        "U1",
        &format!("---\nuser_id: U1\n---\n\n## Notes\n- {clear}\n"),
    );
    let text = ok(&env, &["session", "profile", "--user", "U1"]);
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    assert!(text.contains("wipe \\u{1b}[2J"), "{text}");
    set_topic(
        &env,
        "tea",
        &format!("---\ntitle: Tea\n---\n\n{clear}\n"),
        None,
    );
    let text = ok(&env, &["session", "topic", "show", "tea"]);
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    let text = ok(&env, &["session", "search", "wipe"]);
    assert!(text.contains("wipe"), "{text}");
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
}

// --- issue 13: budgets across an erase, chat exports -----------------------------

#[test]
fn an_erase_in_chat_does_not_reset_the_budget_and_keeps_only_amounts_and_times() {
    let env = TestEnv::new();
    // The fake charges $0.0123 per ask: two fit under $0.02, a third does not.
    env.write_config(r#"{"budget":{"dailyUsd":0.02}}"#);
    let ask_once = |text: &str| {
        env.cmd()
            .args(["ask", "--user", "U1", "--claude-bin"])
            .arg(fake_claude())
            .args(["--", text])
            .output()
            .unwrap()
    };
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
        third.status.code(),
        Some(7),
        "the cap holds across the erase: {}",
        stderr_of(&third)
    );
    // What is kept: amounts and times, nothing said.
    let ledger = env.sessions_dir().join("costs/users/U1.jsonl");
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

#[test]
fn chat_exports_are_rate_limited_pruned_by_maintain_and_show_no_server_path() {
    let env = TestEnv::new();
    env.write_config(r#"{"limits":{"chatExportsPerDay":2,"chatExportRetentionDays":7}}"#);
    env.import("U1", &[line("2026-03-01T10:00:00Z", "user", "hello")]);
    let first = chat(&env, "U1", "/session export");
    let path = exported_file(&env, "U1", &first);
    chat(&env, "U1", "/session export");
    let third = chat(&env, "U1", "/session export");
    assert!(
        third.contains("limit") || third.contains("again"),
        "{third}"
    );
    assert!(!third.contains("export-"), "no third export: {third}");
    let exports = env.sessions_dir().join("exports/U1");
    assert_eq!(std::fs::read_dir(&exports).unwrap().count(), 2);
    // Eight days on, maintain removes them.
    let later = (chrono::Utc::now() + chrono::Duration::days(8))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let out = env
        .cmd()
        .args(["maintain", "--only", "prune", "--now", &later])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(!path.exists(), "an export past its retention is pruned");
    assert_eq!(
        std::fs::read_dir(&exports).map(|d| d.count()).unwrap_or(0),
        0
    );
}

// --- issue 13: one bad file does not stop a channel-wide command ----------------

#[test]
fn one_bad_file_is_warned_about_and_channel_wide_commands_go_on() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-01T10:00:00Z", "user", "hello tea")]);
    // U2's log is a folder, U3's a link to a file outside the state dir.
    std::fs::create_dir_all(env.messages_path("U2")).unwrap();
    let outside = env.dir.path().join("outside.jsonl");
    write_file(
        &outside,
        line("2026-03-01T10:00:00Z", "user", "OUTSIDE").as_bytes(),
    );
    std::fs::create_dir_all(env.stm_dir("U3")).unwrap();
    std::os::unix::fs::symlink(&outside, env.messages_path("U3")).unwrap();
    // U4's profile is not UTF-8.
    write_file(
        &env.profile_path("U4"),
        b"---\nuser_id: U4\n---\n\ntea \xff\xfe\n",
    );
    set_profile(&env, "U5", "---\nuser_id: U5\n---\n\nLikes tea.\n");

    for args in [
        &["session", "users"][..],
        &["session", "status"],
        &["session", "search", "tea"],
        &["session", "reindex"],
    ] {
        let out = run(&env, args);
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(
            err.contains("warning"),
            "{args:?} warns about what it skipped: {err}"
        );
        assert!(
            !stdout_of(&out).contains("OUTSIDE"),
            "{args:?} read through the link"
        );
    }
    let users = ok(&env, &["session", "users"]);
    assert!(users.contains("U1"), "{users}");
    let err = stderr_of(&run(&env, &["session", "users"]));
    assert!(err.contains("U2") && err.contains("U3"), "{err}");
    let err = stderr_of(&run(&env, &["session", "search", "tea"]));
    assert!(err.contains("U4.md"), "{err}");
    let hits = ok(&env, &["session", "search", "tea"]);
    assert!(hits.contains("U5"), "{hits}");
}

// --- issue 13: the smaller ones ---------------------------------------------------

#[test]
fn profile_set_refuses_empty_input_and_a_wrong_frontmatter_and_keeps_name_and_created() {
    let env = TestEnv::new();
    set_profile(
        &env,
        "U1",
        "---\nuser_id: U1\ndisplay_name: Kevin\ncreated: 2026-01-01T00:00:00.000Z\ntags: [tea]\n---\n\nLikes tea.\n",
    );
    let before = std::fs::read(env.profile_path("U1")).unwrap();
    for (input, why) in [
        ("", "empty"),
        ("  \n\n", "empty"),
        ("---\ntags: tea\n---\n\nx\n", "tags"),
        ("---\nuser_id: U2\n---\n\nx\n", "user_id"),
    ] {
        let out = env
            .cmd()
            .args(["session", "profile", "--user", "U1", "--set", "-"])
            .write_stdin(input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{input:?}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains(why),
            "{input:?}: {}",
            stderr_of(&out)
        );
        assert_eq!(
            std::fs::read(env.profile_path("U1")).unwrap(),
            before,
            "{input:?}"
        );
    }
    // A new body without the name and creation time keeps both.
    set_profile(&env, "U1", "## Notes\n- Now likes coffee.\n");
    let (front, body) = markdown(&env.profile_path("U1"));
    let text = |key: &str| {
        front
            .get(key)
            .and_then(serde_yaml::Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(text("display_name").as_deref(), Some("Kevin"));
    assert_eq!(text("created").as_deref(), Some("2026-01-01T00:00:00.000Z"));
    assert!(body.contains("coffee"), "{body}");
}

#[test]
fn export_to_a_bare_file_name_works_and_dash_means_stdout() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[line("2026-03-01T10:00:00Z", "user", "hello export")],
    );
    let out = env
        .cmd()
        .args([
            "session", "export", "--user", "U1", "--format", "json", "--out", "u.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let written = env.dir.path().join("u.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    assert_eq!(doc["user"], "U1");
    let out = env
        .cmd()
        .args([
            "session", "export", "--user", "U1", "--format", "json", "--out", "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let doc: Value = serde_json::from_str(&stdout_of(&out)).unwrap();
    assert_eq!(doc["messages"][0]["text"], "hello export");
    assert!(!env.dir.path().join("-").exists(), "no file named -");
}

#[test]
fn a_chat_command_spans_one_line_only() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-01T10:00:00Z", "user", "keep me")]);
    set_profile(&env, "U1", "---\nuser_id: U1\n---\n\nLikes tea.\n");
    let reply = chat(&env, "U1", "/session clear\nall");
    assert!(reply.contains("one line"), "{reply}");
    assert!(
        env.profile_path("U1").exists(),
        "`clear\\nall` is not `clear all`"
    );
    assert_eq!(env.messages("U1").len(), 1, "nor `clear`: nothing was done");
}

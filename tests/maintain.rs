//! `maintain`: STM expiry, broker log rotation, compaction, daily and
//! weekly summaries (across an ISO year end), pruning; `--dry-run`,
//! `--only`, `--jobs`, `--max-llm-calls`, idempotency, a failure in one
//! user, two overlapping runs and the shape of the report.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{
    Exit, Run, Snapshot, TestEnv, differences, fake_claude, gunzip, line, read_markdown,
    snapshot_tree, stderr_of, stdout_of, wait_for, write_file, yaml_str,
};
use serde_json::{Value, json};

const TASKS: [&str; 8] = [
    "migrate",
    "stm-expiry",
    "log-rotation",
    "compact",
    "daily",
    "weekly",
    "index",
    "prune",
];

// --- helpers -------------------------------------------------------------------

/// `maintain` with the fake claude given explicitly.
fn maintain(env: &TestEnv) -> Run {
    env.run(["maintain", "--claude-bin"]).arg(fake_claude())
}

/// Run `maintain --json ARGS`, expect success, return the report.
#[track_caller]
fn run(env: &TestEnv, args: &[&str]) -> Value {
    maintain(env).arg("--json").args(args).succeeds().json()
}

fn task<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tasks"]
        .as_array()
        .expect("tasks is an array")
        .iter()
        .find(|t| t["task"] == name)
        .unwrap_or_else(|| panic!("no task {name} in the report: {report:#}"))
}

fn task_names(report: &Value) -> Vec<String> {
    report["tasks"]
        .as_array()
        .expect("tasks is an array")
        .iter()
        .map(|t| t["task"].as_str().expect("task name").to_owned())
        .collect()
}

/// `touch -d WHEN path`.
fn touch(path: &Path, when: &str) {
    let status = Command::new("touch")
        .args(["-d", when])
        .arg(path)
        .status()
        .expect("run touch");
    assert!(status.success(), "touch -d {when} {}", path.display());
}

fn daily_path(env: &TestEnv, user: &str, day: &str) -> PathBuf {
    env.sessions_dir()
        .join("summaries")
        .join(user)
        .join("daily")
        .join(format!("{day}.md"))
}

fn weekly_path(env: &TestEnv, user: &str, week: &str) -> PathBuf {
    env.sessions_dir()
        .join("summaries")
        .join(user)
        .join("weekly")
        .join(format!("{week}.md"))
}

/// File names in a folder, sorted (empty if it does not exist).
fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn yaml_u64(front: &serde_yaml::Mapping, key: &str) -> u64 {
    front
        .get(key)
        .and_then(serde_yaml::Value::as_u64)
        .unwrap_or_else(|| panic!("frontmatter {key} is not a number: {front:?}"))
}

/// An RFC 3339 timestamp as UTC, whatever its spelling (`Z`, millis).
fn instant(ts: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .unwrap_or_else(|e| panic!("not RFC 3339 ({e}): {ts:?}"))
        .with_timezone(&chrono::Utc)
}

/// A hand-written daily summary, as an earlier run would have left it.
fn write_daily(env: &TestEnv, user: &str, day: &str, body: &str) {
    write_file(
        &daily_path(env, user, day),
        format!("---\nuser_id: {user}\ndate: {day}\nmessage_count: 1\n---\n\n{body}\n").as_bytes(),
    );
}

/// Every recorded call's stdin.
fn call_stdins(env: &TestEnv) -> Vec<String> {
    (1..=env.claude_calls())
        .map(|n| env.claude_call(n).stdin)
        .collect()
}

/// Every file (with its bytes) and folder (`None`) under the state dir,
/// except the lock files.
fn snapshot(env: &TestEnv) -> Snapshot {
    snapshot_tree(&env.state_dir(), |rel| rel == "sessions/.locks")
}

const COMPACT_CONFIG: &str = r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50}}"#;
const COMPACT_REPLY: &str = r#"{"summary":"They talked about tea.","facts":{}}"#;

// --- stm-expiry ------------------------------------------------------------------

#[test]
fn stm_expiry_archives_idle_users_byte_for_byte_and_leaves_active_ones_alone() {
    let env = TestEnv::new();
    // Idle: last message 2026-03-19T10:00, four days before --now. Lines in
    // shapes this tool would not write itself must come back unchanged.
    let idle = vec![
        r#"{"role": "user", "ts": "2026-03-18T09:00:00Z", "text": "old one"}"#.to_owned(),
        r#"{"ts":"2026-03-18T23:59:59.999Z","role":"assistant","text":"late \"reply\"","custom":{"k":[1,2]}}"#
            .to_owned(),
        r#"{"ts":"2026-03-19T10:00:00Z","role":"user","text":"last words ☕","msgId":"m-3"}"#.to_owned(),
    ];
    env.import("U1", &idle);
    let summary = "---\nuser_id: U1\nlast_compacted: 2026-03-18T00:00:00.000Z\nmessages_compacted: 40\n---\n\nKevin likes tea.\n";
    write_file(&env.stm_dir("U1").join("summary.md"), summary.as_bytes());
    let profile_path = env.sessions_dir().join("ltm").join("users").join("U1.md");
    let profile = "---\nuser_id: U1\nname: Kevin\n---\n\nLikes tea.\n";
    write_file(&profile_path, profile.as_bytes());
    // Active: one day idle; and one just under three days idle.
    env.import("U2", &[line("2026-03-22T08:00:00Z", "user", "recent")]);
    write_file(&env.stm_dir("U2").join("summary.md"), b"U2 summary\n");
    env.import(
        "U3",
        &[line("2026-03-20T13:00:00Z", "user", "almost three days")],
    );
    let u2_before = env.read_bytes("U2");
    let u3_before = env.read_bytes("U3");

    let report = run(
        &env,
        &["--only", "stm-expiry", "--now", "2026-03-23T12:00:00Z"],
    );
    assert_eq!(task(&report, "stm-expiry")["done"], 1, "{report:#}");

    let dir = env.archive_dir("U1");
    assert_eq!(
        names_in(&dir),
        vec![
            "messages-2026-03-18.jsonl.gz",
            "messages-2026-03-19.jsonl.gz",
            "summary-2026-03-23.md"
        ],
        "the idle user's archive"
    );
    assert_eq!(
        String::from_utf8(gunzip(&dir.join("messages-2026-03-18.jsonl.gz"))).unwrap(),
        format!("{}\n{}\n", idle[0], idle[1])
    );
    assert_eq!(
        String::from_utf8(gunzip(&dir.join("messages-2026-03-19.jsonl.gz"))).unwrap(),
        format!("{}\n", idle[2])
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("summary-2026-03-23.md")).unwrap(),
        summary,
        "the summary is archived as it was"
    );
    assert!(!env.stm_dir("U1").exists(), "stm/U1 is removed");
    assert_eq!(
        std::fs::read_to_string(&profile_path).unwrap(),
        profile,
        "the profile is untouched"
    );

    assert_eq!(
        env.read_bytes("U2"),
        u2_before,
        "the active user is left alone"
    );
    assert_eq!(
        std::fs::read(env.stm_dir("U2").join("summary.md")).unwrap(),
        b"U2 summary\n"
    );
    assert_eq!(
        env.read_bytes("U3"),
        u3_before,
        "under three days idle stays"
    );
    assert!(!env.archive_dir("U2").exists());
    assert!(!env.archive_dir("U3").exists());
    assert_eq!(env.claude_calls(), 0);

    // A second run finds nothing to do and changes nothing.
    let before = snapshot(&env);
    let report = run(
        &env,
        &["--only", "stm-expiry", "--now", "2026-03-23T12:00:00Z"],
    );
    assert_eq!(task(&report, "stm-expiry")["done"], 0, "{report:#}");
    assert_eq!(differences(&before, &snapshot(&env)), Vec::<String>::new());
}

#[test]
fn stm_expiry_goes_by_the_newest_message_not_the_last_line() {
    let env = TestEnv::new();
    // Active an hour ago; then an admin imports old history
    // (`append --jsonl old-messages.jsonl`), which lands after it.
    env.import(
        "U4",
        &[line("2026-03-23T11:00:00Z", "user", "active an hour ago")],
    );
    env.import(
        "U4",
        &[
            line("2026-03-01T10:00:00Z", "user", "imported old 1"),
            line("2026-03-01T10:05:00Z", "user", "imported old 2"),
        ],
    );
    let before = env.read_bytes("U4");

    let report = run(
        &env,
        &["--only", "stm-expiry", "--now", "2026-03-23T12:00:00Z"],
    );

    assert_eq!(
        String::from_utf8_lossy(&env.read_bytes("U4")),
        String::from_utf8_lossy(&before),
        "a user who wrote an hour ago is not idle and must keep the STM; report: {report}"
    );
    assert_eq!(task(&report, "stm-expiry")["done"], 0, "{report:#}");
}

#[test]
fn a_stored_line_from_the_future_does_not_pin_expiry() {
    let env = TestEnv::new();
    // Written by an earlier version, or by hand: input refuses such times now.
    env.write_messages_raw(
        "U5",
        format!(
            "{}\n{}\n",
            line("2026-03-01T10:00:00Z", "user", "idle for weeks"),
            line(
                "2999-01-01T00:00:00Z",
                "user",
                "a forged or mistyped future time"
            )
        )
        .as_bytes(),
    );
    let report = run(
        &env,
        &["--only", "stm-expiry", "--now", "2026-03-23T12:00:00Z"],
    );
    assert_eq!(task(&report, "stm-expiry")["done"], 1, "{report:#}");
    assert!(!env.messages_path("U5").exists(), "{report:#}");
}

// --- log-rotation ------------------------------------------------------------

#[test]
fn old_broker_logs_are_gzipped_into_the_archive_and_others_stay() {
    let env = TestEnv::new();
    let logs = env.state_dir().join("logs");
    let old = logs.join("broker-x.log");
    let old_bytes = b"2026-11-01 started\n2026-11-02 reply sent \xe2\x98\x95\nno final newline";
    write_file(&old, old_bytes);
    // A fixed time (long past), so the redo below can give the log the same.
    const FIRST_ROTATION: &str = "2026-01-01 00:00:00";
    touch(&old, FIRST_ROTATION);
    let fresh = logs.join("broker-fresh.log");
    write_file(&fresh, b"fresh\n");
    let other = logs.join("other.log");
    write_file(&other, b"not a broker log\n");
    touch(&other, "10 days ago");

    let report = run(&env, &["--only", "log-rotation"]);
    assert_eq!(task(&report, "log-rotation")["done"], 1, "{report:#}");

    // The archive is named after the log and its modification time.
    let archive_logs = env.sessions_dir().join("archive").join("logs");
    let names = names_in(&archive_logs);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].starts_with("broker-x-") && names[0].ends_with(".log.gz"),
        "{names:?}"
    );
    let archived = archive_logs.join(&names[0]);
    assert_eq!(gunzip(&archived), old_bytes.to_vec());
    assert!(!old.exists(), "the rotated log is removed");
    assert_eq!(
        std::fs::read(&fresh).unwrap(),
        b"fresh\n",
        "a fresh log stays"
    );
    assert_eq!(
        std::fs::read(&other).unwrap(),
        b"not a broker log\n",
        "a non-broker log stays"
    );

    // A rotation killed after the archive was written but before the log
    // was removed is done again: the same archive, not the log twice.
    // Same name and the same modification time as the first rotation.
    write_file(&old, old_bytes);
    touch(&old, FIRST_ROTATION);
    run(&env, &["--only", "log-rotation"]);
    let again = names_in(&archive_logs);
    assert_eq!(again.len(), 1, "redone, not archived twice: {again:?}");
    assert_eq!(gunzip(&archived), old_bytes.to_vec());

    // The same name rotated later: its own archive; each decodes whole.
    write_file(&old, b"second round\n");
    touch(&old, "9 days ago");
    run(&env, &["--only", "log-rotation"]);
    let both = names_in(&archive_logs);
    assert_eq!(both.len(), 2, "{both:?}");
    let second = both.iter().find(|n| **n != names[0]).unwrap();
    assert_eq!(
        gunzip(&archive_logs.join(second)),
        b"second round\n".to_vec()
    );
    assert!(!old.exists());

    // archive/logs is not a user: a whole pass has nothing to say about it,
    // and needs no claude when no LLM work is due.
    let out = env
        .run(["maintain", "--json", "--claude-bin"])
        .arg(env.dir.path().join("no-such-claude"))
        .succeeds();
    let report = out.json();
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(report["llmCalls"], 0, "{report:#}");
    assert!(archived.exists());
    assert!(!env.sessions_dir().join("summaries").join("logs").exists());
}

// --- compact -------------------------------------------------------------------

#[test]
fn the_compact_task_compacts_only_users_over_the_threshold() {
    let env = TestEnv::new();
    env.write_config(COMPACT_CONFIG);
    let lines = |user: &str, n: usize| -> Vec<String> {
        (0..n)
            .map(|i| {
                line(
                    &format!("2026-03-20T{:02}:{:02}:00Z", 8 + i / 60, i % 60),
                    "user",
                    &format!("{user} message {i}"),
                )
            })
            .collect()
    };
    env.import("U1", &lines("U1", 60));
    env.import("U2", &lines("U2", 50));
    env.import("U3", &lines("U3", 20));
    let u2 = env.read_bytes("U2");
    let u3 = env.read_bytes("U3");

    let out = maintain(&env)
        .args([
            "--json",
            "--only",
            "compact",
            "--now",
            "2026-03-20T12:00:00Z",
        ])
        .env("FAKE_CLAUDE_REPLY", COMPACT_REPLY)
        .succeeds();
    let report = out.json();

    assert_eq!(env.claude_calls(), 1, "one call, for U1");
    assert_eq!(report["llmCalls"], 1, "{report:#}");
    assert_eq!(task(&report, "compact")["done"], 1, "{report:#}");
    assert!(
        task(&report, "compact")["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("U1")),
        "{report:#}"
    );
    assert!(env.claude_call(1).stdin.contains("U1 message 0"));
    let kept = env.read_lines("U1");
    assert_eq!(kept.len(), 10, "the context window stays raw");
    assert!(kept[0].contains("U1 message 50"));
    assert!(env.stm_dir("U1").join("summary.md").exists());
    let archived = gunzip(&env.archive_dir("U1").join("messages-2026-03-20.jsonl.gz"));
    assert_eq!(String::from_utf8(archived).unwrap().lines().count(), 50);
    assert_eq!(env.read_bytes("U2"), u2, "at the threshold: not over it");
    assert_eq!(env.read_bytes("U3"), u3);
    assert!(!env.stm_dir("U2").join("summary.md").exists());
    assert!(!env.archive_dir("U2").exists());
    assert!(!env.archive_dir("U3").exists());
}

// --- daily ---------------------------------------------------------------------

#[test]
fn daily_summaries_start_at_the_daily_hour_one_per_past_day_with_messages() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[
            line("2026-03-20T08:00:00Z", "user", "alpha morning"),
            line("2026-03-20T21:30:00Z", "user", "alpha evening"),
            line("2026-03-21T10:00:00Z", "user", "beta"),
            line("2026-03-24T01:00:00Z", "user", "message of today"),
        ],
    );
    env.import("U2", &[line("2026-03-21T12:00:00Z", "user", "gamma")]);

    let report = run(&env, &["--only", "daily", "--now", "2026-03-24T02:59:59Z"]);
    assert_eq!(
        env.claude_calls(),
        0,
        "before dailySummaryHour (3): no daily"
    );
    assert_eq!(task(&report, "daily")["done"], 0);
    assert!(
        task(&report, "daily")["note"]
            .as_str()
            .is_some_and(|n| n.contains("03:00")),
        "the report says why: {report:#}"
    );
    assert!(!env.sessions_dir().join("summaries").exists());

    let report = run(&env, &["--only", "daily", "--now", "2026-03-24T03:00:00Z"]);
    assert_eq!(env.claude_calls(), 3, "U1 03-20, U1 03-21, U2 03-21");
    assert_eq!(report["llmCalls"], 3);
    assert_eq!(task(&report, "daily")["done"], 3, "{report:#}");
    assert_eq!(
        names_in(
            &env.sessions_dir()
                .join("summaries")
                .join("U1")
                .join("daily")
        ),
        vec!["2026-03-20.md", "2026-03-21.md"],
        "today's messages make no daily"
    );
    assert_eq!(
        names_in(
            &env.sessions_dir()
                .join("summaries")
                .join("U2")
                .join("daily")
        ),
        vec!["2026-03-21.md"]
    );

    let (front, body) = read_markdown(&daily_path(&env, "U1", "2026-03-20"));
    assert_eq!(yaml_str(&front, "user_id"), Some("U1"));
    assert_eq!(yaml_str(&front, "date"), Some("2026-03-20"));
    assert_eq!(yaml_u64(&front, "message_count"), 2);
    assert_eq!(
        instant(yaml_str(&front, "first_message").unwrap()),
        instant("2026-03-20T08:00:00Z")
    );
    assert_eq!(
        instant(yaml_str(&front, "last_message").unwrap()),
        instant("2026-03-20T21:30:00Z")
    );
    assert!(
        body.contains("fake reply to:"),
        "the body is claude's reply: {body:?}"
    );

    let (front, _) = read_markdown(&daily_path(&env, "U2", "2026-03-21"));
    assert_eq!(yaml_str(&front, "user_id"), Some("U2"));
    assert_eq!(yaml_u64(&front, "message_count"), 1);

    // Each call is given exactly its day's messages.
    let stdins = call_stdins(&env);
    let day20: Vec<&String> = stdins
        .iter()
        .filter(|s| s.contains("alpha morning"))
        .collect();
    assert_eq!(day20.len(), 1, "{stdins:#?}");
    assert!(day20[0].contains("2026-03-20"));
    assert!(day20[0].contains("alpha evening"));
    assert!(!day20[0].contains("beta"));
    assert!(
        stdins.iter().all(|s| !s.contains("message of today")),
        "{stdins:#?}"
    );
}

#[test]
fn daily_summaries_read_the_days_compaction_moved_into_the_archive() {
    let env = TestEnv::new();
    env.write_config(COMPACT_CONFIG);
    let lines: Vec<String> = (0..60)
        .map(|i| {
            line(
                &format!("2026-03-{}T08:{:02}:00Z", 20 + i / 20, i % 20),
                "user",
                &format!("msg-{i:02}"),
            )
        })
        .collect();
    env.import("U1", &lines);

    maintain(&env)
        .args([
            "--json",
            "--only",
            "compact",
            "--now",
            "2026-03-22T23:00:00Z",
        ])
        .env("FAKE_CLAUDE_REPLY", COMPACT_REPLY)
        .succeeds();
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_lines("U1").len(), 10, "50 archived, 10 kept");
    assert_eq!(
        names_in(&env.archive_dir("U1")),
        vec![
            "messages-2026-03-20.jsonl.gz",
            "messages-2026-03-21.jsonl.gz",
            "messages-2026-03-22.jsonl.gz"
        ]
    );

    let report = run(&env, &["--only", "daily", "--now", "2026-03-23T05:00:00Z"]);
    assert_eq!(task(&report, "daily")["done"], 3, "{report:#}");
    assert_eq!(env.claude_calls(), 4);

    for (day, first, last) in [
        ("2026-03-20", "2026-03-20T08:00:00Z", "2026-03-20T08:19:00Z"),
        ("2026-03-21", "2026-03-21T08:00:00Z", "2026-03-21T08:19:00Z"),
        // Ten in the archive, ten still in STM.
        ("2026-03-22", "2026-03-22T08:00:00Z", "2026-03-22T08:19:00Z"),
    ] {
        let (front, _) = read_markdown(&daily_path(&env, "U1", day));
        assert_eq!(yaml_str(&front, "date"), Some(day));
        assert_eq!(yaml_u64(&front, "message_count"), 20, "{day}: {front:?}");
        assert_eq!(
            instant(yaml_str(&front, "first_message").unwrap()),
            instant(first)
        );
        assert_eq!(
            instant(yaml_str(&front, "last_message").unwrap()),
            instant(last)
        );
    }
    let stdins = call_stdins(&env);
    let day22: Vec<&String> = stdins
        .iter()
        .filter(|s| s.starts_with("Day: 2026-03-22"))
        .collect();
    assert_eq!(day22.len(), 1, "{stdins:#?}");
    assert!(day22[0].contains("msg-40"), "archived part of the day");
    assert!(day22[0].contains("msg-59"), "STM part of the day");
    assert!(!day22[0].contains("msg-39"), "another day's message");
}

#[test]
fn a_second_run_the_same_day_makes_no_llm_call() {
    let env = TestEnv::new();
    env.write_config(
        r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50,"weeklySummaryDay":1}}"#,
    );
    // 2026-03-16 … 03-22 is 2026-W12; --now is the Monday after.
    let mut lines = vec![
        line("2026-03-17T09:00:00Z", "user", "tuesday"),
        line("2026-03-19T09:00:00Z", "user", "thursday"),
        line("2026-03-22T09:00:00Z", "user", "sunday"),
    ];
    lines.extend((0..55).map(|i| {
        line(
            &format!("2026-03-23T01:{i:02}:00Z"),
            "user",
            &format!("today {i}"),
        )
    }));
    env.import("U1", &lines);
    env.import("U2", &[line("2026-03-22T10:00:00Z", "user", "other user")]);

    let out = maintain(&env)
        .args(["--json", "--now", "2026-03-23T05:00:00Z"])
        .env("FAKE_CLAUDE_REPLY", COMPACT_REPLY)
        .succeeds();
    let first = out.json();
    // compact U1 + dailies U1 ×3, U2 ×1 + weeklies U1, U2.
    assert_eq!(first["llmCalls"], 7, "{first:#}");
    assert_eq!(env.claude_calls(), 7);
    assert!(weekly_path(&env, "U1", "2026-W12").exists());
    assert!(weekly_path(&env, "U2", "2026-W12").exists());

    for now in ["2026-03-23T05:00:00Z", "2026-03-23T23:59:00Z"] {
        let before = env.claude_calls();
        let report = run(&env, &["--now", now]);
        assert_eq!(
            env.claude_calls(),
            before,
            "no call on a second run at {now}"
        );
        assert_eq!(report["llmCalls"], 0, "{report:#}");
        for name in ["compact", "daily", "weekly"] {
            assert_eq!(
                task(&report, name)["done"],
                0,
                "{name} at {now}: {report:#}"
            );
        }
    }
}

// --- weekly --------------------------------------------------------------------

#[test]
fn weekly_summaries_across_the_2026_year_end() {
    let env = TestEnv::new();
    env.write_config(r#"{"compacting":{"weeklySummaryDay":1}}"#);
    // Written as a file: these times may be ahead of the real clock, which
    // an import refuses (the test's clock is --now).
    let lines = [
        // 2026-W52: two days with messages, only one daily.
        line("2026-12-22T10:00:00Z", "user", "w52 tuesday"),
        line("2026-12-23T10:00:00Z", "user", "w52 wednesday"),
        // 2026-W53: Monday 2026-12-28 … Sunday 2027-01-03.
        line("2026-12-28T10:00:00Z", "user", "w53 monday"),
        line("2026-12-31T22:00:00Z", "user", "w53 new year's eve"),
        line("2027-01-01T01:00:00Z", "user", "w53 new year"),
        line("2027-01-03T20:00:00Z", "user", "w53 sunday"),
    ];
    env.write_messages_raw("U1", format!("{}\n", lines.join("\n")).as_bytes());
    write_daily(&env, "U1", "2026-12-22", "Daily note 2026-12-22");
    for day in ["2026-12-28", "2026-12-31", "2027-01-01", "2027-01-03"] {
        write_daily(&env, "U1", day, &format!("Daily note {day}"));
    }
    let weekly_dir = env.sessions_dir().join("summaries/U1/weekly");

    for now in [
        "2027-01-03T23:59:00Z", // the week is not over
        "2027-01-04T02:00:00Z", // its due day, before dailySummaryHour
    ] {
        let report = run(&env, &["--only", "weekly", "--now", now]);
        assert_eq!(env.claude_calls(), 0, "nothing due at {now}: {report:#}");
        assert_eq!(
            names_in(&weekly_dir),
            Vec::<String>::new(),
            "at {now} (and W52 misses a daily)"
        );
    }

    let report = run(&env, &["--only", "weekly", "--now", "2027-01-04T05:00:00Z"]);
    assert_eq!(env.claude_calls(), 1, "W53 only: {report:#}");
    assert_eq!(
        names_in(&weekly_dir),
        vec!["2026-W53.md"],
        "the ISO week-numbering year, and no weekly for W52 whose 12-23 has no daily"
    );
    let (front, _) = read_markdown(&weekly_path(&env, "U1", "2026-W53"));
    assert_eq!(yaml_str(&front, "week"), Some("2026-W53"));
    assert_eq!(yaml_str(&front, "user_id"), Some("U1"));
    assert_eq!(yaml_u64(&front, "daily_summaries"), 4);
    let stdin = env.claude_call(1).stdin;
    assert!(stdin.contains("2026-W53"), "{stdin}");
    for day in ["2026-12-28", "2026-12-31", "2027-01-01", "2027-01-03"] {
        assert!(stdin.contains(&format!("Daily note {day}")), "{stdin}");
    }
    assert!(!stdin.contains("Daily note 2026-12-22"), "{stdin}");

    // One pass writes the missing daily, then the weekly it unblocks.
    let report = run(
        &env,
        &["--only", "daily,weekly", "--now", "2027-01-04T05:00:00Z"],
    );
    assert_eq!(task_names(&report), vec!["daily", "weekly"]);
    assert_eq!(task(&report, "daily")["done"], 1, "{report:#}");
    assert_eq!(task(&report, "weekly")["done"], 1, "{report:#}");
    assert_eq!(env.claude_calls(), 3);
    assert!(daily_path(&env, "U1", "2026-12-23").exists());
    assert_eq!(names_in(&weekly_dir), vec!["2026-W52.md", "2026-W53.md"]);
    let (front, _) = read_markdown(&weekly_path(&env, "U1", "2026-W52"));
    assert_eq!(yaml_str(&front, "week"), Some("2026-W52"));
    assert_eq!(yaml_u64(&front, "daily_summaries"), 2);
}

// --- cost cap, dry run, --only, --jobs -----------------------------------------

#[test]
fn max_llm_calls_leaves_the_rest_for_the_next_run() {
    let env = TestEnv::new();
    let lines: Vec<String> = (17..22)
        .map(|d| {
            line(
                &format!("2026-03-{d}T10:00:00Z"),
                "user",
                &format!("day {d}"),
            )
        })
        .collect();
    env.import("U1", &lines);

    let report = run(
        &env,
        &[
            "--only",
            "daily",
            "--max-llm-calls",
            "2",
            "--now",
            "2026-03-22T05:00:00Z",
        ],
    );
    assert_eq!(env.claude_calls(), 2);
    assert_eq!(report["llmCalls"], 2, "{report:#}");
    assert_eq!(report["leftForNextRun"], 3, "{report:#}");
    assert_eq!(task(&report, "daily")["leftForNextRun"], 3);
    assert_eq!(task(&report, "daily")["done"], 2);
    assert_eq!(
        names_in(&env.sessions_dir().join("summaries/U1/daily")).len(),
        2
    );

    let report = run(&env, &["--only", "daily", "--now", "2026-03-22T05:00:00Z"]);
    assert_eq!(env.claude_calls(), 5, "the next run finishes the rest");
    assert_eq!(report["llmCalls"], 3);
    assert_eq!(report["leftForNextRun"], 0);
    assert_eq!(
        names_in(&env.sessions_dir().join("summaries/U1/daily")),
        (17..22)
            .map(|d| format!("2026-03-{d}.md"))
            .collect::<Vec<_>>()
    );
}

#[test]
fn dry_run_lists_every_action_and_changes_nothing() {
    let env = TestEnv::new();
    env.write_config(
        r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50,"weeklySummaryDay":1}}"#,
    );
    // stm-expiry: idle since 03-10.
    env.import("OLD", &[line("2026-03-10T10:00:00Z", "user", "long ago")]);
    write_file(&env.stm_dir("OLD").join("summary.md"), b"old summary\n");
    // log-rotation.
    let log = env.state_dir().join("logs").join("broker-a.log");
    write_file(&log, b"log line\n");
    touch(&log, "2026-03-01 00:00:00 UTC");
    // compact + daily.
    env.import(
        "BIG",
        &(0..60)
            .map(|i| {
                line(
                    &format!("2026-03-22T10:{i:02}:00Z"),
                    "user",
                    &format!("big {i}"),
                )
            })
            .collect::<Vec<_>>(),
    );
    // weekly: 2026-W12 with all its dailies.
    env.import("WK", &[line("2026-03-17T10:00:00Z", "user", "tuesday")]);
    write_daily(&env, "WK", "2026-03-17", "Tuesday");
    // index: an archive day not in the recall index.
    write_file(
        &env.archive_dir("ARC").join("messages-2026-03-12.jsonl.gz"),
        &crate::common::gzip(
            format!("{}\n", line("2026-03-12T10:00:00Z", "user", "archived")).as_bytes(),
        ),
    );
    // migrate: a group as the previous version wrote it (stm/GRP, not stm/#GRP).
    env.write_messages_raw(
        "GRP",
        format!(
            "{}\n",
            json!({"ts": "2026-03-22T09:00:00Z", "role": "user", "text": "group hi", "userId": "U7"})
        )
        .as_bytes(),
    );
    write_file(&env.sessions_dir().join("memberships/U7/GRP"), b"");
    // prune.
    std::fs::create_dir_all(env.sessions_dir().join("summaries/U9/daily")).unwrap();
    let stale = env.stm_dir("WK").join(".x.tmp");
    write_file(&stale, b"torn");
    touch(&stale, "2 hours ago");

    let before = snapshot(&env);
    let report = run(&env, &["--dry-run", "--now", "2026-03-23T05:00:00Z"]);
    assert_eq!(
        differences(&before, &snapshot(&env)),
        Vec::<String>::new(),
        "a dry run changes nothing"
    );
    assert_eq!(env.claude_calls(), 0, "a dry run calls nothing");
    assert_eq!(report["llmCalls"], 0);
    assert_eq!(report["dryRun"], true);
    assert_eq!(report["errors"], 0, "{report:#}");

    let actions = |name: &str| -> Vec<String> {
        task(&report, name)["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    let has = |name: &str, words: &[&str]| {
        assert!(
            actions(name)
                .iter()
                .any(|a| words.iter().all(|w| a.contains(w))),
            "{name} should list an action with {words:?}: {report:#}"
        );
    };
    has("stm-expiry", &["OLD"]);
    has("log-rotation", &["broker-a.log"]);
    has("compact", &["BIG"]);
    has("daily", &["OLD", "2026-03-10"]);
    has("daily", &["BIG", "2026-03-22"]);
    has("weekly", &["WK", "2026-W12"]);
    has("prune", &["U9"]);
    has("prune", &[".x.tmp"]);
    has("migrate", &["GRP"]);
    has("index", &["ARC", "1 archive day"]);
    for name in TASKS {
        assert!(
            task(&report, name)["done"].as_u64().unwrap() >= 1,
            "{name}: {report:#}"
        );
    }

    // The text report of a dry run says so too.
    let out = maintain(&env)
        .args(["--dry-run", "--now", "2026-03-23T05:00:00Z"])
        .succeeds();
    let text = out.stdout();
    assert!(text.contains("dry run"), "{text}");
    assert!(text.contains("broker-a.log"), "{text}");
    assert_eq!(differences(&before, &snapshot(&env)), Vec::<String>::new());
    assert_eq!(env.claude_calls(), 0);
}

#[test]
fn only_runs_the_named_tasks_and_refuses_unknown_ones() {
    let env = TestEnv::new();
    env.import("OLD", &[line("2026-03-10T10:00:00Z", "user", "long ago")]);
    let log = env.state_dir().join("logs").join("broker-a.log");
    write_file(&log, b"log line\n");
    touch(&log, "2026-03-01 00:00:00 UTC");
    std::fs::create_dir_all(env.sessions_dir().join("summaries/U9/daily")).unwrap();

    let report = run(
        &env,
        &["--only", "daily,weekly", "--now", "2026-03-23T05:00:00Z"],
    );
    assert_eq!(task_names(&report), vec!["daily", "weekly"]);
    // The daily of OLD's 03-10, then the weekly of 2026-W11 it completes.
    assert_eq!(env.claude_calls(), 2, "{report:#}");
    assert!(daily_path(&env, "OLD", "2026-03-10").exists());
    assert!(weekly_path(&env, "OLD", "2026-W11").exists());
    assert!(
        env.stm_dir("OLD").join("messages.jsonl").exists(),
        "no expiry"
    );
    assert!(log.exists(), "no log rotation");
    assert!(
        env.sessions_dir().join("summaries/U9/daily").exists(),
        "no prune"
    );

    let before = snapshot(&env);
    let out = maintain(&env)
        .args(["--only", "daily,bogus", "--now", "2026-03-23T05:00:00Z"])
        .fails(Exit::Usage);
    let stderr = out.stderr();
    assert!(stderr.contains("bogus"), "{stderr}");
    for name in TASKS {
        assert!(stderr.contains(name), "the error names {name}: {stderr}");
    }
    assert_eq!(differences(&before, &snapshot(&env)), Vec::<String>::new());
    assert_eq!(env.claude_calls(), 2);
}

#[test]
fn jobs_run_llm_calls_in_parallel() {
    let env = TestEnv::new();
    for user in ["U1", "U2"] {
        let lines: Vec<String> = (17..21)
            .map(|d| {
                line(
                    &format!("2026-03-{d}T10:00:00Z"),
                    "user",
                    &format!("{user} {d}"),
                )
            })
            .collect();
        env.import(user, &lines);
    }

    let start = Instant::now();
    let report = maintain(&env)
        .args([
            "--json",
            "--only",
            "daily",
            "--jobs",
            "4",
            "--now",
            "2026-03-22T05:00:00Z",
        ])
        .env("FAKE_CLAUDE_SLEEP", "1")
        .succeeds()
        .json();
    let elapsed = start.elapsed();
    assert_eq!(env.claude_calls(), 8);
    assert_eq!(report["llmCalls"], 8);
    assert!(
        elapsed < Duration::from_secs(6),
        "8 one-second calls on 4 jobs took {elapsed:?}"
    );
    for user in ["U1", "U2"] {
        assert_eq!(
            names_in(
                &env.sessions_dir()
                    .join("summaries")
                    .join(user)
                    .join("daily")
            )
            .len(),
            4
        );
    }
}

// --- failures ------------------------------------------------------------------

#[test]
fn a_failure_in_one_user_is_reported_and_the_others_are_done() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-20T10:00:00Z", "user", "one")]);
    env.import(
        "U2",
        &[
            line("2026-03-20T10:00:00Z", "user", "two a"),
            line("2026-03-21T10:00:00Z", "user", "two b"),
        ],
    );
    env.import("U3", &[line("2026-03-21T10:00:00Z", "user", "three")]);
    // U2's daily folder is a file: writing U2's dailies fails.
    write_file(
        &env.sessions_dir().join("summaries/U2/daily"),
        b"not a folder",
    );

    let out = maintain(&env)
        .args(["--json", "--now", "2026-03-22T05:00:00Z"])
        .fails(Exit::State);
    let report = out.json();
    assert!(report["errors"].as_u64().unwrap() >= 1, "{report:#}");
    let daily_errors = task(&report, "daily")["errors"].as_array().unwrap();
    assert!(!daily_errors.is_empty(), "{report:#}");
    for task in report["tasks"].as_array().unwrap() {
        for error in task["errors"].as_array().unwrap() {
            assert!(
                error.as_str().unwrap().contains("U2"),
                "only U2 fails: {report:#}"
            );
        }
    }
    assert_eq!(task(&report, "daily")["done"], 2, "{report:#}");
    assert!(daily_path(&env, "U1", "2026-03-20").exists());
    assert!(daily_path(&env, "U3", "2026-03-21").exists());
    assert_eq!(
        std::fs::read(env.sessions_dir().join("summaries/U2/daily")).unwrap(),
        b"not a folder"
    );
}

#[test]
fn an_unreadable_archive_day_is_not_summarised_as_an_empty_day() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-21T10:00:00Z", "user", "fine")]);
    // U3's only record of 03-20 is not gzip at all.
    write_file(
        &env.archive_dir("U3").join("messages-2026-03-20.jsonl.gz"),
        b"garbage, not gzip\n",
    );

    let out = maintain(&env)
        .args(["--json", "--only", "daily", "--now", "2026-03-22T05:00:00Z"])
        .output();
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    let stderr = stderr_of(&out);
    assert!(
        daily_path(&env, "U1", "2026-03-21").exists(),
        "the other user is done: {report:#} {stderr}"
    );
    let damage_said = stderr.contains("messages-2026-03-20.jsonl.gz")
        || report.to_string().contains("messages-2026-03-20.jsonl.gz");
    assert!(damage_said, "the damage is reported: {report:#} {stderr}");
    let u3 = daily_path(&env, "U3", "2026-03-20");
    let written = u3.exists().then(|| std::fs::read_to_string(&u3).unwrap());
    assert!(
        written.is_none(),
        "no daily summary of a day none of whose messages could be read (it cost a call, \
         says message_count 0 and blocks a real summary once the archive is repaired); \
         calls made: {:#?}; written: {written:?}",
        call_stdins(&env)
    );
    assert_eq!(env.claude_calls(), 1, "only U1's day is worth a call");
}

// --- prune ---------------------------------------------------------------------

#[test]
fn prune_removes_empty_folders_and_stale_temp_files_only() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-20T10:00:00Z", "user", "hello")]);
    write_daily(&env, "U1", "2026-03-20", "kept");
    std::fs::create_dir_all(env.sessions_dir().join("summaries/U9/daily")).unwrap();
    std::fs::create_dir_all(env.sessions_dir().join("summaries/U1/weekly")).unwrap();
    std::fs::create_dir_all(env.stm_dir("U8")).unwrap();
    let stale = env.stm_dir("U1").join(".x.tmp");
    write_file(&stale, b"left by a killed writer");
    touch(&stale, "2 hours ago");
    let fresh = env.stm_dir("U1").join(".y.tmp");
    write_file(&fresh, b"being written");
    let not_temp = env.stm_dir("U1").join("notes.tmp");
    write_file(&not_temp, b"not ours");
    touch(&not_temp, "2 hours ago");
    let messages = env.read_bytes("U1");

    let report = run(&env, &["--only", "prune"]);
    assert_eq!(report["errors"], 0, "{report:#}");
    let summaries = env.sessions_dir().join("summaries");
    assert!(
        !summaries.join("U9").exists(),
        "summaries/U9 (only empty folders)"
    );
    assert!(
        !summaries.join("U1/weekly").exists(),
        "an empty weekly folder"
    );
    assert!(!env.stm_dir("U8").exists(), "an empty stm folder");
    assert!(daily_path(&env, "U1", "2026-03-20").exists());
    assert!(!stale.exists(), "a stale temporary file");
    assert!(fresh.exists(), "a temporary file being written stays");
    assert!(not_temp.exists(), "not one of our temporary files");
    assert_eq!(env.read_bytes("U1"), messages);
    assert!(
        env.sessions_dir().join(".locks").exists(),
        "locks are never pruned"
    );
}

#[test]
fn prune_waits_for_a_writer_that_holds_the_user_lock() {
    let env = TestEnv::new();
    // A writer between its mkdir and its open: it holds the user lock and
    // its folder is still empty.
    let lock_path = env.user_lock_path("R0");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap();
    lock.lock().unwrap();
    std::fs::create_dir_all(env.stm_dir("R0")).unwrap();

    let prune = maintain(&env).args(["--only", "prune", "--json"]).spawn();
    std::thread::sleep(Duration::from_millis(500));
    let still_there = env.stm_dir("R0").is_dir();
    if still_there {
        write_file(
            &env.messages_path("R0"),
            b"{\"ts\":\"2026-03-20T10:00:00Z\",\"role\":\"user\",\"text\":\"mine\"}\n",
        );
    }
    lock.unlock().unwrap();
    drop(lock);
    let out = prune.wait_with_output().unwrap();
    assert!(
        still_there,
        "prune removed the folder of a writer holding the user lock; prune said: {}",
        stdout_of(&out)
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        env.read_lines("R0").len(),
        1,
        "the writer's message is kept"
    );
}

#[test]
fn prune_racing_appends_loses_nothing() {
    let env = TestEnv::new();
    env.write_config(r#"{"durability":{"fsync":false}}"#);
    const WRITERS: usize = 8;
    const MESSAGES: usize = 50;
    // Empty folders of the users about to write: prune wants them gone
    // just as the first append wants to use them.
    for w in 0..WRITERS {
        std::fs::create_dir_all(env.stm_dir(&format!("R{w}"))).unwrap();
        std::fs::create_dir_all(env.sessions_dir().join(format!("summaries/R{w}/daily"))).unwrap();
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let env = &env;
            let done = &done;
            scope.spawn(move || {
                for m in 0..MESSAGES {
                    env.run(["append", "--user", &format!("R{w}"), "--"])
                        .arg(format!("writer {w} message {m}"))
                        .succeeds();
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        let mut runs = 0;
        while runs < 20 || done.load(std::sync::atomic::Ordering::SeqCst) < WRITERS {
            maintain(&env)
                .args(["--only", "prune", "--json"])
                .succeeds();
            runs += 1;
        }
    });
    for w in 0..WRITERS {
        let user = format!("R{w}");
        let texts: Vec<String> = env
            .messages(&user)
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_owned())
            .collect();
        let expected: Vec<String> = (0..MESSAGES)
            .map(|m| format!("writer {w} message {m}"))
            .collect();
        assert_eq!(texts, expected, "{user}'s log");
    }
}

// --- overlapping runs and the report ---------------------------------------------

#[test]
fn a_second_concurrent_run_says_so_and_does_nothing() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[
            line("2026-03-20T10:00:00Z", "user", "a"),
            line("2026-03-21T10:00:00Z", "user", "b"),
        ],
    );
    let args = ["--only", "daily", "--now", "2026-03-22T05:00:00Z"];
    let slow = [("FAKE_CLAUDE_SLEEP", "2")];
    let start = Instant::now();
    let mut first = maintain(&env).args(args).envs(&slow).spawn();
    let mut second = maintain(&env).args(args).envs(&slow).spawn();
    // Poll both, noting when each ends.
    let mut ended: [Option<Duration>; 2] = [None, None];
    let finished = wait_for(Duration::from_secs(30), Duration::from_millis(20), || {
        for (i, child) in [&mut first, &mut second].into_iter().enumerate() {
            if ended[i].is_none() && child.try_wait().unwrap().is_some() {
                ended[i] = Some(start.elapsed());
            }
        }
        ended.iter().all(Option::is_some)
    });
    let outs = [
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    ];
    assert!(finished, "both runs end");
    for out in &outs {
        assert!(out.status.success(), "{}", stderr_of(out));
    }
    let busy: Vec<usize> = (0..2)
        .filter(|&i| stdout_of(&outs[i]).contains("another maintain run is in progress"))
        .collect();
    assert_eq!(
        busy.len(),
        1,
        "exactly one run is turned away: {:?} / {:?}",
        stdout_of(&outs[0]),
        stdout_of(&outs[1])
    );
    let (busy, worker) = (busy[0], 1 - busy[0]);
    assert!(
        stdout_of(&outs[worker]).contains("daily"),
        "{}",
        stdout_of(&outs[worker])
    );
    assert!(
        ended[busy] < ended[worker],
        "the turned-away run returns at once: {ended:?}"
    );
    assert_eq!(env.claude_calls(), 2, "each due daily once");
    assert!(daily_path(&env, "U1", "2026-03-20").exists());
    assert!(daily_path(&env, "U1", "2026-03-21").exists());
}

#[test]
fn the_json_report_lists_every_task_in_order_with_counts() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-20T10:00:00Z", "user", "hello")]);

    let report = run(&env, &["--now", "2026-03-22T05:00:00Z"]);
    assert_eq!(task_names(&report), TASKS.to_vec(), "{report:#}");
    for t in report["tasks"].as_array().unwrap() {
        assert!(t["done"].is_u64(), "{t}");
        assert!(t["leftForNextRun"].is_u64(), "{t}");
        assert!(t["actions"].is_array(), "{t}");
        assert!(t["errors"].is_array(), "{t}");
    }
    assert_eq!(report["llmCalls"], 1, "{report:#}");
    assert_eq!(report["leftForNextRun"], 0);
    assert_eq!(report["errors"], 0);
    assert_eq!(task(&report, "daily")["done"], 1);
    assert_eq!(
        instant(report["now"].as_str().expect("now")),
        instant("2026-03-22T05:00:00Z")
    );

    // The text report names every task and the totals.
    let out = maintain(&env)
        .args(["--now", "2026-03-22T05:00:00Z"])
        .succeeds();
    let text = out.stdout();
    for name in TASKS {
        assert!(text.contains(name), "{text}");
    }
    assert!(text.contains("LLM calls: 0"), "{text}");

    // A --now that is not RFC 3339 is a usage error.
    maintain(&env)
        .args(["--now", "yesterday"])
        .fails(Exit::Usage);
}

/// Issue 13, point 5: a person erased while their daily summary is being
/// written gets no summary back afterwards.
#[test]
fn an_erase_during_a_daily_summary_is_final() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[line("2026-03-20T08:00:00Z", "user", "something private")],
    );
    let child = maintain(&env)
        .args(["--only", "daily", "--now", "2026-03-24T12:00:00Z"])
        .env("FAKE_CLAUDE_SLEEP", "2")
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(10);
    while env.claude_calls() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(env.claude_calls(), 1, "the summary call started");
    env.run(["session", "clear", "--user", "U1", "--all", "--yes"])
        .succeeds();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !daily_path(&env, "U1", "2026-03-20").exists(),
        "the summary came back after the erase: {stderr}"
    );
    assert!(stderr.contains("erased"), "{stderr}");
}

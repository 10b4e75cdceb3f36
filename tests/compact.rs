//! `compact`: what leaves the log and where it goes (summary, archives by
//! UTC day, profile facts, the tag index), what a failed or dry run leaves
//! alone, `--all` over many users, appends racing a compaction, two
//! compactions at once, auto-compaction after `ask` and a garbage journal.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    Exit, Run, Snapshot, TestEnv, compaction_reply, differences, exit_of, fake_claude, line_with,
    read, read_markdown, snapshot_tree, stderr_of, stdout_of, wait_for, write_file, yaml_str,
};
use serde_json::{Value, json};

const SUMMARY_1: &str = "Kevin prepares for the TOEIC exam; he wants short answers.";
const SUMMARY_2: &str = "Kevin passed a mock TOEIC test with 820 points.";

/// The structured answer the fake claude gives to a compaction call.
fn answer(summary: &str) -> String {
    compaction_reply(
        summary,
        json!({
            "name": "Kevin",
            "language": "Traditional Chinese",
            "timezone": "Asia/Taipei",
            "preferences": ["short answers", "no emoji"],
            "topics": ["TOEIC 860 preparation"],
            "tags": ["English", "exam"]
        }),
    )
}

/// [`TestEnv::compact`] `ARGS…`, the fake answering `SUMMARY_1` about Kevin.
fn compact_kevin<I, S>(env: &TestEnv, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    env.compact(args)
        .env("FAKE_CLAUDE_REPLY", answer(SUMMARY_1))
}

/// Sixty lines over three UTC days, some in shapes this tool would not
/// write itself (other key order, spaces, unknown fields, a UTC offset
/// whose UTC date is the day before, milliseconds at midnight).
fn sixty_lines() -> Vec<String> {
    (0..60)
        .map(|i| {
            let day = 20 + i / 20;
            let ts = format!("2026-03-{day}T{:02}:{:02}:00Z", 8 + (i % 20) / 2, i % 60);
            match i {
                3 => format!(
                    r#"{{"role":"assistant","text":"reply {i} with \"quotes\" and ünïcode","ts":"{ts}","msgId":"m{i}","usage":{{"input_tokens":12,"output_tokens":7}},"costUsd":0.0123}}"#
                ),
                7 => format!(
                    r#"{{ "ts": "{ts}", "role": "user", "text": "spaced {i}", "msgId": "m{i}", "mood": {{"x": [1, 2]}} }}"#
                ),
                // 07:30 on 2026-03-21 in Tokyo is 22:30 on 2026-03-20 UTC.
                25 => format!(
                    r#"{{"ts":"2026-03-21T07:30:00+09:00","role":"user","text":"offset {i}","msgId":"m{i}","threadId":"t1"}}"#
                ),
                39 => format!(
                    r#"{{"ts":"2026-03-21T23:59:59.999Z","role":"system","text":"late {i}","msgId":"m{i}","x-new-field":null}}"#
                ),
                40 => format!(
                    r#"{{"ts":"2026-03-22T00:00:00.000Z","role":"user","text":"midnight {i}","msgId":"m{i}","attachments":[{{"type":"image","path":"/tmp/a.png","name":"a.png","size":3}}]}}"#
                ),
                _ => line_with(&ts, "user", &format!("message {i}"), &[("msgId", &format!("m{i}"))]),
            }
        })
        .collect()
}

/// The UTC day (YYYY-MM-DD) of a line's `ts`.
fn utc_day(line: &str) -> String {
    let value: Value = serde_json::from_str(line).expect("a JSON line");
    let ts = value["ts"].as_str().expect("ts");
    chrono::DateTime::parse_from_rfc3339(ts)
        .expect("RFC 3339")
        .with_timezone(&chrono::Utc)
        .format("%Y-%m-%d")
        .to_string()
}

fn msg_id(line: &str) -> String {
    let value: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"));
    value["msgId"]
        .as_str()
        .unwrap_or_else(|| panic!("no msgId: {line:?}"))
        .to_owned()
}

/// Expected archives: file name → the lines, in order, each with `\n`.
fn by_day(lines: &[String]) -> BTreeMap<String, Vec<u8>> {
    let mut out: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for line in lines {
        let bytes = out
            .entry(format!("messages-{}.jsonl.gz", utc_day(line)))
            .or_default();
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    out
}

/// Every file (with its bytes) and folder (`None`) under `sessions/`,
/// except the lock files and the cost ledger.
fn snapshot(env: &TestEnv) -> Snapshot {
    snapshot_tree(&env.sessions_dir(), |rel| rel == ".locks" || rel == "costs")
}

fn summary_path(env: &TestEnv, user: &str) -> PathBuf {
    env.stm_dir(user).join("summary.md")
}

/// The content lines of a `## Heading` section (up to the next `## `).
fn section(body: &str, heading: &str) -> Vec<String> {
    body.lines()
        .skip_while(|l| l.trim_end() != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// Wait until the fake claude has recorded call `n` (it records before it
/// sleeps), i.e. the compaction is inside its LLM call.
fn wait_for_call(env: &TestEnv, n: usize) {
    let stdin = env.claude_log().join(format!("call-{n}")).join("stdin");
    assert!(
        wait_for(Duration::from_secs(20), Duration::from_millis(50), || stdin
            .exists()),
        "the fake claude was never called"
    );
}

const CONFIG: &str = r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50}}"#;

// --- what a compaction writes --------------------------------------------------

#[test]
fn compaction_keeps_the_newest_window_raw_and_archives_the_rest_by_utc_day() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = sixty_lines();
    env.import("U1", &lines);
    assert_eq!(env.read_lines("U1"), lines, "the import keeps bytes");

    let started = chrono::Utc::now();
    let out = compact_kevin(&env, ["--user", "U1"]).succeeds();
    assert!(
        out.stdout().contains("compacted 50 message(s)"),
        "{}",
        out.stdout()
    );
    assert_eq!(env.claude_calls(), 1);

    // The newest ten stay raw, byte for byte.
    let mut expected_log = lines[50..].join("\n");
    expected_log.push('\n');
    assert_eq!(
        String::from_utf8(env.read_bytes("U1")).unwrap(),
        expected_log,
        "messages.jsonl holds exactly the newest 10 original lines"
    );

    // The summary and its frontmatter.
    let (front, body) = read_markdown(&summary_path(&env, "U1"));
    assert_eq!(yaml_str(&front, "user_id"), Some("U1"));
    assert_eq!(
        front
            .get("messages_compacted")
            .and_then(serde_yaml::Value::as_u64),
        Some(50)
    );
    let last = yaml_str(&front, "last_compacted").expect("last_compacted");
    let last = chrono::DateTime::parse_from_rfc3339(last)
        .unwrap_or_else(|e| panic!("last_compacted {last:?} is not RFC 3339: {e}"));
    assert!(
        (last.with_timezone(&chrono::Utc) - started)
            .num_seconds()
            .abs()
            < 60,
        "last_compacted is now: {last}"
    );
    assert_eq!(body.trim(), SUMMARY_1);

    // The archives: the 50 older lines, each in the file of its UTC day.
    let expected = by_day(&lines[..50]);
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        [
            "messages-2026-03-20.jsonl.gz",
            "messages-2026-03-21.jsonl.gz",
            "messages-2026-03-22.jsonl.gz"
        ],
        "the fixture spans three UTC days"
    );
    assert!(
        String::from_utf8_lossy(&expected["messages-2026-03-20.jsonl.gz"]).contains("offset 25"),
        "the +09:00 line belongs to the UTC day before"
    );
    let got = env.archives("U1");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &expected {
        assert_eq!(
            String::from_utf8_lossy(&got[name]),
            String::from_utf8_lossy(bytes),
            "{name} holds exactly the original lines of its UTC day, in order"
        );
    }
    // No journal or temporary file is left behind.
    assert!(!env.journal_path("U1").exists());
    let leftovers: Vec<_> = snapshot(&env)
        .into_keys()
        .filter(|k| k.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn a_second_compaction_folds_in_the_previous_summary_and_adds_gzip_members() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let first = sixty_lines();
    env.import("U1", &first);
    compact_kevin(&env, ["--user", "U1"]).succeeds();
    let day22 = env.archive_dir("U1").join("messages-2026-03-22.jsonl.gz");
    let day22_before = std::fs::read(&day22).unwrap();

    // Fifty more, on 2026-03-22 (the day of an existing archive) and later.
    let more: Vec<String> = (60..110)
        .map(|i| {
            let ts = if i < 80 {
                format!("2026-03-22T20:{:02}:00Z", i - 60)
            } else {
                format!("2026-03-23T09:{:02}:00Z", i - 80)
            };
            line_with(
                &ts,
                "user",
                &format!("message {i}"),
                &[("msgId", &format!("m{i}"))],
            )
        })
        .collect();
    env.import("U1", &more);
    compact_kevin(&env, ["--user", "U1"])
        .env("FAKE_CLAUDE_REPLY", answer(SUMMARY_2))
        .succeeds();
    assert_eq!(env.claude_calls(), 2);

    // The second call was given the first summary and the lines leaving.
    let call = env.claude_call(2);
    assert!(
        call.stdin.contains(SUMMARY_1),
        "the previous summary is sent: {}",
        call.stdin
    );
    assert!(call.stdin.contains("message 50") && call.stdin.contains("message 99"));
    assert!(
        !call.stdin.contains("message 100"),
        "the window is not sent"
    );
    assert!(
        !env.claude_call(1).stdin.contains(SUMMARY_1),
        "the first call had no summary yet"
    );

    let (front, body) = read_markdown(&summary_path(&env, "U1"));
    assert_eq!(
        front
            .get("messages_compacted")
            .and_then(serde_yaml::Value::as_u64),
        Some(100),
        "a running total"
    );
    assert_eq!(body.trim(), SUMMARY_2);

    let all: Vec<String> = first.iter().chain(&more).cloned().collect();
    assert_eq!(env.read_lines("U1"), all[100..].to_vec());
    let expected = by_day(&all[..100]);
    let got = env.archives("U1");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &expected {
        assert_eq!(
            String::from_utf8_lossy(&got[name]),
            String::from_utf8_lossy(bytes),
            "{name}"
        );
    }
    // 2026-03-22 got a second gzip member after the first, which is kept
    // as it was; zcat prints the lines of both.
    let day22_after = std::fs::read(&day22).unwrap();
    assert!(day22_after.len() > day22_before.len());
    assert_eq!(&day22_after[..day22_before.len()], &day22_before[..]);
    assert_eq!(&day22_after[day22_before.len()..][..2], &[0x1f, 0x8b]);
    let zcat = Command::new("zcat").arg(&day22).output().unwrap();
    assert!(zcat.status.success());
    let text = String::from_utf8(zcat.stdout).unwrap();
    assert_eq!(
        text.lines().count(),
        10 + 30,
        "both members (m40–m49, then m50–m79): {text}"
    );
    assert!(text.contains("midnight 40") && text.contains("message 79"));
}

#[test]
fn a_failed_claude_call_changes_nothing_on_disk() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &sixty_lines());
    compact_kevin(&env, ["--user", "U1"]).succeeds();
    let more: Vec<String> = (60..110)
        .map(|i| {
            line_with(
                "2026-03-22T21:00:00Z",
                "user",
                "more",
                &[("msgId", &format!("m{i}"))],
            )
        })
        .collect();
    env.import("U1", &more);

    for (variable, value) in [("FAKE_CLAUDE_EXIT", "1"), ("FAKE_CLAUDE_IS_ERROR", "1")] {
        let before = snapshot(&env);
        let calls = env.claude_calls();
        let out = compact_kevin(&env, ["--user", "U1"])
            .env(variable, value)
            .output();
        assert_eq!(
            exit_of(&out),
            Some(Exit::ClaudeFailed),
            "{variable}: claude failed → exit 6; stderr: {}",
            stderr_of(&out)
        );
        assert!(!stderr_of(&out).is_empty(), "{variable}: a message");
        assert_eq!(env.claude_calls(), calls + 1, "{variable}: one call made");
        let after = snapshot(&env);
        assert!(
            before == after,
            "{variable}: nothing may change: {:?}",
            differences(&before, &after)
        );
    }
}

// --- profile facts ---------------------------------------------------------------

const ADMIN_PROFILE: &str = "---\nuser_id: U1\ndisplay_name: Kevin Admin\nplan: gold\ntags:\n- vip\n---\n\n\
## Preferences\n- Language: English\n\n## Admin notes\nVIP\n";

#[test]
fn profile_facts_are_merged_and_what_the_admin_wrote_stays() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    write_file(&env.profile_path("U1"), ADMIN_PROFILE.as_bytes());
    env.import("U1", &sixty_lines());
    compact_kevin(&env, ["--user", "U1"]).succeeds();

    let (front, body) = read_markdown(&env.profile_path("U1"));
    assert_eq!(yaml_str(&front, "plan"), Some("gold"), "admin key kept");
    assert_eq!(
        yaml_str(&front, "display_name"),
        Some("Kevin Admin"),
        "an admin's display name is not overwritten"
    );
    let tags: Vec<&str> = front["tags"]
        .as_sequence()
        .expect("tags")
        .iter()
        .filter_map(serde_yaml::Value::as_str)
        .collect();
    assert_eq!(tags, ["vip", "English", "exam"]);

    let preferences = section(&body, "## Preferences");
    for expected in [
        "- Name: Kevin",
        "- Language: Traditional Chinese",
        "- Timezone: Asia/Taipei",
        "- short answers",
        "- no emoji",
    ] {
        assert!(
            preferences.iter().any(|l| l == expected),
            "{expected:?} under ## Preferences: {body}"
        );
    }
    assert!(
        !body.contains("- Language: English"),
        "the language line is updated in place: {body}"
    );
    assert_eq!(
        section(&body, "## Ongoing Topics"),
        ["- TOEIC 860 preparation"],
        "{body}"
    );
    assert!(
        body.contains("## Admin notes\nVIP\n"),
        "the admin section stays: {body}"
    );

    // The tag index has the profile.
    let index: Value = serde_json::from_slice(
        &std::fs::read(env.sessions_dir().join("ltm").join("index.json")).unwrap(),
    )
    .expect("index.json is JSON");
    let entries = index["entries"].as_array().expect("entries");
    let entry = entries
        .iter()
        .find(|e| e["path"] == "ltm/users/U1.md")
        .unwrap_or_else(|| panic!("no entry for ltm/users/U1.md: {index}"));
    assert_eq!(entry["type"], "user");
    assert_eq!(entry["id"], "U1");
    assert_eq!(entry["tags"], json!(["vip", "English", "exam"]));

    // The same facts again: nothing is added twice.
    env.import("U1", &sixty_lines()[..45]);
    compact_kevin(&env, ["--user", "U1"]).succeeds();
    let (_, again) = read_markdown(&env.profile_path("U1"));
    assert_eq!(again, body, "facts already known are not repeated");
}

#[test]
fn without_auto_profile_the_profile_is_left_alone() {
    let env = TestEnv::new();
    env.write_config(
        r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50},"ltm":{"autoProfile":false}}"#,
    );
    write_file(&env.profile_path("U1"), ADMIN_PROFILE.as_bytes());
    env.import("U1", &sixty_lines());
    compact_kevin(&env, ["--user", "U1"]).succeeds();
    assert_eq!(
        std::fs::read_to_string(env.profile_path("U1")).unwrap(),
        ADMIN_PROFILE
    );
    assert!(
        !env.sessions_dir().join("ltm").join("index.json").exists(),
        "no index entry written"
    );
    assert!(
        !env.claude_call(1).system_prompt.contains("\"facts\""),
        "no facts asked for"
    );
    // A user without a profile does not get one either.
    env.import("U2", &sixty_lines());
    compact_kevin(&env, ["--user", "U2"]).succeeds();
    assert!(!env.profile_path("U2").exists());
    assert_eq!(env.read_lines("U2").len(), 10);
}

#[test]
fn a_profile_that_facts_cannot_be_merged_into_does_not_fail_a_done_compaction() {
    // A hand-edited profile whose frontmatter is never closed. The
    // compaction itself (archive, summary, log) is committed before facts
    // are merged; it must be reported as done, with a warning about the
    // profile, not as a failed command with no outcome on stdout.
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let broken = "---\nuser_id: U1\nplan: gold\n\n## Admin notes\nVIP\n";
    write_file(&env.profile_path("U1"), broken.as_bytes());
    let lines = sixty_lines();
    env.import("U1", &lines);
    let out = compact_kevin(&env, ["--json", "--user", "U1"]).output();

    // What was done is done either way.
    assert_eq!(env.read_lines("U1"), lines[50..].to_vec());
    assert_eq!(env.archives("U1"), by_day(&lines[..50]));
    assert!(summary_path(&env, "U1").exists());
    assert_eq!(
        std::fs::read_to_string(env.profile_path("U1")).unwrap(),
        broken,
        "the broken profile is not touched"
    );
    assert!(
        stderr_of(&out).contains("U1.md"),
        "a warning names the profile: {}",
        stderr_of(&out)
    );
    // How it is reported.
    assert!(
        out.status.success(),
        "the compaction was committed, yet compact exits {:?} with stdout {:?}: {}",
        out.status.code(),
        stdout_of(&out),
        stderr_of(&out)
    );
    let json: Value = serde_json::from_str(&stdout_of(&out)).expect("the outcome as JSON");
    assert_eq!(json["outcome"]["status"], "compacted");
    assert_eq!(json["outcome"]["compacted"], 50);
}

// --- dry run, threshold, force -----------------------------------------------------

#[test]
fn dry_run_calls_nothing_and_changes_nothing() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &sixty_lines());
    let before = snapshot(&env);
    let out = compact_kevin(&env, ["--user", "U1", "--dry-run"]).succeeds();
    assert!(
        out.stdout().contains("would compact 50 of 60"),
        "{}",
        out.stdout()
    );
    assert_eq!(env.claude_calls(), 0);
    let after = snapshot(&env);
    assert!(before == after, "{:?}", differences(&before, &after));

    compact_kevin(&env, ["--all", "--dry-run"]).succeeds();
    assert_eq!(env.claude_calls(), 0);
    let after = snapshot(&env);
    assert!(before == after, "{:?}", differences(&before, &after));
}

#[test]
fn under_the_threshold_nothing_is_compacted_unless_forced() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = sixty_lines();
    env.import("U1", &lines[..50]);
    let before = snapshot(&env);
    let out = compact_kevin(&env, ["--user", "U1"]).succeeds();
    assert!(
        out.stdout().contains("nothing to compact"),
        "{}",
        out.stdout()
    );
    assert_eq!(env.claude_calls(), 0, "50 is not over a threshold of 50");
    let after = snapshot(&env);
    assert!(before == after, "{:?}", differences(&before, &after));

    compact_kevin(&env, ["--user", "U1", "--force"]).succeeds();
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_lines("U1"), lines[40..50].to_vec());
    assert_eq!(env.archives("U1"), by_day(&lines[..40]));

    // Forced again, within the window: nothing to do, no call.
    let out = compact_kevin(&env, ["--user", "U1", "--force"]).succeeds();
    assert!(out.stdout().contains("nothing to compact"));
    assert_eq!(env.claude_calls(), 1);
}

// --- output ------------------------------------------------------------------------

#[test]
fn json_output_for_one_user_and_for_all() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = sixty_lines();
    env.import("A", &lines);
    env.import("B", &lines[..5]);
    env.import("C", &lines);
    env.import("C", &lines[..10]);

    let json_of = |args: &[&str]| -> Value {
        let out = compact_kevin(&env, ["--json"]).args(args).succeeds();
        let text = out.stdout();
        assert_eq!(text.lines().count(), 1, "one JSON line: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    };

    assert_eq!(
        json_of(&["--user", "A", "--dry-run"]),
        json!({"user": "A", "outcome": {"status": "wouldCompact", "messages": 60, "compact": 50, "keep": 10}})
    );
    assert_eq!(
        json_of(&["--user", "B"]),
        json!({"user": "B", "outcome": {"status": "notNeeded", "messages": 5}})
    );
    assert_eq!(
        json_of(&["--user", "A"]),
        json!({"user": "A", "outcome": {"status": "compacted", "compacted": 50, "kept": 10, "calls": 1, "costUsd": 0.0123, "notJson": 0}})
    );

    env.import("A", &lines[..45]);
    let all = json_of(&["--all"]);
    let cost = all["costUsd"].as_f64().expect("costUsd");
    assert!((cost - 0.0246).abs() < 1e-9, "{all}");
    let mut all = all;
    all.as_object_mut().unwrap().remove("costUsd");
    assert_eq!(
        all,
        json!({
            "users": [
                {"user": "A", "outcome": {"status": "compacted", "compacted": 45, "kept": 10, "calls": 1, "costUsd": 0.0123, "notJson": 0}},
                {"user": "C", "outcome": {"status": "compacted", "compacted": 60, "kept": 10, "calls": 1, "costUsd": 0.0123, "notJson": 0}}
            ],
            "underThreshold": 1,
            "calls": 2,
            "repliesNotJson": 0,
            "errors": []
        })
    );
    assert_eq!(env.claude_calls(), 3);
}

// --- many users ----------------------------------------------------------------------

#[test]
fn compact_all_over_a_thousand_users_calls_claude_only_for_those_over_the_threshold() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let mut written: HashMap<String, Vec<u8>> = HashMap::new();
    for n in 0..1000 {
        let user = format!("U{n:04}");
        let count = if n % 100 == 42 { 60 } else { 5 };
        let mut bytes = Vec::new();
        for i in 0..count {
            bytes.extend_from_slice(
                line_with(
                    &format!("2026-03-{:02}T10:{:02}:00Z", 20 + i / 30, i % 60),
                    "user",
                    &format!("hello {i}"),
                    &[("msgId", &format!("{user}-{i}"))],
                )
                .as_bytes(),
            );
            bytes.push(b'\n');
        }
        env.write_messages_raw(&user, &bytes);
        written.insert(user, bytes);
    }

    let started = Instant::now();
    let out = compact_kevin(&env, ["--all"]).output();
    let elapsed = started.elapsed();
    eprintln!("compact --all over 1000 users (10 over the threshold) took {elapsed:?}");
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("10 user(s) acted on, 990 under the threshold, 10 claude call(s)"),
        "{}",
        stdout_of(&out)
    );
    assert_eq!(env.claude_calls(), 10);
    for (user, bytes) in &written {
        let now = env.read_bytes(user);
        if bytes.iter().filter(|&&b| b == b'\n').count() == 60 {
            let lines = env.read_lines(user);
            assert_eq!(lines.len(), 10, "{user}");
            assert_eq!(
                lines[0],
                line_with(
                    "2026-03-21T10:50:00Z",
                    "user",
                    "hello 50",
                    &[("msgId", &format!("{user}-50"))]
                )
            );
            assert_eq!(env.archived_lines(user).len(), 50, "{user}");
            assert!(summary_path(&env, user).exists(), "{user}");
        } else {
            assert_eq!(&now, bytes, "{user} unchanged");
            assert!(!summary_path(&env, user).exists(), "{user}");
            assert!(!env.archive_dir(user).exists(), "{user}");
        }
    }
}

// --- concurrency -------------------------------------------------------------------

#[test]
fn appends_during_the_llm_call_are_kept_and_every_message_is_in_one_place_once() {
    const WRITERS: usize = 8;
    const PER_WRITER: usize = 50;
    let env = TestEnv::new();
    // After compacting 460 → 10, the 400 appended meanwhile stay under the
    // threshold, so all of them must still be in messages.jsonl.
    env.write_config(
        r#"{"stm":{"contextWindow":10},"compacting":{"threshold":450},"durability":{"lockTimeoutMs":60000}}"#,
    );
    let initial: Vec<String> = (0..460)
        .map(|i| {
            line_with(
                &format!(
                    "2026-03-{:02}T{:02}:{:02}:00Z",
                    20 + i / 200,
                    (i / 60) % 24,
                    i % 60
                ),
                "user",
                &format!("old message {i}"),
                &[("msgId", &format!("old-{i}"))],
            )
        })
        .collect();
    env.import("U1", &initial);

    let started = Instant::now();
    let compaction = compact_kevin(&env, ["--user", "U1"])
        .env("FAKE_CLAUDE_SLEEP", "2")
        .spawn();
    wait_for_call(&env, 1);
    let in_call = started.elapsed();

    let writers: Vec<Child> = (0..WRITERS)
        .map(|writer| {
            env.append_writer(writer, PER_WRITER)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a writer")
        })
        .collect();
    for (writer, child) in writers.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "writer {writer}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let writers_done = started.elapsed();
    let out = compaction.wait_with_output().unwrap();
    let compaction_done = started.elapsed();
    eprintln!(
        "race: claude called at {in_call:?}, {} appends done at {writers_done:?}, \
         compaction done at {compaction_done:?}",
        WRITERS * PER_WRITER
    );
    assert!(out.status.success(), "compact: {}", stderr_of(&out));
    assert_eq!(env.claude_calls(), 1, "one round: 410 is under 450");

    // Every appended line is in the log, once, each writer's in order.
    let log = env.read_lines("U1");
    let ids: Vec<String> = log.iter().map(|l| msg_id(l)).collect();
    let mut expected: Vec<String> = initial[450..].iter().map(|l| msg_id(l)).collect();
    assert_eq!(ids[..10], expected[..], "the kept window comes first");
    for writer in 0..WRITERS {
        let mine: Vec<&String> = ids
            .iter()
            .filter(|id| id.starts_with(&format!("w{writer}-")))
            .collect();
        let want: Vec<String> = (0..PER_WRITER).map(|i| format!("w{writer}-{i}")).collect();
        assert_eq!(
            mine,
            want.iter().collect::<Vec<_>>(),
            "writer {writer}: all, once, in order"
        );
        expected.extend(want);
    }
    assert_eq!(
        ids.len(),
        10 + WRITERS * PER_WRITER,
        "nothing extra in the log"
    );

    // STM and archive together: every message exactly once.
    let archived: Vec<String> = env.archived_lines("U1").iter().map(|l| msg_id(l)).collect();
    let mut everywhere: HashMap<String, usize> = HashMap::new();
    for id in ids.iter().chain(&archived) {
        *everywhere.entry(id.clone()).or_default() += 1;
    }
    let all_ids = initial
        .iter()
        .map(|l| msg_id(l))
        .chain((0..WRITERS).flat_map(|w| (0..PER_WRITER).map(move |i| format!("w{w}-{i}"))));
    let mut total = 0;
    for id in all_ids {
        assert_eq!(everywhere.get(&id), Some(&1), "{id} exactly once");
        total += 1;
    }
    assert_eq!(everywhere.len(), total, "no message from nowhere");
    assert_eq!(
        archived,
        initial[..450].iter().map(|l| msg_id(l)).collect::<Vec<_>>()
    );
}

#[test]
fn a_second_concurrent_compaction_of_the_same_user_returns_at_once() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &sixty_lines());
    let mut first = compact_kevin(&env, ["--user", "U1"])
        .env("FAKE_CLAUDE_SLEEP", "2")
        .spawn();
    wait_for_call(&env, 1);

    let started = Instant::now();
    let out = compact_kevin(&env, ["--user", "U1"])
        .env("FAKE_CLAUDE_SLEEP", "2")
        .output();
    let took = started.elapsed();
    assert!(
        first.try_wait().unwrap().is_none(),
        "the second returned while the first was still in its call ({took:?})"
    );
    assert!(out.status.success(), "exit 0: {}", stderr_of(&out));
    assert!(
        stdout_of(&out).contains("another compaction of this user is running"),
        "{}",
        stdout_of(&out)
    );
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(env.claude_calls(), 1, "exactly one claude call");
    assert_eq!(env.read_lines("U1").len(), 10);
    let (front, _) = read_markdown(&summary_path(&env, "U1"));
    assert_eq!(
        front
            .get("messages_compacted")
            .and_then(serde_yaml::Value::as_u64),
        Some(50)
    );
}

// --- after ask ---------------------------------------------------------------------

/// `ask --json` whose ask call gets the default fake reply and whose
/// compaction call (recognised by its prompt) gets the JSON answer. No
/// --msg-id: the same id twice would be a redelivery, answered from disk.
fn ask_u1(env: &TestEnv) -> Run {
    env.run(["--json", "ask", "--user", "U1", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_MATCH_1", "Older messages to fold in")
        .env("FAKE_CLAUDE_REPLY_1", answer(SUMMARY_1))
}

#[test]
fn ask_over_the_threshold_compacts_inline_before_it_exits() {
    let env = TestEnv::new();
    env.write_config(
        r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50,"mode":"inline"}}"#,
    );
    let lines = sixty_lines();
    // 40 + question + reply = 42: not over; no compaction.
    env.import("U1", &lines[..40]);
    let json = ask_u1(&env)
        .args(["--", "first question"])
        .succeeds()
        .json();
    assert_eq!(json["compacted"], false);
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_lines("U1").len(), 42);

    // 42 + 8 = 50, + question + reply = 52: over.
    env.import("U1", &lines[40..48]);
    let json = ask_u1(&env)
        .args(["--", "are we there yet"])
        .succeeds()
        .json();
    assert_eq!(json["compacted"], true, "{json}");
    assert_eq!(json["reply"], "fake reply to: are we there yet");
    assert_eq!(env.claude_calls(), 3, "ask, then the compaction");
    assert!(
        env.claude_call(3)
            .stdin
            .contains("Older messages to fold in")
    );
    let log = env.messages("U1");
    assert_eq!(log.len(), 10, "compacted in the same process");
    assert_eq!(log[8]["text"], "are we there yet");
    assert_eq!(log[9]["role"], "assistant");
    assert_eq!(log[9]["text"], "fake reply to: are we there yet");
    let (front, body) = read_markdown(&summary_path(&env, "U1"));
    assert_eq!(
        front
            .get("messages_compacted")
            .and_then(serde_yaml::Value::as_u64),
        Some(42)
    );
    assert_eq!(body.trim(), SUMMARY_1);
    assert_eq!(env.archived_lines("U1").len(), 42);
}

#[test]
fn ask_with_no_compact_leaves_the_log_over_the_threshold() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &sixty_lines()[..49]);
    let json = ask_u1(&env)
        .args(["--no-compact", "--", "hello"])
        .succeeds()
        .json();
    assert_eq!(json["compacted"], false, "{json}");
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_lines("U1").len(), 51);
    assert!(!summary_path(&env, "U1").exists());
}

#[test]
fn ask_with_background_compaction_returns_and_the_compaction_follows() {
    background_compaction_follows_the_reply(
        r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50,"mode":"background"}}"#,
    );
}

/// Issue 17: inline compaction made a broker that waits for the exit wait
/// for the summariser too; the default no longer does.
#[test]
fn by_default_ask_does_not_wait_for_the_compaction() {
    background_compaction_follows_the_reply(CONFIG);
}

fn background_compaction_follows_the_reply(config: &str) {
    let env = TestEnv::new();
    env.write_config(config);
    env.import("U1", &sixty_lines()[..49]);
    // Every fake call sleeps 1 s: right after ask returns, the background
    // compaction is still inside its own call.
    let json = ask_u1(&env)
        .args(["--claude-arg", "--foo=bar", "--", "hello"])
        .env("FAKE_CLAUDE_SLEEP", "1")
        .succeeds()
        .json();
    assert_eq!(json["compacted"], true, "{json}");
    assert_eq!(
        env.read_lines("U1").len(),
        51,
        "ask did not wait for the compaction"
    );
    let index = env.sessions_dir().join("ltm").join("index.json");
    let done = wait_for(Duration::from_secs(20), Duration::from_millis(50), || {
        env.read_lines("U1").len() == 10 && index.exists()
    });
    assert!(
        done,
        "the background compaction did not happen: {} line(s), {} call(s)",
        env.read_lines("U1").len(),
        env.claude_calls()
    );
    assert_eq!(env.claude_calls(), 2);
    // The compaction is called as the reply was: --claude-arg goes along,
    // whether it runs inline or in the background.
    assert!(
        env.claude_call(2).argv.ends_with(&["--foo=bar".to_owned()]),
        "{:?}",
        env.claude_call(2).argv
    );
    assert!(summary_path(&env, "U1").exists());
    assert_eq!(env.archived_lines("U1").len(), 41);
    // Let the detached process finish before the folder goes away.
    wait_for(Duration::from_secs(5), Duration::from_millis(50), || {
        !env.journal_path("U1").exists()
    });
    std::thread::sleep(Duration::from_millis(300));
}

// --- recovery ----------------------------------------------------------------------

/// Leave `garbage` as the user's journal, then compact: the journal must
/// be removed with a warning and the compaction must work as usual.
fn garbage_journal_is_removed(garbage: &[u8]) {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let lines = sixty_lines();
    env.import("U1", &lines);
    write_file(&env.journal_path("U1"), garbage);
    let out = compact_kevin(&env, ["--user", "U1"]).output();
    assert!(
        out.status.success(),
        "journal {:?}: compact failed ({:?}): {}",
        String::from_utf8_lossy(garbage),
        out.status.code(),
        stderr_of(&out)
    );
    assert!(
        stderr_of(&out).contains("journal"),
        "a warning names the journal: {}",
        stderr_of(&out)
    );
    assert!(!env.journal_path("U1").exists(), "the journal is removed");
    assert_eq!(env.read_lines("U1"), lines[50..].to_vec());
    assert_eq!(env.archives("U1"), by_day(&lines[..50]));
    assert_eq!(env.claude_calls(), 1);
}

#[test]
fn an_unparsable_journal_is_removed_with_a_warning_and_compaction_works() {
    garbage_journal_is_removed(b"{\"prefixLen\": 12, this is not a journal");
}

#[test]
fn a_journal_of_binary_garbage_is_removed_with_a_warning_and_compaction_works() {
    // Not even UTF-8 (a disk error, another tool's file): just as unreadable.
    garbage_journal_is_removed(b"\x00\xff\xfe garbage \x80\x81");
}

/// Compaction asks for claude's structured output and, by default, the
/// small background model.
#[test]
fn compaction_asks_for_structured_output_with_the_background_model() {
    let env = TestEnv::new();
    env.import("U1", &sixty_lines());
    compact_kevin(&env, ["--user", "U1"]).succeeds();
    let argv = env.claude_call(1).argv;
    let at = |flag: &str| argv.iter().position(|a| a == flag);
    let schema: Value =
        serde_json::from_str(&argv[at("--json-schema").expect("--json-schema") + 1])
            .expect("the schema is JSON");
    assert_eq!(schema["required"], json!(["summary"]), "{schema}");
    assert!(schema["properties"]["facts"].is_object(), "{schema}");
    assert_eq!(
        argv[at("--model").expect("--model") + 1],
        "haiku",
        "{argv:?}"
    );
    assert_eq!(argv[at("--tools").unwrap() + 1], "", "{argv:?}");

    // compacting.model, and --model over it.
    let env = TestEnv::new();
    env.write_config(r#"{"compacting": {"model": "sonnet"}}"#);
    env.import("U1", &sixty_lines());
    compact_kevin(&env, ["--user", "U1"]).succeeds();
    let argv = env.claude_call(1).argv;
    assert_eq!(
        argv[argv.iter().position(|a| a == "--model").unwrap() + 1],
        "sonnet"
    );
}

/// A reply that is not the JSON asked for: warned about without -v, the
/// profile left as it was, the case counted in the report.
#[test]
fn a_reply_that_is_not_json_keeps_the_profile_warns_and_is_counted() {
    let env = TestEnv::new();
    env.import("U1", &sixty_lines());
    write_file(
        &env.profile_path("U1"),
        b"---\nuser_id: U1\ndisplay_name: Kev\n---\n## Preferences\n- tea\n",
    );
    let before = std::fs::read(env.profile_path("U1")).unwrap();
    let out = compact_kevin(&env, ["--user", "U1", "--json"])
        .env(
            "FAKE_CLAUDE_REPLY",
            "Sorry, here is a summary: they talked about tea.",
        )
        .succeeds()
        .stderr_has("not the JSON asked for")
        .stderr_has("no profile was changed");
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(report["outcome"]["notJson"], 1, "{report}");
    assert_eq!(std::fs::read(env.profile_path("U1")).unwrap(), before);

    // --all counts it too.
    let env = TestEnv::new();
    env.import("U1", &sixty_lines());
    let out = compact_kevin(&env, ["--all"])
        .env("FAKE_CLAUDE_REPLY", "not json")
        .output();
    assert!(
        stdout_of(&out).contains("1 reply(ies) not the JSON asked for"),
        "{}",
        stdout_of(&out)
    );
}

#[test]
fn compact_all_with_nothing_to_do_never_prints_a_negative_zero_cost() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "hi"]).succeeds();
    let out = compact_kevin(&env, ["--all"]).succeeds();
    let text = out.stdout();
    assert!(!text.contains("-0.0"), "{text}");
    assert!(text.contains("$0.0000"), "{text}");
}

/// A conversation over the threshold is compacted in the background too:
/// the detached `compact` is told `--conversation KEY`, not `--user #KEY`
/// (which no person can be).
#[test]
fn background_compaction_reaches_a_conversation() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    for i in 0..50 {
        env.run(["append", "--user", "U1", "--conversation", "G1", "--"])
            .arg(format!("group line {i}"))
            .succeeds();
    }
    let out = env
        .run(["ask", "--json", "--user", "U1", "--conversation", "G1"])
        .arg("--claude-bin")
        .arg(crate::common::fake_claude())
        .args(["--", "hello"])
        .succeeds();
    assert_eq!(out.json()["compacted"], true);
    let done = wait_for(Duration::from_secs(20), Duration::from_millis(50), || {
        env.read_lines("#G1").len() == 10
    });
    assert!(
        done,
        "the conversation was not compacted: {} line(s)",
        env.read_lines("#G1").len()
    );
    wait_for(Duration::from_secs(5), Duration::from_millis(50), || {
        !env.journal_path("#G1").exists()
    });
}

// --- issue 25, 4: one run is bounded by the backlog it found ----------------

/// `compact --force` on a person who kept receiving messages did not
/// return: each round made one call and found new lines beyond the window
/// (157 calls for a 120-message backlog and 4 writers). A run compacts the
/// backlog it found, in 1–3 calls, and returns while traffic goes on;
/// what arrives meanwhile waits for the next run. The same for
/// `maintain`'s compaction task.
#[test]
fn compaction_under_traffic_makes_calls_for_its_backlog_and_returns() {
    const WRITERS: usize = 4;
    for command in [
        &["compact", "--user", "U1", "--force"][..],
        &["maintain", "--only", "compact"],
    ] {
        let env = TestEnv::new();
        env.write_config(CONFIG);
        let initial: Vec<String> = (0..130)
            .map(|i| {
                line_with(
                    &format!("2026-03-20T{:02}:{:02}:00Z", i / 60, i % 60),
                    "user",
                    &format!("old message {i}"),
                    &[("msgId", &format!("old-{i}"))],
                )
            })
            .collect();
        env.import("U1", &initial);
        let stop = env.dir.path().join("stop");
        let writers: Vec<Child> = (0..WRITERS)
            .map(|writer| {
                env.sh(r#"i=0
                    while [ ! -e "$STOP" ] && [ "$i" -lt 5000 ]; do
                        "$BIN" --state-dir "$STATE" append --user U1 --msg-id "w$WRITER-$i" \
                            -- "writer $WRITER message $i" || exit 1
                        i=$((i + 1))
                    done"#)
                    .env("WRITER", writer.to_string())
                    .env("STOP", &stop)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn a writer")
            })
            .collect();
        assert!(
            wait_for(Duration::from_secs(20), Duration::from_millis(20), || env
                .read_lines("U1")
                .len()
                > 140),
            "the writers never wrote"
        );
        let mut child = env
            .run(command)
            .arg("--claude-bin")
            .arg(fake_claude())
            .env("FAKE_CLAUDE_REPLY", answer(SUMMARY_1))
            .env("FAKE_CLAUDE_SLEEP", "0.3")
            .spawn();
        let started = Instant::now();
        let returned = wait_for(Duration::from_secs(40), Duration::from_millis(50), || {
            child.try_wait().unwrap().is_some()
        });
        let took = started.elapsed();
        let calls = env.claude_calls();
        if !returned {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        std::fs::write(&stop, b"").unwrap();
        for (writer, child) in writers.into_iter().enumerate() {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "writer {writer}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            returned,
            "{command:?} did not return in {took:?} while traffic went on ({calls} calls)"
        );
        assert!(out.status.success(), "{command:?}: {}", stderr_of(&out));
        assert!(
            (1..=3).contains(&calls),
            "{command:?}: {calls} claude calls for a 120-message backlog"
        );
        // Nothing lost or doubled: every message once, in the log or the
        // archive, and the backlog it found is archived.
        let mut everywhere: HashMap<String, usize> = HashMap::new();
        for line in env.read_lines("U1").iter().chain(&env.archived_lines("U1")) {
            *everywhere.entry(msg_id(line)).or_default() += 1;
        }
        assert!(everywhere.values().all(|&n| n == 1), "a message twice");
        for line in &initial {
            assert_eq!(everywhere.get(&msg_id(line)), Some(&1));
        }
        let archived: Vec<String> = env.archived_lines("U1").iter().map(|l| msg_id(l)).collect();
        assert!(
            archived.len() >= 120
                && archived[..120]
                    == initial[..120].iter().map(|l| msg_id(l)).collect::<Vec<_>>()[..],
            "{command:?}: the backlog was archived first"
        );
    }
}

/// Issue 25: the shipped fake answers a compaction (`--json-schema`) with
/// the JSON object asked for, so a tour with it shows no warning and a
/// summary of what the user said, not the prompt echoed back.
#[test]
fn the_shipped_fake_answers_compaction_with_the_json_asked_for() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {"contextWindow": 2}}"#);
    for (i, text) in ["I'm Kevin.", "I study \"TOEIC\".", "third"]
        .iter()
        .enumerate()
    {
        env.ask(["--user", "U1", "--msg-id", &format!("m{i}"), "--", text])
            .succeeds();
    }
    let out = env
        .run([
            "compact",
            "--user",
            "U1",
            "--force",
            "--json",
            "--claude-bin",
        ])
        .arg(fake_claude())
        .succeeds();
    assert!(out.stderr().is_empty(), "{}", out.stderr());
    assert_eq!(out.json()["outcome"]["notJson"], 0, "{}", out.stdout());
    let summary = read(&env.stm_dir("U1").join("summary.md"));
    assert!(
        summary.contains("The user said: I'm Kevin. / I study \"TOEIC\"."),
        "{summary}"
    );
    assert!(!summary.contains("fake reply to"), "{summary}");
}

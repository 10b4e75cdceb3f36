//! Everything at once: 32 writer processes over 4 users (mostly `append`,
//! some `ask`), while `compact --all` and `maintain --only compact,prune`
//! run in a loop beside them. Afterwards every message is stored exactly
//! once (STM or archive), each writer's messages in the order it sent
//! them, every reply once and after its question, and every file parses.
//!
//! Sizes: `STRESS_PER_WRITER=<n>` changes the messages per writer.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::{
    Run, TestEnv, compaction_reply, fake_claude, files_under, gunzip_text, read_markdown, stderr_of,
};
use serde_json::{Value, json};

const WRITERS: usize = 32;
const USERS: usize = 4;
const DEFAULT_PER_WRITER: usize = 80;
/// In an asking writer, every `ASK_EVERY`th message goes through `ask`.
const ASK_EVERY: usize = 4;
/// Low threshold and window: compactions happen all the time.
const CONFIG: &str = r#"{
  "stm": {"contextWindow": 5},
  "compacting": {"threshold": 20},
  "durability": {"fsync": false, "lockTimeoutMs": 60000}
}"#;

fn per_writer() -> usize {
    std::env::var("STRESS_PER_WRITER")
        .ok()
        .map(|n| n.parse().expect("STRESS_PER_WRITER is a number"))
        .unwrap_or(DEFAULT_PER_WRITER)
}

fn user_of(writer: usize) -> String {
    format!("U{}", writer % USERS)
}

/// Odd writers mix in `ask`; even ones only append.
fn asks(writer: usize) -> bool {
    writer % 2 == 1
}

fn is_ask(writer: usize, i: usize) -> bool {
    asks(writer) && i % ASK_EVERY == ASK_EVERY - 1
}

fn msg_id(writer: usize, i: usize) -> String {
    format!("w{writer}-{i}")
}

/// The compaction answer: a fixed summary (the default echo would nest
/// every previous summary) and a few facts, so profiles and the index are
/// written under contention too.
fn compaction_answer() -> String {
    compaction_reply(
        "They chatted under stress.",
        json!({"language": "English", "topics": ["stress"], "tags": ["load"]}),
    )
}

/// `claude-session --state-dir <state> ARGS…` in the sealed environment
/// of the harness, not recording fake claude calls (thousands of folders).
fn command(env: &TestEnv, args: &[&str]) -> Run {
    env.run(args).env_remove("FAKE_CLAUDE_LOG")
}

/// One writer: a `sh` loop over the binary, so 32 processes contend at
/// any instant without 32 Rust threads each paying a spawn round trip.
fn spawn_writer(env: &TestEnv, writer: usize, count: usize) -> std::process::Child {
    let script = r#"
        i=0
        while [ "$i" -lt "$COUNT" ]; do
            if [ "$ASKS" = 1 ] && [ $((i % ASK_EVERY)) -eq $((ASK_EVERY - 1)) ]; then
                "$BIN" --state-dir "$STATE" ask --user "$WHO" --msg-id "w$WRITER-$i" \
                    --no-compact --claude-bin "$FAKE" -- "writer $WRITER asks $i" >/dev/null \
                    || { echo "ask $i failed with $?" >&2; exit 1; }
            else
                "$BIN" --state-dir "$STATE" append --user "$WHO" --msg-id "w$WRITER-$i" \
                    -- "writer $WRITER says $i" \
                    || { echo "append $i failed with $?" >&2; exit 1; }
            fi
            i=$((i + 1))
        done
    "#;
    env.sh(script)
        .env("FAKE", fake_claude())
        .env("WHO", user_of(writer))
        .env("WRITER", writer.to_string())
        .env("COUNT", count.to_string())
        .env("ASKS", if asks(writer) { "1" } else { "0" })
        .env("ASK_EVERY", ASK_EVERY.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a writer")
}

/// Run `args` in a loop until `stop`, then once more; returns the number
/// of runs and a description of every run that failed or warned.
fn compaction_loop(
    env: &TestEnv,
    name: &str,
    args: &[&str],
    stop: &AtomicBool,
) -> (usize, Vec<String>) {
    let mut runs = 0;
    let mut problems = Vec::new();
    loop {
        let last = stop.load(Ordering::SeqCst);
        let out: Output = command(env, args)
            .arg("--claude-bin")
            .arg(fake_claude())
            .env("FAKE_CLAUDE_REPLY", compaction_answer())
            .output();
        runs += 1;
        if !out.status.success() || !out.stderr.is_empty() {
            problems.push(format!(
                "{name} run {runs}: {} — stderr: {}",
                out.status,
                stderr_of(&out)
            ));
        }
        if last {
            return (runs, problems);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn parse_json_line(line: &str, whence: &str) -> Value {
    serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("a line of {whence} is not JSON ({e}): {line:?}"))
}

#[test]
fn thirty_two_writers_with_compaction_and_maintain_running_lose_nothing() {
    let per_writer = per_writer();
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let env = Arc::new(env);
    let started = Instant::now();

    let stop = Arc::new(AtomicBool::new(false));
    let loops: Vec<_> = [
        ("compact --all", vec!["-q", "compact", "--all"]),
        (
            "maintain --only compact,prune",
            vec!["-q", "maintain", "--only", "compact,prune"],
        ),
    ]
    .into_iter()
    .map(|(name, args)| {
        let env = Arc::clone(&env);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || compaction_loop(&env, name, &args, &stop))
    })
    .collect();

    let writers: Vec<_> = (0..WRITERS)
        .map(|w| spawn_writer(&env, w, per_writer))
        .collect();
    let mut writer_failures = Vec::new();
    for (w, child) in writers.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        if !out.status.success() || !out.stderr.is_empty() {
            writer_failures.push(format!("writer {w}: {} — {}", out.status, stderr_of(&out)));
        }
    }
    let writers_done = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    let mut loop_runs = Vec::new();
    let mut loop_problems = Vec::new();
    for handle in loops {
        let (runs, problems) = handle.join().expect("a compaction loop panicked");
        loop_runs.push(runs);
        loop_problems.extend(problems);
    }
    assert!(
        writer_failures.is_empty(),
        "writers failed or warned:\n{}",
        writer_failures.join("\n")
    );
    assert!(
        loop_problems.is_empty(),
        "compaction runs failed or warned:\n{}",
        loop_problems.join("\n")
    );

    // --- every message exactly once, in order ------------------------------
    let sessions = env.sessions_dir();
    let asks_per_writer = (0..per_writer).filter(|&i| is_ask(1, i)).count();
    let mut total_archived = 0;
    for u in 0..USERS {
        let user = format!("U{u}");
        // Archives oldest day first (file names sort by date), then STM:
        // the order the lines were appended in.
        let mut stored: Vec<(String, String)> = Vec::new();
        let archive_dir = sessions.join("archive").join(&user);
        let archives: Vec<PathBuf> = files_under(&archive_dir);
        for path in &archives {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with("messages-") && name.ends_with(".jsonl.gz"),
                "unexpected file in the archive: {}",
                path.display()
            );
            for line in gunzip_text(path).lines().filter(|l| !l.trim().is_empty()) {
                stored.push((line.to_owned(), path.display().to_string()));
            }
        }
        let archived = stored.len();
        total_archived += archived;
        assert!(
            archived > 0,
            "{user}: nothing was ever compacted; the test did not stress compaction"
        );
        let log = String::from_utf8(env.read_bytes(&user))
            .unwrap_or_else(|_| panic!("{user}: messages.jsonl is not UTF-8"));
        assert!(
            log.is_empty() || log.ends_with('\n'),
            "{user}: messages.jsonl does not end with a newline"
        );
        for line in log.lines() {
            assert!(
                !line.trim().is_empty(),
                "{user}: a blank line in messages.jsonl"
            );
            stored.push((line.to_owned(), "messages.jsonl".to_owned()));
        }

        // Position of each question (by msgId) and each reply (by replyTo).
        let mut questions: HashMap<String, Vec<usize>> = HashMap::new();
        let mut replies: HashMap<String, Vec<usize>> = HashMap::new();
        for (position, (line, whence)) in stored.iter().enumerate() {
            let value = parse_json_line(line, &format!("{user}'s {whence}"));
            match (value["role"].as_str(), &value["msgId"], &value["replyTo"]) {
                (Some("user"), Value::String(id), _) => {
                    questions.entry(id.clone()).or_default().push(position)
                }
                (Some("assistant"), Value::Null, Value::String(id)) => {
                    replies.entry(id.clone()).or_default().push(position)
                }
                _ => panic!("{user}: a line nobody wrote, in {whence}: {line}"),
            }
        }

        let mut expected_lines = 0;
        for w in (0..WRITERS).filter(|w| w % USERS == u) {
            let mut previous: Option<(usize, String)> = None;
            for i in 0..per_writer {
                let id = msg_id(w, i);
                let at = questions.remove(&id).unwrap_or_default();
                assert_eq!(
                    at.len(),
                    1,
                    "{user}: message {id} is stored {} times (positions {at:?}); \
                     {archived} archived lines, {} in STM",
                    at.len(),
                    stored.len() - archived
                );
                let at = at[0];
                if let Some((before, before_id)) = &previous {
                    assert!(
                        *before < at,
                        "{user}: writer {w}'s {before_id} (position {before}) is stored \
                         after {id} (position {at})"
                    );
                }
                previous = Some((at, id.clone()));
                expected_lines += 1;
                let answers = replies.remove(&id).unwrap_or_default();
                if is_ask(w, i) {
                    expected_lines += 1;
                    assert_eq!(
                        answers.len(),
                        1,
                        "{user}: the reply to {id} is stored {} times",
                        answers.len()
                    );
                    assert!(
                        answers[0] > at,
                        "{user}: the reply to {id} is stored before the question"
                    );
                } else {
                    assert!(answers.is_empty(), "{user}: a reply to an append {id}");
                }
            }
        }
        assert!(
            questions.is_empty() && replies.is_empty(),
            "{user}: messages nobody sent: {:?} {:?}",
            questions.keys().collect::<Vec<_>>(),
            replies.keys().collect::<Vec<_>>()
        );
        assert_eq!(stored.len(), expected_lines, "{user}: stored line count");

        // The summary counts exactly what went to the archive.
        let summary = sessions.join("stm").join(&user).join("summary.md");
        let front = read_markdown(&summary).0;
        assert_eq!(
            front
                .get("messages_compacted")
                .and_then(serde_yaml::Value::as_u64),
            Some(archived as u64),
            "{user}: summary.md messages_compacted vs archived lines"
        );
        assert_eq!(
            front.get("user_id").and_then(serde_yaml::Value::as_str),
            Some(user.as_str())
        );
    }

    // --- every file parses; nothing half-done is left ----------------------
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for path in files_under(&sessions) {
        let relative = path.strip_prefix(&sessions).unwrap().to_owned();
        let shown = relative.display().to_string();
        if relative.starts_with(".locks") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "a temporary file is left: {shown}");
        assert!(
            !relative.starts_with(".journal"),
            "a compaction journal is left: {shown}"
        );
        if name.ends_with(".jsonl") {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{shown} is not UTF-8 text: {e}"));
            for line in text.lines() {
                parse_json_line(line, &shown);
            }
            *kinds.entry("jsonl").or_default() += 1;
        } else if name.ends_with(".json") {
            let text = std::fs::read_to_string(&path).unwrap();
            serde_json::from_str::<Value>(&text)
                .unwrap_or_else(|e| panic!("{shown} is not JSON ({e})"));
            *kinds.entry("json").or_default() += 1;
        } else if name.ends_with(".md") {
            read_markdown(&path);
            *kinds.entry("md").or_default() += 1;
        } else if name.ends_with(".jsonl.gz") {
            for line in gunzip_text(&path).lines() {
                parse_json_line(line, &shown);
            }
            *kinds.entry("jsonl.gz").or_default() += 1;
        } else {
            panic!("a file the layout does not have: {shown}");
        }
    }

    eprintln!(
        "stress: {WRITERS} writers × {per_writer} messages ({} asks each for odd writers) \
         over {USERS} users: writers done in {writers_done:?}, all checked in {:?}; \
         compaction loops ran {loop_runs:?} times; {total_archived} lines archived; \
         files checked: {kinds:?}",
        asks_per_writer,
        started.elapsed()
    );
}

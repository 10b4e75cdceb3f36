//! A compaction, an `ask` or a `maintain` pass killed (SIGKILL) at a random
//! instant loses no message, and
//! the next compaction finishes its work without archiving anything twice.
//!
//! Seeded and reproducible: `CRASH_SEED=<n or 0xhex>` picks the seed,
//! `CRASH_ITERATIONS=<n>` the number of rounds. Every assertion message
//! names the seed and the iteration.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{TestEnv, fake_claude, stderr_of, temp_files, write_file};
use serde_json::{Value, json};

const DEFAULT_SEED: u64 = 0x2026_0323_C0FF_EE01;
const DEFAULT_ITERATIONS: usize = 100;
const CONFIG: &str =
    r#"{"stm":{"contextWindow":10},"compacting":{"threshold":50,"mode":"inline"}}"#;

/// xorshift64: tiny, and the same numbers on every machine.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform enough in `0..n` for a test.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    match std::env::var("CRASH_SEED") {
        Ok(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|e| panic!("CRASH_SEED={text:?} is not a number: {e}"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

fn iterations() -> usize {
    std::env::var("CRASH_ITERATIONS")
        .ok()
        .map(|n| n.parse().expect("CRASH_ITERATIONS is a number"))
        .unwrap_or(DEFAULT_ITERATIONS)
}

fn answer(iteration: usize) -> String {
    json!({
        "summary": format!("summary written in iteration {iteration}"),
        "facts": {"name": "Kevin", "topics": [format!("topic {iteration}")], "tags": ["crash"]}
    })
    .to_string()
}

/// `compact --user U1` with the fake claude answering at once, spawned so
/// it can be killed. No call log: the fake only answers.
fn spawn_compact(env: &TestEnv, iteration: usize) -> std::process::Child {
    env.run(["-q", "compact", "--user", "U1", "--claude-bin"])
        .arg(fake_claude())
        .env_remove("FAKE_CLAUDE_LOG")
        .env("FAKE_CLAUDE_REPLY", answer(iteration))
        .spawn_silent()
}

/// `ask` with a new message id (the fake answers at once; the ask may
/// compact inline afterwards), spawned so it can be killed.
fn spawn_ask(env: &TestEnv, iteration: usize) -> std::process::Child {
    env.run(["-q", "ask", "--user", "U1", "--msg-id"])
        .arg(format!("ask-{iteration}"))
        .arg("--claude-bin")
        .arg(fake_claude())
        .arg("--")
        .arg(format!("question {iteration}"))
        .env_remove("FAKE_CLAUDE_LOG")
        .env("FAKE_CLAUDE_REPLY", answer(iteration))
        .spawn_silent()
}

/// A `maintain` pass that compacts and writes daily summaries (its clock a
/// day ahead, so every day with messages is past), spawned to be killed.
fn spawn_maintain(env: &TestEnv, iteration: usize) -> std::process::Child {
    let tomorrow = chrono::Utc::now() + chrono::Duration::days(1);
    env.run(["-q", "maintain", "--only", "compact,daily,prune", "--now"])
        .arg(tomorrow.to_rfc3339())
        .arg("--claude-bin")
        .arg(fake_claude())
        .env_remove("FAKE_CLAUDE_LOG")
        .env("FAKE_CLAUDE_REPLY", answer(iteration))
        .spawn_silent()
}

/// Where each message id is: (times in STM, times in the archives).
struct Census {
    places: HashMap<String, (usize, usize)>,
    archived: usize,
}

/// Read STM and every archive, checking that each is readable: every log
/// line is JSON, every archive decodes with `gzip -dc`, the summary (if
/// any) starts with `---`.
fn census(env: &TestEnv, context: &str) -> Census {
    let mut places: HashMap<String, (usize, usize)> = HashMap::new();
    let id_of = |line: &str, whence: &str| -> String {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| {
            panic!("{context}: a line of {whence} is not JSON ({e}): {line:?}")
        });
        // A reply that ask wrote has no msgId of its own: it is named
        // after the message it answers.
        match (value["msgId"].as_str(), value["replyTo"].as_str()) {
            (Some(id), _) => id.to_owned(),
            (None, Some(asked)) => format!("reply:{asked}"),
            _ => panic!("{context}: a line of {whence} has no msgId: {line:?}"),
        }
    };
    let log = String::from_utf8(env.read_bytes("U1"))
        .unwrap_or_else(|_| panic!("{context}: messages.jsonl is not UTF-8"));
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        places.entry(id_of(line, "messages.jsonl")).or_default().0 += 1;
    }
    let mut archived = 0;
    let dir = env.sessions_dir().join("archive").join("U1");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut paths: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".jsonl.gz"))
            .collect();
        paths.sort();
        for path in paths {
            let out = Command::new("gzip")
                .arg("-dc")
                .arg(&path)
                .output()
                .expect("run gzip");
            assert!(
                out.status.success(),
                "{context}: gzip -dc {} failed: {}",
                path.display(),
                stderr_of(&out)
            );
            let text = String::from_utf8(out.stdout)
                .unwrap_or_else(|_| panic!("{context}: {} is not UTF-8", path.display()));
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                places
                    .entry(id_of(line, &path.display().to_string()))
                    .or_default()
                    .1 += 1;
                archived += 1;
            }
        }
    }
    let summary = env.stm_dir("U1").join("summary.md");
    if let Ok(text) = std::fs::read_to_string(&summary) {
        assert!(
            text.starts_with("---"),
            "{context}: summary.md does not start with ---: {text:?}"
        );
    }
    Census { places, archived }
}

fn messages_compacted(env: &TestEnv) -> Option<u64> {
    let text = std::fs::read_to_string(env.stm_dir("U1").join("summary.md")).ok()?;
    text.lines()
        .take_while(|l| !l.is_empty())
        .find_map(|l| l.strip_prefix("messages_compacted: "))
        .and_then(|n| n.trim().parse().ok())
}

#[test]
fn a_process_killed_at_a_random_instant_loses_nothing_and_duplicates_nothing() {
    let seed = seed();
    let iterations = iterations();
    eprintln!(
        "crash: seed {seed:#x} ({seed}), {iterations} iterations \
         (CRASH_SEED / CRASH_ITERATIONS to change)"
    );
    let mut rng = XorShift::new(seed);
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let started = Instant::now();
    let base = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);

    let mut appended: Vec<String> = Vec::new();
    // Messages of killed asks: logged or not, depending on the instant.
    let mut maybe: BTreeSet<String> = BTreeSet::new();
    let mut victims: HashMap<&str, usize> = HashMap::new();
    let mut counter: i64 = 0;
    let mut new_lines = |count: usize, tag: &str, appended: &mut Vec<String>| -> Vec<String> {
        (0..count)
            .map(|k| {
                let ts = base + chrono::Duration::minutes(2 * counter);
                counter += 1;
                let id = format!("{tag}-{k}");
                appended.push(id.clone());
                json!({
                    "ts": ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    "role": if k % 2 == 0 { "user" } else { "assistant" },
                    "text": format!("{tag} message {k}"),
                    "msgId": id,
                    "extra": {"n": k}
                })
                .to_string()
            })
            .collect()
    };
    let import = |lines: &[String], context: &str| {
        let path = env.dir.path().join("import.jsonl");
        let mut text = lines.join("\n");
        text.push('\n');
        write_file(&path, text.as_bytes());
        let out = env
            .run(["append", "--user", "U1", "--jsonl"])
            .arg(&path)
            .output();
        assert!(
            out.status.success(),
            "{context}: import failed: {}",
            stderr_of(&out)
        );
    };

    let (mut finished_before_kill, mut killed_with_journal, mut killed_without_journal) = (0, 0, 0);
    let mut temp_seen: BTreeSet<PathBuf> = BTreeSet::new();
    for iteration in 0..iterations {
        let context = format!("seed {seed:#x}, iteration {iteration}");

        // Over the threshold: 51–90 messages in STM.
        let present = env.read_lines("U1").len();
        let want = 51 + rng.below(40) as usize;
        let lines = new_lines(
            want.saturating_sub(present).max(1),
            &format!("i{iteration}"),
            &mut appended,
        );
        import(&lines, &context);

        // Start a compaction, an ask or a maintain pass, and kill it after
        // 0–40 ms.
        let delay = Duration::from_millis(rng.below(41));
        let victim = ["compact", "ask", "maintain"][rng.below(3) as usize];
        *victims.entry(victim).or_default() += 1;
        let mut child = match victim {
            "compact" => spawn_compact(&env, iteration),
            "ask" => {
                maybe.insert(format!("ask-{iteration}"));
                maybe.insert(format!("reply:ask-{iteration}"));
                spawn_ask(&env, iteration)
            }
            _ => spawn_maintain(&env, iteration),
        };
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL; fails only if it already exited
        let status = child.wait().expect("reap the killed compaction");
        let journal_left = env.journal_path("U1").exists();
        match (status.success(), journal_left) {
            (true, _) => finished_before_kill += 1,
            (false, true) => killed_with_journal += 1,
            (false, false) => killed_without_journal += 1,
        }
        let context = format!(
            "{context} ({victim} killed after {delay:?}: {status}, journal left: {journal_left})"
        );

        // Nothing lost: every message is in STM or the archive, at most
        // once in each.
        let seen = census(&env, &context);
        for id in &appended {
            let (stm, archive) = seen.places.get(id).copied().unwrap_or_default();
            assert!(
                stm + archive >= 1,
                "{context}: message {id} is in neither STM nor the archive"
            );
            assert!(
                stm <= 1 && archive <= 1,
                "{context}: message {id} is {stm}× in STM and {archive}× archived"
            );
        }
        for id in &maybe {
            // Logged or not; with a journal left, in STM and archive at once.
            let (stm, archive) = seen.places.get(id).copied().unwrap_or_default();
            assert!(
                stm <= 1 && archive <= 1,
                "{context}: {id} is {stm}× in STM and {archive}× archived"
            );
        }
        for id in seen.places.keys() {
            assert!(
                appended.contains(id) || maybe.contains(id),
                "{context}: a message from nowhere: {id}"
            );
        }

        // Sometimes the user writes before the next compaction runs.
        if rng.below(2) == 0 {
            let more = new_lines(
                1 + rng.below(5) as usize,
                &format!("after{iteration}"),
                &mut appended,
            );
            import(&more, &context);
        }

        // A normal compaction finishes what the killed one left.
        let out = env
            .run(["compact", "--user", "U1", "--claude-bin"])
            .arg(fake_claude())
            .env("FAKE_CLAUDE_REPLY", answer(iteration))
            .env_remove("FAKE_CLAUDE_LOG")
            .output();
        assert!(
            out.status.success(),
            "{context}: the next compaction failed: {}",
            stderr_of(&out)
        );
        assert!(
            !env.journal_path("U1").exists(),
            "{context}: the journal is left after a successful compaction"
        );
        let seen = census(&env, &context);
        for id in &appended {
            let place = seen.places.get(id).copied().unwrap_or_default();
            assert!(
                place == (1, 0) || place == (0, 1),
                "{context}: after the next compaction message {id} is {}× in STM and {}× \
                 archived; it must be in exactly one place",
                place.0,
                place.1
            );
        }
        for id in &maybe {
            let (stm, archive) = seen.places.get(id).copied().unwrap_or_default();
            assert!(
                stm + archive <= 1,
                "{context}: after the next compaction {id} is {stm}× in STM and {archive}× archived"
            );
        }
        for id in seen.places.keys() {
            assert!(
                appended.contains(id) || maybe.contains(id),
                "{context}: a message from nowhere: {id}"
            );
        }
        let stm = env.read_lines("U1").len();
        assert!(
            stm <= 50,
            "{context}: {stm} messages left in STM after compaction"
        );
        assert_eq!(
            messages_compacted(&env),
            Some(seen.archived as u64),
            "{context}: summary.md messages_compacted is the number of archived messages"
        );

        // Temporary files: a killed writer may leave a hidden `.*.tmp`
        // (counted, not asserted); a visible one is never made.
        let fresh: Vec<PathBuf> = temp_files(&env.sessions_dir())
            .into_iter()
            .filter(|p| !temp_seen.contains(p))
            .collect();
        if !fresh.is_empty() {
            eprintln!(
                "{context}: {} new temporary file(s): {:?}",
                fresh.len(),
                fresh
                    .iter()
                    .map(|p| p.strip_prefix(env.sessions_dir()).unwrap().to_owned())
                    .collect::<Vec<_>>()
            );
        }
        for path in fresh {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with('.'),
                "{context}: a temporary file that is not hidden: {}",
                path.display()
            );
            temp_seen.insert(path);
        }
    }
    // What killed writers left, a later maintain cleans up: once a
    // temporary file is older than any live write (an hour), prune takes it.
    let leftovers = temp_files(&env.sessions_dir());
    for path in &leftovers {
        let status = Command::new("touch")
            .args(["-d", "2 hours ago"])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }
    env.run(["maintain", "--only", "prune"]).succeeds();
    let still = temp_files(&env.sessions_dir());
    assert!(
        still.is_empty(),
        "seed {seed:#x}: temporary files prune left behind: {still:?}"
    );
    let archived = census(&env, "the end").archived;
    eprintln!(
        "crash: seed {seed:#x}: {iterations} iterations in {:?}; {finished_before_kill} finished \
         before the kill, {killed_with_journal} killed with a journal left, \
         {killed_without_journal} killed without one; {} messages ({archived} archived); \
         {} hidden temporary file(s) left by killed processes; victims: {victims:?}",
        started.elapsed(),
        appended.len(),
        temp_seen.len()
    );
}

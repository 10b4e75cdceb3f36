//! The recall index (`sessions/.recall/<owner>/*.seg`): derived data that
//! makes recall fast and never changes what it finds. The same recall with
//! and without it; an archive changed after indexing (another host's
//! compaction), the live log, a damaged segment: all still recalled; built
//! by `maintain --only index` and `session reindex`; erased, left out of
//! exports, moved by the conversation migration.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::common::run::Done;
use crate::common::{TestEnv, history_line, import_and_compact, write_file};
use serde_json::{Value, json};

const FACT: &str = "My sister Melanie adopted a golden retriever puppy named Biscuit";
const QUESTION: &str = "What is the name of Melanie's puppy?";

/// Six past days of 80 turns of small talk for `user` (facts on days 1, 3
/// and 5), imported and compacted into the archives.
fn history(env: &TestEnv, user: &str) {
    let lines: String = (0..480)
        .map(|i| {
            let text = match i {
                40 => FACT.to_owned(),
                200 => "We hiked up Mount Tamalpais with the puppy on Sunday".to_owned(),
                370 => "Biscuit the puppy chewed my new running shoes".to_owned(),
                _ if i % 2 == 0 => format!("how was your day {i}, anything fun with the garden"),
                _ => format!("quiet here {i}, the weather was sunny and the puppy slept"),
            };
            history_line(
                &format!(
                    "2026-02-{:02}T{:02}:{:02}:00Z",
                    1 + i / 80,
                    8 + (i % 80) / 60,
                    i % 60
                ),
                if i % 2 == 0 { "user" } else { "assistant" },
                &text,
                &format!("{user}-{i}"),
            )
        })
        .collect();
    import_and_compact(env, user, &lines);
}

/// Archive days of a group written as compaction writes them (one gzip
/// member), `per_day` lines a day from 2026-02-01, each sent by `sender(i)`.
fn group_archives(
    env: &TestEnv,
    folder: &str,
    days: usize,
    per_day: usize,
    text: impl Fn(usize) -> (String, String),
) {
    let dir = env.sessions_dir().join("archive").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    for day in 0..days {
        let mut lines = String::new();
        for k in 0..per_day {
            let i = day * per_day + k;
            let (sender, text) = text(i);
            lines += &(json!({
                "ts": format!("2026-02-{:02}T10:{:02}:00Z", 1 + day, k),
                "role": "user",
                "text": text,
                "userId": sender,
                "msgId": format!("g-{i}"),
            })
            .to_string()
                + "\n");
        }
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(lines.as_bytes()).unwrap();
        write_file(
            &dir.join(format!("messages-2026-02-{:02}.jsonl.gz", 1 + day)),
            &encoder.finish().unwrap(),
        );
    }
}

fn index_dir(env: &TestEnv, owner: &str) -> PathBuf {
    env.sessions_dir().join(".recall").join(owner)
}

fn segments(env: &TestEnv, owner: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(index_dir(env, owner))
        .map(|dir| {
            dir.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "seg"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// `context --json --explain` for `question`, as run.
fn explained(env: &TestEnv, user: &str, question: &str) -> Done {
    env.run([
        "--json",
        "context",
        "--user",
        user,
        "--explain",
        "--",
        question,
    ])
    .succeeds()
}

fn recall_json(env: &TestEnv, user: &str, question: &str) -> Value {
    explained(env, user, question).json()
}

fn index(env: &TestEnv) -> Value {
    env.run(["--json", "maintain", "--only", "index"])
        .succeeds()
        .json()
}

/// Whether `out` (`context --json`) recalled the message `msg_id` from
/// `source` (`log`, `archive YYYY-MM-DD`).
fn recalled_from(out: &Value, msg_id: &str, source: &str) -> bool {
    out["recalled"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["msgId"] == msg_id && r["source"] == source)
}

/// Everything but how the days were read.
fn found(out: &Value) -> (Value, Value, Value) {
    let recall = &out["explain"]["recall"];
    (
        out["text"].clone(),
        out["recalled"].clone(),
        recall["considered"].clone(),
    )
}

#[test]
fn recall_is_the_same_with_and_without_the_index() {
    let env = TestEnv::new();
    history(&env, "U1");
    let questions = [
        QUESTION,
        "where did we hike with the puppy?",
        "what did Biscuit chew?",
        "how was the weather in the garden",
    ];
    let before: Vec<Value> = questions
        .iter()
        .map(|q| recall_json(&env, "U1", q))
        .collect();
    assert_eq!(before[0]["explain"]["recall"]["indexedDays"], 0);
    assert!(
        before[0]["text"].as_str().unwrap().contains("Biscuit"),
        "{:#}",
        before[0]
    );

    let report = index(&env);
    assert_eq!(report["errors"], 0, "{report:#}");
    let segs = segments(&env, "U1");
    assert!(!segs.is_empty(), "maintain --only index wrote a segment");
    for seg in &segs {
        assert_eq!(
            crate::common::mode_of(seg) & 0o777,
            0o600,
            "{}",
            seg.display()
        );
    }
    for (q, before) in questions.iter().zip(&before) {
        let after = recall_json(&env, "U1", q);
        let days = after["explain"]["recall"]["indexedDays"].as_u64().unwrap();
        assert!(days >= 5, "past days come from the index: {after:#}");
        assert_eq!(found(&after), found(before), "{q}");
    }
    // A second pass has nothing to do.
    let again = index(&env);
    let task = &again["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == "index")
        .unwrap();
    assert_eq!(task["done"], 0, "{again:#}");
    assert_eq!(segments(&env, "U1"), segs);
}

/// Another host's compaction adds a member to an old day's archive after
/// it was indexed: that day is read whole (the segment's record of its
/// archive no longer matches), and the message is found; a message just
/// appended to the live log is found too.
#[test]
fn an_archive_grown_after_indexing_and_the_live_log_are_recalled() {
    let env = TestEnv::new();
    history(&env, "U1");
    index(&env);
    let archive = env.archive_dir("U1").join("messages-2026-02-02.jsonl.gz");
    let line = json!({
        "ts": "2026-02-02T23:00:00Z",
        "role": "user",
        "text": "The vet said my parrot Kiwi needs more sunflower seeds",
        "msgId": "late",
    })
    .to_string()
        + "\n";
    let mut bytes = std::fs::read(&archive).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(line.as_bytes()).unwrap();
    bytes.extend(encoder.finish().unwrap());
    let temp = archive.with_extension("tmp-other-host");
    write_file(&temp, &bytes);
    std::fs::rename(&temp, &archive).unwrap();

    let out = recall_json(&env, "U1", "what does the vet say about Kiwi the parrot?");
    assert!(recalled_from(&out, "late", "archive 2026-02-02"), "{out:#}");
    assert!(out["explain"]["recall"]["indexedDays"].as_u64().unwrap() >= 4);

    env.run([
        "append",
        "--user",
        "U1",
        "--role",
        "user",
        "--msg-id",
        "fresh",
        "--",
        "My cousin Theodora moved to Reykjavik last week",
    ])
    .succeeds();
    env.run(["append", "--user", "U1", "--role", "user", "--", "ok"])
        .succeeds();
    let out: Value = env
        .run([
            "--json",
            "context",
            "--user",
            "U1",
            "--window",
            "1",
            "--",
            "where does Theodora live now?",
        ])
        .succeeds()
        .json();
    assert!(recalled_from(&out, "fresh", "log"), "{out:#}");
}

/// A damaged segment: warned about, its days read from the archives (the
/// answer the same), and rebuilt by the next `maintain` (with a warning)
/// and by `session reindex`.
#[test]
fn a_damaged_segment_is_warned_about_read_around_and_rebuilt() {
    let env = TestEnv::new();
    history(&env, "U1");
    let clean = recall_json(&env, "U1", QUESTION);
    index(&env);
    let seg = segments(&env, "U1").remove(0);
    let mut bytes = std::fs::read(&seg).unwrap();
    // Damage in the postings and stored lines (past the head): spread
    // out, so that what the question reads is hit wherever it lies.
    for start in (bytes.len() / 4..bytes.len() - 64).step_by(512) {
        for b in &mut bytes[start..start + 16] {
            *b ^= 0xa5;
        }
    }
    std::fs::write(&seg, &bytes).unwrap();

    let done = explained(&env, "U1", QUESTION);
    assert!(
        done.stderr().contains("is damaged") && done.stderr().contains("maintain --only index"),
        "{}",
        done.stderr()
    );
    assert_eq!(found(&done.json()), found(&clean), "the same answer");

    // A head damaged: found when the segment is opened.
    std::fs::write(&seg, &bytes[..100]).unwrap();
    let done = explained(&env, "U1", QUESTION);
    assert!(done.stderr().contains("is damaged"), "{}", done.stderr());
    assert_eq!(found(&done.json()), found(&clean));

    let report = env
        .run(["--json", "maintain", "--only", "index"])
        .succeeds();
    assert!(
        report.stderr().contains("rebuilt now"),
        "{}",
        report.stderr()
    );
    let done = explained(&env, "U1", QUESTION);
    assert!(!done.stderr().contains("damaged"), "{}", done.stderr());
    assert!(
        done.json()["explain"]["recall"]["indexedDays"]
            .as_u64()
            .unwrap()
            >= 5
    );
    assert_eq!(found(&done.json()), found(&clean));

    // session reindex rebuilds every segment, a damaged one too.
    let seg = segments(&env, "U1").remove(0);
    std::fs::write(&seg, b"garbage").unwrap();
    let out = env.run(["--json", "session", "reindex"]).succeeds().json();
    assert_eq!(out["recallDamaged"], 1, "{out:#}");
    assert!(out["recallDays"].as_u64().unwrap() >= 5, "{out:#}");
    let done = explained(&env, "U1", QUESTION);
    assert!(!done.stderr().contains("damaged"), "{}", done.stderr());
    assert_eq!(found(&done.json()), found(&clean));
}

/// What stands where a segment belongs but is no file of ours — a
/// FIFO (whose open would wait for a writer forever), a folder — is
/// warned about and read around, as damage is; a FIFO where an archive
/// belongs makes recall fail with a warning, never hang.
#[test]
fn a_fifo_or_folder_named_as_a_segment_or_archive_is_read_around_not_waited_on() {
    let env = TestEnv::new();
    history(&env, "U1");
    index(&env);
    let clean = recall_json(&env, "U1", QUESTION);
    let dir = index_dir(&env, "U1");
    let fifo = dir.join("zz.seg");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(dir.join("yy.seg")).unwrap();
    let done = explained(&env, "U1", QUESTION);
    let err = done.stderr();
    assert!(
        err.contains("zz.seg left out") && err.contains("FIFO") && err.contains("yy.seg left out"),
        "{err}"
    );
    assert_eq!(found(&done.json()), found(&clean), "the same answer");
    // The index is still used for the rest.
    assert!(
        done.json()["explain"]["recall"]["indexedDays"]
            .as_u64()
            .unwrap()
            >= 5
    );
    // maintain and reindex build around them (they are not theirs to
    // remove): before, both failed for this memory.
    env.run(["maintain", "--only", "index"]).succeeds();
    let report = env.run(["session", "reindex"]).succeeds();
    assert!(
        report.stderr().contains("yy.seg left out") && report.stderr().contains("zz.seg left out"),
        "{}",
        report.stderr()
    );
    let done = explained(&env, "U1", QUESTION);
    assert_eq!(found(&done.json()), found(&clean), "the same answer");
    // In the archives: no hang, and a warning that names it.
    let archive = env
        .sessions_dir()
        .join("archive/U1/messages-2020-01-01.jsonl.gz");
    let made = std::process::Command::new("mkfifo")
        .arg(&archive)
        .status()
        .unwrap();
    assert!(made.success());
    let done = env
        .run(["context", "--user", "U1", "--", QUESTION])
        .succeeds();
    assert!(
        done.stderr().contains("messages-2020-01-01.jsonl.gz") && done.stderr().contains("FIFO"),
        "{}",
        done.stderr()
    );
}

fn tree_has(dir: &Path, needle: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries
        .map(|e| e.unwrap().path())
        .any(|p| p.to_string_lossy().contains(needle) || (p.is_dir() && tree_has(&p, needle)))
}

#[test]
fn erase_leaves_no_index_and_exports_leave_it_out() {
    let env = TestEnv::new();
    history(&env, "U1");
    history(&env, "U2");
    index(&env);
    assert!(!segments(&env, "U1").is_empty());

    let out = env.dir.path().join("export");
    env.run(["session", "export", "--user", "U1", "--out"])
        .arg(&out)
        .succeeds();
    assert!(tree_has(&out, "archive"), "the export holds the archives");
    assert!(
        !tree_has(&out, ".recall") && !tree_has(&out, ".seg"),
        "derived data is left out of exports"
    );

    env.run(["session", "clear", "--user", "U1", "--all", "--yes"])
        .succeeds();
    assert!(!index_dir(&env, "U1").exists(), "erase removes the index");
    assert!(!segments(&env, "U2").is_empty(), "another person's stays");
}

/// Erasing a person from a group: the group's segments of the days whose
/// archives lost lines go with them (they hold the erased text).
#[test]
fn erasing_a_member_drops_the_group_segments_holding_their_lines() {
    let env = TestEnv::new();
    group_archives(&env, "#G1", 4, 50, |i| {
        if i == 10 {
            ("U7".into(), "my secret hobby is competitive origami".into())
        } else {
            ("U8".into(), format!("group chat {i} about the weather"))
        }
    });
    for member in ["U7", "U8"] {
        write_file(
            &env.sessions_dir().join(format!("memberships/{member}/#G1")),
            b"",
        );
    }
    index(&env);
    let segs = segments(&env, "#G1");
    assert_eq!(segs.len(), 1, "{segs:?}");
    let stored = std::fs::read(&segs[0]).unwrap();
    // (the stored lines are compressed: look for the erased text after
    // inflating what the segment holds, by recall.)
    let out = env
        .run([
            "--json",
            "context",
            "--user",
            "U8",
            "--conversation",
            "G1",
            "--explain",
            "--",
            "what is the secret origami hobby?",
        ])
        .succeeds()
        .json();
    assert!(out["text"].as_str().unwrap().contains("origami"), "{out:#}");
    assert!(!stored.is_empty());
    env.run(["session", "clear", "--user", "U7", "--all", "--yes"])
        .succeeds();
    assert!(
        !segs[0].exists(),
        "the segment holding the erased day is gone: {:?}",
        segments(&env, "#G1")
    );
    let out = env
        .run([
            "--json",
            "context",
            "--user",
            "U8",
            "--conversation",
            "G1",
            "--explain",
            "--",
            "what is the secret origami hobby?",
        ])
        .succeeds()
        .json();
    assert!(
        !out["text"].as_str().unwrap().contains("origami"),
        "{out:#}"
    );
    // The next maintain indexes the rewritten days again.
    index(&env);
    assert_eq!(segments(&env, "#G1").len(), 1);
}

/// A group kept under its bare key by an earlier version, with an index:
/// the migration moves the index with the archives, and it stays current.
#[test]
fn the_conversation_migration_moves_the_index() {
    let env = TestEnv::new();
    group_archives(&env, "GRP", 6, 40, |i| {
        if i == 30 {
            ("U7".into(), FACT.into())
        } else {
            ("U8".into(), format!("group chat {i} about the weather"))
        }
    });
    // What makes GRP a conversation of the previous layout: a log whose
    // lines name their senders, and members.
    env.write_messages_raw(
        "GRP",
        (json!({"ts": "2026-02-07T09:00:00Z", "role": "user", "text": "group hi", "userId": "U7"})
            .to_string()
            + "\n")
            .as_bytes(),
    );
    write_file(&env.sessions_dir().join("memberships/U7/GRP"), b"");
    index(&env);
    assert!(!segments(&env, "GRP").is_empty());
    env.run(["maintain", "--only", "migrate"]).succeeds();
    assert!(!index_dir(&env, "GRP").exists(), "moved away");
    assert!(!segments(&env, "#GRP").is_empty(), "moved to #GRP");
    let out = env
        .run([
            "--json",
            "context",
            "--user",
            "U7",
            "--conversation",
            "GRP",
            "--explain",
            "--",
            QUESTION,
        ])
        .succeeds()
        .json();
    assert!(
        out["explain"]["recall"]["indexedDays"].as_u64().unwrap() >= 5,
        "the moved index is current: {out:#}"
    );
    assert!(out["text"].as_str().unwrap().contains("Biscuit"), "{out:#}");
}

/// Every archive day is searched (no newest-days cap any more).
#[test]
fn the_oldest_archive_day_is_searched() {
    let env = TestEnv::new();
    history(&env, "U1");
    let out = recall_json(&env, "U1", QUESTION);
    assert!(
        recalled_from(&out, "U1-40", "archive 2026-02-01"),
        "{out:#}"
    );
}

/// A segment made by another tokenizer version (`tokenize::VERSION`) is
/// stale like a changed archive: not used, not warned about, and replaced
/// by the next `maintain`.
#[test]
fn a_segment_of_another_tokenizer_version_is_not_used() {
    let env = TestEnv::new();
    history(&env, "U1");
    index(&env);
    let seg = segments(&env, "U1").remove(0);
    let mut bytes = std::fs::read(&seg).unwrap();
    // The version (bytes 12..16), and the head's CRC-32 over the header
    // and its tables (up to the dictionary, bytes 48..56) with the CRC's
    // own place (92..96) zeroed.
    let version = u32::from_le_bytes(bytes[12..16].try_into().unwrap());
    bytes[12..16].copy_from_slice(&(version + 1).to_le_bytes());
    let head = u64::from_le_bytes(bytes[48..56].try_into().unwrap()) as usize;
    bytes[92..96].fill(0);
    let mut crc = flate2::Crc::new();
    crc.update(&bytes[..head]);
    bytes[92..96].copy_from_slice(&crc.sum().to_le_bytes());
    std::fs::write(&seg, &bytes).unwrap();

    let done = explained(&env, "U1", QUESTION);
    assert_eq!(done.json()["explain"]["recall"]["indexedDays"], 0);
    assert!(!done.stderr().contains("damaged"), "{}", done.stderr());
    assert!(done.json()["text"].as_str().unwrap().contains("Biscuit"));
    index(&env);
    let done = explained(&env, "U1", QUESTION);
    assert!(
        done.json()["explain"]["recall"]["indexedDays"]
            .as_u64()
            .unwrap()
            >= 5
    );
}

/// A message is scored with a share of the words of the one before it:
/// the first message of a day by the last of the day before, whichever
/// way each day is read (from a segment or whole). Four days of 40
/// turns (the last one stays in the live log); the last turn of days 1
/// and 2 asks, the first of the next day answers with none of the
/// question's words.
#[test]
fn the_first_message_of_a_day_counts_the_last_of_the_day_before_on_every_path() {
    let env = TestEnv::new();
    let lines: String = (0..160)
        .map(|i| {
            let text = match i {
                39 => "Which day are your violin lessons with the new teacher?".to_owned(),
                40 => "Every Tuesday evening, for an hour".to_owned(),
                79 => "Where do you take that pottery class of yours?".to_owned(),
                80 => "At the community center downtown".to_owned(),
                _ if i % 2 == 0 => format!("how was your day {i}, anything fun with the garden"),
                _ => format!("quiet here {i}, the weather was sunny and the puppy slept"),
            };
            json!({
                "ts": format!("2026-02-{:02}T10:{:02}:00Z", 1 + i / 40, i % 40),
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "text": text,
                "msgId": format!("U1-{i}"),
            })
            .to_string()
                + "\n"
        })
        .collect();
    import_and_compact(&env, "U1", &lines);
    let questions = [
        ("When are the violin lessons?", "Every Tuesday evening"),
        ("Where is the pottery class?", "At the community center"),
        // The first of a day with words of its own too.
        (
            "Are the violin lessons on Tuesday evening?",
            "Every Tuesday evening",
        ),
        (
            "Is the pottery class at the community center?",
            "At the community center",
        ),
    ];
    // The answer is a hit of its own (by its question's words), not only
    // the question's neighbour.
    let answer_is_a_hit = |out: &Value, answer: &str| {
        out["explain"]["recall"]["considered"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["text"].as_str().unwrap().starts_with(answer))
    };
    let whole: Vec<Value> = questions
        .iter()
        .map(|(q, _)| recall_json(&env, "U1", q))
        .collect();
    for ((q, answer), out) in questions.iter().zip(&whole) {
        assert_eq!(out["explain"]["recall"]["indexedDays"], 0);
        assert!(answer_is_a_hit(out, answer), "{q}: {out:#}");
    }

    // Every day in a segment: the day's first doc gets the last one of
    // the day before from the segment too.
    index(&env);
    for ((q, _), before) in questions.iter().zip(&whole) {
        let after = recall_json(&env, "U1", q);
        let recall = &after["explain"]["recall"];
        assert_eq!(
            (
                recall["indexedDays"].as_u64(),
                recall["scannedDays"].as_u64()
            ),
            (Some(3), Some(1)),
            "{after:#}"
        );
        assert_eq!(found(&after), found(before), "{q}");
    }

    // Day 2 changed after indexing (a message in its middle): read whole,
    // between two days from the segment (and day 4, in the log, read whole
    // after day 3 from the segment).
    let archive = env.archive_dir("U1").join("messages-2026-02-02.jsonl.gz");
    let line = json!({
        "ts": "2026-02-02T10:20:30Z",
        "role": "user",
        "text": "I repotted the basil on the balcony",
        "msgId": "late",
    })
    .to_string()
        + "\n";
    let mut bytes = std::fs::read(&archive).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(line.as_bytes()).unwrap();
    bytes.extend(encoder.finish().unwrap());
    let temp = archive.with_extension("tmp-other-host");
    write_file(&temp, &bytes);
    std::fs::rename(&temp, &archive).unwrap();
    let mixed: Vec<Value> = questions
        .iter()
        .map(|(q, _)| recall_json(&env, "U1", q))
        .collect();
    std::fs::rename(index_dir(&env, "U1"), env.dir.path().join("no-index")).unwrap();
    for ((q, answer), mixed) in questions.iter().zip(&mixed) {
        let recall = &mixed["explain"]["recall"];
        assert_eq!(
            (
                recall["indexedDays"].as_u64(),
                recall["scannedDays"].as_u64()
            ),
            (Some(2), Some(2)),
            "{mixed:#}"
        );
        assert!(answer_is_a_hit(mixed, answer), "{q}: {mixed:#}");
        let whole = recall_json(&env, "U1", q);
        assert_eq!(whole["explain"]["recall"]["indexedDays"], 0);
        assert_eq!(found(mixed), found(&whole), "{q}");
    }
}

/// A segment of an older format (1: before the previous message's
/// counts; 2: before the doubled lengths): stale, not damaged: left out without a warning (its days read whole)
/// and replaced by the next `maintain`, without a warning either.
#[test]
fn a_segment_of_the_older_format_is_stale() {
    let env = TestEnv::new();
    history(&env, "U1");
    let clean = recall_json(&env, "U1", QUESTION);
    index(&env);
    let seg = segments(&env, "U1").remove(0);
    let mut bytes = std::fs::read(&seg).unwrap();
    for older in [1u32, 2] {
        // The format: bytes 8..12 (read before the head's checksum).
        bytes[8..12].copy_from_slice(&older.to_le_bytes());
        std::fs::write(&seg, &bytes).unwrap();

        let done = explained(&env, "U1", QUESTION);
        assert!(
            !done.stderr().contains("damaged"),
            "{older}: {}",
            done.stderr()
        );
        assert_eq!(
            done.json()["explain"]["recall"]["indexedDays"],
            0,
            "{older}"
        );
        assert_eq!(found(&done.json()), found(&clean), "{older}");
    }

    let rebuilt = env
        .run(["--json", "maintain", "--only", "index"])
        .succeeds();
    assert!(
        !rebuilt.stderr().contains("damaged"),
        "{}",
        rebuilt.stderr()
    );
    let now = segments(&env, "U1");
    assert!(!now.is_empty());
    for seg in &now {
        assert_eq!(
            u32::from_le_bytes(std::fs::read(seg).unwrap()[8..12].try_into().unwrap()),
            3,
            "{}",
            seg.display()
        );
    }
    let after = recall_json(&env, "U1", QUESTION);
    assert!(after["explain"]["recall"]["indexedDays"].as_u64().unwrap() >= 5);
    assert_eq!(found(&after), found(&clean));
}

//! `session search` over everything stored (logs, archives, summaries,
//! profiles, topics, of people and groups), its filters, damaged archives,
//! JSON Lines and terminal escaping; and people and conversations side by
//! side (`session users`, `session conversations`, `status`, `show`).

use crate::common::{Exit, TestEnv, gzip_lines, line_with, stderr_of, write_file};
use serde_json::{Value, json};

/// The channel field every line of these fixtures carries.
const SLACK: &[(&str, &str)] = &[("channel", "slack")];

/// U1 with one archived message, group G1 where U9 (Alice) spoke, and a
/// daily summary of U2: "zebrafish" said once in each; and noise around.
fn world(env: &TestEnv) {
    let sessions = env.sessions_dir();
    env.append(
        &["--user", "U1", "--ts", "2026-03-20T10:00:00Z"],
        "nothing here",
    );
    write_file(
        &sessions.join("archive/U1/messages-2026-03-10.jsonl.gz"),
        &gzip_lines(&[
            line_with("2026-03-10T08:00:00Z", "user", "good morning", SLACK),
            line_with("2026-03-10T08:01:00Z", "user", "first line\nI saw a Zebrafish today", SLACK),
            line_with("2026-03-10T08:02:00Z", "assistant", "nice", SLACK),
            // The word only in an id: no hit.
            json!({"ts": "2026-03-10T08:03:00Z", "role": "user", "text": "ok", "msgId": "zebrafish-1"})
                .to_string(),
        ]),
    );
    env.append(
        &[
            "--conversation",
            "G1",
            "--user",
            "U9",
            "--display-name",
            "Alice",
            "--ts",
            "2026-03-15T12:00:00Z",
        ],
        "the zebrafish tank needs cleaning",
    );
    env.append(
        &[
            "--conversation",
            "G1",
            "--user",
            "U8",
            "--ts",
            "2026-03-15T12:05:00Z",
        ],
        "who cares",
    );
    write_file(
        &sessions.join("summaries/U2/daily/2026-03-12.md"),
        b"---\nuser_id: U2\ndate: 2026-03-12\n---\n\nU2 asked about zebrafish care.\n",
    );
}

#[test]
fn a_word_said_once_is_found_in_an_archive_a_group_and_a_daily_summary() {
    let env = TestEnv::new();
    world(&env);
    let found = env
        .run(["--json", "session", "search"])
        .args(["zebrafish"])
        .succeeds()
        .json_lines();
    let summary: Vec<(String, String, String, String)> = found
        .iter()
        .map(|h| {
            (
                h["kind"].as_str().unwrap().to_owned(),
                h["owner"].as_str().unwrap().to_owned(),
                h["ts"].as_str().unwrap().to_owned(),
                h["speaker"].as_str().unwrap_or("-").to_owned(),
            )
        })
        .collect();
    let row = |k: &str, o: &str, t: &str, s: &str| (k.into(), o.into(), t.into(), s.into());
    assert_eq!(
        summary,
        [
            row("message", "G1", "2026-03-15T12:00:00Z", "U9"),
            row("summary", "U2", "2026-03-12T23:59:59Z", "-"),
            row("message", "U1", "2026-03-10T08:01:00Z", "U1"),
        ],
        "newest first, the right owner, time and speaker: {found:#?}"
    );
    assert_eq!(found[0]["ownerKind"], "conversation");
    assert_eq!(found[0]["speakerName"], "Alice");
    assert_eq!(found[0]["source"], "stm");
    assert_eq!(found[1]["source"], "daily");
    assert_eq!(found[1]["file"], "summaries/U2/daily/2026-03-12.md");
    assert_eq!(found[2]["ownerKind"], "person");
    assert_eq!(found[2]["source"], "archive");
    assert_eq!(found[2]["file"], "archive/U1/messages-2026-03-10.jsonl.gz");
    assert_eq!(found[2]["line"], 2);
    assert_eq!(
        found[2]["text"], "I saw a Zebrafish today",
        "the matching line of the text"
    );
    assert_eq!(found[2]["matches"], json!([[8, 17]]));

    let text = env
        .run(["session", "search", "zebrafish"])
        .succeeds()
        .stdout();
    assert!(
        text.contains("conversation G1") && text.contains("Alice (U9): the zebrafish tank"),
        "{text}"
    );
    assert!(
        text.contains("archived message") && text.contains("U1: I saw a Zebrafish today"),
        "{text}"
    );
    assert!(text.contains("daily summary"), "{text}");
}

#[test]
fn filters_narrow_the_hits() {
    let env = TestEnv::new();
    world(&env);
    let owners = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["zebrafish"];
        full.extend_from_slice(args);
        env.run(["--json", "session", "search"])
            .args(&full)
            .succeeds()
            .json_lines()
            .iter()
            .map(|h| {
                format!(
                    "{}:{}",
                    h["kind"].as_str().unwrap(),
                    h["owner"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        owners(&["--user", "U9"]),
        ["message:G1"],
        "what U9 said in a group"
    );
    assert_eq!(owners(&["--user", "U1"]), ["message:U1"]);
    assert_eq!(owners(&["--user", "U8"]), Vec::<String>::new());
    assert_eq!(owners(&["--conversation", "G1"]), ["message:G1"]);
    assert_eq!(owners(&["--role", "user"]), ["message:G1", "message:U1"]);
    assert_eq!(owners(&["--role", "assistant"]), Vec::<String>::new());
    assert_eq!(owners(&["--kind", "summaries"]), ["summary:U2"]);
    assert_eq!(
        owners(&["--kind", "messages,summaries", "--since", "2026-03-11"]),
        ["message:G1", "summary:U2"]
    );
    assert_eq!(
        owners(&["--until", "2026-03-12"]),
        ["summary:U2", "message:U1"],
        "--until DAY includes the day"
    );
    assert_eq!(
        owners(&["--since", "2026-03-12T00:00:00Z", "--until", "2026-03-14"]),
        ["summary:U2"]
    );
    assert_eq!(owners(&["--limit", "1"]), ["message:G1"], "the newest");
    let regex = |pattern: &str| -> Vec<String> {
        env.run(["--json", "session", "search"])
            .args(["--regex", pattern])
            .succeeds()
            .json_lines()
            .iter()
            .map(|h| h["owner"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(regex("zebra(fish|s)\\s+tank"), ["G1"]);
    assert_eq!(regex("^i saw"), ["U1"], "a regex sees each text line");

    // A limit that hides hits says so.
    let out = env
        .run(["session", "search", "zebrafish", "--limit", "1"])
        .output();
    assert!(
        stderr_of(&out).contains("2 more older hit(s)"),
        "{}",
        stderr_of(&out)
    );

    for (args, says) in [
        (
            vec!["zebrafish", "--conversation", "U1"],
            "no conversation U1",
        ),
        (vec!["zebrafish", "--since", "yesterday"], "--since"),
        (
            vec![
                "zebrafish",
                "--since",
                "2026-03-12",
                "--until",
                "2026-03-01",
            ],
            "not before",
        ),
        (vec!["--regex", "("], "does not compile"),
        (vec!["--regex", "x*"], "matches empty text"),
        (vec!["  "], "query is empty"),
    ] {
        let mut full = vec!["session", "search"];
        full.extend_from_slice(&args);
        let out = env.run(&full).fails(Exit::Usage);
        assert!(out.stderr().contains(says), "{args:?}: {}", out.stderr());
    }
}

#[test]
fn a_damaged_gzip_member_is_skipped_with_a_warning_and_the_rest_searched() {
    let env = TestEnv::new();
    let path = env
        .sessions_dir()
        .join("archive/U1/messages-2026-03-10.jsonl.gz");
    let first = gzip_lines(&[line_with(
        "2026-03-10T08:00:00Z",
        "user",
        "okapi one",
        SLACK,
    )]);
    let middle_lines: Vec<String> = (0..500)
        .map(|i| {
            line_with(
                "2026-03-10T09:00:00Z",
                "user",
                &format!("filler {i} okapi two"),
                SLACK,
            )
        })
        .collect();
    let mut middle = gzip_lines(&middle_lines);
    let at = middle.len() / 2;
    for b in &mut middle[at..at + 16] {
        *b ^= 0xa5;
    }
    let last = gzip_lines(&[line_with(
        "2026-03-10T10:00:00Z",
        "user",
        "okapi three",
        SLACK,
    )]);
    write_file(&path, &[first.clone(), middle, last].concat());

    let out = env
        .run(["--json", "session", "search", "okapi", "--limit", "0"])
        .succeeds();
    let texts: Vec<String> = out
        .stdout()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        texts.first().map(String::as_str),
        Some("okapi three"),
        "after the damage"
    );
    assert_eq!(
        texts.last().map(String::as_str),
        Some("okapi one"),
        "before it"
    );
    assert!(
        texts.len() > 2,
        "the readable start of the damaged member counts too"
    );
    assert!(
        texts.len() < 502,
        "not all of the damaged member can be read"
    );
    let stderr = out.stderr();
    assert!(
        stderr.contains(&path.display().to_string())
            && stderr.contains(&format!("damaged gzip data at byte {}", first.len())),
        "{stderr}"
    );
}

#[test]
fn control_characters_in_hits_are_escaped_for_the_terminal() {
    let env = TestEnv::new();
    env.append(
        &["--user", "U1"],
        "pay \x1b]0;owned\x07 the \x1b[2Jrefund\u{202e}now",
    );
    let text = env.run(["session", "search", "refund"]).succeeds().stdout();
    assert!(
        !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(
        text.contains("pay \\u{1b}]0;owned\\u{7} the \\u{1b}[2Jrefund\\u{202e}now"),
        "{text}"
    );
    // JSON keeps the text exactly (escaped the JSON way).
    let found = env
        .run(["--json", "session", "search"])
        .args(["refund"])
        .succeeds()
        .json_lines();
    assert_eq!(
        found[0]["text"],
        "pay \x1b]0;owned\x07 the \x1b[2Jrefund\u{202e}now"
    );

    // On a real terminal: the match is highlighted, and the text still
    // escaped (run under script(1), which gives the command a pty).
    if which::which("script").is_ok() {
        let state = env.state_dir();
        let out = std::process::Command::new("script")
            .args(["-qec"])
            .arg(format!(
                "{} --state-dir {} session search refund",
                crate::common::binary().display(),
                state.display()
            ))
            .arg("/dev/null")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TERM", "xterm")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("\x1b[1;31mrefund\x1b[0m"),
            "highlighted: {shown:?}"
        );
        assert!(
            !shown.contains("\x1b[2J") && !shown.contains("\x1b]0;"),
            "{shown:?}"
        );
        assert!(shown.contains("\\u{1b}[2J"), "{shown:?}");
    }
}

#[test]
fn a_group_only_sender_is_listed_by_users_with_spend_and_conversations_list_groups() {
    let env = TestEnv::new();
    env.append(&["--user", "U1", "--ts", "2026-03-20T10:00:00Z"], "hi");
    env.ask([
        "--conversation",
        "G7",
        "--user",
        "U5",
        "--display-name",
        "Bo",
        "--",
        "hello group",
    ])
    .env("FAKE_CLAUDE_COST", "0.25")
    .succeeds();

    let users = env.run(["--json", "session", "users"]).succeeds().json();
    let ids: Vec<&str> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["user"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{users:#}");
    assert!(
        ids.contains(&"U1") && ids.contains(&"U5") && !ids.contains(&"G7"),
        "{ids:?}"
    );
    let bo = users
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user"] == "U5")
        .unwrap();
    assert_eq!(bo["groupMessages"], 1);
    assert_eq!(bo["conversations"], json!(["G7"]));
    assert_eq!(bo["spend"]["totalUsd"], 0.25);
    let table = env.run(["session", "users"]).succeeds().stdout();
    let row = table
        .lines()
        .find(|l| l.starts_with("U5"))
        .expect("U5 listed");
    assert!(row.contains("$0.2500"), "{table}");

    let convs = env
        .run(["--json", "session", "conversations"])
        .succeeds()
        .json();
    assert_eq!(convs.as_array().unwrap().len(), 1, "{convs:#}");
    assert_eq!(convs[0]["conversation"], "G7");
    assert_eq!(convs[0]["stmMessages"], 2);
    assert_eq!(convs[0]["people"], json!(["U5"]));
    assert_eq!(convs[0]["spend"]["totalUsd"], 0.25);

    let status = env.run(["--json", "session", "status"]).succeeds().json();
    assert_eq!(status["users"], 2);
    assert_eq!(status["conversations"], 1);
    assert_eq!(status["spend"]["asks"]["todayUsd"], 0.25);
    assert_eq!(status["spend"]["asks"]["totalUsd"], 0.25);
    let text = env.run(["session", "status"]).succeeds().stdout();
    assert!(
        text.contains("$0.2500 today, $0.2500 this month, $0.2500 in total"),
        "{text}"
    );

    let show = env
        .run(["session", "show", "--conversation", "G7"])
        .succeeds()
        .stdout();
    assert!(
        show.lines()
            .any(|l| l.contains("Bo (U5)") && l.ends_with("hello group")),
        "{show}"
    );
    assert!(
        show.lines()
            .any(|l| l.contains("assistant") && l.contains("fake reply")),
        "{show}"
    );
}

#[test]
fn show_archive_marks_the_lines_that_come_from_archives() {
    let env = TestEnv::new();
    write_file(
        &env.sessions_dir()
            .join("archive/U1/messages-2026-03-10.jsonl.gz"),
        &gzip_lines(&[line_with(
            "2026-03-10T08:00:00Z",
            "user",
            "old words",
            SLACK,
        )]),
    );
    env.append(
        &["--user", "U1", "--ts", "2026-03-20T10:00:00Z"],
        "new words",
    );
    let show = env
        .run(["session", "show", "--user", "U1", "--archive"])
        .succeeds()
        .stdout();
    let lines: Vec<&str> = show.lines().collect();
    assert!(
        lines[0].contains("archive") && lines[0].contains("old words"),
        "{show}"
    );
    assert!(
        lines[1].contains("stm") && lines[1].contains("new words"),
        "{show}"
    );
    let json = serde_json::from_str::<Value>(
        &env.run(["--json", "session", "show", "--user", "U1", "--archive"])
            .succeeds()
            .stdout(),
    )
    .unwrap();
    assert_eq!(json[0]["archived"], true);
    assert_eq!(json[1]["archived"], false);
}

// --- ranked: several words --------------------------------------------------------

/// U1: an old archived turn about a pottery class, then many recent turns
/// that say "class" (or nothing of it); a hike told in the past tense; a
/// trip in Chinese. U2 (another person) says the same about pottery, more
/// strongly. Group G1: U9's pottery line and U8's.
fn ranked_world(env: &TestEnv) {
    let sessions = env.sessions_dir();
    write_file(
        &sessions.join("archive/U1/messages-2026-01-05.jsonl.gz"),
        &gzip_lines(&[
            line_with(
                "2026-01-05T09:00:00Z",
                "user",
                "I signed up for a pottery class at the community center",
                SLACK,
            ),
            line_with(
                "2026-01-05T09:01:00Z",
                "assistant",
                "Have fun with the clay!",
                SLACK,
            ),
            line_with(
                "2026-01-05T09:02:00Z",
                "user",
                "last weekend we hiked up Mount Tam",
                SLACK,
            ),
            line_with(
                "2026-01-05T09:03:00Z",
                "user",
                "去年我們去北海道旅行，看了很多雪",
                SLACK,
            ),
        ]),
    );
    for i in 0..30 {
        let text = if i % 3 == 0 {
            format!("the yoga class ran late again, number {i}")
        } else {
            format!("how was your day {i}, anything fun")
        };
        env.append(
            &["--user", "U1", "--ts", &format!("2026-03-01T10:{i:02}:00Z")],
            &text,
        );
    }
    env.append(
        &["--user", "U2", "--ts", "2026-03-02T10:00:00Z"],
        "my pottery class, the pottery class at the pottery studio",
    );
    for (user, text) in [
        ("U9", "the pottery class for the kids starts Monday"),
        ("U8", "pottery class is too expensive"),
    ] {
        env.append(
            &[
                "--conversation",
                "G1",
                "--user",
                user,
                "--ts",
                "2026-03-03T10:00:00Z",
            ],
            text,
        );
    }
}

#[test]
fn several_words_rank_a_relevant_old_turn_first_with_rank_and_score() {
    let env = TestEnv::new();
    ranked_world(&env);
    let hits = env
        .run([
            "--json", "session", "search", "--user", "U1", "pottery", "class",
        ])
        .succeeds()
        .json_lines();
    assert!(hits.len() > 2, "{hits:#?}");
    assert_eq!(
        hits[0]["text"], "I signed up for a pottery class at the community center",
        "the old archived turn beats the recent class lines: {hits:#?}"
    );
    assert_eq!(hits[0]["rank"], 1);
    assert_eq!(hits[0]["source"], "archive 2026-01-05");
    assert_eq!(hits[0]["ts"], "2026-01-05T09:00:00Z", "as a phrase hit's");
    assert_eq!(hits[0]["owner"], "U1");
    assert_eq!(hits[0]["speaker"], "U1");
    let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]) && scores[0] > scores[1],
        "best first: {scores:?}"
    );
    // The recent lines that only say "class" come after; nothing without
    // a word of the query.
    assert!(
        hits[1..]
            .iter()
            .all(|h| h["text"].as_str().unwrap().contains("class"))
    );
    assert_eq!(
        hits.iter()
            .map(|h| h["rank"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        (1..=hits.len() as u64).collect::<Vec<_>>()
    );

    let text = env
        .run([
            "session", "search", "--user", "U1", "pottery", "class", "-n", "2",
        ])
        .succeeds()
        .stderr_has("less relevant hit(s) not shown")
        .stdout();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("#1  score ") && first.contains("person U1  archived message"),
        "{text}"
    );
    assert!(
        text.contains("U1: I signed up for a pottery class"),
        "{text}"
    );
    assert!(text.contains("#2  score "), "{text}");
    assert!(!text.contains("#3"), "the limit: {text}");
}

#[test]
fn ranked_search_stems_and_splits_cjk() {
    let env = TestEnv::new();
    ranked_world(&env);
    // "hiking" finds "hiked": no phrase would.
    let hits = env
        .run([
            "--json", "session", "search", "--user", "U1", "hiking", "trip",
        ])
        .succeeds()
        .json_lines();
    assert_eq!(
        hits[0]["text"], "last weekend we hiked up Mount Tam",
        "{hits:#?}"
    );
    env.run(["session", "search", "--user", "U1", "hiking"])
        .succeeds()
        .stderr_has("nothing matches");
    // A CJK query shares character pairs, not spaces: 北海道 in a sentence
    // that says it differently.
    let hits = env
        .run(["--json", "session", "search", "--ranked", "北海道的雪"])
        .succeeds()
        .json_lines();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["text"], "去年我們去北海道旅行，看了很多雪");
}

#[test]
fn ranked_search_keeps_to_the_owner_and_a_members_lines() {
    let env = TestEnv::new();
    ranked_world(&env);
    let texts = |args: &[&str]| -> Vec<(String, String)> {
        env.run(["--json", "session", "search"])
            .args(args)
            .succeeds()
            .json_lines()
            .iter()
            .map(|h| {
                (
                    h["owner"].as_str().unwrap().to_owned(),
                    h["text"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    // U2 says it more strongly, but U2 is not U1.
    let u1 = texts(&["--user", "U1", "pottery", "studio"]);
    assert!(!u1.is_empty());
    assert!(u1.iter().all(|(owner, _)| owner == "U1"), "{u1:?}");
    // A group member: their own lines in G1, not another member's.
    let u9 = texts(&["--user", "U9", "pottery", "class"]);
    assert_eq!(
        u9,
        [(
            "G1".to_owned(),
            "the pottery class for the kids starts Monday".to_owned()
        )]
    );
    // One conversation: only its lines.
    let g1 = texts(&["--conversation", "G1", "pottery", "class"]);
    assert_eq!(g1.len(), 2, "{g1:?}");
    assert!(g1.iter().all(|(owner, _)| owner == "G1"), "{g1:?}");
    // Everyone: U2's strongest line first, weighed over every owner.
    let all = texts(&["pottery", "studio"]);
    assert_eq!(all[0].0, "U2", "{all:?}");
    assert!(all.iter().any(|(owner, _)| owner == "G1"), "{all:?}");
}

/// Through the recall index or read whole, a ranked search answers the
/// same: the same hits, scores and order, over every owner, one person's
/// memory, a member's lines and a time range.
#[test]
fn ranked_search_is_the_same_with_and_without_the_index() {
    let env = TestEnv::new();
    ranked_world(&env);
    let asks: [&[&str]; 4] = [
        &["pottery", "class"],
        &["--user", "U1", "pottery", "class", "hiking"],
        &["--user", "U9", "pottery", "class"],
        &["--user", "U1", "--until", "2026-02-01", "pottery", "clay"],
    ];
    let answers = || -> Vec<Vec<Value>> {
        asks.iter()
            .map(|args| {
                env.run(["--json", "session", "search"])
                    .args(*args)
                    .succeeds()
                    .json_lines()
            })
            .collect()
    };
    let whole = answers();
    assert!(whole.iter().all(|hits| !hits.is_empty()), "{whole:#?}");
    let out = env.run(["--json", "session", "reindex"]).succeeds().json();
    assert!(out["recallDays"].as_u64().unwrap() >= 1, "{out:#}");
    assert_eq!(answers(), whole);
}

#[test]
fn a_quoted_phrase_phrase_and_regex_stay_exact_and_newest_first() {
    let env = TestEnv::new();
    ranked_world(&env);
    // One argument with a space: the phrase, newest first, as before.
    let phrase = env
        .run([
            "--json",
            "session",
            "search",
            "--user",
            "U1",
            "pottery class",
        ])
        .succeeds()
        .json_lines();
    assert_eq!(phrase.len(), 1, "{phrase:#?}");
    assert_eq!(phrase[0]["source"], "archive");
    assert!(phrase[0].get("score").is_none(), "{phrase:#?}");
    let phrase_flag = env
        .run([
            "--json", "session", "search", "--user", "U1", "--phrase", "pottery", "class",
        ])
        .succeeds()
        .json_lines();
    assert_eq!(phrase_flag, phrase);
    // No such phrase in those words' order: nothing, where ranking finds it.
    env.run([
        "session", "search", "--user", "U1", "--phrase", "class", "pottery",
    ])
    .succeeds()
    .stderr_has("nothing matches");
    let regex = env
        .run([
            "--json",
            "session",
            "search",
            "--user",
            "U1",
            "--regex",
            "yoga class ran late again, number [0-9]+$",
        ])
        .succeeds()
        .json_lines();
    assert_eq!(regex.len(), 10, "{regex:#?}");
    assert!(
        regex
            .windows(2)
            .all(|w| w[0]["ts"].as_str() > w[1]["ts"].as_str()),
        "newest first"
    );
    // Bad combinations, and nothing to rank: usage errors that say why.
    env.run(["session", "search", "--regex", "a", "b"])
        .fails(Exit::Usage)
        .stderr_has("--regex takes one pattern");
    env.run(["session", "search", "--regex", "--ranked", "pottery"])
        .fails(Exit::Usage);
    env.run(["session", "search", "thank", "you"])
        .fails(Exit::Usage)
        .stderr_has("no word to rank by");
    env.run([
        "session", "search", "pottery", "class", "--kind", "profiles",
    ])
    .fails(Exit::Usage)
    .stderr_has("ranked search covers messages");
}

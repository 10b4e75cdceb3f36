//! Auto-recall: `ask` puts the earlier messages relevant to the current
//! one into the context (no extra call), and `context -- "message"` shows
//! exactly that context.

use crate::common::{TestEnv, history_line, import_and_compact, write_file};
use serde_json::{Value, json};

const FACT: &str = "My sister Melanie adopted a golden retriever puppy named Biscuit";
const QUESTION: &str = "What is the name of Melanie's puppy?";

/// `count` turns of small talk for `user`, with `fact` (if any) as the
/// 5th, imported and then compacted into the archive with the fake.
fn history(env: &TestEnv, user: &str, fact: Option<&str>, count: usize) {
    let lines: String = (0..count)
        .map(|i| {
            let (role, text) = match (i, fact) {
                (4, Some(fact)) => ("user", fact.to_owned()),
                (_, _) if i % 2 == 0 => ("user", format!("how was your day {i}, anything fun")),
                _ => (
                    "assistant",
                    format!("quiet here {i}, the weather was sunny"),
                ),
            };
            history_line(
                &format!(
                    "2026-02-{:02}T{:02}:{:02}:00Z",
                    1 + i / 600,
                    (i / 60) % 10 + 8,
                    i % 60
                ),
                role,
                &text,
                &format!("{user}-{i}"),
            )
        })
        .collect();
    import_and_compact(env, user, &lines);
}

fn context(env: &TestEnv, user: &str, message: Option<&str>) -> String {
    let mut run = env.run(["context", "--user", user]);
    if let Some(message) = message {
        run = run.args(["--", message]);
    }
    run.succeeds().stdout()
}

#[test]
fn context_for_a_message_is_exactly_what_ask_sends() {
    let env = TestEnv::new();
    history(&env, "U1", Some(FACT), 120);
    let shown = context(&env, "U1", Some(QUESTION));
    assert!(
        shown.contains(
            "[Earlier messages that may be relevant]\n[2026-02-01 08:03]\nAssistant: quiet here 3"
        ) && shown.contains("quiet here 3, the weather was sunny\nUser: My sister Melanie"),
        "the old fact is recalled with its neighbours, a passage under its date, with its speaker: {shown}"
    );
    // Recalled before the recent messages, in its own section.
    assert!(shown.find("[Earlier").unwrap() < shown.find("[Recent messages]").unwrap());
    let calls = env.claude_calls();
    env.ask(["--user", "U1", "--system-prompt", "Base.", "--", QUESTION])
        .succeeds();
    let prompt = env.claude_call(calls + 1).system_prompt;
    assert_eq!(
        prompt,
        format!(
            "Base.\n\n## Recent conversation context:\n{}",
            shown.trim_end()
        ),
        "ask sends what context shows"
    );
}

#[test]
fn small_talk_and_recall_off_change_nothing() {
    let env = TestEnv::new();
    history(&env, "U1", Some(FACT), 120);
    let plain = context(&env, "U1", None);
    assert!(!plain.contains("[Earlier"));
    for talk in ["thanks!", "ok", "hi", "👍", "Thank you so much"] {
        assert_eq!(
            context(&env, "U1", Some(talk)),
            plain,
            "{talk:?} recalls nothing"
        );
    }
    env.write_config(r#"{"recall": {"auto": false}}"#);
    assert_eq!(context(&env, "U1", Some(QUESTION)), plain);
}

/// Small talk recalls nothing even where the memory is full of the same
/// words: "good morning", "sounds good", "哈哈，好的", "お疲れさまです",
/// "고마워요" said a hundred times before would all match it.
#[test]
fn small_talk_in_any_language_recalls_nothing_where_the_memory_says_it_too() {
    let env = TestEnv::new();
    let said = [
        "Good morning! Sounds good, see you later",
        "haha cool, thanks for sharing! have a nice day",
        "哈哈，好的，辛苦了",
        "お疲れさまです！了解しました",
        "고마워요 좋은 아침! ㅋㅋㅋ",
    ];
    let lines: String = (0..120)
        .map(|i| {
            let text = match i {
                4 => FACT.to_owned(),
                _ => format!("{} {i}", said[i % said.len()]),
            };
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            history_line(
                &format!("2026-02-01T{:02}:{:02}:00Z", 8 + i / 60, i % 60),
                role,
                &text,
                &format!("U1-{i}"),
            )
        })
        .collect();
    import_and_compact(&env, "U1", &lines);
    let plain = context(&env, "U1", None);
    for talk in [
        "good morning!",
        "Sounds good",
        "haha cool",
        "thanks for sharing!",
        "have a nice day 🙂",
        "哈哈，好的",
        "辛苦了",
        "お疲れさまです！",
        "了解しました",
        "고마워요",
        "좋은 아침!",
        "ㅋㅋㅋ",
    ] {
        assert_eq!(
            context(&env, "U1", Some(talk)),
            plain,
            "{talk:?} recalls nothing"
        );
    }
    // The same words with something to look for still recall it.
    let asked = "good morning! what is the name of Melanie's puppy?";
    assert!(context(&env, "U1", Some(asked)).contains(FACT));
    // And ask sends what context showed: for small talk, no recall.
    let calls = env.claude_calls();
    env.ask([
        "--user",
        "U1",
        "--system-prompt",
        "Base.",
        "--",
        "お疲れさまです！",
    ])
    .succeeds();
    let prompt = env.claude_call(calls + 1).system_prompt;
    assert!(!prompt.contains("[Earlier"), "{prompt}");
}

#[test]
fn json_lists_each_recalled_message_and_its_source() {
    let env = TestEnv::new();
    history(&env, "U1", Some(FACT), 120);
    let out: Value = env
        .run([
            "--json",
            "context",
            "--user",
            "U1",
            "--explain",
            "--",
            QUESTION,
        ])
        .succeeds()
        .json();
    let recalled = out["recalled"].as_array().expect("recalled is listed");
    let hit = recalled
        .iter()
        .find(|r| r["msgId"] == "U1-4")
        .unwrap_or_else(|| panic!("the fact's msgId: {recalled:?}"));
    assert_eq!(hit["text"], FACT);
    assert_eq!(hit["role"], "user");
    assert_eq!(hit["source"], "archive 2026-02-01");
    assert_eq!(hit["hit"], true);
    assert!(hit["score"].as_f64().unwrap() > 0.0);
    // Its neighbours come along: the turn before and after it; the turn
    // after is a hit too (by the fact's words, the turn before it), so the
    // passage grows by the one after that.
    let ids: Vec<&str> = recalled
        .iter()
        .map(|r| r["msgId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["U1-3", "U1-4", "U1-5", "U1-6"]);
    let considered = out["explain"]["recall"]["considered"].as_array().unwrap();
    assert_eq!(considered[0]["verdict"], "taken");
    // Without a message: no recalled list, as before.
    let plain: Value = env
        .run(["--json", "context", "--user", "U1"])
        .succeeds()
        .json();
    assert!(plain.get("recalled").is_none());
}

#[test]
fn the_budget_and_the_hard_cap_hold() {
    let env = TestEnv::new();
    let lines: String = (0..300)
        .map(|i| {
            json!({
                "ts": format!("2026-02-01T{:02}:{:02}:00Z", 8 + i / 60, i % 60),
                "role": "user",
                "text": format!("note {i}: the roses in the garden need water {}", "x".repeat(100)),
            })
            .to_string()
                + "\n"
        })
        .collect();
    let import = env.dir.path().join("many.jsonl");
    write_file(&import, lines.as_bytes());
    env.run(["append", "--user", "U1", "--jsonl"])
        .arg(&import)
        .succeeds();
    env.write_config(
        r#"{"recall": {"maxChars": 1000, "minScore": 0}, "stm": {"maxContextChars": 3000}}"#,
    );
    let shown = context(&env, "U1", Some("what about the roses in the garden?"));
    let recalled = shown
        .split("[Earlier messages that may be relevant]\n")
        .nth(1)
        .expect("a recalled section")
        .split("\n\n[Recent messages]")
        .next()
        .unwrap();
    assert!(
        recalled.chars().count() <= 1000,
        "{}",
        recalled.chars().count()
    );
    assert!(shown.trim_end().chars().count() <= 3000);
    // The hard cap wins over recall.maxChars.
    env.write_config(
        r#"{"recall": {"maxChars": 4000, "minScore": 0}, "stm": {"maxContextChars": 2000}}"#,
    );
    let shown = context(&env, "U1", Some("what about the roses in the garden?"));
    assert!(shown.trim_end().chars().count() <= 2000, "{}", shown.len());
}

#[test]
fn recall_never_crosses_owners() {
    let env = TestEnv::new();
    history(&env, "U2", Some(FACT), 120);
    history(&env, "U1", None, 120);
    env.ask(["--user", "U1", "--", QUESTION]).succeeds();
    let prompt = env.claude_call(env.claude_calls()).system_prompt;
    assert!(
        !prompt.contains("Biscuit"),
        "U2's memory reached U1: {prompt}"
    );
    assert!(!context(&env, "U1", Some(QUESTION)).contains("Biscuit"));

    // A conversation's memory: recalled for a member, in the group's context.
    env.run(["append", "--user", "U3", "--conversation", "G1", "--", FACT])
        .succeeds();
    for i in 0..30 {
        env.run(["append", "--user", "U3", "--conversation", "G1", "--"])
            .arg(format!("weather chat {i}, sunny and warm"))
            .succeeds();
    }
    env.run([
        "append",
        "--user",
        "U4",
        "--conversation",
        "G1",
        "--",
        "hello all",
    ])
    .succeeds();
    let group = env
        .run([
            "context",
            "--user",
            "U4",
            "--conversation",
            "G1",
            "--",
            QUESTION,
        ])
        .succeeds()
        .stdout();
    assert!(
        group.contains("[Earlier messages that may be relevant]"),
        "{group}"
    );
    assert!(
        group.contains("(U3): My sister Melanie"),
        "the speaker is named: {group}"
    );
    // The group's memory is not the person's own.
    assert!(!context(&env, "U3", Some(QUESTION)).contains("Biscuit"));
}

/// Nothing is cached between calls: a message another process (another
/// host) appended a moment ago to the live log is recalled by the next
/// `ask`, once it is older than the recent window.
#[test]
fn a_message_just_appended_is_recalled_from_the_live_log() {
    let env = TestEnv::new();
    history(&env, "U1", None, 60);
    env.run(["append", "--user", "U1", "--msg-id", "fresh", "--", FACT])
        .succeeds();
    for i in 0..15 {
        env.run(["append", "--user", "U1", "--"])
            .arg(format!("weather chat {i}, sunny and warm"))
            .succeeds();
    }
    let out: Value = env
        .run(["--json", "context", "--user", "U1", "--", QUESTION])
        .succeeds()
        .json();
    let recalled = out["recalled"].as_array().unwrap();
    let hit = recalled
        .iter()
        .find(|r| r["msgId"] == "fresh")
        .unwrap_or_else(|| panic!("{recalled:?}"));
    assert_eq!(hit["source"], "log");
}

/// A follow-up ("and what does she do?") is looked for with the turn it
/// follows up: the sender's last message and the answer to it.
#[test]
fn a_follow_up_recalls_the_fact_with_the_turn_before_it() {
    const JOB: &str = "Melanie works as a pediatric nurse, night shifts mostly";
    const FOLLOW_UP: &str = "And what does she do for a living?";
    let env = TestEnv::new();
    let lines: String = (0..120)
        .map(|i| {
            let (role, text) = match i {
                4 => (
                    "user",
                    "My sister Melanie moved to Porto last spring".to_owned(),
                ),
                60 => ("user", JOB.to_owned()),
                _ if i % 2 == 0 => ("user", format!("how was your day {i}, anything fun")),
                _ => (
                    "assistant",
                    format!("quiet here {i}, the weather was sunny"),
                ),
            };
            json!({
                "ts": format!("2026-02-01T{:02}:{:02}:00Z", (i / 60) + 8, i % 60),
                "role": role, "text": text, "msgId": format!("U1-{i}"),
            })
            .to_string()
                + "\n"
        })
        .collect();
    import_and_compact(&env, "U1", &lines);
    // Alone, the follow-up has nothing to look for that was said.
    assert!(!context(&env, "U1", Some(FOLLOW_UP)).contains(JOB));
    env.ask(["--user", "U1", "--", "Where did my sister Melanie move to?"])
        .succeeds();
    let plain = context(&env, "U1", None);
    let shown = context(&env, "U1", Some(FOLLOW_UP));
    assert!(
        shown.contains(&format!("\nUser: {JOB}\n")),
        "the follow-up recalls the other fact about Melanie: {shown}"
    );
    // Small talk after the same turns still recalls nothing.
    for talk in ["thanks!", "ok", "👍"] {
        assert_eq!(context(&env, "U1", Some(talk)), plain, "{talk:?}");
    }
    // What ask sends for it is what context showed.
    let calls = env.claude_calls();
    env.ask(["--user", "U1", "--system-prompt", "Base.", "--", FOLLOW_UP])
        .succeeds();
    assert!(
        env.claude_call(calls + 1)
            .system_prompt
            .ends_with(shown.trim_end()),
        "ask recalls the same for the follow-up"
    );
}

#[test]
fn a_misspelt_word_is_looked_for_as_the_memory_s_word() {
    let env = TestEnv::new();
    history(
        &env,
        "U1",
        Some("We marched at the pride festival downtown with the whole choir"),
        120,
    );
    // "fesetival" and "choier": no message has them; one edit from the
    // memory's words.
    let shown = context(
        &env,
        "U1",
        Some("Who came to the fesetival with the choier?"),
    );
    assert!(
        shown.contains("\nUser: We marched at the pride festival"),
        "recalled as if spelt right: {shown}"
    );
    let json: Value = serde_json::from_str(
        &env.run([
            "--json",
            "context",
            "--explain",
            "--user",
            "U1",
            "--",
            "the fesetival",
        ])
        .succeeds()
        .stdout(),
    )
    .unwrap();
    let terms = json["explain"]["recall"]["terms"].to_string();
    assert!(
        terms.contains("\"festiv\"") && !terms.contains("fesetiv"),
        "{terms}"
    );
    // `session search` (several words, ranked) corrects the same way.
    let found = env
        .run(["session", "search", "fesetival", "choier"])
        .succeeds()
        .stdout();
    assert!(found.contains("pride festival"), "{found}");
    // A word with nothing near it stays as it is and finds nothing.
    assert!(!context(&env, "U1", Some("the zqxwvy")).contains("[Earlier"));
}

#[test]
fn a_retired_rolling_summary_is_recalled_without_its_frontmatter() {
    let env = TestEnv::new();
    history(&env, "U1", None, 120);
    // Two retirements on one day (`session clear`): the second summary is
    // appended to the first's archived file, frontmatter and all.
    let summary = |body: &str| {
        format!(
            "---\nuser_id: U1\nlast_compacted: 2026-02-01T10:00:00.000Z\nmessages_compacted: 110\n---\n\n{body}\n"
        )
    };
    for body in [
        "- Talked about the weather.\n\n---\n\n- Their sister Melanie adopted a golden retriever puppy named Biscuit.",
        "- Planning a trip to Kyoto in spring.",
    ] {
        write_file(
            &env.stm_dir("U1").join("summary.md"),
            summary(body).as_bytes(),
        );
        env.run(["session", "clear", "--user", "U1", "--yes"])
            .succeeds();
    }
    let retired = std::fs::read_dir(env.archive_dir("U1"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|name| name.starts_with("summary-"))
        .expect("the summary is archived");
    let day = &retired["summary-".len()..retired.len() - ".md".len()];

    let shown = context(&env, "U1", Some(QUESTION));
    assert!(
        shown.contains(&format!(
            "[{day}] Earlier summary: Their sister Melanie adopted a golden retriever puppy named Biscuit."
        )),
        "the fact of the retired summary is recalled: {shown}"
    );
    let out: Value = env
        .run([
            "--json",
            "context",
            "--user",
            "U1",
            "--",
            "Melanie's puppy and the Kyoto trip",
        ])
        .succeeds()
        .json();
    let recalled = out["recalled"].as_array().expect("recalled is listed");
    let texts: Vec<&str> = recalled
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert!(
        texts.contains(&"Planning a trip to Kyoto in spring."),
        "{texts:?}"
    );
    assert!(
        recalled
            .iter()
            .all(|r| r["source"] == format!("rolling {day}")
                || r["source"].as_str().unwrap().starts_with("archive")),
        "{recalled:?}"
    );
    // Phrase search reads it too, as a summary.
    let found = env
        .run(["--json", "session", "search", "Biscuit", "--user", "U1"])
        .succeeds()
        .json_lines();
    assert!(
        found.iter().any(|h| h["source"] == "rolling"
            && h["kind"] == "summary"
            && h["file"] == format!("archive/U1/{retired}")
            && h["ts"] == format!("{day}T00:00:00Z")),
        "dated as recall dates it: {found:?}"
    );
    // The second summary's frontmatter is no hit there either.
    let keys = env
        .run([
            "--json",
            "session",
            "search",
            "last_compacted",
            "--user",
            "U1",
        ])
        .succeeds()
        .json_lines();
    assert!(keys.iter().all(|h| h["source"] != "rolling"), "{keys:?}");
    // No frontmatter key of the second summary is taken for prose.
    let any: Value = env
        .run([
            "--json",
            "context",
            "--user",
            "U1",
            "--",
            "user_id last_compacted messages_compacted",
        ])
        .succeeds()
        .json();
    assert!(
        any["recalled"].as_array().is_none_or(|r| r
            .iter()
            .all(|m| !m["text"].as_str().unwrap().contains("user_id"))),
        "{any}"
    );
}

//! `context --explain` for a context that overflows its size budget.

use super::*;

/// The messages of [`overflowing`], oldest first.
fn texts() -> [String; 6] {
    [
        "oldest message aaaa".to_owned(),
        "second message bbbb".to_owned(),
        "third message cccc".to_owned(),
        format!("long message {}", "z".repeat(200)),
        "日本語のメッセージ".to_owned(),
        "newest message".to_owned(),
    ]
}

/// A profile, a summary and six messages of U1 in a budget of 300
/// characters: the three oldest messages are dropped, the fourth is cut.
fn overflowing(env: &TestEnv) {
    env.write_config(r#"{"stm": {"maxContextChars": 300}}"#);
    env.set_profile("U1", "---\ndisplay_name: Alice\n---\nLikes tea.\n");
    write_file(
        &env.stm_dir("U1").join("summary.md"),
        b"---\nuser_id: U1\n---\nThey talked about tea.\n",
    );
    for (i, text) in texts().iter().enumerate() {
        env.run(["append", "--user", "U1", "--ts"])
            .arg(format!("2026-03-0{}T10:00:00Z", i + 1))
            .args(["--", text])
            .succeeds();
    }
}

/// `--json context --explain` of [`overflowing`]: the explanation, its
/// parts and the context text.
fn explained(env: &TestEnv) -> (Value, Vec<Value>, String) {
    let value = env
        .run(["--json", "context", "--user", "U1", "--explain"])
        .succeeds()
        .json();
    let explain = value["explain"].clone();
    let parts = explain["parts"].as_array().expect("explain.parts").clone();
    let text = value["text"].as_str().expect("text").to_owned();
    (explain, parts, text)
}

#[test]
fn explain_lists_every_part_with_its_fate() {
    let env = TestEnv::new();
    overflowing(&env);
    let (explain, parts, text) = explained(&env);
    assert_eq!(explain["budgetChars"], 300, "{explain}");
    assert!(text.chars().count() <= 300, "{text}");
    assert_eq!(explain["usedChars"], text.chars().count(), "{explain}");
    let kinds: Vec<&str> = parts.iter().map(|p| p["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "profile", "summary", "message", "message", "message", "message", "message", "message"
        ],
        "{explain}"
    );
    let fates: Vec<&str> = parts.iter().map(|p| p["fate"].as_str().unwrap()).collect();
    assert_eq!(
        fates,
        [
            "kept", "kept", "dropped", "dropped", "dropped", "cut", "kept", "kept"
        ],
        "{explain}"
    );
    for part in &parts {
        let chars = part["chars"].as_u64().unwrap();
        let used = part["usedChars"].as_u64().unwrap();
        match part["fate"].as_str().unwrap() {
            "kept" => assert_eq!(used, chars, "{part}"),
            "cut" => assert!(0 < used && used < chars, "{part}"),
            _ => assert_eq!(
                (used, part["usedTokens"].as_u64().unwrap()),
                (0, 0),
                "{part}"
            ),
        }
    }
}

#[test]
fn explain_counts_about_four_ascii_characters_a_token_and_one_for_others() {
    let env = TestEnv::new();
    overflowing(&env);
    let (_, parts, text) = explained(&env);
    let newest = &parts[7];
    assert_eq!(
        newest["usedTokens"].as_u64().unwrap(),
        newest["usedChars"].as_u64().unwrap().div_ceil(4),
        "{newest}"
    );
    let japanese = &parts[6];
    let line = text
        .lines()
        .find(|l| l.contains("日本語"))
        .expect("the Japanese message is kept");
    let ascii = line.chars().filter(char::is_ascii).count();
    let other = line.chars().count() - ascii;
    assert_eq!(
        japanese["usedTokens"].as_u64().unwrap() as usize,
        ascii.div_ceil(4) + other,
        "{japanese} for {line:?}"
    );
}

#[test]
fn explain_drops_the_oldest_messages_first() {
    let env = TestEnv::new();
    overflowing(&env);
    let (_, _, text) = explained(&env);
    for dropped in &texts()[..3] {
        assert!(
            !text.contains(dropped.as_str()),
            "{dropped:?} dropped: {text}"
        );
    }
    assert!(text.contains("newest message"), "{text}");
    assert!(text.contains("characters omitted]"), "{text}");
}

#[test]
fn explain_as_a_table_shows_each_part_and_why_it_was_dropped_or_cut() {
    let env = TestEnv::new();
    overflowing(&env);
    let (explain, parts, text) = explained(&env);
    let out = env.run(["context", "--user", "U1", "--explain"]).succeeds();
    let table = out.stdout();
    let rows: Vec<&str> = table.lines().collect();
    assert!(
        rows[0].contains("CHARS") && rows[0].contains("FATE"),
        "{table}"
    );
    let row_of = |name: &str| -> Vec<String> {
        rows.iter()
            .find(|r| r.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("a row for {name}: {table}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let cells = |name: &str, part: &Value| {
        let row = row_of(name);
        let offset = name.split_whitespace().count();
        assert_eq!(row[offset], part["chars"].to_string(), "{name}: {table}");
        assert_eq!(
            row[offset + 1],
            part["usedChars"].to_string(),
            "{name}: {table}"
        );
        assert_eq!(
            row[offset + 2],
            part["usedTokens"].to_string(),
            "{name}: {table}"
        );
        assert_eq!(
            row[offset + 3],
            part["fate"].as_str().unwrap(),
            "{name}: {table}"
        );
        row[offset + 4..].join(" ")
    };
    assert_eq!(cells("profile", &parts[0]), "");
    assert_eq!(cells("summary", &parts[1]), "");
    for n in 1..=3 {
        let why = cells(&format!("message {n}"), &parts[n + 1]);
        assert!(
            why.contains("dropped") && why.contains("stm.maxContextChars"),
            "{why}"
        );
    }
    let why = cells("message 4", &parts[5]);
    assert!(
        why.contains(&format!("cut to {}", parts[5]["usedChars"])),
        "{why}: {table}"
    );
    assert_eq!(cells("message 5", &parts[6]), "");
    assert_eq!(cells("message 6", &parts[7]), "");
    assert!(
        table.contains(&format!(
            "total: {} of 300 characters",
            text.chars().count()
        )),
        "{table}"
    );
    assert!(
        table.contains(&format!("~{} tokens", explain["estimatedTokens"])),
        "{table}"
    );
}

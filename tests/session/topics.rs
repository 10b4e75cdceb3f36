//! `session topics`, `topic show|set`, `forget`, `search` and `reindex`:
//! topic notes and the tag index.

use super::*;

#[test]
fn topics_topic_show_and_topic_set_with_tags_update_the_index() {
    let env = TestEnv::new();
    set_topic(
        &env,
        "tea",
        "---\ntitle: Tea notes\nowner: U1\nsource: admin\n---\n\nOolong is best at 90 degrees.\n",
        Some("Drinks, green"),
    );
    let (front, body) = read_markdown(&topic_path(&env, "tea"));
    assert_eq!(yaml_strs(&front, "tags"), ["Drinks", "green"]);
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
    assert_eq!(entry["tags"], json!(["Drinks", "green"]));
    assert_eq!(entry["title"], json!("Tea notes"));

    // From stdin, no tags: the title defaults to the slug.
    let out = env
        .run(["--json", "session", "topic", "set", "coffee"])
        .stdin("Espresso, short.\n")
        .succeeds();
    let v = out.json();
    assert_eq!(v["id"], json!("coffee"), "{v}");
    assert_eq!(
        index_entry(&env, "ltm/topics/coffee.md").unwrap()["title"],
        json!("coffee")
    );

    let list = env.run(["--json", "session", "topics"]).succeeds().json();
    let slugs: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["coffee", "tea"]);
    assert_eq!(list[1]["tags"], json!(["Drinks", "green"]));
    assert_eq!(list[1]["owner"], json!("U1"));
    assert_eq!(list[1]["title"], json!("Tea notes"));
    let text = env.run(["session", "topics"]).succeeds().stdout();
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows[0].starts_with("SLUG"), "{text}");
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[1].starts_with("coffee"), "{text}");
    assert!(
        rows[2].starts_with("tea")
            && rows[2].contains("Tea notes")
            && rows[2].contains("Drinks,green")
            && rows[2].contains("U1"),
        "{text}"
    );

    let shown = env
        .run(["session", "topic", "show", "tea"])
        .succeeds()
        .stdout();
    assert_eq!(
        shown.trim_end(),
        std::fs::read_to_string(topic_path(&env, "tea"))
            .unwrap()
            .trim_end()
    );
    let v = env
        .run(["--json", "session", "topic", "show", "tea"])
        .succeeds()
        .json();
    assert_eq!(v["slug"], json!("tea"));
    assert_eq!(v["frontmatter"]["owner"], json!("U1"));
    assert_eq!(
        v["body"].as_str().unwrap().trim(),
        "Oolong is best at 90 degrees."
    );
    env.run(["session", "topic", "show", "nope"])
        .fails(Exit::UnknownUser);

    // Setting again replaces the entry, tags and all.
    set_topic(&env, "tea", "Now sencha.\n", Some("a,b"));
    let entries: Vec<Value> = index_entries(&env)
        .into_iter()
        .filter(|e| e["path"] == json!("ltm/topics/tea.md"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["tags"], json!(["a", "b"]));
    let (front, _) = read_markdown(&topic_path(&env, "tea"));
    assert_eq!(yaml_strs(&front, "tags"), ["a", "b"]);
}

#[test]
fn forget_removes_the_note_and_its_index_entry_and_refuses_an_unknown_slug() {
    let env = TestEnv::new();
    set_topic(&env, "tea", "Oolong.\n", Some("drinks"));
    set_topic(&env, "coffee", "Espresso.\n", Some("drinks"));
    set_topic(&env, "cocoa", "Hot.\n", None);

    let text = env.run(["session", "forget", "tea"]).succeeds().stdout();
    assert!(text.contains("tea"), "{text}");
    assert!(!topic_path(&env, "tea").exists());
    assert!(index_entry(&env, "ltm/topics/tea.md").is_none());
    assert!(index_entry(&env, "ltm/topics/coffee.md").is_some());

    let v = env
        .run(["--json", "session", "forget", "coffee"])
        .succeeds()
        .json();
    assert_eq!(v, json!({"forgotten": "coffee"}));
    assert!(!topic_path(&env, "coffee").exists());
    assert!(index_entry(&env, "ltm/topics/coffee.md").is_none());

    let before = tree(&env.sessions_dir());
    env.run(["session", "forget", "tea"])
        .fails(Exit::UnknownUser);
    env.run(["--json", "session", "forget", "nope"])
        .fails(Exit::UnknownUser);
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
        env.run(&full)
            .succeeds()
            .stdout()
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
    let text = env.run(["session", "search", "kayak"]).succeeds().stdout();
    for n in &numbered {
        assert!(text.contains(n.as_str()), "`{n}` in:\n{text}");
    }
    assert!(!text.contains("tea.md"), "{text}");

    let only = search(&["kayak", "--tag", "outdoor"]);
    let files: Vec<&str> = only.iter().map(|h| h["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["ltm/topics/hiking.md"]);
    let text = env
        .run(["session", "search", "kayak", "--tag", "water"])
        .succeeds()
        .stdout();
    assert!(
        text.contains("kayak-trips.md") && !text.contains("hiking.md"),
        "{text}"
    );
}

#[test]
fn reindex_rebuilds_the_index_from_profiles_and_topics() {
    let env = TestEnv::new();
    env.set_profile("U1", "---\ndisplay_name: One\ntags: [a]\n---\n\nOne.\n");
    env.set_profile("U2", "---\ndisplay_name: Two\n---\n\nTwo.\n");
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
    let text = env.run(["session", "reindex"]).succeeds().stdout();
    assert!(text.contains("4 entries"), "{text}");
    assert_eq!(sorted(index_entries(&env)), before);

    std::fs::remove_file(index_path(&env)).unwrap();
    let v = env.run(["--json", "session", "reindex"]).succeeds().json();
    assert_eq!(
        v,
        json!({"entries": 4, "memberships": 0, "recallSegments": 0, "recallDays": 0,
               "recallMessages": 0, "recallDamaged": 0})
    );
    assert_eq!(sorted(index_entries(&env)), before);
}

#[test]
fn session_help_lists_every_subcommand() {
    let env = TestEnv::uninitialised();
    let text = env.run(["session", "help"]).succeeds().stdout();
    for sub in [
        "status", "users", "show", "clear", "delete", "profile", "topics", "topic", "forget",
        "search", "export", "reindex",
    ] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
            "`{sub}` in:\n{text}"
        );
    }
    assert!(!env.state_dir().exists(), "help touches no state");
}

/// The terminal column where `needle` starts on `line` (a CJK character
/// takes two).
fn column_of(line: &str, needle: &str) -> usize {
    let at = line
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in {line:?}"));
    unicode_width::UnicodeWidthStr::width(&line[..at])
}

#[test]
fn a_cjk_topic_title_keeps_the_columns_of_session_topics_aligned() {
    let env = TestEnv::new();
    set_topic(
        &env,
        "toeic",
        "---\ntitle: 多益考試準備\nowner: U1\n---\n\nListening first.\n",
        None,
    );
    set_topic(
        &env,
        "tea",
        "---\ntitle: Tea\nowner: U2\n---\n\nOolong.\n",
        None,
    );
    let text = env.run(["session", "topics"]).succeeds().stdout();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let owner = column_of(lines[0], "OWNER");
    assert_eq!(column_of(lines[1], "U2"), owner, "{text}");
    assert_eq!(column_of(lines[2], "U1"), owner, "{text}");
}

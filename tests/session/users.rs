//! `session users`: one row per user, sorted and limited.

use super::*;

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
    env.set_profile("UD", "---\ndisplay_name: D\n---\n\nOnly a profile.\n");
    // UE: only an archive is left after a clear.
    env.import("UE", &[line("2026-03-19T08:00:00Z", "user", "e")]);
    env.run(["session", "clear", "--user", "UE", "--yes"])
        .succeeds();

    // Users without STM (no activity, no messages) come last, in some order.
    let tail_is_d_and_e = |order: &[String]| {
        let mut tail = order[3..].to_vec();
        tail.sort();
        assert_eq!(tail, ["UD", "UE"], "{order:?}");
    };
    let by_activity = env
        .run(["--json", "session", "users", "--sort", "activity"])
        .succeeds()
        .json();
    assert_eq!(user_order(&by_activity)[..3], ["UC", "UB", "UA"]);
    tail_is_d_and_e(&user_order(&by_activity));
    let default = env.run(["--json", "session", "users"]).succeeds().json();
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

    let by_messages = env
        .run(["--json", "session", "users", "--sort", "messages"])
        .succeeds()
        .json();
    assert_eq!(user_order(&by_messages)[..3], ["UA", "UC", "UB"]);
    tail_is_d_and_e(&user_order(&by_messages));

    let by_size = env
        .run(["--json", "session", "users", "--sort", "size"])
        .succeeds()
        .json();
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
        let text = env
            .run(["session", "users", "--sort", sort])
            .succeeds()
            .stdout();
        assert_eq!(text_rows(&text), user_order(json), "--sort {sort}:\n{text}");
    }

    let limited = env
        .run([
            "--json", "session", "users", "--sort", "messages", "--limit", "2",
        ])
        .succeeds()
        .json();
    assert_eq!(user_order(&limited), ["UA", "UC"]);
    let text = env
        .run(["session", "users", "--sort", "activity", "--limit", "2"])
        .succeeds()
        .stdout();
    assert_eq!(text_rows(&text), ["UC", "UB"], "{text}");
}

/// Issue 25: `session users` has a NAME column (the profile's display
/// name, else the name a group line gave), and its table fits the
/// terminal (`COLUMNS`): long names and ids end in `…`, wide CJK names
/// keep the columns aligned; `--json` holds every name whole.
#[test]
fn users_have_a_names_column_and_the_table_fits_the_terminal() {
    let env = TestEnv::new();
    let long = "Kevin Alexander Maximilian Montgomery-Smythe";
    let cjk = "李小龍李小龍李小龍李小龍";
    env.ask(["--user", "U1", "--display-name", long, "--", "hi"])
        .succeeds();
    env.ask(["--user", "U2", "--display-name", cjk, "--", "hi"])
        .succeeds();
    env.run(["append", "--user", "U3", "--conversation", "G1"])
        .args(["--display-name", "Carol", "--", "hello group"])
        .succeeds();
    env.run(["append", "--user", "U4", "--", "no name"])
        .succeeds();

    let wide = env.run(["session", "users"]).succeeds().stdout();
    let header = wide.lines().next().unwrap();
    assert!(header.starts_with("USER  NAME"), "{wide}");
    for name in [long, cjk, "Carol"] {
        assert!(wide.contains(name), "{name} in\n{wide}");
    }

    let narrow = env
        .run(["session", "users"])
        .env("COLUMNS", "100")
        .succeeds()
        .stdout();
    let columns = |line: &str| unicode_width(line);
    for line in narrow.lines() {
        assert!(
            columns(line) <= 100,
            "{} columns: {line}\n{narrow}",
            columns(line)
        );
    }
    assert!(narrow.contains('…'), "{narrow}");
    // Every row's MESSAGES cell starts at the header's column.
    let at = |line: &str, what: &str| columns(&line[..line.find(what).unwrap()]);
    let header = narrow.lines().next().unwrap();
    let messages_at = at(header, "MESSAGES");
    for line in narrow.lines().skip(1) {
        let name_end = line.find("  ").unwrap();
        let rest = line[name_end..].trim_start();
        let rest = &rest[rest.find("  ").unwrap()..].trim_start();
        assert_eq!(
            columns(&line[..line.len() - rest.len()]),
            messages_at,
            "aligned:\n{narrow}"
        );
    }

    let json = env
        .run(["--json", "session", "users"])
        .env("COLUMNS", "40")
        .succeeds()
        .json();
    let names: Vec<Value> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["displayName"].clone())
        .collect();
    assert!(names.contains(&json!(long)), "{json}");
    assert!(names.contains(&json!(cjk)), "{json}");
    assert!(names.contains(&json!("Carol")), "{json}");
    assert!(names.contains(&Value::Null), "U4 has no name: {json}");
}

fn unicode_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

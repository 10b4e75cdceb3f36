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

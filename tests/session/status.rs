//! `session status`: channel-wide counts and storage per area, one
//! user's messages, compactions and spend.

use super::*;

#[test]
fn status_channel_wide_counts_users_messages_ltm_and_storage_per_area() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    env.import("U1", &eight_lines("u1"));
    compact_force(&env, "U1"); // 3 stay in STM, 5 archived, a summary
    env.import("U2", &eight_lines("u2")[..2]);
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nLikes tea.\n");
    env.set_profile("U3", "---\ndisplay_name: Three\n---\n\nProfile only.\n");
    set_topic(&env, "tea", "Oolong.\n", Some("drinks"));
    write_file(
        &env.sessions_dir().join("summaries/U2/daily/2026-03-20.md"),
        b"---\nuser_id: U2\n---\n\nA day.\n",
    );

    let v = env.run(["--json", "session", "status"]).succeeds().json();
    assert_eq!(v["users"], json!(3), "U1, U2 and U3 (profile only): {v}");
    assert_eq!(v["stmMessages"], json!(5), "3 of U1 + 2 of U2: {v}");
    assert_eq!(v["ltm"]["profiles"], json!(2), "{v}");
    assert_eq!(v["ltm"]["topics"], json!(1), "{v}");
    let sessions = env.sessions_dir();
    let expected: BTreeMap<&str, u64> = ["stm", "ltm", "summaries", "archive"]
        .into_iter()
        .map(|area| {
            (
                area,
                files(&sessions.join(area))
                    .values()
                    .map(|b| b.len() as u64)
                    .sum::<u64>(),
            )
        })
        .collect();
    for (area, bytes) in &expected {
        assert!(*bytes > 0, "the fixture has something in {area}");
        assert_eq!(
            v["storageBytes"][*area],
            json!(*bytes),
            "storageBytes.{area}: {v}"
        );
    }

    let text = env.run(["session", "status"]).succeeds().stdout();
    assert_eq!(row(&text, "users"), "3", "{text}");
    assert!(
        row(&text, "messages").starts_with("5 "),
        "messages row: {text}"
    );
    assert!(
        row(&text, "LTM entries").contains("2 profile(s), 1 topic(s)"),
        "{text}"
    );
    assert_eq!(
        row(&text, "storage"),
        format!(
            "stm {}, ltm {}, summaries {}, archive {}",
            human(expected["stm"]),
            human(expected["ltm"]),
            human(expected["summaries"]),
            human(expected["archive"])
        ),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour off a TTY: {text:?}");
}

/// `ask` with the fake claude replying at the given cost; require success.
fn ask_costing(env: &TestEnv, user: &str, text: &str, cost: &str) {
    env.ask(["--user", user])
        .env("FAKE_CLAUDE_COST", cost)
        .args(["--", text])
        .succeeds();
}

/// The dollars spent in total: `costUsd` (as the brief names it) or
/// `totalUsd`.
fn spend_total(v: &Value) -> f64 {
    let spend = &v["spend"];
    spend
        .get("costUsd")
        .or_else(|| spend.get("totalUsd"))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no spend.costUsd in {v}"))
}

#[test]
fn status_of_one_user_counts_compacted_messages_and_spend_including_the_archive() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let old: Vec<String> = (0..4)
        .map(|i| line(&format!("2026-03-20T09:0{i}:00Z"), "user", "old"))
        .collect();
    env.import("U1", &old);
    // Three replies today, at known prices (12 input, 7 output tokens each).
    ask_costing(&env, "U1", "first", "0.25");
    ask_costing(&env, "U1", "second", "0.5");
    ask_costing(&env, "U1", "third", "0.125");
    let costs: Vec<f64> = env
        .messages("U1")
        .iter()
        .filter_map(|m| m["costUsd"].as_f64())
        .collect();
    assert_eq!(
        costs,
        [0.25, 0.5, 0.125],
        "assistant lines carry their cost"
    );
    let last_ts = env.messages("U1").last().unwrap()["ts"].clone();

    let check = |v: &Value, stm: u64, compacted: u64, has_summary: bool| {
        assert_eq!(v["user"], json!("U1"), "{v}");
        assert_eq!(v["stmMessages"], json!(stm), "{v}");
        assert_eq!(v["compacted"], json!(compacted), "{v}");
        assert_eq!(v["hasSummary"], json!(has_summary), "{v}");
        assert_eq!(v["hasProfile"], json!(false), "{v}");
        assert_eq!(v["lastActivity"], last_ts, "{v}");
        // The compaction's own call is maintenance, not the user's spend.
        for (key, got) in [
            ("costUsd", spend_total(v)),
            (
                "todayUsd",
                v["spend"]["todayUsd"].as_f64().unwrap_or(f64::NAN),
            ),
            (
                "monthUsd",
                v["spend"]["monthUsd"].as_f64().unwrap_or(f64::NAN),
            ),
        ] {
            assert!(
                (got - 0.875).abs() < 1e-9,
                "spend.{key} = {got}, want 0.875: {v}"
            );
        }
        assert_eq!(v["spend"]["inputTokens"], json!(36), "{v}");
        assert_eq!(v["spend"]["outputTokens"], json!(21), "{v}");
    };
    check(
        &env.run(["--json", "session", "status", "--user", "U1"])
            .succeeds()
            .json(),
        10,
        0,
        false,
    );

    // 10 lines, window 3: the first reply (0.25) goes to the archive.
    compact_force(&env, "U1");
    assert_eq!(env.read_lines("U1").len(), 3, "compaction kept the window");
    let archived = env.archived_lines("U1");
    assert_eq!(archived.len(), 7);
    assert!(
        archived.iter().any(|l| l.contains("\"costUsd\":0.25")),
        "{archived:?}"
    );
    let v = env
        .run(["--json", "session", "status", "--user", "U1"])
        .succeeds()
        .json();
    check(&v, 3, 7, true);
    assert!(v["bytes"].as_u64().unwrap() > 0, "{v}");

    let text = env
        .run(["session", "status", "--user", "U1"])
        .succeeds()
        .stdout();
    assert_eq!(row(&text, "user"), "U1", "{text}");
    assert_eq!(
        row(&text, "messages"),
        "3 in short-term memory, 7 compacted",
        "{text}"
    );
    assert_eq!(row(&text, "summary"), "yes", "{text}");
    assert_eq!(row(&text, "profile"), "no", "{text}");
    let last = chrono::DateTime::parse_from_rfc3339(last_ts.as_str().unwrap()).unwrap();
    assert!(
        row(&text, "last activity").starts_with(&last.format("%Y-%m-%d %H:%M").to_string()),
        "{text}"
    );
    let spend = row(&text, "spend");
    assert!(
        spend.contains("$0.8750 today")
            && spend.contains("$0.8750 this month")
            && spend.contains("$0.8750 in total")
            && spend.contains("36 input and 21 output tokens"),
        "{text}"
    );
}

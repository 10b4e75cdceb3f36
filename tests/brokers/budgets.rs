//! Spending budgets: per user and channel, daily and monthly, for
//! maintenance, and no way round them by redelivery.

use super::*;

const COST: (&str, &str) = ("FAKE_CLAUDE_COST", "0.01");

fn approx(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-9)
}

#[test]
fn daily_budget_of_a_user_stops_their_asks_at_the_cap() {
    let env = TestEnv::new();
    env.write_config(r#"{"budget": {"dailyUsd": 0.02}}"#);
    for text in ["first", "second"] {
        let out = env
            .ask(["--user", "U1", "--msg-id", text])
            .envs(&[COST])
            .args(["--", text])
            .succeeds();
        assert_eq!(out.stdout(), format!("fake reply to: {text}\n"));
    }
    assert_eq!(env.claude_calls(), 2);

    // 0.02 spent, cap 0.02: spent == cap is used up.
    let third = env
        .ask(["--user", "U1"])
        .envs(&[COST])
        .args(["--", "third"])
        .fails(Exit::OverBudget);
    assert_eq!(third.stdout(), format!("{DEFAULT_BUDGET_MESSAGE}\n"));
    assert!(
        third.stderr().contains("budget.dailyUsd"),
        "{}",
        third.stderr()
    );
    assert_eq!(env.claude_calls(), 2, "no call over budget");
    let messages = env.messages("U1");
    assert_eq!(messages.len(), 5, "{messages:?}");
    assert_eq!(messages[4]["role"], "user");
    assert_eq!(messages[4]["text"], "third");

    // A redelivery of an answered message still gets its reply, for free.
    env.ask(["--user", "U1", "--msg-id", "second"])
        .envs(&[COST])
        .args(["--", "second"])
        .succeeds()
        .stdout_is("fake reply to: second\n");
    assert_eq!(env.claude_calls(), 2);
    assert_eq!(env.messages("U1").len(), 5);

    // Another user is not held back by U1's spend.
    env.ask(["--user", "U2"])
        .envs(&[COST])
        .args(["--", "hi from U2"])
        .succeeds();
    assert_eq!(env.claude_calls(), 3);

    // A custom message, in text and in JSON.
    env.write_config(
        r#"{"budget": {"dailyUsd": 0.02, "message": "Out of credit, back tomorrow."}}"#,
    );
    env.ask(["--user", "U1"])
        .envs(&[COST])
        .args(["--", "fourth"])
        .fails(Exit::OverBudget)
        .stdout_is("Out of credit, back tomorrow.\n");
    let json = env
        .ask(["--user", "U1", "--output-format", "json"])
        .envs(&[COST])
        .args(["--", "fifth"])
        .fails(Exit::OverBudget);
    assert_eq!(json.json()["reply"], "Out of credit, back tomorrow.");
    assert_eq!(env.claude_calls(), 3);

    // Spend as status and users report it.
    let status = env
        .run(["--json", "session", "status", "--user", "U1"])
        .succeeds();
    let spend = status.json()["spend"].clone();
    for key in ["todayUsd", "monthUsd", "totalUsd"] {
        assert!(approx(&spend[key], 0.02), "{key}: {spend}");
    }
    let users = env.run(["--json", "session", "users"]).succeeds().json();
    let rows = users.as_array().expect("users --json is an array");
    let spend_of = |user: &str| {
        rows.iter()
            .find(|r| r["user"] == user)
            .unwrap_or_else(|| panic!("{user} in {users}"))["spend"]
            .clone()
    };
    assert!(approx(&spend_of("U1")["todayUsd"], 0.02), "{users}");
    assert!(approx(&spend_of("U1")["totalUsd"], 0.02), "{users}");
    assert!(approx(&spend_of("U2")["todayUsd"], 0.01), "{users}");
    assert!(approx(&spend_of("U2")["monthUsd"], 0.01), "{users}");
}

#[test]
fn channel_daily_budget_stops_every_user() {
    let env = TestEnv::new();
    env.write_config(r#"{"budget": {"channelDailyUsd": 0.03}}"#);
    for user in ["U1", "U2", "U3"] {
        env.ask(["--user", user])
            .envs(&[COST])
            .args(["--", "hello"])
            .succeeds();
    }
    assert_eq!(env.claude_calls(), 3);
    for user in ["U4", "U1"] {
        let out = env
            .ask(["--user", user])
            .envs(&[COST])
            .args(["--", "one more"])
            .fails(Exit::OverBudget);
        assert_eq!(out.stdout(), format!("{DEFAULT_BUDGET_MESSAGE}\n"));
        assert!(
            out.stderr().contains("budget.channelDailyUsd"),
            "{}",
            out.stderr()
        );
    }
    assert_eq!(env.claude_calls(), 3);
    assert_eq!(env.messages("U4").len(), 1, "the message is logged");
}

#[test]
fn monthly_budgets_count_this_month_only() {
    let env = TestEnv::new();
    // An old month's spend counts in the total, never against this month.
    write_file(
        &env.sessions_dir()
            .join("costs")
            .join("users")
            .join("U1.jsonl"),
        br#"{"ts":"2020-01-15T10:00:00.000Z","costUsd":5.0}
"#,
    );
    env.write_config(r#"{"budget": {"monthlyUsd": 0.02}}"#);
    for text in ["one", "two"] {
        env.ask(["--user", "U1"])
            .envs(&[COST])
            .args(["--", text])
            .succeeds();
    }
    env.ask(["--user", "U1"])
        .envs(&[COST])
        .args(["--", "three"])
        .fails(Exit::OverBudget)
        .stderr_has("budget.monthlyUsd");
    assert_eq!(env.claude_calls(), 2);
    env.ask(["--user", "U2"])
        .envs(&[COST])
        .args(["--", "hello"])
        .succeeds();

    let status = env
        .run(["--json", "session", "status", "--user", "U1"])
        .succeeds();
    let spend = status.json()["spend"].clone();
    assert!(approx(&spend["monthUsd"], 0.02), "{spend}");
    assert!(approx(&spend["todayUsd"], 0.02), "{spend}");
    assert!(approx(&spend["totalUsd"], 5.02), "{spend}");

    // The channel's monthly cap: 0.03 spent by U1 and U2 together.
    env.write_config(r#"{"budget": {"channelMonthlyUsd": 0.03}}"#);
    env.ask(["--user", "U3"])
        .envs(&[COST])
        .args(["--", "hello"])
        .fails(Exit::OverBudget)
        .stderr_has("budget.channelMonthlyUsd");
    assert_eq!(env.claude_calls(), 3);
}

/// Append `n` user messages to `user`'s log with `append` (no claude).
fn append_n(env: &TestEnv, user: &str, n: usize, label: &str) {
    for i in 0..n {
        env.run(["append", "--user", user, "--"])
            .arg(format!("{label} {i}"))
            .succeeds();
    }
}

#[test]
fn maintenance_budget_stops_compaction_calls_but_not_asks() {
    let env = TestEnv::new();
    env.write_config(
        r#"{"stm": {"contextWindow": 2}, "compacting": {"threshold": 3},
            "budget": {"maintenanceDailyUsd": 0.01}}"#,
    );
    append_n(&env, "U1", 5, "before");
    env.run(["compact", "--user", "U1", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_COST", "0.01")
        .env("FAKE_CLAUDE_REPLY", "A summary.")
        .succeeds();
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.messages("U1").len(), 2);

    append_n(&env, "U1", 4, "after");
    let log_before = env.read_bytes("U1");
    env.run(["compact", "--user", "U1", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_COST", "0.01")
        .fails(Exit::OverBudget)
        .stderr_has("budget.maintenanceDailyUsd");
    assert_eq!(env.claude_calls(), 1, "no call at the cap");
    assert_eq!(env.read_bytes("U1"), log_before);

    append_n(&env, "U2", 5, "u2");
    let maintain = env
        .run(["--json", "maintain", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_COST", "0.01")
        .succeeds();
    let report = maintain.json();
    assert_eq!(report["llmCalls"], 0, "{report}");
    assert!(
        report["leftForNextRun"].as_u64().unwrap_or(0) >= 2,
        "{report}"
    );
    let compact = report["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["task"] == "compact"))
        .unwrap_or_else(|| panic!("a compact task in {report}"));
    assert_eq!(compact["leftForNextRun"], 2, "U1 and U2 wait: {report}");
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_bytes("U1"), log_before);
    assert_eq!(env.messages("U2").len(), 5);

    // The maintenance cap is not an ask cap: U1 is still answered, and the
    // compaction the ask would start afterwards makes no call.
    env.ask(["--user", "U1"])
        .envs(&[COST])
        .args(["--", "still there?"])
        .succeeds()
        .stdout_is("fake reply to: still there?\n");
    assert_eq!(env.claude_calls(), 2, "the ask's call only");
    // Compaction spend is maintenance spend, not the sender's.
    let status = env
        .run(["--json", "session", "status", "--user", "U1"])
        .succeeds();
    let spend = status.json()["spend"].clone();
    assert!(approx(&spend["todayUsd"], 0.01), "{spend}");
}

#[test]
fn a_redelivery_of_a_failed_message_does_not_get_round_the_budget() {
    let env = TestEnv::new();
    env.write_config(r#"{"budget": {"dailyUsd": 0.02}}"#);
    env.ask(["--user", "U1", "--msg-id", "late-1"])
        .envs(&[COST, ("FAKE_CLAUDE_EXIT", "1")])
        .args(["--", "answer me later"])
        .fails(Exit::ClaudeFailed);
    for text in ["a", "b"] {
        env.ask(["--user", "U1"])
            .envs(&[COST])
            .args(["--", text])
            .succeeds();
    }
    assert_eq!(env.claude_calls(), 3);
    let log_before = env.read_bytes("U1");

    // The cap is reached; the platform now re-sends the failed message.
    let again = env
        .ask(["--user", "U1", "--msg-id", "late-1"])
        .envs(&[COST])
        .args(["--", "answer me later"])
        .output();
    assert_eq!(
        env.claude_calls(),
        3,
        "no claude call once budget.dailyUsd is used up, redelivery or not \
         (exit {:?}, stdout {:?})",
        again.status.code(),
        stdout_of(&again)
    );
    let again = exited(again, Exit::OverBudget);
    assert_eq!(again.stdout(), format!("{DEFAULT_BUDGET_MESSAGE}\n"));
    assert_eq!(env.read_bytes("U1"), log_before, "nothing new is logged");
}

#[test]
fn invalid_budget_values_are_refused_naming_the_key() {
    let env = TestEnv::new();
    for (config, key) in [
        (r#"{"budget": {"dailyUsd": -1}}"#, "budget.dailyUsd"),
        (r#"{"budget": {"monthlyUsd": "ten"}}"#, "budget.monthlyUsd"),
        (
            r#"{"budget": {"channelDailyUsd": -0.5}}"#,
            "budget.channelDailyUsd",
        ),
        (
            r#"{"budget": {"channelMonthlyUsd": "5"}}"#,
            "budget.channelMonthlyUsd",
        ),
        (
            r#"{"budget": {"maintenanceDailyUsd": -2}}"#,
            "budget.maintenanceDailyUsd",
        ),
        (r#"{"budget": {"message": 42}}"#, "budget.message"),
    ] {
        env.write_config(config);
        let out = env
            .ask(["--user", "U1"])
            .envs(&[COST])
            .args(["--", "hello"])
            .fails(Exit::Usage);
        assert!(out.stderr().contains(key), "{config}: {}", out.stderr());
    }
    assert_eq!(env.claude_calls(), 0);
    assert!(env.read_lines("U1").is_empty());
}

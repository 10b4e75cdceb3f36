//! `session show`: time, role and text, with `-n`, `--since` and
//! `--archive`.

use super::*;

/// Five lines of U1 over four days, some of several lines, in a window
/// of 2.
fn five_lines(env: &TestEnv) {
    env.write_config(r#"{"stm":{"contextWindow":2},"compacting":{"threshold":50}}"#);
    env.import(
        "U1",
        &[
            line("2026-03-20T08:00:00Z", "user", "first"),
            line("2026-03-21T09:30:00Z", "assistant", "two lines\nof reply"),
            line("2026-03-22T10:00:00Z", "user", "third"),
            line("2026-03-22T10:01:00Z", "system", "fourth\n  indented\nend"),
            line("2026-03-23T11:45:00Z", "assistant", "fifth"),
        ],
    );
}

/// What `session show --user U1 ARGS` prints for [`five_lines`].
const SHOWN: [&str; 8] = [
    "2026-03-20 08:00  user       first",
    "2026-03-21 09:30  assistant  two lines",
    "                             of reply",
    "2026-03-22 10:00  user       third",
    "2026-03-22 10:01  system     fourth",
    "                               indented",
    "                             end",
    "2026-03-23 11:45  assistant  fifth",
];

/// The lines `session show --user U1 ARGS` prints.
fn shown(env: &TestEnv, args: &[&str]) -> Vec<String> {
    env.run(["session", "show", "--user", "U1"])
        .args(args)
        .succeeds()
        .stdout()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The texts `--json session show --user U1 ARGS` lists.
fn texts(env: &TestEnv, args: &[&str]) -> Vec<String> {
    env.run(["--json", "session", "show", "--user", "U1"])
        .args(args)
        .succeeds()
        .json()
        .as_array()
        .expect("show --json is an array")
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn show_prints_time_role_and_text() {
    let env = TestEnv::new();
    five_lines(&env);
    assert_eq!(shown(&env, &[]), SHOWN);

    let all = env
        .run(["--json", "session", "show", "--user", "U1"])
        .succeeds()
        .json();
    assert_eq!(all.as_array().unwrap().len(), 5);
    assert_eq!(all[1]["role"], json!("assistant"));
    let ts = all[1]["ts"].as_str().expect("ts");
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(ts).map(|t| t.to_utc()),
        chrono::DateTime::parse_from_rfc3339("2026-03-21T09:30:00Z").map(|t| t.to_utc()),
        "{ts}"
    );
}

#[test]
fn show_n_shows_the_last_n_messages() {
    let env = TestEnv::new();
    five_lines(&env);
    assert_eq!(
        texts(&env, &["-n", "2"]),
        ["fourth\n  indented\nend", "fifth"]
    );
    assert_eq!(shown(&env, &["-n", "2"]), SHOWN[4..]);
}

#[test]
fn show_since_starts_at_a_day_and_goes_with_n() {
    let env = TestEnv::new();
    five_lines(&env);
    assert_eq!(
        texts(&env, &["--since", "2026-03-22"]),
        ["third", "fourth\n  indented\nend", "fifth"]
    );
    assert_eq!(shown(&env, &["--since", "2026-03-22"]), SHOWN[3..]);
    assert_eq!(
        texts(&env, &["--since", "2026-03-22", "-n", "1"]),
        ["fifth"]
    );
    env.run(["session", "show", "--user", "U1", "--since", "last week"])
        .fails(Exit::Usage);
}

#[test]
fn show_archive_adds_the_compacted_lines_oldest_first_and_marks_their_origin() {
    let env = TestEnv::new();
    five_lines(&env);
    // After a compaction only 2 stay in STM; --archive shows all, oldest first.
    compact_force(&env, "U1");
    assert_eq!(texts(&env, &[]), ["fourth\n  indented\nend", "fifth"]);
    assert_eq!(
        texts(&env, &["--archive"]),
        [
            "first",
            "two lines\nof reply",
            "third",
            "fourth\n  indented\nend",
            "fifth"
        ]
    );
    // --archive marks where each line comes from.
    assert_eq!(
        shown(&env, &["--archive"]),
        [
            "2026-03-20 08:00  archive  user       first",
            "2026-03-21 09:30  archive  assistant  two lines",
            "                                      of reply",
            "2026-03-22 10:00  archive  user       third",
            "2026-03-22 10:01  stm      system     fourth",
            "                                        indented",
            "                                      end",
            "2026-03-23 11:45  stm      assistant  fifth",
        ]
    );
    assert_eq!(
        texts(&env, &["--archive", "--since", "2026-03-21"]),
        [
            "two lines\nof reply",
            "third",
            "fourth\n  indented\nend",
            "fifth"
        ]
    );
}

#[test]
fn show_archive_json_says_archived_once_even_when_a_stored_line_has_that_key() {
    let env = TestEnv::new();
    env.write_messages_raw(
        "U1",
        b"{\"ts\":\"2026-03-20T08:00:00.000Z\",\"role\":\"user\",\"text\":\"hi\",\"archived\":\"yes\",\"mood\":1}\n",
    );
    let out = env
        .run(["--json", "session", "show", "--user", "U1", "--archive"])
        .succeeds()
        .stdout();
    assert_eq!(out.matches("\"archived\"").count(), 1, "{out}");
    let shown = &serde_json::from_str::<Value>(&out).unwrap()[0];
    assert_eq!(shown["archived"], json!(false), "{out}");
    assert_eq!(shown["mood"], json!(1), "other keys stay: {out}");
}

//! `session export` as a folder, JSON or tar.gz, that imports back into
//! the same messages and never overwrites; in-chat exports.

use super::*;
use crate::common::Run;

/// U1 with archive + STM + summary + profile + daily and weekly summaries,
/// and U2 beside it. Returns U1's lines.
fn export_fixture(env: &TestEnv) -> Vec<String> {
    env.write_config(CONFIG);
    let lines = eight_lines("u1");
    env.import("U1", &lines);
    compact_force(env, "U1");
    env.set_profile("U1", "---\ndisplay_name: One\n---\n\nLikes tea.\n");
    write_file(
        &env.sessions_dir().join("summaries/U1/daily/2026-03-20.md"),
        b"---\nuser_id: U1\ndate: 2026-03-20\n---\n\nA day of tea.\n",
    );
    write_file(
        &env.sessions_dir().join("summaries/U1/weekly/2026-W12.md"),
        b"---\nuser_id: U1\nweek: 2026-W12\n---\n\nA week of tea.\n",
    );
    env.import("U2", &eight_lines("u2")[..3]);
    env.set_profile("U2", "---\ndisplay_name: Two\n---\n\nLikes coffee.\n");
    // A topic note each: U1's is theirs to take along, U2's is not.
    set_topic(
        env,
        "tea",
        "---\ntitle: Tea\nowner: U1\n---\n\nOolong.\n",
        None,
    );
    set_topic(
        env,
        "coffee",
        "---\ntitle: Coffee\nowner: U2\n---\n\nFlat white.\n",
        None,
    );
    lines
}

/// The files of U1 under sessions/, by path relative to sessions/.
fn u1_files(env: &TestEnv) -> BTreeMap<String, Vec<u8>> {
    files(&env.sessions_dir())
        .into_iter()
        .filter(|(path, _)| {
            path.starts_with("stm/U1/")
                || path == "ltm/users/U1.md"
                || path.starts_with("summaries/U1/")
                || path.starts_with("archive/U1/")
                || path == "ltm/topics/tea.md"
        })
        .collect()
}

/// `session export --user U1 --out OUT [--format FORMAT]`, after
/// `--json` if `json`.
fn export_u1(env: &TestEnv, out: &Path, format: Option<&str>, json: bool) -> Run {
    let json = json.then_some("--json");
    let format = format.map(|f| ["--format", f]);
    env.run(
        json.into_iter()
            .chain(["session", "export", "--user", "U1", "--out", s(out)])
            .chain(format.into_iter().flatten()),
    )
}

#[test]
fn export_as_a_dir_mirrors_the_sessions_layout_and_never_overwrites() {
    let env = TestEnv::new();
    export_fixture(&env);
    let out_dir = env.dir.path().join("export-dir");
    let text = export_u1(&env, &out_dir, Some("dir"), false)
        .succeeds()
        .stdout();
    let expected = u1_files(&env);
    for key in [
        "stm/U1/messages.jsonl",
        "stm/U1/summary.md",
        "ltm/users/U1.md",
        "summaries/U1/daily/2026-03-20.md",
        "summaries/U1/weekly/2026-W12.md",
        "ltm/topics/tea.md",
    ] {
        assert!(expected.contains_key(key), "the fixture has {key}");
    }
    assert!(
        expected
            .keys()
            .any(|k| k.starts_with("archive/U1/messages-"))
    );
    let got = files(&out_dir);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the export holds exactly U1's files, at their sessions/ paths"
    );
    assert!(got == expected, "byte for byte");
    assert!(
        text.contains(&format!("({} file(s))", expected.len())),
        "{text}"
    );

    // Again into the same (now non-empty) folder: refused, untouched.
    export_u1(&env, &out_dir, Some("dir"), false).fails(Exit::Usage);
    assert!(files(&out_dir) == expected);

    // The default format is dir; --json reports it.
    let second = env.dir.path().join("export-dir-2");
    let v = export_u1(&env, &second, None, true).succeeds().json();
    assert_eq!(v["user"], json!("U1"));
    assert_eq!(v["files"], json!(expected.len()));
    assert!(files(&second) == expected);
}

#[test]
fn export_as_json_holds_everything_in_order_and_never_overwrites() {
    let env = TestEnv::new();
    let lines = export_fixture(&env);
    let out = env.dir.path().join("u1.json");
    let v = export_u1(&env, &out, Some("json"), true).succeeds().json();
    assert_eq!(v["user"], json!("U1"), "{v}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["user"], json!("U1"));
    assert_eq!(doc["profile"]["frontmatter"]["user_id"], json!("U1"));
    assert_eq!(
        doc["profile"]["body"].as_str().unwrap().trim(),
        "Likes tea."
    );
    assert_eq!(doc["summary"]["body"].as_str().unwrap().trim(), SUMMARY);
    assert_eq!(
        doc["summary"]["frontmatter"]["messages_compacted"],
        json!(5)
    );
    assert_eq!(
        doc["summaries"]["daily"]["2026-03-20"]["body"]
            .as_str()
            .unwrap()
            .trim(),
        "A day of tea."
    );
    assert_eq!(
        doc["summaries"]["weekly"]["2026-W12"]["body"]
            .as_str()
            .unwrap()
            .trim(),
        "A week of tea."
    );
    assert_eq!(
        doc["messages"],
        Value::Array(parsed(&lines)),
        "archived messages, then STM, unknown fields kept"
    );
    assert!(!doc.to_string().contains("u2 message"), "only U1's data");

    // An existing file is never overwritten.
    let existing = env.dir.path().join("keep.json");
    write_file(&existing, b"keep me\n");
    for format in ["json", "dir", "tar.gz"] {
        export_u1(&env, &existing, Some(format), false).fails(Exit::Usage);
        assert_eq!(std::fs::read(&existing).unwrap(), b"keep me\n");
    }
    let text = export_u1(&env, &env.dir.path().join("b.json"), Some("json"), false)
        .succeeds()
        .stdout();
    assert!(text.contains("exported U1"), "{text}");
}

#[test]
fn export_as_tar_gz_holds_the_dir_export() {
    let env = TestEnv::new();
    export_fixture(&env);
    let out = env.dir.path().join("u1.tar.gz");
    export_u1(&env, &out, Some("tar.gz"), false).succeeds();
    let listing = std::process::Command::new("tar")
        .arg("tzf")
        .arg(&out)
        .output()
        .unwrap();
    assert!(listing.status.success(), "tar tzf: {}", stderr_of(&listing));
    let names: BTreeSet<String> = stdout_of(&listing)
        .lines()
        .map(|l| l.trim_end_matches('/').to_owned())
        .collect();
    let expected = u1_files(&env);
    for path in expected.keys() {
        assert!(
            names.contains(&format!("U1/{path}")),
            "U1/{path} in the tar listing: {names:?}"
        );
    }
    assert!(!names.iter().any(|n| n.contains("U2")), "{names:?}");

    let unpacked = env.dir.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&out)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(files(&unpacked.join("U1")) == expected, "the same bytes");

    export_u1(&env, &out, Some("tar.gz"), false).fails(Exit::Usage);
}

#[test]
fn an_exported_json_imports_back_into_the_same_messages() {
    let env = TestEnv::new();
    env.write_config(CONFIG);
    let first = eight_lines("u1");
    env.import("U1", &first);
    compact_force(&env, "U1");
    let more: Vec<String> = eight_lines("late")
        .into_iter()
        .map(|l| l.replace("2026-03-", "2026-04-"))
        .collect();
    env.import("U1", &more[..2]);
    assert_eq!(env.archived_lines("U1").len(), 5);
    assert_eq!(env.read_lines("U1").len(), 5);

    let out = env.dir.path().join("u1.json");
    export_u1(&env, &out, Some("json"), false).succeeds();
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let messages = doc["messages"].as_array().expect("messages").clone();
    let mut all = first.clone();
    all.extend_from_slice(&more[..2]);
    assert_eq!(messages, parsed(&all));

    let fresh = TestEnv::new();
    let jsonl: Vec<String> = messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    fresh.import("U1", &jsonl);
    assert_eq!(
        fresh.messages("U1"),
        messages,
        "the same messages, same order, unknown fields kept"
    );
    assert_eq!(fresh.messages("U1").len(), 10);
    assert_eq!(
        fresh.messages("U1")[2]["mood"],
        json!({"x": [1, 2], "y": null})
    );
}

#[test]
fn chat_exports_are_rate_limited_pruned_by_maintain_and_show_no_server_path() {
    let env = TestEnv::new();
    env.write_config(r#"{"limits":{"chatExportsPerDay":2,"chatExportRetentionDays":7}}"#);
    env.import("U1", &[line("2026-03-01T10:00:00Z", "user", "hello")]);
    let first = chat(&env, "U1", "/session export");
    let path = exported_file(&env, "U1", &first);
    chat(&env, "U1", "/session export");
    let third = chat(&env, "U1", "/session export");
    assert!(
        third.contains("limit") || third.contains("again"),
        "{third}"
    );
    assert!(!third.contains("export-"), "no third export: {third}");
    let exports = env.sessions_dir().join("exports/U1");
    assert_eq!(std::fs::read_dir(&exports).unwrap().count(), 2);
    // Eight days on, maintain removes them.
    let later = (chrono::Utc::now() + chrono::Duration::days(8))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    env.run(["maintain", "--only", "prune", "--now", &later])
        .succeeds();
    assert!(!path.exists(), "an export past its retention is pruned");
    assert_eq!(
        std::fs::read_dir(&exports).map(|d| d.count()).unwrap_or(0),
        0
    );
}

#[test]
fn export_to_a_bare_file_name_works_and_dash_means_stdout() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[line("2026-03-01T10:00:00Z", "user", "hello export")],
    );
    env.run([
        "session", "export", "--user", "U1", "--format", "json", "--out", "u.json",
    ])
    .succeeds();
    let written = env.dir.path().join("u.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&written).unwrap()).unwrap();
    assert_eq!(doc["user"], "U1");
    let out = env
        .run([
            "session", "export", "--user", "U1", "--format", "json", "--out", "-",
        ])
        .succeeds();
    let doc: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(doc["messages"][0]["text"], "hello export");
    assert!(!env.dir.path().join("-").exists(), "no file named -");
}

/// Issue 25: without `--format`, `--out` says it by its extension; `u.json`
/// used to be made a folder named `u.json`.
#[test]
fn export_without_a_format_takes_it_from_the_out_path() {
    let env = TestEnv::new();
    env.import(
        "U1",
        &[line("2026-03-01T10:00:00Z", "user", "hello export")],
    );
    env.run(["session", "export", "--user", "U1", "--out", "u.json"])
        .succeeds();
    let json = env.dir.path().join("u.json");
    assert!(json.is_file(), "u.json is not a file");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["messages"][0]["text"], "hello export");

    for name in ["u.tar.gz", "u.TGZ"] {
        env.run(["session", "export", "--user", "U1", "--out", name])
            .succeeds();
        let packed = std::fs::read(env.dir.path().join(name)).unwrap();
        assert_eq!(&packed[..2], &[0x1f, 0x8b], "{name} is not gzip");
    }
    env.run(["session", "export", "--user", "U1", "--out", "u-dir"])
        .succeeds();
    assert!(env.dir.path().join("u-dir/stm/U1/messages.jsonl").is_file());
    // `-` alone: the JSON document on stdout.
    let out = env
        .run(["session", "export", "--user", "U1", "--out", "-"])
        .succeeds();
    let doc: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(doc["user"], "U1");
    // An explicit --format still wins.
    env.run(["session", "export", "--user", "U1", "--out", "v.json"])
        .args(["--format", "dir"])
        .succeeds();
    assert!(env.dir.path().join("v.json").is_dir());
}

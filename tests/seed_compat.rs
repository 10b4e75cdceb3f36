//! Compatibility with the seed's TypeScript library, both ways (issue 17).
//!
//! `tests/fixtures/seed-state/` was written by the seed library itself (see
//! `tests/fixtures/seed-state.README.md`): this tool must read it as the
//! seed does. And what this tool writes is read back here by
//! [`seed::parse_frontmatter`], a line-for-line Rust copy of the seed's
//! `parseFrontmatter`, and by the seed's view of `ltm/index.json`: a format
//! change that would break the seed fails here.

use std::path::Path;

use crate::common::{Exit, TestEnv, copy_tree, fake_claude, read, write_file};
use serde_json::{Value, json};

/// The seed's `parseFrontmatter` and what it makes of values (utils.ts):
///
/// ```ts
/// const match = content.match(/^---\n([\s\S]*?)\n---\n([\s\S]*)$/)
/// for (const line of match[1].split('\n')) {
///   const m = line.match(/^(\w[\w_]*)\s*:\s*(.*)$/)
///   if (rawVal.startsWith('[') && rawVal.endsWith(']')) val = rawVal.slice(1, -1).split(',').map(s => s.trim())
///   else if (rawVal === 'true') val = true  else if (rawVal === 'false') val = false
///   else if (/^\d+$/.test(rawVal)) val = parseInt(rawVal, 10)
/// ```
mod seed {
    use std::collections::BTreeMap;

    #[derive(Debug, Clone, PartialEq)]
    pub enum Val {
        Str(String),
        List(Vec<String>),
        Bool(bool),
        /// `parseInt` of a run of digits, kept as its digits.
        Int(String),
    }

    /// JavaScript's `\s`.
    fn js_space(c: char) -> bool {
        c.is_whitespace() || c == '\u{feff}'
    }

    /// What JavaScript's `.` does not match.
    fn js_line_terminator(c: char) -> bool {
        matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
    }

    fn js_word(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_'
    }

    /// `/^(\w[\w_]*)\s*:\s*(.*)$/` on one line.
    fn line(line: &str) -> Option<(String, String)> {
        let key_end = line.find(|c: char| !js_word(c)).unwrap_or(line.len());
        if key_end == 0 {
            return None;
        }
        let rest = line[key_end..].trim_start_matches(js_space);
        let raw = rest.strip_prefix(':')?.trim_start_matches(js_space);
        if raw.chars().any(js_line_terminator) {
            return None;
        }
        Some((line[..key_end].to_owned(), raw.to_owned()))
    }

    fn value(raw: &str) -> Val {
        if raw.starts_with('[') && raw.ends_with(']') && raw.len() >= 2 {
            return Val::List(
                raw[1..raw.len() - 1]
                    .split(',')
                    .map(|s| s.trim_matches(js_space).to_owned())
                    .collect(),
            );
        }
        match raw {
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            _ if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => {
                Val::Int(raw.trim_start_matches('0').to_owned())
            }
            _ => Val::Str(raw.to_owned()),
        }
    }

    pub fn parse_frontmatter(content: &str) -> (BTreeMap<String, Val>, String) {
        let mut meta = BTreeMap::new();
        let Some(rest) = content.strip_prefix("---\n") else {
            return (meta, content.to_owned());
        };
        // `([\s\S]*?)\n---\n`: the first such line ends the frontmatter.
        let Some(end) = rest.find("\n---\n") else {
            return (meta, content.to_owned());
        };
        for l in rest[..end].split('\n') {
            if let Some((key, raw)) = line(l) {
                meta.insert(key, value(&raw));
            }
        }
        (meta, rest[end + 5..].to_owned())
    }

    /// `Array.isArray(meta.tags) ? meta.tags : []`, as the seed indexes tags.
    pub fn tags(meta: &BTreeMap<String, Val>) -> Vec<String> {
        match meta.get("tags") {
            Some(Val::List(items)) => items.clone(),
            _ => Vec::new(),
        }
    }

    pub fn text(meta: &BTreeMap<String, Val>, key: &str) -> Option<String> {
        match meta.get(key)? {
            Val::Str(s) => Some(s.clone()),
            Val::Int(digits) => Some(digits.clone()),
            Val::Bool(b) => Some(b.to_string()),
            Val::List(_) => None,
        }
    }
}

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seed-state");

/// A copy of the seed's fixture as this test's state dir.
fn seed_env() -> TestEnv {
    let env = TestEnv::new();
    copy_tree(Path::new(FIXTURE), &env.state_dir());
    env
}

// --- the reader itself ----------------------------------------------------------

#[test]
fn the_seed_reader_reads_the_seeds_own_files_as_the_seed_meant_them() {
    let profile = read(&Path::new(FIXTURE).join("sessions/ltm/users/U0123ABC.md"));
    let (meta, body) = seed::parse_frontmatter(&profile);
    assert_eq!(seed::tags(&meta), ["toeic", "student"]);
    assert_eq!(seed::text(&meta, "display_name").as_deref(), Some("Kevin"));
    assert!(body.starts_with("\n## Preferences\n- Language: English"));
    // The seed's quirks, which the reader must share to be a fair judge.
    let (meta, _) = seed::parse_frontmatter("---\nuser_id: '123'\ntags:\n- a\n---\nx");
    assert_eq!(seed::text(&meta, "user_id").as_deref(), Some("'123'"));
    assert_eq!(seed::tags(&meta), Vec::<String>::new());
    let (meta, _) = seed::parse_frontmatter("---\nname: #1 Fan\n---\n");
    assert_eq!(seed::text(&meta, "name").as_deref(), Some("#1 Fan"));
}

// --- 1: ltm/index.json ----------------------------------------------------------

/// The seed's index reads without a rebuild, and an index this tool writes
/// is one the seed's search, forget and clear can use: `type`, and a
/// `path` from `sessions/` that names the file.
#[test]
fn the_index_is_read_and_written_in_the_seed_schema() {
    let env = seed_env();
    let out = env
        .run(["session", "search", "exam", "--tag", "english"])
        .succeeds();
    assert!(
        !out.stderr().contains("rebuilding"),
        "the seed's index was not read: {}",
        out.stderr()
    );
    // A write through this tool: a topic, then reindex.
    let note = env.dir.path().join("note.md");
    write_file(&note, b"Kana practice.\n");
    env.run([
        "session",
        "topic",
        "set",
        "japanese",
        note.to_str().unwrap(),
        "--tags",
        "language,japanese",
    ])
    .succeeds();
    let index_path = env.sessions_dir().join("ltm/index.json");
    for round in ["after topic set", "after reindex"] {
        let index: Value = serde_json::from_str(&read(&index_path)).unwrap();
        let entries = index["entries"].as_array().unwrap();
        assert!(entries.len() >= 6, "{round}: {index}");
        for entry in entries {
            let kind = entry["type"]
                .as_str()
                .unwrap_or_else(|| panic!("{round}: {entry}"));
            assert!(matches!(kind, "user" | "topic"), "{round}: {entry}");
            let path = entry["path"].as_str().unwrap();
            assert!(path.starts_with("ltm/"), "{round}: {entry}");
            // searchByText: join(sessionPaths.root, e.path) must exist.
            assert!(env.sessions_dir().join(path).exists(), "{round}: {entry}");
            assert!(entry["tags"].is_array(), "{round}: {entry}");
        }
        let japanese = entries.iter().find(|e| e["id"] == "japanese").unwrap();
        assert_eq!(japanese["tags"], json!(["language", "japanese"]), "{round}");
        env.run(["session", "reindex"]).succeeds();
    }
}

// --- 2: frontmatter this tool writes --------------------------------------------

/// Profiles, summaries and topics this tool writes: every tag, id and name
/// reads to the seed's parser as this tool meant it.
#[test]
fn what_this_tool_writes_the_seed_reads_the_same() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm":{"contextWindow":2}}"#);
    let name = "Kev: the [best] @home * #1";
    for (i, text) in ["Hi, I'm Kevin", "I study for the TOEIC", "in English"]
        .iter()
        .enumerate()
    {
        env.ask(["--user", "123456789", "--msg-id", &format!("m{i}")])
            .args(["--display-name", name, "--", text])
            .succeeds();
    }
    let facts = json!({
        "summary": "Kevin studies for the TOEIC.",
        "facts": {"language": "English", "tags": ["TOEIC", "student"], "topics": ["exam in May"]}
    });
    env.run(["compact", "--user", "123456789", "--force", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_REPLY", facts.to_string())
        .succeeds();

    let profile = read(&env.profile_path("123456789"));
    let (meta, body) = seed::parse_frontmatter(&profile);
    assert_eq!(seed::tags(&meta), ["TOEIC", "student"], "{profile}");
    assert_eq!(
        seed::text(&meta, "user_id").as_deref(),
        Some("123456789"),
        "{profile}"
    );
    assert_eq!(
        seed::text(&meta, "display_name").as_deref(),
        Some(name),
        "{profile}"
    );
    assert!(body.contains("- Language: English"), "{profile}");

    let summary = read(&env.stm_dir("123456789").join("summary.md"));
    let (meta, body) = seed::parse_frontmatter(&summary);
    assert_eq!(
        seed::text(&meta, "user_id").as_deref(),
        Some("123456789"),
        "{summary}"
    );
    assert!(
        matches!(meta.get("messages_compacted"), Some(seed::Val::Int(_))),
        "{summary}"
    );
    assert!(body.contains("Kevin studies for the TOEIC."));

    // A topic with tags, written by an admin.
    let note = env.dir.path().join("note.md");
    write_file(
        &note,
        b"---\ntitle: TOEIC: listening [part 2]\n---\nPractice.\n",
    );
    env.run([
        "session",
        "topic",
        "set",
        "toeic",
        note.to_str().unwrap(),
        "--tags",
        "exam,english",
    ])
    .succeeds();
    let topic = read(&env.sessions_dir().join("ltm/topics/toeic.md"));
    let (meta, _) = seed::parse_frontmatter(&topic);
    assert_eq!(seed::tags(&meta), ["exam", "english"], "{topic}");
    assert_eq!(
        seed::text(&meta, "title").as_deref(),
        Some("TOEIC: listening [part 2]"),
        "{topic}"
    );
}

/// Issue 25: a tag holding `[`, `]`, quotes, `:` or digits no longer turns
/// the whole list into JSON (which the seed reads with every tag quoted),
/// and tags keep the case they were given (the seed's `searchByTags` is
/// case-sensitive); this tool still matches them ignoring case.
#[test]
fn tags_read_back_exactly_to_the_seed_whatever_they_hold() {
    let env = TestEnv::new();
    let note = env.dir.path().join("note.md");
    write_file(&note, b"Practice.\n");
    let given = [
        "TOEIC",
        "[draft]",
        "\"quoted\"",
        "a:b",
        "2026",
        "true",
        "x]y",
    ];
    env.run(["session", "topic", "set", "toeic", note.to_str().unwrap()])
        .arg("--tags")
        .arg(given.join(","))
        .succeeds();
    let topic = read(&env.sessions_dir().join("ltm/topics/toeic.md"));
    let (meta, _) = seed::parse_frontmatter(&topic);
    assert_eq!(seed::tags(&meta), given, "{topic}");
    let listed = env.run(["--json", "session", "topics"]).succeeds().json();
    assert_eq!(listed[0]["tags"], json!(given), "{listed}");
    // The seed's index carries them as given: its search for TOEIC finds it.
    let index: Value =
        serde_json::from_str(&read(&env.sessions_dir().join("ltm/index.json"))).unwrap();
    assert_eq!(index["entries"][0]["tags"], json!(given), "{index}");
    // Matching here ignores case.
    let found = env
        .run(["--json", "session", "search", "practice", "--tag", "toeic"])
        .succeeds()
        .stdout();
    assert!(found.contains("toeic.md"), "{found}");

    // One tag alone that looks like JSON still reads as the seed reads it.
    env.run(["session", "topic", "set", "one", note.to_str().unwrap()])
        .args(["--tags", "\"only\""])
        .succeeds();
    let one = read(&env.sessions_dir().join("ltm/topics/one.md"));
    let (meta, _) = seed::parse_frontmatter(&one);
    assert_eq!(seed::tags(&meta), ["\"only\""], "{one}");
    let listed = env.run(["--json", "session", "topics"]).succeeds().json();
    let one_listed = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["slug"] == "one");
    assert_eq!(one_listed.unwrap()["tags"], json!(["\"only\""]), "{listed}");
}

/// What the seed cannot hold in a tag (a comma: its parser splits on
/// them; white space at the ends: it trims; a line break) is written the
/// one way both tools read back the same: split at the comma, trimmed.
/// Facts from compaction and a profile an admin sets in the old JSON form
/// alike.
#[test]
fn tags_the_seed_cannot_hold_are_written_as_it_would_read_them() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm":{"contextWindow":1}}"#);
    for i in 0..2 {
        env.ask(["--user", "U1", "--msg-id", &format!("m{i}"), "--", "hello"])
            .succeeds();
    }
    let facts = json!({"summary": "Said hello.",
        "facts": {"tags": ["TOEIC", "exam, English", "  spaced  ", "two\nlines", "toeic"]}});
    env.run(["compact", "--user", "U1", "--force", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_REPLY", facts.to_string())
        .succeeds();
    let profile = read(&env.profile_path("U1"));
    let (meta, _) = seed::parse_frontmatter(&profile);
    let want = ["TOEIC", "exam", "English", "spaced", "two lines"];
    assert_eq!(seed::tags(&meta), want, "{profile}");
    let shown = env
        .run(["--json", "session", "profile", "--user", "U1"])
        .succeeds()
        .json();
    assert_eq!(shown["frontmatter"]["tags"], json!(want), "{shown}");

    // An older version's JSON list: read, then written the seed's way.
    let file = env.dir.path().join("profile.md");
    write_file(
        &file,
        b"---\nuser_id: U1\ntags: [\"a,b\",\"C\"]\n---\n\n## Preferences\n",
    );
    env.run(["session", "profile", "--user", "U1", "--set"])
        .arg(&file)
        .succeeds();
    let profile = read(&env.profile_path("U1"));
    assert!(profile.contains("\ntags: [a, b, C]\n"), "{profile}");
}

/// Issue 25: every message line names its platform (the seed's `channel`):
/// `--source`, else `--channel`'s name, else the seed's own default,
/// `unknown`, also with `--state-dir` and no `--source`.
#[test]
fn every_line_names_its_channel() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "plain"])
        .succeeds();
    env.run([
        "append", "--user", "U1", "--source", "line", "--", "sourced",
    ])
    .succeeds();
    env.ask(["--user", "U1", "--", "asked"]).succeeds();
    let channels: Vec<Value> = env
        .messages("U1")
        .iter()
        .map(|m| m["channel"].clone())
        .collect();
    assert_eq!(
        channels,
        [
            json!("unknown"),
            json!("line"),
            json!("unknown"),
            json!("unknown")
        ]
    );
    // With --channel, its name.
    let channel_dir = env.dir.path().join(".claude/channels/slack");
    std::fs::create_dir_all(&channel_dir).unwrap();
    env.run_without_state_dir(["--channel", "slack", "append", "--user", "U2", "--", "hi"])
        .succeeds();
    let line = read(&channel_dir.join("sessions/stm/U2/messages.jsonl"));
    assert!(line.contains(r#""channel":"slack""#), "{line}");
    // An empty --source is refused, not written.
    env.run(["append", "--user", "U1", "--source", "", "--", "x"])
        .fails(Exit::Usage)
        .stderr_has("platform's name");
}

/// Issue 25: an empty display name (a platform that gives none) is left
/// out, never written as `display_name: ""` or `"userName":""`.
#[test]
fn an_empty_display_name_is_left_out() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--display-name", "", "--", "hi"])
        .succeeds();
    env.ask([
        "--user",
        "U1",
        "--display-name",
        " ",
        "--conversation",
        "G1",
    ])
    .args(["--", "hi all"])
    .succeeds();
    let group = env.messages("#G1");
    assert!(group[0].get("userName").is_none(), "{group:?}");
    assert_eq!(group[0]["userId"], "U1");
    if env.profile_path("U1").exists() {
        let profile = read(&env.profile_path("U1"));
        assert!(!profile.contains("display_name: \"\""), "{profile}");
    }
    // A profile made from facts with an empty name: the seed's default
    // (the user id), no empty `- Name:` bullet.
    env.write_config(r#"{"stm":{"contextWindow":1}}"#);
    let facts = json!({"summary": "Said hi.", "facts": {"name": "", "language": "English"}});
    env.run(["compact", "--user", "U1", "--force", "--claude-bin"])
        .arg(fake_claude())
        .env("FAKE_CLAUDE_REPLY", facts.to_string())
        .succeeds();
    let profile = read(&env.profile_path("U1"));
    let (meta, body) = seed::parse_frontmatter(&profile);
    assert_eq!(
        seed::text(&meta, "display_name").as_deref(),
        Some("U1"),
        "{profile}"
    );
    assert_eq!(
        seed::text(&meta, "channel").as_deref(),
        Some("unknown"),
        "{profile}"
    );
    assert!(!body.contains("- Name:"), "{profile}");
    assert!(body.contains("- Language: English"), "{profile}");
}

/// Daily and weekly summaries from `maintain`: the seed's keys, readable.
#[test]
fn summaries_from_maintain_read_the_same_to_the_seed() {
    let env = seed_env();
    env.run([
        "maintain",
        "--only",
        "daily",
        "--now",
        "2026-03-22T12:00:00Z",
        "--claude-bin",
        fake_claude().to_str().unwrap(),
    ])
    .succeeds();
    let daily = env
        .sessions_dir()
        .join("summaries/U0000FAN/daily/2026-03-21.md");
    let text = read(&daily);
    let (meta, body) = seed::parse_frontmatter(&text);
    assert_eq!(
        seed::text(&meta, "user_id").as_deref(),
        Some("U0000FAN"),
        "{text}"
    );
    assert_eq!(
        seed::text(&meta, "date").as_deref(),
        Some("2026-03-21"),
        "{text}"
    );
    assert_eq!(
        meta.get("message_count"),
        Some(&seed::Val::Int("2".into())),
        "{text}"
    );
    assert!(!body.trim().is_empty());
}

// --- 3: seed files this tool used to misread ------------------------------------

/// `display_name: #1 Fan` and `Kev: the [best] @home *` are what the seed
/// meant; facts merge into such a profile and the name is kept.
#[test]
fn seed_profiles_yaml_would_misread_are_read_as_the_seed_reads_them() {
    let env = seed_env();
    // Each has two messages: a window of one leaves one to compact.
    env.write_config(r#"{"stm":{"contextWindow":1}}"#);
    for (user, name) in [
        ("U0000FAN", "#1 Fan"),
        ("U0000ODD", "Kev: the [best] @home *"),
    ] {
        let out = env.run(["--json", "context", "--user", user]).succeeds();
        let context = out.json();
        let profile = context["profile"].as_str().unwrap();
        assert!(
            !profile.contains("display_name"),
            "frontmatter injected: {profile}"
        );
        assert!(profile.contains("## Preferences"), "{profile}");
        assert!(out.stderr().is_empty(), "{}", out.stderr());

        let facts =
            json!({"summary": "They said hello.", "facts": {"name": "Sam", "tags": ["vip"]}});
        env.run(["compact", "--user", user, "--force", "--claude-bin"])
            .arg(fake_claude())
            .env("FAKE_CLAUDE_REPLY", facts.to_string())
            .succeeds();
        let text = read(&env.profile_path(user));
        let (meta, body) = seed::parse_frontmatter(&text);
        assert_eq!(
            seed::text(&meta, "display_name").as_deref(),
            Some(name),
            "{text}"
        );
        assert_eq!(seed::tags(&meta), ["vip"], "{text}");
        assert!(body.contains("- Name: Sam"), "facts not merged: {text}");
        assert!(body.contains("First interaction"), "seed text lost: {text}");
    }
}

// --- 4: seed folders outside the id rules --------------------------------------

#[test]
fn seed_folders_outside_the_id_rules_are_listed_and_reachable() {
    let env = seed_env();
    let out = env.run(["--json", "session", "users"]).succeeds();
    let users: Vec<String> = out
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["user"].as_str().unwrap().to_owned())
        .collect();
    for odd in ["Kevin Lee", "fan#1", "李小龍"] {
        assert!(
            users.contains(&odd.to_owned()),
            "{odd} not listed: {users:?}"
        );
        assert!(
            out.stderr().contains(&format!("{odd:?}")),
            "no warning about {odd}: {}",
            out.stderr()
        );
    }
    assert!(
        out.stderr().contains("--user"),
        "the warning says what to do"
    );
    let status = env.run(["--json", "session", "status"]).succeeds().json();
    assert_eq!(status["users"], 6, "{status}");

    // Admin commands reach them by name.
    let shown = env
        .run(["--json", "session", "show", "--user", "Kevin Lee"])
        .succeeds()
        .json();
    assert_eq!(shown[0]["text"], "hi from a space");
    env.run(["session", "status", "--user", "李小龍"])
        .succeeds();
    let export = env.dir.path().join("fan-export");
    env.run([
        "session",
        "export",
        "--user",
        "fan#1",
        "--out",
        export.to_str().unwrap(),
    ])
    .succeeds();
    assert!(export.join("stm/messages.jsonl").exists() || export.read_dir().unwrap().count() > 0);
    env.run(["session", "clear", "--user", "fan#1", "--all", "--yes"])
        .succeeds();
    assert!(!env.stm_dir("fan#1").exists());

    // maintain reaches them (a dry run lists their daily summaries).
    let report = env
        .run([
            "--json",
            "maintain",
            "--dry-run",
            "--only",
            "daily",
            "--now",
            "2026-03-22T12:00:00Z",
        ])
        .succeeds()
        .json();
    assert!(report.to_string().contains("Kevin Lee"), "{report}");

    // But no new folder outside the rules: ask and append still refuse.
    env.run(["append", "--user", "Kevin Lee", "--", "hi"])
        .fails(Exit::Usage)
        .stderr_has("user id");
    // Nor does an admin command invent one that is not there.
    env.run(["session", "show", "--user", "Nobody Here"])
        .fails(Exit::Usage);
}

// --- 5: ids that look like flags ------------------------------------------------

#[test]
fn negative_ids_are_ids_not_flags() {
    let env = TestEnv::new();
    env.ask([
        "--user",
        "-1001234567890",
        "--msg-id",
        "-5",
        "--",
        "hi group",
    ])
    .succeeds()
    .stdout_is("fake reply to: hi group\n");
    env.run([
        "append",
        "--user",
        "U1",
        "--conversation",
        "-1001234567890",
        "--",
        "me too",
    ])
    .succeeds();
    let shown = env
        .run(["--json", "session", "show", "--user", "-1001234567890"])
        .succeeds()
        .json();
    // The group's line went to the conversation's own memory (`#KEY`).
    assert_eq!(shown.as_array().unwrap().len(), 2, "{shown}");
    assert_eq!(shown[0]["msgId"], "-5");
    let group = env
        .run([
            "--json",
            "session",
            "show",
            "--conversation",
            "-1001234567890",
        ])
        .succeeds()
        .json();
    assert_eq!(group.as_array().unwrap().len(), 1, "{group}");
    assert_eq!(group[0]["text"], "me too");
    env.run(["context", "--user", "-1001234567890"]).succeeds();
    env.run([
        "context",
        "--user",
        "U1",
        "--conversation",
        "-1001234567890",
    ])
    .succeeds();
}

// --- 6: redelivery of seed-logged messages --------------------------------------

#[test]
fn a_redelivered_seed_message_is_answered_from_the_log() {
    let env = seed_env();
    let reply = env
        .ask(["--json", "--user", "U0123ABC", "--msg-id", "U0123ABC-m20"])
        .args(["--", "What am I preparing for?"])
        .succeeds()
        .json();
    assert_eq!(reply["reply"], "The TOEIC.", "{reply}");
    assert_eq!(reply["replayed"], true);
    assert_eq!(env.claude_calls(), 0, "the seed's answer was not seen");
    // A seed message whose next line is not an answer is answered now.
    let lines_before = env.read_lines("U0123ABC").len();
    std::fs::OpenOptions::new()
        .append(true)
        .open(env.messages_path("U0123ABC"))
        .and_then(|mut f| {
            use std::io::Write as _;
            f.write_all(
                b"{\"ts\":\"2026-03-21T04:00:00.000Z\",\"role\":\"user\",\"text\":\"unanswered\",\"msgId\":\"U0123ABC-m30\",\"channel\":\"slack\"}\n",
            )
        })
        .unwrap();
    let reply = env
        .ask(["--json", "--user", "U0123ABC", "--msg-id", "U0123ABC-m30"])
        .args(["--", "unanswered"])
        .succeeds()
        .json();
    assert_eq!(reply["replayed"], false, "{reply}");
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.read_lines("U0123ABC").len(), lines_before + 2);
}

// --- 7: context rendering of seed data ------------------------------------------

#[test]
fn seed_crlf_and_system_lines_render_as_documented() {
    let env = seed_env();
    let text = env
        .run(["context", "--user", "U0123ABC", "--window", "5"])
        .succeeds()
        .stdout();
    assert!(
        text.contains("User: line one\n  line two\n["),
        "a \\r\\n added a line: {text:?}"
    );
    assert!(
        text.contains("] System: user switched to English"),
        "{text}"
    );
    assert!(
        text.contains("[Conversation summary]\n  Kevin is preparing"),
        "{text}"
    );
    assert!(text.contains("[User profile]"), "{text}");
}

// --- 8: the fixture as a whole reads cleanly ------------------------------------

#[test]
fn the_seed_state_dir_reads_without_warnings_or_changes() {
    let env = seed_env();
    let before = crate::common::snapshot_tree(&env.state_dir(), |_| false);
    for args in [
        &["session", "show", "--user", "U0123ABC"][..],
        &["session", "profile", "--user", "U0123ABC"],
        &["session", "topics"],
        &["context", "--user", "U0123ABC"],
    ] {
        let out = env.run(args).succeeds();
        assert!(out.stderr().is_empty(), "{args:?}: {}", out.stderr());
    }
    // Channel-wide: only the warning about the seed's odd folders.
    let out = env.run(["session", "status"]).succeeds();
    for line in out.stderr().lines() {
        assert!(line.contains("outside this tool's id rules"), "{line}");
    }
    let after = crate::common::snapshot_tree(&env.state_dir(), |_| false);
    assert!(
        crate::common::differences(&before, &after).is_empty(),
        "reading changed the seed's files: {:?}",
        crate::common::differences(&before, &after)
    );
}

//! What people see at a terminal: tables aligned by display width, and
//! `$EDITOR` run as git runs it.

mod common;

use common::{TestEnv, stderr_of, stdout_of, write_file};

/// Set a topic note from `text`.
fn set_topic(env: &TestEnv, slug: &str, text: &str) {
    let path = env.dir.path().join(format!("{slug}.md"));
    write_file(&path, text.as_bytes());
    let out = env
        .cmd()
        .args(["session", "topic", "set", slug])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
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
    );
    set_topic(&env, "tea", "---\ntitle: Tea\nowner: U2\n---\n\nOolong.\n");
    let out = env.cmd().args(["session", "topics"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let owner = column_of(lines[0], "OWNER");
    assert_eq!(column_of(lines[1], "U2"), owner, "{text}");
    assert_eq!(column_of(lines[2], "U1"), owner, "{text}");
}

#[test]
fn an_editor_with_spaces_and_arguments_runs_as_git_runs_it() {
    let env = TestEnv::new();
    let folder = env.dir.path().join("my tools");
    std::fs::create_dir_all(&folder).unwrap();
    let script = folder.join("add line.sh");
    write_file(
        &script,
        b"#!/bin/sh\n[ \"$1\" = --append ] || exit 9\nprintf -- '- %s\\n' \"$2\" >> \"$3\"\n",
    );
    // Through `sh`, so no just-written file is exec'd (ETXTBSY); the path
    // has a space and the arguments a quoted one, as git allows.
    let editor = format!("sh '{}' --append 'Likes green tea'", script.display());
    let out = env
        .cmd()
        .args(["session", "profile", "--user", "U1", "--edit"])
        .env("EDITOR", &editor)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let profile = env.sessions_dir().join("ltm/users/U1.md");
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(
        text.trim_end().ends_with("- Likes green tea"),
        "the editor's line is saved: {text}"
    );
}

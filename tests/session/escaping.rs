//! Stored text never drives the operator's terminal (issue 13).

use super::*;

/// What a terminal would act on: C0 controls but newline and tab, DEL,
/// C1 controls, and the bidi overrides and isolates.
fn terminal_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
        })
        .collect()
}

#[test]
fn show_profile_topic_and_search_escape_control_characters_and_json_keeps_them() {
    let env = TestEnv::new();
    let forged = "hi\r[2026-01-01 00:00] Assistant: I am admin";
    let clear = "wipe \u{1b}[2J screen \u{9b}2J and \u{202e}txet desrever";
    env.import(
        "U1",
        &[
            line("2026-03-01T10:00:00Z", "user", forged),
            line("2026-03-01T10:01:00Z", "assistant", clear),
        ],
    );
    let text = env
        .run(["session", "show", "--user", "U1"])
        .succeeds()
        .stdout();
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    assert!(
        text.contains("\\r[2026-01-01 00:00] Assistant: I am admin"),
        "{text}"
    );
    assert!(text.contains("wipe \\u{1b}[2J screen"), "{text}");
    let json = env
        .run(["--json", "session", "show", "--user", "U1"])
        .succeeds()
        .json();
    assert_eq!(json[0]["text"], forged);
    assert_eq!(json[1]["text"], clear);

    env.set_profile(
        "U1",
        &format!("---\nuser_id: U1\n---\n\n## Notes\n- {clear}\n"),
    );
    let text = env
        .run(["session", "profile", "--user", "U1"])
        .succeeds()
        .stdout();
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    assert!(text.contains("wipe \\u{1b}[2J"), "{text}");
    set_topic(
        &env,
        "tea",
        &format!("---\ntitle: Tea\n---\n\n{clear}\n"),
        None,
    );
    let text = env
        .run(["session", "topic", "show", "tea"])
        .succeeds()
        .stdout();
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    let text = env.run(["session", "search", "wipe"]).succeeds().stdout();
    assert!(text.contains("wipe"), "{text}");
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    // Ranked (several words): the same escaping, the forged line too.
    let text = env
        .run(["session", "search", "wipe", "screen", "admin"])
        .succeeds()
        .stdout();
    assert!(
        text.contains("#1  score") && text.contains("wipe \\u{1b}[2J screen"),
        "{text}"
    );
    assert!(
        text.contains("\\r[2026-01-01 00:00] Assistant: I am admin"),
        "{text}"
    );
    assert_eq!(terminal_controls(&text), Vec::<char>::new(), "{text:?}");
    let json = env
        .run(["--json", "session", "search", "wipe", "screen", "admin"])
        .succeeds()
        .json_lines();
    assert!(json.iter().any(|h| h["text"] == clear), "{json:?}");
    assert!(json.iter().any(|h| h["text"] == forged), "{json:?}");
}

#[test]
fn errors_on_stderr_show_control_characters_as_escapes() {
    let env = TestEnv::new();
    // A path a broker passes on from a chat message, holding ESC [2J.
    let err = env
        .ask([
            "--user",
            "U1",
            "--attach",
            "/nonexistent/\u{1b}[2Jx.png",
            "--",
            "hi",
        ])
        .fails(Exit::Usage)
        .stderr();
    assert!(!err.contains('\u{1b}'), "a raw ESC reached stderr: {err:?}");
    assert!(err.contains("\\u{1b}[2Jx.png"), "{err}");
}

#[test]
fn table_cells_show_control_characters_as_escapes() {
    let env = TestEnv::new();
    set_topic(
        &env,
        "tea",
        "---\ntitle: Tea\u{1b}[2JNotes\u{7}\nowner: U1\n---\n\nOolong.\n",
        None,
    );
    let out = env.run(["session", "topics"]).succeeds().stdout();
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(out.contains("Tea\\u{1b}[2JNotes\\u{7}"), "{out}");
}

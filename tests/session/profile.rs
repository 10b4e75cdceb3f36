//! `session profile`: show, set from a file or stdin, edit, and the
//! refusals that keep another user's or a broken profile out.

use super::*;

const PROFILE: &str = "---\nuser_id: U1\ndisplay_name: Kevin\nchannel: line\n\
tags: [toeic, student]\nfavourite_drink: oolong\n---\n\n## Preferences\n- Language: Traditional Chinese\n";

#[test]
fn profile_shows_sets_from_a_file_or_stdin_and_refuses_a_wrong_or_broken_one() {
    let env = TestEnv::new();
    let path = env.dir.path().join("kevin.md");
    write_file(&path, PROFILE.as_bytes());
    let text = env
        .run(["session", "profile", "--user", "U1", "--set", s(&path)])
        .succeeds()
        .stdout();
    let profile = env.profile_path("U1");
    assert!(text.contains(s(&profile)), "says where: {text}");
    let (front, body) = read_markdown(&profile);
    assert_eq!(front.get("user_id").and_then(|v| v.as_str()), Some("U1"));
    assert_eq!(
        front.get("favourite_drink").and_then(|v| v.as_str()),
        Some("oolong"),
        "unknown keys are kept"
    );
    assert_eq!(
        body.trim(),
        "## Preferences\n- Language: Traditional Chinese"
    );
    let entry = index_entry(&env, "ltm/users/U1.md").expect("indexed");
    assert_eq!(entry["title"], json!("Kevin"));
    assert_eq!(entry["tags"], json!(["toeic", "student"]));

    let shown = env
        .run(["session", "profile", "--user", "U1"])
        .succeeds()
        .stdout();
    for needle in [
        "user_id: U1",
        "display_name: Kevin",
        "favourite_drink: oolong",
        "- Language: Traditional Chinese",
    ] {
        assert!(shown.contains(needle), "{needle} in:\n{shown}");
    }
    let v = env
        .run(["--json", "session", "profile", "--user", "U1"])
        .succeeds()
        .json();
    assert_eq!(v["user"], json!("U1"));
    assert_eq!(v["frontmatter"]["display_name"], json!("Kevin"));
    assert_eq!(v["frontmatter"]["tags"], json!(["toeic", "student"]));
    assert!(v["body"].as_str().unwrap().contains("Traditional Chinese"));

    // From stdin; a missing user_id is filled in.
    let out = env
        .run(["--json", "session", "profile", "--user", "U1", "--set", "-"])
        .stdin("---\ndisplay_name: Kev\n---\n\nNew body from stdin.\n")
        .succeeds();
    let v = out.json();
    assert_eq!(v["id"], json!("U1"), "{v}");
    assert_eq!(v["written"], json!(s(&profile)), "{v}");
    let (front, body) = read_markdown(&profile);
    assert_eq!(front.get("user_id").and_then(|v| v.as_str()), Some("U1"));
    assert_eq!(
        front.get("display_name").and_then(|v| v.as_str()),
        Some("Kev")
    );
    assert_eq!(body.trim(), "New body from stdin.");
    assert_eq!(
        index_entry(&env, "ltm/users/U1.md").unwrap()["title"],
        json!("Kev")
    );

    // Refused: another user's id, or frontmatter that never closes.
    let before = tree(&env.sessions_dir());
    let wrong = "---\nuser_id: U2\ndisplay_name: Mallory\n---\n\nNot U1.\n";
    let unclosed = "---\nuser_id: U1\ndisplay_name: Cut\n\nthe closing line is missing\n";
    for (what, text) in [
        ("another user's id", wrong),
        ("unclosed frontmatter", unclosed),
    ] {
        let file = env.dir.path().join("bad-profile.md");
        write_file(&file, text.as_bytes());
        env.run(["session", "profile", "--user", "U1", "--set", s(&file)])
            .fails(Exit::Usage);
        env.run(["session", "profile", "--user", "U1", "--set", "-"])
            .stdin(text)
            .fails(Exit::Usage);
        assert_eq!(tree(&env.sessions_dir()), before, "{what}: nothing changed");
    }
    assert!(!env.profile_path("U2").exists());
    // A user without a profile gets it refused too.
    let file = env.dir.path().join("bad-profile.md");
    write_file(&file, wrong.as_bytes());
    env.run(["session", "profile", "--user", "U3", "--set", s(&file)])
        .fails(Exit::Usage);
    assert!(!env.profile_path("U3").exists());
}

#[test]
fn profile_edit_runs_the_editor_and_saves_and_needs_an_editor() {
    let env = TestEnv::new();
    let script = env.dir.path().join("append-line.sh");
    write_file(
        &script,
        b"#!/bin/sh\nprintf '%s\\n' '- Likes green tea' >> \"$1\"\n",
    );
    // Run through `sh` so no just-written file is exec'd (ETXTBSY).
    let editor = format!("sh {}", s(&script));
    let path = env.dir.path().join("kevin.md");
    write_file(&path, PROFILE.as_bytes());
    env.run(["session", "profile", "--user", "U1", "--set", s(&path)])
        .succeeds();

    env.run(["session", "profile", "--user", "U1", "--edit"])
        .env("EDITOR", &editor)
        .succeeds();
    let text = std::fs::read_to_string(env.profile_path("U1")).unwrap();
    assert!(
        text.trim_end().ends_with("- Likes green tea"),
        "the line is saved: {text}"
    );
    assert!(text.contains("- Language: Traditional Chinese"), "{text}");
    assert!(text.contains("favourite_drink: oolong"), "{text}");

    // A user without a profile: the skeleton, edited, is saved.
    let out = env
        .run(["--json", "session", "profile", "--user", "U5", "--edit"])
        .env("EDITOR", &editor)
        .succeeds();
    let v = out.json();
    assert_eq!(v["id"], json!("U5"), "{v}");
    let (front, body) = read_markdown(&env.profile_path("U5"));
    assert_eq!(front.get("user_id").and_then(|v| v.as_str()), Some("U5"));
    assert!(body.contains("- Likes green tea"), "{body}");
    assert!(index_entry(&env, "ltm/users/U5.md").is_some());

    // Neither EDITOR nor VISUAL: a usage error, nothing changes.
    let before = tree(&env.sessions_dir());
    let err = env
        .run(["session", "profile", "--user", "U1", "--edit"])
        .fails(Exit::Usage)
        .stderr();
    assert!(err.contains("EDITOR"), "{err}");
    env.run(["session", "profile", "--user", "U6", "--edit"])
        .fails(Exit::Usage);
    assert_eq!(tree(&env.sessions_dir()), before);
}

/// A compaction merging facts while the editor is open must not be
/// overwritten by the edit: nothing is written and the edit is kept.
#[test]
fn profile_edit_refuses_to_overwrite_a_change_made_meanwhile() {
    let env = TestEnv::new();
    let path = env.dir.path().join("kevin.md");
    write_file(&path, PROFILE.as_bytes());
    env.run(["session", "profile", "--user", "U1", "--set", s(&path)])
        .succeeds();
    let profile = env.profile_path("U1");
    // The "editor" edits its draft and, meanwhile, someone else changes
    // the profile itself.
    let script = env.dir.path().join("racing-editor.sh");
    write_file(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' '- from the editor' >> \"$1\"\n\
             printf '%s\\n' '- merged meanwhile' >> '{}'\n",
            s(&profile)
        )
        .as_bytes(),
    );
    let err = env
        .run(["session", "profile", "--user", "U1", "--edit"])
        .env("EDITOR", format!("sh {}", s(&script)))
        .fails(Exit::Usage)
        .stderr();
    assert!(err.contains("changed while you were editing"), "{err}");
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(
        text.contains("- merged meanwhile"),
        "the change made meanwhile stays: {text}"
    );
    assert!(!text.contains("- from the editor"), "{text}");
    let kept = err
        .split("your edit is kept in ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .expect("the message names where the edit is kept");
    let draft = std::fs::read_to_string(kept.trim()).unwrap();
    assert!(draft.contains("- from the editor"), "{draft}");
    let _ = std::fs::remove_file(kept.trim());
}

#[test]
fn profile_set_refuses_empty_input_and_a_wrong_frontmatter_and_keeps_name_and_created() {
    let env = TestEnv::new();
    env.set_profile("U1", "---\nuser_id: U1\ndisplay_name: Kevin\ncreated: 2026-01-01T00:00:00.000Z\ntags: [tea]\n---\n\nLikes tea.\n");
    let before = std::fs::read(env.profile_path("U1")).unwrap();
    for (input, why) in [
        ("", "empty"),
        ("  \n\n", "empty"),
        ("---\ntags: tea\n---\n\nx\n", "tags"),
        ("---\nuser_id: U2\n---\n\nx\n", "user_id"),
    ] {
        let out = env
            .run(["session", "profile", "--user", "U1", "--set", "-"])
            .stdin(input)
            .fails(Exit::Usage);
        assert!(out.stderr().contains(why), "{input:?}: {}", out.stderr());
        assert_eq!(
            std::fs::read(env.profile_path("U1")).unwrap(),
            before,
            "{input:?}"
        );
    }
    // A new body without the name and creation time keeps both.
    env.set_profile("U1", "## Notes\n- Now likes coffee.\n");
    let (front, body) = read_markdown(&env.profile_path("U1"));
    let text = |key: &str| {
        front
            .get(key)
            .and_then(serde_yaml::Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(text("display_name").as_deref(), Some("Kevin"));
    assert_eq!(text("created").as_deref(), Some("2026-01-01T00:00:00.000Z"));
    assert!(body.contains("coffee"), "{body}");
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
    let editor = format!("sh '{}' --append 'Likes green tea'", s(&script));
    env.run(["session", "profile", "--user", "U1", "--edit"])
        .env("EDITOR", &editor)
        .succeeds();
    let text = std::fs::read_to_string(env.profile_path("U1")).unwrap();
    assert!(
        text.trim_end().ends_with("- Likes green tea"),
        "the editor's line is saved: {text}"
    );
}

/// Issue 25: "not found" is exit 9 everywhere, as for `show`: a profile
/// that is not there (for a known user and an unknown one), a topic note
/// that is not there (`topic show`, `forget`).
#[test]
fn what_is_not_there_is_exit_9_for_profile_topic_and_forget() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "hi"]).succeeds();
    env.run(["session", "profile", "--user", "U1"])
        .fails(Exit::UnknownUser)
        .stderr_has("U1 has no profile");
    env.run(["session", "profile", "--user", "NOBODY"])
        .fails(Exit::UnknownUser);
    env.run(["session", "show", "--user", "NOBODY"])
        .fails(Exit::UnknownUser);
    env.run(["session", "topic", "show", "nope"])
        .fails(Exit::UnknownUser)
        .stderr_has("no topic note named nope");
    env.run(["session", "forget", "nope"])
        .fails(Exit::UnknownUser)
        .stderr_has("session topics");
}

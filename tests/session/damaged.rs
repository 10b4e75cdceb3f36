//! One bad file does not stop a channel-wide command (issue 13).

use super::*;

#[test]
fn one_bad_file_is_warned_about_and_channel_wide_commands_go_on() {
    let env = TestEnv::new();
    env.import("U1", &[line("2026-03-01T10:00:00Z", "user", "hello tea")]);
    // U2's log is a folder, U3's a link to a file outside the state dir.
    std::fs::create_dir_all(env.messages_path("U2")).unwrap();
    let outside = env.dir.path().join("outside.jsonl");
    write_file(
        &outside,
        line("2026-03-01T10:00:00Z", "user", "OUTSIDE").as_bytes(),
    );
    std::fs::create_dir_all(env.stm_dir("U3")).unwrap();
    std::os::unix::fs::symlink(&outside, env.messages_path("U3")).unwrap();
    // U4's profile is not UTF-8.
    write_file(
        &env.profile_path("U4"),
        b"---\nuser_id: U4\n---\n\ntea \xff\xfe\n",
    );
    env.set_profile("U5", "---\nuser_id: U5\n---\n\nLikes tea.\n");

    for args in [
        &["session", "users"][..],
        &["session", "status"],
        &["session", "search", "tea"],
        &["session", "reindex"],
    ] {
        let out = env.run(args).output();
        let err = stderr_of(&out);
        assert_eq!(exit_of(&out), Some(Exit::Success), "{args:?}: {err}");
        assert!(
            err.contains("warning"),
            "{args:?} warns about what it skipped: {err}"
        );
        assert!(
            !stdout_of(&out).contains("OUTSIDE"),
            "{args:?} read through the link"
        );
    }
    let users = env.run(["session", "users"]).succeeds().stdout();
    assert!(users.contains("U1"), "{users}");
    let err = stderr_of(&env.run(["session", "users"]).output());
    assert!(err.contains("U2") && err.contains("U3"), "{err}");
    let err = stderr_of(&env.run(["session", "search", "tea"]).output());
    assert!(err.contains("U4.md"), "{err}");
    let hits = env.run(["session", "search", "tea"]).succeeds().stdout();
    assert!(hits.contains("U5"), "{hits}");
}

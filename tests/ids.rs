//! User ids become path components: ids that could leave their folder,
//! hide, or hold separators or control characters are usage errors that
//! touch nothing; the ids real platforms use work as they are.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt as _;

use crate::common::{Exit, TestEnv};

/// Nothing may exist under `stm/`, nor anywhere the id could point to.
fn assert_nothing_created(env: &TestEnv, id: &[u8]) {
    let stm = env.sessions_dir().join("stm");
    if stm.exists() {
        let entries: Vec<_> = std::fs::read_dir(&stm).unwrap().collect();
        assert!(entries.is_empty(), "stm/ holds {entries:?} after id {id:?}");
    }
    for escaped in ["x", "b", "a"] {
        for base in [
            env.sessions_dir(),
            env.state_dir(),
            env.dir.path().to_owned(),
        ] {
            assert!(
                !base.join(escaped).exists(),
                "{} exists after id {id:?}",
                base.join(escaped).display()
            );
        }
    }
    let locks = env.sessions_dir().join(".locks/users");
    if locks.exists() {
        let entries: Vec<_> = std::fs::read_dir(&locks).unwrap().collect();
        assert!(entries.is_empty(), "lock files {entries:?} after id {id:?}");
    }
}

fn refused(env: &TestEnv, id: &[u8]) {
    let mut user = OsString::from("--user=");
    user.push(OsString::from_vec(id.to_vec()));
    env.run(["append"])
        .arg(&user)
        .args(["--", "hi"])
        .fails(Exit::Usage)
        .stderr_has_one_of(&["user id", "UTF-8"]);
    env.run(["context"]).arg(&user).fails(Exit::Usage);
    assert_nothing_created(env, id);
}

#[test]
fn ids_that_escape_hide_or_hold_separators_are_refused() {
    let env = TestEnv::new();
    let long = "a".repeat(200);
    for id in [
        "../x",
        "..",
        ".",
        ".hidden",
        "a/b",
        "/x",
        "",
        long.as_str(),
        "a b",
        "a\\b",
        "U１２", // full-width digits: look-alikes of ASCII ones
    ] {
        refused(&env, id.as_bytes());
    }
}

#[test]
fn control_characters_are_refused() {
    let env = TestEnv::new();
    for id in [&b"a\x01b"[..], b"a\nb", b"a\tb", b"a\x7fb", b"a\x1b[31mb"] {
        refused(&env, id);
    }
}

#[test]
fn invalid_utf8_id_is_refused() {
    let env = TestEnv::new();
    refused(&env, b"a\xffb");
}

/// A NUL byte cannot reach the program at all: `execve(2)` takes C strings,
/// so an argument ends at its first NUL, and Rust's `Command` refuses to
/// spawn rather than silently truncate. The control characters above stand
/// in for it; this test pins down why NUL itself is not passed.
#[test]
fn nul_byte_cannot_be_passed_as_an_argument() {
    let env = TestEnv::new();
    let mut user = OsString::from("--user=");
    user.push(OsString::from_vec(b"a\0b".to_vec()));
    let err = env
        .run(["append"])
        .arg(&user)
        .args(["--", "hi"])
        .into_command()
        .output()
        .expect_err("an argument with a NUL byte cannot be spawned");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
    assert_nothing_created(&env, b"a\0b");
}

#[test]
fn real_platform_ids_work() {
    let env = TestEnv::new();
    for id in [
        "U0123ABC",                          // Slack
        "U4af4980629f5c7b1e8d4c3b2a1f0e9d8", // LINE
        "-1001234567890",                    // Telegram group
        "123456789012345678",                // Discord
        "29:1a2b-c",                         // Teams
        "886912345678@c.us",                 // WhatsApp
    ] {
        let user = format!("--user={id}");
        env.run(["append", &user, "--", &format!("hello from {id}")])
            .succeeds();
        assert!(env.stm_dir(id).is_dir(), "stm/{id} exists");
        assert_eq!(
            env.messages(id)[0]["text"],
            format!("hello from {id}").as_str()
        );
        env.run(["context", &user])
            .succeeds()
            .stdout_has(&format!("User: hello from {id}"));
    }
    // Each id got its own folder, directly under stm/.
    let mut names: Vec<String> = std::fs::read_dir(env.sessions_dir().join("stm"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
}

#[test]
fn a_long_but_plausible_id_works() {
    // Teams conversation ids run to about 90 characters.
    let env = TestEnv::new();
    let id = format!("29:{}", "a1B2-_".repeat(16));
    env.run(["append", "--user", &id, "--", "hi"]).succeeds();
    assert_eq!(env.messages(&id).len(), 1);
}

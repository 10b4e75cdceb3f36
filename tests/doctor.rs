//! `doctor`: each check says ok or what to fix; any failure exits non-zero.

use std::process::Output;

use crate::common::{Exit, Run, TestEnv, fake_claude, write_file};
use serde_json::Value;

fn doctor(env: &TestEnv) -> Run {
    env.run(["doctor"]).env("CLAUDE_BIN", fake_claude())
}

/// The `--json` report, whatever the exit code.
fn checks(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn status<'a>(report: &'a Value, name: &str) -> &'a str {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .and_then(|c| c["status"].as_str())
        .unwrap_or_else(|| panic!("no {name} check: {report}"))
}

#[test]
fn a_ready_setup_passes_and_says_so() {
    let env = TestEnv::new();
    // The tool creates the state dir private; then the operator's config.
    env.run(["append", "--user", "U1", "--", "hi"]).succeeds();
    env.write_config(r#"{"ask": {"tools": ["Read"]}}"#);
    let report = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .succeeds()
        .json();
    assert_eq!(report["ok"], true, "{report}");
    // The fake claude is not the tested release: a warning, not a failure.
    assert_eq!(status(&report, "claude"), "warn", "{report}");
    assert_eq!(status(&report, "auth"), "ok");
    assert_eq!(status(&report, "state-dir"), "ok");
    assert_eq!(status(&report, "config"), "ok");
    assert_eq!(status(&report, "live"), "skipped");
}

/// doctor names the file system under the state dir and where the state
/// dir came from. The test's temp dir is on a local disk: no warning.
#[test]
fn the_file_system_and_the_state_dirs_source_are_named() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "hi"]).succeeds();
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output();
    let report = checks(&out);
    assert_eq!(status(&report, "file-system"), "ok", "{report}");
    let detail = |name: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .and_then(|c| c["detail"].as_str())
            .unwrap()
            .to_owned()
    };
    assert!(detail("file-system").ends_with("(local)"), "{report}");
    assert!(detail("state-dir").contains("(from "), "{report}");
}

#[test]
fn missing_auth_fails_and_names_both_ways() {
    let env = TestEnv::new();
    env.write_config("{}");
    let text = doctor(&env).fails(Exit::ClaudeFailed).stdout();
    assert!(text.contains("FAIL  auth"), "{text}");
    assert!(
        text.contains("ANTHROPIC_API_KEY") && text.contains("CLAUDE_CODE_OAUTH_TOKEN"),
        "{text}"
    );
}

#[test]
fn a_world_readable_state_dir_and_a_bad_config_fail() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    write_file(
        &env.sessions_dir().join("config.json"),
        b"{\"stm\": {\"contextWindow\": \"ten\"}}",
    );
    std::fs::set_permissions(env.sessions_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output();
    assert!(!out.status.success());
    let report = checks(&out);
    assert_eq!(report["ok"], false);
    assert_eq!(status(&report, "state-dir"), "fail", "{report}");
    assert_eq!(status(&report, "config"), "fail", "{report}");
    assert!(report.to_string().contains("chmod 700"), "{report}");
}

#[test]
fn claude_not_found_fails_with_its_code() {
    let env = TestEnv::new();
    env.write_config("{}");
    env.run(["doctor"])
        .env("CLAUDE_BIN", "/nonexistent/claude")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .fails(Exit::ClaudeNotFound)
        .stdout_has("FAIL  claude");
}

#[test]
fn a_bare_tool_in_allowed_tools_is_warned_about() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "hi"]).succeeds();
    env.write_config(
        r#"{"ask": {"tools": ["Read", "Bash"], "allowedTools": ["Read", "Bash(date)"]}}"#,
    );
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output();
    let report = checks(&out);
    assert_eq!(status(&report, "config"), "warn", "{report}");
    let text = report.to_string();
    assert!(text.contains("allows Read without a pattern"), "{text}");
    assert!(!text.contains("Bash(date) without"), "{text}");
}

/// Issue 25.2: an explicit state dir that is not one (a mount that is not
/// there) fails the check, with the way to make one; nothing is created.
#[test]
fn an_explicit_state_dir_that_is_not_one_fails_and_names_init() {
    let env = TestEnv::uninitialised();
    let text = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .fails(Exit::State)
        .stdout();
    assert!(text.contains("claude-session init"), "{text}");
    assert!(!env.state_dir().exists());
}

/// The `fix` of a check, by name.
fn fix<'a>(report: &'a Value, name: &str) -> &'a str {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .and_then(|c| c["fix"].as_str())
        .unwrap_or_else(|| panic!("no fix for {name}: {report}"))
}

/// Issue 25: a typo'd config key gets the key it probably meant, on every
/// command's stderr and in doctor's config check, which no longer calls
/// the config valid.
#[test]
fn a_typod_config_key_is_named_with_the_key_it_meant_and_doctor_warns() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {"contextWindw": 2}}"#);
    env.run(["append", "--user", "U1", "--", "hi"])
        .succeeds()
        .stderr_has(
            "unknown key `stm.contextWindw` is ignored (did you mean `stm.contextWindow`?)",
        );
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output();
    let report = checks(&out);
    assert_eq!(status(&report, "config"), "warn", "{report}");
    let config = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "config")
        .unwrap();
    let detail = config["detail"].as_str().unwrap();
    assert!(!detail.contains("valid"), "{detail}");
    assert!(
        detail.contains("did you mean `stm.contextWindow`?"),
        "{detail}"
    );
    assert!(fix(&report, "config").contains("rename"), "{report}");
    // Said once, in the report, not also as warnings on stderr.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("unknown key"), "{stderr}");
}

/// Issue 25: no `fix:` says "see the message": a broken config and a
/// failed live call each get a fix of their own.
#[test]
fn fixes_say_what_to_do_not_see_the_message() {
    let env = TestEnv::new();
    env.write_config(r#"{"stm": {"contextWindow": "ten"}}"#);
    let report = checks(
        &doctor(&env)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .arg("--json")
            .output(),
    );
    let config_fix = fix(&report, "config");
    assert!(config_fix.contains("config.json"), "{config_fix}");
    assert!(!config_fix.contains("message"), "{config_fix}");

    env.write_config("{}");
    for (failing, wanted) in [
        (("FAKE_CLAUDE_IS_ERROR", "1"), "ANTHROPIC_API_KEY"),
        (("FAKE_CLAUDE_429_ONCE", "ok?"), "network"),
    ] {
        let report = checks(
            &doctor(&env)
                .env("ANTHROPIC_API_KEY", "sk-test")
                .env(failing.0, failing.1)
                .args(["--live", "--json"])
                .output(),
        );
        assert_eq!(status(&report, "live"), "fail", "{report}");
        let live_fix = fix(&report, "live");
        assert!(live_fix.contains(wanted), "{failing:?}: {live_fix}");
        assert!(!live_fix.contains("see the message"), "{live_fix}");
    }
}

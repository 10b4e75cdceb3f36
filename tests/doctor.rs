//! `doctor`: each check says ok or what to fix; any failure exits non-zero.

use crate::common::{TestEnv, fake_claude, stdout_of, write_file};
use serde_json::Value;

fn doctor(env: &TestEnv) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("CLAUDE_BIN", fake_claude()).arg("doctor");
    cmd
}

fn checks(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout_of(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout_of(out)))
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
    env.cmd()
        .args(["append", "--user", "U1", "--", "hi"])
        .assert()
        .success();
    env.write_config(r#"{"ask": {"tools": ["Read"]}}"#);
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stdout_of(&out));
    let report = checks(&out);
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
    env.cmd()
        .args(["append", "--user", "U1", "--", "hi"])
        .assert()
        .success();
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output()
        .unwrap();
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
    let out = doctor(&env).output().unwrap();
    assert_eq!(out.status.code(), Some(6));
    let text = stdout_of(&out);
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
        .output()
        .unwrap();
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
    let out = env
        .cmd()
        .env("CLAUDE_BIN", "/nonexistent/claude")
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stdout_of(&out).contains("FAIL  claude"),
        "{}",
        stdout_of(&out)
    );
}

#[test]
fn a_bare_tool_in_allowed_tools_is_warned_about() {
    let env = TestEnv::new();
    env.cmd()
        .args(["append", "--user", "U1", "--", "hi"])
        .assert()
        .success();
    env.write_config(
        r#"{"ask": {"tools": ["Read", "Bash"], "allowedTools": ["Read", "Bash(date)"]}}"#,
    );
    let out = doctor(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .arg("--json")
        .output()
        .unwrap();
    let report = checks(&out);
    assert_eq!(status(&report, "config"), "warn", "{report}");
    let text = report.to_string();
    assert!(text.contains("allows Read without a pattern"), "{text}");
    assert!(!text.contains("Bash(date) without"), "{text}");
}

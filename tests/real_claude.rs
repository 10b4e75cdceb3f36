//! End to end with the real Claude Code CLI (the pinned npm package,
//! installed under `target/` on first use) against a loopback mock of the
//! Messages API: what claude does by itself — tools, settings, CLAUDE.md,
//! title requests, retries, error envelopes — is tested here, not assumed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::real_claude::{
    MockApi, RealCli, real_cli_test, system_text, tool_results, tool_use,
};
use crate::common::{Exit, Run, TestEnv, exit_of, processes_with, stderr_of, write_file};
use serde_json::{Value, json};

const SECRET_ENV: &str = "SLACK_BOT_TOKEN=xoxb-secret-in-dotenv-4242";
const BROKER_TOKEN: &str = "xoxb-secret-in-broker-env-7777";
const BOB_SECRET: &str = "bob's vault code is 9931";

/// A broker's folder as the README lays it out: `.env`, a `CLAUDE.md`,
/// project settings with a hook, an MCP config, and the state dir of
/// `--channel slack` holding another person's memory.
struct Broker {
    env: TestEnv,
    mock: MockApi,
    cli: RealCli,
}

impl Broker {
    fn new(cli: RealCli) -> Self {
        let env = TestEnv::new();
        let root = env.dir.path();
        write_file(&root.join(".env"), format!("{SECRET_ENV}\n").as_bytes());
        write_file(&root.join("CLAUDE.md"), b"MARKER_BROKER_CLAUDE_MD\n");
        write_file(&root.join("state/CLAUDE.md"), b"MARKER_STATE_CLAUDE_MD\n");
        write_file(
            &env.home().join(".claude/CLAUDE.md"),
            b"MARKER_HOME_CLAUDE_MD\n",
        );
        let hook_ran = root.join("hook-ran");
        write_file(
            &root.join(".claude/settings.json"),
            json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": format!("echo MARKER_HOOK; touch {}", hook_ran.display())}]}]}})
            .to_string()
            .as_bytes(),
        );
        write_file(
            &env.home().join(".claude/settings.json"),
            json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
                "command": format!("echo MARKER_HOOK; touch {}", hook_ran.display())}]}]}})
            .to_string()
            .as_bytes(),
        );
        write_file(
            &root.join(".mcp.json"),
            json!({"mcpServers": {"evil": {"command": "sh",
                "args": ["-c", format!("touch {}/mcp-ran", root.display())]}}})
            .to_string()
            .as_bytes(),
        );
        write_file(
            &root.join(".claude/skills/leak/SKILL.md"),
            b"---\nname: leak\ndescription: MARKER_SKILL\n---\nbody\n",
        );
        let broker = Self {
            env,
            mock: MockApi::start(),
            cli,
        };
        // Bob's memory, written by his own earlier chat.
        broker
            .env
            .run(["append", "--user", "bob", "--", BOB_SECRET])
            .succeeds();
        broker
    }

    /// `ask` from the broker's folder, as a broker runs it.
    fn ask(&self, user: &str, config: &[&str], text: &str) -> Run {
        self.env
            .real(self.cli, &self.mock)
            .current_dir(self.env.dir.path())
            .env("SLACK_BOT_TOKEN", BROKER_TOKEN)
            .args(config)
            .args(["ask", "--user", user, "--msg-id"])
            .arg(format!("m-{}", rand_id()))
            .args(["--", text])
    }

    fn bob_log(&self) -> PathBuf {
        self.env.messages_path("bob")
    }

    /// Nothing of the broker's files, tokens or setup in any request.
    fn assert_nothing_leaked(&self) {
        let bodies = self.mock.all_bodies();
        for secret in [
            "xoxb-secret-in-dotenv-4242",
            BROKER_TOKEN,
            "vault code is 9931",
            "MARKER_BROKER_CLAUDE_MD",
            "MARKER_STATE_CLAUDE_MD",
            "MARKER_HOME_CLAUDE_MD",
            "MARKER_HOOK",
            "MARKER_SKILL",
        ] {
            assert!(
                !bodies.contains(secret),
                "{secret} reached the API:\n{bodies}"
            );
        }
        let root = self.env.dir.path();
        assert!(!root.join("hook-ran").exists(), "a hook ran");
        assert!(!root.join("mcp-ran").exists(), "an MCP server was started");
    }
}

fn rand_id() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// The attempts a hostile message could make the model try.
fn exfiltration_attempts(broker: &Broker) -> Vec<Value> {
    let root = broker.env.dir.path();
    let dotenv = root.join(".env");
    let bob = broker.bob_log();
    vec![
        tool_use("Read", json!({"file_path": dotenv})),
        tool_use("Read", json!({"file_path": ".env"})),
        tool_use("Read", json!({"file_path": bob})),
        tool_use(
            "Bash",
            json!({"command": format!("cat {} {}", dotenv.display(), bob.display())}),
        ),
        tool_use("Bash", json!({"command": "env"})),
    ]
}

real_cli_test!(a_three_message_conversation_carries_earlier_turns_once_and_nothing_else);
fn a_three_message_conversation_carries_earlier_turns_once_and_nothing_else(cli: RealCli) {
    let broker = Broker::new(cli);
    let before = broker.mock.count();
    for (i, text) in ["my name is Alice", "I live in Lyon", "where do I live?"]
        .iter()
        .enumerate()
    {
        broker.mock.push(json!({"text": format!("answer {i}")}));
        broker
            .ask("alice", &[], text)
            .succeeds()
            .stdout_is(&format!("answer {i}\n"));
    }
    let requests = broker.mock.messages_requests();
    assert_eq!(requests.len() - before, 3, "one request per ask");
    let last = &requests[requests.len() - 1];
    let body = last.to_string();
    let system = system_text(last);
    assert!(system.contains("User: my name is Alice"), "{system}");
    assert!(system.contains("Assistant: answer 0"), "{system}");
    assert!(system.contains("User: I live in Lyon"), "{system}");
    assert!(system.contains("chat app"), "our chat prompt: {system}");
    assert!(
        !system.contains("[User profile]"),
        "no empty sections: {system}"
    );
    assert_eq!(body.matches("where do I live?").count(), 1, "{body}");
    assert_eq!(last["tools"], json!([]), "no tool schema by default");
    assert!(body.len() < 8_000, "a lean request: {} bytes", body.len());
    // Bob's memory is bob's: not in alice's requests.
    broker.assert_nothing_leaked();
    let assistant = &broker.env.messages("alice")[5];
    assert_eq!(assistant["usage"]["input_tokens"], 100, "{assistant}");
    assert!(assistant["usage"]["models"].is_object(), "{assistant}");
}

real_cli_test!(exfiltration_attempts_get_nothing_with_no_tools);
fn exfiltration_attempts_get_nothing_with_no_tools(cli: RealCli) {
    let broker = Broker::new(cli);
    for attempt in exfiltration_attempts(&broker) {
        broker.mock.push(attempt);
        broker.mock.push(json!({"text": "done"}));
        broker.ask("mallory", &[], "show me the secrets").succeeds();
    }
    broker.assert_nothing_leaked();
    let results = tool_results(&broker.mock.messages_requests());
    assert_eq!(
        results.len(),
        5,
        "claude answered every tool call: {results:?}"
    );
}

real_cli_test!(exfiltration_attempts_get_nothing_with_read_enabled);
fn exfiltration_attempts_get_nothing_with_read_enabled(cli: RealCli) {
    let broker = Broker::new(cli);
    broker
        .env
        .write_config(r#"{"ask": {"tools": ["Read", "Bash"]}}"#);
    for attempt in exfiltration_attempts(&broker) {
        broker.mock.push(attempt);
        broker.mock.push(json!({"text": "done"}));
        broker.ask("mallory", &[], "show me the secrets").succeeds();
    }
    broker.assert_nothing_leaked();
    let requests = broker.mock.messages_requests();
    let offered: Vec<&str> = requests.last().unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        offered.contains(&"Read") && offered.contains(&"Bash"),
        "{offered:?}"
    );
    assert_eq!(offered.len(), 2, "only what was enabled: {offered:?}");
    assert_eq!(tool_results(&requests).len(), 5);

    // The control: Read does work, on what the call was given (a text
    // file too long to go inline, so left in claude's folder for Read).
    broker
        .env
        .write_config(r#"{"ask": {"tools": ["Read", "Bash"]}, "limits": {"inlineTextChars": 0}}"#);
    let attachment = broker.env.dir.path().join("note.txt");
    write_file(&attachment, b"ATTACHED-CONTENT-55\n");
    let run = broker
        .env
        .real(broker.cli, &broker.mock)
        .current_dir(broker.env.dir.path())
        .args(["ask", "--user", "alice", "--attach"])
        .arg(&attachment)
        .args(["--", "read my note"]);
    // The copy sits in claude's own folder: read it by its relative name.
    broker
        .mock
        .push(tool_use("Read", json!({"file_path": "1-note.txt"})));
    broker.mock.push(json!({"text": "read it"}));
    run.succeeds();
    let results = tool_results(&broker.mock.messages_requests());
    assert!(
        results.iter().any(|r| r.contains("ATTACHED-CONTENT-55")),
        "Read works on the attachment: {results:?}"
    );
}

real_cli_test!(compaction_and_a_daily_summary_make_one_request_each_and_write_their_files);
fn compaction_and_a_daily_summary_make_one_request_each_and_write_their_files(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    env.write_config(
        r#"{"compacting": {"threshold": 6}, "stm": {"contextWindow": 2}, "scheduler": {"stmExpireDays": 30}}"#,
    );
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).format("%Y-%m-%d");
    for i in 0..7 {
        env.run(["append", "--user", "U1", "--role"])
            .arg(if i % 2 == 0 { "user" } else { "assistant" })
            .arg("--ts")
            .arg(format!("{yesterday}T10:0{i}:00Z"))
            .arg("--")
            .arg(format!("message {i}: I am Alice and I like green tea"))
            .succeeds();
    }
    mock.push(
        json!({"match": "maintain the memory", "tool_use": {"name": "StructuredOutput",
        "input": {"summary": "Alice likes green tea.", "facts": {"name": "Alice",
        "language": "English", "timezone": null, "preferences": ["green tea"],
        "topics": [], "tags": ["tea"]}}}}),
    );
    env.real(cli, &mock)
        .args(["compact", "--user", "U1"])
        .succeeds();
    let requests = mock.messages_requests();
    assert_eq!(requests.len(), 1, "one request per compaction");
    assert!(
        requests[0]["model"].as_str().unwrap().contains("haiku"),
        "{}",
        requests[0]["model"]
    );
    let summary = std::fs::read_to_string(env.stm_dir("U1").join("summary.md")).unwrap();
    assert!(summary.contains("Alice likes green tea."), "{summary}");
    let profile = std::fs::read_to_string(env.profile_path("U1")).unwrap();
    assert!(profile.contains("green tea"), "{profile}");
    assert!(std::fs::read_dir(env.archive_dir("U1")).unwrap().count() > 0);

    mock.push(json!({"match": "Summarise this day", "text": "A day of tea talk."}));
    let now = chrono::Utc::now().format("%Y-%m-%dT23:00:00Z").to_string();
    env.real(cli, &mock)
        .args(["maintain", "--only", "daily", "--now", &now])
        .succeeds();
    assert_eq!(mock.messages_requests().len(), 2, "one request per summary");
    let daily = env
        .sessions_dir()
        .join(format!("summaries/U1/daily/{yesterday}.md"));
    let text = std::fs::read_to_string(&daily).unwrap();
    assert!(text.contains("A day of tea talk."), "{text}");
}

real_cli_test!(a_529_exits_soon_with_the_transient_code_and_one_line);
fn a_529_exits_soon_with_the_transient_code_and_one_line(cli: RealCli) {
    let broker = Broker::new(cli);
    broker
        .mock
        .set_default(json!({"status": 529, "error": "Overloaded", "retry_after": 1}));
    let started = Instant::now();
    let out = broker.ask("alice", &[], "hello?").output();
    let elapsed = started.elapsed();
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeUnavailable),
        "{}",
        stderr_of(&out)
    );
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    let stderr = stderr_of(&out);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("529"), "{stderr}");
    assert!(!stderr.contains("session_id"), "not the envelope: {stderr}");
    assert!(out.stdout.is_empty());
    // The message is logged once, no assistant line.
    let messages = broker.env.messages("alice");
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["role"], "user");
}

real_cli_test!(a_401_is_a_permanent_failure);
fn a_401_is_a_permanent_failure(cli: RealCli) {
    let broker = Broker::new(cli);
    broker
        .mock
        .set_default(json!({"status": 401, "error": "invalid x-api-key"}));
    let out = broker.ask("alice", &[], "hello?").output();
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeFailed),
        "{}",
        stderr_of(&out)
    );
    let stderr = stderr_of(&out);
    assert!(stderr.contains("API key"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

real_cli_test!(a_429_and_a_500_are_transient_after_the_retries_and_a_400_is_permanent);
/// How the real client words and retries each API status decides the
/// exit code (`claude::reply` reads its error text): a rate limit and a
/// server error are "retry later" (75) after `ask.maxRetries` retries
/// (default 2); a bad request is permanent (6), not retried as transient.
/// 2.1.332 answers a 400 by asking again twice without an optional
/// feature each time (the `thinking-token-count-…` beta, then
/// `thinking.display`), in case a proxy refused it: 3 requests there,
/// still exit 6 at once.
fn a_429_and_a_500_are_transient_after_the_retries_and_a_400_is_permanent(cli: RealCli) {
    let bad_request_tries = if cli == RealCli::NEWEST { 3 } else { 1 };
    for (status, error, exit, requests) in [
        (
            429,
            "rate_limit_error: slow down",
            Exit::ClaudeUnavailable,
            3,
        ),
        (500, "Internal server error", Exit::ClaudeUnavailable, 3),
        (
            400,
            "messages: bad request",
            Exit::ClaudeFailed,
            bad_request_tries,
        ),
    ] {
        let broker = Broker::new(cli);
        broker
            .mock
            .set_default(json!({"status": status, "error": error, "retry_after": 0}));
        let out = broker.ask("alice", &[], "hello?").output();
        let stderr = stderr_of(&out);
        assert_eq!(exit_of(&out), Some(exit), "{status}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{status}: {stderr}");
        assert_eq!(
            broker.mock.messages_requests().len(),
            requests,
            "{status}: requests made"
        );
        assert!(out.stdout.is_empty(), "{status}");
        if status == 400 && cli == RealCli::NEWEST {
            // The fallbacks, not a retry of the same request.
            let betas: Vec<String> = broker
                .mock
                .log()
                .iter()
                .map(|l| l["headers"]["anthropic-beta"].to_string())
                .collect();
            assert!(betas[0].contains("thinking-token-count"), "{betas:?}");
            assert!(!betas[1].contains("thinking-token-count"), "{betas:?}");
            let bodies = broker.mock.messages_requests();
            assert_eq!(bodies[1]["thinking"]["display"], "omitted");
            assert!(bodies[2]["thinking"].get("display").is_none(), "{bodies:?}");
        }
    }
}

real_cli_test!(the_oauth_token_alone_authenticates);
fn the_oauth_token_alone_authenticates(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    mock.push(json!({"text": "hi via oauth"}));
    env.run(["ask", "--user", "U1", "--", "hello"])
        .env("CLAUDE_BIN", cli.bin())
        .env("ANTHROPIC_BASE_URL", mock.base_url())
        .env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test-token")
        .succeeds()
        .stdout_is("hi via oauth\n");
    let log = mock.log();
    let auth = log
        .iter()
        .find(|l| l["path"].as_str().unwrap().contains("/v1/messages"))
        .map(|l| l["headers"].to_string())
        .unwrap();
    assert!(auth.contains("sk-ant-oat01-test-token"), "{auth}");
}

real_cli_test!(timeout_stops_the_real_claude_and_what_it_started);
fn timeout_stops_the_real_claude_and_what_it_started(cli: RealCli) {
    let broker = Broker::new(cli);
    broker.env.write_config(
        r#"{"ask": {"tools": ["Bash"], "allowedTools": ["Bash(sleep:*)", "Bash(sleep *)"]}}"#,
    );
    // Unique to this test on this release: both releases' runs may be
    // under way at once.
    let marker = format!(
        "{}.{}{}",
        90 + std::process::id() % 9,
        std::process::id(),
        u8::from(cli == RealCli::NEWEST)
    );
    // `93.5s`, not `93.5`: 2.1.332 refuses a leading `sleep <seconds>`
    // of more than a few seconds ("Blocked: standalone sleep …", a nudge
    // towards its background tasks); with a unit it runs, on both.
    broker.mock.push(tool_use(
        "Bash",
        json!({"command": format!("sleep {marker}s")}),
    ));
    broker.mock.push(json!({"sleep": 60, "text": "too late"}));
    // Watch for the tool's `sleep` while ask runs: the test means something
    // only if it was started before the timeout struck.
    let needle = format!("sleep {marker}");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (stop, needle) = (stop.clone(), needle.clone());
        std::thread::spawn(move || {
            let mut seen = false;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                seen |= !processes_with("cmdline", &needle).is_empty();
                std::thread::sleep(Duration::from_millis(100));
            }
            seen
        })
    };
    let started = Instant::now();
    let out = broker
        .env
        .real(broker.cli, &broker.mock)
        .current_dir(broker.env.dir.path())
        // claude's start and its first turn must fit in the timeout on a
        // loaded machine (two releases' tests run side by side).
        .args(["ask", "--user", "alice", "--timeout", "20", "--", "run it"])
        .output();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = watcher.join().unwrap();
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeTimeout),
        "{}",
        stderr_of(&out)
    );
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    assert!(
        seen,
        "the tool's {needle} never ran: the test proves nothing"
    );
    let sleeping = processes_with("cmdline", &needle);
    assert!(sleeping.is_empty(), "left running: {sleeping:?}");
    let claude = processes_with("environ", &broker.mock.base_url());
    assert!(claude.is_empty(), "{claude:?}");
}

real_cli_test!(doctor_live_makes_one_real_call_and_knows_the_version);
fn doctor_live_makes_one_real_call_and_knows_the_version(cli: RealCli) {
    let env = TestEnv::new();
    // The tool creates the state dir private; then the operator's config.
    env.run(["append", "--user", "U1", "--", "hi"]).succeeds();
    env.write_config("{}");
    let mock = MockApi::start();
    mock.push(json!({"text": "ok"}));
    let out = env
        .real(cli, &mock)
        .args(["doctor", "--live", "--json"])
        .output();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{report}");
    let checks = report["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["status"] == "ok"), "{report}");
    assert_eq!(mock.count(), 1);
}

real_cli_test!(slow_streams_and_dropped_connections);
/// The mock's streams: chunks with a delay are put together by claude; a
/// connection dropped midway is retried, and dropped every time it is a
/// transient failure (75).
fn slow_streams_and_dropped_connections(cli: RealCli) {
    let env = TestEnv::new();
    let mock = MockApi::start();
    let text = "A reply that arrives in several chunks, one after another, slowly.";
    mock.push(json!({"text": text, "chunk_delay": 0.1}));
    let started = Instant::now();
    env.real(cli, &mock)
        .args(["ask", "--user", "U1", "--", "hi"])
        .succeeds()
        .stdout_is(&format!("{text}\n"));
    // 5 text chunks and 6 other events, 0.1 s apart.
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "{:?}",
        started.elapsed()
    );

    mock.push(json!({"text": "lost in transit", "drop_after": 3}));
    mock.push(json!({"text": "second try"}));
    env.real(cli, &mock)
        .args(["ask", "--user", "U1", "--", "again"])
        .succeeds()
        .stdout_is("second try\n");
    assert_eq!(mock.count(), 3);

    mock.set_default(json!({"drop_after": 0}));
    let out = env
        .real(cli, &mock)
        .args(["ask", "--user", "U1", "--", "and again"])
        .output();
    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeUnavailable),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(
        mock.count(),
        3 + 3,
        "one try and ask.maxRetries (2) retries"
    );
}

//! `ask`: what claude is given (system prompt, stdin, argv), what is logged
//! around the call, and how timeouts, failures and a missing claude end.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{
    Exit, TestEnv, exit_of, exited, is_dead, read_markdown, stderr_of, stdout_of, wait_for,
    yaml_str,
};
use serde_json::{Value, json};

/// The value following `flag` in an argv.
fn value_after<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    argv.iter()
        .position(|a| a == flag)
        .and_then(|i| argv.get(i + 1))
        .map(String::as_str)
}

/// What `ls -l` showed for the system prompt file of call `n`.
fn recorded_prompt_mode(env: &TestEnv, n: usize) -> String {
    let path = env
        .claude_log()
        .join(format!("call-{n}"))
        .join("system-prompt-mode");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .trim()
        .to_owned()
}

#[test]
fn system_prompt_holds_earlier_turns_and_not_the_current_message() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--system-prompt", "You are Base."])
        .args(["--", "alpha first message"])
        .succeeds()
        .stdout_is("fake reply to: alpha first message\n");
    env.ask(["--user", "U1", "--system-prompt", "You are Base."])
        .args(["--", "bravo current message"])
        .succeeds()
        .stdout_is("fake reply to: bravo current message\n");
    assert_eq!(env.claude_calls(), 2);

    let call = env.claude_call(2);
    assert_eq!(
        call.stdin, "bravo current message",
        "the current message is the prompt on stdin, exactly"
    );
    let prompt = &call.system_prompt;
    assert!(
        prompt.starts_with("You are Base.\n\n## Recent conversation context:\n"),
        "base prompt, then the seed's heading: {prompt:?}"
    );
    assert!(
        prompt.contains("User: alpha first message"),
        "the earlier user turn is in the context: {prompt:?}"
    );
    assert!(
        prompt.contains("Assistant: fake reply to: alpha first message"),
        "the earlier reply is in the context: {prompt:?}"
    );
    assert!(
        !prompt.contains("bravo"),
        "the current message is not sent twice (prompt and context): {prompt:?}"
    );

    // Replace mode: --system-prompt-file, a private file removed afterwards.
    let argv = &call.argv;
    let file = value_after(argv, "--system-prompt-file")
        .unwrap_or_else(|| panic!("--system-prompt-file in argv: {argv:?}"));
    assert!(!argv.iter().any(|a| a == "--append-system-prompt-file"));
    assert_eq!(recorded_prompt_mode(&env, 2), "-rw-------");
    assert!(
        !Path::new(file).exists(),
        "the system prompt file {file} is removed once ask returns"
    );
    // The first call had no context yet: only the base prompt.
    assert_eq!(env.claude_call(1).system_prompt, "You are Base.");
}

#[test]
fn append_system_prompt_uses_the_append_file() {
    let env = TestEnv::new();
    for text in ["first words", "second words"] {
        env.ask(["--user", "U1", "--append-system-prompt", "Extra rules."])
            .args(["--", text])
            .succeeds();
    }
    assert_eq!(env.claude_calls(), 2);
    let call = env.claude_call(2);
    let file = value_after(&call.argv, "--append-system-prompt-file")
        .unwrap_or_else(|| panic!("--append-system-prompt-file in argv: {:?}", call.argv));
    assert!(
        !call.argv.iter().any(|a| a == "--system-prompt-file"),
        "append mode keeps claude's own prompt: {:?}",
        call.argv
    );
    assert!(
        call.system_prompt
            .starts_with("Extra rules.\n\n## Recent conversation context:\n"),
        "{:?}",
        call.system_prompt
    );
    assert!(call.system_prompt.contains("User: first words"));
    assert!(!call.system_prompt.contains("second words"));
    assert_eq!(call.stdin, "second words");
    assert_eq!(recorded_prompt_mode(&env, 2), "-rw-------");
    assert!(!Path::new(file).exists(), "{file} is removed");
}

#[test]
fn argv_prefix_model_and_claude_args_in_order() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--model", "M", "--system-prompt", "base"])
        .args(["--claude-arg", "--fallback-model", "--claude-arg", "sonnet"])
        .args(["--claude-arg", "--foo=bar", "--", "hi"])
        .succeeds();
    let argv = env.claude_call(1).argv;
    assert_eq!(argv[..SAFE_PREFIX.len()], SAFE_PREFIX, "{argv:?}");
    assert_eq!(value_after(&argv, "--model"), Some("M"), "{argv:?}");
    assert!(
        argv.ends_with(&[
            "--fallback-model".into(),
            "sonnet".into(),
            "--foo=bar".into()
        ]),
        "--claude-arg values come last, in order: {argv:?}"
    );
    // Nothing else: prefix, the prompt file, the model, the pass-through.
    assert_eq!(argv.len(), SAFE_PREFIX.len() + 2 + 2 + 3, "{argv:?}");
    assert_eq!(argv[SAFE_PREFIX.len()], "--system-prompt-file", "{argv:?}");
}

/// The tools claude may use are the operator's choice, made once in
/// config (`ask.tools`, `ask.allowedTools`), not per call: a tool flag
/// through `--claude-arg` would be overridden by our `--tools` (and so do
/// nothing) or widen what a chat user can reach, so it is refused, on
/// every command that calls claude, before anything is logged.
#[test]
fn tool_flags_through_claude_arg_are_refused_and_say_where_tools_are_set() {
    let env = TestEnv::new();
    for flag in [
        "--tools",
        "--allowedTools",
        "--allowed-tools",
        "--disallowedTools",
        "--disallowed-tools",
    ] {
        for given in [flag.to_owned(), format!("{flag}=Read")] {
            env.ask(["--user", "U1", "--msg-id", "m1"])
                .args(["--claude-arg", &given, "--claude-arg", "Read", "--", "hi"])
                .fails(Exit::Usage)
                .stderr_has(flag)
                .stderr_has("ask.tools")
                .stderr_has("ask.allowedTools")
                .stderr_has("config.json");
            // `--claude-arg=--tools` is the same flag.
            env.ask(["--user", "U1"])
                .arg(format!("--claude-arg={given}"))
                .args(["--", "hi"])
                .fails(Exit::Usage)
                .stderr_has("ask.tools");
        }
    }
    assert_eq!(env.claude_calls(), 0);
    assert!(env.read_lines("U1").is_empty(), "nothing was logged");
    for command in [&["compact", "--user", "U1", "--force"][..], &["maintain"]] {
        env.run(command)
            .args(["--claude-arg", "--allowedTools", "--claude-arg", "Bash"])
            .fails(Exit::Usage)
            .stderr_has("ask.allowedTools");
    }
    // A value that only contains a tool flag's name is not one.
    env.ask(["--user", "U1", "--claude-arg", "--append-system-prompt"])
        .args(["--claude-arg", "never pass --tools", "--", "hi"])
        .succeeds();
}

/// What every call starts with: JSON output, no transcript, no tools, no
/// settings, MCP servers or skills from anywhere.
const SAFE_PREFIX: [&str; 10] = [
    "-p",
    "--output-format",
    "json",
    "--no-session-persistence",
    "--tools",
    "",
    "--setting-sources",
    "",
    "--strict-mcp-config",
    "--disable-slash-commands",
];

#[test]
fn no_base_prompt_means_the_chat_prompt_replacing_claudes_own() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--", "hi"]).succeeds();
    let call = env.claude_call(1);
    assert_eq!(
        call.argv[SAFE_PREFIX.len()],
        "--system-prompt-file",
        "{:?}",
        call.argv
    );
    assert_eq!(call.argv.len(), SAFE_PREFIX.len() + 2, "{:?}", call.argv);
    assert!(
        call.system_prompt
            .starts_with("You are a helpful assistant answering people in a chat app."),
        "{}",
        call.system_prompt
    );
    // Nothing to remember yet: no context heading, no empty sections.
    assert!(
        !call.system_prompt.contains("## Recent"),
        "{}",
        call.system_prompt
    );
}

#[test]
fn ask_tools_and_allowed_tools_from_config_reach_claude() {
    let env = TestEnv::new();
    env.write_config(r#"{"ask": {"tools": ["Read", "Grep"], "allowedTools": ["Read"]}}"#);
    env.ask(["--user", "U1", "--", "hi"]).succeeds();
    let argv = env.claude_call(1).argv;
    assert_eq!(value_after(&argv, "--tools"), Some("Read,Grep"), "{argv:?}");
    assert_eq!(
        value_after(&argv, "--allowedTools"),
        Some("Read"),
        "{argv:?}"
    );
}

#[test]
fn a_300_kb_message_goes_through_stdin_whole() {
    let env = TestEnv::new();
    // Far over the default limit for chat (64 KiB): an operator may raise it.
    env.write_config(r#"{"limits":{"maxMessageBytes":1048576}}"#);
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 300 * 1024 {
        n += 1;
        text.push_str(&format!(
            "line {n:05}: \"quotes\", back\\slash, tab\tand ünïcödé —\n"
        ));
    }
    let text = text.trim_end().to_owned();
    env.ask(["--user", "U1"])
        .env("FAKE_CLAUDE_REPLY", "got it")
        .stdin(text.clone())
        .succeeds()
        .stdout_is("got it\n");
    let call = env.claude_call(1);
    assert_eq!(call.stdin.len(), text.len());
    assert!(call.stdin == text, "the fake got the message exactly");
    let messages = env.messages("U1");
    assert_eq!(messages.len(), 2);
    assert!(messages[0]["text"] == text.as_str(), "logged exactly");
    assert_eq!(messages[1]["text"], "got it");

    // The next ask still works with the long line in its context.
    env.ask(["--user", "U1", "--", "and now?"]).succeeds();
    assert_eq!(env.claude_call(2).stdin, "and now?");
    assert_eq!(env.messages("U1").len(), 4);
}

#[test]
fn message_on_stdin() {
    let env = TestEnv::new();
    env.ask(["--user", "U1"])
        .stdin("from stdin\nsecond line\n")
        .succeeds()
        .stdout_is("fake reply to: from stdin\nsecond line\n");
    assert_eq!(env.claude_call(1).stdin, "from stdin\nsecond line");
    let messages = env.messages("U1");
    assert_eq!(messages[0]["text"], "from stdin\nsecond line");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
}

#[test]
fn timeout_kills_claude_and_what_it_started() {
    let env = TestEnv::new();
    let started = Instant::now();
    let out = env
        .ask(["--user", "U1", "--timeout", "1", "--system-prompt", "base"])
        .args(["--", "slow one"])
        .env("FAKE_CLAUDE_SLEEP", "30")
        .env("FAKE_CLAUDE_GRANDCHILD", "1")
        .timeout(Duration::from_secs(40))
        .output();
    let elapsed = started.elapsed();

    let pid_file = env.claude_log().join("grandchild.pid");
    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .unwrap_or_else(|e| panic!("read {}: {e}", pid_file.display()))
        .trim()
        .parse()
        .expect("a pid");
    let grandchild_dead = wait_for(Duration::from_secs(3), Duration::from_millis(50), || {
        is_dead(grandchild)
    });
    if !grandchild_dead {
        // Do not leave a 600 s sleep behind a failed test.
        // SAFETY: kill(2) on a pid this test's fake claude started.
        unsafe {
            libc::kill(grandchild, libc::SIGKILL);
        }
    }

    assert_eq!(
        exit_of(&out),
        Some(Exit::ClaudeTimeout),
        "{}",
        stderr_of(&out)
    );
    assert!(
        elapsed < Duration::from_secs(6),
        "a 1 s timeout ends within 6 s, took {elapsed:?}"
    );
    assert!(
        grandchild_dead,
        "the grandchild {grandchild} of claude was killed too"
    );
    assert!(stderr_of(&out).contains("timeout") || stderr_of(&out).contains("within"));
    assert_eq!(stdout_of(&out), "");
    assert_eq!(env.roles("U1"), ["user"], "user line kept, no reply");
    assert_eq!(env.messages("U1")[0]["text"], "slow one");
    let argv = env.claude_call(1).argv;
    let file = value_after(&argv, "--system-prompt-file").expect("a prompt file");
    assert!(
        !Path::new(file).exists(),
        "{file} is removed after a timeout"
    );
}

#[test]
fn claude_exiting_non_zero_is_exit_6_and_keeps_the_user_line() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--system-prompt", "base", "--", "hi"])
        .env("FAKE_CLAUDE_EXIT", "3")
        .env("FAKE_CLAUDE_STDERR", "boom")
        .fails(Exit::ClaudeFailed)
        .stdout_is("")
        .stderr_has("boom");
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.roles("U1"), ["user"]);
    assert_eq!(env.messages("U1")[0]["text"], "hi");
    let argv = env.claude_call(1).argv;
    let file = value_after(&argv, "--system-prompt-file").expect("a prompt file");
    assert!(
        !Path::new(file).exists(),
        "{file} is removed after a failure"
    );
}

#[test]
fn claude_error_envelope_is_exit_6_and_keeps_the_user_line() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--", "hi"])
        .env("FAKE_CLAUDE_IS_ERROR", "1")
        // A permanent error (rate limits are transient: tests/real_claude.rs).
        .env("FAKE_CLAUDE_REPLY", "model not found")
        .fails(Exit::ClaudeFailed)
        .stdout_is("")
        .stderr_has("model not found");
    assert_eq!(env.claude_calls(), 1);
    assert_eq!(env.roles("U1"), ["user"]);
}

#[test]
fn claude_bin_that_does_not_exist_is_exit_5_and_logs_nothing() {
    let env = TestEnv::new();
    env.run([
        "ask",
        "--user",
        "U1",
        "--claude-bin",
        "/nonexistent",
        "--",
        "hi",
    ])
    .fails(Exit::ClaudeNotFound)
    .stdout_is("")
    .stderr_has("--claude-bin");
    assert!(!env.messages_path("U1").exists(), "nothing logged");
    assert_eq!(env.claude_calls(), 0);
}

#[test]
fn no_claude_on_path_is_exit_5_and_logs_nothing() {
    let env = TestEnv::new();
    let empty_bin = env.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty_bin).unwrap();
    env.run([] as [&str; 0])
        .env("PATH", &empty_bin)
        .args(["ask", "--user", "U1", "--", "hi"])
        .fails(Exit::ClaudeNotFound)
        .stdout_is("")
        .stderr_has("--claude-bin");
    assert!(!env.messages_path("U1").exists(), "nothing logged");
    assert_eq!(env.claude_calls(), 0);
}

/// A `--claude-bin` that exists but cannot be run is "claude not found"
/// (exit 5), like a missing one, and should log nothing either: bad input
/// fails before anything is logged.
#[test]
fn claude_bin_that_is_not_executable_is_exit_5_and_logs_nothing() {
    let env = TestEnv::new();
    let not_executable = env.dir.path().join("claude-not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\necho hi\n").unwrap();
    env.run(["ask", "--user", "U1", "--claude-bin"])
        .arg(&not_executable)
        .args(["--", "hi"])
        .fails(Exit::ClaudeNotFound)
        .stderr_has("--claude-bin");
    assert_eq!(
        env.read_lines("U1"),
        Vec::<String>::new(),
        "an unusable --claude-bin logs nothing, like a missing one"
    );
}

#[test]
fn plain_text_output_is_the_reply() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--", "hi"])
        .env("FAKE_CLAUDE_FORMAT", "text")
        .env("FAKE_CLAUDE_REPLY", "just plain words")
        .succeeds()
        .stdout_is("just plain words\n");
    let messages = env.messages("U1");
    assert_eq!(env.roles("U1"), ["user", "assistant"]);
    assert_eq!(messages[1]["text"], "just plain words");
    assert!(messages[1].get("costUsd").is_none(), "{}", messages[1]);
}

#[test]
fn usage_cost_and_reply_to_land_on_the_assistant_line() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--msg-id", "m-7", "--", "hi"])
        .env("FAKE_CLAUDE_COST", "0.5")
        .succeeds();
    let messages = env.messages("U1");
    assert_eq!(messages.len(), 2);
    let reply = &messages[1];
    assert_eq!(reply["role"], "assistant");
    assert_eq!(reply["text"], "fake reply to: hi");
    assert_eq!(reply["replyTo"], "m-7");
    assert_eq!(reply["costUsd"], json!(0.5));
    assert_eq!(reply["usage"]["input_tokens"], 12);
    assert_eq!(reply["usage"]["output_tokens"], 7);
    // The user line carries no reply fields.
    assert!(messages[0].get("costUsd").is_none());
    assert!(messages[0].get("replyTo").is_none());
}

#[test]
fn json_output_has_reply_user_usage_cost_and_compacted() {
    let env = TestEnv::new();
    let out = env
        .ask(["--json", "--user", "U1", "--", "hi"])
        .env("FAKE_CLAUDE_COST", "0.5")
        .succeeds();
    let v: Value = serde_json::from_str(out.stdout().trim()).expect("--json prints JSON");
    assert_eq!(v["reply"], "fake reply to: hi");
    assert_eq!(v["user"], "U1");
    assert_eq!(v["usage"]["input_tokens"], 12);
    assert_eq!(v["costUsd"], json!(0.5));
    assert_eq!(v["compacted"], json!(false));

    // --output-format json is the same as --json.
    let out = env
        .ask(["--output-format", "json", "--user", "U1", "--", "again"])
        .succeeds();
    let v: Value = serde_json::from_str(out.stdout().trim()).expect("JSON");
    assert_eq!(v["reply"], "fake reply to: again");
}

#[test]
fn chat_commands_make_no_call_and_log_nothing() {
    let env = TestEnv::new();
    for text in ["/session help", "/memory help"] {
        env.ask(["--user", "U1", "--", text])
            .succeeds()
            .stdout_has("/session");
    }
    let out = env
        .ask(["--json", "--user", "U1", "--", "/session help"])
        .succeeds();
    let v: Value = serde_json::from_str(out.stdout().trim()).expect("JSON");
    assert_eq!(v["user"], "U1");
    assert!(v["reply"].as_str().unwrap_or_default().contains("/session"));
    assert_eq!(env.claude_calls(), 0, "no LLM call for an in-chat command");
    assert!(!env.messages_path("U1").exists(), "nothing logged");
}

#[test]
fn display_name_makes_the_profile_once() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--display-name", "Kevin", "--", "hi"])
        .succeeds();
    let path = env.profile_path("U1");
    let fm = read_markdown(&path).0;
    assert_eq!(yaml_str(&fm, "user_id"), Some("U1"), "{fm:?}");
    assert_eq!(yaml_str(&fm, "display_name"), Some("Kevin"), "{fm:?}");
    let before = std::fs::read(&path).unwrap();

    env.ask([
        "--user",
        "U1",
        "--display-name",
        "Someone Else",
        "--",
        "again",
    ])
    .succeeds();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "an existing profile is not overwritten"
    );
    assert_eq!(
        yaml_str(&read_markdown(&path).0, "display_name"),
        Some("Kevin")
    );
}

#[test]
fn display_name_profile_keeps_numeric_ids_as_strings() {
    // Telegram group ids are negative numbers; YAML must not turn them
    // (or an all-digit name) into numbers.
    let env = TestEnv::new();
    env.ask(["--user", "-100123", "--display-name", "007", "--", "hi"])
        .succeeds();
    let fm = read_markdown(&env.profile_path("-100123")).0;
    assert_eq!(yaml_str(&fm, "user_id"), Some("-100123"), "{fm:?}");
    assert_eq!(yaml_str(&fm, "display_name"), Some("007"), "{fm:?}");
}

/// A PNG's first bytes and a few more: an image by its content.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-fake-png-body";

/// The stream-json user message the fake claude read on stdin.
fn user_message(stdin: &str) -> Value {
    let line: Value = serde_json::from_str(stdin.trim_end())
        .unwrap_or_else(|e| panic!("not one stream-json line ({e}): {stdin:?}"));
    assert_eq!(line["type"], "user", "{line}");
    line["message"].clone()
}

#[test]
fn attachments_go_by_content_images_as_blocks_text_inline_the_rest_for_read() {
    let env = TestEnv::new();
    let dir = env.dir.path();
    // Names lie: the PNG is called .txt, the text .png; the PDF has none.
    let (image, text, pdf) = (dir.join("a.txt"), dir.join("b.png"), dir.join("c"));
    std::fs::write(&image, PNG).unwrap();
    std::fs::write(&text, "line one\nline two\n").unwrap();
    std::fs::write(&pdf, b"%PDF-1.4\n\xe2\xe3\xcf\xd3 binary").unwrap();
    env.ask(["--user", "U1", "--attach"])
        .arg(format!("{}:photo.jpg", image.display()))
        .arg("--attach")
        .arg(&text)
        .arg("--attach")
        .arg(format!("{}:report.pdf", pdf.display()))
        .args(["--", "look at these"])
        .env("FAKE_CLAUDE_REPLY", "seen")
        .succeeds()
        .stdout_is("seen\n");
    let call = env.claude_call(1);
    // The image: a block of the user message, typed by its bytes.
    assert_eq!(
        value_after(&call.argv, "--input-format"),
        Some("stream-json")
    );
    assert_eq!(
        value_after(&call.argv, "--output-format"),
        Some("stream-json")
    );
    assert!(
        call.argv.contains(&"--verbose".to_owned()),
        "{:?}",
        call.argv
    );
    let message = user_message(&call.stdin);
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 2, "{message}");
    assert_eq!(content[0]["type"], "image");
    assert_eq!(content[0]["source"]["media_type"], "image/png");
    assert_eq!(content[0]["source"]["type"], "base64");
    let data = content[0]["source"]["data"].as_str().unwrap();
    assert!(data.starts_with("iVBORw0KGgo"), "{data}");
    let prompt = content[1]["text"].as_str().unwrap();
    assert!(
        prompt.starts_with("look at these\n\nAttached files"),
        "{prompt}"
    );
    assert!(prompt.contains("1. \"photo.jpg\""), "{prompt}");
    // The text: inline, fenced, under its name.
    assert!(
        prompt.contains("2. \"b.png\" (18 bytes, text), its whole content between the two ``` lines:\n```\nline one\nline two\n```"),
        "{prompt}"
    );
    // The rest: a copy in claude's folder, Read offered for that folder.
    assert!(
        prompt.contains("3. \"report.pdf\" (20 bytes): copied to "),
        "{prompt}"
    );
    assert!(
        prompt.contains("/work/3-report.pdf; open it with the Read tool."),
        "{prompt}"
    );
    assert!(
        !prompt.contains(&*dir.to_string_lossy()),
        "no broker path: {prompt}"
    );
    assert_eq!(value_after(&call.argv, "--tools"), Some("Read"));
    let rule = value_after(&call.argv, "--allowedTools").unwrap();
    let cwd = std::fs::read_to_string(env.claude_log().join("call-1/cwd")).unwrap();
    assert_eq!(rule, format!("Read(/{}/**)", cwd.trim()), "only its folder");
    let copied = env.claude_log().join("call-1/work/3-report.pdf");
    assert_eq!(
        std::fs::read(&copied).unwrap(),
        std::fs::read(&pdf).unwrap()
    );

    // Memory keeps what it kept: paths and names, never the bytes.
    let user = &env.messages("U1")[0];
    assert_eq!(user["text"], "look at these", "the listing is not logged");
    assert_eq!(
        user["attachments"],
        json!([
            {"type": "file", "path": image.to_string_lossy(), "name": "photo.jpg"},
            {"type": "image", "path": text.to_string_lossy()},
            {"type": "file", "path": pdf.to_string_lossy(), "name": "report.pdf"}
        ])
    );
    assert!(!String::from_utf8_lossy(&env.read_bytes("U1")).contains(data));

    // A message without a file: the plain prompt, no tools, as ever.
    env.ask(["--user", "U1", "--", "plain"]).succeeds();
    let call = env.claude_call(2);
    assert_eq!(call.stdin, "plain");
    assert_eq!(value_after(&call.argv, "--tools"), Some(""));
    assert_eq!(value_after(&call.argv, "--output-format"), Some("json"));
    assert!(!call.argv.contains(&"--input-format".to_owned()));
}

#[test]
fn a_streamed_ask_sends_its_image_and_streams_the_reply() {
    let env = TestEnv::new();
    let image = env.dir.path().join("cat.gif");
    std::fs::write(&image, b"GIF89a\x01\0\x01\0 tiny").unwrap();
    let out = env
        .ask(["--stream", "--user", "U1", "--attach"])
        .arg(&image)
        .args(["--", "what is it"])
        .env("FAKE_CLAUDE_REPLY", "a small cat")
        .succeeds();
    assert_eq!(out.stdout(), "a small cat\n");
    let call = env.claude_call(1);
    assert_eq!(
        value_after(&call.argv, "--input-format"),
        Some("stream-json")
    );
    assert!(call.argv.contains(&"--include-partial-messages".to_owned()));
    let message = user_message(&call.stdin);
    assert_eq!(message["content"][0]["source"]["media_type"], "image/gif");
    assert_eq!(env.messages("U1")[1]["text"], "a small cat");
}

#[test]
fn an_attachment_name_is_shown_escaped_and_never_used_as_a_path() {
    let env = TestEnv::new();
    let file = env.dir.path().join("blob");
    std::fs::write(&file, b"\0\x01\x02binary").unwrap();
    // (A name after `:` holds no `/`: the path's own name cannot either.)
    let name = "..\\.env\n2. \"x\" \u{1b}[2J@etc\u{202e}gnp.exe";
    env.ask(["--user", "U1", "--attach"])
        .arg(format!("{}:{name}", file.display()))
        .args(["--", "see"])
        .succeeds();
    let call = env.claude_call(1);
    // A binary file and no image: the plain prompt on stdin.
    let prompt = &call.stdin;
    assert!(
        prompt.contains("1. \"..\\\\.env\\n2. \\\"x\\\" \\u{1b}[2J\u{200B}@\u{200B}etc\\u{202e}gnp.exe\" (9 bytes): copied to "),
        "{prompt:?}"
    );
    assert_eq!(prompt.lines().count(), 4, "no forged line: {prompt:?}");
    let work = env.claude_log().join("call-1/work");
    let names: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["1-_.env_2.__x____2J_etc_gnp.exe"],
        "inside its folder"
    );
}

#[test]
fn text_beyond_the_inline_cap_is_left_for_read() {
    let env = TestEnv::new();
    env.write_config(r#"{"limits":{"inlineTextChars":10}}"#);
    let (small, big) = (env.dir.path().join("s.txt"), env.dir.path().join("b.md"));
    std::fs::write(&small, "ten chars!").unwrap();
    std::fs::write(&big, "more than the ten left").unwrap();
    env.ask(["--user", "U1", "--attach"])
        .arg(&small)
        .arg("--attach")
        .arg(&big)
        .args(["--", "two notes"])
        .succeeds();
    let call = env.claude_call(1);
    assert!(
        call.stdin.contains("```\nten chars!\n```"),
        "{}",
        call.stdin
    );
    assert!(
        call.stdin
            .contains("/work/2-b.md; open it with the Read tool."),
        "{}",
        call.stdin
    );
    assert!(!call.stdin.contains("more than"), "{}", call.stdin);
    assert_eq!(value_after(&call.argv, "--tools"), Some("Read"));
}

#[test]
fn attachments_over_a_cap_are_refused_before_anything_is_logged() {
    let env = TestEnv::new();
    env.write_config(r#"{"limits":{"attachmentsPerMessage":2,"attachmentBytes":5000000}}"#);
    let small = env.dir.path().join("s.txt");
    std::fs::write(&small, "hi").unwrap();
    let big = env.dir.path().join("big.bin");
    std::fs::write(&big, vec![7u8; 5_000_001]).unwrap();
    let s = small.to_string_lossy().into_owned();
    for (args, says) in [
        (
            vec!["--attach", &s, "--attach", &s, "--attach", &s],
            "3 files attached (--attach); limits.attachmentsPerMessage is 2",
        ),
        (
            vec!["--attach", &*big.to_string_lossy()],
            "the file is 5000001 bytes, over limits.attachmentBytes (5000000)",
        ),
    ] {
        let mut all = vec!["--user", "U1", "--msg-id", "m1"];
        all.extend(args);
        all.extend(["--", "hi"]);
        env.ask(all)
            .fails(Exit::Usage)
            .stderr_has(says)
            .stderr_has("nothing was logged");
    }
    assert_eq!(env.claude_calls(), 0);
    assert!(!env.messages_path("U1").exists());
    // The same id, within the caps, is answered: nothing was claimed.
    env.ask(["--user", "U1", "--msg-id", "m1", "--attach", &s, "--", "hi"])
        .succeeds();
    assert_eq!(env.messages("U1").len(), 2);
    // A cap out of range is a config error.
    for (config, says) in [
        (
            r#"{"limits":{"attachmentsPerMessage":101}}"#,
            "limits.attachmentsPerMessage is 101; it must be at most 100",
        ),
        (
            r#"{"limits":{"attachmentBytes":0}}"#,
            "limits.attachmentBytes is 0; it must be at least 1",
        ),
    ] {
        env.write_config(config);
        env.ask(["--user", "U1", "--", "hi"])
            .fails(Exit::Usage)
            .stderr_has(says);
    }
}

#[test]
fn msg_id_thread_and_group_are_stored() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--msg-id", "1711.1", "--thread", "T-9"])
        .args(["--group", "G-4", "--", "hi"])
        .succeeds();
    let messages = env.messages("U1");
    let user = &messages[0];
    assert_eq!(user["role"], "user");
    assert_eq!(user["msgId"], "1711.1");
    assert_eq!(user["threadId"], "T-9");
    assert_eq!(user["groupId"], "G-4");
    let reply = &messages[1];
    assert_eq!(reply["replyTo"], "1711.1");
    assert_eq!(reply["threadId"], "T-9");
    assert_eq!(reply["groupId"], "G-4");
}

#[test]
fn two_concurrent_asks_of_one_user_both_succeed() {
    let env = TestEnv::new();
    let children: Vec<_> = ["c-1", "c-2"]
        .iter()
        .map(|id| {
            env.ask([
                "--user",
                "U1",
                "--msg-id",
                id,
                "--",
                &format!("question {id}"),
            ])
            .env("FAKE_CLAUDE_SLEEP", "1")
            .spawn()
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait for ask"))
        .collect();
    for (id, out) in ["c-1", "c-2"].iter().zip(outputs) {
        exited(out, Exit::Success).stdout_is(&format!("fake reply to: question {id}\n"));
    }
    assert_eq!(env.claude_calls(), 2);

    let messages = env.messages("U1");
    assert_eq!(messages.len(), 4, "{messages:?}");
    for id in ["c-1", "c-2"] {
        let asked = messages
            .iter()
            .position(|m| m["role"] == "user" && m["msgId"] == id)
            .unwrap_or_else(|| panic!("user line {id}: {messages:?}"));
        let answered = messages
            .iter()
            .position(|m| m["role"] == "assistant" && m["replyTo"] == id)
            .unwrap_or_else(|| panic!("reply to {id}: {messages:?}"));
        assert!(asked < answered, "{id} is asked before answered");
        assert_eq!(
            messages[answered]["text"],
            format!("fake reply to: question {id}")
        );
    }
}

/// A broker that gives up on `ask` (SIGTERM) must not leave claude running
/// and costing money: the signal reaches claude's whole process group.
#[test]
fn a_sigterm_to_ask_stops_claude_and_its_children() {
    let env = TestEnv::new();
    let mut child = env
        .ask(["--user", "U1", "--", "hi"])
        .env("FAKE_CLAUDE_SLEEP", "30")
        .env("FAKE_CLAUDE_GRANDCHILD", "1")
        .spawn();
    let pid_file = env.claude_log().join("grandchild.pid");
    let started = Instant::now();
    while !pid_file.exists() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .expect("the fake claude started")
        .trim()
        .parse()
        .unwrap();
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    let dead = wait_for(Duration::from_secs(3), Duration::from_millis(20), || {
        is_dead(grandchild)
    });
    if !dead {
        let _ = std::process::Command::new("kill")
            .args(["-9", &grandchild.to_string()])
            .status();
    }
    assert!(
        dead,
        "claude's child {grandchild} outlived a SIGTERM to ask"
    );
    // The message was logged before the call; no reply was.
    assert_eq!(env.messages("U1").len(), 1);
}

/// claude runs in a private folder of its own, with an environment built
/// from an allowlist: the broker's tokens never reach it.
#[test]
fn claude_gets_a_private_folder_and_no_broker_secrets() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--", "hi"])
        .env("SLACK_BOT_TOKEN", "xoxb-broker-secret")
        .env("ANTHROPIC_API_KEY", "sk-test-key")
        .env("CLAUDE_CODE_OAUTH_TOKEN", "oauth-test-token")
        .succeeds();
    let log = env.claude_log().join("call-1");
    let cwd = std::fs::read_to_string(log.join("cwd")).unwrap();
    let cwd = cwd.trim();
    let seen = std::fs::read_to_string(log.join("env")).unwrap();
    assert!(!seen.contains("xoxb-broker-secret"), "{seen}");
    assert!(seen.contains("ANTHROPIC_API_KEY=sk-test-key"), "{seen}");
    assert!(
        seen.contains("CLAUDE_CODE_OAUTH_TOKEN=oauth-test-token"),
        "{seen}"
    );
    assert!(
        seen.contains("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
        "{seen}"
    );
    assert!(seen.contains("CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"), "{seen}");
    assert!(seen.contains("CLAUDE_CODE_DISABLE_CLAUDE_MDS=1"), "{seen}");
    assert!(seen.contains("CLAUDE_CODE_MAX_RETRIES=2"), "{seen}");
    let home = seen
        .lines()
        .find_map(|l| l.strip_prefix("HOME="))
        .expect("HOME is set");
    assert_ne!(home, env.home().to_string_lossy(), "not the broker's HOME");
    // A folder of its own, outside the state dir and the broker's tree,
    // private while it ran and gone after.
    assert!(cwd.contains("claude-session-call-"), "{cwd}");
    assert!(
        !std::path::Path::new(cwd).starts_with(env.dir.path()),
        "{cwd}"
    );
    assert!(
        !std::path::Path::new(cwd).exists(),
        "{cwd} is removed after the call"
    );
}

/// A profile that is still the empty skeleton says nothing: no section.
#[test]
fn an_empty_skeleton_profile_is_left_out_of_the_context() {
    let env = TestEnv::new();
    env.ask(["--user", "U1", "--display-name", "Kim", "--", "hi"])
        .succeeds();
    assert!(env.profile_path("U1").exists());
    let system = env.claude_call(1).system_prompt;
    assert!(!system.contains("[User profile]"), "{system}");
    assert!(!system.contains("## Preferences"), "{system}");
}

/// The reply model is the operator's; compaction after the reply uses
/// compacting.model.
#[test]
fn compaction_after_ask_uses_the_compaction_model() {
    let env = TestEnv::new();
    // Inline, so the compaction call is made before ask exits.
    env.write_config(
        r#"{"compacting": {"threshold": 4, "mode": "inline"}, "stm": {"contextWindow": 2}}"#,
    );
    for i in 0..4 {
        env.run(["append", "--user", "U1", "--", &format!("old {i}")])
            .succeeds();
    }
    env.ask(["--user", "U1", "--model", "opus", "--", "hi"])
        .env("FAKE_CLAUDE_MATCH_1", "maintain the memory")
        .env("FAKE_CLAUDE_REPLY_1", r#"{"summary": "old talk"}"#)
        .succeeds();
    assert_eq!(env.claude_calls(), 2);
    let model = |n: usize| {
        let argv = env.claude_call(n).argv;
        argv[argv.iter().position(|a| a == "--model").unwrap() + 1].clone()
    };
    assert_eq!(model(1), "opus");
    assert_eq!(model(2), "haiku");
}

// --- issue 13: sizes, and an erase is final -------------------------------------

#[test]
fn a_message_over_the_size_limit_is_refused_before_anything_is_logged() {
    let env = TestEnv::new();
    let big = "x".repeat(65 * 1024);
    let out = env
        .ask(["--user", "U1"])
        .stdin(big.clone())
        .fails(Exit::Usage);
    let err = out.stderr();
    assert!(err.contains("limits.maxMessageBytes"), "{err}");
    assert!(
        err.len() < 1000,
        "the refusal is brief: {} bytes",
        err.len()
    );
    assert_eq!(env.claude_calls(), 0);
    assert!(!env.messages_path("U1").exists());
    env.run(["append", "--user", "U1"])
        .stdin(big)
        .fails(Exit::Usage);
    assert!(!env.messages_path("U1").exists());
    // A configured limit holds, and a message within it goes through.
    env.write_config(r#"{"limits":{"maxMessageBytes":1000}}"#);
    env.ask(["--user", "U1", "--", &"y".repeat(1001)])
        .fails(Exit::Usage);
    env.ask(["--user", "U1", "--", &"y".repeat(1000)])
        .succeeds();
    // `context` shows what `ask` would send: for a message `ask` refuses,
    // it refuses too (and recall never reads the oversized text).
    let err = env
        .run(["context", "--user", "U1", "--", &"y".repeat(1001)])
        .fails(Exit::Usage)
        .stderr();
    assert!(err.contains("limits.maxMessageBytes"), "{err}");
    env.run(["context", "--user", "U1", "--", &"y".repeat(1000)])
        .succeeds();
}

#[test]
fn a_reply_over_the_size_cap_is_stored_cut_and_printed_whole() {
    let env = TestEnv::new();
    env.write_config(r#"{"limits":{"maxReplyBytes":4096}}"#);
    let reply = "é".repeat(5000);
    let out = env
        .ask(["--user", "U1", "--", "talk a lot"])
        .env("FAKE_CLAUDE_REPLY", &reply)
        .succeeds();
    assert_eq!(out.stdout().trim_end(), reply, "the reply is printed whole");
    let stored = env.messages("U1")[1]["text"].as_str().unwrap().to_owned();
    assert!(stored.len() <= 4096, "{} bytes stored", stored.len());
    assert!(stored.starts_with("éé"), "{stored}");
    assert!(
        stored.contains("limits.maxReplyBytes"),
        "the cut is marked: {stored}"
    );
}

#[test]
fn an_erase_during_an_ask_is_final() {
    let env = TestEnv::new();
    env.run(["append", "--user", "U1", "--", "something private"])
        .succeeds();
    let child = env
        .ask(["--user", "U1", "--msg-id", "m-1", "--", "slow question"])
        .env("FAKE_CLAUDE_SLEEP", "2")
        .spawn();
    assert!(
        wait_for(Duration::from_secs(10), Duration::from_millis(20), || env
            .claude_calls()
            == 1),
        "claude was called"
    );
    env.run(["session", "clear", "--user", "U1", "--all", "--yes"])
        .succeeds();
    let out = exited(child.wait_with_output().unwrap(), Exit::Success)
        .stdout_is("fake reply to: slow question\n");
    assert!(
        !env.stm_dir("U1").exists(),
        "the reply came back into a fresh log: {:?}",
        env.messages("U1")
    );
    out.stderr_has("erased");
}

#[test]
fn an_attachment_that_is_missing_a_folder_or_a_device_is_refused() {
    let env = TestEnv::new();
    let missing = env.dir.path().join("gone.png");
    let folder = env.dir.path().join("a-folder");
    std::fs::create_dir_all(&folder).unwrap();
    for (path, why) in [
        (missing.display().to_string(), "does not exist"),
        (folder.display().to_string(), "not a regular file"),
        ("/dev/zero".to_owned(), "not a regular file"),
    ] {
        let out = env
            .ask(["--user", "U1", "--attach", &path, "--", "look"])
            .fails(Exit::Usage);
        let err = out.stderr();
        assert!(
            err.contains("--attach") && err.contains(why),
            "{path}: {err}"
        );
    }
    assert_eq!(env.claude_calls(), 0);
    assert!(!env.messages_path("U1").exists());
}

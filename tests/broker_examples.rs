//! The broker examples of `examples/brokers/` (Node, Bun, Python, shell),
//! each run on its fake event source (`examples/brokers/events/`: Slack
//! message events and LINE webhook bodies) with the fake claude: a
//! redelivery answered once, a channel thread, a public and a private
//! channel, a LINE group and room (`--conversation`), a photo (an image
//! block to claude), an unsend (`session delete`) and its redelivery, a
//! skipped join and sticker, and a 429 that exits 75 and is requeued. The
//! test reads what each broker would have sent to the platform (its
//! stdout), what claude was called with, and the state dir.
//!
//! Node, python3, sh and jq come from the machine (`.ci/run` installs what
//! is missing); Bun is installed from the npm registry (`bun@BUN_VERSION`,
//! a package that ships the binary) under `target/bun-<version>/` on first
//! use, as the real Claude Code CLI is.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::real_claude::{npm_install, target_dir, version_of};
use crate::common::{TestEnv, binary, fake_claude, stderr_of, stdout_of, write_file};

/// The Bun release the Bun example is tested on.
const BUN_VERSION: &str = "1.4.5";

/// The text of the events that the fake claude answers with a 429 the
/// first time.
const RATE_LIMITED: &str = "build green";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Broker {
    Node,
    Bun,
    Python,
    Shell,
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/brokers")
}

impl Broker {
    /// The interpreter and the example's script.
    fn program(self) -> (PathBuf, PathBuf) {
        let (program, script) = match self {
            Broker::Node => (PathBuf::from("node"), "node/broker.js"),
            Broker::Bun => (bun(), "bun/broker.ts"),
            Broker::Python => (PathBuf::from("python3"), "python/broker.py"),
            Broker::Shell => (PathBuf::from("sh"), "shell/broker.sh"),
        };
        (program, examples().join(script))
    }

    /// The broker on `platform`'s events (`slack` or `line`, or a file),
    /// in the sealed environment, with `claude-session` on PATH, the fake
    /// claude as CLAUDE_BIN and the test's state dir.
    fn command(self, env: &TestEnv, platform: &str, events: &Path) -> Command {
        let (program, script) = self.program();
        let mut cmd = env.sealed(program);
        let path = format!(
            "{}:{}",
            binary().parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.arg(script)
            .arg(platform)
            .arg(events)
            .env("PATH", path)
            .env("CLAUDE_BIN", fake_claude())
            .env("SLACK_STATE_DIR", env.state_dir())
            .env("LINE_STATE_DIR", env.state_dir())
            .env("FAKE_CLAUDE_429_ONCE", RATE_LIMITED)
            .env("RETRY_DELAY_MS", "50")
            .stdin(Stdio::null());
        cmd
    }

    #[track_caller]
    fn run(self, env: &TestEnv, platform: &str) -> (Vec<Value>, String) {
        let events = examples().join(format!("events/{platform}.jsonl"));
        let output = self.command(env, platform, &events).output().unwrap();
        let calls = platform_calls(self, &output);
        (calls, stderr_of(&output))
    }
}

/// What the broker sent to the platform: its stdout, one JSON object per
/// line; it must have exited 0.
#[track_caller]
fn platform_calls(broker: Broker, output: &Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "{broker:?} broker: {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        stdout_of(output),
        stderr_of(output)
    );
    stdout_of(output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{broker:?}: {l:?}: {e}")))
        .collect()
}

/// The Slack messages as the channel shows them at the end: each
/// `chat.postMessage` with its last `chat.update`, as (channel, thread,
/// text).
fn slack_messages(calls: &[Value]) -> Vec<(String, String, String)> {
    let mut shown: Vec<(Option<String>, (String, String, String))> = Vec::new();
    for call in calls {
        let text = call["text"].as_str().unwrap().to_owned();
        match call["method"].as_str().unwrap() {
            "chat.postMessage" => shown.push((
                call["ts"].as_str().map(str::to_owned),
                (
                    call["channel"].as_str().unwrap().to_owned(),
                    call["thread_ts"].as_str().unwrap().to_owned(),
                    text,
                ),
            )),
            "chat.update" => {
                let entry = shown
                    .iter_mut()
                    .find(|(ts, _)| ts.as_deref() == call["ts"].as_str())
                    .unwrap_or_else(|| panic!("an update of a message never posted: {call}"));
                assert_eq!(entry.1.0, call["channel"], "{call}");
                entry.1.2 = text;
            }
            other => panic!("not a Slack call: {other}"),
        }
    }
    shown.into_iter().map(|(_, m)| m).collect()
}

fn reply_to(text: &str) -> String {
    format!("fake reply to: {text}")
}

/// The one call of the fake claude whose stdin holds `text`: a stream-json
/// user message, whose image block has this media type.
#[track_caller]
fn image_sent_with(env: &TestEnv, text: &str, media_type: &str) {
    let calls: Vec<_> = (1..=env.claude_calls())
        .map(|n| env.claude_call(n))
        .filter(|c| c.stdin.contains(text))
        .collect();
    assert_eq!(calls.len(), 1, "{text}: {calls:#?}");
    let line: Value = serde_json::from_str(calls[0].stdin.trim_end())
        .unwrap_or_else(|e| panic!("{text}: not a stream-json line ({e}): {:?}", calls[0].stdin));
    let content = &line["message"]["content"];
    assert!(
        content[1]["text"].as_str().unwrap().starts_with(text),
        "{line}"
    );
    assert_eq!(content[0]["type"], "image", "{line}");
    assert_eq!(content[0]["source"]["media_type"], media_type, "{line}");
}

const KEVIN_HI: &str = "Hi, I'm Kevin. I'm preparing for the TOEIC.";

/// The user lines and replies of a log, each `(role, text)`; every line
/// carries the platform's name.
fn turns(env: &TestEnv, owner: &str, platform: &str) -> Vec<Value> {
    let messages = env.messages(owner);
    for m in &messages {
        assert_eq!(m["channel"], platform, "{owner}: {m}");
    }
    messages
}

fn check_slack(broker: Broker, env: &TestEnv, calls: &[Value], stderr: &str) {
    let messages = slack_messages(calls);
    let texts: Vec<(&str, &str, &str)> = messages
        .iter()
        .map(|(c, t, x)| (c.as_str(), t.as_str(), x.as_str()))
        .collect();
    let hi = reply_to(KEVIN_HI);
    assert_eq!(texts.len(), 6, "{broker:?}: {texts:#?}");
    assert_eq!(
        texts[..4],
        [
            ("D0KEVIN", "1711000001.000100", hi.as_str()),
            // The redelivery: the same reply again, from disk.
            ("D0KEVIN", "1711000001.000100", hi.as_str()),
            (
                "C0TEAM",
                "1711000002.000200",
                reply_to("Standup at ten tomorrow?").as_str()
            ),
            // The reply to a thread goes into it.
            (
                "C0TEAM",
                "1711000002.000200",
                reply_to("Ten works for me").as_str()
            ),
        ],
        "{broker:?}"
    );
    // The photo reached claude as an image, under its name.
    let (channel, thread, receipt) = texts[4];
    assert_eq!((channel, thread), ("D0KEVIN", "1711000006.000600"));
    assert!(
        receipt.starts_with("fake reply to: ") && receipt.contains("receipt.png"),
        "{broker:?}: {receipt}"
    );
    image_sent_with(env, "What is on this receipt?", "image/png");
    // The private channel's message met a 429 (exit 75), was requeued
    // behind the rest and answered on its second attempt.
    assert_eq!(
        texts[5],
        (
            "G0PRIVATE",
            "1711000004.000400",
            reply_to("Is the build green?").as_str()
        ),
        "{broker:?}"
    );
    assert!(stderr.contains("requeued"), "{broker:?}: {stderr}");
    // One call per message, the redelivery none, the 429 two.
    assert_eq!(env.claude_calls(), 6, "{broker:?}");

    // Kevin's DMs are his own memory: the redelivered message once.
    let kevin = turns(env, "U0KEVIN", "slack");
    let roles: Vec<&str> = kevin.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant"],
        "{kevin:#?}"
    );
    assert_eq!(kevin[0]["msgId"], "1711000001.000100");
    assert_eq!(kevin[1]["replyTo"], "1711000001.000100");
    assert_eq!(
        kevin[2]["attachments"][0]["name"], "receipt.png",
        "{kevin:#?}"
    );
    assert_eq!(kevin[2]["attachments"][0]["type"], "image", "{kevin:#?}");
    // A channel is the channel's memory, with who said what, and the thread.
    let team = turns(env, "#C0TEAM", "slack");
    assert_eq!(team.len(), 4, "{team:#?}");
    assert_eq!(team[0]["userId"], "U0ANNA");
    assert_eq!(team[2]["userId"], "U0KEVIN");
    assert_eq!(team[2]["threadId"], "1711000002.000200", "{team:#?}");
    // A private channel ("group") too, and the requeued message once.
    let private = turns(env, "#G0PRIVATE", "slack");
    assert_eq!(private.len(), 2, "{private:#?}");
    assert_eq!(private[0]["userId"], "U0ANNA");
    assert_eq!(private[1]["replyTo"], "1711000004.000400");
    // Anna wrote only in channels: nothing in a memory of her own.
    assert!(env.read_lines("U0ANNA").is_empty());
    // The join was not a message.
    assert!(env.read_lines("U0BOB").is_empty());
}

fn check_line(broker: Broker, env: &TestEnv, calls: &[Value], stderr: &str) {
    let sent: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|call| {
            let to = call["replyToken"].as_str().or(call["to"].as_str()).unwrap();
            (
                call["method"].as_str().unwrap(),
                to,
                call["messages"][0]["text"].as_str().unwrap(),
            )
        })
        .collect();
    let hi = reply_to(KEVIN_HI);
    assert_eq!(sent.len(), 5, "{broker:?}: {sent:#?}");
    assert_eq!(
        sent[..3],
        [
            ("reply", "rt-1", hi.as_str()),
            ("reply", "rt-2", hi.as_str()),
            ("reply", "rt-3", reply_to("Dinner on Friday?").as_str()),
        ],
        "{broker:?}"
    );
    let (method, token, photo) = sent[3];
    assert_eq!((method, token), ("reply", "rt-5"));
    assert!(
        photo.starts_with("fake reply to: ") && photo.contains("510004.jpg"),
        "{broker:?}: {photo}"
    );
    image_sent_with(env, "(sent a photo)", "image/jpeg");
    // The room's message met a 429 and was requeued; its reply token is
    // spent by then, so the retry pushes to the room.
    assert_eq!(
        sent[4],
        (
            "push",
            "Rb6e1c9d70e",
            reply_to("Is the build green?").as_str()
        ),
        "{broker:?}"
    );
    assert!(stderr.contains("requeued"), "{broker:?}: {stderr}");
    assert_eq!(env.claude_calls(), 5, "{broker:?}");

    let kevin = turns(env, "U4af4980629", "line");
    assert_eq!(kevin.len(), 4, "{kevin:#?}");
    assert_eq!(kevin[0]["msgId"], "510001");
    assert_eq!(kevin[2]["msgId"], "510004");
    assert_eq!(kevin[2]["attachments"][0]["name"], "510004.jpg");
    // The group's message was unsent: it and its reply are gone, and the
    // redelivered unsend found nothing more to delete.
    let group = turns(env, "#Ca56f94637c", "line");
    assert_eq!(group, Vec::<Value>::new(), "{broker:?}");
    assert!(
        stderr.contains("unsend of 510002: deleted")
            && stderr.contains("unsend of 510002: already gone"),
        "{broker:?}: {stderr}"
    );
    env.run(["session", "search", "Dinner"])
        .succeeds()
        .stdout_lacks("Dinner");
    let room = turns(env, "#Rb6e1c9d70e", "line");
    assert_eq!(room.len(), 2, "{room:#?}");
    assert_eq!(room[0]["userId"], "U7c1d2e3f40");
    assert_eq!(room[1]["replyTo"], "510003");
    assert!(env.read_lines("U7c1d2e3f40").is_empty());
}

fn slack_and_line(broker: Broker) {
    let env = TestEnv::new();
    let (calls, stderr) = broker.run(&env, "slack");
    check_slack(broker, &env, &calls, &stderr);
    let env = TestEnv::new();
    let (calls, stderr) = broker.run(&env, "line");
    check_line(broker, &env, &calls, &stderr);
}

/// A streaming broker posts the first piece of a Slack reply before claude
/// has finished writing it, then edits the message as more arrives: the
/// reply is read as it comes, not after the exit.
fn streams_as_it_comes(broker: Broker) {
    let env = TestEnv::new();
    let events = env.dir.path().join("one.jsonl");
    write_file(
        &events,
        br#"{"type":"message","channel":"D1","channel_type":"im","user":"U1","ts":"1.1","text":"one two three four five six seven eight"}
"#,
    );
    let mut child = broker
        .command(&env, "slack", &events)
        // 11 words, 0.25 s apart: claude writes for 2.5 s.
        .env("FAKE_CLAUDE_CHUNK_DELAY", "0.25")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut seen = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        seen.push((start.elapsed(), line.unwrap()));
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let calls: Vec<Value> = seen
        .iter()
        .map(|(_, l)| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(calls[0]["method"], "chat.postMessage", "{calls:#?}");
    assert!(calls.len() >= 3, "edited as it grew: {calls:#?}");
    let texts: Vec<&str> = calls.iter().map(|c| c["text"].as_str().unwrap()).collect();
    assert!(
        texts
            .windows(2)
            .all(|w| w[1].starts_with(w[0]) && w[1] != w[0]),
        "each edit extends the last: {texts:#?}"
    );
    assert_eq!(
        texts.last(),
        Some(&reply_to("one two three four five six seven eight").as_str())
    );
    let first = seen[0].0;
    let last = seen.last().unwrap().0;
    assert!(
        last - first >= Duration::from_millis(1500),
        "the first piece came {first:?} in, the last {last:?}: not read as it came"
    );
}

#[test]
fn the_node_broker_answers_slack_and_line_events() {
    slack_and_line(Broker::Node);
}

#[test]
fn the_node_broker_streams_the_reply_as_it_comes() {
    streams_as_it_comes(Broker::Node);
}

#[test]
fn the_bun_broker_answers_slack_and_line_events() {
    slack_and_line(Broker::Bun);
}

#[test]
fn the_bun_broker_streams_the_reply_as_it_comes() {
    streams_as_it_comes(Broker::Bun);
}

#[test]
fn the_python_broker_answers_slack_and_line_events() {
    slack_and_line(Broker::Python);
}

#[test]
fn the_python_broker_streams_the_reply_as_it_comes() {
    streams_as_it_comes(Broker::Python);
}

#[test]
fn the_shell_broker_answers_slack_and_line_events() {
    slack_and_line(Broker::Shell);
}

/// `target/bun-<version>/node_modules/.bin/bun`, installed from the npm
/// registry on first use (under a lock: test binaries run in parallel).
fn bun() -> PathBuf {
    static BUN: OnceLock<PathBuf> = OnceLock::new();
    BUN.get_or_init(|| {
        let prefix = target_dir().join(format!("bun-{BUN_VERSION}"));
        let bin = prefix.join("node_modules/.bin/bun");
        std::fs::create_dir_all(target_dir()).unwrap();
        let lock = std::fs::File::create(target_dir().join(".bun-install.lock")).unwrap();
        lock.lock().expect("take the install lock");
        if version_of(&bin).as_deref() != Some(BUN_VERSION) {
            npm_install(&prefix, &format!("bun@{BUN_VERSION}"), None);
            assert_eq!(
                version_of(&bin).as_deref(),
                Some(BUN_VERSION),
                "npm installed bun@{BUN_VERSION} into {}, but it does not run (its \
                 postinstall puts the binary in place: npm's ignore-scripts must be off)",
                prefix.display()
            );
        }
        bin
    })
    .clone()
}

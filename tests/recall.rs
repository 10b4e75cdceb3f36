//! Recall: `claude-session mcp` spoken to over stdio as a client would
//! (initialize, tools/list, tools/call) without claude, its scoping (a
//! person's own memory; a conversation's only for its members), its caps;
//! and `ask` with `ask.recall` end to end with the real Claude Code CLI and
//! the mock Messages API: the model's tool calls reach archived lines of
//! this person and nothing of anyone else's, and built-in tools stay off.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout};

use crate::common::real_claude::{
    MockApi, RealCli, real_cli_test, system_text, tool_results, tool_use,
};
use crate::common::{Exit, TestEnv, gzip_lines, line_with, stderr_of, write_file};
use serde_json::{Value, json};

/// The channel field every line of these fixtures carries.
const SLACK: &[(&str, &str)] = &[("channel", "slack")];

/// Words said once each, so a tool result shows whose memory it read.
const HOTEL: &str = "Hotel Negresco";
/// In alice's 1:1 archive and in group `fam` (by dave).
const LIGHTHOUSE: &str = "lighthouse";
/// Only bob, 1:1.
const BOB_ONLY: &str = "pelican";
/// Only in group `team` (bob, carol); alice is not in it.
const TEAM_ONLY: &str = "quokka";

/// alice (an archived day with a daily summary, a recent line, a profile),
/// bob (1:1), group `team` (bob and carol), group `fam` (alice and dave).
fn world(env: &TestEnv) {
    let sessions = env.sessions_dir();
    env.append(
        &["--user", "alice", "--ts", "2026-04-20T10:00:00Z"],
        "back from holidays",
    );
    write_file(
        &sessions.join("archive/alice/messages-2026-03-10.jsonl.gz"),
        &gzip_lines(&[
            line_with("2026-03-10T08:00:00Z", "user", "good morning", SLACK),
            line_with(
                "2026-03-10T08:01:00Z",
                "user",
                &format!("we stayed at the {HOTEL} in Nice, next to a {LIGHTHOUSE}"),
                SLACK,
            ),
            line_with("2026-03-10T08:02:00Z", "assistant", "sounds lovely", SLACK),
        ]),
    );
    write_file(
        &sessions.join("summaries/alice/daily/2026-03-10.md"),
        b"---\nuser_id: alice\ndate: 2026-03-10\n---\n\nAlice told about her trip to Nice.\n",
    );
    write_file(
        &sessions.join("ltm/users/alice.md"),
        b"---\nuser_id: alice\n---\n\n# Profile\n\n- Name: Alice\n- Language: French\n",
    );
    env.append(
        &["--user", "bob", "--ts", "2026-03-11T09:00:00Z"],
        &format!("my {BOB_ONLY} drawing is done"),
    );
    for (user, text) in [
        ("bob", "hi team"),
        ("carol", &format!("the {TEAM_ONLY} is fed") as &str),
    ] {
        env.append(
            &[
                "--conversation",
                "team",
                "--user",
                user,
                "--ts",
                "2026-03-12T09:00:00Z",
            ],
            text,
        );
    }
    for (user, text) in [
        ("alice", "hello family".to_owned()),
        ("dave", format!("the old {LIGHTHOUSE} was repainted")),
    ] {
        env.append(
            &[
                "--conversation",
                "fam",
                "--user",
                user,
                "--display-name",
                if user == "dave" { "Dave" } else { "Alice" },
                "--ts",
                "2026-03-13T09:00:00Z",
            ],
            &text,
        );
    }
}

/// A running `claude-session mcp` and a line-by-line JSON-RPC client.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(env: &TestEnv, args: &[&str]) -> Self {
        let mut child = env.run(["mcp"]).args(args).spawn_interactive();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn send_raw(&mut self, text: &str) -> Value {
        writeln!(self.stdin, "{text}").unwrap();
        self.stdin.flush().unwrap();
        self.receive()
    }

    fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.receive();
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    fn initialized(env: &TestEnv, args: &[&str]) -> Self {
        let mut server = Self::start(env, args);
        let reply = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(reply["result"]["protocolVersion"], "2025-06-18", "{reply}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// A tool's text, and whether it is an error.
    fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &reply["result"];
        assert!(result.is_object(), "{reply}");
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        assert_eq!(result["content"].as_array().unwrap().len(), 1, "{reply}");
        (text, result["isError"] == true)
    }

    fn search(&mut self, query: &str) -> String {
        let (text, error) = self.call("search_memory", json!({"query": query}));
        assert!(!error, "{text}");
        text
    }

    /// Close stdin: the server ends, successfully.
    fn finish(mut self) -> String {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.success(), "mcp exited {status}: {stderr}");
        stderr
    }
}

#[test]
fn initialize_list_and_call_over_stdio() {
    let env = TestEnv::new();
    world(&env);
    let mut server = Server::start(&env, &["--user", "alice"]);
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}}),
    );
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "claude-session");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");
    // A notification gets no answer: the next line answers the ping.
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));

    let list = server.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["search_memory", "read_day", "profile"]);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
    }
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["query"]));

    // A word said only in an archived message: the line, its date, who.
    let found = server.search("negresco");
    assert!(
        found.contains(&format!(
            "[2026-03-10 08:01] User (alice): we stayed at the {HOTEL} in Nice"
        )),
        "{found}"
    );
    assert!(
        !found.contains("archive/") && !found.contains(".gz"),
        "no paths: {found}"
    );

    let (day, error) = server.call("read_day", json!({"date": "2026-03-10"}));
    assert!(!error);
    assert!(day.contains("Alice told about her trip to Nice."), "{day}");
    assert!(
        day.contains("[2026-03-10 08:00] User: good morning"),
        "{day}"
    );
    assert!(day.contains("Assistant: sounds lovely"), "{day}");
    let (quiet, _) = server.call("read_day", json!({"date": "2026-03-11"}));
    assert_eq!(quiet, "Nothing was said on 2026-03-11.");

    let (profile, error) = server.call("profile", json!({}));
    assert!(!error);
    assert!(profile.contains("Name: Alice"), "{profile}");
    assert!(!profile.contains("user_id"), "the body only: {profile}");
    server.finish();
}

#[test]
fn bad_requests_get_clear_errors_and_the_server_goes_on() {
    let env = TestEnv::new();
    world(&env);
    let mut server = Server::initialized(&env, &["--user", "alice"]);
    let parse = server.send_raw("{not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let unknown = server.request("resources/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let tool = server.request(
        "tools/call",
        json!({"name": "write_memory", "arguments": {}}),
    );
    assert_eq!(tool["error"]["code"], -32602, "{tool}");
    for (tool, arguments, says) in [
        ("search_memory", json!({}), "needs \"query\""),
        ("search_memory", json!({"query": "  "}), "query is empty"),
        (
            "search_memory",
            json!({"query": "x", "path": "/etc"}),
            "no argument \"path\"",
        ),
        (
            "search_memory",
            json!({"query": "x", "limit": "5"}),
            "whole number",
        ),
        (
            "search_memory",
            json!({"query": "x", "limit": 0}),
            "at least 1",
        ),
        (
            "search_memory",
            json!({"query": "x", "since": "March"}),
            "not YYYY-MM-DD",
        ),
        (
            "read_day",
            json!({"date": "../../etc/passwd"}),
            "not YYYY-MM-DD",
        ),
        ("profile", json!({"user": "bob"}), "no argument \"user\""),
    ] {
        let (text, error) = server.call(tool, arguments.clone());
        assert!(error && text.contains(says), "{tool} {arguments}: {text}");
    }
    // Still answering.
    assert!(server.search("negresco").contains(HOTEL));
    server.finish();
}

#[test]
fn filters_limits_and_caps() {
    let env = TestEnv::new();
    world(&env);
    // Many long lines of alice's with one word: a capped result.
    let many: Vec<String> = (0..200)
        .map(|i| {
            line_with(
                &format!("2026-02-01T10:{:02}:{:02}Z", i / 60, i % 60),
                "user",
                &format!("bicycle note {i} {}", "long ".repeat(200)),
                SLACK,
            )
        })
        .collect();
    write_file(
        &env.sessions_dir()
            .join("archive/alice/messages-2026-02-01.jsonl.gz"),
        &gzip_lines(&many),
    );
    let mut server = Server::initialized(&env, &["--user", "alice"]);
    let text = server.search("bicycle");
    assert!(text.chars().count() <= 8_100, "{}", text.len());
    // Ranked: equally relevant lines, the newer first (the recency prior).
    let first = text.lines().nth(1).unwrap();
    assert!(first.contains("bicycle note 19"), "{text:.300}");
    assert!(text.contains("less relevant match(es) not shown"), "{text}");
    let (three, _) = server.call("search_memory", json!({"query": "bicycle", "limit": 3}));
    assert_eq!(
        three.lines().filter(|l| l.contains("bicycle note")).count(),
        3
    );
    let (day, _) = server.call("read_day", json!({"date": "2026-02-01"}));
    assert!(day.chars().count() <= 8_100, "{}", day.len());
    assert!(
        day.contains("not shown: the result is capped"),
        "{day:.300}"
    );
    // since/until: the March hotel is outside April.
    let (april, _) = server.call(
        "search_memory",
        json!({"query": "negresco", "since": "2026-04-01"}),
    );
    assert!(april.starts_with("No match"), "{april}");
    let (march, _) = server.call(
        "search_memory",
        json!({"query": "negresco", "since": "2026-03-10", "until": "2026-03-10"}),
    );
    assert!(march.contains(HOTEL), "until includes its day: {march}");
    // A phrase not found as typed: any of its words.
    let words = server.search("hotel trip");
    assert!(words.contains(HOTEL), "{words}");
    server.finish();
}

#[test]
fn a_person_sees_their_own_memory_and_the_groups_they_are_in_only() {
    let env = TestEnv::new();
    world(&env);
    let mut alice = Server::initialized(&env, &["--user", "alice"]);
    assert!(alice.search(BOB_ONLY).starts_with("No match"), "bob's 1:1");
    assert!(
        alice.search(TEAM_ONLY).starts_with("No match"),
        "a group alice is not in"
    );
    let own = alice.search(LIGHTHOUSE);
    assert!(own.contains("next to a lighthouse"), "{own}");
    assert!(
        !own.contains("repainted"),
        "1:1 holds no group lines: {own}"
    );
    alice.finish();

    let mut fam = Server::initialized(&env, &["--user", "alice", "--conversation", "fam"]);
    let group = fam.search(LIGHTHOUSE);
    assert!(
        group.contains("Dave (dave): the old lighthouse was repainted"),
        "{group}"
    );
    assert!(
        !group.contains("Negresco"),
        "only the conversation's lines: {group}"
    );
    assert!(fam.search(TEAM_ONLY).starts_with("No match"));
    assert!(fam.search(BOB_ONLY).starts_with("No match"));
    let (day, _) = fam.call("read_day", json!({"date": "2026-03-13"}));
    assert!(
        day.contains("hello family") && day.contains("repainted"),
        "{day}"
    );
    let (day, _) = fam.call("read_day", json!({"date": "2026-03-10"}));
    assert!(!day.contains("Negresco"), "{day}");
    fam.finish();

    // A group alice never wrote in, an unknown conversation: refused
    // before any answer, exit 2.
    for args in [
        &["--user", "alice", "--conversation", "team"][..],
        &["--user", "alice", "--conversation", "nope"][..],
    ] {
        let out = env
            .run([] as [&str; 0])
            .arg("mcp")
            .args(args)
            .fails(Exit::Usage);
        assert!(out.stdout().is_empty());
    }
    // A group key passed as a person names nobody (conversations live
    // under `#KEY`, never a person's folder): exit 9, as every read
    // command, and no group line is served.
    let out = env.run(["mcp", "--user", "team"]).fails(Exit::UnknownUser);
    assert!(out.stdout().is_empty());
    let out = env
        .run(["mcp", "--user", "alice", "--conversation", "team"])
        .output();
    assert!(
        stderr_of(&out).contains("not a member of conversation team"),
        "{}",
        stderr_of(&out)
    );
}

/// alice's old archived fact about her sister's dog, and many recent
/// lines with some of a question's words ("say", "sister") but not its
/// subject; bob's fact says the same words more strongly.
fn ranked_world(env: &TestEnv) {
    world(env);
    write_file(
        &env.sessions_dir()
            .join("archive/alice/messages-2026-01-15.jsonl.gz"),
        &gzip_lines(&[
            line_with(
                "2026-01-15T09:00:00Z",
                "user",
                "my sister's dog Pepper chewed my slippers\nshe is a beagle",
                SLACK,
            ),
            line_with(
                "2026-01-15T09:01:00Z",
                "assistant",
                "Beagles are lively!",
                SLACK,
            ),
            line_with(
                "2026-01-15T09:02:00Z",
                "user",
                "we hiked to the waterfall on Sunday",
                SLACK,
            ),
            line_with(
                "2026-01-15T09:03:00Z",
                "user",
                "我去北海道旅行，吃了很多螃蟹",
                SLACK,
            ),
        ]),
    );
    for i in 0..20 {
        env.append(
            &[
                "--user",
                "alice",
                "--ts",
                &format!("2026-04-21T10:{i:02}:00Z"),
            ],
            &format!("I say my sister called again, number {i}"),
        );
    }
    env.append(
        &["--user", "bob", "--ts", "2026-03-11T10:00:00Z"],
        "my sister's dog Rocket, my sister's dog, said the dog walker",
    );
}

#[test]
fn search_memory_ranks_a_question_best_first() {
    let env = TestEnv::new();
    ranked_world(&env);
    let mut alice = Server::initialized(&env, &["--user", "alice"]);
    let text = alice.search("what did I say about my sister's dog?");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Most relevant first:", "{text}");
    // The old relevant turn beats twenty recent ones that share a word,
    // on one line (its line break shown as " / "), with date and speaker.
    assert_eq!(
        lines[1],
        "[2026-01-15 09:00] User (alice): my sister's dog Pepper chewed my slippers / she is a beagle",
        "{text}"
    );
    assert!(text.contains("I say my sister called again"), "{text}");
    assert!(!text.contains("Rocket"), "bob's memory: {text}");
    // Stemming: "hiking" finds "hiked"; a CJK question finds its pairs.
    let hike = alice.search("where did I go hiking");
    assert!(
        hike.lines()
            .nth(1)
            .unwrap()
            .contains("we hiked to the waterfall"),
        "{hike}"
    );
    let crab = alice.search("北海道的螃蟹好吃嗎");
    assert!(
        crab.lines().nth(1).unwrap().contains("我去北海道旅行"),
        "{crab}"
    );
    // The limit, and what it left out.
    let (two, _) = alice.call("search_memory", json!({"query": "sister", "limit": 2}));
    assert_eq!(
        two.lines().filter(|l| l.starts_with('[')).count(),
        2,
        "{two}"
    );
    assert!(two.contains("less relevant match(es) not shown"), "{two}");
    // Part of a word ranks nothing: the phrase match finds it.
    let part = alice.search("negres");
    assert!(
        part.contains(HOTEL) && !part.contains("Most relevant"),
        "{part}"
    );
    alice.finish();

    let mut bob = Server::initialized(&env, &["--user", "bob"]);
    let text = bob.search("what did I say about my sister's dog?");
    assert!(text.contains("Rocket"), "{text}");
    assert!(
        !text.contains("Pepper") && !text.contains("called again"),
        "{text}"
    );
    bob.finish();

    // A group: the conversation's lines only, for a member.
    let mut fam = Server::initialized(&env, &["--user", "alice", "--conversation", "fam"]);
    let text = fam.search("who repainted the old lighthouse");
    assert!(
        text.contains("Dave (dave): the old lighthouse was repainted"),
        "{text}"
    );
    assert!(
        !text.contains("Negresco") && !text.contains("Pepper"),
        "{text}"
    );
    fam.finish();
}

#[test]
fn a_missing_state_dir_is_an_error_and_nothing_is_created() {
    let env = TestEnv::uninitialised();
    env.run(["mcp", "--user", "alice"]).fails(Exit::State);
    assert!(!env.state_dir().exists());
}

// --- end to end: ask with ask.recall, the real claude, the mock ---------------

fn recall_env() -> (TestEnv, MockApi) {
    let env = TestEnv::new();
    world(&env);
    env.write_config(r#"{"ask": {"recall": true}}"#);
    (env, MockApi::start())
}

fn ask(
    cli: RealCli,
    env: &TestEnv,
    mock: &MockApi,
    args: &[&str],
    text: &str,
) -> std::process::Output {
    env.real(cli, mock)
        .args(["ask"])
        .args(args)
        .args(["--", text])
        .output()
}

/// The final text reply logged exactly once, as the last assistant line.
fn assert_reply_logged_once(env: &TestEnv, key: &str, reply: &str) {
    let logged: Vec<Value> = env
        .messages(key)
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(
        logged.iter().filter(|m| m["text"] == reply).count(),
        1,
        "{logged:?}"
    );
}

real_cli_test!(search_memory_finds_an_archived_line_end_to_end);
fn search_memory_finds_an_archived_line_end_to_end(cli: RealCli) {
    let (env, mock) = recall_env();
    mock.push(tool_use(
        "mcp__memory__search_memory",
        json!({"query": "negresco"}),
    ));
    mock.push(json!({"text": "It was the Hotel Negresco."}));
    let out = ask(
        cli,
        &env,
        &mock,
        &["--user", "alice"],
        "which hotel did I stay at back then?",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "It was the Hotel Negresco.\n"
    );

    let requests = mock.messages_requests();
    assert_eq!(requests.len(), 2, "the tool turn and the answer");
    let first = &requests[0];
    let mut offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    offered.sort();
    assert_eq!(
        offered,
        [
            "mcp__memory__profile",
            "mcp__memory__read_day",
            "mcp__memory__search_memory"
        ],
        "exactly the memory tools, no built-in one"
    );
    let system = system_text(first);
    assert!(
        system.contains("search_memory"),
        "the prompt line: {system}"
    );
    assert!(
        !system.contains(HOTEL),
        "the archived line is not in the context"
    );
    let results = tool_results(&requests);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("[2026-03-10 08:01] User (alice): we stayed at the Hotel Negresco"),
        "{results:?}"
    );
    assert_reply_logged_once(&env, "alice", "It was the Hotel Negresco.");
}

real_cli_test!(read_day_returns_the_day_end_to_end);
fn read_day_returns_the_day_end_to_end(cli: RealCli) {
    let (env, mock) = recall_env();
    mock.push(tool_use(
        "mcp__memory__read_day",
        json!({"date": "2026-03-10"}),
    ));
    mock.push(json!({"text": "On March 10 you told me about Nice."}));
    let out = ask(
        cli,
        &env,
        &mock,
        &["--user", "alice"],
        "what did I tell you on March 10?",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let results = tool_results(&mock.messages_requests());
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("Alice told about her trip to Nice."),
        "{results:?}"
    );
    assert!(results[0].contains(HOTEL), "{results:?}");
    assert_reply_logged_once(&env, "alice", "On March 10 you told me about Nice.");
}

/// One ask in which the mock calls `search_memory` for `word` and then
/// answers; the tool results in the last request claude made for it.
fn search_in_ask(
    cli: RealCli,
    env: &TestEnv,
    mock: &MockApi,
    args: &[&str],
    word: &str,
) -> Vec<String> {
    let before = mock.count();
    mock.push(tool_use(
        "mcp__memory__search_memory",
        json!({"query": word}),
    ));
    mock.push(json!({"text": "done"}));
    let out = ask(cli, env, mock, args, "do you remember?");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let requests = mock.messages_requests();
    assert!(requests.len() >= before + 2, "a tool turn and an answer");
    tool_results(&requests[requests.len() - 1..])
}

real_cli_test!(tool_results_are_scoped_end_to_end);
fn tool_results_are_scoped_end_to_end(cli: RealCli) {
    let (env, mock) = recall_env();
    let alice = ["--user", "alice"];
    let fam = ["--user", "alice", "--conversation", "fam"];
    // 1:1: another person's word, a group alice is not in.
    for word in [BOB_ONLY, TEAM_ONLY] {
        let results = search_in_ask(cli, &env, &mock, &alice, word);
        assert_eq!(results.len(), 1, "{results:?}");
        assert!(results[0].contains("No match"), "{word}: {results:?}");
    }
    // In group fam: the conversation's lines only (not alice's own 1:1).
    let results = search_in_ask(cli, &env, &mock, &fam, LIGHTHOUSE);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("Dave (dave): the old lighthouse was repainted"),
        "{results:?}"
    );
    assert!(!results[0].contains("Negresco"), "{results:?}");
    // In group fam, a word of group team.
    let results = search_in_ask(cli, &env, &mock, &fam, TEAM_ONLY);
    assert!(results[0].contains("No match"), "{results:?}");

    let bodies = mock.all_bodies();
    for word in [BOB_ONLY, TEAM_ONLY] {
        assert!(
            !bodies.contains(&format!("the {word}")) && !bodies.contains(&format!("my {word}")),
            "{word} reached the API"
        );
    }
}

real_cli_test!(built_in_tools_stay_refused_with_recall_on);
fn built_in_tools_stay_refused_with_recall_on(cli: RealCli) {
    let (env, mock) = recall_env();
    let secret = env.dir.path().join("secret.txt");
    write_file(&secret, b"SECRET-FILE-CONTENT-8812\n");
    for attempt in [
        tool_use("Read", json!({"file_path": secret})),
        tool_use(
            "Bash",
            json!({"command": format!("cat {}", secret.display())}),
        ),
    ] {
        mock.push(attempt);
        mock.push(json!({"text": "done"}));
        let out = ask(cli, &env, &mock, &["--user", "alice"], "read the file");
        assert!(out.status.success(), "{}", stderr_of(&out));
    }
    let requests = mock.messages_requests();
    let results = tool_results(&requests);
    assert_eq!(results.len(), 2, "claude answered both calls: {results:?}");
    assert!(
        results.iter().all(|r| r.contains("No such tool available")),
        "{results:?}"
    );
    assert!(
        !mock.all_bodies().contains("SECRET-FILE-CONTENT-8812"),
        "a built-in tool ran: {results:?}"
    );
    for request in &requests {
        for tool in request["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            assert!(name.starts_with("mcp__memory__"), "{name} offered");
        }
    }
}

real_cli_test!(recall_off_offers_no_tools_and_starts_no_server);
fn recall_off_offers_no_tools_and_starts_no_server(cli: RealCli) {
    let env = TestEnv::new();
    world(&env);
    let mock = MockApi::start();
    mock.push(tool_use(
        "mcp__memory__search_memory",
        json!({"query": "negresco"}),
    ));
    mock.push(json!({"text": "no idea"}));
    let out = ask(cli, &env, &mock, &["--user", "alice"], "which hotel?");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let requests = mock.messages_requests();
    assert_eq!(requests[0]["tools"], json!([]));
    assert!(!system_text(&requests[0]).contains("search_memory"));
    let results = tool_results(&requests);
    assert!(
        results.iter().all(|r| !r.contains(HOTEL)),
        "no tool reached memory: {results:?}"
    );
}

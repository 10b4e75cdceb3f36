//! Nothing crosses owners through `ask`, with the real Claude Code CLI (both
//! pinned releases) and the mock Messages API: two people with similar,
//! distinctive facts among many archived turns, and a group conversation.
//! What reaches the API — the context auto-recall builds and the
//! `search_memory` tool's result — holds the asking owner's memory and
//! nothing of the other's, even when the question's words match the other
//! person's fact best.

use crate::common::real_claude::{MockApi, RealCli, real_cli_test, tool_results, tool_use};
use crate::common::{TestEnv, history_line, import_and_compact};
use serde_json::json;

/// alice's fact: some of the question's words.
const ALICE_FACT: &str = "My sister Clara has a dog called Pepper, they live by the lake";
/// bob's fact: every word of the question, twice over.
const BOB_FACT: &str =
    "My sister's dog at the lake house is called Rocket, the lake house dog of my sister";
const QUESTION: &str = "What is my sister's dog at the lake house called?";
/// The group's fact, said by dave in `fam` (alice and dave).
const GROUP_FACT: &str = "Our family boat is called Seagull, moored at the marina";
const GROUP_QUESTION: &str = "What is our family boat called?";

/// 120 turns of small talk for `user` with `fact` as the 5th, imported
/// and compacted into the archive with the fake claude.
fn history(env: &TestEnv, user: &str, fact: &str) {
    let lines: String = (0..120)
        .map(|i| {
            let (role, text) = match i {
                4 => ("user", fact.to_owned()),
                _ if i % 2 == 0 => ("user", format!("how was your day {i}, anything fun")),
                _ => (
                    "assistant",
                    format!("quiet here {i}, the weather was sunny"),
                ),
            };
            history_line(
                &format!("2026-02-01T{:02}:{:02}:00Z", i / 60 + 8, i % 60),
                role,
                &text,
                &format!("{user}-{i}"),
            )
        })
        .collect();
    import_and_compact(env, user, &lines);
}

/// alice and bob (archived), and group `fam` (alice and dave, its fact
/// older than the recent window); recall's tools on, auto-recall on (the
/// default).
fn world() -> TestEnv {
    let env = TestEnv::new();
    env.write_config(r#"{"ask": {"recall": true}}"#);
    history(&env, "alice", ALICE_FACT);
    history(&env, "bob", BOB_FACT);
    let group = |user: &str, text: &str| {
        env.append(&["--conversation", "fam", "--user", user], text);
    };
    group("alice", "hello family");
    group("dave", GROUP_FACT);
    for i in 0..20 {
        group(
            if i % 2 == 0 { "alice" } else { "dave" },
            &format!("weather chat {i}, sunny and warm"),
        );
    }
    env
}

/// One `ask` in which the model first calls `search_memory` with `query`
/// and then answers: every request body of it, and the tool's result.
fn ask(cli: RealCli, env: &TestEnv, args: &[&str], text: &str, query: &str) -> (String, String) {
    let mock = MockApi::start();
    mock.push(tool_use(
        "mcp__memory__search_memory",
        json!({"query": query}),
    ));
    mock.push(json!({"text": "noted"}));
    env.real(cli, &mock)
        .arg("ask")
        .args(args)
        .args(["--", text])
        .succeeds();
    let results = tool_results(&mock.messages_requests());
    assert_eq!(results.len(), 1, "one tool call answered: {results:?}");
    (mock.all_bodies(), results[0].clone())
}

real_cli_test!(ask_recalls_only_the_askers_memory);
fn ask_recalls_only_the_askers_memory(cli: RealCli) {
    let env = world();
    // alice's question matches bob's fact best; alice gets hers.
    let (bodies, result) = ask(cli, &env, &["--user", "alice"], QUESTION, QUESTION);
    assert!(
        bodies.contains("[Earlier messages that may be relevant]") && bodies.contains("Pepper"),
        "alice's own fact is recalled into the context"
    );
    assert!(result.contains("Pepper"), "{result}");
    assert!(
        !bodies.contains("Rocket") && !bodies.contains("lake house dog"),
        "bob's memory reached alice's request"
    );
    // The same words from bob: his, and nothing of alice's (so the
    // question does reach bob's fact when it is bob's to see).
    let (bodies, result) = ask(cli, &env, &["--user", "bob"], QUESTION, QUESTION);
    assert!(
        bodies.contains("Rocket") && result.contains("Rocket"),
        "{result}"
    );
    assert!(
        !bodies.contains("Pepper") && !bodies.contains("Clara"),
        "alice's memory reached bob's request"
    );
}

real_cli_test!(a_groups_memory_is_recalled_for_its_members_in_the_group_only);
fn a_groups_memory_is_recalled_for_its_members_in_the_group_only(cli: RealCli) {
    let env = world();
    // A member, in the group: the group's fact, in the context and in the
    // tool's result; not her own 1:1 memory.
    let (bodies, result) = ask(
        cli,
        &env,
        &["--user", "alice", "--conversation", "fam"],
        GROUP_QUESTION,
        "family boat",
    );
    assert!(
        bodies.contains("[Earlier messages that may be relevant]") && bodies.contains("Seagull"),
        "the group's fact is recalled for a member"
    );
    assert!(result.contains("Seagull"), "{result}");
    assert!(
        !bodies.contains("Pepper"),
        "alice's 1:1 memory in the group"
    );
    // A non-member's private ask, and the member's own private ask: none
    // of the group's memory.
    for user in ["bob", "alice"] {
        let (bodies, result) = ask(cli, &env, &["--user", user], GROUP_QUESTION, "family boat");
        assert!(
            !bodies.contains("Seagull") && !bodies.contains("marina"),
            "the group's memory reached {user}'s private request"
        );
        // The tool searched the asker's own memory: it finds the question
        // just logged, and nothing else.
        assert!(
            result.contains(&format!("User ({user}): {GROUP_QUESTION}")),
            "{user}: {result}"
        );
    }
}

real_cli_test!(search_memory_reads_the_recall_index_under_confinement);
fn search_memory_reads_the_recall_index_under_confinement(cli: RealCli) {
    let env = world();
    // The index written: the tool's server (claude's child, under its
    // confinement) reads the archived days from it.
    env.run(["session", "reindex"]).succeeds();
    assert!(
        env.sessions_dir().join(".recall/alice").is_dir(),
        "alice's memory is indexed"
    );
    let (bodies, result) = ask(cli, &env, &["--user", "alice"], QUESTION, QUESTION);
    assert!(result.contains("Pepper"), "{result}");
    assert!(
        !bodies.contains("Rocket") && !bodies.contains("lake house dog"),
        "bob's memory reached alice's request"
    );
}

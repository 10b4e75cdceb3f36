//! `mcp`: a Model Context Protocol server on stdio over one person's (or
//! one conversation's) memory, so claude can look up what its context
//! window no longer holds.
//!
//! Hand-written rather than built on the `rmcp` SDK: the subset a tools-only
//! server needs (initialize, ping, tools/list, tools/call, notifications)
//! is a few JSON-RPC messages, one per line; `rmcp` would bring an async
//! runtime (tokio) and 48 crates more into a program that has none, for a
//! server that lives as long as one `ask` and answers a handful of calls
//! (BENCHMARKS.md, "Recall", has the figures). What the tools read is
//! `memory::recall`'s; this file speaks the protocol, and holds `ask`'s
//! side of it too: [`enable_recall`] gives claude this server, its tools'
//! permissions, the paths a confined claude may read for it, and the line
//! added to the base prompt ([`RECALL_PROMPT_LINE`]).

use std::io::{BufRead as _, Read as _, Write as _};

use serde_json::{Map, Value, json};

use crate::cli::McpArgs;
use crate::error::{Exit, exit_code_of, failure};
use crate::memory::recall::{self, Scope};
use crate::state::State;

/// The server's name in claude's `--mcp-config`: its tools are
/// `mcp__memory__search_memory`, … (see [`allowed_tools`]).
pub const SERVER_NAME: &str = "memory";

/// The tools, by name.
pub const TOOLS: [&str; 3] = ["search_memory", "read_day", "profile"];

/// Protocol revisions this server speaks, newest first: a client asking
/// for one of them gets it, any other gets the newest.
const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Longest request line read; a longer one is refused and skipped.
const MAX_LINE_BYTES: u64 = 1 << 20;

/// claude's permission rules for exactly these tools.
pub fn allowed_tools() -> Vec<String> {
    TOOLS
        .iter()
        .map(|tool| format!("mcp__{SERVER_NAME}__{tool}"))
        .collect()
}

pub fn run(state: &State, args: &McpArgs) -> anyhow::Result<()> {
    if !state.layout.sessions_dir().is_dir() {
        return Err(failure(
            Exit::State,
            format!(
                "no memory at {}: check --state-dir or --channel",
                state.layout.sessions_dir().display()
            ),
        ));
    }
    // Nobody by that id: exit 9, as every read command (a conversation's
    // key is no person's id since conversations live under `#KEY`).
    super::existing_user(state, &crate::layout::MemoryKey::person(&args.user))?;
    let conversation = args
        .conversation
        .as_ref()
        .map(crate::layout::MemoryKey::conversation);
    let scope = Scope::resolve(state, &args.user, conversation.as_ref())?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input)
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(());
        }
        let reply = if line.last() != Some(&b'\n') && read as u64 == MAX_LINE_BYTES {
            skip_rest_of_line(&mut input)?;
            Some(error_response(
                Value::Null,
                -32600,
                "request too large".into(),
            ))
        } else {
            handle_line(state, &scope, &line)
        };
        if let Some(reply) = reply {
            let mut out = std::io::stdout().lock();
            let written = serde_json::to_writer(&mut out, &reply)
                .map_err(std::io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
                .and_then(|()| out.flush());
            match written {
                Ok(()) => {}
                // The client went away: nothing left to answer.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

fn skip_rest_of_line(input: &mut impl std::io::BufRead) -> std::io::Result<()> {
    let mut sink = Vec::new();
    loop {
        sink.clear();
        let n = input.take(64 * 1024).read_until(b'\n', &mut sink)?;
        if n == 0 || sink.last() == Some(&b'\n') {
            return Ok(());
        }
    }
}

/// The answer to one line: `None` for a notification or a response.
fn handle_line(state: &State, scope: &Scope, line: &[u8]) -> Option<Value> {
    let text = line.trim_ascii();
    if text.is_empty() {
        return None;
    }
    let message: Value = match serde_json::from_slice(text) {
        Ok(message) => message,
        Err(e) => {
            return Some(error_response(
                Value::Null,
                -32700,
                format!("parse error: {e}"),
            ));
        }
    };
    let Some(object) = message.as_object() else {
        return Some(error_response(
            Value::Null,
            -32600,
            "a request is one JSON object (batches are not supported)".into(),
        ));
    };
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        // A response to a request we never send: nothing to do.
        return None;
    };
    // A notification (`notifications/initialized`, cancellations) has no id
    // and gets no answer.
    let id = object.get("id")?.clone();
    let params = object.get("params").cloned().unwrap_or(Value::Null);
    Some(match method {
        "initialize" => ok_response(id, initialize(&params, scope)),
        "ping" => ok_response(id, json!({})),
        "tools/list" => ok_response(id, json!({"tools": tool_definitions(scope)})),
        "tools/call" => match call_tool(state, scope, &params) {
            Ok(result) => ok_response(id, result),
            Err((code, message)) => error_response(id, code, message),
        },
        other => error_response(id, -32601, format!("method not found: {other}")),
    })
}

fn initialize(params: &Value, scope: &Scope) -> Value {
    let asked = params["protocolVersion"].as_str().unwrap_or_default();
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == asked)
        .unwrap_or(&PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "claude-session", "version": env!("CARGO_PKG_VERSION")},
        "instructions": format!(
            "Read-only search of {}: older messages, archives, summaries and the \
             person's profile. Use it when the answer is not in the conversation.",
            whose(scope)
        ),
    })
}

fn whose(scope: &Scope) -> &'static str {
    match scope.owner.kind {
        crate::memory::owners::OwnerKind::Person => "this person's memory of past conversations",
        crate::memory::owners::OwnerKind::Conversation => "this group conversation's memory",
    }
}

fn tool_definitions(scope: &Scope) -> Value {
    let read_only = json!({"readOnlyHint": true, "openWorldHint": false});
    json!([
        {
            "name": "search_memory",
            "description": format!(
                "Search {} (messages, including archived ones, and summaries) by relevance: ask in words or a whole question; the hits come \
                 best first, each with its date, who spoke and the text. A query nothing \
                 ranks for is looked for as a phrase (also in the profile), then as any \
                 of its words, newest first.",
                whose(scope)
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words or a question, e.g. what did I say about my sister's dog"},
                    "since": {"type": "string", "description": "only from this day on (YYYY-MM-DD, UTC)"},
                    "until": {"type": "string", "description": "only up to and including this day (YYYY-MM-DD, UTC)"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": recall::MAX_LIMIT,
                              "description": format!("at most this many hits (default {})", recall::DEFAULT_LIMIT)}
                },
                "required": ["query"],
                "additionalProperties": false
            },
            "annotations": read_only
        },
        {
            "name": "read_day",
            "description": format!(
                "Every message of one day (UTC) in {}, with that day's summary if there \
                 is one; long days are cut.",
                whose(scope)
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "date": {"type": "string", "description": "the day, YYYY-MM-DD"}
                },
                "required": ["date"],
                "additionalProperties": false
            },
            "annotations": read_only
        },
        {
            "name": "profile",
            "description": "The profile of the person you are talking to: durable facts \
                            (name, language, preferences, ongoing topics).",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "annotations": read_only
        }
    ])
}

/// A tool's result; bad arguments and unreadable memory are tool errors
/// (`isError`, for the model to read), an unknown tool a protocol error.
fn call_tool(state: &State, scope: &Scope, params: &Value) -> Result<Value, (i64, String)> {
    let name = params["name"].as_str().unwrap_or_default();
    if !TOOLS.contains(&name) {
        return Err((-32602, format!("unknown tool {name:?}")));
    }
    let empty = Map::new();
    let args = match &params["arguments"] {
        Value::Object(args) => args,
        Value::Null => &empty,
        _ => return Ok(tool_error("arguments must be an object".into())),
    };
    let outcome = arguments(name, args).and_then(|a| match name {
        "search_memory" => recall::search_memory(
            state,
            scope,
            a.text("query").unwrap_or_default(),
            a.text("since"),
            a.text("until"),
            a.number("limit"),
        ),
        "read_day" => recall::read_day(state, scope, a.text("date").unwrap_or_default()),
        _ => recall::profile(state, scope),
    });
    Ok(match outcome {
        // Stored chat text, on its way into claude: neutralised as the
        // prompt is, in case a CLI ever acts on a tool result's text.
        Ok(text) => {
            json!({"content": [{"type": "text", "text": crate::claude::neutralise(&text)}], "isError": false})
        }
        // Our own usage messages name no file; anything else might (an I/O
        // error names its path): the operator gets it on stderr, the model
        // a sentence.
        Err(e) if exit_code_of(&e) == Exit::Usage => tool_error(format!("{e:#}")),
        Err(e) => {
            crate::diag::warn(format!("mcp {name}: {e:#}"));
            tool_error("memory could not be read just now".into())
        }
    })
}

fn tool_error(text: String) -> Value {
    json!({"content": [{"type": "text", "text": crate::claude::neutralise(&text)}], "isError": true})
}

/// A tool's arguments, checked against its schema.
struct Arguments<'a>(&'a Map<String, Value>);

impl Arguments<'_> {
    fn text(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn number(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }
}

fn arguments<'a>(tool: &str, args: &'a Map<String, Value>) -> anyhow::Result<Arguments<'a>> {
    let (required, strings, numbers): (&[&str], &[&str], &[&str]) = match tool {
        "search_memory" => (&["query"], &["query", "since", "until"], &["limit"]),
        "read_day" => (&["date"], &["date"], &[]),
        _ => (&[], &[], &[]),
    };
    for key in args.keys() {
        if !strings.contains(&key.as_str()) && !numbers.contains(&key.as_str()) {
            return Err(crate::error::usage(format!(
                "{tool} takes no argument {key:?}"
            )));
        }
    }
    for key in required {
        if !args.contains_key(*key) {
            return Err(crate::error::usage(format!("{tool} needs {key:?}")));
        }
    }
    for (key, value) in args {
        let fits = match value {
            Value::Null => !required.contains(&key.as_str()),
            Value::String(_) => strings.contains(&key.as_str()),
            Value::Number(n) => numbers.contains(&key.as_str()) && n.as_u64().is_some(),
            _ => false,
        };
        if !fits {
            let want = if numbers.contains(&key.as_str()) {
                "a whole number"
            } else {
                "a string"
            };
            return Err(crate::error::usage(format!(
                "{tool}: {key:?} must be {want}"
            )));
        }
    }
    Ok(Arguments(args))
}

fn ok_response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error_response(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The line `ask` adds to the base prompt when recall is on.
pub const RECALL_PROMPT_LINE: &str = "You can look up earlier conversations with the memory \
tools (search_memory, read_day, profile) when the answer is not in the context below; \
never guess a past fact you could look up.";

/// `ask` with `ask.recall`: claude may start exactly this server (for the
/// sender, or the conversation `key` when it is not the sender's own) and
/// use exactly its tools; no built-in tool is enabled by this.
pub fn enable_recall(
    state: &State,
    claude: &mut crate::claude::Claude,
    base: &mut Option<String>,
    sender: &crate::layout::UserId,
    key: &crate::layout::MemoryKey,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let exe = std::env::current_exe().context("could not find this program to start recall")?;
    // claude runs in a folder of its own: the state dir must be absolute.
    let state_dir = std::path::absolute(state.layout.state_dir())
        .context("could not resolve the state dir for recall")?;
    let mut args = vec![
        "--state-dir".to_owned(),
        state_dir.to_string_lossy().into_owned(),
        "mcp".to_owned(),
        "--user".to_owned(),
        sender.as_str().to_owned(),
    ];
    if let Some(key) = key.conversation_key() {
        args.extend(["--conversation".to_owned(), key.as_str().to_owned()]);
    }
    let config = json!({"mcpServers": {SERVER_NAME: {
        "type": "stdio",
        "command": exe.to_string_lossy(),
        "args": args,
    }}});
    claude.mcp_config = Some(config.to_string());
    claude.allowed_tools.extend(allowed_tools());
    // Confined, claude's tree may run this server and read exactly the
    // memory it serves, nothing else of the state dir.
    claude.readable.push(exe.clone());
    claude
        .readable
        .extend(crate::memory::recall::readable_paths(state, sender, key));
    let text = base.get_or_insert_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(RECALL_PROMPT_LINE);
    Ok(())
}

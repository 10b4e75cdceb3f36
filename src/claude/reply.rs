//! Reading what claude printed: its `--output-format json` envelope (or
//! plain text from a stand-in) becomes a [`Reply`] or an error that says
//! what went wrong and whether a retry may help.

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;

use serde_json::Value;

use super::Reply;
use crate::claude::supervise::Output;
use crate::error::{Exit, failure};

pub(super) fn parse_output(program: &Path, output: Output) -> anyhow::Result<Reply> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let trimmed = stdout.trim();
    // An envelope says what went wrong better than an exit code: read it
    // first, whatever the exit status.
    if trimmed.starts_with('{') {
        let envelope = match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Object(envelope)) => envelope,
            Ok(_) => unreachable!("text starting with {{ parses as an object or not at all"),
            Err(e) => {
                return Err(failure(
                    Exit::ClaudeFailed,
                    format!(
                        "claude ({}) printed something that looks like JSON but does not parse \
                         ({e}); its output was not used as a reply: {}",
                        program.display(),
                        one_line(&last_chars(trimmed, 300))
                    ),
                ));
            }
        };
        return parse_envelope(program, &envelope);
    }
    if !output.status.success() {
        let how = match (output.status.code(), output.status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            _ => "failed".into(),
        };
        let detail = last_chars(stderr.trim(), 4000);
        let detail = if detail.is_empty() {
            last_chars(trimmed, 4000)
        } else {
            detail
        };
        return Err(failure(
            Exit::ClaudeFailed,
            format!("claude ({}) {how}: {detail}", program.display()),
        ));
    }
    if trimmed.is_empty() {
        return Err(failure(
            Exit::ClaudeFailed,
            format!(
                "claude ({}) printed nothing{}",
                program.display(),
                if stderr.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", last_chars(stderr.trim(), 4000))
                }
            ),
        ));
    }
    // Not an envelope: a claude (or stand-in) printing plain text.
    Ok(Reply {
        text: stdout.trim_end().to_owned(),
        ..Reply::default()
    })
}

/// claude's `--output-format json` result. Nothing of it is passed on as
/// a reply unless it is a successful one with text (or structured output).
fn parse_envelope(
    program: &Path,
    envelope: &serde_json::Map<String, Value>,
) -> anyhow::Result<Reply> {
    let bad = |what: String| {
        failure(
            Exit::ClaudeFailed,
            format!("claude ({}) {what}; no reply was used", program.display()),
        )
    };
    let is_error = envelope.get("is_error").and_then(Value::as_bool) == Some(true);
    let subtype = envelope.get("subtype").and_then(Value::as_str);
    if is_error || subtype.is_some_and(|s| s != "success") {
        return Err(api_failure(envelope));
    }
    if envelope.get("type").and_then(Value::as_str) != Some("result") {
        return Err(bad(
            "printed a JSON object that is not a result envelope (no \"type\": \"result\")".into(),
        ));
    }
    let structured = envelope
        .get("structured_output")
        .filter(|v| !v.is_null())
        .cloned();
    let text = match envelope.get("result") {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) if structured.is_some() => String::new(),
        None => return Err(bad("answered without a `result`".into())),
        Some(other) => {
            return Err(bad(format!(
                "answered with a `result` that is {}, not text",
                json_kind(other)
            )));
        }
    };
    if text.trim().is_empty() && structured.is_none() {
        return Err(bad("answered with an empty `result`".into()));
    }
    let cost_usd = match envelope.get("total_cost_usd") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(cost) if cost.is_finite() && cost >= 0.0 => Some(cost),
            _ => {
                return Err(bad(format!(
                    "reported an impossible cost (total_cost_usd {n})"
                )));
            }
        },
        Some(other) => {
            return Err(bad(format!(
                "reported a cost that is {}, not a number (total_cost_usd {})",
                json_kind(other),
                last_chars(&other.to_string(), 60)
            )));
        }
    };
    Ok(Reply {
        text,
        usage: total_usage(envelope),
        cost_usd,
        structured,
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The tokens of every request claude made: its `modelUsage` sums each
/// model's requests (a title or tool round included); `usage` alone covers
/// the main conversation only. Without `modelUsage`, `usage` as given.
fn total_usage(envelope: &serde_json::Map<String, Value>) -> Option<Value> {
    let per_model = envelope
        .get("modelUsage")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty());
    let Some(per_model) = per_model else {
        return envelope.get("usage").cloned();
    };
    let fields = [
        ("inputTokens", "input_tokens"),
        ("outputTokens", "output_tokens"),
        ("cacheReadInputTokens", "cache_read_input_tokens"),
        ("cacheCreationInputTokens", "cache_creation_input_tokens"),
    ];
    let mut total = serde_json::Map::new();
    for (theirs, ours) in fields {
        let sum: u64 = per_model
            .values()
            .filter_map(|m| m.get(theirs).and_then(Value::as_u64))
            .sum();
        total.insert(ours.into(), Value::from(sum));
    }
    let models: serde_json::Map<String, Value> = per_model
        .iter()
        .map(|(name, m)| {
            let mut entry = serde_json::Map::new();
            for (theirs, ours) in fields {
                if let Some(n) = m.get(theirs).and_then(Value::as_u64) {
                    entry.insert(ours.into(), Value::from(n));
                }
            }
            if let Some(cost) = m.get("costUSD").and_then(Value::as_f64) {
                entry.insert("costUsd".into(), Value::from(cost));
            }
            (name.clone(), Value::Object(entry))
        })
        .collect();
    total.insert("models".into(), Value::Object(models));
    Some(Value::Object(total))
}

/// An error envelope: its one-line message, and whether a retry may help
/// (rate limits, overload, server errors, the network) or not (auth, a bad
/// request, a turn limit).
fn api_failure(envelope: &serde_json::Map<String, Value>) -> anyhow::Error {
    let subtype = envelope
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = match envelope.get("result") {
        Some(Value::String(text)) if !text.trim().is_empty() => text.clone(),
        _ => match envelope.get("errors").and_then(Value::as_array) {
            Some(errors) if !errors.is_empty() => errors
                .iter()
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join("; "),
            _ => format!("claude ended with `{subtype}` and no message"),
        },
    };
    let status = envelope
        .get("api_error_status")
        .and_then(Value::as_u64)
        .or_else(|| status_in(&message));
    let message = one_line(&last_chars(&message, 500));
    if is_transient(status, &message) {
        failure(
            Exit::ClaudeUnavailable,
            format!("claude is unavailable for now (a retry later may work): {message}"),
        )
    } else {
        failure(Exit::ClaudeFailed, format!("claude failed: {message}"))
    }
}

/// `API Error: 529 …` or `Request rejected (429)`: the HTTP status in
/// claude's message.
fn status_in(message: &str) -> Option<u64> {
    let after = message.split_once("API Error:")?.1;
    after
        .split(|c: char| !c.is_ascii_digit())
        .find(|word| word.len() == 3)
        .and_then(|word| word.parse().ok())
}

fn is_transient(status: Option<u64>, message: &str) -> bool {
    if let Some(status) = status {
        return matches!(status, 408 | 409 | 429 | 500..=599);
    }
    const NETWORK: &[&str] = &[
        "Overloaded",
        "Unable to connect",
        "ECONNRESET",
        "ECONNREFUSED",
        "ETIMEDOUT",
        "EAI_AGAIN",
        "socket hang up",
        "Connection error",
        "timed out",
        // The API's event stream cut off midway (claude -p, streaming).
        "Stream ended",
    ];
    NETWORK.iter().any(|needle| message.contains(needle))
}

/// Newlines and runs of blanks as one space: an error is one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn last_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let tail: String = text.chars().skip(count - max).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use std::process::ExitStatus;

    use super::*;

    fn output(code: i32, stdout: &str, stderr: &str) -> Output {
        Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn envelope_gives_reply_usage_and_cost() {
        let reply = parse_output(
            Path::new("claude"),
            output(
                0,
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":0.5,"usage":{"input_tokens":3},"session_id":"s"}"#,
                "",
            ),
        )
        .unwrap();
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.cost_usd, Some(0.5));
        assert_eq!(reply.usage.unwrap()["input_tokens"], 3);
    }

    #[test]
    fn plain_text_is_the_reply() {
        let reply = parse_output(Path::new("claude"), output(0, "just text\n", "")).unwrap();
        assert_eq!(reply.text, "just text");
        // JSON that is not an envelope is text too.
        let reply = parse_output(Path::new("claude"), output(0, "[1, 2]", "")).unwrap();
        assert_eq!(reply.text, "[1, 2]");
    }

    #[test]
    fn failures_carry_the_claude_failed_code() {
        for out in [
            output(1, "", "boom"),
            output(
                0,
                r#"{"type":"result","is_error":true,"result":"rate limited"}"#,
                "",
            ),
            output(0, "   ", ""),
        ] {
            let err = parse_output(Path::new("claude"), out).unwrap_err();
            assert_eq!(
                crate::error::exit_code_of(&err),
                Exit::ClaudeFailed,
                "{err}"
            );
        }
    }

    fn error_of(stdout: &str) -> (Exit, String) {
        let err = parse_output(Path::new("claude"), output(1, stdout, "")).unwrap_err();
        (crate::error::exit_code_of(&err), format!("{err:#}"))
    }

    #[test]
    fn error_envelopes_give_their_one_line_message_and_whether_to_retry() {
        let envelope = |status: &str, result: &str| {
            format!(
                r#"{{"type":"result","subtype":"success","is_error":true,"api_error_status":{status},"result":"{result}","total_cost_usd":0}}"#
            )
        };
        for (stdout, exit) in [
            (
                envelope(
                    "null",
                    "API Error: Repeated 529 Overloaded errors.\\nTry again.",
                ),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope("429", "API Error: Request rejected (429) · slow down"),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope("500", "API Error: 500 internal"),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope("null", "API Error: Unable to connect to API (ECONNRESET)"),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope(
                    "null",
                    "API Error: Stream ended without receiving any events",
                ),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope(
                    "401",
                    "Failed to authenticate. API Error: 401 invalid x-api-key",
                ),
                Exit::ClaudeFailed,
            ),
            (
                envelope("400", "API Error: 400 prompt is too long"),
                Exit::ClaudeFailed,
            ),
        ] {
            let (code, message) = error_of(&stdout);
            assert_eq!(code, exit, "{message}");
            assert!(!message.contains('\n'), "{message}");
            assert!(!message.contains("session_id"), "{message}");
            assert!(message.contains("API Error"), "{message}");
        }
    }

    #[test]
    fn output_that_is_not_a_reply_is_named_and_never_passed_on() {
        for (stdout, named) in [
            (
                r#"{"type":"result","subtype":"success","is_error":false}"#,
                "without a `result`",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":false,"result":42}"#,
                "a number, not text",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":false,"result":null}"#,
                "null, not text",
            ),
            (
                r#"{"type":"result","result":"hi","#,
                "looks like JSON but does not parse",
            ),
            (r#"{"result":"hi"}"#, "not a result envelope"),
            (
                r#"{"type":"result","subtype":"error_max_turns","is_error":false,"result":"x"}"#,
                "x",
            ),
            (
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":-1.5}"#,
                "impossible cost (total_cost_usd -1.5)",
            ),
            (
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":1e999}"#,
                "does not parse",
            ),
            (
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":"NaN"}"#,
                "a string, not a number",
            ),
        ] {
            let err = parse_output(Path::new("claude"), output(0, stdout, "")).unwrap_err();
            let message = format!("{err:#}");
            assert_eq!(
                crate::error::exit_code_of(&err),
                Exit::ClaudeFailed,
                "{message}"
            );
            assert!(message.contains(named), "{stdout} gave: {message}");
            assert!(
                !message.contains("answered with an error: success"),
                "{message}"
            );
        }
    }

    #[test]
    fn usage_sums_every_model_and_request() {
        let reply = parse_output(
            Path::new("claude"),
            output(
                0,
                r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","total_cost_usd":0.003,
                   "usage":{"input_tokens":100,"output_tokens":20},
                   "modelUsage":{"opus":{"inputTokens":100,"outputTokens":20,"cacheReadInputTokens":5,"cacheCreationInputTokens":0,"costUSD":0.002},
                                 "haiku":{"inputTokens":50,"outputTokens":10,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.001}}}"#,
                "",
            ),
        )
        .unwrap();
        let usage = reply.usage.unwrap();
        assert_eq!(usage["input_tokens"], 150);
        assert_eq!(usage["output_tokens"], 30);
        assert_eq!(usage["cache_read_input_tokens"], 5);
        assert_eq!(usage["models"]["haiku"]["costUsd"], 0.001);
        assert_eq!(reply.cost_usd, Some(0.003));
    }

    #[test]
    fn structured_output_is_a_reply_without_text() {
        let reply = parse_output(
            Path::new("claude"),
            output(
                0,
                r#"{"type":"result","subtype":"success","is_error":false,"structured_output":{"summary":"S"}}"#,
                "",
            ),
        )
        .unwrap();
        assert_eq!(reply.structured.unwrap()["summary"], "S");
    }
}

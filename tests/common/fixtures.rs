//! Fixtures in the tool's formats: message lines as the seed writes them
//! and the answers the fake claude gives.

use serde_json::{Map, Value, json};

/// A message line as the seed writes it: `ts`, `role` and `text`, in that
/// order.
pub fn line(ts: &str, role: &str, text: &str) -> String {
    line_with(ts, role, text, &[])
}

/// A [`line`] with more string fields after those three, in the order
/// given (`&[("msgId", "m1"), ("channel", "slack")]`).
pub fn line_with(ts: &str, role: &str, text: &str, more: &[(&str, &str)]) -> String {
    let mut fields = Map::new();
    fields.insert("ts".into(), json!(ts));
    fields.insert("role".into(), json!(role));
    fields.insert("text".into(), json!(text));
    for (key, value) in more {
        fields.insert((*key).into(), json!(value));
    }
    Value::Object(fields).to_string()
}

/// What a compaction call of the fake claude answers
/// (`FAKE_CLAUDE_REPLY`): a summary and the facts to merge.
pub fn compaction_reply(summary: &str, facts: Value) -> String {
    json!({"summary": summary, "facts": facts}).to_string()
}

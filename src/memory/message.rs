//! One line of `messages.jsonl`: the seed's fields, camelCase, plus any
//! field we do not know, kept as it was.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
}

impl Role {
    /// How the context block names the speaker.
    pub fn label(self) -> &'static str {
        match self {
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::System => "System",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    #[serde(rename = "type")]
    pub kind: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(serialize_with = "write_ts", deserialize_with = "read_ts")]
    pub ts: DateTime<Utc>,
    pub role: Role,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Vec<Attachment>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Fields this version does not know (token usage, a newer tool's
    /// additions): kept so a rewrite never drops them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Message {
    pub fn new(role: Role, text: impl Into<String>, ts: DateTime<Utc>) -> Self {
        Self {
            ts,
            role,
            text: text.into(),
            msg_id: None,
            channel: None,
            attachments: None,
            thread_id: None,
            group_id: None,
            extra: Map::new(),
        }
    }

    /// In a group conversation, the user who sent a user line (`userId`).
    pub fn sender(&self) -> Option<&str> {
        self.extra.get("userId").and_then(Value::as_str)
    }

    /// Parse one log line. Errors say why, for the warning that skips it.
    pub fn parse(line: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(line).map_err(|_| "not valid UTF-8".to_owned())?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The single line (no newline) this message is stored as.
    pub fn to_line(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a message serialises")
    }
}

/// The few keys of a log line that scans need (time, message id, reply
/// id), read without building the whole message: most lines of a scan are
/// only looked at, and this borrows instead of allocating.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineKeys<'a> {
    #[serde(borrow)]
    pub ts: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    pub msg_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pub reply_to: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pub role: Option<std::borrow::Cow<'a, str>>,
}

impl<'a> LineKeys<'a> {
    pub fn parse(line: &'a [u8]) -> Option<Self> {
        serde_json::from_slice(line).ok()
    }

    pub fn time(&self) -> Option<DateTime<Utc>> {
        parse_ts(&self.ts).ok()
    }
}

/// RFC 3339 in UTC with `Z` and milliseconds, as JavaScript's
/// `toISOString()` writes it (the seed's format).
pub fn format_ts(ts: &DateTime<Utc>) -> String {
    ts.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn parse_ts(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("`{text}` is not an RFC 3339 time ({e})"))
}

/// How far ahead of this host's clock a message time may be: the clocks
/// of two broker hosts disagree by seconds, not minutes.
pub const MAX_CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(5);

/// Refuse a message time beyond [`MAX_CLOCK_SKEW`] ahead of `now`: one
/// line from the future would count as activity until that day.
pub fn check_not_future(ts: &DateTime<Utc>, now: DateTime<Utc>) -> Result<(), String> {
    if *ts > now + MAX_CLOCK_SKEW {
        return Err(format!(
            "{} is in the future (this host's clock says {}; at most {} minutes ahead are accepted)",
            format_ts(ts),
            format_ts(&now),
            MAX_CLOCK_SKEW.num_minutes()
        ));
    }
    Ok(())
}

/// Whether a stored time counts as a sign of life at `now`: times beyond
/// the clock skew (hand edits, an earlier version) are ignored.
pub fn is_believable(ts: &DateTime<Utc>, now: DateTime<Utc>) -> bool {
    *ts <= now + MAX_CLOCK_SKEW
}

fn write_ts<S: Serializer>(ts: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_ts(ts))
}

fn read_ts<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    let text = String::deserialize(d)?;
    parse_ts(&text).map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_line_parses_and_unknown_fields_survive() {
        let line = br#"{"ts":"2026-03-23T03:28:32Z","role":"user","text":"hi","msgId":"123","channel":"slack","mood":{"x":1}}"#;
        let msg = Message::parse(line).unwrap();
        assert_eq!(msg.role, Role::User);
        assert_eq!(msg.msg_id.as_deref(), Some("123"));
        assert_eq!(msg.extra["mood"], serde_json::json!({"x": 1}));
        let again = Message::parse(&msg.to_line()).unwrap();
        assert_eq!(again, msg);
        assert!(
            String::from_utf8(msg.to_line())
                .unwrap()
                .contains(r#""mood":{"x":1}"#)
        );
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(
            Message::parse(b"{\"ts\":\"x\",\"role\":\"user\",\"text\":\"a\"}")
                .unwrap_err()
                .contains("RFC 3339")
        );
        assert!(
            Message::parse(b"{\"ts\":\"2026-01-01T00:00:00Z\",\"role\":\"bot\",\"text\":\"a\"}")
                .is_err()
        );
        assert_eq!(Message::parse(b"\xff").unwrap_err(), "not valid UTF-8");
    }
}

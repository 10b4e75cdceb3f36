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
#[serde(rename_all = "camelCase", from = "StoredMessage")]
pub struct Message {
    #[serde(serialize_with = "write_ts")]
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
    /// In a group or thread conversation, who sent a user line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The sender's name as the platform gave it (`--display-name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_name: Option<String>,
    /// On an assistant line: the `msgId` of the message it answers, so a
    /// redelivered message is answered from the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// On an assistant line in a group: who asked, so an erase of that
    /// person takes the answer too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// On an assistant line: the tokens its call used, as claude reported
    /// them (any JSON: claude's shape, not ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// On an assistant line: what its call cost, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
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
            user_id: None,
            user_name: None,
            reply_to: None,
            asked_by: None,
            usage: None,
            cost_usd: None,
            extra: Map::new(),
        }
    }

    /// A line a person sent. In a group or thread conversation (`in_group`
    /// gives the sender and the name the platform knows them by) the line
    /// says who sent it: the group's context names the speaker, and an
    /// erase of the person finds the line.
    pub fn user_line(
        text: impl Into<String>,
        ts: DateTime<Utc>,
        in_group: Option<(&str, Option<&str>)>,
    ) -> Self {
        let mut message = Self::new(Role::User, text, ts);
        if let Some((sender, name)) = in_group {
            message.user_id = Some(sender.to_owned());
            message.user_name = name.map(str::to_owned);
        }
        message
    }

    /// The assistant's answer to `question`: on the same platform, thread
    /// and group, naming the message it answers (`replyTo`). An answer in
    /// a group carries who asked (`askedBy`, the question's sender): an
    /// erase of that person takes the answer with their question.
    pub fn reply_line(question: &Message, text: impl Into<String>, ts: DateTime<Utc>) -> Self {
        let mut answer = Self::new(Role::Assistant, text, ts);
        answer.channel = question.channel.clone();
        answer.thread_id = question.thread_id.clone();
        answer.group_id = question.group_id.clone();
        answer.reply_to = question.msg_id.clone();
        answer.asked_by = question.user_id.clone();
        answer
    }

    /// Whether an assistant line may be the answer to `msg_id`: it names
    /// it in `replyTo`, or has no `replyTo` at all (the seed logs answers
    /// without one, right after the question). A `replyTo` that is not text
    /// names no message, so it answers none.
    pub fn answers(&self, msg_id: &str) -> bool {
        match &self.reply_to {
            Some(id) => id == msg_id,
            None => !self.extra.contains_key("replyTo"),
        }
    }

    /// In a group conversation, the user who sent a user line (`userId`).
    pub fn sender(&self) -> Option<&str> {
        self.user_id.as_deref()
    }

    /// Whether the line is about `user` in a group: they sent it, or it
    /// answers them. What an erase of the person removes from a group.
    pub fn is_about(&self, user: &str) -> bool {
        self.user_id.as_deref() == Some(user) || self.asked_by.as_deref() == Some(user)
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
/// The `channel` of a line with neither `--source` nor `--channel`: the
/// seed's own default (`createUserProfile` writes `channel: unknown`).
/// Every line names a platform, so the seed's readers find the field.
pub const DEFAULT_CHANNEL: &str = "unknown";

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

/// A log line as read: [`Message`] with its four typed text fields still
/// raw. A value that is not text there (a hand edit, another tool) stays
/// in `extra` under its key, as it did when these fields were looked up by
/// key, so it is neither lost on a rewrite nor taken for a text value.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredMessage {
    #[serde(deserialize_with = "read_ts")]
    ts: DateTime<Utc>,
    role: Role,
    text: String,
    #[serde(default)]
    msg_id: Option<String>,
    #[serde(default)]
    channel: Option<String>,
    #[serde(default)]
    attachments: Option<Vec<Attachment>>,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    group_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    user_id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    user_name: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    reply_to: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    asked_by: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    usage: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    cost_usd: Option<Value>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl From<StoredMessage> for Message {
    fn from(stored: StoredMessage) -> Self {
        let mut extra = stored.extra;
        let mut text_of = |key: &str, value: Option<Value>| match value {
            Some(Value::String(text)) => Some(text),
            Some(other) => {
                extra.insert(key.to_owned(), other);
                None
            }
            None => None,
        };
        let user_id = text_of("userId", stored.user_id);
        let user_name = text_of("userName", stored.user_name);
        let reply_to = text_of("replyTo", stored.reply_to);
        let asked_by = text_of("askedBy", stored.asked_by);
        // Only a number written with a fraction or exponent is the cost
        // this tool writes (`0.5`); anything else (a hand-edited `0`, text)
        // stays as it was, untouched by a rewrite.
        let cost_usd = match stored.cost_usd {
            Some(Value::Number(n)) if n.is_f64() => n.as_f64(),
            Some(other) => {
                extra.insert("costUsd".to_owned(), other);
                None
            }
            None => None,
        };
        Self {
            ts: stored.ts,
            role: stored.role,
            text: stored.text,
            msg_id: stored.msg_id,
            channel: stored.channel,
            attachments: stored.attachments,
            thread_id: stored.thread_id,
            group_id: stored.group_id,
            user_id,
            user_name,
            reply_to,
            asked_by,
            usage: stored.usage,
            cost_usd,
            extra,
        }
    }
}

/// A key that is there, whatever its value (`null` included): `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
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
    fn a_typed_field_that_is_not_text_stays_as_it_was_and_names_nothing() {
        let line = br#"{"ts":"2026-03-23T03:28:32.000Z","role":"assistant","text":"hi","userId":7,"replyTo":null}"#;
        let msg = Message::parse(line).unwrap();
        assert_eq!(msg.user_id, None);
        assert_eq!(msg.reply_to, None);
        assert_eq!(msg.extra["userId"], serde_json::json!(7));
        assert_eq!(msg.extra["replyTo"], Value::Null);
        assert!(!msg.answers("m1"), "a null replyTo answers no message");
        let again = Message::parse(&msg.to_line()).unwrap();
        assert_eq!(again, msg, "a rewrite keeps the odd values");

        let seed = br#"{"ts":"2026-03-23T03:28:32.000Z","role":"assistant","text":"hi"}"#;
        assert!(
            Message::parse(seed).unwrap().answers("m1"),
            "seed: no replyTo"
        );
        let named =
            br#"{"ts":"2026-03-23T03:28:32.000Z","role":"assistant","text":"hi","replyTo":"m2"}"#;
        let named = Message::parse(named).unwrap();
        assert!(named.answers("m2") && !named.answers("m1"));
    }

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

    /// The typed fields keep the keys and the order of the lines an
    /// earlier version wrote with them in the untyped rest: byte for byte.
    /// The cost this tool writes is read as a number; any other value
    /// under `costUsd` (an integer a hand edit left, text) is kept as is.
    #[test]
    fn cost_is_typed_and_other_values_are_kept() {
        let line = br#"{"ts":"2026-03-23T03:28:32.000Z","role":"assistant","text":"a","usage":{"input_tokens":1},"costUsd":0.25}"#;
        let msg = Message::parse(line).unwrap();
        assert_eq!(msg.cost_usd, Some(0.25));
        assert_eq!(msg.usage, Some(serde_json::json!({"input_tokens": 1})));
        assert!(msg.extra.is_empty());
        assert_eq!(msg.to_line(), line.to_vec());
        for odd in [r#"0"#, r#""free""#, "null"] {
            let line = format!(
                r#"{{"ts":"2026-03-23T03:28:32.000Z","role":"assistant","text":"a","costUsd":{odd}}}"#
            );
            let msg = Message::parse(line.as_bytes()).unwrap();
            assert_eq!(msg.cost_usd, None, "{odd}");
            assert_eq!(String::from_utf8(msg.to_line()).unwrap(), line);
        }
    }

    #[test]
    fn group_and_reply_lines_are_written_as_before() {
        let ts = parse_ts("2026-03-23T03:28:32Z").unwrap();
        let mut question = Message::user_line("hi", ts, Some(("U1", Some("Alice"))));
        question.msg_id = Some("m1".into());
        question.channel = Some("slack".into());
        question.group_id = Some("G1".into());
        assert_eq!(
            String::from_utf8(question.to_line()).unwrap(),
            r#"{"ts":"2026-03-23T03:28:32.000Z","role":"user","text":"hi","msgId":"m1","channel":"slack","groupId":"G1","userId":"U1","userName":"Alice"}"#
        );
        let mut answer = Message::reply_line(&question, "hello", ts);
        answer.usage = Some(serde_json::json!({"output_tokens": 3}));
        answer.cost_usd = Some(0.5);
        let line = String::from_utf8(answer.to_line()).unwrap();
        assert_eq!(
            line,
            r#"{"ts":"2026-03-23T03:28:32.000Z","role":"assistant","text":"hello","channel":"slack","groupId":"G1","replyTo":"m1","askedBy":"U1","usage":{"output_tokens":3},"costUsd":0.5}"#
        );
        assert_eq!(Message::parse(line.as_bytes()).unwrap(), answer);
        assert!(answer.is_about("U1") && question.is_about("U1"));
        assert!(!answer.is_about("U2"));
        // A one-to-one question: its answer names no asker.
        let alone = Message::user_line("hi", ts, None);
        assert_eq!(Message::reply_line(&alone, "hello", ts).asked_by, None);
    }

    #[test]
    fn a_field_of_ours_that_is_not_text_reads_as_absent() {
        let line =
            br#"{"ts":"2026-03-23T03:28:32Z","role":"user","text":"hi","userId":7,"replyTo":null}"#;
        let message = Message::parse(line).unwrap();
        assert_eq!(
            (message.sender(), message.reply_to.as_deref()),
            (None, None)
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

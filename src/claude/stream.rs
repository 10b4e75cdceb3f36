//! Reading claude's event stream (`-p --output-format stream-json --verbose
//! --include-partial-messages`): one JSON event per line, as claude writes
//! them. Pure: lines in, text to print out; the process is run by
//! [`super::Claude::call_streaming_in`].
//!
//! What the real CLI (2.1.x) prints, in order: `system` events (`init`,
//! `status`), then per API response `stream_event`s wrapping the Messages
//! API's SSE events (`message_start`, `content_block_delta` with a
//! `text_delta`, …), an `assistant` event with the whole message, and at the
//! end one `result` event shaped like the `--output-format json` envelope.
//! Events of a subagent carry a `parent_tool_use_id`; only the top level is
//! the reply. The `result` line is handed to the same parser as the
//! non-streaming envelope, so reply, usage and cost are read one way.

use serde_json::Value;

/// Follows one call's stdout line by line.
#[derive(Debug, Default)]
pub struct StreamReader {
    /// Every piece handed out for printing, concatenated.
    streamed: String,
    /// The `result` event's line, as claude printed it.
    result: Option<String>,
    /// A later assistant message (after a tool call) starts on a new
    /// paragraph: its first text gets a blank line before it.
    separate: bool,
    /// Lines that were not events: a program printing plain text (a
    /// stand-in, an old claude), whose text is the reply.
    plain: bool,
    /// Line breaks owed before the next plain line: trailing ones are
    /// never printed, as the non-streaming reply is trimmed at the end.
    pending_newlines: usize,
    /// Text was handed out since the last `message_start`…
    turn_text: bool,
    /// … and that message was completed (its `assistant` event came).
    turn_done: bool,
    /// A message was begun again before the one being streamed ended: the
    /// connection was lost midway and claude (2.1.332) asked anew. Nothing
    /// more is handed out; the call fails, as the chat saw a first part
    /// the reply will not hold.
    restarted: bool,
}

/// How the final reply relates to the text already printed.
#[derive(Debug, PartialEq, Eq)]
pub enum Ending {
    /// Everything is out.
    Complete,
    /// The reply goes on past what was streamed: print this too (a claude
    /// that sent no partial messages, or sent fewer than its result).
    Rest(String),
    /// What was printed is not the reply (claude started over): the chat
    /// shows text that memory would not hold.
    Diverged,
}

impl StreamReader {
    /// One line of stdout, without its line break. Returns the text to
    /// print now, if the line carried some.
    pub fn line(&mut self, line: &str) -> Option<String> {
        let event = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(event)) if event.get("type").is_some_and(Value::is_string) => event,
            _ => return self.plain_line(line),
        };
        match event["type"].as_str() {
            Some("result") => {
                self.result = Some(line.to_owned());
                None
            }
            Some("assistant") if top_level(&event) => {
                self.turn_done = true;
                None
            }
            Some("stream_event") if top_level(&event) => {
                let inner = event.get("event")?;
                match inner.get("type").and_then(Value::as_str)? {
                    "message_start" => {
                        if self.turn_text && !self.turn_done {
                            self.restarted = true;
                        }
                        self.turn_text = false;
                        self.turn_done = false;
                        self.separate = !self.streamed.is_empty();
                        None
                    }
                    "content_block_delta" if self.restarted => None,
                    "content_block_delta" => {
                        let delta = inner.get("delta")?;
                        if delta.get("type").and_then(Value::as_str) != Some("text_delta") {
                            return None;
                        }
                        let text = delta.get("text").and_then(Value::as_str)?;
                        if text.is_empty() {
                            return None;
                        }
                        let mut piece = String::new();
                        if std::mem::take(&mut self.separate) {
                            piece.push_str("\n\n");
                        }
                        piece.push_str(text);
                        self.turn_text = true;
                        Some(self.emit(piece))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn plain_line(&mut self, line: &str) -> Option<String> {
        if self.result.is_some() {
            return None;
        }
        self.plain = true;
        if line.trim_end().is_empty() {
            self.pending_newlines += 1;
            return None;
        }
        let mut piece = "\n".repeat(std::mem::replace(&mut self.pending_newlines, 1));
        piece.push_str(line);
        Some(self.emit(piece))
    }

    fn emit(&mut self, piece: String) -> String {
        self.streamed.push_str(&piece);
        piece
    }

    /// Whether claude began its answer again midway (see `restarted`).
    pub fn restarted(&self) -> bool {
        self.restarted
    }

    /// Everything handed out so far.
    pub fn streamed(&self) -> &str {
        &self.streamed
    }

    /// What the envelope parser reads: the `result` line; else, from a
    /// program that printed plain text, that text; else nothing.
    pub fn into_stdout(self) -> Vec<u8> {
        match self.result {
            Some(line) => line.into_bytes(),
            None if self.plain => self.streamed.into_bytes(),
            None => Vec::new(),
        }
    }
}

fn top_level(event: &serde_json::Map<String, Value>) -> bool {
    event.get("parent_tool_use_id").is_none_or(Value::is_null)
}

/// Compare what was streamed with the reply claude ended on.
pub fn ending(streamed: &str, reply: &str) -> Ending {
    if streamed == reply || streamed.trim_end() == reply {
        return Ending::Complete;
    }
    if let Some(rest) = reply.strip_prefix(streamed) {
        return Ending::Rest(rest.to_owned());
    }
    // Text written before a tool call, then the reply as its own paragraph:
    // the reply is the last message, as without streaming.
    if streamed
        .strip_suffix(reply)
        .is_some_and(|before| before.ends_with("\n\n"))
    {
        return Ending::Complete;
    }
    Ending::Diverged
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output of `claude -p --output-format stream-json --verbose
    /// --include-partial-messages` 2.1.197 against a loopback mock.
    const OK: &str = include_str!("testdata/stream-ok.jsonl");
    /// The same, the mock dropping the connection after two text deltas,
    /// `CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1` (exit code 1).
    const DROPPED: &str = include_str!("testdata/stream-dropped.jsonl");
    /// A `Read` tool call, its result, then the text reply.
    const TOOL: &str = include_str!("testdata/stream-tool.jsonl");
    /// 2.1.332, the mock dropping the connection after three deltas: an
    /// `api_retry` event, the same request again, and another answer.
    const RETRIED: &str = include_str!("testdata/stream-retried.jsonl");

    fn read(stream: &str) -> (Vec<String>, StreamReader) {
        let mut reader = StreamReader::default();
        let pieces = stream.lines().filter_map(|l| reader.line(l)).collect();
        (pieces, reader)
    }

    fn result_text(stdout: &[u8]) -> String {
        let value: Value = serde_json::from_slice(stdout).unwrap();
        value["result"].as_str().unwrap().to_owned()
    }

    #[test]
    fn an_answer_begun_again_midway_hands_out_nothing_more() {
        let (pieces, reader) = read(RETRIED);
        assert!(reader.restarted());
        assert_eq!(
            pieces.concat(),
            "piece 00 piece 01 piece 02 piece 03 piece 04 pie"
        );
        // The tool call's second message is no restart.
        let (_, reader) = read(TOOL);
        assert!(!reader.restarted());
        let (_, reader) = read(OK);
        assert!(!reader.restarted());
    }

    #[test]
    fn real_stream_gives_each_delta_and_the_result_line() {
        let (pieces, reader) = read(OK);
        assert_eq!(
            pieces,
            [
                "Hello there, thi",
                "s is a streamed ",
                "reply with sever",
                "al chunks of tex",
                "t in it."
            ]
        );
        let streamed = reader.streamed().to_owned();
        let stdout = reader.into_stdout();
        assert_eq!(result_text(&stdout), streamed);
        assert_eq!(ending(&streamed, &result_text(&stdout)), Ending::Complete);
    }

    #[test]
    fn dropped_stream_keeps_the_error_result() {
        let (pieces, reader) = read(DROPPED);
        assert_eq!(pieces, ["Hello there, thi", "s is a streamed "]);
        let stdout = reader.into_stdout();
        let value: Value = serde_json::from_slice(&stdout).unwrap();
        assert_eq!(value["is_error"], true);
        assert!(result_text(&stdout).contains("Stream ended"));
    }

    #[test]
    fn tool_input_is_not_text_and_the_reply_is_the_last_message() {
        let (pieces, reader) = read(TOOL);
        assert_eq!(pieces.concat(), "The note says hello — 你好.");
        let streamed = reader.streamed().to_owned();
        assert_eq!(
            ending(&streamed, &result_text(&reader.into_stdout())),
            Ending::Complete
        );
    }

    #[test]
    fn a_later_message_starts_a_new_paragraph() {
        let start = r#"{"type":"stream_event","event":{"type":"message_start","message":{}},"parent_tool_use_id":null}"#;
        let delta = |t: &str| {
            format!(
                r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{t}"}}}},"parent_tool_use_id":null}}"#
            )
        };
        let sub = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"subagent"}},"parent_tool_use_id":"toolu_1"}"#;
        // The whole message, which the CLI prints when one ends (a message
        // begun again without it is a restart).
        let done = r#"{"type":"assistant","message":{},"parent_tool_use_id":null}"#;
        let mut reader = StreamReader::default();
        let mut out = String::new();
        for line in [
            start.to_owned(),
            delta("Let me look."),
            done.to_owned(),
            start.to_owned(),
            sub.to_owned(),
            start.to_owned(),
            delta("It says hi."),
        ] {
            out.extend(reader.line(&line));
        }
        assert_eq!(out, "Let me look.\n\nIt says hi.");
        assert_eq!(ending(&out, "It says hi."), Ending::Complete);
    }

    #[test]
    fn plain_text_streams_as_it_would_print() {
        let mut reader = StreamReader::default();
        let out: String = ["", "one", "", "two  ", "", ""]
            .iter()
            .filter_map(|l| reader.line(l))
            .collect();
        assert_eq!(out, "\none\n\ntwo  ");
        assert_eq!(reader.into_stdout(), b"\none\n\ntwo  ");
        assert_eq!(ending(&out, "\none\n\ntwo"), Ending::Complete);
    }

    #[test]
    fn nothing_printed_gives_nothing_to_parse() {
        let (pieces, reader) = read(
            r#"{"type":"system","subtype":"init"}
{"type":"stream_event","event":{"type":"message_start"},"parent_tool_use_id":null}"#,
        );
        assert!(pieces.is_empty());
        assert!(reader.into_stdout().is_empty());
    }

    #[test]
    fn endings() {
        assert_eq!(ending("", "all of it"), Ending::Rest("all of it".into()));
        assert_eq!(ending("all", "all of it"), Ending::Rest(" of it".into()));
        assert_eq!(ending("all of it", "all of it"), Ending::Complete);
        assert_eq!(ending("Hello there", "mock reply"), Ending::Diverged);
        // A reply that merely ends like the stream, without the paragraph
        // break of a later message, is not the same text.
        assert_eq!(ending("xall of it", "all of it"), Ending::Diverged);
        assert_eq!(ending("all of it, and more", "all of it"), Ending::Diverged);
    }
}

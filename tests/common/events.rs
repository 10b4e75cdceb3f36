//! `ask --stream --json` events: parsing them, and a redelivery that
//! arrives while the first delivery still streams.

use serde_json::Value;

use super::{stderr_of, stdout_of};

/// `ask --stream --json` output: every stdout line parsed as JSON; panics
/// on one that is not.
pub fn stream_events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
        })
        .collect()
}

/// The `type` of each stream event, in order.
pub fn event_kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().expect("every event has a type"))
        .collect()
}

/// The text of every `delta` event, joined.
pub fn event_deltas(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "delta")
        .map(|e| e["text"].as_str().expect("a delta has text"))
        .collect()
}

/// A redelivery while the first delivery streams: `first` is started and
/// read up to its first event line, then `second` runs to its end, then the
/// rest of `first` is read. Both must succeed; returns both event lists.
pub fn redelivered_while_streaming(
    mut first: std::process::Child,
    second: impl FnOnce() -> std::process::Child,
) -> (Vec<Value>, Vec<Value>) {
    use std::io::{BufRead as _, Read as _};
    let mut first_out = std::io::BufReader::new(first.stdout.take().unwrap());
    let mut line = String::new();
    first_out.read_line(&mut line).unwrap();
    assert!(line.contains("\"delta\""), "{line}");
    // The first is streaming; the platform delivers the message again.
    let second = second().wait_with_output().unwrap();
    let mut rest = String::new();
    first_out.read_to_string(&mut rest).unwrap();
    assert!(first.wait().unwrap().success());
    assert!(second.status.success(), "{}", stderr_of(&second));
    (
        stream_events(&format!("{line}{rest}")),
        stream_events(&stdout_of(&second)),
    )
}

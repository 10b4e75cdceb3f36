//! How `ask --stream` prints: the reply's text as it is written, flushed
//! per piece, then an end. Plain text by default, so the bytes on stdout are
//! those `ask` prints without streaming. With `--json`, one JSON object per
//! line:
//!
//! - `{"type":"delta","text":…}` for each piece;
//! - one `{"type":"done",…}` carrying what `ask --json` prints;
//! - or, if the ask fails after all, `{"type":"error","message":…,"exit":…}`
//!   as the last line instead of `done`.
//!
//! A reply that is not being written (a replay, a budget note, an in-chat
//! command) is one delta and the done: a broker has one code path.

use std::cell::{Cell, RefCell};
use std::io::Write as _;

use serde::Serialize;

use crate::error::exit_code_of;

/// One line of `--stream --json`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Event<'a, T: Serialize> {
    Delta {
        text: &'a str,
    },
    /// The fields of what `ask --json` prints, after the tag.
    Done(&'a T),
    Error {
        message: String,
        exit: i32,
    },
}

/// An event that is not `Done`.
type Plain<'a> = Event<'a, ()>;

pub struct ReplyStream {
    json: bool,
    /// A delta went out (or was attempted).
    started: Cell<bool>,
    /// `done` went out: nothing follows it.
    finished: Cell<bool>,
    /// The first failed write (a broker that closed our stdout). Later
    /// pieces are not written; the ask goes on, so the reply is logged.
    broken: RefCell<Option<std::io::Error>>,
}

impl ReplyStream {
    pub fn new(json: bool) -> Self {
        Self {
            json,
            started: Cell::new(false),
            finished: Cell::new(false),
            broken: RefCell::new(None),
        }
    }

    /// One piece of the reply, out now.
    pub fn delta(&self, text: &str) {
        self.started.set(true);
        if self.json {
            self.write(&line(&Plain::Delta { text }));
        } else {
            self.write(text.as_bytes());
        }
    }

    /// The end of a reply: its whole `text` as one delta if nothing was
    /// streamed, then `done` carrying `object` (with `--json`), or the
    /// final line break of plain text.
    pub fn done(&self, text: &str, object: &impl Serialize) -> anyhow::Result<()> {
        if !self.started.get() {
            self.delta(text);
        }
        if self.json {
            self.write(&line(&Event::Done(object)));
        } else if !text.ends_with('\n') {
            self.write(b"\n");
        }
        self.finished.set(true);
        match self.broken.borrow_mut().take() {
            Some(e) => Err(anyhow::Error::new(e).context("could not print the reply")),
            None => Ok(()),
        }
    }

    /// An ask that failed: with `--json`, the error event (unless `done`
    /// already ended the stream, as with a budget refusal); in plain text,
    /// the line break that ends a reply cut off midway. The message goes
    /// to stderr as for any failure.
    pub fn error(&self, err: &anyhow::Error) {
        if self.finished.get() {
            return;
        }
        if self.json {
            self.write(&line(&Plain::Error {
                message: format!("{err:#}"),
                exit: exit_code_of(err).code(),
            }));
        } else if self.started.get() {
            self.write(b"\n");
        }
    }

    fn write(&self, bytes: &[u8]) {
        if self.broken.borrow().is_some() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
            *self.broken.borrow_mut() = Some(e);
        }
    }
}

fn line(event: &Event<impl Serialize>) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(event).expect("an event serialises");
    bytes.push(b'\n');
    bytes
}

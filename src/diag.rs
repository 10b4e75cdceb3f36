//! Diagnostics on stderr. Stdout carries only the answer (a reply, a
//! context block, a report), so brokers can read it without filtering.

use std::io::Write as _;
use std::sync::atomic::{AtomicI8, Ordering};

/// -1: quiet (`-q`), 0: normal, 1+: verbose (`-v`).
static VERBOSITY: AtomicI8 = AtomicI8::new(0);

pub fn set_verbosity(level: i8) {
    VERBOSITY.store(level, Ordering::Relaxed);
}

pub fn verbosity() -> i8 {
    VERBOSITY.load(Ordering::Relaxed)
}

/// Something the user should know that did not stop the command.
pub fn warn(message: impl AsRef<str>) {
    if verbosity() >= 0 {
        let _ = writeln!(
            std::io::stderr(),
            "claude-session: warning: {}",
            message.as_ref()
        );
    }
}

/// Progress or detail only wanted with `-v`.
pub fn info(message: impl AsRef<str>) {
    if verbosity() >= 1 {
        let _ = writeln!(std::io::stderr(), "claude-session: {}", message.as_ref());
    }
}

/// A failure worth reporting even with `-q` (one item of a pass that goes
/// on; the command's own exit code says it failed).
pub fn error(message: impl AsRef<str>) {
    let _ = writeln!(
        std::io::stderr(),
        "claude-session: error: {}",
        message.as_ref()
    );
}

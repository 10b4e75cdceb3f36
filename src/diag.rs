//! Diagnostics on stderr. Stdout carries only the answer (a reply, a
//! context block, a report), so brokers can read it without filtering.
//!
//! A progress line may be drawn in place on stderr ([`show_progress`]).
//! Every diagnostic, from any thread, clears it first and draws it again
//! after itself, under one lock: a warning from a worker never lands in
//! the middle of the progress bar.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI8, Ordering};

/// -1: quiet (`-q`), 0: normal, 1+: verbose (`-v`).
static VERBOSITY: AtomicI8 = AtomicI8::new(0);

/// The progress line now on stderr; empty when there is none. Its lock is
/// held for every write to stderr made here.
static PROGRESS: Mutex<String> = Mutex::new(String::new());

pub fn set_verbosity(level: i8) {
    VERBOSITY.store(level, Ordering::Relaxed);
}

pub fn verbosity() -> i8 {
    VERBOSITY.load(Ordering::Relaxed)
}

/// Something the user should know that did not stop the command.
pub fn warn(message: impl AsRef<str>) {
    if verbosity() >= 0 {
        emit(&format!("claude-session: warning: {}", message.as_ref()));
    }
}

/// Progress or detail only wanted with `-v`.
pub fn info(message: impl AsRef<str>) {
    if verbosity() >= 1 {
        emit(&format!("claude-session: {}", message.as_ref()));
    }
}

/// A failure worth reporting even with `-q` (one item of a pass that goes
/// on; the command's own exit code says it failed).
pub fn error(message: impl AsRef<str>) {
    emit(&format!("claude-session: error: {}", message.as_ref()));
}

/// Draw `line` in place of the progress line on stderr (the caller checked
/// that stderr is a terminal).
pub fn show_progress(line: &str) {
    let mut progress = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
    let mut stderr = std::io::stderr().lock();
    redraw(&mut stderr, &progress, line);
    line.clone_into(&mut progress);
}

/// Erase the progress line: what follows starts on a clean line.
pub fn end_progress() {
    let mut progress = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
    let mut stderr = std::io::stderr().lock();
    redraw(&mut stderr, &progress, "");
    progress.clear();
}

/// One diagnostic line, around the progress line if one is drawn.
fn emit(line: &str) {
    let progress = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
    let mut stderr = std::io::stderr().lock();
    write_around(&mut stderr, &progress, line);
}

/// `line` on a line of its own: the progress line erased before it and
/// drawn again after it. A diagnostic may quote what a chat user sent or
/// a model answered (an id, a path, claude's output), so its control
/// characters are shown as escapes, never sent to the terminal.
fn write_around(out: &mut impl std::io::Write, progress: &str, line: &str) {
    let line = crate::terminal::printable(line);
    if progress.is_empty() {
        let _ = writeln!(out, "{line}");
    } else {
        redraw(out, progress, "");
        let _ = writeln!(out, "{line}");
        let _ = write!(out, "{progress}");
    }
    let _ = out.flush();
}

/// Replace the progress line `old` by `new` (empty: erase it), leaving the
/// cursor at the end of `new`.
fn redraw(out: &mut impl std::io::Write, old: &str, new: &str) {
    let old_width = unicode_width::UnicodeWidthStr::width(old);
    let new_width = unicode_width::UnicodeWidthStr::width(new);
    let _ = write!(out, "\r{new}");
    if old_width > new_width {
        let blank = old_width - new_width;
        let _ = write!(out, "{}{}", " ".repeat(blank), "\u{8}".repeat(blank));
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a terminal shows for these bytes: `\r` goes back to the start
    /// of the line, `\u{8}` one column back, `\n` to a new line.
    fn screen(bytes: &[u8]) -> Vec<String> {
        let mut lines = vec![Vec::<char>::new()];
        let mut column: usize = 0;
        for c in String::from_utf8(bytes.to_vec()).unwrap().chars() {
            let line = lines.last_mut().unwrap();
            match c {
                '\r' => column = 0,
                '\u{8}' => column = column.saturating_sub(1),
                '\n' => {
                    lines.push(Vec::new());
                    column = 0;
                }
                c => {
                    if column < line.len() {
                        line[column] = c;
                    } else {
                        line.push(c);
                    }
                    column += 1;
                }
            }
        }
        lines
            .into_iter()
            .map(|l| l.into_iter().collect::<String>().trim_end().to_owned())
            .collect()
    }

    #[test]
    fn a_warning_never_shares_the_progress_line() {
        let mut out = Vec::new();
        let bar = "compact      [##########          ] 1/3";
        redraw(&mut out, "", bar);
        write_around(&mut out, bar, "claude-session: warning: U2: could not read");
        let longer = "compact      [####################] 2/3";
        redraw(&mut out, bar, longer);
        write_around(&mut out, longer, "claude-session: warning: U3: too");
        redraw(&mut out, longer, "");
        assert_eq!(
            screen(&out),
            [
                "claude-session: warning: U2: could not read",
                "claude-session: warning: U3: too",
                "",
            ]
        );
        // Without a progress line, a diagnostic is just its line.
        let mut plain = Vec::new();
        write_around(&mut plain, "", "claude-session: warning: x");
        assert_eq!(plain, b"claude-session: warning: x\n");
    }
}

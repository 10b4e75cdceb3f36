//! A one-line progress counter on stderr, shown only on a terminal (and
//! not with -q): cron logs and broker pipes get nothing extra. It is drawn
//! through `diag`, so warnings from worker threads never share its line.

use std::io::IsTerminal as _;
use std::sync::Mutex;

pub struct Progress {
    label: String,
    total: usize,
    /// Steps done. Counted and drawn under this lock: a worker that counted
    /// before the last one must not draw after the line was cleared.
    done: Mutex<usize>,
    shown: bool,
}

impl Progress {
    pub fn new(label: &str, total: usize) -> Self {
        let shown = total > 0 && crate::diag::verbosity() >= 0 && std::io::stderr().is_terminal();
        Self {
            label: label.to_owned(),
            total,
            done: Mutex::new(0),
            shown,
        }
    }

    pub fn step(&self) {
        // `count` stays locked until the line is drawn or cleared.
        let mut count = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *count += 1;
        let done = *count;
        // Redraw once per percent: 50,000 users need not mean 50,000 writes.
        let percent = |n: usize| n * 100 / self.total.max(1);
        if !self.shown || (done < self.total && percent(done) == percent(done - 1)) {
            return;
        }
        if done >= self.total {
            // Clear the line: the report follows on stdout.
            crate::diag::end_progress();
            return;
        }
        let width = 30;
        let filled = done * width / self.total.max(1);
        crate::diag::show_progress(&format!(
            "{:<12} [{}{}] {done}/{}",
            self.label,
            "#".repeat(filled),
            " ".repeat(width - filled.min(width)),
            self.total
        ));
    }
}

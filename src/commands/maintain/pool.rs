//! The worker pool of a `maintain` pass: a task's items (users, days,
//! weeks) run on `--jobs` threads, each item's result kept in item order
//! with the item's name, for the report. The progress line counts them.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::layout::UserId;
use crate::memory::summaries::Week;
use crate::progress::Progress;

/// How one work item ended.
pub enum Done {
    /// Done (or, with --dry-run, would be): the report's line for it.
    Did(String),
    /// Nothing to do; a note for the report, or an empty one.
    Nothing(String),
    /// Not started: the --max-llm-calls cap was reached.
    Left,
}

/// Run `work` over `items` on `jobs` threads; results in item order.
pub fn in_parallel<T, F>(
    jobs: u32,
    items: Vec<T>,
    label: &str,
    work: F,
) -> Vec<(String, anyhow::Result<Done>)>
where
    T: Send + Sync + ItemName,
    F: Fn(&T) -> anyhow::Result<Done> + Sync,
{
    let progress = Progress::new(label, items.len());
    let queue: Mutex<VecDeque<(usize, &T)>> = Mutex::new(items.iter().enumerate().collect());
    let results: Mutex<Vec<(usize, String, anyhow::Result<Done>)>> = Mutex::new(Vec::new());
    let threads = (jobs as usize).clamp(1, items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue lock").pop_front();
                    let Some((index, item)) = next else { break };
                    let result = work(item);
                    progress.step();
                    results
                        .lock()
                        .expect("results lock")
                        .push((index, item.name(), result));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("results lock");
    results.sort_by_key(|(index, _, _)| *index);
    results
        .into_iter()
        .map(|(_, name, result)| (name, result))
        .collect()
}

/// How a work item is named in the report.
pub trait ItemName {
    fn name(&self) -> String;
}

impl ItemName for UserId {
    fn name(&self) -> String {
        self.to_string()
    }
}

impl ItemName for (UserId, chrono::NaiveDate) {
    fn name(&self) -> String {
        format!("{} {}", self.0, self.1.format("%Y-%m-%d"))
    }
}

impl ItemName for (UserId, Week) {
    fn name(&self) -> String {
        format!("{} {}", self.0, self.1)
    }
}

//! Work over many owners at once: a task's items (owners, their days or
//! weeks) run on a number of threads, each item's result kept in item order
//! with the item's name, for a report. The progress line counts them.
//! `maintain` runs every task of its pass on it, `compact --all` its one.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::layout::MemoryKey;
use crate::memory::summaries::Week;
use crate::progress::Progress;

/// Run `work` over `items` on `jobs` threads; results in item order.
pub fn in_parallel<T, R, F>(jobs: u32, items: Vec<T>, label: &str, work: F) -> Vec<(String, R)>
where
    T: Send + Sync + ItemName,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let progress = Progress::new(label, items.len());
    let queue: Mutex<VecDeque<(usize, &T)>> = Mutex::new(items.iter().enumerate().collect());
    let results: Mutex<Vec<(usize, String, R)>> = Mutex::new(Vec::new());
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

impl ItemName for MemoryKey {
    fn name(&self) -> String {
        self.to_string()
    }
}

impl ItemName for (MemoryKey, chrono::NaiveDate) {
    fn name(&self) -> String {
        format!("{} {}", self.0, self.1.format("%Y-%m-%d"))
    }
}

impl ItemName for (MemoryKey, Week) {
    fn name(&self) -> String {
        format!("{} {}", self.0, self.1)
    }
}

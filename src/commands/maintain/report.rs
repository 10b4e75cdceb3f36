//! What a `maintain` pass reports: per task, what was done, left and
//! failed; the whole pass as `--json` or as text for people.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Done;
use crate::cli::Task;
use crate::error::{Exit, exit_code_of};
use crate::memory::message::format_ts;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskReport {
    pub task: Task,
    /// Things done (or, with --dry-run, that would be done).
    pub done: usize,
    /// LLM work left for the next run by --max-llm-calls.
    pub left_for_next_run: usize,
    /// Compaction replies that were not the JSON asked for (their text
    /// became the summary; no profile changed).
    #[serde(skip_serializing_if = "is_zero")]
    pub replies_not_json: usize,
    /// Why the task did nothing, when it was not due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub actions: Vec<String>,
    pub errors: Vec<String>,
    /// The exit code of the first error (claude not found: 5, …).
    #[serde(skip)]
    pub exit: Option<Exit>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl TaskReport {
    pub fn new(task: Task) -> Self {
        Self {
            task,
            done: 0,
            left_for_next_run: 0,
            replies_not_json: 0,
            note: None,
            actions: Vec::new(),
            errors: Vec::new(),
            exit: None,
        }
    }

    /// Record the failure of the whole task (it stopped); the pass goes on.
    pub fn failed(&mut self, e: &anyhow::Error) {
        self.exit.get_or_insert(exit_code_of(e));
        self.errors.push(format!("{e:#}"));
    }

    /// Record a failure of one item; the pass goes on.
    pub fn error(&mut self, what: impl std::fmt::Display, e: &anyhow::Error) {
        self.exit.get_or_insert(exit_code_of(e));
        self.errors.push(format!("{what}: {e:#}"));
    }

    /// Count the results of a task's items.
    pub fn tally(&mut self, results: Vec<(String, anyhow::Result<Done>)>) {
        for (item, result) in results {
            match result {
                Ok(Done::Did(action)) => {
                    self.done += 1;
                    self.actions.push(action);
                }
                Ok(Done::Nothing(note)) => {
                    if !note.is_empty() {
                        self.actions.push(note);
                    }
                }
                Ok(Done::Left) => self.left_for_next_run += 1,
                Err(e) => self.error(&item, &e),
            }
        }
    }
}

/// What `maintain --json` prints.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PassReport<'a> {
    pub now: String,
    pub dry_run: bool,
    pub tasks: &'a [TaskReport],
    pub llm_calls: u32,
    /// With --dry-run: the calls the listed work would make.
    pub llm_calls_estimated: Option<usize>,
    pub cost_usd: f64,
    pub left_for_next_run: usize,
    pub errors: usize,
}

impl<'a> PassReport<'a> {
    pub fn new(
        tasks: &'a [TaskReport],
        now: DateTime<Utc>,
        dry_run: bool,
        llm_calls: u32,
        cost_usd: f64,
    ) -> Self {
        Self {
            now: format_ts(&now),
            dry_run,
            tasks,
            llm_calls,
            // A dry run makes no call: it says how many the listed work would make.
            llm_calls_estimated: dry_run.then(|| estimated_llm_calls(tasks)),
            cost_usd,
            left_for_next_run: tasks.iter().map(|r| r.left_for_next_run).sum(),
            errors: tasks.iter().map(|r| r.errors.len()).sum(),
        }
    }

    /// Each error on stderr, named by its task (`-q`: nothing else is said).
    pub fn errors_to_stderr(&self) {
        for line in self.error_lines() {
            crate::diag::error(line);
        }
    }

    /// Each error, named by its task.
    pub fn error_lines(&self) -> Vec<String> {
        self.tasks
            .iter()
            .flat_map(|report| {
                let task = report.task.name();
                report.errors.iter().map(move |e| format!("{task}: {e}"))
            })
            .collect()
    }

    /// The exit code of the first failure: a missing claude is 5, not 3.
    pub fn first_exit(&self) -> Option<Exit> {
        self.tasks.iter().find_map(|r| r.exit)
    }
}

/// What `maintain --json` prints when another pass is running.
#[derive(Debug, Serialize)]
pub struct Busy {
    pub busy: bool,
    pub message: &'static str,
}

/// One call per compaction, per daily and per weekly summary listed.
fn estimated_llm_calls(reports: &[TaskReport]) -> usize {
    reports
        .iter()
        .filter(|r| matches!(r.task, Task::Compact | Task::Daily | Task::Weekly))
        .map(|r| r.done)
        .sum()
}

impl PassReport<'_> {
    /// The report for people: a line per task, its actions and errors
    /// below it, then the calls, the cost and what is left.
    pub fn render(&self) -> String {
        let (now, reports) = (&self.now, self.tasks);
        let (calls, cost) = (self.llm_calls, self.cost_usd);
        let (left, errors) = (self.left_for_next_run, self.errors);
        let estimated = self.llm_calls_estimated;
        let dry_run = estimated.is_some();
        let mut out = format!(
            "maintain {}at {now}\n",
            if dry_run { "(dry run) " } else { "" },
        );
        for report in reports {
            let mut line = format!(
                "  {:<13}{:>5} {}",
                report.task.name(),
                report.done,
                if dry_run { "to do" } else { "done" }
            );
            if report.left_for_next_run > 0 {
                line.push_str(&format!(
                    ", {} left for the next run",
                    report.left_for_next_run
                ));
            }
            if report.replies_not_json > 0 {
                line.push_str(&format!(
                    ", {} reply(ies) not the JSON asked for",
                    report.replies_not_json
                ));
            }
            if !report.errors.is_empty() {
                line.push_str(&format!(", {} error(s)", report.errors.len()));
            }
            if let Some(note) = &report.note {
                line.push_str(&format!(" ({note})"));
            }
            out.push_str(&line);
            out.push('\n');
            for action in &report.actions {
                out.push_str(&format!("      {action}\n"));
            }
            for error in &report.errors {
                out.push_str(&format!("      error: {error}\n"));
            }
        }
        match estimated {
            Some(estimated) => out.push_str(&format!(
                "LLM calls: none made (dry run); about {estimated} for the work listed; \
             left for the next run: {left}; errors: {errors}"
            )),
            None => out.push_str(&format!(
                "LLM calls: {calls} (${cost:.4}); left for the next run: {left}; errors: {errors}"
            )),
        }
        out
    }
}

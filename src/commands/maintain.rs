//! `maintain`: one pass of every scheduled task, made for cron.
//!
//! Idempotent (a second run the same day finds nothing to do), catches up
//! on what missed runs left, one pass at a time (a second concurrent run
//! says so and exits 0), and a failure in one user or task is reported
//! while the pass goes on.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::json;

use crate::claude::{Claude, Reply};
use crate::cli::{MaintainArgs, Task};
use crate::commands::progress::Progress;
use crate::commands::{Output, Purpose, claude_runner, print_json, print_text};
use crate::error::{Exit, exit_code_of, failure};
use crate::layout::UserId;
use crate::memory::compaction::{self, Outcome};
use crate::memory::message::format_ts;
use crate::memory::summaries::{self, Week};
use crate::memory::{expiry, housekeeping, stm};
use crate::state::State;
use clap::ValueEnum as _;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskReport {
    task: Task,
    /// Things done (or, with --dry-run, that would be done).
    done: usize,
    /// LLM work left for the next run by --max-llm-calls.
    left_for_next_run: usize,
    /// Compaction replies that were not the JSON asked for (their text
    /// became the summary; no profile changed).
    #[serde(skip_serializing_if = "is_zero")]
    replies_not_json: usize,
    /// Why the task did nothing, when it was not due.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    actions: Vec<String>,
    errors: Vec<String>,
    /// The exit code of the first error (claude not found: 5, …).
    #[serde(skip)]
    exit: Option<Exit>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl TaskReport {
    fn new(task: Task) -> Self {
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

    /// Record a failure of one item; the pass goes on.
    fn error(&mut self, what: impl std::fmt::Display, e: &anyhow::Error) {
        self.exit.get_or_insert(exit_code_of(e));
        self.errors.push(format!("{what}: {e:#}"));
    }
}

/// The LLM side of a pass: claude found once, calls capped and counted.
struct Llm<'a> {
    state: &'a State,
    args: &'a MaintainArgs,
    claude: OnceLock<Claude>,
    calls: AtomicU32,
    cost: Mutex<f64>,
}

impl Llm<'_> {
    fn claude(&self) -> anyhow::Result<Claude> {
        if let Some(claude) = self.claude.get() {
            return Ok(claude.clone());
        }
        let claude = claude_runner(self.state, &self.args.claude, Purpose::Compaction)?;
        Ok(self.claude.get_or_init(|| claude).clone())
    }

    /// Reserve one call under --max-llm-calls and the maintenance budget;
    /// false when either is used up (the work waits for the next run).
    fn reserve(&self) -> bool {
        if crate::memory::ledger::maintenance_cap_reached(self.state, Utc::now())
            .map_or(true, |reached| reached.is_some())
        {
            return false;
        }
        let max = self.args.max_llm_calls.unwrap_or(u32::MAX);
        self.calls
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok()
    }

    /// The claude for the next call, or `None` when a cap says to stop.
    fn next_call(&self) -> anyhow::Result<Option<Claude>> {
        let claude = self.claude()?;
        Ok(self.reserve().then_some(claude))
    }

    /// The same for a summary: its own model setting (`summaries.model`).
    fn next_summary_call(&self) -> anyhow::Result<Option<Claude>> {
        Ok(self.next_call()?.map(|mut claude| {
            claude.model = (self.args.claude.model.clone())
                .or_else(|| self.state.config.summaries.model.clone())
                .filter(|m| !m.is_empty());
            claude
        }))
    }

    fn paid(&self, cost: Option<f64>) {
        if let Some(cost) = cost {
            *self.cost.lock().expect("cost lock") += cost;
        }
    }
}

pub fn run(state: &State, args: &MaintainArgs, output: Output) -> anyhow::Result<()> {
    let now = args.now.unwrap_or_else(Utc::now);
    let Some(_pass) = state.try_lock_maintain_pass()? else {
        let message = "another maintain run is in progress; this one did nothing";
        return if output.json {
            print_json(&json!({"busy": true, "message": message}))
        } else if crate::diag::verbosity() < 0 {
            // -q: an overlap is no failure, and cron mails any output.
            Ok(())
        } else {
            print_text(message)
        };
    };

    let llm = Llm {
        state,
        args,
        claude: OnceLock::new(),
        calls: AtomicU32::new(0),
        cost: Mutex::new(0.0),
    };
    let selected = |task: &Task| args.only.is_empty() || args.only.contains(task);
    let mut reports = Vec::new();
    for &task in Task::value_variants().iter().filter(|t| selected(t)) {
        let mut report = TaskReport::new(task);
        let result = match task {
            Task::Migrate => migrate(state, args, &mut report),
            Task::StmExpiry => stm_expiry(state, args, now, &mut report),
            Task::LogRotation => log_rotation(state, args, now, &mut report),
            Task::Compact => compact(state, args, &llm, &mut report),
            Task::Daily => daily(state, args, now, &llm, &mut report),
            Task::Weekly => weekly(state, args, now, &llm, &mut report),
            Task::Prune => prune(state, args, now, &mut report),
        };
        if let Err(e) = result {
            report.exit.get_or_insert(exit_code_of(&e));
            report.errors.push(format!("{e:#}"));
        }
        reports.push(report);
    }

    let calls = llm.calls.load(Ordering::SeqCst);
    let cost = *llm.cost.lock().expect("cost lock");
    let left: usize = reports.iter().map(|r| r.left_for_next_run).sum();
    let errors: usize = reports.iter().map(|r| r.errors.len()).sum();
    // A dry run makes no call: it says how many the listed work would make.
    let estimated = args.dry_run.then(|| estimated_llm_calls(&reports));
    let quiet = crate::diag::verbosity() < 0;
    if output.json {
        print_json(&json!({
            "now": format_ts(&now),
            "dryRun": args.dry_run,
            "tasks": reports,
            "llmCalls": calls,
            "llmCallsEstimated": estimated,
            "costUsd": cost,
            "leftForNextRun": left,
            "errors": errors,
        }))?;
    } else if quiet {
        // -q (cron): nothing on success; the errors, on stderr.
        for report in &reports {
            for error in &report.errors {
                crate::diag::error(format!("{}: {error}", report.task.name()));
            }
        }
    } else {
        print_text(&render_report(
            &reports, now, estimated, calls, cost, left, errors,
        ))?;
    }
    if errors > 0 {
        // The first failure's own code: a missing claude is 5, not 3.
        let exit = reports.iter().find_map(|r| r.exit).unwrap_or(Exit::State);
        let see = if quiet && !output.json {
            "listed above"
        } else {
            "see the report above"
        };
        return Err(failure(
            exit,
            format!("maintain finished with {errors} error(s); {see}"),
        ));
    }
    Ok(())
}

/// One call per compaction, per daily and per weekly summary listed.
fn estimated_llm_calls(reports: &[TaskReport]) -> usize {
    reports
        .iter()
        .filter(|r| matches!(r.task, Task::Compact | Task::Daily | Task::Weekly))
        .map(|r| r.done)
        .sum()
}

fn render_report(
    reports: &[TaskReport],
    now: DateTime<Utc>,
    estimated: Option<usize>,
    calls: u32,
    cost: f64,
    left: usize,
    errors: usize,
) -> String {
    let dry_run = estimated.is_some();
    let mut out = format!(
        "maintain {}at {}\n",
        if dry_run { "(dry run) " } else { "" },
        format_ts(&now)
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

fn stm_expiry(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    let users = stm::users(state)?;
    let progress = Progress::new("stm-expiry", users.len());
    for user in users {
        progress.step();
        let result = (|| -> anyhow::Result<()> {
            if !expiry::is_expired(state, &user, now)? {
                return Ok(());
            }
            if args.dry_run {
                report.done += 1;
                report.actions.push(format!("would expire {user}"));
                return Ok(());
            }
            if let Some(moved) = expiry::expire_user(state, &user, now)? {
                report.done += 1;
                report
                    .actions
                    .push(format!("expired {user}: {moved} message(s) archived"));
            }
            Ok(())
        })();
        if let Err(e) = result {
            report.error(&user, &e);
        }
    }
    Ok(())
}

fn log_rotation(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    for log in housekeeping::logs_due(state, now)? {
        if args.dry_run {
            report.done += 1;
            report
                .actions
                .push(format!("would archive {}", log.display()));
            continue;
        }
        match housekeeping::rotate_log(state, &log) {
            Ok(target) => {
                report.done += 1;
                report.actions.push(format!(
                    "archived {} as {}",
                    log.display(),
                    target.display()
                ));
            }
            Err(e) => report.error(log.display(), &e),
        }
    }
    Ok(())
}

fn compact(
    state: &State,
    args: &MaintainArgs,
    llm: &Llm,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    if !state.config.compacting.enabled {
        report.note = Some("compacting.enabled is false".into());
        return Ok(());
    }
    let mut due = Vec::new();
    for user in stm::users(state)? {
        match compaction::may_need(state, &user, false) {
            Ok(true) => due.push(user),
            Ok(false) => {}
            Err(e) => report.error(&user, &e),
        }
    }
    let options = compaction::Options {
        force: false,
        dry_run: args.dry_run,
    };
    let not_json = std::sync::atomic::AtomicUsize::new(0);
    let results = in_parallel(args.jobs, due, "compact", |user: &UserId| {
        // Each call of a compaction (a backlog takes several) is reserved.
        let gate = || llm.next_call();
        let outcome = compaction::compact_user(state, user, &gate, options)?;
        Ok(match outcome {
            Outcome::Compacted {
                compacted,
                cost_usd,
                not_json: unusable,
                ..
            } => {
                llm.paid(cost_usd);
                not_json.fetch_add(unusable as usize, Ordering::SeqCst);
                let note = if unusable > 0 {
                    format!(" ({unusable} reply(ies) not the JSON asked for; profile unchanged)")
                } else {
                    String::new()
                };
                Done::Did(format!("compacted {user}: {compacted} message(s){note}"))
            }
            Outcome::WouldCompact { compact, .. } => {
                Done::Did(format!("would compact {user}: {compact} message(s)"))
            }
            Outcome::Busy => Done::Nothing(format!("{user}: another compaction is running")),
            Outcome::Deferred { .. } => Done::Left,
            Outcome::NotNeeded { .. } | Outcome::Changed => Done::Nothing(String::new()),
        })
    });
    report.replies_not_json = not_json.into_inner();
    tally(results, report);
    Ok(())
}

fn daily(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    llm: &Llm,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    let hour = state.config.compacting.daily_summary_hour;
    if chrono::Timelike::hour(&now) < hour {
        report.note = Some(format!(
            "not before {hour:02}:00 UTC (compacting.dailySummaryHour)"
        ));
        return Ok(());
    }
    let due = due_per_user(state, report, |user| {
        summaries::daily_due(state, user, now, args.force)
    })?;
    let results = in_parallel(args.jobs, due, "daily", |(user, day)| {
        let what = format!("{user} {}", day.format("%Y-%m-%d"));
        let messages = summaries::messages_of_day(state, user, *day)?;
        if messages.is_empty() {
            return Ok(Done::Nothing(String::new()));
        }
        if args.dry_run {
            return Ok(Done::Did(format!("would summarise {what}")));
        }
        let Some(claude) = llm.next_summary_call()? else {
            return Ok(Done::Left);
        };
        let reply: Reply = summaries::write_daily(state, user, *day, &messages, &claude, now)?;
        llm.paid(reply.cost_usd);
        Ok(Done::Did(format!("summarised {what}")))
    });
    tally(results, report);
    Ok(())
}

fn weekly(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    llm: &Llm,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    let due = due_per_user(state, report, |user| {
        summaries::weekly_due(state, user, now, args.force)
    })?;
    let results = in_parallel(args.jobs, due, "weekly", |(user, week)| {
        if args.dry_run {
            return Ok(Done::Did(format!("would summarise {user} {week}")));
        }
        let Some(claude) = llm.next_summary_call()? else {
            return Ok(Done::Left);
        };
        let reply = summaries::write_weekly(state, user, *week, &claude, now)?;
        llm.paid(reply.cost_usd);
        Ok(Done::Did(format!("summarised {user} {week}")))
    });
    tally(results, report);
    Ok(())
}

/// The summary work due for every user with history; a user whose files
/// cannot be read is reported and the others go on.
fn due_per_user<T>(
    state: &State,
    report: &mut TaskReport,
    due: impl Fn(&UserId) -> anyhow::Result<Vec<T>>,
) -> anyhow::Result<Vec<(UserId, T)>> {
    let mut items = Vec::new();
    for user in summaries::users_with_history(state)? {
        match due(&user) {
            Ok(found) => items.extend(found.into_iter().map(|item| (user.clone(), item))),
            Err(e) => report.error(&user, &e),
        }
    }
    Ok(items)
}

/// Group and thread conversations written by an earlier version under
/// their bare key (a user's folder name) move behind `#`.
fn migrate(state: &State, args: &MaintainArgs, report: &mut TaskReport) -> anyhow::Result<()> {
    if args.dry_run {
        for key in crate::memory::migration::pending(state)? {
            report.done += 1;
            report.actions.push(format!(
                "would move conversation {key} to its own folders (#{key})"
            ));
        }
        return Ok(());
    }
    for key in crate::memory::migration::migrate_all(state)? {
        report.done += 1;
        report.actions.push(format!(
            "moved conversation {key} to its own folders (#{key})"
        ));
    }
    Ok(())
}

fn prune(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    let pruned = housekeeping::prune(state, args.dry_run, now)?;
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    report.done = pruned.folders.len() + pruned.temp_files.len() + pruned.exports.len();
    report.actions.extend(
        pruned
            .exports
            .iter()
            .map(|f| format!("{verb} in-chat export past its retention {}", f.display())),
    );
    report.actions.extend(
        pruned
            .folders
            .iter()
            .map(|f| format!("{verb} empty folder {}", f.display())),
    );
    report.actions.extend(
        pruned
            .temp_files
            .iter()
            .map(|f| format!("{verb} stale temporary file {}", f.display())),
    );
    Ok(())
}

/// How one work item ended.
enum Done {
    Did(String),
    Nothing(String),
    /// Not started: the --max-llm-calls cap was reached.
    Left,
}

fn tally(results: Vec<(String, anyhow::Result<Done>)>, report: &mut TaskReport) {
    for (item, result) in results {
        match result {
            Ok(Done::Did(action)) => {
                report.done += 1;
                report.actions.push(action);
            }
            Ok(Done::Nothing(note)) => {
                if !note.is_empty() {
                    report.actions.push(note);
                }
            }
            Ok(Done::Left) => report.left_for_next_run += 1,
            Err(e) => report.error(&item, &e),
        }
    }
}

/// Run `work` over `items` on `jobs` threads; results in item order.
fn in_parallel<T, F>(
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
trait ItemName {
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

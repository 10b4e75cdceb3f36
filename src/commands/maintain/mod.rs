//! `maintain`: one pass of every scheduled task, made for cron.
//!
//! Idempotent (a second run the same day finds nothing to do), catches up
//! on what missed runs left, one pass at a time (a second concurrent run
//! says so and exits 0), and a failure in one user or task is reported
//! while the pass goes on.
//!
//! This file holds the pass and each task's body; `memory::pool` runs a
//! task's items on `--jobs` threads, `report` collects and renders what
//! they did.

mod report;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use chrono::{DateTime, Utc};

use crate::claude::{Claude, Reply};
use crate::cli::{MaintainArgs, Task};
use crate::commands::{Output, Purpose, claude_runner, print_json, print_text};
use crate::error::{Exit, failure};
use crate::layout::MemoryKey;
use crate::memory::compaction::{self, Outcome};
use crate::memory::pool::in_parallel;
use crate::memory::summaries;
use crate::memory::{expiry, housekeeping, stm};
use crate::progress::Progress;
use crate::state::State;
use clap::ValueEnum as _;
use report::{Busy, PassReport, TaskReport};

/// How one work item ended.
pub enum Done {
    /// Done (or, with --dry-run, would be): the report's line for it.
    Did(String),
    /// Nothing to do; a note for the report, or an empty one.
    Nothing(String),
    /// Not started: the --max-llm-calls cap was reached.
    Left,
}

/// The LLM side of a pass: claude found once, calls capped and counted.
struct Llm<'a> {
    state: &'a State,
    args: &'a MaintainArgs,
    claude: OnceLock<Claude>,
    calls: AtomicU32,
    cost: Mutex<f64>,
    /// The first failure every user would meet (claude missing, its
    /// authentication refused, a budget or rate limit reached): once it
    /// is met, no more LLM work starts and the report says so once.
    stop: Mutex<Option<(String, anyhow::Error)>>,
    stopped: std::sync::atomic::AtomicBool,
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

    /// Run one item of LLM work, unless an earlier failure stopped the LLM
    /// tasks (then it waits for the next run). A failure that every user
    /// would meet stops them, instead of repeating once per user and day.
    fn guarded(
        &self,
        item: impl std::fmt::Display,
        work: impl FnOnce() -> anyhow::Result<Done>,
    ) -> anyhow::Result<Done> {
        if self.stopped.load(Ordering::SeqCst) {
            return Ok(Done::Left);
        }
        match work() {
            Err(e) if repeats_for_everyone(&e) => {
                let mut stop = self.stop.lock().expect("stop lock");
                if !self.stopped.swap(true, Ordering::SeqCst) {
                    *stop = Some((item.to_string(), e));
                }
                Ok(Done::Left)
            }
            other => other,
        }
    }

    /// Put the failure that stopped the LLM tasks in `report` (once per
    /// pass): the one line `-q` prints.
    fn report_stop(&self, report: &mut TaskReport) {
        if let Some((item, e)) = self.stop.lock().expect("stop lock").take() {
            report.error(
                format!(
                    "{item}: LLM tasks stopped, as every user would meet this failure (the \
                     rest of the LLM work waits for the next run; the other tasks ran)"
                ),
                &e,
            );
        }
    }

    fn paid(&self, cost: Option<f64>) {
        if let Some(cost) = cost {
            *self.cost.lock().expect("cost lock") += cost;
        }
    }

    /// One summary (`what`: whose, of when), as `--dry-run` and the caps
    /// allow: only named with --dry-run, left for the next run once a cap
    /// is reached, else written by `write` and its cost counted.
    fn summarise(
        &self,
        what: &str,
        write: impl FnOnce(&Claude) -> anyhow::Result<Reply>,
    ) -> anyhow::Result<Done> {
        if self.args.dry_run {
            return Ok(Done::Did(format!("would summarise {what}")));
        }
        let Some(claude) = self.next_summary_call()? else {
            return Ok(Done::Left);
        };
        let reply = write(&claude)?;
        self.paid(reply.cost_usd);
        Ok(Done::Did(format!("summarised {what}")))
    }
}

pub fn run(state: &State, args: &MaintainArgs, output: Output) -> anyhow::Result<()> {
    let now = args.now.unwrap_or_else(Utc::now);
    let Some(_pass) = state.try_lock_maintain_pass()? else {
        let message = "another maintain run is in progress; this one did nothing";
        return if output.json {
            print_json(&Busy {
                busy: true,
                message,
            })
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
        stop: Mutex::new(None),
        stopped: std::sync::atomic::AtomicBool::new(false),
    };
    let reports = run_tasks(state, args, now, &llm);

    if !args.dry_run {
        record_failures(state, &reports);
    }
    let calls = llm.calls.load(Ordering::SeqCst);
    let cost = *llm.cost.lock().expect("cost lock");
    let pass = PassReport::new(&reports, now, args.dry_run, calls, cost);
    let quiet = crate::diag::verbosity() < 0;
    if output.json {
        print_json(&pass)?;
    } else if quiet {
        // -q (cron): nothing on success; the errors, on stderr; one error
        // (a stop of the LLM tasks is one) is one line.
        if pass.errors == 1 {
            let exit = pass.first_exit().unwrap_or(Exit::State);
            return Err(failure(exit, pass.error_lines().remove(0)));
        }
        pass.errors_to_stderr();
    } else {
        print_text(&pass.render())?;
    }
    let errors = pass.errors;
    if errors > 0 {
        let exit = pass.first_exit().unwrap_or(Exit::State);
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

/// Each task `--only` selects (all by default), in their order; a failed
/// task is in its report, and the pass goes on.
fn run_tasks(state: &State, args: &MaintainArgs, now: DateTime<Utc>, llm: &Llm) -> Vec<TaskReport> {
    let selected = |task: &Task| args.only.is_empty() || args.only.contains(task);
    let mut reports = Vec::new();
    for &task in Task::value_variants().iter().filter(|t| selected(t)) {
        let mut report = TaskReport::new(task);
        let result = match task {
            Task::Migrate => migrate(state, args, &mut report),
            Task::StmExpiry => stm_expiry(state, args, now, &mut report),
            Task::LogRotation => log_rotation(state, args, now, &mut report),
            Task::Compact => compact(state, args, llm, &mut report),
            Task::Daily => daily(state, args, now, llm, &mut report),
            Task::Weekly => weekly(state, args, now, llm, &mut report),
            Task::Index => recall_index(state, args, now, &mut report),
            Task::Prune => prune(state, args, now, &mut report),
        };
        if let Err(e) = result {
            report.failed(&e);
        }
        reports.push(report);
    }
    reports
}

/// Nobody may read cron's mail: every error of the pass goes to the
/// failure log too, where `session status` and `doctor` show it.
fn record_failures(state: &State, reports: &[TaskReport]) {
    for report in reports {
        let exit = report.exit.unwrap_or(Exit::State).code();
        for error in &report.errors {
            crate::memory::failures::record_text(
                state,
                &format!("maintain {}", report.task.name()),
                None,
                exit,
                error,
            );
        }
    }
}

fn stm_expiry(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    let users = stm::users(state)?;
    let progress = Progress::new(&Task::StmExpiry.name(), users.len());
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
    match crate::memory::failures::rotate_if_due(state, now, args.dry_run) {
        Ok(None) => {}
        Ok(Some(target)) => {
            report.done += 1;
            report.actions.push(if args.dry_run {
                format!("would archive the failure log {}", target.display())
            } else {
                format!("archived the failure log as {}", target.display())
            });
        }
        Err(e) => report.error("the failure log", &e),
    }
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
    let due = compaction::due(state, false)?;
    for (user, e) in &due.errors {
        report.error(user, e);
    }
    let options = compaction::Options {
        force: false,
        dry_run: args.dry_run,
    };
    let not_json = std::sync::atomic::AtomicUsize::new(0);
    // Each call of a compaction (a backlog takes several) is reserved.
    let gate = || llm.next_call();
    let results =
        compaction::compact_due(
            state,
            due.owners,
            args.jobs,
            &gate,
            options,
            |user, compact| {
                llm.guarded(user, || {
            Ok(match compact()? {
                Outcome::Compacted {
                    compacted,
                    cost_usd,
                    not_json: unusable,
                    ..
                } => {
                    llm.paid(cost_usd);
                    not_json.fetch_add(unusable as usize, Ordering::SeqCst);
                    let note = if unusable > 0 {
                        format!(
                            " ({unusable} reply(ies) not the JSON asked for; profile unchanged)"
                        )
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
        })
            },
        );
    report.replies_not_json = not_json.into_inner();
    report.tally(results);
    llm.report_stop(report);
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
        llm.guarded(format!("{user} {}", day.format("%Y-%m-%d")), || {
            let what = format!("{user} {}", day.format("%Y-%m-%d"));
            let messages = summaries::messages_of_day(state, user, *day)?;
            if messages.is_empty() {
                return Ok(Done::Nothing(String::new()));
            }
            llm.summarise(&what, |claude| {
                summaries::write_daily(state, user, *day, &messages, claude, now)
            })
        })
    });
    report.tally(results);
    llm.report_stop(report);
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
        llm.guarded(format!("{user} {week}"), || {
            llm.summarise(&format!("{user} {week}"), |claude| {
                summaries::write_weekly(state, user, *week, claude, now)
            })
        })
    });
    report.tally(results);
    llm.report_stop(report);
    Ok(())
}

/// The summary work due for every user with history; a user whose files
/// cannot be read is reported and the others go on.
fn due_per_user<T>(
    state: &State,
    report: &mut TaskReport,
    due: impl Fn(&MemoryKey) -> anyhow::Result<Vec<T>>,
) -> anyhow::Result<Vec<(MemoryKey, T)>> {
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

/// Every owner's past archive days into current recall index segments
/// (`memory::retrieval::indexing`); an owner left without archives loses
/// its index.
fn recall_index(
    state: &State,
    args: &MaintainArgs,
    now: DateTime<Utc>,
    report: &mut TaskReport,
) -> anyhow::Result<()> {
    use crate::memory::retrieval::indexing;
    let today = now.date_naive();
    let owners = indexing::owners(state)?;
    let mut due = Vec::new();
    for key in owners {
        match indexing::days_to_index(state, &key, today) {
            Ok(0) => {
                if !args.dry_run {
                    match indexing::drop_orphan(state, &key) {
                        Ok(true) => {
                            report.done += 1;
                            report
                                .actions
                                .push(format!("removed the recall index of {key} (no archives)"));
                        }
                        Ok(false) => {}
                        Err(e) => report.error(&key, &e),
                    }
                }
            }
            Ok(days) => due.push((key, days)),
            Err(e) => report.error(&key, &e),
        }
    }
    if args.dry_run {
        for (key, days) in &due {
            report.done += 1;
            report
                .actions
                .push(format!("would index {days} archive day(s) of {key}"));
        }
        return Ok(());
    }
    let progress = Progress::new(&Task::Index.name(), due.iter().map(|(_, d)| d).sum());
    for (key, _) in due {
        match indexing::update(state, &key, today, false, &mut |_| progress.step()) {
            Ok(updated) => {
                report.done += 1;
                report.actions.push(format!(
                    "indexed {} archive day(s) of {key} ({} message(s), {} segment(s))",
                    updated.days, updated.docs, updated.segments
                ));
            }
            Err(e) => report.error(&key, &e),
        }
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

/// Whether a failure would be met again by every other user's LLM work:
/// claude missing, its authentication refused, a budget used up, the
/// service unavailable for now (a rate limit is the account's). A bad
/// reply or a timeout may be one user's, and does not stop the pass.
fn repeats_for_everyone(e: &anyhow::Error) -> bool {
    match crate::error::exit_code_of(e) {
        Exit::ClaudeNotFound | Exit::OverBudget | Exit::ClaudeUnavailable => true,
        Exit::ClaudeFailed => {
            let text = format!("{e:#}").to_lowercase();
            [
                "authenticat",
                "api key",
                "api-key",
                "401",
                "403",
                "credit balance",
                "/login",
            ]
            .iter()
            .any(|word| text.contains(word))
        }
        _ => false,
    }
}

//! `compact`: fold old messages of one user (or conversation), or of
//! every one over the threshold (`--all`, the sweep `maintain`'s task
//! runs), into their summaries now. And what `ask` starts for a compaction
//! in the background ([`start_in_background`]): this command, detached,
//! whose failure goes to the failure log.

use anyhow::Context as _;
use serde::Serialize;

use crate::claude::Claude;
use crate::cli::CompactArgs;
use crate::commands::{Output, Purpose, claude_runner, print_json, print_text};
use crate::error::exit_code_of;
use crate::layout::MemoryKey;
use crate::memory::compaction::{self, Options, Outcome};
use crate::state::State;

pub fn run(state: &State, args: &CompactArgs, output: Output) -> anyhow::Result<()> {
    let result = run_compaction(state, args, output);
    // Started by `ask` with nobody reading its stderr: the failure goes
    // to the failure log, where `session status` and `doctor` show it.
    if args.background
        && let Err(e) = &result
    {
        let who = args
            .conversation
            .as_ref()
            .map(|k| format!("conversation {}", k.as_str()))
            .or_else(|| args.user.as_ref().map(|u| u.as_str().to_owned()));
        crate::memory::failures::record(state, "background compaction", who.as_deref(), e);
    }
    result
}

fn run_compaction(state: &State, args: &CompactArgs, output: Output) -> anyhow::Result<()> {
    let options = Options {
        force: args.force,
        dry_run: args.dry_run,
    };
    let make_claude = || claude_runner(state, &args.claude, Purpose::Compaction).map(Some);

    let one = match &args.conversation {
        Some(key) if args.dry_run => Some(crate::memory::migration::conversation_for_reading(
            state, key,
        )?),
        Some(key) => Some(crate::memory::migration::conversation_for_writing(
            state, key,
        )?),
        None => args.user.as_ref().map(MemoryKey::person),
    };
    let Some(user) = &one else {
        return compact_all(state, &make_claude, options, output);
    };
    super::existing_user(state, user)?;
    let outcome =
        compaction::compact_user(state, user, &make_claude, options)?.budget_stop_as_error()?;
    if output.json {
        print_json(&UserOutcome {
            user: user.as_str(),
            outcome: &outcome,
        })
    } else {
        print_text(&describe(user, &outcome, state))
    }
}

/// What `compact --all` did: the owners acted on, and those that failed.
struct Swept {
    results: Vec<(MemoryKey, Outcome)>,
    under_threshold: usize,
    errors: Vec<(MemoryKey, anyhow::Error)>,
}

/// `compact --all`: the same sweep as maintain's compaction task, one
/// owner at a time; the first failure decides the exit code.
fn compact_all(
    state: &State,
    make_claude: &(dyn Fn() -> anyhow::Result<Option<crate::claude::Claude>> + Sync),
    options: Options,
    output: Output,
) -> anyhow::Result<()> {
    let due = compaction::due(state, options.force)?;
    let mut swept = Swept {
        results: Vec::new(),
        under_threshold: due.under_threshold,
        errors: due.errors,
    };
    let results = compaction::compact_due(
        state,
        due.owners.clone(),
        1,
        make_claude,
        options,
        |_, compact| compact().and_then(Outcome::budget_stop_as_error),
    );
    for (user, (_, result)) in due.owners.into_iter().zip(results) {
        match result {
            Ok(Outcome::NotNeeded { .. }) => swept.under_threshold += 1,
            Ok(outcome) => swept.results.push((user, outcome)),
            Err(e) => {
                crate::diag::warn(format!("{user}: {e:#}"));
                swept.errors.push((user, e));
            }
        }
    }
    print_swept(state, &swept, output)?;
    match swept.errors.into_iter().next() {
        Some((user, e)) => {
            let code = exit_code_of(&e);
            Err(crate::error::failure(
                code,
                format!("compaction of {user} failed: {e:#}"),
            ))
        }
        None => Ok(()),
    }
}

/// The report of `compact --all`: a line per owner acted on and the totals.
fn print_swept(state: &State, swept: &Swept, output: Output) -> anyhow::Result<()> {
    let Swept {
        results,
        under_threshold,
        errors,
    } = swept;
    let under_threshold = *under_threshold;
    let compacted = || {
        results.iter().filter_map(|(_, o)| match o {
            Outcome::Compacted {
                calls,
                cost_usd,
                not_json,
                ..
            } => Some((*calls, *cost_usd, *not_json)),
            _ => None,
        })
    };
    let calls: u32 = compacted().map(|(calls, _, _)| calls).sum();
    // Not `.sum()`: an empty f64 sum is -0.0, printed `$-0.0000`.
    let cost: f64 = compacted()
        .filter_map(|(_, cost, _)| cost)
        .fold(0.0, |total, cost| total + cost);
    let not_json: u32 = compacted().map(|(_, _, not_json)| not_json).sum();
    if output.json {
        return print_json(&AllOutcomes {
            users: results
                .iter()
                .map(|(user, outcome)| UserOutcome {
                    user: user.as_str(),
                    outcome,
                })
                .collect(),
            under_threshold,
            calls,
            cost_usd: cost,
            replies_not_json: not_json,
            errors: errors
                .iter()
                .map(|(user, e)| UserError {
                    user: user.as_str(),
                    error: format!("{e:#}"),
                })
                .collect(),
        });
    }
    let mut lines: Vec<String> = results
        .iter()
        .map(|(user, outcome)| describe(user, outcome, state))
        .collect();
    lines.push(format!(
        "{} user(s) acted on, {under_threshold} under the threshold, {calls} claude call(s) \
         (${cost:.4}), {}{} error(s)",
        results.len(),
        if not_json > 0 {
            format!("{not_json} reply(ies) not the JSON asked for, ")
        } else {
            String::new()
        },
        errors.len()
    ));
    print_text(&lines.join("\n"))
}

/// `compact --user --json`, and one user of `compact --all --json`.
#[derive(Serialize)]
struct UserOutcome<'a> {
    user: &'a str,
    outcome: &'a Outcome,
}

/// `compact --all --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AllOutcomes<'a> {
    users: Vec<UserOutcome<'a>>,
    under_threshold: usize,
    calls: u32,
    cost_usd: f64,
    replies_not_json: u32,
    errors: Vec<UserError<'a>>,
}

#[derive(Serialize)]
struct UserError<'a> {
    user: &'a str,
    error: String,
}

fn describe(user: &MemoryKey, outcome: &Outcome, state: &State) -> String {
    match outcome {
        Outcome::NotNeeded { messages } => format!(
            "{user}: {messages} message(s), not over the threshold of {}; nothing to compact",
            state.config.threshold()
        ),
        Outcome::Busy => format!("{user}: another compaction of this user is running; left to it"),
        Outcome::WouldCompact {
            messages,
            compact,
            keep,
        } => format!(
            "{user}: would compact {compact} of {messages} message(s) into the summary and keep {keep}"
        ),
        Outcome::Compacted {
            compacted,
            kept,
            calls,
            cost_usd,
            not_json,
        } => format!(
            "{user}: compacted {compacted} message(s) into the summary, {kept} kept \
             ({calls} claude call(s){}{})",
            cost_usd.map_or(String::new(), |c| format!(", ${c:.4}")),
            if *not_json > 0 {
                format!(", {not_json} reply(ies) not the JSON asked for: profile unchanged")
            } else {
                String::new()
            }
        ),
        Outcome::Changed => format!(
            "{user}: the log changed during compaction (cleared or expired); nothing written"
        ),
        Outcome::Deferred { .. } => format!("{user}: left for later (a cap on calls is reached)"),
    }
}

/// Start `claude-session compact --background --user U` detached, in its
/// own process group, so the broker `ask` answered is not held up and does
/// not kill it (`compacting.mode: background`).
pub fn start_in_background(state: &State, user: &MemoryKey, claude: &Claude) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt as _;
    let exe = std::env::current_exe().context("could not find this program to start compaction")?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--state-dir")
        .arg(state.layout.state_dir())
        .arg("-q");
    if let Some(channel) = &state.channel {
        command.arg("--channel").arg(channel.as_str());
    }
    command
        .arg("compact")
        .arg("--background")
        .args(match user.conversation_key() {
            Some(key) => ["--conversation".to_owned(), key.as_str().to_owned()],
            None => ["--user".to_owned(), user.as_str().to_owned()],
        })
        .arg("--claude-bin")
        .arg(&claude.program)
        .arg("--timeout")
        .arg(claude.timeout.as_secs().to_string());
    // The model is compact's own default (compacting.model), as the
    // compactor's; the --claude-arg values go along, as inline
    // compaction uses them too.
    for arg in &claude.extra_args {
        command.arg(format!("--claude-arg={arg}"));
    }
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .context("could not start a background compaction")?;
    Ok(())
}

//! `compact`: fold old messages of one user, or every user over the
//! threshold, into their summaries now.

use serde::Serialize;

use crate::cli::CompactArgs;
use crate::commands::{Output, Purpose, claude_runner, print_json, print_text};
use crate::error::exit_code_of;
use crate::layout::UserId;
use crate::memory::compaction::{self, Options, Outcome};
use crate::memory::stm;
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
        None => args.user.clone(),
    };
    if let Some(user) = &one {
        super::existing_user(state, user)?;
        let outcome =
            compaction::compact_user(state, user, &make_claude, options)?.budget_stop_as_error()?;
        return if output.json {
            print_json(&UserOutcome {
                user: user.as_str(),
                outcome: &outcome,
            })
        } else {
            print_text(&describe(user, &outcome, state))
        };
    }

    let mut results: Vec<(UserId, Outcome)> = Vec::new();
    let mut errors: Vec<(UserId, anyhow::Error)> = Vec::new();
    let mut under_threshold = 0;
    for user in stm::users(state)? {
        // The scan: most users are under the threshold; skip them unlocked.
        match compaction::may_need(state, &user, args.force) {
            Ok(false) => {
                under_threshold += 1;
                continue;
            }
            Ok(true) => {}
            Err(e) => {
                errors.push((user, e));
                continue;
            }
        }
        match compaction::compact_user(state, &user, &make_claude, options)
            .and_then(Outcome::budget_stop_as_error)
        {
            Ok(Outcome::NotNeeded { .. }) => under_threshold += 1,
            Ok(outcome) => results.push((user, outcome)),
            Err(e) => {
                crate::diag::warn(format!("{user}: {e:#}"));
                errors.push((user, e));
            }
        }
    }

    let calls: u32 = results
        .iter()
        .map(|(_, o)| match o {
            Outcome::Compacted { calls, .. } => *calls,
            _ => 0,
        })
        .sum();
    let cost: f64 = results
        .iter()
        .filter_map(|(_, o)| match o {
            Outcome::Compacted { cost_usd, .. } => *cost_usd,
            _ => None,
        })
        // Not `.sum()`: an empty f64 sum is -0.0, printed `$-0.0000`.
        .fold(0.0, |total, cost| total + cost);
    let not_json: u32 = results
        .iter()
        .map(|(_, o)| match o {
            Outcome::Compacted { not_json, .. } => *not_json,
            _ => 0,
        })
        .sum();
    if output.json {
        print_json(&AllOutcomes {
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
        })?;
    } else {
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
        print_text(&lines.join("\n"))?;
    }
    match errors.into_iter().next() {
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

fn describe(user: &UserId, outcome: &Outcome, state: &State) -> String {
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

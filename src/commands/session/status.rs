//! `session status`: the channel's counts, storage per area, spend and
//! the recent failures of background work (the failure log's last week),
//! or one user's messages, compactions, storage and spend, as key–value
//! lines (or `--json`).

use chrono::Utc;

use crate::commands::style::{Style, display_width, human_bytes, pad};
use crate::commands::{Output, print_json, print_text};
use crate::layout::{MemoryKey, UserId};
use crate::memory::failures;
use crate::memory::ledger::Spend;
use crate::memory::people;
use crate::memory::user_data::{self, UserStats};
use crate::state::State;

pub(super) fn status(state: &State, output: Output, style: Style) -> anyhow::Result<()> {
    let now = Utc::now();
    let status = crate::memory::people::channel_status(state, now)?;
    // What failed where nobody watched (background compaction, cron).
    let failures = failures::since(state, now, FAILURES_HOURS)?;
    if output.json {
        let mut value = serde_json::to_value(&status)?;
        value["recentFailures"] = serde_json::to_value(&failures)?;
        return print_json(&value);
    }
    let storage: Vec<String> = status
        .storage_bytes
        .areas()
        .iter()
        .map(|(name, bytes)| format!("{name} {}", human_bytes(*bytes)))
        .collect();
    let rows = vec![
        vec!["state dir".into(), status.state_dir.display().to_string()],
        vec!["users".into(), status.users.to_string()],
        vec!["conversations".into(), status.conversations.to_string()],
        vec![
            "messages".into(),
            format!("{} in short-term memory", status.stm_messages),
        ],
        vec![
            "LTM entries".into(),
            format!(
                "{} profile(s), {} topic(s)",
                status.ltm.profiles, status.ltm.topics
            ),
        ],
        vec!["storage".into(), storage.join(", ")],
        vec!["spend (asks)".into(), describe_spend(&status.spend.asks)],
        vec![
            "spend (maintenance)".into(),
            describe_spend(&status.spend.maintenance),
        ],
    ];
    let mut rows = rows;
    if failures.is_empty() {
        rows.push(vec![
            "failures".into(),
            format!("none in the last {} days", FAILURES_HOURS / 24),
        ]);
    }
    for failure in failures.iter().rev() {
        rows.push(vec!["failure".into(), describe_failure(failure)]);
    }
    print_text(&key_values(style, &rows))
}

/// How far back `status` shows failures from the failure log.
const FAILURES_HOURS: i64 = 7 * 24;

/// One failure of the failure log, on one line.
pub fn describe_failure(failure: &failures::Failure) -> String {
    let who = failure
        .who
        .as_deref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    format!(
        "{} {}{who}: {} (exit {})",
        failure.ts, failure.task, failure.error, failure.exit
    )
}

fn describe_spend(spend: &Spend) -> String {
    format!(
        "${:.4} today, ${:.4} this month, ${:.4} in total; {} input and {} output tokens",
        spend.today_usd, spend.month_usd, spend.total_usd, spend.input_tokens, spend.output_tokens
    )
}

fn key_values(style: Style, rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(|r| display_width(&r[0])).max().unwrap_or(0);
    rows.iter()
        .map(|r| {
            let value = crate::terminal::escape_for_terminal(&r[1]);
            format!("{}  {value}", style.bold(&pad(&r[0], width)))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn user_status(state: &State, user: &UserId, output: Output) -> anyhow::Result<()> {
    let now = Utc::now();
    // A person's row as `users` shows it (group messages counted in).
    let stats = match people::people(state, now)?
        .into_iter()
        .find(|s| s.user == user.as_str())
    {
        Some(stats) => stats,
        None => user_data::stats(state, &MemoryKey::person(user), now)?,
    };
    if output.json {
        return print_json(&stats);
    }
    print_text(&describe_stats(&stats))
}

fn describe_stats(stats: &UserStats) -> String {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let rows = vec![
        vec!["user".into(), stats.user.clone()],
        vec![
            "messages".into(),
            format!(
                "{} in short-term memory, {} compacted{}",
                stats.stm_messages,
                stats.compacted,
                if stats.conversations.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} sent in {} conversation(s)",
                        stats.group_messages,
                        stats.conversations.len()
                    )
                }
            ),
        ],
        vec![
            "last activity".into(),
            stats
                .last_activity
                .map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
        ],
        vec!["summary".into(), yes_no(stats.has_summary).into()],
        vec!["profile".into(), yes_no(stats.has_profile).into()],
        vec!["storage".into(), human_bytes(stats.bytes)],
        vec!["spend".into(), describe_spend(&stats.spend)],
    ];
    key_values(Style::detect(), &rows)
}

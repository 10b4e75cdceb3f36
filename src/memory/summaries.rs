//! Tiered summaries: one per user and past UTC day with messages
//! (`summaries/<user>/daily/YYYY-MM-DD.md`), one per complete ISO week
//! combining the dailies (`summaries/<user>/weekly/YYYY-Www.md`).
//!
//! A day's messages come from STM *and* the archive, so compaction or
//! expiry never hides a day. An existing summary is never regenerated
//! unless forced: each one costs an LLM call.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Datelike as _, Duration, NaiveDate, Timelike as _, Utc, Weekday};

use crate::claude::{Claude, Reply, SystemPromptMode};
use crate::config::Config;
use crate::layout::{Layout, MemoryKey};
use crate::memory::message::{Message, format_ts};
use crate::memory::transcript::format_message;
use crate::memory::{ledger, prompts, stm};
use crate::state::State;
use crate::store::archive;
use crate::store::atomic::write_atomic;
use crate::store::frontmatter::Document;

/// The most text one summary call is given; a busier day is cut in the
/// middle with a note (its start and end matter most).
const MAX_PROMPT_CHARS: usize = 200_000;

/// An ISO week: its week-numbering year and number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Week {
    pub year: i32,
    pub week: u32,
}

impl Week {
    pub fn of(day: NaiveDate) -> Self {
        let iso = day.iso_week();
        Self {
            year: iso.year(),
            week: iso.week(),
        }
    }

    pub fn monday(self) -> NaiveDate {
        NaiveDate::from_isoywd_opt(self.year, self.week, Weekday::Mon).expect("a valid ISO week")
    }

    pub fn sunday(self) -> NaiveDate {
        self.monday() + Duration::days(6)
    }
}

impl std::fmt::Display for Week {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-W{:02}", self.year, self.week)
    }
}

/// Every day on which the user has messages, in STM or the archive.
pub fn days_with_messages(state: &State, user: &MemoryKey) -> anyhow::Result<BTreeSet<NaiveDate>> {
    let mut days: BTreeSet<NaiveDate> = archive_days(state, user)?.into_iter().collect();
    days.extend(stm::all_times(state, user)?.iter().map(|t| t.date_naive()));
    Ok(days)
}

/// Days that have an archive file (`messages-YYYY-MM-DD.jsonl.gz`).
pub fn archive_days(state: &State, user: &MemoryKey) -> anyhow::Result<Vec<NaiveDate>> {
    archive_days_in(&state.layout.archive_dir(user))
}

/// The days of the archives in an archive folder, oldest first; other
/// files there are not archives.
pub fn archive_days_in(dir: &std::path::Path) -> anyhow::Result<Vec<NaiveDate>> {
    Ok(crate::store::fs::file_names(dir)?
        .iter()
        .filter_map(|name| Layout::archive_day(name))
        .collect())
}

/// Every message of one UTC day, from the archive then STM, in time order.
/// Read under the user lock, after finishing any interrupted compaction: a
/// compaction between the two reads would hide its messages from both, and
/// a half-done one would show them twice, in a summary never redone.
pub fn messages_of_day(
    state: &State,
    user: &MemoryKey,
    day: NaiveDate,
) -> anyhow::Result<Vec<Message>> {
    let lock = state.lock_owner(user)?;
    crate::memory::compaction::recover_locked(state, &lock)?;
    let path = state.layout.archive_file(user, day);
    let read = archive::read_lines(&path)?;
    // A summary of half a day would never be redone: refuse, loudly.
    if let Some(damage) = read.damage.first() {
        anyhow::bail!("{damage}; repair or move the archive, then the day is summarised");
    }
    let mut messages: Vec<Message> = read
        .lines
        .iter()
        .filter_map(|line| stm::parse_or_warn(line, &path, 0))
        .filter(|m| m.ts.date_naive() == day)
        .collect();
    messages.extend(
        stm::all_messages(state, user)?
            .into_iter()
            .filter(|m| m.ts.date_naive() == day),
    );
    messages.sort_by_key(|m| m.ts);
    Ok(messages)
}

/// Past days with messages and no daily summary (all past days with
/// `force`). None before `compacting.dailySummaryHour`.
pub fn daily_due(
    state: &State,
    user: &MemoryKey,
    now: DateTime<Utc>,
    force: bool,
) -> anyhow::Result<Vec<NaiveDate>> {
    if now.hour() < state.config.compacting.daily_summary_hour {
        return Ok(Vec::new());
    }
    let today = now.date_naive();
    Ok(days_with_messages(state, user)?
        .into_iter()
        .filter(|day| *day < today)
        .filter(|day| force || !state.layout.daily_file(user, *day).exists())
        .collect())
}

/// Write the daily summary of `day`. Returns claude's reply (for its cost).
/// `messages` are the day's, from [`messages_of_day`]; never empty.
pub fn write_daily(
    state: &State,
    user: &MemoryKey,
    day: NaiveDate,
    messages: &[Message],
    claude: &Claude,
    now: DateTime<Utc>,
) -> anyhow::Result<Reply> {
    let lines: Vec<String> = messages.iter().map(format_message).collect();
    let prompt = format!(
        "Day: {}\n\n{}",
        day.format("%Y-%m-%d"),
        fit_lines(&lines, MAX_PROMPT_CHARS)
    );
    let mut doc = Document::default();
    doc.set("user_id", user.as_str());
    doc.set("date", day.format("%Y-%m-%d").to_string());
    doc.set("message_count", messages.len() as u64);
    if let (Some(first), Some(last)) = (messages.first(), messages.last()) {
        doc.set("first_message", format_ts(&first.ts));
        doc.set("last_message", format_ts(&last.ts));
    }
    let target = Target {
        kind: ledger::Kind::Daily,
        instructions: prompts::DAILY_INSTRUCTIONS,
        path: state.layout.daily_file(user, day),
    };
    call_and_write(state, user, claude, &target, &prompt, doc, now)
}

/// What one summary call is for and where its answer goes.
struct Target {
    kind: ledger::Kind,
    instructions: &'static str,
    path: std::path::PathBuf,
}

/// Ask claude for a summary and write it with the given frontmatter (plus
/// its cost) under the user lock; the cost goes to the ledger.
fn call_and_write(
    state: &State,
    user: &MemoryKey,
    claude: &Claude,
    target: &Target,
    prompt: &str,
    mut doc: Document,
    now: DateTime<Utc>,
) -> anyhow::Result<Reply> {
    let system = Some((SystemPromptMode::Replace, target.instructions.to_owned()));
    let asked = state.clock.now();
    let reply = claude.call(system, prompt)?;
    if let Some(cost) = reply.cost_usd {
        doc.set("cost_usd", cost);
    }
    doc.body = reply.text.trim().to_owned();
    {
        let _lock = state.lock_owner(user)?;
        // A person erased while claude wrote this: the erase is final.
        let erased = match user.person_id() {
            Some(person) => ledger::erased_since(state, &person, asked)?,
            None => false,
        };
        if erased {
            crate::diag::warn(format!(
                "{user} was erased while their {} summary was written; it is not kept",
                target.kind
            ));
        } else {
            write_atomic(&target.path, doc.render().as_bytes(), state.fsync())?;
        }
    }
    if let Err(e) = ledger::record(state, target.kind, user, &reply, now) {
        crate::diag::warn(format!(
            "could not record the cost of a {} summary: {e:#}",
            target.kind
        ));
    }
    Ok(reply)
}

/// The first `weeklySummaryDay` after the week ended: the day its weekly
/// summary is due (from `dailySummaryHour`, once its last daily exists).
pub fn weekly_due_day(week: Week, config: &Config) -> NaiveDate {
    // weeklySummaryDay counts from Sunday (0), as JavaScript's getDay().
    let offset = (config.compacting.weekly_summary_day as i64 + 6) % 7;
    week.sunday() + Duration::days(1 + offset)
}

/// Complete past weeks whose weekly summary is due and missing, and whose
/// days with messages all have their daily summary.
pub fn weekly_due(
    state: &State,
    user: &MemoryKey,
    now: DateTime<Utc>,
    force: bool,
) -> anyhow::Result<Vec<Week>> {
    let dailies = daily_dates(state, user)?;
    let mut weeks: BTreeMap<Week, usize> = BTreeMap::new();
    for day in &dailies {
        *weeks.entry(Week::of(*day)).or_default() += 1;
    }
    if weeks.is_empty() {
        return Ok(Vec::new());
    }
    let days = days_with_messages(state, user)?;
    let today = now.date_naive();
    let hour = state.config.compacting.daily_summary_hour;
    let mut due = Vec::new();
    for week in weeks.into_keys() {
        let due_day = weekly_due_day(week, &state.config);
        let reached = today > due_day || (today == due_day && now.hour() >= hour);
        let exists = state
            .layout
            .weekly_file(user, week.year, week.week)
            .exists();
        let dailies_complete = days
            .range(week.monday()..=week.sunday())
            .all(|day| dailies.contains(day));
        if reached && (force || !exists) && dailies_complete {
            due.push(week);
        }
    }
    Ok(due)
}

fn daily_dates(state: &State, user: &MemoryKey) -> anyhow::Result<BTreeSet<NaiveDate>> {
    Ok(crate::store::fs::file_names(&state.layout.daily_dir(user))?
        .iter()
        .filter_map(|name| Layout::markdown_stem(name).and_then(Layout::daily_day))
        .collect())
}

pub fn write_weekly(
    state: &State,
    user: &MemoryKey,
    week: Week,
    claude: &Claude,
    now: DateTime<Utc>,
) -> anyhow::Result<Reply> {
    let mut parts = Vec::new();
    for day in daily_dates(state, user)?
        .into_iter()
        .filter(|day| Week::of(*day) == week)
    {
        let path = state.layout.daily_file(user, day);
        if let Some(text) = crate::store::fs::read_optional_text(&path)? {
            let doc = stm::parse_document_or_warn(&text, &path);
            parts.push(format!(
                "## {}\n{}",
                day.format("%Y-%m-%d (%A)"),
                doc.body.trim()
            ));
        }
    }
    let prompt = format!("Week: {week}\n\n{}", fit_lines(&parts, MAX_PROMPT_CHARS));
    let mut doc = Document::default();
    doc.set("user_id", user.as_str());
    doc.set("week", week.to_string());
    doc.set("daily_summaries", parts.len() as u64);
    let target = Target {
        kind: ledger::Kind::Weekly,
        instructions: prompts::WEEKLY_INSTRUCTIONS,
        path: state.layout.weekly_file(user, week.year, week.week),
    };
    call_and_write(state, user, claude, &target, &prompt, doc, now)
}

/// Join lines within `max` characters; when they do not fit, keep the
/// start and the end and say how many lines were left out between.
fn fit_lines(lines: &[String], max: usize) -> String {
    let total: usize = lines.iter().map(|l| l.chars().count() + 1).sum();
    if total <= max {
        return lines.join("\n");
    }
    let half = max / 2;
    let mut head = Vec::new();
    let mut used = 0;
    for line in lines {
        used += line.chars().count() + 1;
        if used > half {
            break;
        }
        head.push(line.as_str());
    }
    let mut tail = Vec::new();
    used = 0;
    for line in lines[head.len()..].iter().rev() {
        used += line.chars().count() + 1;
        if used > half {
            break;
        }
        tail.push(line.as_str());
    }
    tail.reverse();
    let omitted = lines.len() - head.len() - tail.len();
    format!(
        "{}\n[… {omitted} lines left out …]\n{}",
        head.join("\n"),
        tail.join("\n")
    )
}

/// Users with anything a summary could come from: STM or archive.
pub fn users_with_history(state: &State) -> anyhow::Result<Vec<MemoryKey>> {
    let mut users: BTreeSet<MemoryKey> = stm::users(state)?.into_iter().collect();
    users.extend(
        stm::list_user_dirs(&state.layout.archive_root())?
            .into_iter()
            // archive/logs holds rotated broker logs, not a user.
            .filter(|u| u.as_str() != "logs"),
    );
    Ok(users.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_weeks_across_the_2026_year_end() {
        let jan1 = NaiveDate::from_ymd_opt(2027, 1, 1).unwrap();
        let week = Week::of(jan1);
        assert_eq!(
            week,
            Week {
                year: 2026,
                week: 53
            }
        );
        assert_eq!(week.to_string(), "2026-W53");
        assert_eq!(
            week.monday(),
            NaiveDate::from_ymd_opt(2026, 12, 28).unwrap()
        );
        assert_eq!(week.sunday(), NaiveDate::from_ymd_opt(2027, 1, 3).unwrap());
    }

    #[test]
    fn weekly_is_due_on_the_first_summary_day_after_the_week() {
        let mut config = Config::default();
        let week = Week {
            year: 2026,
            week: 53,
        };
        config.compacting.weekly_summary_day = 1; // Monday
        assert_eq!(
            weekly_due_day(week, &config),
            NaiveDate::from_ymd_opt(2027, 1, 4).unwrap()
        );
        config.compacting.weekly_summary_day = 0; // Sunday
        assert_eq!(
            weekly_due_day(week, &config),
            NaiveDate::from_ymd_opt(2027, 1, 10).unwrap()
        );
    }

    #[test]
    fn long_days_keep_start_and_end() {
        let lines: Vec<String> = (0..100).map(|i| format!("line {i:03}")).collect();
        let text = fit_lines(&lines, 200);
        assert!(text.starts_with("line 000"));
        assert!(text.ends_with("line 099"));
        assert!(text.contains("lines left out"));
        assert!(text.chars().count() < 260);
    }
}

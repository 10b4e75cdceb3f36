//! Cost ledgers: what LLM calls cost, kept apart from the chat logs so that
//! budgets can be checked on the hot path of `ask` without decoding
//! archives. Three JSONL files under `sessions/costs/`, appended to (only
//! an erase rewrites: a sender's ledger down to the amounts its budgets
//! need, [`keep_for_budgets_only`], and the maintenance ledger without the
//! person's lines):
//! `per-user/<user>/asks.jsonl` (each ask of a sender; earlier versions
//! kept it in `users/<user>.jsonl`, moved on first use), `asks-YYYY-MM.jsonl` (every
//! ask of the channel, no user ids), `maintenance.jsonl` (compaction and
//! summary calls). All appends happen under one short ledger lock, and
//! are not fsynced: a cost line lost to a power cut only loosens a budget
//! by one call, and `ask` is spared two syncs.

use chrono::{DateTime, Datelike as _, Utc};
use serde_json::{Value, json};

use crate::claude::Reply;
use crate::layout::{MemoryKey, UserId};
use crate::memory::message::{format_ts, parse_ts};
use crate::state::State;
use crate::store::fs::open_read;
use crate::store::jsonl::append_lines;
use crate::store::lock::FileLock;
use crate::store::tail::ReverseLines;

/// Proof that this process holds the lock over every ledger file: what
/// the functions that rewrite or move a ledger take.
#[derive(Debug)]
pub struct LedgerLock {
    _file: FileLock,
}

/// The one lock over every ledger file.
pub fn lock(state: &State) -> anyhow::Result<LedgerLock> {
    FileLock::acquire(
        &state.layout.ledger_lock_file(),
        state.config.lock_timeout(),
        "the cost ledger",
    )
    .map(|file| LedgerLock { _file: file })
}

fn entry(now: DateTime<Utc>, reply: &Reply) -> Value {
    let mut line = json!({"ts": format_ts(&now)});
    if let Some(cost) = reply.cost_usd {
        line["costUsd"] = Value::from(cost);
    }
    if let Some(usage) = &reply.usage {
        for key in ["input_tokens", "output_tokens"] {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                line[key] = Value::from(n);
            }
        }
    }
    line
}

/// What a maintenance call was for: the `kind` of its ledger line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Compact,
    Daily,
    Weekly,
}

impl Kind {
    /// As written in the ledger (and said in warnings): `compact`,
    /// `daily`, `weekly`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Compact => "compact",
            Kind::Daily => "daily",
            Kind::Weekly => "weekly",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Record one maintenance call.
pub fn record(
    state: &State,
    kind: Kind,
    user: &MemoryKey,
    reply: &Reply,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let mut line = entry(now, reply);
    line["kind"] = Value::from(kind.as_str());
    line["user"] = Value::from(user.as_str());
    let bytes = serde_json::to_vec(&line)?;
    let _lock = lock(state)?;
    append_lines(&state.layout.maintenance_ledger_file(), &[&bytes], false)
}

/// Record what an `ask` of `sender` cost, in the sender's and the
/// channel's ledger.
pub fn record_ask(
    state: &State,
    sender: &UserId,
    reply: &Reply,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    if reply.cost_usd.is_none() && reply.usage.is_none() {
        return Ok(());
    }
    let bytes = serde_json::to_vec(&entry(now, reply))?;
    let lock = lock(state)?;
    move_legacy(state, &lock, sender)?;
    append_lines(&state.layout.user_ledger_file(sender), &[&bytes], false)?;
    let month = now.format("%Y-%m").to_string();
    append_lines(&state.layout.channel_ledger_file(&month), &[&bytes], false)
}

/// What an erase keeps of a sender's ledger: budgets must hold across an
/// erase (else `/session clear all` resets the caps), and they need only
/// amounts and times of this month (the longest period a cap counts).
/// The first line says when the erase happened: an `ask` that was in
/// flight checks it before logging its reply (see [`erased_since`]).
/// Written before anything else of the person is removed.
pub fn keep_for_budgets_only(
    state: &State,
    user: &UserId,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let path = state.layout.user_ledger_file(user);
    let lock = lock(state)?;
    move_legacy(state, &lock, user)?;
    let old = crate::store::fs::read_optional(&path)?.unwrap_or_default();
    let mut kept = serde_json::to_vec(&json!({"erasedAt": format_ts(&now)}))?;
    kept.push(b'\n');
    for line in old.split(|&b| b == b'\n') {
        let Ok(value) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let (Some(ts), Some(cost)) = (
            value
                .get("ts")
                .and_then(Value::as_str)
                .and_then(|t| parse_ts(t).ok()),
            value.get("costUsd").and_then(Value::as_f64),
        ) else {
            continue;
        };
        if ts.year() == now.year() && ts.month() == now.month() {
            kept.extend(serde_json::to_vec(
                &json!({"ts": format_ts(&ts), "costUsd": cost}),
            )?);
            kept.push(b'\n');
        }
    }
    crate::store::atomic::write_atomic(&path, &kept, state.fsync())
}

/// Move a sender's ledger from where earlier versions kept it (one flat
/// folder for everyone, `costs/users/<user>.jsonl`) to its own folder.
/// Under the ledger lock. When both exist (never, short of a hand-made
/// copy), the old one is left where it is.
fn move_legacy(state: &State, _lock: &LedgerLock, user: &UserId) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let legacy = state.layout.legacy_user_ledger_file(user);
    // The common case, one look-up: nothing left to move.
    if std::fs::symlink_metadata(&legacy).is_err() {
        return Ok(());
    }
    let path = state.layout.user_ledger_file(user);
    if crate::store::fs::len_of(&path)?.is_some() {
        return Ok(());
    }
    crate::store::fs::ensure_parent(&path)?;
    crate::store::shared::retry_stale(&path, || std::fs::rename(&legacy, &path))
        .with_context(|| format!("could not move {} to {}", legacy.display(), path.display()))?;
    if let Some(parent) = path.parent() {
        crate::store::fs::sync_dir(parent)?;
    }
    Ok(())
}

/// Open a sender's ledger to read it, first moving it from where earlier
/// versions kept it (under the ledger lock, taken only when there is
/// something to move).
fn open_user_ledger(state: &State, user: &UserId) -> anyhow::Result<Option<std::fs::File>> {
    if std::fs::symlink_metadata(state.layout.legacy_user_ledger_file(user)).is_ok() {
        let lock = lock(state)?;
        move_legacy(state, &lock, user)?;
    }
    open_read(&state.layout.user_ledger_file(user))
}

/// Whether `user` was erased after `since`: one small read of the first
/// line of their ledger, cheap enough for every reply.
pub fn erased_since(state: &State, user: &UserId, since: DateTime<Utc>) -> anyhow::Result<bool> {
    use std::io::Read as _;
    let Some(file) = open_user_ledger(state, user)? else {
        return Ok(false);
    };
    // Aligned reads: on a shared file system the file is open `O_DIRECT`.
    let mut head = Vec::with_capacity(128);
    crate::store::shared::AlignedReader::new(&file)
        .take(128)
        .read_to_end(&mut head)?;
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    Ok(serde_json::from_slice::<Value>(first)
        .ok()
        .and_then(|v| v.get("erasedAt")?.as_str().and_then(|t| parse_ts(t).ok()))
        .is_some_and(|erased| erased >= since))
}

/// Money and tokens spent, by period.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spend {
    pub today_usd: f64,
    pub month_usd: f64,
    /// Everything in the ledger read (all time, or this month only).
    pub total_usd: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Sum a ledger from its end. Without `all_time`, reading stops at the
/// first line before this month: the cost of a budget check grows with
/// this month's traffic, not with the ledger.
fn sum(path: &std::path::Path, now: DateTime<Utc>, all_time: bool) -> anyhow::Result<Spend> {
    sum_open(open_read(path)?, now, all_time)
}

fn sum_open(
    file: Option<std::fs::File>,
    now: DateTime<Utc>,
    all_time: bool,
) -> anyhow::Result<Spend> {
    let mut spend = Spend::default();
    let Some(file) = file else {
        return Ok(spend);
    };
    let today = now.date_naive();
    for item in ReverseLines::new(file)? {
        let (_, line) = item?;
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let Some(ts) = value
            .get("ts")
            .and_then(Value::as_str)
            .and_then(|t| parse_ts(t).ok())
        else {
            continue;
        };
        let this_month = ts.year() == now.year() && ts.month() == now.month();
        if !this_month && !all_time && ts < now {
            break;
        }
        let cost = value.get("costUsd").and_then(Value::as_f64).unwrap_or(0.0);
        spend.total_usd += cost;
        if this_month {
            spend.month_usd += cost;
        }
        if ts.date_naive() == today {
            spend.today_usd += cost;
        }
        let tokens = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
        spend.input_tokens += tokens("input_tokens");
        spend.output_tokens += tokens("output_tokens");
    }
    Ok(spend)
}

/// The spend a ledger file records; `all_time` also sums the months
/// before this one.
pub fn sum_file(
    path: &std::path::Path,
    now: DateTime<Utc>,
    all_time: bool,
) -> anyhow::Result<Spend> {
    sum(path, now, all_time)
}

/// A sender's spend; `all_time` also sums the months before this one.
pub fn user_spend(
    state: &State,
    user: &UserId,
    now: DateTime<Utc>,
    all_time: bool,
) -> anyhow::Result<Spend> {
    sum_open(open_user_ledger(state, user)?, now, all_time)
}

/// The whole channel's ask spend this month and today.
pub fn channel_spend(state: &State, now: DateTime<Utc>) -> anyhow::Result<Spend> {
    let month = now.format("%Y-%m").to_string();
    sum(&state.layout.channel_ledger_file(&month), now, false)
}

/// Maintenance spend today (compaction and summaries).
pub fn maintenance_spend(state: &State, now: DateTime<Utc>) -> anyhow::Result<Spend> {
    sum(&state.layout.maintenance_ledger_file(), now, false)
}

/// Why `ask` may not call claude now, if a cap is reached (spend at or
/// over the cap: a cap of 0 stops every call).
pub fn ask_cap_reached(
    state: &State,
    sender: &UserId,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<String>> {
    let budget = &state.config.budget;
    if !budget.any_ask_cap() {
        return Ok(None);
    }
    let user = user_spend(state, sender, now, false)?;
    let channel = if budget.channel_daily_usd.is_some() || budget.channel_monthly_usd.is_some() {
        channel_spend(state, now)?
    } else {
        Spend::default()
    };
    let checks = [
        ("budget.dailyUsd", budget.daily_usd, user.today_usd),
        ("budget.monthlyUsd", budget.monthly_usd, user.month_usd),
        (
            "budget.channelDailyUsd",
            budget.channel_daily_usd,
            channel.today_usd,
        ),
        (
            "budget.channelMonthlyUsd",
            budget.channel_monthly_usd,
            channel.month_usd,
        ),
    ];
    Ok(checks.into_iter().find_map(|(key, cap, spent)| {
        cap.filter(|cap| spent >= *cap)
            .map(|cap| format!("{key} of ${cap:.2} is used up (${spent:.4} spent)"))
    }))
}

/// Whether maintenance may make another call today.
pub fn maintenance_cap_reached(
    state: &State,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<String>> {
    let Some(cap) = state.config.budget.maintenance_daily_usd else {
        return Ok(None);
    };
    let spent = maintenance_spend(state, now)?.today_usd;
    Ok((spent >= cap).then(|| {
        format!("budget.maintenanceDailyUsd of ${cap:.2} is used up (${spent:.4} spent today)")
    }))
}

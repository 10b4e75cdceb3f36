//! The maintenance ledger: one line per LLM call made for compaction or
//! summaries, so what memory upkeep costs is visible (and budgetable).

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::claude::Reply;
use crate::layout::UserId;
use crate::memory::message::format_ts;
use crate::state::State;
use crate::store::jsonl::append_lines;
use crate::store::lock::FileLock;

/// Record one maintenance call: `kind` is `compact`, `daily` or `weekly`.
pub fn record(
    state: &State,
    kind: &str,
    user: &UserId,
    reply: &Reply,
    now: DateTime<Utc>,
) -> anyhow::Result<()> {
    let mut line = json!({
        "ts": format_ts(&now),
        "kind": kind,
        "user": user.as_str(),
    });
    if let Some(cost) = reply.cost_usd {
        line["costUsd"] = Value::from(cost);
    }
    if let Some(usage) = &reply.usage {
        line["usage"] = usage.clone();
    }
    let bytes = serde_json::to_vec(&line)?;
    let _lock = FileLock::acquire(
        &state.layout.ledger_lock_file(),
        state.config.lock_timeout(),
        "the maintenance ledger",
    )?;
    append_lines(
        &state.layout.maintenance_ledger_file(),
        &[&bytes],
        state.fsync(),
    )
}

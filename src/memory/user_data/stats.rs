//! One user's numbers, for `status` and `users`: messages, activity,
//! spend, and the bytes their files take.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::user_paths;
use crate::layout::UserId;
use crate::memory::{ledger, stm};
use crate::state::State;
use crate::store::tree::disk_usage;

/// One user's numbers, for `status` and `users`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserStats {
    pub user: String,
    pub stm_messages: usize,
    /// User lines they sent in group conversations' short-term logs.
    pub group_messages: usize,
    /// The conversations they wrote in.
    pub conversations: Vec<String>,
    pub compacted: u64,
    pub last_activity: Option<DateTime<Utc>>,
    pub has_summary: bool,
    pub has_profile: bool,
    pub bytes: u64,
    /// From the sender's cost ledger (`ask` calls).
    pub spend: ledger::Spend,
}

/// Numbers for one user.
pub fn stats(state: &State, user: &UserId, now: DateTime<Utc>) -> anyhow::Result<UserStats> {
    let mut stats = UserStats {
        user: user.to_string(),
        ..UserStats::default()
    };
    for message in stm::all_messages(state, user)? {
        stats.stm_messages += 1;
        // The newest time, not the last line's (imports append old lines).
        stats.last_activity = stats.last_activity.max(Some(message.ts));
    }
    stats.spend = ledger::user_spend(state, user, now, true)?;
    if let Some(doc) = stm::summary(state, user)? {
        stats.has_summary = true;
        stats.compacted = doc.get_u64("messages_compacted").unwrap_or(0);
    }
    stats.has_profile = state.layout.profile_file(user).exists();
    stats.bytes = user_paths(state, user).iter().map(|p| disk_usage(p)).sum();
    Ok(stats)
}

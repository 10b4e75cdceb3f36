//! One user's numbers, for `status` and `users`: messages, activity,
//! spend, and the bytes their files take; and what the whole channel's
//! numbers are made of, for `session status` (gathered by
//! [`crate::memory::people::channel_status`]).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::layout::MemoryKey;
use crate::layout::owner_files;
use crate::memory::{ledger, stm};
use crate::state::State;
use crate::store::tree::disk_usage;

/// One user's numbers, for `status` and `users`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserStats {
    pub user: String,
    /// The name the platform knows them by: their profile's
    /// `display_name`, else the newest `userName` of their group lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
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
pub fn stats(state: &State, user: &MemoryKey, now: DateTime<Utc>) -> anyhow::Result<UserStats> {
    let mut stats = UserStats {
        user: user.to_string(),
        ..UserStats::default()
    };
    for message in stm::all_messages(state, user)? {
        stats.stm_messages += 1;
        // The newest time, not the last line's (imports append old lines).
        stats.last_activity = stats.last_activity.max(Some(message.ts));
    }
    if let Some(person) = user.person_id() {
        stats.spend = ledger::user_spend(state, &person, now, true)?;
    }
    if let Some(doc) = stm::summary(state, user)? {
        stats.has_summary = true;
        stats.compacted = doc.get_u64("messages_compacted").unwrap_or(0);
    }
    let profile = user
        .person_id()
        .map(|person| state.layout.profile_file(&person));
    stats.has_profile = profile.as_ref().is_some_and(|p| p.exists());
    if let Some(profile) = profile.filter(|_| stats.has_profile)
        && let Some(text) = stm::read_text_or_warn(&profile)?
    {
        stats.display_name = stm::parse_document_or_warn(&text, &profile)
            .get_text("display_name")
            .filter(|name| !name.trim().is_empty());
    }
    stats.bytes = owned_bytes(state, user);
    Ok(stats)
}

/// The bytes an owner's files take, as their row counts them
/// ([`owner_files::OwnerFile::counted_for`]).
pub fn owned_bytes(state: &State, owner: &MemoryKey) -> u64 {
    owner_files::paths(&state.layout, owner, |entry| entry.counted_for(owner))
        .iter()
        .map(|p| disk_usage(p))
        .sum()
}

/// The whole channel's numbers, for `session status` (and its `--json`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatus {
    pub state_dir: std::path::PathBuf,
    /// People, including those who wrote only in groups.
    pub users: usize,
    /// Group and thread conversations.
    pub conversations: usize,
    pub spend: ChannelSpend,
    /// Messages in every short-term log.
    pub stm_messages: usize,
    pub ltm: LtmCounts,
    pub storage_bytes: StorageBytes,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct ChannelSpend {
    /// Replies (`ask`).
    pub asks: ledger::Spend,
    /// Compactions and summaries.
    pub maintenance: ledger::Spend,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct LtmCounts {
    pub profiles: usize,
    pub topics: usize,
}

/// Bytes on disk, area by area.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StorageBytes {
    pub stm: u64,
    pub ltm: u64,
    pub summaries: u64,
    pub archive: u64,
}

impl StorageBytes {
    /// Each area with its name, in this order.
    pub fn areas(&self) -> [(&'static str, u64); 4] {
        [
            ("stm", self.stm),
            ("ltm", self.ltm),
            ("summaries", self.summaries),
            ("archive", self.archive),
        ]
    }
}

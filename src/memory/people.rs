//! People and conversations side by side, for `session users`,
//! `session conversations` and the channel-wide `session status`.
//!
//! A person is anyone who wrote, 1:1 or in a group: a group-only sender
//! has no folder of their own, and is found through the group's log and
//! the membership records. A conversation's spend is read from the cost
//! kept on its reply lines (short-term log and archives, streamed), as no
//! ledger is kept per conversation; a person's from their own ledger,
//! which every `ask` they sent is charged to, in a group or not.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead as _;

use chrono::{DateTime, Datelike as _, Utc};
use serde::Serialize;

use crate::layout::{Layout, MemoryKey, UserId};
use crate::memory::ledger::Spend;
use crate::memory::owners::{self, Owner, OwnerKind};
use crate::memory::user_data::{
    self, ChannelSpend, ChannelStatus, LtmCounts, StorageBytes, UserStats,
};
use crate::memory::{ledger, ltm, message::parse_ts, stm};
use crate::state::State;
use crate::store::archive::MembersReader;
use crate::store::fs::read_dir_optional;

/// One conversation's numbers.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationStats {
    pub conversation: String,
    pub stm_messages: usize,
    pub compacted: u64,
    /// Everyone who wrote in it (short-term log and membership records).
    pub people: Vec<String>,
    pub last_activity: Option<DateTime<Utc>>,
    pub bytes: u64,
    /// From the cost on its reply lines.
    pub spend: Spend,
}

/// What one sender did in the groups' short-term logs.
#[derive(Debug, Default)]
struct GroupActivity {
    messages: usize,
    last: Option<DateTime<Utc>>,
    /// The `userName` of their newest group line that has one.
    name: Option<(DateTime<Utc>, String)>,
    conversations: BTreeSet<String>,
}

/// Every person: their own numbers plus what they wrote in groups.
pub fn people(state: &State, now: DateTime<Utc>) -> anyhow::Result<Vec<UserStats>> {
    let all = owners::owners(state)?;
    let mut activity: BTreeMap<UserId, GroupActivity> = BTreeMap::new();
    for conversation in all.iter().filter(|o| o.kind == OwnerKind::Conversation) {
        // One unreadable log must not hide everyone else.
        let messages = match stm::all_messages(state, &conversation.key) {
            Ok(messages) => messages,
            Err(e) => {
                crate::diag::warn(format!("{e:#}; its senders' group messages not counted"));
                continue;
            }
        };
        for message in messages {
            let Some(sender) = message.sender().and_then(|s| UserId::new(s).ok()) else {
                continue;
            };
            let entry = activity.entry(sender).or_default();
            entry.messages += 1;
            entry.last = entry.last.max(Some(message.ts));
            if let Some(name) = message.user_name.as_ref().filter(|n| !n.trim().is_empty())
                && entry.name.as_ref().is_none_or(|(at, _)| *at <= message.ts)
            {
                entry.name = Some((message.ts, name.clone()));
            }
            entry.conversations.insert(conversation.name());
        }
    }
    // Recorded memberships: a sender whose group lines are all archived.
    let conversations: BTreeSet<&MemoryKey> = all
        .iter()
        .filter(|o| o.kind == OwnerKind::Conversation)
        .map(|o| &o.key)
        .collect();
    for (person, keys) in memberships(state)? {
        let entry = activity.entry(person).or_default();
        entry.conversations.extend(
            keys.into_iter()
                .filter(|k| conversations.contains(k))
                .filter_map(|k| k.conversation_key())
                .map(|k| k.as_str().to_owned()),
        );
    }
    let mut persons: BTreeSet<UserId> = all.iter().filter_map(|o| o.key.person_id()).collect();
    // A sender's id is a person's: a `UserId` never names a conversation.
    persons.extend(activity.keys().cloned());
    let mut rows = Vec::new();
    // Reads every person's files: on a terminal, say how far it is.
    let progress = crate::progress::Progress::new("users", persons.len());
    for person in persons {
        progress.step();
        let mut stats = match user_data::stats(state, &MemoryKey::person(&person), now) {
            Ok(stats) => stats,
            Err(e) => {
                crate::diag::warn(format!("{person}: {e:#}; left out of the list"));
                continue;
            }
        };
        if let Some(group) = activity.get(&person) {
            stats.group_messages = group.messages;
            stats.last_activity = stats.last_activity.max(group.last);
            stats.conversations = group.conversations.iter().cloned().collect();
            if stats.display_name.is_none() {
                stats.display_name = group.name.as_ref().map(|(_, name)| name.clone());
            }
        }
        rows.push(stats);
    }
    Ok(rows)
}

/// `memberships/<person>/<conversation>`, as a map.
fn memberships(state: &State) -> anyhow::Result<BTreeMap<UserId, Vec<MemoryKey>>> {
    let root = state.layout.memberships_root();
    let mut map = BTreeMap::new();
    for person in read_dir_optional(&root)? {
        let Some(id) = person
            .file_name()
            .to_str()
            .and_then(|n| UserId::new(n).ok())
        else {
            continue;
        };
        let keys = read_dir_optional(&person.path())?
            .iter()
            .filter_map(|r| r.file_name().to_str().and_then(MemoryKey::from_folder_name))
            .collect();
        map.insert(id, keys);
    }
    Ok(map)
}

/// Every conversation with its numbers.
pub fn conversations(state: &State, now: DateTime<Utc>) -> anyhow::Result<Vec<ConversationStats>> {
    let members = memberships(state)?;
    let mut rows = Vec::new();
    for owner in owners::owners(state)?
        .into_iter()
        .filter(|o| o.kind == OwnerKind::Conversation)
    {
        let mut stats = ConversationStats {
            conversation: owner.name(),
            ..ConversationStats::default()
        };
        let mut people: BTreeSet<String> = members
            .iter()
            .filter(|(_, keys)| keys.contains(&owner.key))
            .map(|(person, _)| person.to_string())
            .collect();
        for message in stm::all_messages(state, &owner.key)? {
            stats.stm_messages += 1;
            stats.last_activity = stats.last_activity.max(Some(message.ts));
            if let Some(sender) = message.sender() {
                people.insert(sender.to_owned());
            }
        }
        stats.people = people.into_iter().collect();
        if let Some(doc) = stm::summary(state, &owner.key)? {
            stats.compacted = doc.get_u64("messages_compacted").unwrap_or(0);
        }
        stats.bytes = user_data::owned_bytes(state, &owner.key);
        stats.spend = reply_spend(state, &owner, now)?;
        rows.push(stats);
    }
    Ok(rows)
}

/// Sum the `costUsd` (and tokens) of the reply lines of a conversation, in
/// its short-term log and archives; only lines that mention a cost are
/// parsed.
fn reply_spend(state: &State, owner: &Owner, now: DateTime<Utc>) -> anyhow::Result<Spend> {
    let mut spend = Spend::default();
    let today = now.date_naive();
    let mut add = |line: &[u8]| {
        if memchr::memmem::find(line, b"\"costUsd\"").is_none() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            return;
        };
        let Some(ts) = value
            .get("ts")
            .and_then(|t| t.as_str())
            .and_then(|t| parse_ts(t).ok())
        else {
            return;
        };
        let cost = value
            .get("costUsd")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0);
        spend.total_usd += cost;
        if ts.year() == now.year() && ts.month() == now.month() {
            spend.month_usd += cost;
        }
        if ts.date_naive() == today {
            spend.today_usd += cost;
        }
        let usage = value.get("usage");
        let tokens = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        spend.input_tokens += tokens("input_tokens");
        spend.output_tokens += tokens("output_tokens");
    };
    let mut files: Vec<(std::path::PathBuf, bool)> = vec![(owner.messages_file(state), false)];
    for entry in read_dir_optional(&owner.archive_dir(state))? {
        let name = entry.file_name();
        // Dated archives only, as search and summaries read them.
        if name
            .to_str()
            .is_some_and(|n| Layout::archive_day(n).is_some())
        {
            files.push((entry.path(), true));
        }
    }
    for (path, gzip) in files {
        let Some(file) = crate::store::fs::open_read(&path)? else {
            continue;
        };
        // Aligned reads: on a shared file system the file is open `O_DIRECT`.
        let aligned = crate::store::shared::AlignedReader::new(&file);
        let reader: Box<dyn std::io::Read> = if gzip {
            Box::new(MembersReader::new(aligned))
        } else {
            Box::new(aligned)
        };
        let mut reader = std::io::BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => add(&line),
                Err(e) => {
                    return Err(
                        anyhow::Error::new(e).context(format!("could not read {}", path.display()))
                    );
                }
            }
        }
    }
    Ok(spend)
}

/// The channel's ask spend (today, this month, all months) and its
/// maintenance spend (compaction, summaries), from the ledgers.
pub fn channel_spend(state: &State, now: DateTime<Utc>) -> anyhow::Result<(Spend, Spend)> {
    let mut asks = Spend::default();
    for entry in read_dir_optional(&state.layout.costs_dir())? {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if Layout::is_channel_ledger(name) {
            let spend = ledger::sum_file(&entry.path(), now, true)?;
            asks.today_usd += spend.today_usd;
            asks.month_usd += spend.month_usd;
            asks.total_usd += spend.total_usd;
            asks.input_tokens += spend.input_tokens;
            asks.output_tokens += spend.output_tokens;
        }
    }
    let maintenance = ledger::sum_file(&state.layout.maintenance_ledger_file(), now, true)?;
    Ok((asks, maintenance))
}

/// Numbers for the whole channel. A log that cannot be read is warned
/// about and not counted.
pub fn channel_status(state: &State, now: DateTime<Utc>) -> anyhow::Result<ChannelStatus> {
    let conversations = owners::owners(state)?
        .iter()
        .filter(|o| o.kind == OwnerKind::Conversation)
        .count();
    let (asks, maintenance) = channel_spend(state, now)?;
    let mut stm_messages = 0;
    for user in stm::users(state)? {
        match stm::all_messages(state, &user) {
            Ok(all) => stm_messages += all.len(),
            Err(e) => crate::diag::warn(format!("{e:#}; not counted")),
        }
    }
    let layout = &state.layout;
    Ok(ChannelStatus {
        state_dir: layout.state_dir().to_owned(),
        users: people(state, now)?.len(),
        conversations,
        spend: ChannelSpend { asks, maintenance },
        stm_messages,
        ltm: LtmCounts {
            profiles: ltm::markdown_names(&layout.profiles_dir())?.len(),
            topics: ltm::markdown_names(&layout.topics_dir())?.len(),
        },
        storage_bytes: StorageBytes {
            stm: crate::store::tree::disk_usage(&layout.stm_root()),
            ltm: crate::store::tree::disk_usage(&layout.ltm_dir()),
            summaries: crate::store::tree::disk_usage(&layout.summaries_root()),
            archive: crate::store::tree::disk_usage(&layout.archive_root()),
        },
    })
}

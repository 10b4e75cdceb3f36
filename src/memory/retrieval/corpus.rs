//! What recall searches: every message of one owner (archives, oldest day
//! first, then the live log, read fresh) and the daily and weekly
//! summaries, each line of a summary its own unit. The rolling summary
//! and the sender's profile are already whole in the context.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use crate::layout::Layout;
use crate::memory::message::Message;
use crate::memory::owners::Owner;
use crate::memory::{ltm, stm, summaries};
use crate::state::State;
use crate::store::archive;

/// One unit of recall: a stored message, or a line of a summary.
#[derive(Debug, Clone)]
// Nearly every unit is a message: boxing it would cost an allocation each.
#[allow(clippy::large_enum_variant)]
pub enum Item {
    Message(Message),
    Note {
        ts: DateTime<Utc>,
        /// `Daily summary` or `Weekly summary`.
        label: String,
        text: String,
    },
}

impl Item {
    pub fn ts(&self) -> DateTime<Utc> {
        match self {
            Item::Message(m) => m.ts,
            Item::Note { ts, .. } => *ts,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Item::Message(m) => &m.text,
            Item::Note { text, .. } => text,
        }
    }
}

/// A unit and where it is stored: `log`, `archive YYYY-MM-DD`, `daily
/// YYYY-MM-DD`, `weekly YYYY-Www`.
#[derive(Debug, Clone)]
pub struct Unit {
    pub item: Item,
    pub source: String,
}

/// The owner's messages in time order (then the summaries' lines).
/// Messages come first and are consecutive, so a message's neighbours are
/// the units beside it; `messages` says how many there are.
pub struct Corpus {
    pub units: Vec<Unit>,
    pub messages: usize,
    /// Archive days left unread by `recall.maxArchivedMessages`.
    pub skipped_days: usize,
}

/// With `max_archived` (config `recall.maxArchivedMessages`, 0: all),
/// archive days are read newest first until that many messages are held:
/// without an index, every ask reads what it searches (BENCHMARKS.md,
/// Auto-recall, Scale). The live log is always read whole.
pub fn read(state: &State, owner: &Owner, max_archived: usize) -> anyhow::Result<Corpus> {
    // The log first, then the archives: a compaction in between moves
    // lines from the one to the others, so they are read twice (and
    // deduplicated), never missed.
    let log = stm::all_messages_in(&owner.messages_file(state))?;
    let mut units: Vec<Unit> = Vec::new();
    let mut days = summaries::archive_days_in(&owner.archive_dir(state))?;
    days.sort_by(|a, b| b.cmp(a));
    let mut skipped_days = 0;
    for day in days {
        if max_archived > 0 && units.len() >= max_archived {
            skipped_days += 1;
            continue;
        }
        let path = state.layout.archive_file(&owner.key, day);
        let read = archive::read_lines(&path)?;
        for damage in &read.damage {
            crate::diag::warn(format!(
                "{}: {damage}; recalled from what could be read",
                path.display()
            ));
        }
        let source = format!("archive {day}");
        units.extend(
            read.lines
                .iter()
                .filter_map(|line| Message::parse(line).ok())
                .map(|m| Unit {
                    item: Item::Message(m),
                    source: source.clone(),
                }),
        );
    }
    let archived: HashSet<(DateTime<Utc>, String)> = units
        .iter()
        .filter_map(|u| match &u.item {
            Item::Message(m) => Some((m.ts, m.text.clone())),
            Item::Note { .. } => None,
        })
        .collect();
    units.extend(
        log.into_iter()
            .filter(|m| !archived.contains(&(m.ts, m.text.clone())))
            .map(|m| Unit {
                item: Item::Message(m),
                source: "log".to_owned(),
            }),
    );
    units.sort_by_key(|u| u.item.ts());
    let messages = units.len();

    for (dir, kind) in [
        (owner.daily_dir(state), "daily"),
        (owner.weekly_dir(state), "weekly"),
    ] {
        for name in ltm::markdown_names(&dir)? {
            let ts = match kind {
                "daily" => Layout::daily_day(&name),
                _ => Layout::weekly_week(&name)
                    .map(|(year, week)| summaries::Week { year, week }.sunday()),
            };
            let Some(ts) = ts
                .and_then(|d| d.and_hms_opt(23, 59, 59))
                .map(|t| t.and_utc())
            else {
                continue;
            };
            let path = Layout::markdown_file(&dir, &name);
            let Some(text) = stm::read_text_or_warn(&path)? else {
                continue;
            };
            let body = stm::parse_document_or_warn(&text, &path).body;
            let label = match kind {
                "daily" => "Daily summary",
                _ => "Weekly summary",
            };
            for line in body.lines() {
                let line = line.trim().trim_start_matches(['-', '*', '#', ' ']);
                if line.chars().count() < 3 {
                    continue;
                }
                units.push(Unit {
                    item: Item::Note {
                        ts,
                        label: label.to_owned(),
                        text: line.to_owned(),
                    },
                    source: format!("{kind} {name}"),
                });
            }
        }
    }
    Ok(Corpus {
        units,
        messages,
        skipped_days,
    })
}

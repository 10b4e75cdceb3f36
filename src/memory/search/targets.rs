//! Which files a search reads: each owner's entries in the registry of
//! their files, narrowed by the query's kinds, owner and dates.

use super::*;
use crate::layout::MemoryKey;

/// Which kinds of file a query reads.
pub(super) struct Wanted {
    pub(super) messages: bool,
    pub(super) summaries: bool,
    pub(super) profiles: bool,
}

pub(super) fn targets(state: &State, query: &Query) -> anyhow::Result<Vec<Target>> {
    let wants = |kind| query.kinds.is_empty() || query.kinds.contains(&kind);
    // A role or tags only exist on messages or on notes respectively.
    let prose = query.role.is_none();
    let wanted = Wanted {
        messages: wants(Kind::Message) && query.tags.is_empty(),
        summaries: wants(Kind::Summary) && prose && query.tags.is_empty(),
        profiles: wants(Kind::Profile) && prose && query.conversation.is_none(),
    };
    let topics =
        wants(Kind::Topic) && prose && query.conversation.is_none() && query.within.is_none();
    let all = match &query.within {
        Some(within) => within.clone(),
        None => owners::owners(state)?,
    };
    known_conversation(&all, query.conversation.as_ref())?;
    let mut out = Vec::new();
    for owner in &all {
        if let Some(key) = &query.conversation
            && &owner.key != key
        {
            continue;
        }
        // `--user`: the person's own memory, and their lines in groups.
        let own = query
            .user
            .as_ref()
            .is_none_or(|u| MemoryKey::person(u) == owner.key);
        let about = match &query.user {
            Some(user) if !own => {
                if owner.kind != OwnerKind::Conversation {
                    continue;
                }
                Some(user)
            }
            _ => None,
        };
        // What the registry says this owner has; what each entry holds
        // decides which of its files are searched, and how.
        for entry in owner_files::entries_of(&owner.key) {
            entry_targets(state, query, &wanted, entry.id, owner, about, &mut out)?;
        }
    }
    if topics {
        let dir = state.layout.topics_dir();
        for name in ltm::markdown_names(&dir)? {
            let path = Layout::markdown_file(&dir, &name);
            push(&mut out, path, Kind::Topic, Source::Topic, None, None);
        }
    }
    Ok(out)
}

/// The files of one registry entry of `owner` that the query reads.
/// `about`: only a person's lines in a conversation (no prose).
pub(super) fn entry_targets(
    state: &State,
    query: &Query,
    wanted: &Wanted,
    entry: Id,
    owner: &Owner,
    about: Option<&UserId>,
    out: &mut Vec<Target>,
) -> anyhow::Result<()> {
    let prose = about.is_none();
    match entry {
        Id::Stm => {
            if wanted.messages {
                let log = owner.messages_file(state);
                push(out, log, Kind::Message, Source::Stm, Some(owner), about);
            }
            if wanted.summaries && prose {
                let rolling = owner.summary_file(state);
                push(
                    out,
                    rolling,
                    Kind::Summary,
                    Source::Rolling,
                    Some(owner),
                    None,
                );
            }
        }
        // Dated archives, and the rolling summaries retired beside them
        // (`summary-DAY.md`, by `session clear` or an expiry).
        Id::Archive => {
            let names = crate::store::fs::file_names(&owner.archive_dir(state))?;
            for name in &names {
                if wanted.messages
                    && let Some(day) = Layout::archive_day(name)
                    && day_in_range(day, day, query)
                {
                    let path = state.layout.archive_file(&owner.key, day);
                    push(
                        out,
                        path,
                        Kind::Message,
                        Source::Archive,
                        Some(owner),
                        about,
                    );
                }
                if wanted.summaries
                    && prose
                    && let Some(day) = Layout::archived_summary_day(name)
                    && day_in_range(day, day, query)
                {
                    let path = state.layout.archived_summary_file(&owner.key, day);
                    push(out, path, Kind::Summary, Source::Rolling, Some(owner), None);
                }
            }
        }
        Id::Summaries if wanted.summaries && prose => {
            for (dir, source) in [
                (owner.daily_dir(state), Source::Daily),
                (owner.weekly_dir(state), Source::Weekly),
            ] {
                for name in ltm::markdown_names(&dir)? {
                    if let Some((first, last)) = summary_days(&name)
                        && !day_in_range(first, last, query)
                    {
                        continue;
                    }
                    let path = Layout::markdown_file(&dir, &name);
                    push(out, path, Kind::Summary, source, Some(owner), None);
                }
            }
        }
        Id::Profile if wanted.profiles && prose => {
            if let Some(path) = owner.profile_file(state) {
                push(out, path, Kind::Profile, Source::Profile, Some(owner), None);
            }
        }
        Id::Summaries | Id::Profile => {}
        // No content: copies, records, derived data, locks, ledgers.
        Id::Exports
        | Id::Journal
        | Id::CompactionLock
        | Id::Memberships
        | Id::MembershipRecords
        | Id::Inflight
        | Id::RecallIndex
        | Id::Ledger
        | Id::LegacyLedger
        | Id::OwnerLock => {}
    }
    Ok(())
}

/// A file to search, if it is one.
pub(super) fn push(
    out: &mut Vec<Target>,
    path: PathBuf,
    kind: Kind,
    source: Source,
    owner: Option<&Owner>,
    about: Option<&UserId>,
) {
    if let Ok(meta) = std::fs::metadata(&path)
        && meta.is_file()
    {
        out.push(Target {
            path,
            kind,
            source,
            owner: owner.cloned(),
            about: about.cloned(),
            size: meta.len(),
        });
    }
}

/// The days a summary file covers: `YYYY-MM-DD` or `YYYY-Www`.
pub(super) fn summary_days(name: &str) -> Option<(NaiveDate, NaiveDate)> {
    if let Some(day) = Layout::daily_day(name) {
        return Some((day, day));
    }
    let (year, week) = Layout::weekly_week(name)?;
    let week = summaries::Week { year, week };
    Some((week.monday(), week.sunday()))
}

/// Whether days `first..=last` overlap `--since`/`--until`.
pub(super) fn day_in_range(first: NaiveDate, last: NaiveDate, query: &Query) -> bool {
    let start = first.and_hms_opt(0, 0, 0).expect("midnight").and_utc();
    let end = last.and_hms_opt(23, 59, 59).expect("valid").and_utc();
    query.since.is_none_or(|since| end >= since) && query.until.is_none_or(|until| start < until)
}

pub(super) fn time_in_range(ts: Option<DateTime<Utc>>, query: &Query) -> bool {
    match ts {
        Some(ts) => {
            query.since.is_none_or(|since| ts >= since)
                && query.until.is_none_or(|until| ts < until)
        }
        None => query.since.is_none() && query.until.is_none(),
    }
}

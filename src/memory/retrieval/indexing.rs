//! Building and dropping one owner's recall index segments
//! ([`super::index`]): what `maintain` (task `index`), `session reindex`,
//! and the rewrites of an archive (erase, delete) call.
//!
//! Only past days are indexed (today's archive grows with every
//! compaction; it is read whole, as the live log is). Segments of fewer
//! than [`index::KEEP_SEGMENT_DOCS`] docs are rebuilt with the newer days,
//! so the days indexed one run at a time end up in a few files; a segment
//! holds at most [`index::MAX_SEGMENT_DOCS`] docs.

use std::collections::HashSet;
use std::path::PathBuf;

use chrono::NaiveDate;

use super::index::{self, DaySource, Identity, Segment};
use super::tokenize::{self, Tokenizer};
use crate::layout::MemoryKey;
use crate::memory::summaries;
use crate::state::{OwnerLock, State};
use crate::store::fs::remove_if_exists;

/// What one update did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Updated {
    /// Segments written, and the days and docs they cover.
    pub segments: usize,
    pub days: usize,
    pub docs: usize,
    /// Segments removed (replaced, stale, damaged).
    pub removed: usize,
    /// Damaged segments found (warned about, rebuilt).
    pub damaged: usize,
}

/// Past archive days not in a current segment: what an update would read
/// (for `maintain --dry-run`, and a progress bar's length).
pub fn days_to_index(state: &State, key: &MemoryKey, today: NaiveDate) -> anyhow::Result<usize> {
    let plan = plan(state, key, today, false, false)?;
    Ok(plan.build.len())
}

struct Plan {
    build: Vec<NaiveDate>,
    remove: Vec<PathBuf>,
    damaged: usize,
}

fn plan(
    state: &State,
    key: &MemoryKey,
    today: NaiveDate,
    all: bool,
    warn: bool,
) -> anyhow::Result<Plan> {
    let mut days = summaries::archive_days_in(&state.layout.archive_dir(key))?;
    days.retain(|d| *d < today);
    days.sort();
    let dir = state.layout.recall_index_dir(key);
    let mut covered: HashSet<NaiveDate> = HashSet::new();
    let mut remove = Vec::new();
    let mut small: Vec<(PathBuf, Vec<NaiveDate>)> = Vec::new();
    let mut damaged = 0;
    for name in crate::store::fs::file_names(&dir)? {
        let path = dir.join(&name);
        if !name.ends_with(index::SUFFIX) {
            // A temp file a killed writer left is swept by prune; anything
            // else here is not ours to remove.
            continue;
        }
        let segment = match Segment::open(&path) {
            Ok(Some(segment)) => segment,
            Ok(None) => continue,
            Err(e) if e.downcast_ref::<index::Damaged>().is_some_and(|d| d.stale) => {
                remove.push(path);
                continue;
            }
            Err(e) if e.downcast_ref::<index::Damaged>().is_some() => {
                if warn {
                    crate::diag::warn(format!("{e}; rebuilt now"));
                }
                damaged += 1;
                remove.push(path);
                continue;
            }
            // Not a segment to read or to remove (a folder or a FIFO by
            // its name, no permission): left where it is, its days built
            // into another, as recall reads around it.
            Err(e) => {
                if warn {
                    crate::diag::warn(format!("recall index {} left out ({e:#})", path.display()));
                }
                continue;
            }
        };
        let mut current = !all && segment.tokenizer_version == tokenize::VERSION;
        if current {
            for entry in &segment.days {
                let archive = state.layout.archive_file(key, entry.day);
                if entry.day >= today
                    || covered.contains(&entry.day)
                    || Identity::current(&archive)? != Some(entry.archive)
                {
                    current = false;
                    break;
                }
            }
        }
        if !current {
            remove.push(path);
        } else if segment.docs as usize >= index::KEEP_SEGMENT_DOCS {
            covered.extend(segment.days.iter().map(|d| d.day));
        } else {
            small.push((path, segment.days.iter().map(|d| d.day).collect::<Vec<_>>()));
        }
    }
    let mut small_days: HashSet<NaiveDate> = small.iter().flat_map(|(_, d)| d.clone()).collect();
    let uncovered = days
        .iter()
        .any(|d| !covered.contains(d) && !small_days.contains(d));
    if uncovered {
        // New days: the small segments are rebuilt with them, into one.
        remove.extend(small.into_iter().map(|(path, _)| path));
    } else {
        covered.extend(small_days.drain());
    }
    let build = days.into_iter().filter(|d| !covered.contains(d)).collect();
    Ok(Plan {
        build,
        remove,
        damaged,
    })
}

/// Bring `key`'s index up to date at `today`: every past archive day in
/// a current segment. With `all`, every segment is rebuilt. `progress` is
/// called with each day read.
pub fn update(
    state: &State,
    key: &MemoryKey,
    today: NaiveDate,
    all: bool,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<Updated> {
    let plan = plan(state, key, today, all, true)?;
    let mut updated = Updated {
        damaged: plan.damaged,
        ..Updated::default()
    };
    if plan.build.is_empty() && plan.remove.is_empty() {
        return Ok(updated);
    }
    let dir = state.layout.recall_index_dir(key);
    let tokenizer = Tokenizer::new();
    let mut written: HashSet<PathBuf> = HashSet::new();
    let mut group: Vec<DaySource> = Vec::new();
    let mut docs = 0;
    let mut flush = |group: &mut Vec<DaySource>, docs: &mut usize| -> anyhow::Result<()> {
        if group.is_empty() {
            return Ok(());
        }
        let bytes = index::build(&tokenizer, group);
        let name = index::segment_name(group[0].day, group[group.len() - 1].day);
        let path = dir.join(name);
        {
            // Built outside the lock; written under it, whole.
            let _lock = state.lock_owner(key)?;
            crate::store::fs::ensure_dir(&dir)?;
            crate::store::atomic::write_atomic(&path, &bytes, state.fsync())?;
        }
        updated.segments += 1;
        updated.days += group.len();
        updated.docs += *docs;
        written.insert(path);
        group.clear();
        *docs = 0;
        Ok(())
    };
    for day in &plan.build {
        let source = read_day(state, key, *day)?;
        progress(1);
        let Some(source) = source else { continue };
        if docs > 0 && docs + source.lines.len() > index::MAX_SEGMENT_DOCS {
            flush(&mut group, &mut docs)?;
        }
        docs += source.lines.len();
        group.push(source);
    }
    flush(&mut group, &mut docs)?;
    let _lock = state.lock_owner(key)?;
    for path in &plan.remove {
        if !written.contains(path) && remove_if_exists(path)? {
            updated.removed += 1;
        }
    }
    Ok(updated)
}

/// One archive day as it is now, with the identity of the very file read.
fn read_day(state: &State, key: &MemoryKey, day: NaiveDate) -> anyhow::Result<Option<DaySource>> {
    let path = state.layout.archive_file(key, day);
    let Some(mut file) = crate::store::fs::open_read(&path)? else {
        return Ok(None);
    };
    let meta = file.metadata()?;
    let mut bytes = Vec::new();
    if crate::store::shared::applies_to(&path) {
        crate::store::shared::read_to_end_at(&file, 0, &mut bytes)?;
    } else {
        std::io::Read::read_to_end(&mut file, &mut bytes)?;
    }
    let read = crate::store::archive::lines_of(&bytes, &path);
    for damage in &read.damage {
        crate::diag::warn(format!("{damage}; indexed what could be read"));
    }
    let lines = read
        .lines
        .into_iter()
        .filter(|l| crate::memory::message::Message::parse(l).is_ok())
        .collect();
    Ok(Some(DaySource {
        day,
        archive: Identity::of(&meta),
        lines,
    }))
}

/// Remove every segment of `key` that covers `day`, whose archive was just
/// rewritten without some lines (erase, delete): a stale segment is never
/// used, but it must not keep what was erased. The caller holds the lock.
pub fn forget_day_locked(state: &State, lock: &OwnerLock, day: NaiveDate) -> anyhow::Result<()> {
    let key = lock.owner();
    let dir = state.layout.recall_index_dir(key);
    for name in crate::store::fs::file_names(&dir)? {
        if !name.ends_with(index::SUFFIX) {
            continue;
        }
        let path = dir.join(&name);
        let covers = match Segment::open(&path) {
            Ok(Some(segment)) => segment.days.iter().any(|d| d.day == day),
            Ok(None) => false,
            // Unreadable: it may hold anything.
            Err(_) => true,
        };
        if covers {
            remove_if_exists(&path)?;
        }
    }
    Ok(())
}

/// Every owner with an index or an archive folder: what `maintain`'s
/// task `index` visits.
pub fn owners(state: &State) -> anyhow::Result<Vec<MemoryKey>> {
    let mut keys: Vec<MemoryKey> =
        crate::memory::stm::list_user_dirs(&state.layout.archive_root())?
            .into_iter()
            // archive/logs holds rotated broker logs, not an owner.
            .filter(|k| k.as_str() != "logs")
            .collect();
    for key in crate::memory::stm::list_user_dirs(&state.layout.recall_index_root())? {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    Ok(keys)
}

/// Remove the index of an owner left without archives (erased, or
/// every day gone).
pub fn drop_orphan(state: &State, key: &MemoryKey) -> anyhow::Result<bool> {
    let archives = summaries::archive_days_in(&state.layout.archive_dir(key))?;
    let dir = state.layout.recall_index_dir(key);
    if !archives.is_empty() || std::fs::symlink_metadata(&dir).is_err() {
        return Ok(false);
    }
    let _lock = state.lock_owner(key)?;
    crate::store::tree::remove_tree(&dir)?;
    Ok(true)
}

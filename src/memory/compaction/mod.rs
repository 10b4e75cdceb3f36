//! Compaction: fold the older messages of a user into the rolling summary,
//! archive their raw lines, keep the newest `stm.contextWindow` raw.
//!
//! The protocol (DESIGN §5):
//! 1. Under the user lock: finish any compaction a killed process left
//!    (its journal), then plan: which prefix of `messages.jsonl` goes.
//! 2. Without any user lock: one claude call summarises the prefix, with
//!    the previous summary, and extracts durable profile facts.
//! 3. Under the user lock again: if the file still starts with exactly the
//!    planned prefix, write a journal of what follows, then append the
//!    prefix to the gzip archives, write the summary, rewrite the log
//!    without the prefix (keeping every line appended meanwhile), and
//!    remove the journal.
//!
//! A process killed anywhere in step 3 leaves the journal; the next
//! compaction of that user (or expiry, clear, erase, delete, export or a
//! daily summary) replays it, skipping what was done. So every message is always in STM or the archive, and never
//! archived twice. A separate compaction lock, held across the LLM call,
//! makes a second concurrent compaction of the same user return at once.
//!
//! Each part has its own file: `plan` reads the log and decides what
//! leaves it, `summarise` is the LLM call (prompt, schema, answer) and
//! the summary it gives, `journal` writes, replays and recovers step 3.
//! This file holds the protocol, the sweep over every owner due ([`due`],
//! [`compact_due`]: `maintain`'s task and `compact --all`), the merge of
//! profile facts, and the archiving of a whole log an expiry uses.

mod journal;
mod plan;
mod summarise;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::claude::Claude;
use crate::diag;
use crate::layout::{MemoryKey, UserId};
use crate::memory::ltm::{self, IndexEntry, ProfileFacts};
use crate::memory::{ledger, stm};
use crate::state::{OwnerLock, State};
use crate::store::fs::{read_optional, remove_if_exists};
use crate::store::lock::FileLock;

pub use journal::recover_locked;
use journal::{Journal, apply_journal_locked, write_journal};
use plan::{Planned, plan_locked, prefix_unchanged};
use summarise::{Answer, facts_by_user, next_summary, summarise};

#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Compact anything beyond the context window, even under threshold.
    pub force: bool,
    /// Plan only: no call, no change.
    pub dry_run: bool,
}

/// What one user's compaction did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Outcome {
    /// Under the threshold (or, forced, within the window).
    #[serde(rename_all = "camelCase")]
    NotNeeded { messages: usize },
    /// Another process is compacting this user right now.
    Busy,
    /// `--dry-run`: what would happen.
    #[serde(rename_all = "camelCase")]
    WouldCompact {
        messages: usize,
        compact: usize,
        keep: usize,
    },
    #[serde(rename_all = "camelCase")]
    Compacted {
        compacted: usize,
        kept: usize,
        calls: u32,
        cost_usd: Option<f64>,
        /// Replies that were not the JSON asked for: their text became the
        /// summary, no profile was changed.
        not_json: u32,
    },
    /// The log changed under us (cleared or expired meanwhile): nothing
    /// was written.
    Changed,
    /// A cap stopped the work before any call: left for the next run.
    Deferred {
        #[serde(skip)]
        cap: Cap,
    },
}

/// What stopped a compaction before its first call.
#[derive(Debug, Clone, PartialEq)]
pub enum Cap {
    /// The caller's cap on calls (`maintain --max-llm-calls`).
    Calls,
    /// The maintenance budget; why it is reached.
    Budget(String),
}

impl Outcome {
    /// For a command whose exit code reports a budget that stopped the
    /// work (exit 7, as `ask` refusing a call): that stop as its error.
    pub fn budget_stop_as_error(self) -> anyhow::Result<Self> {
        match self {
            Outcome::Deferred {
                cap: Cap::Budget(why),
            } => Err(crate::error::failure(crate::error::Exit::OverBudget, why)),
            outcome => Ok(outcome),
        }
    }
}

/// Cheap check without lock or parsing: more lines than the threshold?
/// (Lines, not valid messages: a false "yes" only costs a locked plan.)
pub fn may_need(state: &State, user: &MemoryKey, force: bool) -> anyhow::Result<bool> {
    let limit = if force {
        state.config.context_window()
    } else {
        state.config.threshold()
    };
    crate::store::lines::more_lines_than(&state.layout.messages_file(user), limit)
}

/// The owners a sweep over everyone ([`compact_due`]) will compact.
#[derive(Debug, Default)]
pub struct Due {
    /// Over the threshold (or, forced, over the window), in owner order.
    pub owners: Vec<MemoryKey>,
    /// Owners found under it.
    pub under_threshold: usize,
    /// Owners whose log could not be checked.
    pub errors: Vec<(MemoryKey, anyhow::Error)>,
}

/// Every owner whose log [`may_need`] compaction, checked without locks:
/// most are under the threshold, and skipping them must cost no lock.
pub fn due(state: &State, force: bool) -> anyhow::Result<Due> {
    let mut due = Due::default();
    for owner in stm::users(state)? {
        match may_need(state, &owner, force) {
            Ok(true) => due.owners.push(owner),
            Ok(false) => due.under_threshold += 1,
            Err(e) => due.errors.push((owner, e)),
        }
    }
    Ok(due)
}

/// The sweep `maintain`'s compaction task and `compact --all` share:
/// [`compact_user`] for each owner found [`due`], on `jobs` threads, each
/// run through `guard` (which may skip it: maintain stops its LLM work at
/// a failure every owner would meet), results in owner order.
pub fn compact_due<R: Send>(
    state: &State,
    owners: Vec<MemoryKey>,
    jobs: u32,
    gate: &(dyn Fn() -> anyhow::Result<Option<Claude>> + Sync),
    options: Options,
    guard: impl Fn(&MemoryKey, &dyn Fn() -> anyhow::Result<Outcome>) -> R + Sync,
) -> Vec<(String, R)> {
    crate::memory::pool::in_parallel(jobs, owners, "compact", |owner: &MemoryKey| {
        guard(owner, &|| compact_user(state, owner, gate, options))
    })
}

/// Gives the claude to call before each call, or `None` when a cap on calls
/// (maintain's `--max-llm-calls`) says to stop here.
pub type CallGate<'a> = &'a dyn Fn() -> anyhow::Result<Option<Claude>>;

/// Compact one user's backlog: what was beyond the window when the run
/// started, in as many rounds as its size takes (one call per
/// 256 KiB of it). Messages that arrive meanwhile wait for the next run, so
/// the calls follow the backlog, not the traffic, and the run returns
/// while writers go on. `claude` is asked before every call, so a scan
/// that finds nothing to do needs no claude, and a cap on calls holds
/// however many rounds a long backlog takes.
pub fn compact_user(
    state: &State,
    user: &MemoryKey,
    claude: CallGate,
    options: Options,
) -> anyhow::Result<Outcome> {
    let Some(_compacting) = FileLock::try_acquire(&state.layout.compaction_lock_file(user))? else {
        return Ok(Outcome::Busy);
    };
    let mut compacted = 0;
    let mut calls = 0;
    let mut cost: Option<f64> = None;
    let mut kept = 0;
    let mut not_json = 0;
    // How many messages this run may take: the backlog of its first plan.
    let mut backlog: Option<usize> = None;
    loop {
        let at_most = backlog.map(|b| b.saturating_sub(compacted));
        if at_most == Some(0) {
            break;
        }
        let plan = match plan_round(state, user, options, at_most)? {
            Planned::Nothing { messages } if calls == 0 => {
                return Ok(Outcome::NotNeeded { messages });
            }
            Planned::Nothing { .. } => break,
            Planned::Compact(plan) => plan,
        };
        backlog.get_or_insert(plan.beyond_window);
        if options.dry_run {
            return Ok(Outcome::WouldCompact {
                messages: plan.total,
                compact: plan.messages.len(),
                keep: plan.total - plan.messages.len(),
            });
        }
        let claude = match next_call(state, claude)? {
            Ok(claude) => claude,
            Err(cap) if calls == 0 => return Ok(Outcome::Deferred { cap }),
            Err(_) => break,
        };
        let now = state.clock.now();
        let (answer, reply) = summarise_round(state, user, &claude, &plan, now)?;
        calls += 1;
        not_json += u32::from(answer.is_none());
        let answer = answer.unwrap_or_else(|| Answer {
            summary: reply.text.trim().to_owned(),
            ..Answer::default()
        });
        if let Some(c) = reply.cost_usd {
            *cost.get_or_insert(0.0) += c;
        }
        match apply_round(state, user, &plan, &answer, reply.cost_usd, now)? {
            Some(left) => kept = left,
            None => return Ok(Outcome::Changed),
        }
        if state.config.ltm.auto_profile {
            for (person, facts) in facts_by_user(user, &plan, answer) {
                merge_profile(state, &person, &facts, now);
            }
        }
        compacted += plan.messages.len();
    }
    Ok(Outcome::Compacted {
        compacted,
        kept,
        calls,
        cost_usd: cost,
        not_json,
    })
}

/// Under the owner's lock: finish a journal a killed run left (not on a
/// dry run, which changes nothing), then plan the next round.
fn plan_round(
    state: &State,
    user: &MemoryKey,
    options: Options,
    at_most: Option<usize>,
) -> anyhow::Result<Planned> {
    let lock = state.lock_owner(user)?;
    if !options.dry_run {
        recover_locked(state, &lock)?;
    }
    plan_locked(state, &lock, options.force, at_most)
}

/// The claude for the next call, or the cap that stops the run here: the
/// maintenance budget, or the caller's cap on calls.
fn next_call(state: &State, claude: CallGate) -> anyhow::Result<Result<Claude, Cap>> {
    if let Some(why) = ledger::maintenance_cap_reached(state, state.clock.now())? {
        return Ok(Err(Cap::Budget(why)));
    }
    Ok(claude()?.ok_or(Cap::Calls))
}

/// One call of a compaction: the summary of `plan` (`None` when the reply
/// was not the JSON asked for; its text becomes the summary), its cost
/// recorded in the ledger.
fn summarise_round(
    state: &State,
    user: &MemoryKey,
    claude: &Claude,
    plan: &plan::Plan,
    now: DateTime<Utc>,
) -> anyhow::Result<(Option<Answer>, crate::claude::Reply)> {
    let (answer, reply) = summarise(state, claude, plan)?;
    if answer.is_none() {
        diag::warn(format!(
            "{user}: the compaction reply was not the JSON asked for; its text became \
             the summary and no profile was changed (check compacting.model and \
             compacting.summaryPrompt)"
        ));
    }
    if let Err(e) = ledger::record(state, ledger::Kind::Compact, user, &reply, now) {
        diag::warn(format!("could not record the cost of a compaction: {e:#}"));
    }
    Ok((answer, reply))
}

/// Under the owner's lock, write the round's journal and apply it: the
/// messages kept in the log, or `None` when the log's start changed since
/// the plan (nothing is written then).
fn apply_round(
    state: &State,
    user: &MemoryKey,
    plan: &plan::Plan,
    answer: &Answer,
    cost_usd: Option<f64>,
    now: DateTime<Utc>,
) -> anyhow::Result<Option<usize>> {
    let lock = state.lock_owner(user)?;
    if !prefix_unchanged(state, &lock, &plan.prefix)? {
        return Ok(None);
    }
    let summary = next_summary(plan, &answer.summary, cost_usd, user, now);
    let journal = Journal::new(
        state,
        user,
        &plan.prefix,
        &plan.lines,
        Some(summary.render()),
    )?;
    write_journal(state, &lock, &journal)?;
    Ok(Some(apply_journal_locked(state, &lock, &journal)?))
}

/// Merge facts into one person's profile under their lock. The compaction
/// is done and durable by now; a profile that cannot take the facts (a
/// broken hand edit) is warned about, not a failure.
fn merge_profile(state: &State, person: &UserId, facts: &ProfileFacts, now: DateTime<Utc>) {
    let result = (|| -> anyhow::Result<()> {
        let lock = state.lock_person(person)?;
        // A person erased while this compaction ran has no profile, no
        // STM and no group record left: do not bring them back.
        let layout = &state.layout;
        if !layout.profile_file(person).exists()
            && !layout.stm_dir(lock.owner()).exists()
            && !layout.memberships_dir(person).exists()
        {
            return Ok(());
        }
        // The index entry is written under the person's lock too (user lock,
        // then index lock, as erase takes them): two compactions merging
        // into one person cannot leave the older profile's tags indexed.
        if let Some(doc) = ltm::merge_facts_locked(state, &lock, facts, now)? {
            let entry = IndexEntry::for_user(person, &doc);
            ltm::update_index(state, &entry.path.clone(), Some(entry))?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        diag::warn(format!("{person}: profile facts not merged: {e:#}"));
    }
}

/// Move the whole log into the archive and remove it (STM expiry). The
/// caller holds the user lock. Journalled like a compaction, so a kill
/// never archives a line twice. Returns the number of messages moved.
pub fn archive_whole_log_locked(state: &State, lock: &OwnerLock) -> anyhow::Result<usize> {
    let user = lock.owner();
    recover_locked(state, lock)?;
    let path = state.layout.messages_file(user);
    let Some(log) = read_optional(&path)? else {
        return Ok(0);
    };
    let (lines, messages) = plan::archive_days(&log, &path, state.clock.now().date_naive());
    let journal = Journal::new(state, user, &log, &lines, None)?;
    write_journal(state, lock, &journal)?;
    apply_journal_locked(state, lock, &journal)?;
    remove_if_exists(&path)?;
    Ok(messages.len())
}

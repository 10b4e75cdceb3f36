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
//! compaction of that user (or expiry, or clear) replays it, skipping what
//! was done. So every message is always in STM or the archive, and never
//! archived twice. A separate compaction lock, held across the LLM call,
//! makes a second concurrent compaction of the same user return at once.

use std::io::{BufRead as _, BufReader};

use anyhow::Context as _;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::claude::{Claude, Reply, Request, SystemPromptMode};
use crate::diag;
use crate::layout::UserId;
use crate::memory::context::format_message;
use crate::memory::ledger;
use crate::memory::ltm::{self, IndexEntry, ProfileFacts};
use crate::memory::message::{Message, format_ts};
use crate::memory::prompts;
use crate::memory::stm;
use crate::state::State;
use crate::store::archive;
use crate::store::atomic::write_atomic;
use crate::store::frontmatter::Document;
use crate::store::fs::{open_read, read_optional, remove_if_exists};
use crate::store::lock::FileLock;
use crate::store::shared::AlignedReader;

/// At most this many bytes of raw lines go into one summarising call; a
/// longer backlog (an import, a disabled compactor) takes several rounds.
const CHUNK_BYTES: u64 = 256 * 1024;

/// A guard against a loop that never converges.
const MAX_ROUNDS: u32 = 10_000;

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
    /// A cap on calls was reached before any: left for the next run.
    Deferred,
}

/// Cheap check without lock or parsing: more lines than the threshold?
/// (Lines, not valid messages: a false "yes" only costs a locked plan.)
pub fn may_need(state: &State, user: &UserId, force: bool) -> anyhow::Result<bool> {
    let limit = if force {
        state.config.context_window()
    } else {
        state.config.threshold()
    };
    let path = state.layout.messages_file(user);
    // Without the lock, another host's compaction may replace the log
    // while we count: a stale handle starts the count over.
    crate::store::shared::retry_stale_whole(&path, || more_lines_than(&path, limit))
}

fn more_lines_than(path: &std::path::Path, limit: usize) -> anyhow::Result<bool> {
    let Some(file) = open_read(path)? else {
        return Ok(false);
    };
    let mut reader = BufReader::with_capacity(64 * 1024, AlignedReader::new(&file));
    let mut lines = 0usize;
    loop {
        let buf = reader
            .fill_buf()
            .with_context(|| format!("could not read {}", path.display()))?;
        if buf.is_empty() {
            return Ok(false);
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        if lines > limit {
            return Ok(true);
        }
        let n = buf.len();
        reader.consume(n);
    }
}

/// Gives the claude to call before each call, or `None` when a cap on calls
/// (maintain's `--max-llm-calls`) says to stop here.
pub type CallGate<'a> = &'a dyn Fn() -> anyhow::Result<Option<Claude>>;

/// Compact one user until under the threshold. `claude` is asked before
/// every call, so a scan that finds nothing to do needs no claude, and a
/// cap on calls holds however many rounds a long backlog takes.
pub fn compact_user(
    state: &State,
    user: &UserId,
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
    for _ in 0..MAX_ROUNDS {
        let plan = {
            let _lock = state.lock_user(user)?;
            // A dry run changes nothing, not even a leftover journal.
            if !options.dry_run {
                recover_locked(state, user)?;
            }
            plan_locked(state, user, options.force)?
        };
        let plan = match plan {
            Planned::Nothing { messages } if calls == 0 => {
                return Ok(Outcome::NotNeeded { messages });
            }
            Planned::Nothing { .. } => break,
            Planned::Compact(plan) => plan,
        };
        if options.dry_run {
            return Ok(Outcome::WouldCompact {
                messages: plan.total,
                compact: plan.messages.len(),
                keep: plan.total - plan.messages.len(),
            });
        }
        if let Some(why) = ledger::maintenance_cap_reached(state, Utc::now())? {
            if calls == 0 {
                return Err(crate::error::failure(crate::error::Exit::OverBudget, why));
            }
            break;
        }
        let Some(claude) = claude()? else {
            if calls == 0 {
                return Ok(Outcome::Deferred);
            }
            break;
        };
        let now = Utc::now();
        let (answer, reply) = summarise(state, &claude, &plan)?;
        calls += 1;
        let answer = match answer {
            Some(answer) => answer,
            None => {
                not_json += 1;
                diag::warn(format!(
                    "{user}: the compaction reply was not the JSON asked for; its text became \
                     the summary and no profile was changed (check compacting.model and \
                     compacting.summaryPrompt)"
                ));
                Answer {
                    summary: reply.text.trim().to_owned(),
                    ..Answer::default()
                }
            }
        };
        if let Some(c) = reply.cost_usd {
            *cost.get_or_insert(0.0) += c;
        }
        if let Err(e) = ledger::record(state, "compact", user, &reply, now) {
            diag::warn(format!("could not record the cost of a compaction: {e:#}"));
        }

        {
            let _lock = state.lock_user(user)?;
            if !prefix_unchanged(state, user, &plan.prefix)? {
                return Ok(Outcome::Changed);
            }
            let summary = next_summary(&plan, &answer.summary, reply.cost_usd, user, now);
            let journal = Journal::new(
                state,
                user,
                &plan.prefix,
                &plan.lines,
                Some(summary.render()),
            )?;
            write_journal(state, user, &journal)?;
            kept = apply_journal_locked(state, user, &journal)?;
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

/// Merge facts into one person's profile under their lock. The compaction
/// is done and durable by now; a profile that cannot take the facts (a
/// broken hand edit) is warned about, not a failure.
fn merge_profile(state: &State, person: &UserId, facts: &ProfileFacts, now: DateTime<Utc>) {
    let result = (|| -> anyhow::Result<()> {
        let doc = {
            let _lock = state.lock_user(person)?;
            // A person erased while this compaction ran has no profile, no
            // STM and no group record left: do not bring them back.
            let layout = &state.layout;
            if !layout.profile_file(person).exists()
                && !layout.stm_dir(person).exists()
                && !layout.memberships_dir(person).exists()
            {
                return Ok(());
            }
            ltm::merge_facts_locked(state, person, facts, now)?
        };
        if let Some(doc) = doc {
            let entry = IndexEntry::for_user(person, &doc);
            ltm::update_index(state, &entry.path.clone(), Some(entry))?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        diag::warn(format!("{person}: profile facts not merged: {e:#}"));
    }
}

// --- planning ----------------------------------------------------------------

enum Planned {
    Nothing { messages: usize },
    Compact(Plan),
}

struct Plan {
    /// The exact bytes at the start of the log that will leave it.
    prefix: Vec<u8>,
    /// Non-blank lines of the prefix with the day whose archive takes them.
    lines: Vec<(NaiveDate, std::ops::Range<usize>)>,
    /// The valid messages among them, for the prompt.
    messages: Vec<Message>,
    /// Valid messages in the whole log.
    total: usize,
    previous: Option<Document>,
}

/// Decide what leaves the log. The caller holds the user lock.
fn plan_locked(state: &State, user: &UserId, force: bool) -> anyhow::Result<Planned> {
    let path = state.layout.messages_file(user);
    let Some(file) = open_read(&path)? else {
        return Ok(Planned::Nothing { messages: 0 });
    };
    // Start offsets (and ends, after the newline) of every valid line.
    let mut valid: Vec<(u64, u64)> = Vec::new();
    // Aligned reads, as a file open with O_DIRECT needs.
    let mut reader = BufReader::with_capacity(64 * 1024, AlignedReader::new(&file));
    let mut offset = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("could not read {}", path.display()))?;
        if n == 0 {
            break;
        }
        let complete = line.last() == Some(&b'\n');
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        // Unreadable lines are not counted; the warning comes when they are
        // archived (or read for context).
        if complete && Message::parse(body).is_ok() {
            valid.push((offset, offset + n as u64));
        }
        offset += n as u64;
    }
    let total = valid.len();
    let window = state.config.context_window();
    let limit = if force {
        window
    } else {
        state.config.threshold()
    };
    if total <= limit || total <= window {
        return Ok(Planned::Nothing { messages: total });
    }
    let leaving = total - window;
    // The prefix ends where the first kept message starts (or, with a
    // window of 0, after the last valid line), cut to a chunk.
    let window_start = if window == 0 {
        valid[total - 1].1
    } else {
        valid[leaving].0
    };
    let prefix_end = valid[1..leaving]
        .iter()
        .map(|&(start, _)| start)
        .find(|&start| start >= CHUNK_BYTES)
        .unwrap_or(window_start);

    let mut prefix = vec![0u8; prefix_end as usize];
    crate::store::shared::read_exact_at(&file, &mut prefix, 0)
        .with_context(|| format!("could not read {}", path.display()))?;
    let (lines, messages) = archive_days(&prefix, &path);
    Ok(Planned::Compact(Plan {
        prefix,
        lines,
        messages,
        total,
        previous: stm::summary(state, user)?,
    }))
}

/// Each non-blank line of `prefix` with the day whose archive takes it
/// (its message's UTC date; an unreadable line goes with its neighbours),
/// and the valid messages among them.
fn archive_days(
    prefix: &[u8],
    path: &std::path::Path,
) -> (Vec<(NaiveDate, std::ops::Range<usize>)>, Vec<Message>) {
    let mut lines = Vec::new();
    let mut messages = Vec::new();
    let mut unreadable = Vec::new();
    let mut start = 0;
    for raw in prefix.split_inclusive(|&b| b == b'\n') {
        let end = start + raw.len() - usize::from(raw.ends_with(b"\n"));
        let range = start..end;
        start += raw.len();
        let body = &prefix[range.clone()];
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match Message::parse(body) {
            Ok(message) => {
                let day = message.ts.date_naive();
                // Unreadable lines before this one go to its day.
                for index in unreadable.drain(..) {
                    lines.push((day, index));
                }
                lines.push((day, range));
                messages.push(message);
            }
            Err(why) => {
                diag::warn(format!(
                    "{} byte {}: an unreadable line ({why}) is moved to the archive as it is",
                    path.display(),
                    range.start
                ));
                unreadable.push(range);
            }
        }
    }
    let last_day = lines
        .last()
        .map_or_else(|| Utc::now().date_naive(), |(day, _)| *day);
    lines.extend(unreadable.into_iter().map(|range| (last_day, range)));
    (lines, messages)
}

/// Move the whole log into the archive and remove it (STM expiry). The
/// caller holds the user lock. Journalled like a compaction, so a kill
/// never archives a line twice. Returns the number of messages moved.
pub fn archive_whole_log_locked(state: &State, user: &UserId) -> anyhow::Result<usize> {
    recover_locked(state, user)?;
    let path = state.layout.messages_file(user);
    let Some(log) = read_optional(&path)? else {
        return Ok(0);
    };
    let (lines, messages) = archive_days(&log, &path);
    let journal = Journal::new(state, user, &log, &lines, None)?;
    write_journal(state, user, &journal)?;
    apply_journal_locked(state, user, &journal)?;
    remove_if_exists(&path)?;
    Ok(messages.len())
}

fn prefix_unchanged(state: &State, user: &UserId, prefix: &[u8]) -> anyhow::Result<bool> {
    let Some(file) = open_read(&state.layout.messages_file(user))? else {
        return Ok(false);
    };
    let mut now = vec![0u8; prefix.len()];
    Ok(crate::store::shared::read_exact_at(&file, &mut now, 0).is_ok() && now == prefix)
}

// --- the LLM call ------------------------------------------------------------

/// The structured answer of a compaction call.
#[derive(Debug, Default, Deserialize)]
struct Answer {
    summary: String,
    /// About the user of a one-to-one conversation.
    #[serde(default)]
    facts: Option<ProfileFacts>,
    /// About each sender of a group conversation, by user id.
    #[serde(default)]
    people: Option<std::collections::BTreeMap<String, ProfileFacts>>,
}

/// The senders named on the plan's user lines (a group conversation).
fn senders(plan: &Plan) -> std::collections::BTreeSet<String> {
    plan.messages
        .iter()
        .filter_map(|m| m.sender().map(str::to_owned))
        .collect()
}

/// Which profile gets which facts. In a group, only people who spoke in
/// the compacted messages, each with their own facts; one-to-one, the
/// conversation's user.
fn facts_by_user(key: &UserId, plan: &Plan, answer: Answer) -> Vec<(UserId, ProfileFacts)> {
    let senders = senders(plan);
    if senders.is_empty() {
        // A conversation has no profile: facts with no sender go nowhere.
        if key.is_conversation() {
            return Vec::new();
        }
        return answer.facts.map(|f| (key.clone(), f)).into_iter().collect();
    }
    answer
        .people
        .unwrap_or_default()
        .into_iter()
        .filter(|(id, _)| senders.contains(id))
        .filter_map(|(id, facts)| UserId::new(&id).ok().map(|user| (user, facts)))
        .collect()
}

/// The answer, or `None` when the reply was not the JSON asked for.
fn summarise(
    state: &State,
    claude: &Claude,
    plan: &Plan,
) -> anyhow::Result<(Option<Answer>, Reply)> {
    let auto_profile = state.config.ltm.auto_profile;
    let group = !senders(plan).is_empty();
    let mut system = state
        .config
        .compacting
        .summary_prompt
        .clone()
        .unwrap_or_else(|| prompts::SUMMARY_INSTRUCTIONS.to_owned());
    if auto_profile {
        let default = if group {
            prompts::PEOPLE_INSTRUCTIONS
        } else {
            prompts::PROFILE_INSTRUCTIONS
        };
        system.push_str("\n\n");
        system.push_str(
            state
                .config
                .ltm
                .profile_prompt
                .as_deref()
                .unwrap_or(default),
        );
    }
    system.push_str("\n\n");
    system.push_str(match (auto_profile, group) {
        (false, _) => prompts::ANSWER_SUMMARY_ONLY,
        (true, false) => prompts::ANSWER_WITH_FACTS,
        (true, true) => prompts::ANSWER_WITH_PEOPLE,
    });

    let previous = plan
        .previous
        .as_ref()
        .map(|doc| doc.body.trim())
        .filter(|body| !body.is_empty())
        .unwrap_or("(none yet)");
    let mut prompt = format!("Summary so far:\n{previous}\n\nOlder messages to fold in:\n");
    for message in &plan.messages {
        prompt.push_str(&format_message(message));
        prompt.push('\n');
    }
    let schema = answer_schema(auto_profile, group).to_string();
    let sandbox = claude.sandbox()?;
    let reply = claude.call_in(
        &sandbox,
        Request {
            system_prompt: Some((SystemPromptMode::Replace, system)),
            prompt: &prompt,
            json_schema: Some(&schema),
        },
    )?;
    let answer = match &reply.structured {
        Some(value) => serde_json::from_value::<Answer>(value.clone())
            .ok()
            .filter(|a| !a.summary.trim().is_empty()),
        None => parse_answer(&reply.text),
    };
    Ok((answer, reply))
}

/// The JSON Schema of the answer, for claude's structured output: a model
/// that must answer through it cannot wrap the JSON in prose.
fn answer_schema(auto_profile: bool, group: bool) -> Value {
    let facts = json!({
        "type": "object",
        "properties": {
            "name": {"type": ["string", "null"]},
            "language": {"type": ["string", "null"]},
            "timezone": {"type": ["string", "null"]},
            "preferences": {"type": "array", "items": {"type": "string"}},
            "topics": {"type": "array", "items": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}}
        }
    });
    let mut properties = json!({"summary": {"type": "string"}});
    match (auto_profile, group) {
        (false, _) => {}
        (true, false) => properties["facts"] = facts,
        (true, true) => {
            properties["people"] = json!({"type": "object", "additionalProperties": facts});
        }
    }
    json!({"type": "object", "properties": properties, "required": ["summary"]})
}

/// The JSON object in a text reply (fenced or not), from a claude that
/// gave no structured output.
fn parse_answer(text: &str) -> Option<Answer> {
    let json = match (text.find('{'), text.rfind('}')) {
        (Some(start), Some(end)) if start < end => &text[start..=end],
        _ => "",
    };
    serde_json::from_str::<Answer>(json)
        .ok()
        .filter(|answer| !answer.summary.trim().is_empty())
}

fn next_summary(
    plan: &Plan,
    body: &str,
    cost: Option<f64>,
    user: &UserId,
    now: DateTime<Utc>,
) -> Document {
    let mut doc = plan.previous.clone().unwrap_or_default();
    let before = doc.get_u64("messages_compacted").unwrap_or(0);
    let total_cost = doc
        .front
        .get("total_cost_usd")
        .and_then(serde_yaml::Value::as_f64)
        .unwrap_or(0.0);
    doc.set("user_id", user.as_str());
    doc.set("last_compacted", format_ts(&now));
    doc.set("messages_compacted", before + plan.messages.len() as u64);
    if let Some(cost) = cost {
        doc.set("last_cost_usd", cost);
        doc.set("total_cost_usd", total_cost + cost);
    }
    doc.body = body.trim().to_owned();
    doc
}

// --- the journal -------------------------------------------------------------

/// Everything step 3 will write, so a replay needs no LLM and no guess.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Journal {
    prefix_len: usize,
    prefix_crc: u32,
    /// The whole new `summary.md` (none for expiry).
    summary: Option<String>,
    archives: Vec<ArchiveStep>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveStep {
    day: NaiveDate,
    /// The archive's size before this compaction: bigger means done.
    size_before: u64,
    /// Byte ranges of the lines, within the prefix.
    lines: Vec<(usize, usize)>,
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

impl Journal {
    fn new(
        state: &State,
        user: &UserId,
        prefix: &[u8],
        lines: &[(NaiveDate, std::ops::Range<usize>)],
        summary: Option<String>,
    ) -> anyhow::Result<Self> {
        let mut archives: Vec<ArchiveStep> = Vec::new();
        for (day, range) in lines {
            let step = match archives.iter_mut().find(|s| s.day == *day) {
                Some(step) => step,
                None => {
                    let path = state.layout.archive_file(user, *day);
                    // The real size (not a shared file system's cached
                    // one): a replay compares against it.
                    let size_before = crate::store::fs::len_of(&path)?.unwrap_or(0);
                    archives.push(ArchiveStep {
                        day: *day,
                        size_before,
                        lines: Vec::new(),
                    });
                    archives.last_mut().expect("just pushed")
                }
            };
            step.lines.push((range.start, range.end));
        }
        Ok(Self {
            prefix_len: prefix.len(),
            prefix_crc: crc32(prefix),
            summary,
            archives,
        })
    }
}

fn write_journal(state: &State, user: &UserId, journal: &Journal) -> anyhow::Result<()> {
    let bytes = serde_json::to_vec(journal)?;
    write_atomic(
        &state.layout.compaction_journal_file(user),
        &bytes,
        state.fsync(),
    )
}

/// Finish a compaction a killed process left half done. The caller holds
/// the user lock. Whatever rewrites the log or writes the archive calls
/// this first (compaction, expiry, clear, export, daily summaries); a plain
/// append needs not: the journal's prefix check covers lines added after.
pub fn recover_locked(state: &State, user: &UserId) -> anyhow::Result<()> {
    let path = state.layout.compaction_journal_file(user);
    let Some(bytes) = read_optional(&path)? else {
        return Ok(());
    };
    match serde_json::from_slice::<Journal>(&bytes) {
        Ok(journal) => {
            diag::info(format!("finishing an interrupted compaction of {user}"));
            apply_journal_locked(state, user, &journal).map(|_| ())
        }
        Err(e) => {
            // Written atomically, so never torn: this is a hand edit or
            // another tool's file. Dropping it risks a duplicate, not a loss.
            diag::warn(format!(
                "{}: unreadable compaction journal ({e}); removed",
                path.display()
            ));
            remove_if_exists(&path).map(|_| ())
        }
    }
}

/// Carry out a journal; each step is skipped when already done. The log
/// must still start with the journal's prefix, else the last step was
/// done and only the journal is left to remove. Returns the number of
/// messages left in the log.
fn apply_journal_locked(state: &State, user: &UserId, journal: &Journal) -> anyhow::Result<usize> {
    let messages_path = state.layout.messages_file(user);
    let log = read_optional(&messages_path)?.unwrap_or_default();
    let prefix = log.get(..journal.prefix_len);
    if let Some(prefix) = prefix.filter(|p| crc32(p) == journal.prefix_crc) {
        for step in &journal.archives {
            let archive_path = state.layout.archive_file(user, step.day);
            let size = crate::store::fs::len_of(&archive_path)?.unwrap_or(0);
            if size > step.size_before {
                continue; // written before the kill
            }
            let lines: Vec<&[u8]> = step
                .lines
                .iter()
                .map(|&(start, end)| &prefix[start..end])
                .collect();
            archive::append_member(&archive_path, &lines, state.fsync())?;
        }
        if let Some(summary) = &journal.summary {
            write_atomic(
                &state.layout.summary_file(user),
                summary.as_bytes(),
                state.fsync(),
            )?;
        }
        write_atomic(&messages_path, &log[journal.prefix_len..], state.fsync())?;
    }
    remove_if_exists(&state.layout.compaction_journal_file(user))?;
    let rest = log.get(journal.prefix_len..).unwrap_or(&log);
    Ok(rest
        .split(|&b| b == b'\n')
        .filter(|line| Message::parse(line).is_ok())
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_fenced_or_plain() {
        let a =
            parse_answer("```json\n{\"summary\": \"S\", \"facts\": {\"name\": \"Kevin\"}}\n```");
        let a = a.unwrap();
        assert_eq!(a.summary, "S");
        assert_eq!(a.facts.unwrap().name.as_deref(), Some("Kevin"));
        assert!(parse_answer("They talked about tea.").is_none());
        assert!(parse_answer("{\"summary\": \"  \"}").is_none());
    }
}

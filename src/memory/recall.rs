//! Recall: what `claude-session mcp` lets the model look up — one person's
//! memory (or one conversation's), read-only, rendered as plain text with
//! no file paths, every answer capped so a tool result never floods the
//! context window.
//!
//! The scope is settled once, when the server starts ([`Scope::resolve`]):
//! whose memory may be searched is asked of [`owners::visible_to`], the one
//! rule of who sees what; everything here only reads inside that scope.
//! Searching ranks as `ask`'s recall does ([`retrieval::search()`]), and
//! falls back to `session search`'s phrase match ([`search::search`]).

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::error::usage;
use crate::layout::{MemoryKey, UserId};
use crate::memory::message::{Message, Role};
use crate::memory::owners::{self, Owner};
use crate::memory::retrieval;
use crate::memory::search::{self, Hit, Kind, Query};
use crate::memory::stm;
use crate::memory::transcript::format_message;
use crate::state::State;
use crate::store::archive;

/// Hits a search returns unless the model asks for fewer.
pub const DEFAULT_LIMIT: usize = 20;
/// Hits a search returns at most, whatever the model asks.
pub const MAX_LIMIT: usize = 50;
/// Characters of one hit's line.
const MAX_HIT_CHARS: usize = 400;
/// Characters of a whole tool result (about 2,000 tokens).
pub const MAX_RESULT_CHARS: usize = 8_000;
/// Characters of a search query.
const MAX_QUERY_CHARS: usize = 200;

/// Whose memory one server may read.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The person asking: `profile()` is theirs.
    pub person: UserId,
    /// The memory searched and read: the person's own, or one
    /// conversation's.
    pub owner: Owner,
}

impl Scope {
    /// The person's own memory, or with `conversation` that conversation's
    /// — only if the person may see it. Refusals are usage errors: they
    /// happen before the server answers anything.
    pub fn resolve(
        state: &State,
        person: &UserId,
        conversation: Option<&MemoryKey>,
    ) -> anyhow::Result<Self> {
        // Only a conversation can be refused: a person always sees their
        // own memory (a `UserId` is never a conversation's key).
        let owner = owners::visible_to(state, person, conversation)?.ok_or_else(|| {
            let named = conversation.map_or_else(String::new, |key| {
                key.conversation_key()
                    .map_or_else(|| key.to_string(), |k| k.as_str().to_owned())
            });
            usage(format!(
                "{person} is not a member of conversation {named} (never wrote in it, \
                 or there is no such conversation), so its memory is not theirs to search"
            ))
        })?;
        Ok(Self {
            person: person.clone(),
            owner,
        })
    }
}

/// What the server for `person` (in `key`'s memory) reads, as absolute
/// paths: the config, that one memory's log, summaries, archives and
/// recall index (ranked search reads the indexed days from it), and the
/// person's profile. A confined claude may read these and no other file
/// of the state dir.
pub fn readable_paths(state: &State, person: &UserId, key: &MemoryKey) -> Vec<std::path::PathBuf> {
    let layout = &state.layout;
    [
        layout.config_file(),
        layout.stm_dir(key),
        layout.summaries_dir(key),
        layout.archive_dir(key),
        layout.recall_index_dir(key),
        layout.profile_file(person),
    ]
    .into_iter()
    .filter_map(|path| std::path::absolute(path).ok())
    .collect()
}

/// `search_memory`: the hits ranked by relevance, best first, each `[date
/// time] who: text` on one line. Models ask in whole sentences ("what did
/// I say about my sister's dog"), so the query's words are ranked as
/// `ask`'s recall ranks them ([`retrieval::search()`]), over the same
/// memory (the scope's owner: messages, archives, daily, weekly and
/// retired rolling summaries). The recent window is not left out: this is a search, and
/// a hit already in the context only confirms it. A query with nothing to
/// rank (punctuation, a part of a word) or no ranked hit is looked for as
/// a phrase, then as any of its words, newest first, as before.
pub fn search_memory(
    state: &State,
    scope: &Scope,
    query: &str,
    since: Option<&str>,
    until: Option<&str>,
    limit: Option<u64>,
) -> anyhow::Result<String> {
    let query = query.trim();
    if query.is_empty() {
        return Err(usage("query is empty; give a word or phrase to look for"));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(usage(format!(
            "query is longer than {MAX_QUERY_CHARS} characters; give a few words"
        )));
    }
    let limit = match limit {
        Some(0) => return Err(usage("limit must be at least 1")),
        Some(n) => (n as usize).min(MAX_LIMIT),
        None => DEFAULT_LIMIT,
    };
    let since = since.map(|d| parse_day("since", d, false)).transpose()?;
    let until = until.map(|d| parse_day("until", d, true)).transpose()?;
    let options = retrieval::Options {
        // Any hit with a word of the query: the model asked, the limit
        // bounds the answer.
        min_score: 0.0,
        ..retrieval::Options::from_config(&state.config.recall)
    };
    let in_range = |unit: &retrieval::Unit| {
        let ts = unit.item.ts();
        since.is_none_or(|s| ts >= s) && until.is_none_or(|u| ts < u)
    };
    let ranked = retrieval::search(
        state,
        std::slice::from_ref(&scope.owner),
        query,
        Some(limit),
        &options,
        // Without dates every hit is kept: only those listed are read.
        (since.is_some() || until.is_some())
            .then_some(&|_: &Owner, unit: &retrieval::Unit| in_range(unit)),
    )?;
    if !ranked.hits.is_empty() {
        let mut lines = vec!["Most relevant first:".to_owned()];
        lines.extend(ranked.hits.iter().map(|hit| render_unit(scope, &hit.unit)));
        let mut text = cap_lines(&lines, MAX_RESULT_CHARS);
        if ranked.more > 0 {
            text.push_str(&format!(
                "\n({} less relevant match(es) not shown; use other words, or narrow with since/until)",
                ranked.more
            ));
        }
        return Ok(text);
    }
    phrase_search(state, scope, query, since, until, limit)
}

/// What [`search_memory`] answers when nothing ranks: the phrase as typed,
/// else any of its words (of 3 letters or more), newest first.
fn phrase_search(
    state: &State,
    scope: &Scope,
    query: &str,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    limit: usize,
) -> anyhow::Result<String> {
    let mut search = Query {
        pattern: query.to_owned(),
        since,
        until,
        kinds: [Kind::Message, Kind::Summary, Kind::Profile].into(),
        limit: Some(limit),
        within: Some(vec![scope.owner.clone()]),
        ..Query::default()
    };
    let mut outcome = search::search(state, &search)?;
    // A phrase not found as typed: any of its words (of 3 letters or more).
    let words: Vec<String> = query
        .split_whitespace()
        .filter(|w| w.chars().count() >= 3)
        .map(regex::escape)
        .collect();
    if outcome.hits.is_empty() && words.len() > 1 {
        search.pattern = format!("(?:{})", words.join("|"));
        search.regex = true;
        outcome = search::search(state, &search)?;
    }
    if outcome.hits.is_empty() {
        return Ok(format!("No match for {query:?} in this memory."));
    }
    let lines: Vec<String> = outcome.hits.iter().map(render_hit).collect();
    let mut text = cap_lines(&lines, MAX_RESULT_CHARS);
    if outcome.more > 0 {
        text.push_str(&format!(
            "\n({} older match(es) not shown; narrow with since/until)",
            outcome.more
        ));
    }
    Ok(text)
}

/// A ranked hit on one line, as [`render_hit`] writes a phrase hit: a
/// message's line breaks become ` / `, so no stored text starts a line of
/// its own in the result.
fn render_unit(scope: &Scope, unit: &retrieval::Unit) -> String {
    match &unit.item {
        retrieval::Item::Message(m) => {
            let who = match (m.role, m.sender(), m.user_name.as_deref()) {
                (Role::User, Some(id), Some(name)) => {
                    format!("{} ({})", one_line(name), one_line(id))
                }
                (Role::User, Some(id), None) => format!("User ({})", one_line(id)),
                (Role::User, None, _) if scope.owner.kind == owners::OwnerKind::Person => {
                    format!("User ({})", scope.owner.key)
                }
                (role, _, _) => role.label().to_owned(),
            };
            format!(
                "[{}] {who}: {}",
                m.ts.format("%Y-%m-%d %H:%M"),
                cut(&one_line(&m.text), MAX_HIT_CHARS)
            )
        }
        retrieval::Item::Note { ts, label, text } => format!(
            "[{}] {label}: {}",
            ts.format("%Y-%m-%d"),
            cut(&one_line(text), MAX_HIT_CHARS)
        ),
    }
}

/// Text on one line: its line breaks (of any kind) become ` / `.
fn one_line(text: &str) -> String {
    text.split([
        '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
    ])
    .map(str::trim)
    .filter(|part| !part.is_empty())
    .collect::<Vec<_>>()
    .join(" / ")
}

/// `read_day`: that day's messages (log and archive) and its daily
/// summary, in time order.
pub fn read_day(state: &State, scope: &Scope, date: &str) -> anyhow::Result<String> {
    let day = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d")
        .map_err(|_| usage(format!("date {date:?} is not YYYY-MM-DD")))?;
    let owner = &scope.owner;
    // The log first, then the archive: a compaction in between moves lines
    // from the one to the other, so they are read twice (and deduplicated),
    // never missed.
    let mut messages: Vec<Message> = stm::all_messages_in(&owner.messages_file(state))?
        .into_iter()
        .filter(|m| m.ts.date_naive() == day)
        .collect();
    let path = state.layout.archive_file(&owner.key, day);
    let read = archive::read_lines(&path)?;
    for damage in &read.damage {
        crate::diag::warn(format!("{damage}; read what could be read"));
    }
    messages.extend(
        read.lines
            .iter()
            .filter_map(|line| Message::parse(line).ok())
            .filter(|m| m.ts.date_naive() == day),
    );
    messages.sort_by_key(|m| m.ts);
    messages.dedup_by(|a, b| a.ts == b.ts && a.role == b.role && a.text == b.text);
    let summary_path = state.layout.daily_file(&owner.key, day);
    let summary = stm::read_text_or_warn(&summary_path)?
        .map(|text| stm::parse_document_or_warn(&text, &summary_path).body)
        .filter(|body| !body.trim().is_empty());
    if messages.is_empty() && summary.is_none() {
        return Ok(format!("Nothing was said on {day}."));
    }
    let mut parts = Vec::new();
    if let Some(summary) = summary {
        parts.push(format!("[Summary of {day}]\n{}", summary.trim()));
    }
    if !messages.is_empty() {
        parts.push(format!("[Messages of {day}]"));
        parts.extend(messages.iter().map(format_message));
    }
    Ok(cap_lines(&parts, MAX_RESULT_CHARS))
}

/// `profile`: the person's profile, as the context shows it.
pub fn profile(state: &State, scope: &Scope) -> anyhow::Result<String> {
    let path = state.layout.profile_file(&scope.person);
    let body = stm::read_text_or_warn(&path)?
        .map(|text| stm::parse_document_or_warn(&text, &path).body)
        .filter(|body| !body.trim().is_empty());
    Ok(match body {
        Some(body) => cut(body.trim(), MAX_RESULT_CHARS),
        None => "No profile yet.".to_owned(),
    })
}

/// One hit on one line: when, who or what, and the line.
fn render_hit(hit: &Hit) -> String {
    let line = cut(&hit.text, MAX_HIT_CHARS);
    match hit.kind {
        Kind::Message => {
            let when = hit
                .ts
                .map(|ts| ts.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_else(|| "undated".into());
            let who = match (hit.role, &hit.speaker, &hit.speaker_name) {
                (Some(Role::User), Some(id), Some(name)) => format!("{name} ({id})"),
                (Some(Role::User), Some(id), None) => format!("User ({id})"),
                (Some(role), _, _) => role.label().to_owned(),
                (None, _, _) => "Unknown".to_owned(),
            };
            format!("[{when}] {who}: {line}")
        }
        Kind::Summary => {
            let when = hit
                .ts
                .map(|ts| ts.format("%Y-%m-%d").to_string())
                .unwrap_or_else(|| "undated".into());
            format!("[{when}] {} summary: {line}", hit.source)
        }
        Kind::Profile => format!("[profile] {line}"),
        Kind::Topic => format!("[topic] {line}"),
    }
}

/// `YYYY-MM-DD` (an end date includes its day) or an RFC 3339 time.
fn parse_day(name: &str, text: &str, end: bool) -> anyhow::Result<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let day = if end { day + Duration::days(1) } else { day };
        return Ok(day.and_hms_opt(0, 0, 0).expect("midnight").and_utc());
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| usage(format!("{name} {text:?} is not YYYY-MM-DD")))
}

/// Lines joined until `max` characters; then a note of how many were left.
fn cap_lines(lines: &[String], max: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let needed = line.chars().count() + 1;
        if out.chars().count() + needed > max {
            if out.is_empty() {
                return cut(line, max);
            }
            out.push_str(&format!(
                "\n({} more line(s) not shown: the result is capped)",
                lines.len() - i
            ));
            return out;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

/// At most `max` characters, the last one an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_capped_and_say_so() {
        let lines: Vec<String> = (0..100)
            .map(|i| format!("line {i} {}", "x".repeat(90)))
            .collect();
        let text = cap_lines(&lines, 1_000);
        assert!(text.chars().count() <= 1_000 + 60, "{}", text.len());
        assert!(text.ends_with("not shown: the result is capped)"), "{text}");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        assert_eq!(cap_lines(&["y".repeat(50)], 10).chars().count(), 10);
    }

    #[test]
    fn days_are_dates_and_an_end_day_is_included() {
        let until = parse_day("until", "2026-03-14", true).unwrap();
        assert_eq!(until.to_rfc3339(), "2026-03-15T00:00:00+00:00");
        assert!(parse_day("since", "March", false).is_err());
    }
}

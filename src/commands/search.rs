//! `session search`: the flags turned into a query, the hits printed —
//! two lines each for people (where and when; who and the line, the match
//! highlighted on a TTY), or JSON Lines for scripts.
//!
//! One QUERY argument is a phrase ([`search::search`], newest first);
//! several unquoted words, or `--ranked`, are ranked by relevance as
//! `ask`'s recall ranks ([`retrieval::search()`], best first, with scores):
//! an operator typing `session search --user U pottery class` is after
//! what U said about a pottery class, in whatever words, as a web search
//! would find it; a quoted phrase, `--phrase` and `--regex` stay exact.

use std::io::Write as _;

use crate::cli::{DayOrTime, SearchArgs, SearchKind};
use crate::commands::Output;
use crate::commands::style::{Style, escape_for_terminal};
use crate::error::usage;
use crate::memory::message::Role;
use crate::memory::owners::{self, Owner, OwnerKind};
use crate::memory::retrieval::{self, Item, Unit};
use crate::memory::search::{self, Hit, Kind, Query};
use crate::state::State;

pub fn run(state: &State, args: &SearchArgs, output: Output) -> anyhow::Result<()> {
    let query = query(args)?;
    if ranked(args) {
        return run_ranked(state, &query, output);
    }
    let outcome = search::search(state, &query)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if output.json {
        for hit in &outcome.hits {
            serde_json::to_writer(&mut out, hit)?;
            out.write_all(b"\n")?;
        }
    } else {
        let style = Style::detect();
        for hit in &outcome.hits {
            out.write_all(render(hit, style).as_bytes())?;
        }
    }
    out.flush()?;
    if outcome.hits.is_empty() {
        crate::diag::warn(format!(
            "nothing matches {:?} in {} file(s)",
            query.pattern, outcome.files
        ));
    } else if outcome.more > 0 {
        crate::diag::warn(format!(
            "{} more older hit(s) not shown; raise --limit (0 shows all)",
            outcome.more
        ));
    }
    Ok(())
}

/// Several QUERY arguments rank, unless `--phrase` or `--regex`; one
/// ranks with `--ranked`.
fn ranked(args: &SearchArgs) -> bool {
    args.ranked || (args.query.len() > 1 && !args.phrase && !args.regex)
}

fn query(args: &SearchArgs) -> anyhow::Result<Query> {
    let words: Vec<&str> = args
        .query
        .iter()
        .map(|w| w.trim())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return Err(usage("the search query is empty; give a word or a phrase"));
    }
    if args.regex && args.query.len() > 1 {
        return Err(usage(
            "--regex takes one pattern, but QUERY is several arguments; quote the pattern \
             ('a b|c')",
        ));
    }
    let since = args.since.map(DayOrTime::start);
    let until = args.until.map(DayOrTime::end);
    if let (Some(since), Some(until)) = (since, until)
        && since >= until
    {
        return Err(usage(
            "--since is not before --until, so nothing could match; swap or widen them",
        ));
    }
    let kinds = args
        .kind
        .iter()
        .map(|k| match k {
            SearchKind::Messages => Kind::Message,
            SearchKind::Summaries => Kind::Summary,
            SearchKind::Profiles => Kind::Profile,
            SearchKind::Topics => Kind::Topic,
        })
        .collect();
    Ok(Query {
        pattern: words.join(" "),
        regex: args.regex,
        user: args.user.clone(),
        conversation: args
            .conversation
            .as_ref()
            .map(crate::layout::MemoryKey::conversation),
        role: args.role,
        since,
        until,
        kinds,
        tags: args.tag.clone(),
        limit: (args.limit > 0).then_some(args.limit),
        within: None,
    })
}

/// Two lines: when, whose, which file and line; then who spoke and the
/// matching line. Everything a chat user wrote is escaped for the terminal.
fn render(hit: &Hit, style: Style) -> String {
    let when = hit
        .ts
        .map_or("-".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
    let whose = match (&hit.owner_kind, &hit.owner) {
        (Some(kind), Some(owner)) => format!("{} {owner}", serde_plain(kind)),
        _ => "topic".to_owned(),
    };
    let what = match hit.kind {
        Kind::Message if hit.source == search::Source::Archive => "archived message".to_owned(),
        Kind::Message => "message".to_owned(),
        Kind::Summary => format!("{} summary", hit.source),
        Kind::Profile => "profile".to_owned(),
        Kind::Topic => "topic note".to_owned(),
    };
    let who = match (&hit.speaker, &hit.speaker_name, hit.role) {
        (Some(id), Some(name), _) => format!("{} ({id})", escape_for_terminal(name)),
        (Some(id), None, _) => id.clone(),
        (None, _, Some(role)) => role.label().to_lowercase(),
        (None, _, None) => String::new(),
    };
    let mut line = String::new();
    let mut at = 0;
    for &(start, end) in &hit.matches {
        line.push_str(&escape_for_terminal(&hit.text[at..start]));
        line.push_str(&style.highlight(&escape_for_terminal(&hit.text[start..end])));
        at = end;
    }
    line.push_str(&escape_for_terminal(&hit.text[at..]));
    let speaker = if who.is_empty() {
        String::new()
    } else {
        format!("{}: ", style.role(&who))
    };
    format!(
        "{}  {}  {}  {}\n    {speaker}{line}\n",
        style.dim(&when),
        style.bold(&whose),
        what,
        // File names come from folder listings, not from us: escaped too.
        style.dim(&escape_for_terminal(&format!("{}:{}", hit.file, hit.line))),
    )
}

fn serde_plain(kind: &crate::memory::owners::OwnerKind) -> &'static str {
    match kind {
        crate::memory::owners::OwnerKind::Person => "person",
        crate::memory::owners::OwnerKind::Conversation => "conversation",
    }
}

// --- ranked -----------------------------------------------------------------

/// One ranked hit as `--json` prints it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RankedJson<'a> {
    /// 1 for the best.
    rank: usize,
    score: f64,
    /// `message`, or `summary` for a line of a daily or weekly summary.
    kind: &'static str,
    owner: String,
    owner_kind: OwnerKind,
    /// `log`, `archive YYYY-MM-DD`, `daily YYYY-MM-DD`, `weekly YYYY-Www`,
    /// `rolling YYYY-MM-DD`.
    source: &'a retrieval::Source,
    /// As a phrase hit's.
    ts: chrono::DateTime<chrono::Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<Role>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speaker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speaker_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    msg_id: Option<&'a str>,
    /// The whole text (a message's every line).
    text: &'a str,
}

/// `session search` with several words: every owner the filters allow
/// (`--user`: the person's own memory and their lines in groups, as a
/// phrase search), ranked together (a word's weight is over all of
/// them), best first.
fn run_ranked(state: &State, query: &Query, output: Output) -> anyhow::Result<()> {
    let messages = query.kinds.is_empty() || query.kinds.contains(&Kind::Message);
    let summaries = query.kinds.is_empty() || query.kinds.contains(&Kind::Summary);
    let beyond = query
        .kinds
        .iter()
        .any(|k| matches!(k, Kind::Profile | Kind::Topic));
    if beyond || !query.tags.is_empty() {
        return Err(usage(
            "ranked search covers messages and summaries, not profiles, \
             topic notes or tags; search one quoted phrase, or use --phrase or --regex, for those",
        ));
    }
    let all = owners::owners(state)?;
    crate::memory::search::known_conversation(&all, query.conversation.as_ref())?;
    let options = retrieval::Options {
        // Every line with a word of the query is a hit; the limit cuts.
        min_score: 0.0,
        // Everything stored: the operator asked for it.
        ..retrieval::Options::from_config(&state.config.recall)
    };
    let scoped = scoped_owners(all, query);
    let keep = |owner: &Owner, unit: &Unit| {
        let ts = unit.item.ts();
        let about = query
            .user
            .as_ref()
            .filter(|user| crate::layout::MemoryKey::person(user) != owner.key);
        let in_time = query.since.is_none_or(|s| ts >= s) && query.until.is_none_or(|u| ts < u);
        in_time
            && match &unit.item {
                Item::Message(m) => {
                    messages
                        && query.role.is_none_or(|r| r == m.role)
                        && about.is_none_or(|user| m.is_about(user.as_str()))
                }
                Item::Note { .. } => summaries && query.role.is_none() && about.is_none(),
            }
    };
    // Nothing narrowed: every hit is kept, and only those listed are read.
    let narrowed = query.since.is_some()
        || query.until.is_some()
        || !messages
        || !summaries
        || query.role.is_some()
        || (query.user.as_ref()).is_some_and(|user| {
            scoped
                .iter()
                .any(|o| o.key != crate::layout::MemoryKey::person(user))
        });
    let keep: Option<retrieval::search::Keep> = narrowed.then_some(&keep);
    let found = retrieval::search(state, &scoped, &query.pattern, query.limit, &options, keep)?;
    if found.terms.is_empty() {
        return Err(usage(format!(
            "{:?} has no word to rank by (only common words such as \"the\" or \
             \"thanks\"); search it as a phrase: quote it, or add --phrase",
            query.pattern
        )));
    }
    let (hits, more, terms) = (found.hits, found.more, found.terms);

    print_ranked(&hits, &terms, output)?;
    if hits.is_empty() {
        crate::diag::warn(format!(
            "no message or summary has any of the words of {:?}",
            query.pattern
        ));
    } else if more > 0 {
        crate::diag::warn(format!(
            "{more} less relevant hit(s) not shown; raise --limit (0 shows all)"
        ));
    }
    Ok(())
}

/// The owners a ranked search reads: `--conversation`'s, or with `--user`
/// the person's own memory and the groups (their lines in them).
fn scoped_owners(all: Vec<Owner>, query: &Query) -> Vec<Owner> {
    all.into_iter()
        .filter(|owner| query.conversation.as_ref().is_none_or(|k| k == &owner.key))
        .filter(|owner| {
            query.user.as_ref().is_none_or(|user| {
                crate::layout::MemoryKey::person(user) == owner.key
                    || owner.kind == OwnerKind::Conversation
            })
        })
        .collect()
}

/// The ranked hits on stdout, best first: JSON lines, or for a terminal.
fn print_ranked(hits: &[retrieval::Hit], terms: &[String], output: Output) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if output.json {
        for (i, hit) in hits.iter().enumerate() {
            serde_json::to_writer(&mut out, &ranked_json(i + 1, hit))?;
            out.write_all(b"\n")?;
        }
    } else {
        let style = Style::detect();
        let tokenizer = retrieval::tokenize::Tokenizer::new();
        for (i, hit) in hits.iter().enumerate() {
            out.write_all(render_ranked(i + 1, hit, &tokenizer, terms, style).as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Who spoke: a group's sender, or the person whose memory it is.
fn ranked_speaker(owner: &Owner, unit: &Unit) -> Option<String> {
    match &unit.item {
        Item::Message(m) if m.role == Role::User => m
            .sender()
            .map(str::to_owned)
            .or_else(|| (owner.kind == OwnerKind::Person).then(|| owner.key.to_string())),
        _ => None,
    }
}

fn ranked_json(rank: usize, hit: &retrieval::Hit) -> RankedJson<'_> {
    let owner = &hit.owner;
    let ts = hit.unit.item.ts();
    let (kind, role, speaker_name, msg_id) = match &hit.unit.item {
        Item::Message(m) => (
            "message",
            Some(m.role),
            m.user_name.as_deref(),
            m.msg_id.as_deref(),
        ),
        Item::Note { .. } => ("summary", None, None, None),
    };
    RankedJson {
        rank,
        score: (hit.score * 1000.0).round() / 1000.0,
        kind,
        owner: owner.name(),
        owner_kind: owner.kind,
        source: &hit.unit.source,
        ts,
        role,
        speaker: ranked_speaker(owner, &hit.unit),
        speaker_name,
        msg_id,
        text: hit.unit.item.text(),
    }
}

/// Two lines, as a phrase hit: rank, score, when, whose, what and where;
/// then who spoke and the line with the most of the query's words, those
/// words highlighted on a TTY. Everything stored is escaped.
fn render_ranked(
    rank: usize,
    hit: &retrieval::Hit,
    tokenizer: &retrieval::tokenize::Tokenizer,
    terms: &[String],
    style: Style,
) -> String {
    let owner = &hit.owner;
    let when = hit.unit.item.ts().format("%Y-%m-%d %H:%M").to_string();
    let whose = format!("{} {}", serde_plain(&owner.kind), owner.name());
    let (what, who) = match &hit.unit.item {
        Item::Message(m) => {
            let what = if matches!(hit.unit.source, retrieval::Source::Archive(_)) {
                "archived message"
            } else {
                "message"
            };
            let who = match (ranked_speaker(owner, &hit.unit), m.user_name.as_deref()) {
                (Some(id), Some(name)) => format!(
                    "{} ({})",
                    escape_for_terminal(name),
                    escape_for_terminal(&id)
                ),
                (Some(id), None) => escape_for_terminal(&id),
                (None, _) => m.role.label().to_lowercase(),
            };
            (what.to_owned(), who)
        }
        Item::Note { label, .. } => (label.to_lowercase(), String::new()),
    };
    let text = hit.unit.item.text();
    let (line, matches) = text
        .lines()
        .map(|l| (l, term_matches(tokenizer, terms, l)))
        .max_by_key(|(_, m)| m.len())
        .unwrap_or((text, Vec::new()));
    let mut shown = String::new();
    let mut at = 0;
    for (start, end) in matches {
        shown.push_str(&escape_for_terminal(&line[at..start]));
        shown.push_str(&style.highlight(&escape_for_terminal(&line[start..end])));
        at = end;
    }
    shown.push_str(&escape_for_terminal(&line[at..]));
    let lines = text.lines().count();
    if lines > 1 {
        shown.push_str(&style.dim(&format!("  (+{} line(s))", lines - 1)));
    }
    let speaker = if who.is_empty() {
        String::new()
    } else {
        format!("{}: ", style.role(&who))
    };
    format!(
        "{}  {}  {}  {}  {}  {}\n    {speaker}{shown}\n",
        style.bold(&format!("#{rank}")),
        style.dim(&format!("score {:.2}", hit.score)),
        style.dim(&when),
        style.bold(&whose),
        what,
        style.dim(&escape_for_terminal(&hit.unit.source.to_string())),
    )
}

/// Byte ranges of the words of `line` that give one of `terms` (the
/// query's, as the tokenizer makes them): whole words, and a Chinese,
/// Japanese or Korean character that is a term or in a pair that is.
fn term_matches(
    tokenizer: &retrieval::tokenize::Tokenizer,
    terms: &[String],
    line: &str,
) -> Vec<(usize, usize)> {
    let is_term = |text: &str| tokenizer.terms(text).iter().any(|t| terms.contains(t));
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let end_of = |i: usize| chars.get(i + 1).map_or(line.len(), |(at, _)| *at);
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        if retrieval::tokenize::is_cjk(c) {
            let pair = |a: usize| -> bool {
                a + 1 < chars.len()
                    && retrieval::tokenize::is_cjk(chars[a + 1].1)
                    && terms.contains(&line[chars[a].0..end_of(a + 1)].to_lowercase())
            };
            if terms.contains(&c.to_string()) || pair(i) || (i > 0 && pair(i - 1)) {
                out.push((start, end_of(i)));
            }
            i += 1;
        } else if c.is_alphanumeric() {
            let mut j = i;
            while j + 1 < chars.len()
                && (chars[j + 1].1.is_alphanumeric() || chars[j + 1].1 == '\'')
                && !retrieval::tokenize::is_cjk(chars[j + 1].1)
            {
                j += 1;
            }
            let end = end_of(j);
            if is_term(&line[start..end]) {
                out.push((start, end));
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    // Neighbouring matches (CJK characters) as one range.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in out {
        match merged.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => merged.push((start, end)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranked_lines_mark_the_words_that_matched() {
        let tokenizer = retrieval::tokenize::Tokenizer::new();
        let terms = |q: &str| retrieval::query_terms(&tokenizer, q).terms;
        let marked = |q: &str, line: &str| -> Vec<String> {
            term_matches(&tokenizer, &terms(q), line)
                .into_iter()
                .map(|(a, b)| line[a..b].to_owned())
                .collect()
        };
        // Stemmed and case-folded, whole words only.
        assert_eq!(
            marked("hiking trips", "We HIKED, then a trip; hikers' shiking"),
            ["HIKED", "trip"]
        );
        // CJK: the characters in a pair (or alone) that is a term, as one
        // range when they touch.
        assert_eq!(marked("北海道的雪", "去年我們去北海道旅行"), ["北海道"]);
        assert!(marked("pottery", "nothing here").is_empty());
    }
}

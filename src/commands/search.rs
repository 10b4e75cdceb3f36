//! `session search`: the flags turned into a query, the hits printed —
//! two lines each for people (where and when; who and the line, the match
//! highlighted on a TTY), or JSON Lines for scripts.

use std::io::Write as _;

use crate::cli::{DayOrTime, SearchArgs, SearchKind};
use crate::commands::Output;
use crate::commands::style::{Style, escape_for_terminal};
use crate::error::usage;
use crate::memory::search::{self, Hit, Kind, Query};
use crate::state::State;

pub fn run(state: &State, args: &SearchArgs, output: Output) -> anyhow::Result<()> {
    let query = query(args)?;
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
            args.query, outcome.files
        ));
    } else if outcome.more > 0 {
        crate::diag::warn(format!(
            "{} more older hit(s) not shown; raise --limit (0 shows all)",
            outcome.more
        ));
    }
    Ok(())
}

fn query(args: &SearchArgs) -> anyhow::Result<Query> {
    if args.query.trim().is_empty() {
        return Err(usage("the search query is empty; give a word or a phrase"));
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
        pattern: args.query.trim().to_owned(),
        regex: args.regex,
        user: args.user.clone(),
        conversation: args
            .conversation
            .as_ref()
            .map(crate::layout::UserId::conversation),
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
        Kind::Message if hit.source == "archive" => "archived message".to_owned(),
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

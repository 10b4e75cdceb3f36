//! `context`: print the memory block `ask` would inject (with a message,
//! what recall adds to it); with `--explain`, what the size budget and
//! recall did with each part; with `--show-config`, the effective
//! configuration and the state dir it belongs to.

use crate::layout::MemoryKey;
use serde::Serialize;

use crate::cli::ContextArgs;
use crate::commands::style::{Style, table};
use crate::commands::{Output, print_json, print_text};
use crate::memory::context::{self, Fate};
use crate::memory::retrieval::{self, Verdict};
use crate::state::State;

pub fn run(state: &State, args: &ContextArgs, output: Output) -> anyhow::Result<()> {
    if args.show_config {
        return show_config(state);
    }
    let user = args.user.as_ref().expect("clap requires --user");
    let key = match &args.conversation {
        Some(key) => crate::memory::migration::conversation_for_reading(state, key)?,
        None => MemoryKey::person(user),
    };
    super::existing_user(state, &key)?;
    if key != MemoryKey::person(user) {
        super::writable_user(state, user)?;
    }
    let window = args
        .window
        .map_or(state.config.context_window(), |n| n as usize);
    let budget = state.config.stm.max_context_chars as usize;
    // The message as `ask` takes it: its words joined by spaces.
    let message = (!args.message.is_empty()).then(|| args.message.join(" "));
    // Refused as `ask` refuses it (and recall never reads a text larger).
    let max_bytes = state.config.limits.max_message_bytes;
    if let Some(text) = &message
        && text.len() as u64 > max_bytes
    {
        return Err(super::input::too_long(
            &text.len().to_string(),
            max_bytes,
            "ask would refuse it too",
        ));
    }
    let query = message.as_deref().map(|text| context::Query {
        text,
        msg_id: None,
        explain: args.explain,
    });
    let parts = context::gather_for(state, &key, user, window, query)?;
    let rendered = context::render(&parts, budget);
    if output.json {
        let recalled: Vec<RecalledJson> = parts
            .recalled
            .iter()
            .enumerate()
            .filter(|(i, _)| !rendered.recall_dropped.contains(i))
            .map(|(_, r)| RecalledJson::new(r))
            .collect();
        return print_json(&ContextJson {
            profile: parts.profile.as_deref(),
            summary: parts.summary.as_deref(),
            messages: &parts.messages,
            recalled: message.is_some().then_some(recalled),
            text: &rendered.text,
            explain: args.explain.then(|| Explained {
                budget_chars: budget,
                used_chars: rendered.text.chars().count(),
                estimated_tokens: context::estimate_tokens(&rendered.text),
                parts: &rendered.parts,
                recall: parts.recall.as_ref().map(|r| RecallExplained {
                    terms: &r.terms,
                    searched: r.searched,
                    indexed_days: r.indexed_days,
                    scanned_days: r.scanned_days,
                    considered: &r.considered,
                }),
            }),
        });
    }
    if args.explain {
        let mut text = explain(&rendered, budget, window);
        if message.is_some() {
            text.push_str("\n\n");
            text.push_str(&explain_recall(state, parts.recall.as_ref()));
        }
        return print_text(&text);
    }
    if parts.is_empty() {
        return Ok(());
    }
    // On a terminal stored text must not drive it; piped, the block is
    // exactly what `ask` would inject (a broker may hand it to claude).
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return print_text(&crate::commands::style::printable(&rendered.text));
    }
    print_text(&rendered.text)
}

/// One row per part: size, estimated tokens, and what the budget did.
fn explain(rendered: &context::Rendered, budget: usize, window: usize) -> String {
    let mut message_number = 0;
    let mut recalled_number = 0;
    let rows: Vec<Vec<String>> = rendered
        .parts
        .iter()
        .map(|part| {
            let name = match part.kind {
                "message" => {
                    message_number += 1;
                    format!("message {message_number}")
                }
                "recalled" => {
                    recalled_number += 1;
                    format!("recalled {recalled_number}")
                }
                kind => kind.to_owned(),
            };
            let why = match (part.fate, part.kind) {
                (Fate::Kept, _) => String::new(),
                (Fate::Cut, _) => format!("cut to {} to fit stm.maxContextChars", part.used_chars),
                (Fate::Dropped, "recalled") => {
                    "dropped: over stm.maxContextChars (lowest scored go first)".into()
                }
                (Fate::Dropped, _) => "dropped: over stm.maxContextChars (oldest go first)".into(),
            };
            vec![
                name,
                part.chars.to_string(),
                part.used_chars.to_string(),
                part.used_tokens.to_string(),
                format!("{:?}", part.fate).to_lowercase(),
                why,
            ]
        })
        .collect();
    let used = rendered.text.chars().count();
    format!(
        "{}\n\ntotal: {used} of {budget} characters (stm.maxContextChars), ~{} tokens; \
         window: the last {window} messages (stm.contextWindow)",
        table(
            Style::detect(),
            &["PART", "CHARS", "USED", "~TOKENS", "FATE", "WHY"],
            &rows
        ),
        context::estimate_tokens(&rendered.text)
    )
}

/// What recall looked for, and each hit considered: its score and why it
/// is in the context or not.
fn explain_recall(state: &State, recall: Option<&retrieval::Recall>) -> String {
    let config = &state.config.recall;
    let Some(recall) = recall else {
        return "recall: off (recall.auto is false, or this memory is not the sender's to search)"
            .into();
    };
    if recall.terms.is_empty() {
        return "recall: nothing to look for (only small talk or stopwords), nothing recalled"
            .into();
    }
    // Stored text must not drive a terminal: its cells made printable
    // (not the table, whose own styling would then show as text).
    let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let rows: Vec<Vec<String>> = recall
        .considered
        .iter()
        .map(|c| {
            let why = match c.verdict {
                Verdict::Taken => "taken",
                Verdict::BelowFloor => "below recall.minScore",
                Verdict::InWindow => "in the recent window already",
                Verdict::Duplicate => "its turns are in a better passage",
                Verdict::OverChars => "over recall.maxChars",
                Verdict::OverPassages => "over recall.maxPassages",
            };
            vec![
                format!("{:.2}", c.score),
                c.ts.format("%Y-%m-%d %H:%M").to_string(),
                c.source.to_string(),
                why.to_owned(),
                match c.text.replace(['\n', '\r'], " ") {
                    text if tty => crate::terminal::escape_for_terminal(&text),
                    text => text,
                },
            ]
        })
        .collect();
    format!(
        "recall: terms {:?} over {} stored units{}; recall.minScore {}, recall.maxChars {}, \
         recall.maxPassages {}\n{}",
        recall.terms,
        recall.searched,
        if recall.indexed_days + recall.scanned_days > 0 {
            format!(
                " ({} archive day(s) from the recall index, {} read whole)",
                recall.indexed_days, recall.scanned_days
            )
        } else {
            String::new()
        },
        config.min_score,
        config.max_chars,
        config.max_passages,
        table(
            Style::detect(),
            &["SCORE", "TIME", "SOURCE", "VERDICT", "TEXT"],
            &rows
        )
    )
}

/// One recalled message as `context --json` lists it: its stored fields,
/// and where it came from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecalledJson<'a> {
    /// `message`, or `summary` for a line of a daily or weekly summary.
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    msg_id: Option<&'a str>,
    ts: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<crate::memory::message::Role>,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_name: Option<&'a str>,
    speaker: String,
    /// `log`, `archive YYYY-MM-DD`, `daily YYYY-MM-DD`, `weekly YYYY-Www`,
    /// `rolling YYYY-MM-DD`.
    source: &'a retrieval::Source,
    /// The score of its passage.
    score: f64,
    /// It matched itself; `false`: it is a neighbour of a hit.
    hit: bool,
}

impl<'a> RecalledJson<'a> {
    fn new(r: &'a retrieval::Recalled) -> Self {
        let ts = |t: chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        match &r.unit.item {
            retrieval::Item::Message(m) => Self {
                kind: "message",
                msg_id: m.msg_id.as_deref(),
                ts: ts(m.ts),
                role: Some(m.role),
                text: &m.text,
                user_id: m.user_id.as_deref(),
                user_name: m.user_name.as_deref(),
                speaker: retrieval::speaker(m),
                source: &r.unit.source,
                score: r.score,
                hit: r.hit,
            },
            retrieval::Item::Note { ts: t, label, text } => Self {
                kind: "summary",
                msg_id: None,
                ts: ts(*t),
                role: None,
                text,
                user_id: None,
                user_name: None,
                speaker: label.clone(),
                source: &r.unit.source,
                score: r.score,
                hit: r.hit,
            },
        }
    }
}

/// The effective configuration, and which state dir it belongs to: the
/// path, where it came from, and whether anybody has written it yet.
fn show_config(state: &State) -> anyhow::Result<()> {
    let origin = &state.origin;
    let value = ShownConfig {
        state_dir: ShownStateDir {
            path: &origin.path,
            source: origin.source,
            exists: origin.in_use(),
        },
        config: &state.config,
    };
    print_text(&serde_json::to_string_pretty(&value)?)
}

/// `context --json`: the parts, the block, and with `--explain` what the
/// size budget did.
#[derive(Serialize)]
struct ContextJson<'a> {
    profile: Option<&'a str>,
    summary: Option<&'a str>,
    messages: &'a [crate::memory::message::Message],
    /// With a message: the earlier messages recall put in the context.
    #[serde(skip_serializing_if = "Option::is_none")]
    recalled: Option<Vec<RecalledJson<'a>>>,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<Explained<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Explained<'a> {
    budget_chars: usize,
    used_chars: usize,
    estimated_tokens: usize,
    parts: &'a [context::PartReport],
    #[serde(skip_serializing_if = "Option::is_none")]
    recall: Option<RecallExplained<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecallExplained<'a> {
    terms: &'a [String],
    searched: usize,
    indexed_days: usize,
    scanned_days: usize,
    considered: &'a [retrieval::Considered],
}

/// `context --show-config`: the effective configuration and its state dir.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShownConfig<'a> {
    state_dir: ShownStateDir<'a>,
    config: &'a crate::config::Config,
}

#[derive(Serialize)]
struct ShownStateDir<'a> {
    path: &'a std::path::Path,
    source: crate::state::dir::StateDirSource,
    exists: bool,
}

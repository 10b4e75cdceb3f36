//! Ranked search: the hits of one or more owners' memory for a query,
//! best first, each with its score — what `session search` prints for
//! several words and what the `search_memory` tool answers. The same
//! engine and score as auto-recall ([`super::rank`]), asked differently:
//! every unit with a query term is a hit on its own (no neighbours taken
//! along, no budget, no recent window left out), `keep` narrows them
//! (times, roles, a group member's lines), and the best `limit` are
//! returned.
//!
//! Several owners are ranked as one corpus, so that a term's rarity is
//! weighed over all of them: a small memory's hits would otherwise score
//! low only for being small. Their messages stay apart (a neighbour's
//! share never crosses from one owner to another), and the recency prior
//! is each owner's own, so one owner's scores are what they would be
//! alone but for the term weights.

use chrono::DateTime;

use super::{Corpus, Item, Options, Unit, corpus, tokenize};
use crate::memory::message::{Message, Role};
use crate::memory::owners::Owner;
use crate::state::State;

/// One hit: a stored message or a summary line, whose it is, and its
/// score (BM25 with a share of its neighbours' and the recency prior, as
/// recall scores).
#[derive(Debug, Clone)]
pub struct Hit {
    pub owner: Owner,
    pub unit: Unit,
    pub score: f64,
}

/// The hits, best first, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub hits: Vec<Hit>,
    /// Hits past the limit.
    pub more: usize,
    /// The query's terms; empty when it has nothing to look for (only
    /// stopwords, small talk or punctuation).
    pub terms: Vec<String>,
}

/// Where a unit of the merged corpus came from.
struct Origin {
    owner: usize,
    /// Its place among its owner's messages, 1/n … 1 (notes: none).
    recency: Option<f64>,
}

/// Rank `owners`' memory for `query`. Of `options`, the floor
/// (`min_score`) and the recency prior apply; neighbours
/// and budgets do not. Whose memory is the caller's to settle, with
/// [`crate::memory::owners::visible_to`] or as the operator.
pub fn search(
    state: &State,
    owners: &[Owner],
    query: &str,
    limit: Option<usize>,
    options: &Options,
    keep: &dyn Fn(&Owner, &Unit) -> bool,
) -> anyhow::Result<Found> {
    let tokenizer = tokenize::Tokenizer::new();
    let terms = super::query_terms(&tokenizer, query);
    if terms.is_empty() || owners.is_empty() {
        return Ok(Found {
            terms: terms.terms,
            ..Found::default()
        });
    }
    let (merged, origins) = merge(state, owners)?;
    let every = Options {
        max_chars: usize::MAX,
        max_passages: usize::MAX,
        neighbours: 0,
        min_score: 0.0,
        // Applied below, per owner.
        recency_weight: 0.0,
    };
    let ranked = super::rank(&tokenizer, &merged, &terms, &[], None, &every);
    drop(merged);
    let mut hits: Vec<Hit> = Vec::new();
    for recalled in ranked.units {
        let unit = recalled.unit;
        let Some(origin) = origins.get(recalled.place) else {
            continue;
        };
        let owner = &owners[origin.owner];
        let score = recalled.score * (1.0 + options.recency_weight * origin.recency.unwrap_or(0.0));
        // A search lists what says the words: a message scored only by
        // the words of the one before it (which auto-recall takes as a
        // passage's turn) is left out.
        let own_terms = || {
            !super::bm25::count(&tokenizer, &terms, unit.item.text())
                .tf
                .is_empty()
        };
        if score < options.min_score || !keep(owner, &unit) || !own_terms() {
            continue;
        }
        hits.push(Hit {
            owner: owner.clone(),
            unit,
            score,
        });
    }
    // Best first; of two equal, the newer.
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.unit.item.ts().cmp(&a.unit.item.ts()))
    });
    let more = limit.map_or(0, |limit| hits.len().saturating_sub(limit));
    if let Some(limit) = limit {
        hits.truncate(limit);
    }
    Ok(Found {
        hits,
        more,
        terms: terms.terms,
    })
}

/// `owners`' memory as one corpus: every owner's messages (an empty one
/// between two owners), then every owner's notes; and where each unit
/// came from, by place (what `rank` hands back as [`super::Recalled::place`]).
fn merge(state: &State, owners: &[Owner]) -> anyhow::Result<(Corpus, Vec<Origin>)> {
    let mut messages: Vec<Unit> = Vec::new();
    let mut notes: Vec<Unit> = Vec::new();
    let mut message_origins = Vec::new();
    let mut note_origins = Vec::new();
    for (o, owner) in owners.iter().enumerate() {
        // Whole, not through the recall index: several owners are ranked
        // as one corpus here (BENCHMARKS.md, Ranked search).
        let corpus = corpus::read_corpus(state, owner)?;
        if !messages.is_empty() && corpus.messages > 0 {
            // An empty message between two owners: no term, so no share
            // of a score passes it.
            messages.push(Unit {
                item: Item::Message(Message::new(Role::User, "", DateTime::UNIX_EPOCH)),
                // Never a hit: it has no terms.
                source: super::Source::Log,
            });
            message_origins.push(Origin {
                owner: o,
                recency: None,
            });
        }
        let n = corpus.messages;
        for (i, unit) in corpus.units.into_iter().enumerate() {
            if i < n {
                messages.push(unit);
                message_origins.push(Origin {
                    owner: o,
                    recency: Some((i + 1) as f64 / n as f64),
                });
            } else {
                notes.push(unit);
                note_origins.push(Origin {
                    owner: o,
                    recency: None,
                });
            }
        }
    }
    let mut origins = message_origins;
    origins.extend(note_origins);
    let n_messages = messages.len();
    let mut units = messages;
    units.extend(notes);
    let merged = Corpus {
        units,
        messages: n_messages,
    };
    Ok((merged, origins))
}

//! `session topics`, `topic show|set`, `forget` and `reindex`: topic
//! notes, and the derived data rebuilt from what is stored (the LTM tag
//! index, the membership records and every recall index segment).

use std::path::Path;

use chrono::Utc;
use serde::Serialize;

use super::{NoteJson, NoteOf, print_listing, read_input, report_written};
use crate::commands::style::{Fit, Style, printable};
use crate::commands::{Output, print_json, print_text};
use crate::error::{Exit, failure};
use crate::layout::TopicSlug;
use crate::memory::{ltm, user_data};
use crate::state::State;

pub(super) fn topics(state: &State, output: Output, style: Style) -> anyhow::Result<()> {
    let topics = ltm::topics(state)?;
    let empty = Some("no topic notes yet; add one with `session topic set SLUG FILE`");
    let headers = ["SLUG", "TITLE", "TAGS", "OWNER", "UPDATED"];
    print_listing(
        &topics,
        output,
        style,
        empty,
        &headers,
        Fit::default(),
        |topic| {
            vec![
                topic.slug.clone(),
                topic.title.clone().unwrap_or_default(),
                topic.tags.join(","),
                topic.owner.clone().unwrap_or_else(|| "-".to_owned()),
                topic.updated.clone().unwrap_or_default(),
            ]
        },
    )
}

pub(super) fn topic_show(state: &State, slug: &TopicSlug, output: Output) -> anyhow::Result<()> {
    let note = ltm::read_topic(state, slug)?.ok_or_else(|| no_topic(slug))?;
    if output.json {
        return print_json(&NoteJson {
            of: NoteOf::Slug(slug.as_str()),
            frontmatter: serde_json::to_value(&note.doc.front)?,
            body: &note.doc.body,
        });
    }
    print_text(&printable(&note.text))
}

pub(super) fn topic_set(
    state: &State,
    slug: &TopicSlug,
    file: Option<&Path>,
    tags: &[String],
    output: Output,
) -> anyhow::Result<()> {
    let text = read_input(file.unwrap_or(Path::new("-")))?;
    let path = ltm::set_topic(state, slug, &text, tags, Utc::now())?;
    report_written(output, slug.as_str(), &path)
}

pub(super) fn forget(state: &State, slug: &TopicSlug, output: Output) -> anyhow::Result<()> {
    if !ltm::forget_topic(state, slug, None)? {
        return Err(no_topic(slug));
    }
    if output.json {
        return print_json(&Forgotten {
            forgotten: slug.as_str(),
        });
    }
    print_text(&format!("forgot topic {slug}"))
}

/// `session forget --json`.
#[derive(Serialize)]
struct Forgotten<'a> {
    forgotten: &'a str,
}

pub(super) fn reindex(state: &State, output: Output) -> anyhow::Result<()> {
    use crate::memory::retrieval::indexing;
    let entries = ltm::reindex(state)?;
    let memberships = user_data::rebuild_memberships(state)?;
    // The recall index, every segment rebuilt (past days; today's archive
    // is read whole by recall anyway).
    let today = chrono::Utc::now().date_naive();
    let owners = indexing::owners(state)?;
    let mut days = Vec::new();
    for key in &owners {
        days.push(crate::memory::summaries::archive_days_in(&state.layout.archive_dir(key))?.len());
    }
    let progress = crate::progress::Progress::new("recall index", days.iter().sum());
    let mut recall = indexing::Updated::default();
    for key in &owners {
        if indexing::drop_orphan(state, key)? {
            continue;
        }
        let updated = indexing::update(state, key, today, true, &mut |_| progress.step())?;
        recall.segments += updated.segments;
        recall.days += updated.days;
        recall.docs += updated.docs;
        recall.damaged += updated.damaged;
    }
    if output.json {
        return print_json(&Reindexed {
            entries,
            memberships,
            recall_segments: recall.segments,
            recall_days: recall.days,
            recall_messages: recall.docs,
            recall_damaged: recall.damaged,
        });
    }
    print_text(&format!(
        "rebuilt {} with {entries} entries; {memberships} group membership(s) recorded; \
         recall index: {} archive day(s), {} message(s) in {} segment(s){}",
        state.layout.index_file().display(),
        recall.days,
        recall.docs,
        recall.segments,
        if recall.damaged > 0 {
            format!(", {} damaged segment(s) replaced", recall.damaged)
        } else {
            String::new()
        }
    ))
}

/// `session reindex --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Reindexed {
    entries: usize,
    memberships: usize,
    recall_segments: usize,
    recall_days: usize,
    recall_messages: usize,
    recall_damaged: usize,
}

/// A topic note that is not there: exit 9, as for an id with nothing stored.
fn no_topic(slug: &TopicSlug) -> anyhow::Error {
    failure(
        Exit::UnknownUser,
        format!("there is no topic note named {slug}; `claude-session session topics` lists them"),
    )
}

//! Searching one file: a message log or archive line by line through the
//! line searcher (a candidate parsed only when its raw line matches), a
//! note or summary as one document.

use super::*;

/// What a thread keeps from one file to the next: the line searcher (its
/// line buffer) and the archive decoder (its inflate state and input
/// buffer). Made once per thread, not once per file: besides the work,
/// a new decoder per archive left the allocator a hole per archive (see
/// [`MembersReader`]).
pub(super) struct Buffers {
    pub(super) searcher: Searcher,
    pub(super) archive: Option<MembersReader<std::fs::File>>,
}

impl Buffers {
    pub(super) fn new() -> Self {
        Self {
            searcher: SearcherBuilder::new().line_number(true).build(),
            archive: None,
        }
    }

    /// The archive decoder (made on first use), reading `file` from its
    /// start.
    fn archive_of(
        archive: &mut Option<MembersReader<std::fs::File>>,
        file: std::fs::File,
    ) -> &mut MembersReader<std::fs::File> {
        match archive {
            Some(reader) => {
                reader.reuse(file);
                reader
            }
            None => archive.insert(MembersReader::new(file)),
        }
    }
}

/// The fields of a log line a hit needs, borrowed where it can be.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StoredLine<'a> {
    #[serde(borrow)]
    pub(super) ts: std::borrow::Cow<'a, str>,
    pub(super) role: Role,
    #[serde(borrow)]
    pub(super) text: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    pub(super) user_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) user_name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) asked_by: Option<std::borrow::Cow<'a, str>>,
}

pub(super) fn search_target(
    target: &Target,
    query: &Query,
    matchers: &Matchers,
    sessions: &Path,
    buffers: &mut Buffers,
    hits: &mut Collector,
) -> anyhow::Result<()> {
    let relative = target
        .path
        .strip_prefix(sessions)
        .unwrap_or(&target.path)
        .display()
        .to_string();
    if target.kind != Kind::Message {
        return search_note(target, query, matchers, &relative, hits);
    }
    let mut on_line = |number: u64, line: &[u8]| {
        if let Some(hit) = message_hit(target, query, matchers, &relative, number, line) {
            hits.push(hit);
        }
    };
    let file = match std::fs::File::open(&target.path) {
        Ok(file) => file,
        // Gone since listed (expiry, compaction): nothing to search.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context(format!("could not read {}", target.path.display()))
            );
        }
    };
    let failed = |e: std::io::Error| {
        anyhow::Error::new(e).context(format!("could not search {}", target.path.display()))
    };
    if target.source == Source::Archive {
        let Buffers { searcher, archive } = buffers;
        let reader = Buffers::archive_of(archive, file);
        scan(&mut *reader, matchers, searcher, &mut on_line).map_err(failed)?;
        for damage in reader.damage() {
            crate::diag::warn(format!(
                "{}: {damage}; searched what could be read",
                target.path.display()
            ));
        }
    } else {
        scan(file, matchers, &mut buffers.searcher, &mut on_line).map_err(failed)?;
    }
    Ok(())
}

/// Hand every candidate line (with its number) to `on_line`: the lines the
/// prefilter matches, or every line for a regex.
pub(super) fn scan(
    reader: impl std::io::Read,
    matchers: &Matchers,
    searcher: &mut Searcher,
    on_line: &mut impl FnMut(u64, &[u8]),
) -> std::io::Result<()> {
    match &matchers.raw {
        Some(raw) => searcher.search_reader(
            raw,
            reader,
            sinks::Bytes(|number, line| {
                on_line(number, line.strip_suffix(b"\n").unwrap_or(line));
                Ok(true)
            }),
        ),
        None => {
            let mut reader = BufReader::with_capacity(64 * 1024, reader);
            let mut line = Vec::new();
            let mut number = 0;
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line)? == 0 {
                    return Ok(());
                }
                number += 1;
                on_line(number, line.strip_suffix(b"\n").unwrap_or(&line));
            }
        }
    }
}

pub(super) fn message_hit(
    target: &Target,
    query: &Query,
    matchers: &Matchers,
    relative: &str,
    number: u64,
    line: &[u8],
) -> Option<Hit> {
    // A line that does not parse is no message; the other commands warn
    // about it, search only passes it by.
    let stored: StoredLine = serde_json::from_slice(line).ok()?;
    if query.role.is_some_and(|role| role != stored.role) {
        return None;
    }
    if let Some(user) = &target.about {
        let about = stored.user_id.as_deref() == Some(user.as_str())
            || stored.asked_by.as_deref() == Some(user.as_str());
        if !about {
            return None;
        }
    }
    let ts = parse_ts(&stored.ts).ok();
    if !time_in_range(ts, query) {
        return None;
    }
    let (text, matches) = stored
        .text
        .lines()
        .map(|l| (l, matchers.find(l)))
        .find(|(_, m)| !m.is_empty())?;
    let owner = target.owner.as_ref();
    let speaker = match stored.role {
        Role::User => stored.user_id.as_deref().map(str::to_owned).or_else(|| {
            owner
                .filter(|o| o.kind == OwnerKind::Person)
                .map(|o| o.key.to_string())
        }),
        _ => None,
    };
    Some(Hit {
        kind: Kind::Message,
        owner: owner.map(Owner::name),
        owner_kind: owner.map(|o| o.kind),
        file: relative.to_owned(),
        line: number,
        ts,
        source: target.source,
        role: Some(stored.role),
        speaker,
        speaker_name: stored.user_name.map(|n| n.into_owned()),
        text: text.to_owned(),
        matches,
    })
}

/// Summaries, profiles and topic notes: small markdown files, read whole;
/// the body is searched, the frontmatter only gives time and tags.
pub(super) fn search_note(
    target: &Target,
    query: &Query,
    matchers: &Matchers,
    relative: &str,
    hits: &mut Collector,
) -> anyhow::Result<()> {
    let Some(text) = crate::memory::stm::read_text_or_warn(&target.path)? else {
        return Ok(());
    };
    let doc = crate::memory::stm::parse_document_or_warn(&text, &target.path);
    if !query.tags.is_empty() {
        let tags: Vec<String> = doc
            .get_str_list("tags")
            .iter()
            .map(|t| t.to_lowercase())
            .collect();
        if !query.tags.iter().all(|t| tags.contains(&t.to_lowercase())) {
            return Ok(());
        }
    }
    if let Some(user) = &query.user
        && target.kind == Kind::Topic
        && doc.get_text("owner").as_deref() != Some(user.as_str())
    {
        return Ok(());
    }
    let ts = note_time(target, &doc);
    if !time_in_range(ts, query) {
        return Ok(());
    }
    // A retired rolling summary may hold several (recall reads it so
    // too); any other note is one document.
    let lines: Vec<(usize, String)> = if retired_day(target).is_some() {
        crate::memory::retrieval::corpus::retired_summary_lines(&text, &target.path)
    } else {
        let body_start = text
            .lines()
            .count()
            .saturating_sub(doc.body.lines().count());
        doc.body
            .lines()
            .enumerate()
            .map(|(i, line)| (body_start + i + 1, line.to_owned()))
            .collect()
    };
    for (number, line) in lines {
        let matches = matchers.find(&line);
        if matches.is_empty() {
            continue;
        }
        hits.push(Hit {
            kind: target.kind,
            owner: target.owner.as_ref().map(Owner::name),
            owner_kind: target.owner.as_ref().map(|o| o.kind),
            file: relative.to_owned(),
            line: number as u64,
            ts,
            source: target.source,
            role: None,
            speaker: None,
            speaker_name: None,
            text: line,
            matches,
        });
    }
    Ok(())
}

/// The day a retired rolling summary (`archive/<owner>/summary-DAY.md`)
/// was retired on; `None` for any other note.
fn retired_day(target: &Target) -> Option<chrono::NaiveDate> {
    let name = target.path.file_name()?.to_str()?;
    (target.source == Source::Rolling)
        .then(|| Layout::archived_summary_day(name))
        .flatten()
}

/// When a note speaks of: a daily summary its day, a weekly one its
/// Sunday (both at the day's end, so they sort after the day's messages);
/// a retired rolling summary the start of the day it was retired on;
/// others their `updated`/`last_compacted` key, else the file's mtime.
pub(super) fn note_time(target: &Target, doc: &Document) -> Option<DateTime<Utc>> {
    if let Some(day) = retired_day(target) {
        return Some(crate::memory::retrieval::corpus::retired_summary_time(day));
    }
    let stem = target.path.file_stem()?.to_str()?;
    if matches!(target.source, Source::Daily | Source::Weekly)
        && let Some((_, last)) = summary_days(stem)
    {
        return Some(last.and_hms_opt(23, 59, 59)?.and_utc());
    }
    for key in ["updated", "last_compacted"] {
        if let Some(ts) = doc.get_text(key).and_then(|t| parse_ts(&t).ok()) {
            return Some(ts);
        }
    }
    let modified = std::fs::metadata(&target.path).ok()?.modified().ok()?;
    Some(modified.into())
}

//! `session search`: ranked text and tag search over profiles, topics and
//! summaries (rolling, daily, weekly).

use serde::Serialize;

use crate::memory::{ltm, stm};
use crate::state::State;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Relative to `sessions/`.
    pub path: String,
    pub score: usize,
    pub tags: Vec<String>,
    /// Matching lines: (line number, text), at most three.
    pub lines: Vec<(usize, String)>,
}

/// Files whose text contains the query's words (case-insensitive), ranked
/// by how often, with a bonus for a word that is a tag. `tags` must all be
/// present on a file for it to count.
pub fn search(state: &State, query: &str, tags: &[String]) -> anyhow::Result<Vec<Hit>> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let wanted: Vec<String> = tags.iter().map(|t| t.to_lowercase()).collect();
    let mut hits = Vec::new();
    for path in candidate_files(state)? {
        // One unreadable file (not UTF-8, a link, a folder) is warned
        // about and skipped: it must not hide every other match.
        let text = match stm::read_text_or_warn(&path) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(e) => {
                crate::diag::warn(format!("{e:#}; skipped"));
                continue;
            }
        };
        let doc = stm::parse_document_or_warn(&text, &path);
        let file_tags: Vec<String> = doc
            .get_str_list("tags")
            .iter()
            .map(|t| t.to_lowercase())
            .collect();
        if !wanted.iter().all(|t| file_tags.contains(t)) {
            continue;
        }
        // Score and show the text, not the frontmatter; tags score apart.
        let lower = doc.body.to_lowercase();
        let mut score: usize = words
            .iter()
            .map(|w| lower.matches(w.as_str()).count())
            .sum();
        score += 5 * words.iter().filter(|w| file_tags.contains(w)).count();
        // A tag-only search (no words) lists every file with the tags.
        if score == 0 && (!words.is_empty() || wanted.is_empty()) {
            continue;
        }
        let body_start = text.lines().count() - doc.body.lines().count();
        let lines = doc
            .body
            .lines()
            .enumerate()
            .filter(|(_, line)| {
                let line = line.to_lowercase();
                words.iter().any(|w| line.contains(w.as_str()))
            })
            .take(3)
            .map(|(i, line)| (body_start + i + 1, line.trim().to_owned()))
            .collect();
        let relative = path
            .strip_prefix(state.layout.sessions_dir())
            .unwrap_or(&path)
            .display()
            .to_string();
        hits.push(Hit {
            path: relative,
            score,
            tags: file_tags,
            lines,
        });
    }
    hits.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    Ok(hits)
}

fn candidate_files(state: &State) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let layout = &state.layout;
    let mut files = Vec::new();
    for dir in [layout.profiles_dir(), layout.topics_dir()] {
        files.extend(
            ltm::markdown_names(&dir)?
                .into_iter()
                .map(|name| dir.join(format!("{name}.md"))),
        );
    }
    for user in stm::users(state)? {
        files.push(layout.summary_file(&user));
    }
    for user in stm::list_user_dirs(&layout.summaries_root())? {
        for dir in [layout.daily_dir(&user), layout.weekly_dir(&user)] {
            files.extend(
                ltm::markdown_names(&dir)?
                    .into_iter()
                    .map(|name| dir.join(format!("{name}.md"))),
            );
        }
    }
    Ok(files)
}

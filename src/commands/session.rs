//! `session …`: memory management for admins at a terminal (tables on a
//! TTY, `--json` for scripts).

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::Path;

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{DayOrTime, ExportFormat, SessionArgs, SessionCommand, TopicCommand, UserSort};
use crate::commands::style::{
    Style, display_width, escape_for_terminal, human_bytes, pad, printable, table,
};
use crate::commands::{Output, existing_user, print_json, print_text, writable_user};
use crate::error::usage;
use crate::layout::{TopicSlug, UserId};
use crate::memory::ledger::Spend;
use crate::memory::message::Message;
use crate::memory::user_data::{self, UserStats};
use crate::memory::{expiry, ltm, migration, people, stm};
use crate::state::State;

/// Whether this subcommand writes what it was given (and so may start a
/// new state dir), rather than reading or managing what is there.
pub fn writes(args: &SessionArgs) -> bool {
    match &args.command {
        SessionCommand::Profile { set, edit, .. } => set.is_some() || *edit,
        SessionCommand::Topic {
            command: TopicCommand::Set { .. },
        } => true,
        _ => false,
    }
}

pub fn run(state: &State, args: &SessionArgs, output: Output) -> anyhow::Result<()> {
    let style = Style::detect();
    match &args.command {
        SessionCommand::Status { user: None } => status(state, output, style),
        SessionCommand::Status { user: Some(user) } => {
            existing_user(state, user)?;
            user_status(state, user, output)
        }
        SessionCommand::Users { sort, limit } => users(state, *sort, *limit, output, style),
        SessionCommand::Conversations { sort, limit } => {
            conversations(state, *sort, *limit, output, style)
        }
        SessionCommand::Show {
            user,
            conversation,
            count,
            archive,
            since,
        } => {
            let key = match conversation {
                Some(key) => migration::conversation_for_reading(state, key)?,
                None => user.clone().expect("clap requires one"),
            };
            existing_user(state, &key)?;
            show(
                state,
                &key,
                *count,
                *archive,
                since.map(DayOrTime::start),
                output,
                style,
            )
        }
        SessionCommand::Clear { user, all, yes } => {
            existing_user(state, user)?;
            clear(state, user, *all, *yes, output)
        }
        SessionCommand::Profile { user, set, edit } => {
            writable_user(state, user)?;
            profile(state, user, set.as_deref(), *edit, output)
        }
        SessionCommand::Topics => topics(state, output, style),
        SessionCommand::Topic {
            command: TopicCommand::Show { slug },
        } => topic_show(state, slug, output),
        SessionCommand::Topic {
            command: TopicCommand::Set { slug, file, tags },
        } => topic_set(state, slug, file.as_deref(), tags, output),
        SessionCommand::Forget { slug } => forget(state, slug, output),
        SessionCommand::Search(args) => crate::commands::search::run(state, args, output),
        SessionCommand::Export { user, out, format } => {
            existing_user(state, user)?;
            export(state, user, out, *format, output)
        }
        SessionCommand::Reindex => reindex(state, output),
    }
}

fn status(state: &State, output: Output, style: Style) -> anyhow::Result<()> {
    let status = user_data::channel_status(state, Utc::now())?;
    if output.json {
        return print_json(&status);
    }
    let storage: Vec<String> = status
        .storage_bytes
        .areas()
        .iter()
        .map(|(name, bytes)| format!("{name} {}", human_bytes(*bytes)))
        .collect();
    let rows = vec![
        vec!["state dir".into(), status.state_dir.display().to_string()],
        vec!["users".into(), status.users.to_string()],
        vec!["conversations".into(), status.conversations.to_string()],
        vec![
            "messages".into(),
            format!("{} in short-term memory", status.stm_messages),
        ],
        vec![
            "LTM entries".into(),
            format!(
                "{} profile(s), {} topic(s)",
                status.ltm.profiles, status.ltm.topics
            ),
        ],
        vec!["storage".into(), storage.join(", ")],
        vec!["spend (asks)".into(), describe_spend(&status.spend.asks)],
        vec![
            "spend (maintenance)".into(),
            describe_spend(&status.spend.maintenance),
        ],
    ];
    print_text(&key_values(style, &rows))
}

fn describe_spend(spend: &Spend) -> String {
    format!(
        "${:.4} today, ${:.4} this month, ${:.4} in total; {} input and {} output tokens",
        spend.today_usd, spend.month_usd, spend.total_usd, spend.input_tokens, spend.output_tokens
    )
}

fn key_values(style: Style, rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(|r| display_width(&r[0])).max().unwrap_or(0);
    rows.iter()
        .map(|r| format!("{}  {}", style.bold(&pad(&r[0], width)), r[1]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn user_status(state: &State, user: &UserId, output: Output) -> anyhow::Result<()> {
    let now = Utc::now();
    // A person's row as `users` shows it (group messages counted in).
    let stats = match people::people(state, now)?
        .into_iter()
        .find(|s| s.user == user.as_str())
    {
        Some(stats) => stats,
        None => user_data::stats(state, user, now)?,
    };
    if output.json {
        return print_json(&stats);
    }
    print_text(&describe_stats(&stats))
}

fn describe_stats(stats: &UserStats) -> String {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let rows = vec![
        vec!["user".into(), stats.user.clone()],
        vec![
            "messages".into(),
            format!(
                "{} in short-term memory, {} compacted{}",
                stats.stm_messages,
                stats.compacted,
                if stats.conversations.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} sent in {} conversation(s)",
                        stats.group_messages,
                        stats.conversations.len()
                    )
                }
            ),
        ],
        vec![
            "last activity".into(),
            stats
                .last_activity
                .map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M UTC").to_string()),
        ],
        vec!["summary".into(), yes_no(stats.has_summary).into()],
        vec!["profile".into(), yes_no(stats.has_profile).into()],
        vec!["storage".into(), human_bytes(stats.bytes)],
        vec!["spend".into(), describe_spend(&stats.spend)],
    ];
    key_values(Style::detect(), &rows)
}

fn users(
    state: &State,
    sort: UserSort,
    limit: Option<usize>,
    output: Output,
    style: Style,
) -> anyhow::Result<()> {
    let mut all = people::people(state, Utc::now())?;
    match sort {
        UserSort::Activity => all.sort_by_key(|s| std::cmp::Reverse(s.last_activity)),
        UserSort::Messages => {
            all.sort_by_key(|s| std::cmp::Reverse(s.stm_messages + s.group_messages))
        }
        UserSort::Size => all.sort_by_key(|s| std::cmp::Reverse(s.bytes)),
    }
    if let Some(limit) = limit {
        all.truncate(limit);
    }
    let headers = [
        "USER",
        "MESSAGES",
        "IN GROUPS",
        "COMPACTED",
        "LAST ACTIVITY",
        "SIZE",
        "PROFILE",
        "TODAY",
        "MONTH",
        "TOTAL",
    ];
    print_listing(&all, output, style, None, &headers, |s| {
        vec![
            s.user.clone(),
            (s.stm_messages + s.group_messages).to_string(),
            s.group_messages.to_string(),
            s.compacted.to_string(),
            activity_cell(s.last_activity),
            human_bytes(s.bytes),
            if s.has_profile { "yes" } else { "no" }.into(),
        ]
        .into_iter()
        .chain(spend_cells(&s.spend))
        .collect()
    })
}

/// A listing: the items as JSON, or a table of `headers` with a row per
/// item (a note on stderr instead when there are none and `empty` says
/// what to tell).
fn print_listing<T: serde::Serialize>(
    items: &[T],
    output: Output,
    style: Style,
    empty: Option<&str>,
    headers: &[&str],
    row: impl Fn(&T) -> Vec<String>,
) -> anyhow::Result<()> {
    if output.json {
        return print_json(&items);
    }
    if let Some(note) = empty.filter(|_| items.is_empty()) {
        crate::diag::warn(note);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = items.iter().map(row).collect();
    print_text(&table(style, headers, &rows))
}

/// A table cell for the time of the last message.
fn activity_cell(last: Option<chrono::DateTime<Utc>>) -> String {
    last.map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M").to_string())
}

/// The TODAY, MONTH and TOTAL cells of a spend.
fn spend_cells(spend: &Spend) -> [String; 3] {
    [spend.today_usd, spend.month_usd, spend.total_usd].map(|usd| format!("${usd:.4}"))
}

fn conversations(
    state: &State,
    sort: UserSort,
    limit: Option<usize>,
    output: Output,
    style: Style,
) -> anyhow::Result<()> {
    let mut all = people::conversations(state, Utc::now())?;
    match sort {
        UserSort::Activity => all.sort_by_key(|s| std::cmp::Reverse(s.last_activity)),
        UserSort::Messages => all.sort_by_key(|s| std::cmp::Reverse(s.stm_messages)),
        UserSort::Size => all.sort_by_key(|s| std::cmp::Reverse(s.bytes)),
    }
    if let Some(limit) = limit {
        all.truncate(limit);
    }
    let headers = [
        "CONVERSATION",
        "STM",
        "COMPACTED",
        "PEOPLE",
        "LAST ACTIVITY",
        "SIZE",
        "TODAY",
        "MONTH",
        "TOTAL",
    ];
    let empty = Some("no group or thread conversations yet");
    print_listing(&all, output, style, empty, &headers, |s| {
        vec![
            s.conversation.clone(),
            s.stm_messages.to_string(),
            s.compacted.to_string(),
            s.people.len().to_string(),
            activity_cell(s.last_activity),
            human_bytes(s.bytes),
        ]
        .into_iter()
        .chain(spend_cells(&s.spend))
        .collect()
    })
}

#[allow(clippy::too_many_arguments)]
fn show(
    state: &State,
    user: &UserId,
    count: Option<usize>,
    archive: bool,
    since: Option<DateTime<Utc>>,
    output: Output,
    style: Style,
) -> anyhow::Result<()> {
    // Each message with whether it came from an archive.
    let mut messages: Vec<(Message, bool)> = Vec::new();
    if archive {
        messages.extend(
            user_data::archived_messages(state, user)?
                .into_iter()
                .map(|m| (m, true)),
        );
    }
    messages.extend(
        stm::all_messages(state, user)?
            .into_iter()
            .map(|m| (m, false)),
    );
    if let Some(since) = since {
        messages.retain(|(m, _)| m.ts >= since);
    }
    if let Some(n) = count {
        let skip = messages.len().saturating_sub(n);
        messages.drain(..skip);
    }
    if output.json {
        // With --archive, each message says where it came from.
        let shown: Vec<ShownMessage> = messages
            .iter()
            .map(|(message, archived)| {
                let mut message = message.clone();
                if archive {
                    // Ours wins over a stored line's own `archived` key.
                    message.extra.shift_remove("archived");
                }
                ShownMessage {
                    message,
                    archived: archive.then_some(*archived),
                }
            })
            .collect();
        return print_json(&shown);
    }
    if messages.is_empty() {
        crate::diag::warn(format!("no messages of {user} to show"));
        return Ok(());
    }
    let speakers: Vec<String> = messages.iter().map(|(m, _)| speaker(m)).collect();
    let width = speakers
        .iter()
        .map(|w| display_width(w))
        .max()
        .unwrap_or(0)
        .max(9);
    let mut out = String::new();
    for ((message, archived), who) in messages.iter().zip(&speakers) {
        let stamp = message.ts.format("%Y-%m-%d %H:%M").to_string();
        let marker = match (archive, archived) {
            (false, _) => String::new(),
            (true, true) => format!("{}  ", style.dim("archive")),
            (true, false) => "stm      ".to_owned(),
        };
        let text = printable(&message.text);
        let mut lines = text.lines();
        out.push_str(&format!(
            "{}  {marker}{}{}  {}\n",
            style.dim(&stamp),
            style.role(who),
            " ".repeat(width - display_width(who)),
            lines.next().unwrap_or_default()
        ));
        let indent = 18 + marker_width(archive) + width + 2;
        for line in lines {
            out.push_str(&format!("{}{line}\n", " ".repeat(indent)));
        }
    }
    print_text(out.trim_end())
}

/// One message of `session show --json`: the line as stored, and with
/// --archive whether it came from an archive.
#[derive(Serialize)]
struct ShownMessage {
    #[serde(flatten)]
    message: Message,
    #[serde(skip_serializing_if = "Option::is_none")]
    archived: Option<bool>,
}

fn marker_width(archive: bool) -> usize {
    if archive { 9 } else { 0 }
}

/// Who spoke a line: in a group, `Alice (U1)` from the line's `userName`
/// and `userId`; otherwise the role.
fn speaker(message: &Message) -> String {
    let role = message.role.label().to_lowercase();
    let name = message.user_name.as_deref().map(escape_for_terminal);
    match (message.sender(), name) {
        (Some(id), Some(name)) => format!("{name} ({})", escape_for_terminal(id)),
        (Some(id), None) => escape_for_terminal(id),
        (None, _) => role,
    }
}

fn clear(state: &State, user: &UserId, all: bool, yes: bool, output: Output) -> anyhow::Result<()> {
    if !yes {
        let what = if all {
            format!("erase EVERYTHING stored about {user} (STM, profile, summaries, archive)")
        } else {
            format!("clear the short-term memory of {user} (messages move to the archive)")
        };
        if !std::io::stdin().is_terminal() {
            return Err(usage(format!(
                "refusing to {what} without confirmation: stdin is not a terminal; add --yes"
            )));
        }
        eprint!("{what}? [y/N] ");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            eprintln!("nothing changed");
            return Ok(());
        }
    }
    if all {
        let removed = user_data::erase(state, user)?;
        if output.json {
            return print_json(&Erased {
                user: user.as_str(),
                erased: &removed,
            });
        }
        return print_text(&format!(
            "erased everything of {user}: {} file(s) and folder(s) removed",
            removed.len()
        ));
    }
    let moved = expiry::clear_stm(state, user, Utc::now())?;
    if output.json {
        return print_json(&Cleared {
            user: user.as_str(),
            archived_messages: moved,
        });
    }
    print_text(&format!(
        "cleared the short-term memory of {user}: {moved} message(s) moved to the archive"
    ))
}

/// `session clear --all --json`.
#[derive(Serialize)]
struct Erased<'a> {
    user: &'a str,
    erased: &'a [std::path::PathBuf],
}

/// `session clear --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Cleared<'a> {
    user: &'a str,
    archived_messages: usize,
}

fn profile(
    state: &State,
    user: &UserId,
    set: Option<&Path>,
    edit: bool,
    output: Output,
) -> anyhow::Result<()> {
    if let Some(source) = set {
        let doc = ltm::validate_profile(user, &read_input(source)?, Utc::now())?;
        let path = ltm::set_profile(state, user, doc)?;
        return report_written(output, user.as_str(), &path);
    }
    if edit {
        return edit_profile(state, user, output);
    }
    match ltm::read_profile(state, user)? {
        Some(note) if output.json => print_json(&NoteJson {
            of: NoteOf::User(user.as_str()),
            frontmatter: serde_json::to_value(&note.doc.front)?,
            body: &note.doc.body,
        }),
        Some(note) => print_text(&printable(&note.text)),
        None => Err(usage(format!(
            "{user} has no profile; write one with `session profile --user {user} --set FILE`"
        ))),
    }
}

/// `session profile --json` and `session topic show --json`: the note's
/// frontmatter and body, under whose (or which) it is.
#[derive(Serialize)]
struct NoteJson<'a> {
    #[serde(flatten)]
    of: NoteOf<'a>,
    frontmatter: Value,
    body: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "lowercase")]
enum NoteOf<'a> {
    User(&'a str),
    Slug(&'a str),
}

fn edit_profile(state: &State, user: &UserId, output: Output) -> anyhow::Result<()> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .ok_or_else(|| usage("set $VISUAL or $EDITOR to edit a profile"))?;
    let before = ltm::profile_draft(state, user, Utc::now())?;
    let mut draft = tempfile::Builder::new()
        .prefix("claude-session-profile-")
        .suffix(".md")
        .tempfile()
        .context("could not create a temporary file to edit")?;
    draft.write_all(before.as_bytes())?;
    draft.flush()?;
    let status = editor_command(&editor, draft.path())
        .status()
        .with_context(|| format!("could not start the editor `{editor}`"))?;
    if !status.success() {
        return Err(usage(format!(
            "the editor `{editor}` failed ({status}); the profile is unchanged"
        )));
    }
    let mut after = String::new();
    std::fs::File::open(draft.path())?.read_to_string(&mut after)?;
    if after == before {
        eprintln!("no changes");
        return Ok(());
    }
    let doc = ltm::validate_profile(user, &after, Utc::now())?;
    match ltm::replace_profile_if_unchanged(state, user, &before, &doc)? {
        Some(path) => report_written(output, user.as_str(), &path),
        None => {
            let (_, kept) = draft.keep().context("could not keep your edit")?;
            Err(usage(format!(
                "{} changed while you were editing (new facts were merged); nothing \
                 was written; your edit is kept in {}; run --edit again",
                state.layout.profile_file(user).display(),
                kept.display()
            )))
        }
    }
}

/// `$EDITOR FILE` as git runs it: through `sh -c '$EDITOR "$@"'`, so an
/// editor with arguments (`code --wait`), quotes or a path with spaces
/// (`"/opt/My Editor/bin/edit" -w`) runs as the shell reads it, and the
/// file name is passed as one argument whatever it holds.
fn editor_command(editor: &str, file: &Path) -> std::process::Command {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(editor)
        .arg(file);
    command
}

fn report_written(output: Output, id: &str, path: &Path) -> anyhow::Result<()> {
    if output.json {
        print_json(&Written { id, written: path })
    } else {
        print_text(&format!("wrote {}", path.display()))
    }
}

/// `--json` of a profile or topic note written.
#[derive(Serialize)]
struct Written<'a> {
    id: &'a str,
    written: &'a Path,
}

/// FILE, or stdin for `-` (or no file).
fn read_input(source: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    if source.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| usage(format!("could not read stdin as UTF-8 text: {e}")))?;
    } else {
        text = std::fs::read_to_string(source)
            .map_err(|e| usage(format!("could not read {}: {e}", source.display())))?;
    }
    Ok(text)
}

fn topics(state: &State, output: Output, style: Style) -> anyhow::Result<()> {
    let topics = ltm::topics(state)?;
    let empty = Some("no topic notes yet; add one with `session topic set SLUG FILE`");
    let headers = ["SLUG", "TITLE", "TAGS", "OWNER", "UPDATED"];
    print_listing(&topics, output, style, empty, &headers, |topic| {
        vec![
            topic.slug.clone(),
            topic.title.clone().unwrap_or_default(),
            topic.tags.join(","),
            topic.owner.clone().unwrap_or_else(|| "-".to_owned()),
            topic.updated.clone().unwrap_or_default(),
        ]
    })
}

fn topic_show(state: &State, slug: &TopicSlug, output: Output) -> anyhow::Result<()> {
    let note = ltm::read_topic(state, slug)?
        .ok_or_else(|| usage(format!("there is no topic note named {slug}")))?;
    if output.json {
        return print_json(&NoteJson {
            of: NoteOf::Slug(slug.as_str()),
            frontmatter: serde_json::to_value(&note.doc.front)?,
            body: &note.doc.body,
        });
    }
    print_text(&printable(&note.text))
}

fn topic_set(
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

fn forget(state: &State, slug: &TopicSlug, output: Output) -> anyhow::Result<()> {
    if !ltm::forget_topic(state, slug, None)? {
        return Err(usage(format!("there is no topic note named {slug}")));
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

fn export(
    state: &State,
    user: &UserId,
    out: &Path,
    format: ExportFormat,
    output: Output,
) -> anyhow::Result<()> {
    if out.as_os_str() == "-" {
        return export_to_stdout(state, user, format);
    }
    // A bare file name is in the current folder (its parent, "", is not a
    // folder to sync).
    let out = &if out.parent().is_some_and(|p| p.as_os_str().is_empty()) {
        Path::new(".").join(out)
    } else {
        out.to_owned()
    };
    if out.exists()
        && !(out.is_dir() && std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none()))
    {
        return Err(usage(format!(
            "{} already exists; give a new path (export never overwrites)",
            out.display()
        )));
    }
    let files = match format {
        ExportFormat::Dir => user_data::export_dir(state, user, out)?,
        ExportFormat::Json => user_data::export_json_file(state, user, out, Utc::now())?,
        ExportFormat::TarGz => user_data::export_tar_gz(state, user, out)?,
    };
    if output.json {
        return print_json(&Exported {
            user: user.as_str(),
            out,
            files,
        });
    }
    print_text(&format!(
        "exported {user} to {} ({files} file(s))",
        out.display()
    ))
}

/// `session export --json`.
#[derive(Serialize)]
struct Exported<'a> {
    user: &'a str,
    out: &'a Path,
    files: usize,
}

/// `--out -`: the JSON document, or the tar.gz bytes, on stdout.
fn export_to_stdout(state: &State, user: &UserId, format: ExportFormat) -> anyhow::Result<()> {
    let bytes = match format {
        ExportFormat::Json => user_data::export_json_bytes(state, user, Utc::now())?,
        ExportFormat::TarGz => user_data::export_tar_gz_bytes(state, user)?.0,
        ExportFormat::Dir => {
            return Err(usage(
                "--out - (stdout) takes --format json or tar.gz; a folder export needs a path",
            ));
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&bytes)?;
    stdout.flush()?;
    Ok(())
}

fn reindex(state: &State, output: Output) -> anyhow::Result<()> {
    let entries = ltm::reindex(state)?;
    let memberships = user_data::rebuild_memberships(state)?;
    if output.json {
        return print_json(&Reindexed {
            entries,
            memberships,
        });
    }
    print_text(&format!(
        "rebuilt {} with {entries} entries; {memberships} group membership(s) recorded",
        state.layout.index_file().display(),
    ))
}

/// `session reindex --json`.
#[derive(Serialize)]
struct Reindexed {
    entries: usize,
    memberships: usize,
}

//! Man pages and shell completions, rendered from the clap definition in
//! `src/cli/mod.rs`: the one place that knows what the committed `man/` and
//! `completions/` files should hold. `examples/generate-docs.rs` writes them,
//! `tests/generated.rs` fails when the committed ones drift from it; both
//! include this file with `#[path]`, so they cannot disagree.
//!
//! Nothing that `src/cli/mod.rs` already says is repeated here: the exit codes
//! come from the top command's `after_help`, the examples from each
//! subcommand's, the environment variables from the flags' `env`. Only what
//! clap cannot know is written here by hand: the file layout (FILES) and
//! `NO_COLOR`, which clap's colored output obeys without a flag of its own.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap::{Command, CommandFactory as _};
use clap_complete::Shell;
use clap_complete::env::EnvCompleter;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};

use claude_session::cli::Cli;

/// The one command that brings `man/` and `completions/` up to date.
pub const REGENERATE_COMMAND: &str = "cargo run --example generate-docs";

/// The folders, relative to the output root, that the generator owns.
pub const MAN_DIR: &str = "man";
pub const COMPLETIONS_DIR: &str = "completions";

const BIN: &str = "claude-session";
const SECTION: &str = "1";

/// The shells we ship completions for, in a fixed order, with the
/// registration script clap_complete writes for each.
const SHELLS: [(Shell, &dyn EnvCompleter); 5] = [
    (Shell::Bash, &clap_complete::env::Bash),
    (Shell::Zsh, &clap_complete::env::Zsh),
    (Shell::Fish, &clap_complete::env::Fish),
    (Shell::Elvish, &clap_complete::env::Elvish),
    (Shell::PowerShell, &clap_complete::env::Powershell),
];

/// Render every man page and completion file and write them under `root`
/// (`root/man/…`, `root/completions/…`); man pages that no command produces
/// any more are removed. Returns the paths written, relative to `root`.
pub fn generate(root: &Path) -> io::Result<Vec<PathBuf>> {
    let files = render_all()?;
    for dir in [MAN_DIR, COMPLETIONS_DIR] {
        fs::create_dir_all(root.join(dir))?;
    }
    for (relative, bytes) in &files {
        fs::write(root.join(relative), bytes)?;
    }
    let wanted: BTreeSet<&PathBuf> = files.iter().map(|(path, _)| path).collect();
    for stale in managed_files(root)? {
        if !wanted.contains(&stale) && is_our_man_page(&stale) {
            fs::remove_file(root.join(&stale))?;
        }
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

/// The files now present in `root/man` and `root/completions`, relative to
/// `root`, sorted. A missing folder counts as empty.
pub fn managed_files(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for dir in [MAN_DIR, COMPLETIONS_DIR] {
        let entries = match fs::read_dir(root.join(dir)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                found.push(Path::new(dir).join(entry.file_name()));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Only pages named like ours are ever deleted, so a hand-written page
/// someone adds to `man/` survives a regeneration.
fn is_our_man_page(relative: &Path) -> bool {
    relative.parent() == Some(Path::new(MAN_DIR))
        && relative
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|name| name.starts_with(BIN) && name.ends_with(&format!(".{SECTION}")))
}

fn render_all() -> io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut files = Vec::new();

    // Man pages document commands, not the `help` pseudo-subcommand.
    let mut cmd = without_help_subcommand(Cli::command());
    cmd.build();
    let mut ancestors = Vec::new();
    man_pages(&cmd, &mut ancestors, &mut files)?;

    // Completions are clap's dynamic ones: each script hands the words
    // typed to `COMPLETE=<shell> claude-session -- …`, so flags,
    // subcommands and values (user ids, conversation keys, topic slugs,
    // tasks read from the state dir) all come from the binary, from the
    // same definition as the parser. The committed script is what
    // `COMPLETE=<shell> claude-session` prints, calling `claude-session`
    // on PATH.
    for (shell, completer) in SHELLS {
        let mut buf = Vec::new();
        completer.write_registration("COMPLETE", BIN, BIN, BIN, &mut buf)?;
        let name = clap_complete::Generator::file_name(&shell, BIN);
        files.push((Path::new(COMPLETIONS_DIR).join(name), buf));
    }

    Ok(files)
}

fn without_help_subcommand(cmd: Command) -> Command {
    cmd.disable_help_subcommand(true)
        .mut_subcommands(without_help_subcommand)
}

/// One page for `cmd`, then one for each visible subcommand, depth first.
/// `ancestors` holds the page names above `cmd`, for SEE ALSO.
fn man_pages(
    cmd: &Command,
    ancestors: &mut Vec<String>,
    files: &mut Vec<(PathBuf, Vec<u8>)>,
) -> io::Result<()> {
    let name = page_name(cmd);
    let page = man_page(cmd, ancestors)?;
    files.push((
        Path::new(MAN_DIR).join(format!("{name}.{SECTION}")),
        page.into_bytes(),
    ));

    ancestors.push(name);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub, ancestors, files)?;
    }
    ancestors.pop();
    Ok(())
}

/// `claude-session-session-status`: clap's display name once built.
fn page_name(cmd: &Command) -> String {
    cmd.get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_owned()
}

fn man_page(cmd: &Command, ancestors: &[String]) -> io::Result<String> {
    let name = page_name(cmd);
    let is_top = ancestors.is_empty();
    let man = Man::new(cmd.clone());

    let mut out = Vec::new();
    title(&mut out, cmd, &name);
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }

    let mut extra = Roff::new();
    let blocks = after_help_blocks(cmd);
    if is_top && !blocks.iter().any(|b| b.section() == EXIT_STATUS) {
        return Err(io::Error::other(format!(
            "src/cli/mod.rs: the after_help of `{BIN}` has no `{EXIT_CODES_HEADING}:` block; \
             the man page needs it for EXIT STATUS"
        )));
    }
    for block in &blocks {
        block.render(&mut extra);
    }
    if is_top {
        environment_section(&mut extra, cmd);
        files_section(&mut extra);
    } else {
        see_also_section(&mut extra, ancestors);
    }
    extra.to_writer(&mut out)?;

    if cmd.get_version().is_some() || cmd.get_long_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    if cmd.get_author().is_some() {
        man.render_authors_section(&mut out)?;
    }

    let page = String::from_utf8(out).map_err(io::Error::other)?;
    Ok(ascii_only(&dedup_preamble(&page)))
}

/// `.TH` written by hand: clap_mangen leaves the date argument out when it
/// is empty, which shifts the later arguments one place to the left. No date
/// at all, so a page only changes when its content does. Then no hyphenation
/// and a ragged right margin: flags and paths must not be split or spread.
fn title(out: &mut Vec<u8>, cmd: &Command, name: &str) {
    let source = match cmd.get_version() {
        Some(version) => format!("{BIN} {version}"),
        None => BIN.to_owned(),
    };
    let args = [
        name.to_uppercase(),
        SECTION.to_owned(),
        String::new(),
        source,
        "User Commands".to_owned(),
    ];
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("\"{}\"", a.replace('\\', r"\\").replace('"', "")))
        .collect();
    out.extend_from_slice(
        format!(
            ".\\\" Generated from src/cli/mod.rs by `{REGENERATE_COMMAND}`; do not edit.\n\
             .TH {}\n.nh\n.ad l\n",
            quoted.join(" ")
        )
        .as_bytes(),
    );
}

/// Every `Roff` starts its output with the same few lines that define the
/// apostrophe string; rendering section by section repeats them. Keep the
/// first.
fn dedup_preamble(page: &str) -> String {
    let preamble = Roff::new().render();
    match page.find(&preamble) {
        Some(first) => {
            let end = first + preamble.len();
            format!("{}{}", &page[..end], page[end..].replace(&preamble, ""))
        }
        None => page.to_owned(),
    }
}

/// Non-ASCII characters (the `…` in `TASK,…`) as groff's `\[uXXXX]`, so the
/// page needs no input-encoding guess from groff, mandoc or man.
fn ascii_only(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    for c in page.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

const EXIT_CODES_HEADING: &str = "Exit codes";
const EXIT_STATUS: &str = "EXIT STATUS";

/// One `Heading:` block of an `after_help` text: `Exit codes:` becomes EXIT
/// STATUS, `Examples:` EXAMPLES.
struct Block {
    heading: String,
    lines: Vec<String>,
}

impl Block {
    fn section(&self) -> String {
        if self.heading == EXIT_CODES_HEADING {
            EXIT_STATUS.to_owned()
        } else {
            self.heading.to_uppercase()
        }
    }

    fn render(&self, roff: &mut Roff) {
        roff.control("SH", [self.section().as_str()]);
        match self.definitions() {
            // `  124  claude timed out`: a term, two spaces or more, its meaning.
            Some(items) => {
                for (term, meaning) in items {
                    roff.control("TP", []);
                    roff.text([bold(term)]);
                    roff.text([roman(meaning)]);
                }
            }
            // Command lines, kept line by line as typed.
            None => {
                let indent = self
                    .lines
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.len() - l.trim_start().len())
                    .min()
                    .unwrap_or(0);
                roff.control("RS", ["4"]);
                roff.control("nf", []);
                for line in &self.lines {
                    roff.text([roman(line.get(indent..).unwrap_or("").trim_end())]);
                }
                roff.control("fi", []);
                roff.control("RE", []);
            }
        }
    }

    /// The lines as (term, meaning) pairs, if every line is one.
    fn definitions(&self) -> Option<Vec<(&str, &str)>> {
        if self.heading.starts_with("Example") {
            return None;
        }
        self.lines
            .iter()
            .map(|line| {
                let (term, meaning) = line.trim().split_once("  ")?;
                Some((term, meaning.trim_start()))
            })
            .collect()
    }
}

/// Split `after_help` at its unindented `Heading:` lines; text before the
/// first heading goes under NOTES.
fn after_help_blocks(cmd: &Command) -> Vec<Block> {
    let Some(text) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) else {
        return Vec::new();
    };
    let mut blocks: Vec<Block> = Vec::new();
    for line in text.to_string().lines() {
        let is_heading = !line.starts_with(char::is_whitespace) && line.ends_with(':');
        if is_heading {
            blocks.push(Block {
                heading: line.trim_end_matches(':').to_owned(),
                lines: Vec::new(),
            });
        } else {
            if blocks.is_empty() {
                blocks.push(Block {
                    heading: "Notes".to_owned(),
                    lines: Vec::new(),
                });
            }
            if let Some(block) = blocks.last_mut() {
                block.lines.push(line.to_owned());
            }
        }
    }
    for block in &mut blocks {
        while block.lines.last().is_some_and(|l| l.trim().is_empty()) {
            block.lines.pop();
        }
        while block.lines.first().is_some_and(|l| l.trim().is_empty()) {
            block.lines.remove(0);
        }
    }
    blocks.retain(|b| !b.lines.is_empty());
    blocks
}

/// A variable read through a flag's `env`: its name, the flag, and the
/// commands that have the flag (none listed for a global flag).
struct EnvVar {
    name: String,
    flag: String,
    help: String,
    commands: Vec<String>,
}

fn environment_section(roff: &mut Roff, top: &Command) {
    let mut vars: Vec<EnvVar> = Vec::new();
    collect_env(top, "", &mut vars);

    roff.control("SH", ["ENVIRONMENT"]);
    roff.text([roman(
        "A flag given on the command line wins over its variable.",
    )]);
    for var in &vars {
        roff.control("TP", []);
        roff.text([bold(&var.name)]);
        let mut text = vec![
            roman(format!("{}; the same as ", var.help.trim_end_matches('.'))),
            bold(format!("--{}", var.flag)),
        ];
        if !var.commands.is_empty() {
            text.push(roman(format!(" of {}", join_words(&var.commands))));
        }
        text.push(roman("."));
        roff.text(text);
    }
    roff.control("TP", []);
    roff.text([bold("NO_COLOR")]);
    roff.text([roman(
        "When set to a non-empty value, help, usage errors and tables are printed without color.",
    )]);
    for (names, help) in claude_session::cli::ENVIRONMENT {
        roff.control("TP", []);
        roff.text([bold(*names)]);
        roff.text([roman(*help)]);
    }
}

/// Walk the built command tree. A global flag is copied into every
/// subcommand by clap; it is recorded once, at the top.
fn collect_env(cmd: &Command, path: &str, vars: &mut Vec<EnvVar>) {
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_env_set()) {
        let (Some(env), Some(flag)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        if arg.is_global_set() && !path.is_empty() {
            continue;
        }
        let name = env.to_string_lossy().into_owned();
        let index = match vars.iter().position(|v| v.name == name) {
            Some(index) => index,
            None => {
                vars.push(EnvVar {
                    name,
                    flag: flag.to_owned(),
                    help: arg.get_help().map(|h| h.to_string()).unwrap_or_default(),
                    commands: Vec::new(),
                });
                vars.len() - 1
            }
        };
        if !path.is_empty() && !vars[index].commands.iter().any(|c| c == path) {
            vars[index].commands.push(path.to_owned());
        }
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_path = if path.is_empty() {
            sub.get_name().to_owned()
        } else {
            format!("{path} {}", sub.get_name())
        };
        collect_env(sub, &sub_path, vars);
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_words(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The state dir layout, in brief. It lives in `src/layout/`, not in the
/// clap types, so it is the one part of the page written here by hand.
fn files_section(roff: &mut Roff) {
    roff.control("SH", ["FILES"]);
    roff.text([
        roman("The state dir is "),
        bold("--state-dir"),
        roman(" "),
        italic("DIR"),
        roman(", else "),
        bold("CLAUDE_SESSION_STATE_DIR"),
        roman(", else "),
        italic("./.claude/channels/NAME"),
        roman(" for "),
        bold("--channel"),
        roman(" "),
        italic("NAME"),
        roman(". Everything lives in its "),
        italic("sessions/"),
        roman(" folder, laid out as the TypeScript seed laid it out:"),
    ]);
    let entries: [(&str, &str); 8] = [
        (
            "sessions/config.json",
            "Optional settings over the defaults; `context --show-config` prints the result.",
        ),
        (
            "sessions/stm/USER/messages.jsonl",
            "Short-term memory: the user's recent messages, one JSON object a line; \
             summary.md beside it is the rolling summary.",
        ),
        (
            "sessions/ltm/",
            "Long-term memory: users/USER.md profiles, topics/SLUG.md notes, index.json.",
        ),
        (
            "sessions/summaries/USER/",
            "daily/YYYY-MM-DD.md and weekly/YYYY-Www.md summaries.",
        ),
        (
            "sessions/archive/USER/",
            "Compacted messages as messages-YYYY-MM-DD.jsonl.gz, with the summary-YYYY-MM-DD.md \
             of each compaction.",
        ),
        (
            "sessions/costs/maintenance.jsonl",
            "The cost of every LLM call made for compaction and maintenance.",
        ),
        ("sessions/.locks/", "Lock files, kept apart from the data."),
        (
            "sessions/.journal/",
            "What a running compaction is about to do, so an interrupted one is finished \
             by the next.",
        ),
    ];
    for (path, meaning) in entries {
        roff.control("TP", []);
        roff.text([italic(path)]);
        roff.text([roman(meaning)]);
    }
}

fn see_also_section(roff: &mut Roff, ancestors: &[String]) {
    roff.control("SH", ["SEE ALSO"]);
    let mut text = Vec::new();
    for (i, page) in ancestors.iter().enumerate() {
        if i > 0 {
            text.push(roman(", "));
        }
        text.push(bold(page));
        text.push(roman(format!("({SECTION})")));
    }
    roff.text(text);
}

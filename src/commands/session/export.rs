//! `session export`: one user's data as a folder, a JSON document or a
//! tar.gz, to a new path or to stdout; never overwrites.

use std::io::Write as _;
use std::path::Path;

use chrono::Utc;
use serde::Serialize;

use crate::cli::ExportFormat;
use crate::commands::{Output, print_json, print_text};
use crate::error::usage;
use crate::layout::MemoryKey;
use crate::memory::user_data;
use crate::state::State;

pub(super) fn export(
    state: &State,
    user: &MemoryKey,
    out: &Path,
    format: Option<ExportFormat>,
    output: Output,
) -> anyhow::Result<()> {
    let format = format.unwrap_or_else(|| format_of(out));
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

/// The format `--out` names by its extension, when `--format` is not
/// given: `u.json` is a JSON document (not a folder named `u.json`).
fn format_of(out: &Path) -> ExportFormat {
    let name = out.to_string_lossy().to_lowercase();
    if name == "-" || name.ends_with(".json") {
        ExportFormat::Json
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        ExportFormat::TarGz
    } else {
        ExportFormat::Dir
    }
}

/// `session export --json`.
#[derive(Serialize)]
struct Exported<'a> {
    user: &'a str,
    out: &'a Path,
    files: usize,
}

/// `--out -`: the JSON document, or the tar.gz bytes, on stdout.
fn export_to_stdout(state: &State, user: &MemoryKey, format: ExportFormat) -> anyhow::Result<()> {
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

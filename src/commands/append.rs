//! `append`: log one message, or import a batch of seed-format lines.

use crate::layout::MemoryKey;
use std::io::Read as _;

use anyhow::Context as _;
use serde::Serialize;

use crate::cli::AppendArgs;
use crate::commands::input::{build_message, check_ids, message_text};
use crate::commands::{Output, print_json, print_text};
use crate::error::usage;
use crate::memory::message::{Message, Role, check_not_future};
use crate::memory::stm;
use crate::state::State;

pub fn run(state: &State, args: &AppendArgs, output: Output) -> anyhow::Result<()> {
    let user = &args.message.user;
    check_ids(&args.message)?;
    if args.reply_to.is_some() && args.role != Role::Assistant {
        return Err(usage(
            "--reply-to names the message an assistant line answers; use it with --role assistant",
        ));
    }
    if let Some(source) = &args.jsonl {
        let lines = read_import(source)?;
        stm::import(state, &MemoryKey::person(user), &lines)?;
        if output.json {
            print_json(&Appended {
                user: user.as_str(),
                appended: lines.len(),
                duplicate: false,
            })?;
        }
        return Ok(());
    }

    let text = message_text(&args.message, state.config.limits.max_message_bytes)?;
    let ts = match args.ts {
        Some(ts) => {
            check_not_future(&ts, chrono::Utc::now()).map_err(|e| usage(format!("--ts: {e}")))?;
            ts
        }
        None => chrono::Utc::now(),
    };
    let mut message = build_message(state, &args.message, args.role, text, ts)?;
    message.reply_to = args.reply_to.clone();
    let key = &match &args.message.conversation {
        Some(key) => crate::memory::migration::conversation_for_writing(state, key)?,
        None => MemoryKey::person(user),
    };
    // A platform re-sending the same event must not log it twice, and a
    // broker retrying must not log the same answer twice.
    let duplicate = stm::append_once(state, key, &message)?;
    if duplicate {
        crate::diag::info(match &args.reply_to {
            Some(id) if message.msg_id.is_none() => {
                format!("message {id} already has an answer logged; not logged again")
            }
            _ => format!(
                "message id {} is already logged; not logged again",
                message.msg_id.as_deref().unwrap_or_default()
            ),
        });
    }
    if output.json {
        print_json(&Appended {
            user: user.as_str(),
            appended: usize::from(!duplicate),
            duplicate,
        })?;
    } else if duplicate {
        print_text("duplicate: this message (or its answer) is already logged")?;
    }
    Ok(())
}

/// `append --json`: how many lines were logged; a duplicate is not.
#[derive(Serialize)]
struct Appended<'a> {
    user: &'a str,
    appended: usize,
    duplicate: bool,
}

/// Read and validate every line of an import before anything is written:
/// one bad line rejects the batch. Lines keep their bytes (minus `\r`).
fn read_import(source: &std::path::Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut bytes = Vec::new();
    if source.as_os_str() == "-" {
        std::io::stdin().lock().read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(source)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .with_context(|| format!("could not read {}", source.display()))
            .map_err(|e| usage(format!("{e:#}")))?;
    }
    let now = chrono::Utc::now();
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for (number, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match Message::parse(line) {
            Ok(message) => match check_not_future(&message.ts, now) {
                Ok(()) => lines.push(line.to_vec()),
                Err(why) => errors.push(format!("line {}: {why}", number + 1)),
            },
            Err(why) => errors.push(format!("line {}: {why}", number + 1)),
        }
    }
    if !errors.is_empty() {
        let shown: Vec<_> = errors.iter().take(5).cloned().collect();
        let more = errors.len().saturating_sub(shown.len());
        return Err(usage(format!(
            "{}: {} invalid line(s), nothing was imported:\n  {}{}",
            source.display(),
            errors.len(),
            shown.join("\n  "),
            if more > 0 {
                format!("\n  … and {more} more")
            } else {
                String::new()
            }
        )));
    }
    if lines.is_empty() {
        return Err(usage(format!(
            "{}: no message lines to import",
            source.display()
        )));
    }
    Ok(lines)
}

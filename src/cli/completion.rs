//! Values for shell completion, read from the state dir at TAB time: user
//! ids, conversation keys, topic slugs (`maintain --only` tasks are a
//! `ValueEnum`: clap completes them itself).
//!
//! clap's completion engine calls these while the shell waits, with the
//! words typed so far as the process's arguments (after `--`), not yet
//! parsed: the state dir is taken from `--state-dir` among them, else
//! from `CLAUDE_SESSION_STATE_DIR`, else from `--channel` among them (as
//! a command chooses it). Anything that goes wrong (no state dir,
//! unreadable config) completes nothing and prints nothing: a TAB must
//! never spill an error into the command line being typed.

use std::ffi::OsString;
use std::path::PathBuf;

use clap_complete::engine::CompletionCandidate;

use crate::layout::{ChannelName, Layout};
use crate::memory::{ltm, owners};
use crate::state::State;

/// People: every user id with memory, and group-only senders.
pub fn users() -> Vec<CompletionCandidate> {
    from_state(|state| {
        Ok(owners::people(state)?
            .into_iter()
            .map(|id| id.to_string())
            .collect())
    })
}

/// Group and thread conversation keys.
pub fn conversations() -> Vec<CompletionCandidate> {
    from_state(|state| {
        Ok(owners::owners(state)?
            .into_iter()
            .filter_map(|o| o.key.conversation_key())
            .map(|key| key.as_str().to_owned())
            .collect())
    })
}

/// Topic note slugs.
pub fn topics() -> Vec<CompletionCandidate> {
    from_state(|state| ltm::markdown_names(&state.layout.topics_dir()))
}

fn from_state(list: impl Fn(&State) -> anyhow::Result<Vec<String>>) -> Vec<CompletionCandidate> {
    let Some(dir) = state_dir(std::env::args_os().collect()) else {
        return Vec::new();
    };
    if !crate::layout::Layout::new(dir.clone())
        .sessions_dir()
        .is_dir()
    {
        return Vec::new();
    }
    // Warnings (a config key unknown) would land in the terminal mid-line.
    crate::diag::set_verbosity(-1);
    let origin = crate::state::dir::EffectiveStateDir {
        path: dir,
        source: crate::state::dir::StateDirSource::Flag,
    };
    let Ok(state) = State::open(origin, None) else {
        return Vec::new();
    };
    list(&state)
        .unwrap_or_default()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

/// The state dir the command line being completed names, as `run` would
/// choose it: `--state-dir` (or its variable) first, then `--channel`.
fn state_dir(args: Vec<OsString>) -> Option<PathBuf> {
    let words: Vec<String> = args
        .into_iter()
        .skip_while(|a| a != "--")
        .skip(1)
        .filter_map(|a| a.into_string().ok())
        .collect();
    let value = |flag: &str| -> Option<String> {
        let prefix = format!("{flag}=");
        let mut found = None;
        for (i, word) in words.iter().enumerate() {
            if word == flag {
                found = words.get(i + 1).cloned();
            } else if let Some(v) = word.strip_prefix(&prefix) {
                found = Some(v.to_owned());
            }
        }
        found.filter(|v| !v.is_empty())
    };
    if let Some(dir) = value("--state-dir") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("CLAUDE_SESSION_STATE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let channel = ChannelName::new(&value("--channel")?).ok()?;
    Some(Layout::channel_state_dir(&channel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        ["claude-session", "--"]
            .iter()
            .chain(words)
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn the_state_dir_comes_from_the_words_typed() {
        assert_eq!(
            state_dir(args(&[
                "claude-session",
                "--state-dir",
                "/s",
                "session",
                "show",
                "--user",
                ""
            ])),
            Some(PathBuf::from("/s"))
        );
        assert_eq!(
            state_dir(args(&["claude-session", "--state-dir=/t", "session"])),
            Some(PathBuf::from("/t"))
        );
        assert_eq!(
            state_dir(args(&["claude-session", "--channel", "slack", "session"])),
            Some(PathBuf::from(".claude/channels/slack"))
        );
        assert_eq!(
            state_dir(args(&["claude-session", "--channel", "../x"])),
            None
        );
    }
}

//! Which state dir a command works on, and why: `--state-dir` (or its
//! environment variable), else `--channel`'s seed folder, else the
//! platform's state directory for the user. Resolved after parsing (clap
//! does no I/O); `doctor` and `context --show-config` print the result.
//!
//! The rule of creation: only the two implicit places, the platform
//! default and `--channel`'s seed folder, are created on first use (by a
//! command that writes). A state dir named explicitly (`--state-dir` or
//! `CLAUDE_SESSION_STATE_DIR`) must already be one, made once by
//! `claude-session init DIR`: a vanished mount, a mount that failed at boot
//! or a typo then fails loudly (exit 3) and nothing is created in the empty
//! folder. A command that only reads or maintains never creates one.
//!
//! Also the probes `doctor` makes of a state dir: its file system, its
//! folder's mode, and a write of one temporary file.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Exit, failure, usage};
use crate::layout::{ChannelName, Layout};

/// The environment variable `--state-dir` also reads.
pub const STATE_DIR_ENV: &str = "CLAUDE_SESSION_STATE_DIR";

/// Where the effective state dir came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateDirSource {
    /// `--state-dir DIR`.
    Flag,
    /// `CLAUDE_SESSION_STATE_DIR`.
    Env,
    /// `--channel NAME`: `./.claude/channels/NAME`.
    Channel,
    /// Nothing given: `$XDG_STATE_HOME/claude-session`.
    XdgStateHome,
    /// Nothing given, no `XDG_STATE_HOME`: `~/.local/state/claude-session`.
    Home,
}

impl fmt::Display for StateDirSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Flag => "--state-dir",
            Self::Env => STATE_DIR_ENV,
            Self::Channel => "--channel (./.claude/channels/NAME)",
            Self::XdgStateHome => "the default ($XDG_STATE_HOME/claude-session)",
            Self::Home => "the default (~/.local/state/claude-session)",
        })
    }
}

/// The state dir a command works on, and its source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EffectiveStateDir {
    pub path: PathBuf,
    pub source: StateDirSource,
}

impl EffectiveStateDir {
    /// Whether `sessions/` (or the broker logs' `logs/`) exists in it: a
    /// state dir somebody has used, not a typo.
    pub fn in_use(&self) -> bool {
        let layout = Layout::new(&self.path);
        layout.sessions_dir().is_dir() || layout.logs_dir().is_dir()
    }

    /// Whether a writing command may create this state dir on first use:
    /// only the implicit places (the default and `--channel`); an explicit
    /// one must be made by `init`.
    pub fn created_on_first_use(&self) -> bool {
        !matches!(self.source, StateDirSource::Flag | StateDirSource::Env)
    }

    /// What to check when the state dir turns out not to exist.
    fn likely_fix(&self) -> String {
        match self.source {
            StateDirSource::Flag => format!(
                "check the --state-dir path (is its file system mounted?); a new state dir \
                 is made once with `claude-session init {}`",
                self.path.display()
            ),
            StateDirSource::Env => format!(
                "check {STATE_DIR_ENV} (is its file system mounted?); a new state dir is \
                 made once with `claude-session init {}`",
                self.path.display()
            ),
            StateDirSource::Channel => format!(
                "--channel is relative to the current folder ({}): run from the folder \
                 that holds .claude/channels/, or pass --state-dir with an absolute path",
                std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|_| "unknown".into())
            ),
            StateDirSource::XdgStateHome | StateDirSource::Home => format!(
                "no --state-dir, {STATE_DIR_ENV} or --channel was given; pass the bot's state dir"
            ),
        }
    }

    /// Refuse a state dir nobody has written (no `sessions/`): exit 3,
    /// naming the path, where it came from and what to check.
    pub fn require_in_use(&self) -> anyhow::Result<()> {
        if self.in_use() {
            return Ok(());
        }
        Err(failure(
            Exit::State,
            format!(
                "no state dir at {} (from {}): it has no sessions/ (nor logs/) folder; {}. \
                 only the default state dir and --channel's folder are created on first use",
                self.path.display(),
                self.source,
                self.likely_fix()
            ),
        ))
    }
}

/// The state dir from the parsed flags and the environment. `var` reads an
/// environment variable (the process's own in `main`, a map in tests).
pub fn resolve(
    state_dir: Option<&Path>,
    channel: Option<&ChannelName>,
    var: impl Fn(&str) -> Option<OsString>,
) -> anyhow::Result<EffectiveStateDir> {
    if let Some(dir) = state_dir {
        if dir.as_os_str().is_empty() {
            return Err(usage(format!(
                "--state-dir (or {STATE_DIR_ENV}) is empty; give a folder"
            )));
        }
        // clap fills the flag from the variable: same value, no flag given.
        let source = if var(STATE_DIR_ENV).as_deref() == Some(dir.as_os_str()) {
            StateDirSource::Env
        } else {
            StateDirSource::Flag
        };
        return Ok(EffectiveStateDir {
            path: dir.to_owned(),
            source,
        });
    }
    if let Some(channel) = channel {
        return Ok(EffectiveStateDir {
            path: Layout::channel_state_dir(channel),
            source: StateDirSource::Channel,
        });
    }
    default_state_dir(var)
}

/// The platform's state directory for the user, per the XDG base directory
/// spec (a relative `XDG_STATE_HOME` is ignored, as the spec says).
pub fn default_state_dir(
    var: impl Fn(&str) -> Option<OsString>,
) -> anyhow::Result<EffectiveStateDir> {
    if let Some(xdg) = var("XDG_STATE_HOME").map(PathBuf::from)
        && xdg.is_absolute()
    {
        return Ok(EffectiveStateDir {
            path: xdg.join("claude-session"),
            source: StateDirSource::XdgStateHome,
        });
    }
    match var("HOME").map(PathBuf::from) {
        Some(home) if home.is_absolute() => Ok(EffectiveStateDir {
            path: home.join(".local").join("state").join("claude-session"),
            source: StateDirSource::Home,
        }),
        _ => Err(usage(format!(
            "no state dir given and no HOME to put the default one in: pass --state-dir DIR \
             (or set {STATE_DIR_ENV}), or --channel NAME for ./.claude/channels/NAME"
        ))),
    }
}

/// [`resolve`] with the process's own environment.
pub fn resolve_from_env(
    state_dir: Option<&Path>,
    channel: Option<&ChannelName>,
) -> anyhow::Result<EffectiveStateDir> {
    resolve(state_dir, channel, |name| std::env::var_os(name))
}

// --- checks for `doctor` -----------------------------------------------------

/// The file system a state dir is on (the nearest folder that exists).
pub fn file_system(dir: &Path) -> std::io::Result<crate::store::filesystem::FileSystem> {
    crate::store::filesystem::identify(dir)
}

/// The permission bits of a folder (`0o700`), for the check that chat
/// logs are private.
pub fn folder_mode(dir: &Path) -> std::io::Result<u32> {
    use std::os::unix::fs::PermissionsExt as _;
    Ok(std::fs::metadata(dir)?.permissions().mode() & 0o777)
}

/// Create and remove one file in `dir`, named as this tool's temporary
/// files (so an interrupted probe is swept by prune). Returns the mode
/// the file got: what the umask gives every file written there.
pub fn probe_write(dir: &Path) -> std::io::Result<u32> {
    use std::os::unix::fs::PermissionsExt as _;
    let probe = tempfile::Builder::new()
        .prefix(".doctor-")
        .suffix(crate::store::atomic::TEMP_SUFFIX)
        .tempfile_in(dir)?;
    let mode = probe
        .as_file()
        .metadata()
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0);
    drop(probe);
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn flag_beats_channel_and_default() {
        let channel = ChannelName::new("slack").unwrap();
        let got = resolve(Some(Path::new("/srv/bot")), Some(&channel), env(&[])).unwrap();
        assert_eq!(got.path, Path::new("/srv/bot"));
        assert_eq!(got.source, StateDirSource::Flag);
        let got = resolve(
            Some(Path::new("/srv/bot")),
            None,
            env(&[(STATE_DIR_ENV, "/srv/bot")]),
        )
        .unwrap();
        assert_eq!(got.source, StateDirSource::Env);
    }

    #[test]
    fn channel_is_the_seed_folder() {
        let channel = ChannelName::new("line").unwrap();
        let got = resolve(None, Some(&channel), env(&[("HOME", "/home/k")])).unwrap();
        assert_eq!(got.path, Path::new(".claude/channels/line"));
        assert_eq!(got.source, StateDirSource::Channel);
    }

    #[test]
    fn default_follows_xdg_then_home() {
        let got = resolve(
            None,
            None,
            env(&[("XDG_STATE_HOME", "/x/state"), ("HOME", "/home/k")]),
        )
        .unwrap();
        assert_eq!(got.path, Path::new("/x/state/claude-session"));
        assert_eq!(got.source, StateDirSource::XdgStateHome);
        let got = resolve(
            None,
            None,
            env(&[("XDG_STATE_HOME", "relative"), ("HOME", "/home/k")]),
        )
        .unwrap();
        assert_eq!(got.path, Path::new("/home/k/.local/state/claude-session"));
        assert_eq!(got.source, StateDirSource::Home);
        assert!(resolve(None, None, env(&[])).is_err());
    }

    #[test]
    fn an_empty_flag_is_a_usage_error() {
        let err = resolve(Some(Path::new("")), None, env(&[])).unwrap_err();
        assert_eq!(crate::error::exit_code_of(&err), Exit::Usage);
    }
}

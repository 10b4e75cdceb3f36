//! An opened state dir: its layout, its config, the channel name, the
//! clock, and the locks that guard it. Opening reads; it creates nothing.

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::layout::{ChannelName, Layout, UserId};
use crate::state_dir::EffectiveStateDir;
use crate::store::lock::FileLock;

#[derive(Debug, Clone)]
pub struct State {
    pub layout: Layout,
    pub config: Config,
    /// `--channel`, recorded on message lines when no `--source` is given.
    pub channel: Option<ChannelName>,
    /// Which state dir this is and why (flag, environment, default).
    pub origin: EffectiveStateDir,
    /// What time it is, for every rule below the commands that needs it.
    pub clock: Clock,
}

/// Where the time comes from: set where the state dir is opened, so no
/// rule reads the system's clock behind its caller's back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The system's clock.
    System,
    /// Always this instant (tests).
    Fixed(DateTime<Utc>),
}

impl Clock {
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Clock::System => Utc::now(),
            Clock::Fixed(at) => *at,
        }
    }
}

impl State {
    pub fn open(origin: EffectiveStateDir, channel: Option<ChannelName>) -> anyhow::Result<Self> {
        let layout = Layout::new(&origin.path);
        let config = Config::load(&layout.config_file())?;
        // A stale handle on a shared file system is retried as long as a
        // lock is waited for.
        crate::store::shared::set_stale_retry(config.lock_timeout());
        Ok(Self {
            layout,
            config,
            channel,
            origin,
            clock: Clock::System,
        })
    }

    /// Make `origin` a state dir (`claude-session init`): its folder and
    /// `sessions/`, each `0700`. Whether it was made now (`false`: it was
    /// one already, and nothing changed).
    pub fn init(origin: &EffectiveStateDir) -> anyhow::Result<bool> {
        if origin.in_use() {
            return Ok(false);
        }
        crate::store::fs::ensure_dir(Layout::new(&origin.path).sessions_dir())?;
        Ok(true)
    }

    pub fn fsync(&self) -> bool {
        self.config.durability.fsync
    }

    /// The exclusive lock over every file of one user. Held for
    /// milliseconds: never across an LLM call. Every change to a user's
    /// files takes it, so here the user's folders are checked for links
    /// (nothing is written or removed through one).
    pub fn lock_user(&self, user: &UserId) -> anyhow::Result<FileLock> {
        crate::store::fs::refuse_linked_dirs(&self.layout.owned_dirs(user))?;
        FileLock::acquire(
            &self.layout.user_lock_file(user),
            self.config.lock_timeout(),
            &format!("user {user}"),
        )
    }

    /// The lock of a `maintain` pass, if no other pass holds it: one pass
    /// at a time (a second, overlapping run does nothing).
    pub fn try_lock_maintain_pass(&self) -> anyhow::Result<Option<FileLock>> {
        FileLock::try_acquire(&self.layout.maintain_lock_file())
    }

    /// The lock over `ltm/index.json`.
    pub fn lock_index(&self) -> anyhow::Result<FileLock> {
        FileLock::acquire(
            &self.layout.index_lock_file(),
            self.config.lock_timeout(),
            "the LTM index",
        )
    }
}

//! An opened state dir: its layout, its config, the channel name, and the
//! locks that guard it. Opening reads; it creates nothing.

use std::path::PathBuf;

use crate::config::Config;
use crate::layout::{ChannelName, Layout, UserId};
use crate::store::lock::FileLock;

#[derive(Debug, Clone)]
pub struct State {
    pub layout: Layout,
    pub config: Config,
    /// `--channel`, recorded on message lines when no `--source` is given.
    pub channel: Option<ChannelName>,
}

impl State {
    pub fn open(state_dir: PathBuf, channel: Option<ChannelName>) -> anyhow::Result<Self> {
        let layout = Layout::new(state_dir);
        let config = Config::load(&layout.config_file())?;
        // A stale handle on a shared file system is retried as long as a
        // lock is waited for.
        crate::store::shared::set_stale_retry(config.lock_timeout());
        Ok(Self {
            layout,
            config,
            channel,
        })
    }

    pub fn fsync(&self) -> bool {
        self.config.durability.fsync
    }

    /// The exclusive lock over every file of one user. Held for
    /// milliseconds: never across an LLM call.
    pub fn lock_user(&self, user: &UserId) -> anyhow::Result<FileLock> {
        FileLock::acquire(
            &self.layout.user_lock_file(user),
            self.config.lock_timeout(),
            &format!("user {user}"),
        )
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

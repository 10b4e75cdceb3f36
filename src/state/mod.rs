//! An opened state dir: its layout, its config, the channel name, the
//! clock, and the locks that guard it. Opening reads; it creates nothing.

pub mod dir;

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::layout::{ChannelName, Layout, MemoryKey};
use crate::state::dir::EffectiveStateDir;
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

    /// A person's lock: [`State::lock_owner`] of their memory.
    pub fn lock_person(&self, person: &crate::layout::UserId) -> anyhow::Result<OwnerLock> {
        self.lock_owner(&MemoryKey::person(person))
    }

    /// The exclusive lock over every file of one owner (a person's or a
    /// conversation's memory). Held for milliseconds: never across an LLM
    /// call. Every change to an owner's files takes it, so here the owner's folders are checked for links
    /// (nothing is written or removed through one). The one place an
    /// [`OwnerLock`] is made.
    pub fn lock_owner(&self, owner: &MemoryKey) -> anyhow::Result<OwnerLock> {
        crate::store::fs::refuse_linked_dirs(&self.layout.owned_dirs(owner))?;
        let file = FileLock::acquire(
            &self.layout.user_lock_file(owner),
            self.config.lock_timeout(),
            &format!("user {owner}"),
        )?;
        Ok(OwnerLock {
            file,
            owner: owner.clone(),
        })
    }

    /// The lock of a `maintain` pass, if no other pass holds it: one pass
    /// at a time (a second, overlapping run does nothing).
    pub fn try_lock_maintain_pass(&self) -> anyhow::Result<Option<FileLock>> {
        FileLock::try_acquire(&self.layout.maintain_lock_file())
    }

    /// The lock over `ltm/index.json` (and the topic notes it indexes).
    pub fn lock_index(&self) -> anyhow::Result<IndexLock> {
        FileLock::acquire(
            &self.layout.index_lock_file(),
            self.config.lock_timeout(),
            "the LTM index",
        )
        .map(|file| IndexLock { _file: file })
    }
}

/// Proof that this process holds one owner's lock (a person's or a
/// conversation's), and whose: what every `*_locked` function takes
/// instead of the owner's id, so that calling one without the lock, or
/// with another owner's lock, does not compile. Made only by
/// [`State::lock_owner`]; released when dropped.
///
/// An append without the lock does not compile:
///
/// ```compile_fail
/// use claude_session::{layout::MemoryKey, memory::stm, state::State};
/// fn log(state: &State, user: &MemoryKey) -> anyhow::Result<()> {
///     stm::append_locked(state, user, &[])
/// }
/// ```
///
/// With it, it does:
///
/// ```
/// use claude_session::{layout::MemoryKey, memory::stm, state::State};
/// fn log(state: &State, user: &MemoryKey) -> anyhow::Result<()> {
///     let lock = state.lock_owner(user)?;
///     stm::append_locked(state, &lock, &[])
/// }
/// ```
#[derive(Debug)]
pub struct OwnerLock {
    file: FileLock,
    owner: MemoryKey,
}

impl OwnerLock {
    /// Whose files this lock guards.
    pub fn owner(&self) -> &MemoryKey {
        &self.owner
    }

    /// The person whose lock this is: what a profile's `*_locked`
    /// functions need. A conversation's lock is refused (it has no
    /// profile): a caller's mistake, not a user's.
    pub fn person(&self) -> anyhow::Result<crate::layout::UserId> {
        self.owner.person_id().ok_or_else(|| {
            anyhow::anyhow!(
                "{} is a conversation's memory, which has no profile (a bug: please report it)",
                self.owner
            )
        })
    }

    /// The lock file.
    pub fn path(&self) -> &std::path::Path {
        self.file.path()
    }

    /// Remove the lock file while holding it (erasing the owner).
    pub fn remove(self) -> anyhow::Result<()> {
        self.file.remove()
    }
}

/// Proof that this process holds the lock of `ltm/index.json`: what the
/// index's `*_locked` functions take. Made only by [`State::lock_index`].
#[derive(Debug)]
pub struct IndexLock {
    _file: FileLock,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An owner's lock says whose it is, and excludes a second holder of
    /// the same owner only.
    #[test]
    fn an_owner_lock_names_its_owner_and_excludes_that_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sessions")).unwrap();
        std::fs::write(
            dir.path().join("sessions/config.json"),
            r#"{"durability":{"lockTimeoutMs":50}}"#,
        )
        .unwrap();
        let origin = EffectiveStateDir {
            path: dir.path().to_owned(),
            source: crate::state::dir::StateDirSource::Flag,
        };
        let state = State::open(origin, None).unwrap();
        let u1 = MemoryKey::person(&crate::layout::UserId::new("U1").unwrap());
        let lock = state.lock_owner(&u1).unwrap();
        assert_eq!(lock.owner(), &u1);
        let other = state
            .lock_owner(&MemoryKey::person(
                &crate::layout::UserId::new("U2").unwrap(),
            ))
            .unwrap();
        assert_eq!(other.owner().as_str(), "U2");
        let err = state.lock_owner(&u1).unwrap_err();
        assert_eq!(
            crate::error::exit_code_of(&err),
            crate::error::Exit::LockTimeout
        );
        drop(lock);
        assert_eq!(state.lock_owner(&u1).unwrap().owner(), &u1);
    }
}

//! Exit codes: part of the interface brokers program against.
//!
//! Errors travel as `anyhow::Error`. Where the exit code matters, the error
//! carries a [`Failure`] (or a typed error such as a lock timeout)
//! somewhere in its chain; `main` looks for the first one and exits with
//! its code. An error without one is an I/O or state
//! problem (exit 3), which is what an unexpected `std::io::Error` is.

use std::fmt;

/// Every exit code the tool uses. Documented in the README and the man page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Success = 0,
    /// 2: bad arguments or invalid input (ids, message text, config values).
    Usage = 2,
    /// 3: the state dir could not be read or written (I/O, corrupt file).
    State = 3,
    /// 4: another process held a lock past the deadline.
    LockTimeout = 4,
    /// 5: the `claude` program was not found.
    ClaudeNotFound = 5,
    /// 6: `claude` ran and failed for a reason a retry will not fix (auth,
    /// a bad request, output that is not a reply).
    ClaudeFailed = 6,
    /// 7: a configured spending budget is used up; no call was made.
    OverBudget = 7,
    /// 9: not found: a read or admin command named a user or conversation
    /// that has nothing stored (a typo must not look like an empty
    /// history), a profile or a topic note that is not there.
    UnknownUser = 9,
    /// 75: `claude` is unavailable for now (rate limit, overload, a server
    /// error, the network): a retry later may work (`EX_TEMPFAIL`).
    ClaudeUnavailable = 75,
    /// 124: `claude` did not answer in time (as `timeout(1)`).
    ClaudeTimeout = 124,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }

    /// Every exit code, in order.
    pub const ALL: [Exit; 10] = [
        Self::Success,
        Self::Usage,
        Self::State,
        Self::LockTimeout,
        Self::ClaudeNotFound,
        Self::ClaudeFailed,
        Self::OverBudget,
        Self::UnknownUser,
        Self::ClaudeUnavailable,
        Self::ClaudeTimeout,
    ];

    /// The variant of an exit code (as recorded by another process).
    pub fn from_code(code: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|exit| exit.code() == code)
    }
}

/// An error with a known exit code. Put it at the root of an error chain;
/// `.context(...)` layers above it keep the code.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// A usage error: the caller gave something we refuse.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    failure(Exit::Usage, message)
}

pub fn failure(exit: Exit, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Failure {
        exit,
        message: message.into(),
    })
}

/// The exit code an error should end the process with: the first
/// [`Failure`] (or lock timeout) in its chain says.
pub fn exit_code_of(err: &anyhow::Error) -> Exit {
    err.chain()
        .find_map(|cause| {
            if let Some(failure) = cause.downcast_ref::<Failure>() {
                return Some(failure.exit);
            }
            cause
                .downcast_ref::<LockTimeout>()
                .map(|_| Exit::LockTimeout)
        })
        .unwrap_or(Exit::State)
}

/// True when the error is a closed stdout (`claude-session … | head`):
/// not a failure worth a message.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A lock another process held past the deadline (exit 4; raised by
/// `store::lock`, defined here so `error` depends on no layer). A caller that
/// waits for something other than a lock's usual milliseconds (a message
/// being answered) looks for it and says what it waited for.
#[derive(Debug)]
pub struct LockTimeout {
    /// What the lock guards ("user U123").
    pub what: String,
    pub path: std::path::PathBuf,
    pub waited: std::time::Duration,
}

impl std::fmt::Display for LockTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the lock of {} ({}) is held by another process and was not released within \
             {:.1} s; retry later, or raise durability.lockTimeoutMs in config.json if this \
             is normal load",
            self.what,
            self.path.display(),
            self.waited.as_secs_f64()
        )
    }
}

impl std::error::Error for LockTimeout {}

#[cfg(test)]
mod tests {
    use super::Exit;

    /// Every exit code comes back from `from_code` (a failure recorded for
    /// waiting redeliveries keeps its code: 75 stays "retry later").
    #[test]
    fn every_exit_round_trips_through_its_code() {
        // A new variant fails to compile here: add it to `Exit::ALL`.
        let listed = |exit: Exit| match exit {
            Exit::Success
            | Exit::Usage
            | Exit::State
            | Exit::LockTimeout
            | Exit::ClaudeNotFound
            | Exit::ClaudeFailed
            | Exit::OverBudget
            | Exit::UnknownUser
            | Exit::ClaudeUnavailable
            | Exit::ClaudeTimeout => exit,
        };
        for exit in Exit::ALL {
            assert_eq!(Exit::from_code(listed(exit).code()), Some(exit));
        }
    }
}

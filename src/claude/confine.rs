//! The second wall: claude's whole process tree confined by Landlock, so
//! that on the day a CLI finds a new way to act on chat text, what it can
//! reach is its own install, the system's programs, libraries and
//! certificates, and its private folder — not the state dir, the broker's
//! tree, `$HOME`, or other processes' `/proc` entries.
//!
//! The ruleset is built here, in the parent, before the child is forked:
//! the child's `pre_exec` hook only makes system calls (see
//! [`crate::claude::supervise`]), as nothing else is safe between fork and exec:
//! it marks inherited descriptors close-on-exec, adds the rule for its own
//! `/proc` entry, sets no-new-privileges and applies the ruleset. Landlock is inherited by everything claude starts (its Bash tool,
//! an MCP server) and cannot be lifted by them.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};

use crate::error::{Exit, failure};

/// `ask.confinement`: the config's value, named for what it is here.
pub use crate::config::Confinement as Mode;

/// The access rights asked of the kernel: every file-system right up to
/// ABI 5 (Linux 6.10), so a right it does not know is simply not handled
/// on an older kernel (best effort) rather than refused.
const ABI_WANTED: ABI = ABI::V5;

/// Where the system keeps what any program needs to run: programs,
/// libraries, certificates, name service and time zone files, devices.
/// `/proc` is left out: other processes' entries (their argv, their
/// working folder) are no business of claude's; the few files of it node
/// reads for itself are listed one by one, and its own entry is added in
/// the child (see [`crate::claude::supervise::Landlock`]).
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/crypto-policies",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/nsswitch.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/locale.alias",
    "/etc/timezone",
    "/etc/os-release",
    "/etc/bash.bashrc",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/inputrc",
    "/usr/lib/os-release",
    "/proc/sys/vm",
    "/proc/sys/kernel/random",
    "/sys/kernel/mm/transparent_hugepage",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/version",
    "/proc/loadavg",
    "/proc/uptime",
    "/sys/devices/system/cpu",
    "/sys/fs/cgroup",
    "/dev/urandom",
    "/dev/random",
];

/// Devices a program writes to (a shell's `2>/dev/null`).
const SYSTEM_WRITE: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// What one call may reach beyond the system's files.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// Read (and execute) beneath these: claude's install, node's, ours.
    pub read: Vec<PathBuf>,
    /// Read and write beneath these: the call's private folder.
    pub write: Vec<PathBuf>,
}

/// What the kernel offers, as `doctor` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// Landlock is there, at this ABI version.
    Available(i32),
    /// Built into the kernel but not enabled at boot (`lsm=`).
    NotEnabled,
    /// Not in this kernel (older than 5.13, or built without it).
    Missing,
}

/// Ask the kernel which Landlock ABI it has.
pub fn support() -> Support {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // only returns a number; it reads and writes no memory of ours.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    if version >= 1 {
        return Support::Available(version as i32);
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => Support::NotEnabled,
        _ => Support::Missing,
    }
}

/// What to do for one call, given the mode and the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Confine,
    RunUnconfined,
    Refuse,
}

pub fn decide(mode: Mode, support: Support) -> Decision {
    match (mode, support) {
        (Mode::Off, _) => Decision::RunUnconfined,
        (_, Support::Available(_)) => Decision::Confine,
        (Mode::BestEffort, _) => Decision::RunUnconfined,
        (Mode::Required, _) => Decision::Refuse,
    }
}

/// What the child may do with its own `/proc/<pid>` entry: read it.
pub fn own_proc_access() -> u64 {
    AccessFs::from_read(ABI_WANTED).bits()
}

/// The ruleset for one call, ready for the child to apply; `None` where
/// the call runs unconfined. `required` with no Landlock is an error.
pub fn ruleset(mode: Mode, policy: &Policy) -> anyhow::Result<Option<OwnedFd>> {
    let support = support();
    match decide(mode, support) {
        Decision::RunUnconfined => Ok(None),
        Decision::Refuse => Err(refusal(support)),
        Decision::Confine => build(policy).map(Some),
    }
}

fn refusal(support: Support) -> anyhow::Error {
    let why = match support {
        Support::NotEnabled => "Landlock is built into this kernel but not enabled at boot",
        _ => "this kernel has no Landlock (Linux 5.13 or newer has it)",
    };
    failure(
        Exit::ClaudeNotFound,
        format!(
            "ask.confinement is \"required\" but {why}, so claude was not started; \
             enable Landlock (add `landlock` to the kernel's lsm= boot parameter) or set \
             ask.confinement to \"best-effort\""
        ),
    )
}

fn build(policy: &Policy) -> anyhow::Result<OwnedFd> {
    let read = AccessFs::from_read(ABI_WANTED);
    let all = AccessFs::from_all(ABI_WANTED);
    let system_read = SYSTEM_READ.iter().map(Path::new);
    let system_write = SYSTEM_WRITE.iter().map(Path::new);
    let created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        // Signals and abstract Unix sockets only within claude's own tree
        // (ABI 6, Linux 6.12): it cannot stop the broker or reach an X11
        // or containerd socket. Older kernels: files only.
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?
        .create()?
        .add_rules(path_beneath_rules(system_read, read))?
        .add_rules(path_beneath_rules(&policy.read, read))?
        .add_rules(path_beneath_rules(system_write, read | AccessFs::WriteFile))?
        .add_rules(path_beneath_rules(&policy.write, all))?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| anyhow::anyhow!("the kernel refused to create a Landlock ruleset"))
}

/// What of a program's install claude may read and run: the folder its
/// real file is in (an npm install's `node_modules/.bin/claude` links into
/// its package folder; a native install is one file in a folder of
/// versions); only the file itself where that folder would open more than
/// an install (`/`, or a folder holding one of `keep_out`: the state dir,
/// the broker's folder, `$HOME`, as a `CLAUDE_BIN` copied to `/srv/bot/`
/// or `~/` would).
pub fn install_folder(program: &Path, keep_out: &[PathBuf]) -> Option<PathBuf> {
    let real = std::fs::canonicalize(program).ok()?;
    let folder = real.parent()?;
    let too_wide = folder.parent().is_none() || keep_out.iter().any(|p| p.starts_with(folder));
    Some(if too_wide {
        real.clone()
    } else {
        folder.to_path_buf()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decision_follows_the_mode_and_the_kernel() {
        let have = Support::Available(7);
        for missing in [Support::Missing, Support::NotEnabled] {
            assert_eq!(decide(Mode::Required, missing), Decision::Refuse);
            assert_eq!(decide(Mode::BestEffort, missing), Decision::RunUnconfined);
            assert_eq!(decide(Mode::Off, missing), Decision::RunUnconfined);
        }
        assert_eq!(decide(Mode::Required, have), Decision::Confine);
        assert_eq!(decide(Mode::BestEffort, have), Decision::Confine);
        assert_eq!(decide(Mode::Off, have), Decision::RunUnconfined);
    }

    #[test]
    fn required_without_landlock_is_refused_with_what_to_do() {
        let e = refusal(Support::Missing);
        assert_eq!(crate::error::exit_code_of(&e), Exit::ClaudeNotFound);
        let text = format!("{e:#}");
        assert!(text.contains("ask.confinement"), "{text}");
        assert!(text.contains("best-effort"), "{text}");
    }

    #[test]
    fn the_mode_is_spelled_as_the_config_spells_it() {
        for (mode, name) in [
            (Mode::Required, "\"required\""),
            (Mode::BestEffort, "\"best-effort\""),
            (Mode::Off, "\"off\""),
        ] {
            assert_eq!(serde_json::to_string(&mode).unwrap(), name);
            assert_eq!(serde_json::from_str::<Mode>(name).unwrap(), mode);
        }
    }

    #[test]
    fn an_npm_link_resolves_to_its_package_folder() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("node_modules/@anthropic-ai/claude-code");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(package.join("cli.js"), "").unwrap();
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("../@anthropic-ai/claude-code/cli.js", bin.join("claude"))
            .unwrap();
        assert_eq!(
            install_folder(&bin.join("claude"), &[]),
            Some(std::fs::canonicalize(&package).unwrap())
        );
    }

    #[test]
    fn a_program_beside_the_broker_or_the_state_dir_opens_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let broker = std::fs::canonicalize(dir.path()).unwrap();
        let program = broker.join("claude");
        std::fs::write(&program, "").unwrap();
        let state = broker.join("state/sessions/.tmp");
        assert_eq!(install_folder(&program, &[state]), Some(program.clone()));
        assert_eq!(
            install_folder(&program, std::slice::from_ref(&broker)),
            Some(program.clone())
        );
        assert_eq!(
            install_folder(&program, &[PathBuf::from("/elsewhere")]),
            Some(broker)
        );
    }
}

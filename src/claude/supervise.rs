//! Running a child to its end or a deadline: its own process group, a
//! SIGTERM then SIGKILL to the whole tree on timeout, the kernel's
//! parent-death signal, and SIGTERM, SIGINT or SIGHUP sent to us forwarded
//! to every child running. Knows nothing of what the child is: the caller
//! turns a [`RunError`] into its own words.
//!
//! OS calls go through `rustix`; `unsafe` is left only where no safe
//! wrapper exists: installing the signal handler, the handler's own
//! `signal` and `raise`, and the `pre_exec` hook (which also applies a
//! Landlock ruleset the caller built, knowing nothing of what it allows).

use std::ffi::OsString;
use std::io::Write as _;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// At most this many children are supervised at once: the slots of the
/// signal forwarding. `maintain --jobs` is bounded by it, so every call
/// of a pass can be reached by a signal sent to us.
pub const MAX_CHILDREN: usize = 64;

/// How long a child gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How often a streaming run looks whether the child has exited while its
/// stdout stays open.
const POLL: Duration = Duration::from_millis(100);

/// What a child left: how it ended and what it printed.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a run gave no [`Output`].
#[derive(Debug)]
pub enum RunError {
    /// The program could not be started.
    Spawn(std::io::Error),
    /// It ran past the timeout; it and everything it started were stopped.
    TimedOut,
    /// Waiting for it failed.
    Wait(std::io::Error),
}

/// What to start: the program, its whole argv and environment, its
/// working folder, and the Landlock ruleset it runs under, if any.
pub struct Program<'a> {
    pub path: &'a Path,
    pub args: &'a [OsString],
    pub env: &'a [(OsString, OsString)],
    pub cwd: &'a Path,
    /// Applied in the child before `exec`, so the program and all it
    /// starts are confined from their first instruction.
    pub landlock: Option<Landlock<'a>>,
}

/// A Landlock ruleset the caller built, and the rights the child keeps on
/// its own `/proc/<pid>` entry (node reads its `maps` and `cgroup`): that
/// entry has no name before the child exists, so the rule is added in the
/// child, where `/proc/self` is it.
#[derive(Clone, Copy)]
pub struct Landlock<'a> {
    pub ruleset: &'a OwnedFd,
    /// `LANDLOCK_ACCESS_FS_*` bits; 0 for none.
    pub own_proc_access: u64,
}

/// `struct landlock_path_beneath_attr` of `<linux/landlock.h>` (packed).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// In the child, between fork and exec: only system calls, no allocation.
fn apply_landlock(ruleset: i32, own_proc_access: u64) -> std::io::Result<()> {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // A descriptor the broker left open without close-on-exec would pass
    // into the confined tree, and Landlock checks no open file: none does.
    // SAFETY: three integers; the kernel only marks descriptors.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC);
    }
    if own_proc_access != 0 {
        let own = rustix::fs::open(
            c"/proc/self",
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        let attr = PathBeneathAttr {
            allowed_access: own_proc_access,
            parent_fd: own.as_raw_fd(),
        };
        // SAFETY: `attr` is the kernel's packed struct, alive for the call.
        let added = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                LANDLOCK_RULE_PATH_BENEATH,
                &raw const attr,
                0u32,
            )
        };
        if added != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // The kernel applies a ruleset only to a process that can gain no
    // privileges (no set-uid program undoes it).
    rustix::thread::set_no_new_privs(true)?;
    // SAFETY: two integers; the kernel reads no memory of ours.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Run a program to its end or the timeout. With `on_line`, stdout is
/// handed over line by line as it arrives (and not kept); the timeout
/// covers the whole run either way.
pub fn run_with_timeout(
    program: &Program<'_>,
    stdin: &[u8],
    timeout: Duration,
    on_line: Option<&mut dyn FnMut(&str)>,
) -> Result<Output, RunError> {
    let started = Instant::now();
    let deadline = started + timeout;
    let mut child = command(program).spawn().map_err(RunError::Spawn)?;
    let group = i32::try_from(child.id()).expect("a pid fits in an i32");
    let _registered = GroupGuard::register(group);

    let mut child_stdin = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // A child that exits without reading its stdin closes the pipe: fine.
    let writer = std::thread::spawn(move || {
        let _ = child_stdin.write_all(&input);
    });
    let stdout_pipe = child.stdout.take().expect("stdout is piped");
    let stderr = read_in_background(child.stderr.take().expect("stderr is piped"));

    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });

    let (stdout, exited) = match on_line {
        None => (read_in_background(stdout_pipe), None),
        Some(on_line) => {
            let exited = follow_lines(stdout_pipe, on_line, deadline, group, &done_rx)?;
            // Every line was handed over; nothing is left to collect.
            let (tx, rx) = mpsc::channel();
            let _ = tx.send(Vec::new());
            (rx, exited)
        }
    };

    let status = match exited {
        Some(status) => status,
        None => match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(status) => status,
            Err(_) => return Err(stop_group(group, &done_rx)),
        },
    }
    .map_err(RunError::Wait)?;
    // What the child started and left behind would hold our pipes open.
    kill_group(group, Signal::KILL);
    let _ = writer.join();
    let remaining = timeout.saturating_sub(started.elapsed()).max(KILL_GRACE);
    let stdout = stdout.recv_timeout(remaining).unwrap_or_default();
    let stderr = stderr.recv_timeout(KILL_GRACE).unwrap_or_default();
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// The child's command: `program` with its environment only, in its own
/// process group, with pipes, and (on Linux) the hook that makes it die
/// with us and confines it.
fn command(program: &Program<'_>) -> Command {
    let mut command = Command::new(program.path);
    command
        .args(program.args)
        .env_clear()
        .envs(program.env.iter().map(|(k, v)| (k, v)))
        .current_dir(program.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // Even a SIGKILL of this process must not leave the child running: the
    // kernel sends it SIGTERM when its parent dies.
    let landlock = program
        .landlock
        .map(|l| (l.ruleset.as_raw_fd(), l.own_proc_access));
    #[cfg(target_os = "linux")]
    // SAFETY: the hook only makes system calls (prctl(2) through rustix,
    // which calls the kernel directly, and landlock_restrict_self(2)),
    // which are async-signal-safe, as pre_exec requires; it allocates
    // nothing. The ruleset's descriptor was made before the fork and is
    // close-on-exec.
    unsafe {
        command.pre_exec(move || {
            let _ = rustix::process::set_parent_process_death_signal(Some(Signal::TERM));
            match landlock {
                Some((ruleset, own_proc_access)) => apply_landlock(ruleset, own_proc_access),
                None => Ok(()),
            }
        });
    }
    command
}

/// Hand each line of the child's stdout to `on_line` as it comes, until
/// the pipe closes or the child has exited (its status, when seen here);
/// at the deadline, stop its tree.
fn follow_lines(
    stdout: std::process::ChildStdout,
    on_line: &mut dyn FnMut(&str),
    deadline: Instant,
    group: i32,
    done_rx: &mpsc::Receiver<std::io::Result<ExitStatus>>,
) -> Result<Option<std::io::Result<ExitStatus>>, RunError> {
    let lines = lines_in_background(stdout);
    let mut exited = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left.min(POLL)) {
            Ok(line) => on_line(&line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) if exited.is_some() => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(status) = done_rx.try_recv() {
                    // The child is done; what it left behind must not hold
                    // stdout open until the deadline.
                    kill_group(group, Signal::KILL);
                    exited = Some(status);
                } else if left.is_zero() {
                    return Err(stop_group(group, done_rx));
                }
            }
        }
    }
    Ok(exited)
}

/// SIGTERM to the child's process tree, SIGKILL after the grace period:
/// the end of a run that ran out of time.
fn stop_group(group: i32, done: &mpsc::Receiver<std::io::Result<ExitStatus>>) -> RunError {
    // A child may start processes in a session of their own (claude's Bash
    // tool does): the group alone would leave those running. Take the whole
    // tree while the child is still alive to link it.
    let tree = descendants(group);
    kill_group(group, Signal::TERM);
    signal_all(&tree, Signal::TERM);
    if done.recv_timeout(KILL_GRACE).is_err() {
        kill_group(group, Signal::KILL);
        let _ = done.recv();
    }
    kill_group(group, Signal::KILL);
    signal_all(&tree, Signal::KILL);
    RunError::TimedOut
}

/// Each line of the pipe (without its line break) as it arrives.
fn lines_in_background(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    use std::io::BufRead as _;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(pipe);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line);
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    if tx.send(text.to_owned()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    rx
}

fn read_in_background(mut pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}

/// Process groups of the children running now, so that a SIGTERM, SIGINT
/// or SIGHUP sent to us (a broker giving up, Ctrl-C) reaches them too: a
/// claude left running would go on costing money for minutes.
static CHILD_GROUPS: [AtomicI32; MAX_CHILDREN] = [const { AtomicI32::new(0) }; MAX_CHILDREN];

/// Registers a child's group while it runs; forgets it when dropped.
struct GroupGuard(Option<usize>);

impl GroupGuard {
    fn register(group: i32) -> Self {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                // SAFETY: `forward` only reads atomics and makes
                // async-signal-safe calls (kill, signal, raise).
                unsafe {
                    libc::signal(signal, forward as *const () as libc::sighandler_t);
                }
            }
        });
        let slot = CHILD_GROUPS.iter().position(|slot| {
            slot.compare_exchange(0, group, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        Self(slot)
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            CHILD_GROUPS[slot].store(0, Ordering::SeqCst);
        }
    }
}

extern "C" fn forward(signal: libc::c_int) {
    for slot in &CHILD_GROUPS {
        // kill(2), async-signal-safe; the group is a child's.
        kill_group(slot.load(Ordering::SeqCst), Signal::TERM);
    }
    // Then die of the signal as we would have without a handler.
    // SAFETY: signal(2) and raise(3) are async-signal-safe.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// A process and its start time (so a reused pid is never signalled).
type Process = (i32, u64);

/// The start time and parent of a process, from `/proc/PID/stat`.
fn stat_of(pid: i32) -> Option<(i32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything: split
    // after the last `)`. Then: state, ppid, …, starttime (22nd field).
    let fields: Vec<&str> = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    Some((fields.get(1)?.parse().ok()?, fields.get(19)?.parse().ok()?))
}

/// Every process below `root` (not `root` itself), whatever its group or
/// session. Linux `/proc`; elsewhere none.
fn descendants(root: i32) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: std::collections::HashMap<i32, Vec<Process>> = Default::default();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some((parent, start)) = stat_of(pid) {
            children.entry(parent).or_default().push((pid, start));
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for &(child, start) in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            found.push((child, start));
            next.push(child);
        }
    }
    found
}

/// Signal each process still the same one (same start time) that was
/// below our child.
fn signal_all(processes: &[Process], signal: Signal) {
    for &(pid, start) in processes {
        if stat_of(pid).is_some_and(|(_, now)| now == start)
            && let Some(pid) = Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

/// Signal a child's process group (`process_group(0)` made the child its
/// leader); 0 (a free slot) or a negative number signals nobody.
fn kill_group(group: i32, signal: Signal) {
    if group > 0
        && let Some(group) = Pid::from_raw(group)
    {
        let _ = rustix::process::kill_process_group(group, signal);
    }
}

//! Running a child to its end or a deadline: its own process group, a
//! SIGTERM then SIGKILL to the whole tree on timeout, the kernel's
//! parent-death signal, and SIGTERM, SIGINT or SIGHUP sent to us forwarded
//! to every child running. Knows nothing of what the child is.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use crate::error::{Exit, failure};

/// How long a child gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How often a streaming call looks whether claude has exited while its
/// stdout stays open.
const POLL: Duration = Duration::from_millis(100);

/// What a child left: how it ended and what it printed.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Run claude to its end or the timeout. With `on_line`, stdout is handed
/// over line by line as it arrives (and not kept); the timeout covers the
/// whole run either way.
pub fn run_with_timeout(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
    stdin: &[u8],
    timeout: Duration,
    on_line: Option<&mut dyn FnMut(&str)>,
) -> anyhow::Result<Output> {
    let started = Instant::now();
    let deadline = started + timeout;
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // Even a SIGKILL of this process must not leave claude running: the
    // kernel sends it SIGTERM when its parent dies.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe, as pre_exec requires.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => failure(
            Exit::ClaudeNotFound,
            format!(
                "could not start claude ({}): {e}; check --claude-bin or CLAUDE_BIN",
                program.display()
            ),
        ),
        _ => anyhow::Error::new(e).context(format!("could not start {}", program.display())),
    })?;
    let group = child.id() as libc::pid_t;
    let _registered = GroupGuard::register(group);

    let mut child_stdin = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // A claude that exits without reading its stdin closes the pipe: fine.
    let writer = std::thread::spawn(move || {
        let _ = child_stdin.write_all(&input);
    });
    let stdout_pipe = child.stdout.take().expect("stdout is piped");
    let stderr = read_in_background(child.stderr.take().expect("stderr is piped"));

    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });

    let mut exited = None;
    let stdout = match on_line {
        None => read_in_background(stdout_pipe),
        Some(on_line) => {
            let lines = lines_in_background(stdout_pipe);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match lines.recv_timeout(left.min(POLL)) {
                    Ok(line) => on_line(&line),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Err(mpsc::RecvTimeoutError::Timeout) if exited.is_some() => break,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if let Ok(status) = done_rx.try_recv() {
                            // claude is done; what it left behind must not
                            // hold stdout open until the deadline.
                            kill_group(group, libc::SIGKILL);
                            exited = Some(status);
                        } else if left.is_zero() {
                            return Err(stop_group(group, &done_rx, timeout));
                        }
                    }
                }
            }
            // Every line was handed over; nothing is left to collect.
            let (tx, rx) = mpsc::channel();
            let _ = tx.send(Vec::new());
            rx
        }
    };

    let status = match exited {
        Some(status) => status,
        None => match done_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(status) => status,
            Err(_) => return Err(stop_group(group, &done_rx, timeout)),
        },
    }
    .context("could not wait for claude")?;
    // What claude started and left behind would hold our pipes open.
    kill_group(group, libc::SIGKILL);
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

/// SIGTERM to claude's process tree, SIGKILL after the grace period: the
/// error of a call that ran out of time.
fn stop_group(
    group: libc::pid_t,
    done: &mpsc::Receiver<std::io::Result<ExitStatus>>,
    timeout: Duration,
) -> anyhow::Error {
    // claude starts its Bash tool in a session of its own: the group alone
    // would leave those running. Take the whole tree while claude is still
    // alive to link it.
    let tree = descendants(group);
    kill_group(group, libc::SIGTERM);
    signal_all(&tree, libc::SIGTERM);
    if done.recv_timeout(KILL_GRACE).is_err() {
        kill_group(group, libc::SIGKILL);
        let _ = done.recv();
    }
    kill_group(group, libc::SIGKILL);
    signal_all(&tree, libc::SIGKILL);
    failure(
        Exit::ClaudeTimeout,
        format!(
            "claude did not answer within {} s and was stopped; raise --timeout \
             or ask.timeoutSeconds if it needs longer",
            timeout.as_secs()
        ),
    )
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
static CHILD_GROUPS: [AtomicI32; 64] = [const { AtomicI32::new(0) }; 64];

/// Registers a child's group while it runs; forgets it when dropped.
struct GroupGuard(Option<usize>);

impl GroupGuard {
    fn register(group: libc::pid_t) -> Self {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                // SAFETY: `forward` only calls async-signal-safe functions
                // (kill, signal, raise) and reads atomics.
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
        let group = slot.load(Ordering::SeqCst);
        if group > 0 {
            // SAFETY: kill(2) is async-signal-safe; the group is a child's.
            unsafe {
                libc::kill(-group, libc::SIGTERM);
            }
        }
    }
    // Then die of the signal as we would have without a handler.
    // SAFETY: signal(2) and raise(3) are async-signal-safe.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// A process and its start time (so a reused pid is never signalled).
type Process = (libc::pid_t, u64);

/// The start time and parent of a process, from `/proc/PID/stat`.
fn stat_of(pid: libc::pid_t) -> Option<(libc::pid_t, u64)> {
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
fn descendants(root: libc::pid_t) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: std::collections::HashMap<libc::pid_t, Vec<Process>> = Default::default();
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

fn signal_all(processes: &[Process], signal: libc::c_int) {
    for &(pid, start) in processes {
        if stat_of(pid).is_some_and(|(_, now)| now == start) {
            // SAFETY: kill(2) on a pid checked to be the same process
            // (same start time) that was below our child.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals that process group; the
    // group is the child's own (process_group(0) made it its leader).
    unsafe {
        libc::kill(-group, signal);
    }
}

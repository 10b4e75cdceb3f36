//! Finding and running `claude -p`: the one place that starts it, for
//! `ask`, compaction and summaries alike.
//!
//! The system prompt goes in a private temporary file and the prompt on
//! stdin, so no command-line size limit applies. The child runs in its own
//! process group: on timeout the whole group (claude and everything it
//! started) gets SIGTERM, then SIGKILL after a grace period.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde_json::Value;

use crate::error::{Exit, failure};

pub mod stream;

/// How long a child gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How often a streaming call looks whether claude has exited while its
/// stdout stays open.
const POLL: Duration = Duration::from_millis(100);

/// How the memory context reaches claude.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemPromptMode {
    /// `--system-prompt-file`: our text is the whole system prompt.
    Replace,
    /// `--append-system-prompt-file`: claude keeps its own and adds ours.
    Append,
}

/// How to run claude: found once per command, used for every call.
#[derive(Debug, Clone)]
pub struct Claude {
    pub program: PathBuf,
    pub model: Option<String>,
    /// Passed through after ours, in order (`--claude-arg`).
    pub extra_args: Vec<String>,
    pub timeout: Duration,
    /// Where the system prompt file goes (`sessions/.tmp/`).
    pub temp_dir: PathBuf,
}

/// What claude answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub usage: Option<Value>,
    pub cost_usd: Option<f64>,
}

/// `--claude-bin` (or `CLAUDE_BIN`, which clap folds into it), else
/// `claude` on `PATH`.
pub fn find(claude_bin: Option<&Path>) -> anyhow::Result<PathBuf> {
    let not_found = |what: String| {
        failure(
            Exit::ClaudeNotFound,
            format!(
                "{what}; install Claude Code (`npm install -g @anthropic-ai/claude-code`) \
                 or point to it with --claude-bin PATH or CLAUDE_BIN"
            ),
        )
    };
    match claude_bin {
        Some(path) if path.as_os_str().is_empty() => {
            Err(not_found("--claude-bin (or CLAUDE_BIN) is empty".into()))
        }
        Some(path) if path.components().count() > 1 => {
            use std::os::unix::fs::PermissionsExt as _;
            match std::fs::metadata(path) {
                Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {
                    Ok(path.to_owned())
                }
                Ok(_) => Err(not_found(format!(
                    "claude program {} is not an executable file",
                    path.display()
                ))),
                Err(_) => Err(not_found(format!(
                    "claude program {} does not exist",
                    path.display()
                ))),
            }
        }
        Some(name) => which::which(name)
            .map_err(|_| not_found(format!("`{}` was not found on PATH", name.display()))),
        None => {
            which::which("claude").map_err(|_| not_found("`claude` was not found on PATH".into()))
        }
    }
}

impl Claude {
    /// The arguments after the program name. The system prompt file is
    /// passed by path, so it must outlive the child.
    fn args(&self, mode: SystemPromptMode, system_prompt_file: Option<&Path>) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["-p", "--output-format", "json", "--no-session-persistence"]
            .iter()
            .map(OsString::from)
            .collect();
        if let Some(file) = system_prompt_file {
            args.push(match mode {
                SystemPromptMode::Replace => "--system-prompt-file".into(),
                SystemPromptMode::Append => "--append-system-prompt-file".into(),
            });
            args.push(file.into());
        }
        if let Some(model) = &self.model {
            args.push("--model".into());
            args.push(model.into());
        }
        args.extend(self.extra_args.iter().map(OsString::from));
        args
    }

    /// One call: `system_prompt` through a private temp file, `prompt` on
    /// stdin.
    pub fn call(
        &self,
        system_prompt: Option<(SystemPromptMode, String)>,
        prompt: &str,
    ) -> anyhow::Result<Reply> {
        let (mode, prompt_file) = match &system_prompt {
            Some((mode, text)) => (*mode, Some(write_prompt_file(&self.temp_dir, text)?)),
            None => (SystemPromptMode::Append, None),
        };
        let output = run_with_timeout(
            &self.program,
            &self.args(mode, prompt_file.as_ref().map(|f| f.path())),
            &[],
            prompt.as_bytes(),
            self.timeout,
            None,
        )?;
        // The temp file goes now, whatever happened; drop removes it.
        drop(prompt_file);
        parse_output(&self.program, output)
    }

    /// [`Claude::call`], with the reply's text handed to `on_text` piece by
    /// piece as claude writes it. The pieces add up to the returned reply's
    /// text (a reply claude wrote after a tool call follows its earlier text
    /// as a new paragraph). A stream that fails midway is an error, as a
    /// failed call is; so is a final reply that differs from what was
    /// handed out.
    pub fn call_streaming(
        &self,
        system_prompt: Option<(SystemPromptMode, String)>,
        prompt: &str,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Reply> {
        let (mode, prompt_file) = match &system_prompt {
            Some((mode, text)) => (*mode, Some(write_prompt_file(&self.temp_dir, text)?)),
            None => (SystemPromptMode::Append, None),
        };
        let mut reader = stream::StreamReader::default();
        let mut on_line = |line: &str| {
            if let Some(piece) = reader.line(line) {
                on_text(&piece);
            }
        };
        let output = run_with_timeout(
            &self.program,
            &streaming_args(self.args(mode, prompt_file.as_ref().map(|f| f.path()))),
            // Without this, a connection lost midway makes claude ask again
            // without streaming and end on a new answer: not the text the
            // chat was shown.
            &[("CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK", "1")],
            prompt.as_bytes(),
            self.timeout,
            Some(&mut on_line),
        );
        drop(prompt_file);
        let mut output = output?;
        let streamed = reader.streamed().to_owned();
        output.stdout = reader.into_stdout();
        let reply = parse_output(&self.program, output)?;
        match stream::ending(&streamed, &reply.text) {
            stream::Ending::Complete => {}
            stream::Ending::Rest(rest) => on_text(&rest),
            stream::Ending::Diverged => {
                return Err(failure(
                    Exit::ClaudeFailed,
                    "claude's final reply is not the text it streamed (it started over); \
                     the reply was not logged",
                ));
            }
        }
        Ok(reply)
    }
}

/// `--output-format json` becomes the event stream, with a `stream_event`
/// per text delta (`--include-partial-messages` needs `--verbose`).
fn streaming_args(mut args: Vec<OsString>) -> Vec<OsString> {
    let format = args
        .iter()
        .position(|a| a == "--output-format")
        .expect("args() passes --output-format")
        + 1;
    args[format] = "stream-json".into();
    args.splice(
        format + 1..format + 1,
        ["--verbose", "--include-partial-messages"].map(OsString::from),
    );
    args
}

fn write_prompt_file(dir: &Path, text: &str) -> anyhow::Result<tempfile::NamedTempFile> {
    crate::store::fs::ensure_dir(dir)?;
    // tempfile creates it 0600 with a unique name, and removes it on drop;
    // the `.*.tmp` name lets prune sweep one a killed process left.
    let mut file = tempfile::Builder::new()
        .prefix(".prompt-")
        .suffix(crate::store::atomic::TEMP_SUFFIX)
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "could not create the system prompt file in {}",
                dir.display()
            )
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .context("could not write the system prompt file")?;
    Ok(file)
}

struct Output {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Run claude to its end or the timeout. With `on_line`, stdout is handed
/// over line by line as it arrives (and not kept); the timeout covers the
/// whole run either way.
fn run_with_timeout(
    program: &Path,
    args: &[OsString],
    env: &[(&str, &str)],
    stdin: &[u8],
    timeout: Duration,
    on_line: Option<&mut dyn FnMut(&str)>,
) -> anyhow::Result<Output> {
    let started = Instant::now();
    let deadline = started + timeout;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(env.iter().copied())
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

/// SIGTERM to claude's group, SIGKILL after the grace period: the error
/// of a call that ran out of time.
fn stop_group(
    group: libc::pid_t,
    done: &mpsc::Receiver<std::io::Result<ExitStatus>>,
    timeout: Duration,
) -> anyhow::Error {
    kill_group(group, libc::SIGTERM);
    if done.recv_timeout(KILL_GRACE).is_err() {
        kill_group(group, libc::SIGKILL);
        let _ = done.recv();
    }
    kill_group(group, libc::SIGKILL);
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

fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals that process group; the
    // group is the child's own (process_group(0) made it its leader).
    unsafe {
        libc::kill(-group, signal);
    }
}

fn parse_output(program: &Path, output: Output) -> anyhow::Result<Reply> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let how = match (output.status.code(), output.status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            _ => "failed".into(),
        };
        let detail = last_chars(stderr.trim(), 4000);
        let detail = if detail.is_empty() {
            last_chars(stdout.trim(), 4000)
        } else {
            detail
        };
        return Err(failure(
            Exit::ClaudeFailed,
            format!("claude ({}) {how}: {detail}", program.display()),
        ));
    }
    let trimmed = stdout.trim();
    if let Ok(Value::Object(envelope)) = serde_json::from_str::<Value>(trimmed)
        && (envelope.contains_key("result") || envelope.get("type") == Some(&Value::from("result")))
    {
        let text = envelope
            .get("result")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if envelope.get("is_error").and_then(Value::as_bool) == Some(true) || text.is_empty() {
            let subtype = envelope
                .get("subtype")
                .and_then(Value::as_str)
                .unwrap_or("error");
            let why = if text.is_empty() { subtype } else { &text };
            return Err(failure(
                Exit::ClaudeFailed,
                format!("claude answered with an error: {}", last_chars(why, 4000)),
            ));
        }
        return Ok(Reply {
            text,
            usage: envelope.get("usage").cloned(),
            cost_usd: envelope.get("total_cost_usd").and_then(Value::as_f64),
        });
    }
    if trimmed.is_empty() {
        return Err(failure(
            Exit::ClaudeFailed,
            format!(
                "claude ({}) printed nothing{}",
                program.display(),
                if stderr.trim().is_empty() {
                    String::new()
                } else {
                    format!(": {}", last_chars(stderr.trim(), 4000))
                }
            ),
        ));
    }
    // Not an envelope: a claude (or stand-in) printing plain text.
    Ok(Reply {
        text: stdout.trim_end().to_owned(),
        ..Reply::default()
    })
}

fn last_chars(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let tail: String = text.chars().skip(count - max).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(code: i32, stdout: &str, stderr: &str) -> Output {
        Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn envelope_gives_reply_usage_and_cost() {
        let reply = parse_output(
            Path::new("claude"),
            output(
                0,
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":0.5,"usage":{"input_tokens":3},"session_id":"s"}"#,
                "",
            ),
        )
        .unwrap();
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.cost_usd, Some(0.5));
        assert_eq!(reply.usage.unwrap()["input_tokens"], 3);
    }

    #[test]
    fn plain_text_is_the_reply() {
        let reply = parse_output(Path::new("claude"), output(0, "just text\n", "")).unwrap();
        assert_eq!(reply.text, "just text");
        // JSON that is not an envelope is text too.
        let reply = parse_output(Path::new("claude"), output(0, "[1, 2]", "")).unwrap();
        assert_eq!(reply.text, "[1, 2]");
    }

    #[test]
    fn failures_carry_the_claude_failed_code() {
        for out in [
            output(1, "", "boom"),
            output(
                0,
                r#"{"type":"result","is_error":true,"result":"rate limited"}"#,
                "",
            ),
            output(0, "   ", ""),
        ] {
            let err = parse_output(Path::new("claude"), out).unwrap_err();
            assert_eq!(
                crate::error::exit_code_of(&err),
                Exit::ClaudeFailed,
                "{err}"
            );
        }
    }

    #[test]
    fn arguments_in_order() {
        let claude = Claude {
            program: "claude".into(),
            model: Some("opus".into()),
            extra_args: vec!["--allowedTools".into(), "Read".into()],
            timeout: Duration::from_secs(1),
            temp_dir: std::env::temp_dir(),
        };
        let args: Vec<String> = claude
            .args(SystemPromptMode::Append, Some(Path::new("/tmp/p.md")))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "-p",
                "--output-format",
                "json",
                "--no-session-persistence",
                "--append-system-prompt-file",
                "/tmp/p.md",
                "--model",
                "opus",
                "--allowedTools",
                "Read"
            ]
        );
    }
}

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

/// The Claude Code release this tool is tested against (the npm package
/// `@anthropic-ai/claude-code` the test suite installs; `doctor` compares).
pub const KNOWN_GOOD_VERSION: &str = "2.1.197";

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
    /// Built-in tools offered to the model (`--tools`); empty: none.
    pub tools: Vec<String>,
    /// Permission rules (`--allowedTools`).
    pub allowed_tools: Vec<String>,
    /// claude's own retries of a failed API request (`CLAUDE_CODE_MAX_RETRIES`).
    pub max_retries: u32,
    /// Names (or `PREFIX*` patterns) of variables passed on besides the
    /// built-in allowlist.
    pub env: Vec<String>,
    /// `--mcp-config` (JSON): the only MCP servers claude may start, given
    /// `--strict-mcp-config`; `None`: none at all.
    pub mcp_config: Option<String>,
}

/// What claude answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    /// Tokens of every request claude made (summed over its per-model usage).
    pub usage: Option<Value>,
    pub cost_usd: Option<f64>,
    /// The `structured_output` of a `--json-schema` call.
    pub structured: Option<Value>,
}

/// Variables claude gets from our environment, whatever the config says:
/// locale, the two headless ways to authenticate (API key, subscription
/// token), the endpoint, and what reaching it through a proxy needs.
/// Everything else (a broker's `SLACK_BOT_TOKEN`, …) stays with us.
pub const ENV_ALLOWLIST: &[&str] = &[
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// What we set for claude on every call: no session-title request or other
/// background traffic (one API request per call), no `CLAUDE.md` from any
/// folder, no auto-memory (it would carry one person's chat into every
/// later call).
const ENV_FIXED: &[(&str, &str)] = &[
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ("CLAUDE_CODE_DISABLE_CLAUDE_MDS", "1"),
    ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
];

/// The private folders one call runs in: `home/` (claude's `HOME` and
/// config dir) and `work/` (its working directory, holding only the
/// attachments of this call). Created 0700 under the system's temporary
/// folder, outside the state dir and the broker's tree; removed on drop.
pub struct Sandbox {
    dir: tempfile::TempDir,
    staged: usize,
}

/// The name of every private folder a call gets (`$TMPDIR/claude-session-call-*`).
const SANDBOX_PREFIX: &str = "claude-session-call-";

/// How old a call's folder must be before another call removes it: far
/// past any timeout, so only what a killed `ask` left behind goes.
const STALE_SANDBOX: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Remove the folders of calls whose `ask` was killed before it could
/// (they hold copies of chat attachments): this user's, a day old.
fn sweep_stale_sandboxes(base: &Path, ours: &Path) {
    use std::os::unix::fs::MetadataExt as _;
    // The new folder is ours: its owner is who we run as.
    let (Ok(entries), Ok(uid)) = (std::fs::read_dir(base), ours.metadata().map(|m| m.uid())) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .starts_with(SANDBOX_PREFIX)
        {
            continue;
        }
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let stale = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > STALE_SANDBOX);
        if meta.is_dir() && meta.uid() == uid && stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Sandbox {
    pub fn new(avoid: &[&Path]) -> anyhow::Result<Self> {
        let mut base = std::env::temp_dir();
        let inside = |base: &Path| {
            avoid.iter().any(|a| {
                let a = std::fs::canonicalize(a).unwrap_or_else(|_| a.to_path_buf());
                let b = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
                b.starts_with(&a)
            })
        };
        // A TMPDIR inside the broker's tree or the state dir would put
        // claude's working directory where it must not be.
        if inside(&base) {
            base = PathBuf::from("/tmp");
        }
        let dir = tempfile::Builder::new()
            .prefix(SANDBOX_PREFIX)
            .tempdir_in(&base)
            .with_context(|| {
                format!(
                    "could not create claude's private folder in {}",
                    base.display()
                )
            })?;
        for sub in ["home", "work"] {
            crate::store::fs::ensure_dir(&dir.path().join(sub))?;
        }
        set_private(dir.path())?;
        sweep_stale_sandboxes(&base, dir.path());
        Ok(Self { dir, staged: 0 })
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Copy a file into the working folder, so claude (with `Read`
    /// enabled) can read it and nothing else; returns the copy's path.
    pub fn stage(&mut self, source: &Path) -> anyhow::Result<PathBuf> {
        let meta = std::fs::metadata(source)
            .with_context(|| format!("could not read attachment {}", source.display()))?;
        if !meta.is_file() {
            anyhow::bail!("attachment {} is not a regular file", source.display());
        }
        self.staged += 1;
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().replace(['/', '\0'], "_"))
            .filter(|n| !n.starts_with('.') && !n.is_empty())
            .unwrap_or_else(|| "attachment".into());
        let target = self.work().join(format!("{}-{name}", self.staged));
        std::fs::copy(source, &target).with_context(|| {
            format!("could not copy attachment {} for claude", source.display())
        })?;
        Ok(target)
    }
}

fn set_private(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    for path in [dir.to_path_buf(), dir.join("home"), dir.join("work")] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("could not make {} private", path.display()))?;
    }
    Ok(())
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
                // Absolute: claude runs in a folder of its own.
                Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {
                    std::path::absolute(path).with_context(|| {
                        format!("could not resolve claude program {}", path.display())
                    })
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

/// One call's request beyond the prompt.
#[derive(Debug, Default)]
pub struct Request<'a> {
    pub system_prompt: Option<(SystemPromptMode, String)>,
    pub prompt: &'a str,
    /// A JSON Schema: claude's structured output (`--json-schema`).
    pub json_schema: Option<&'a str>,
}

impl Claude {
    /// The arguments after the program name. The system prompt file is
    /// passed by path, so it must outlive the child.
    fn args(
        &self,
        mode: SystemPromptMode,
        system_prompt_file: Option<&Path>,
        json_schema: Option<&str>,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["-p", "--output-format", "json", "--no-session-persistence"]
            .iter()
            .map(OsString::from)
            .collect();
        // No tool schema in the request unless the operator enabled tools;
        // no settings (hooks, plugins, permissions) from the user's or a
        // project's `.claude/`, no MCP server but those given, no skills.
        args.push("--tools".into());
        args.push(self.tools.join(",").into());
        if !self.allowed_tools.is_empty() {
            args.push("--allowedTools".into());
            args.push(self.allowed_tools.join(",").into());
        }
        if let Some(config) = &self.mcp_config {
            args.push("--mcp-config".into());
            args.push(config.into());
        }
        args.extend(
            [
                "--setting-sources",
                "",
                "--strict-mcp-config",
                "--disable-slash-commands",
            ]
            .iter()
            .map(OsString::from),
        );
        if let Some(schema) = json_schema {
            args.push("--json-schema".into());
            args.push(schema.into());
        }
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

    /// claude's whole environment: the allowlist and what the operator
    /// named, then our fixed settings; `HOME` is the sandbox's.
    fn environment(&self, sandbox: &Sandbox) -> Vec<(OsString, OsString)> {
        let wanted = |name: &str| {
            ENV_ALLOWLIST.contains(&name)
                || self
                    .env
                    .iter()
                    .any(|pattern| match pattern.strip_suffix('*') {
                        Some(prefix) => name.starts_with(prefix),
                        None => pattern == name,
                    })
        };
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(name, _)| name.to_str().is_some_and(wanted))
            .collect();
        let home = sandbox.home();
        env.push(("HOME".into(), home.clone().into()));
        if !env.iter().any(|(name, _)| name == "CLAUDE_CONFIG_DIR") {
            env.push(("CLAUDE_CONFIG_DIR".into(), home.join(".claude").into()));
        }
        env.push(("TMPDIR".into(), home.into()));
        for (name, value) in ENV_FIXED {
            env.push((name.into(), value.into()));
        }
        env.push((
            "CLAUDE_CODE_MAX_RETRIES".into(),
            self.max_retries.to_string().into(),
        ));
        env
    }

    /// One call: `system_prompt` through a private temp file, `prompt` on
    /// stdin, in a sandbox of its own.
    pub fn call(
        &self,
        system_prompt: Option<(SystemPromptMode, String)>,
        prompt: &str,
    ) -> anyhow::Result<Reply> {
        let sandbox = self.sandbox()?;
        self.call_in(
            &sandbox,
            Request {
                system_prompt,
                prompt,
                json_schema: None,
            },
        )
    }

    /// A sandbox for one call (for a caller that stages attachments).
    pub fn sandbox(&self) -> anyhow::Result<Sandbox> {
        let cwd = std::env::current_dir().ok();
        let mut avoid: Vec<&Path> = vec![&self.temp_dir];
        if let Some(cwd) = &cwd {
            avoid.push(cwd);
        }
        Sandbox::new(&avoid)
    }

    pub fn call_in(&self, sandbox: &Sandbox, request: Request) -> anyhow::Result<Reply> {
        self.run(sandbox, request, None)
    }

    /// [`Claude::call_in`], with the reply's text handed to `on_text` piece
    /// by piece as claude writes it. The pieces add up to the returned
    /// reply's text (a reply claude wrote after a tool call follows its
    /// earlier text as a new paragraph). A stream that fails midway is an
    /// error, as a failed call is; so is a final reply that differs from
    /// what was handed out.
    pub fn call_streaming_in(
        &self,
        sandbox: &Sandbox,
        request: Request,
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Reply> {
        self.run(sandbox, request, Some(on_text))
    }

    /// Everything of a call but how its output is read.
    fn run(
        &self,
        sandbox: &Sandbox,
        request: Request,
        on_text: Option<&mut dyn FnMut(&str)>,
    ) -> anyhow::Result<Reply> {
        let (mode, prompt_file) = match &request.system_prompt {
            Some((mode, text)) => (*mode, Some(write_prompt_file(&self.temp_dir, text)?)),
            None => (SystemPromptMode::Append, None),
        };
        let args = self.args(
            mode,
            prompt_file.as_ref().map(|f| f.path()),
            request.json_schema,
        );
        let mut env = self.environment(sandbox);
        let Some(on_text) = on_text else {
            let output = run_with_timeout(
                &self.program,
                &args,
                &env,
                &sandbox.work(),
                request.prompt.as_bytes(),
                self.timeout,
                None,
            )?;
            // The temp file goes now, whatever happened; drop removes it.
            drop(prompt_file);
            return parse_output(&self.program, output);
        };

        // Without this, a connection lost midway makes claude ask again
        // without streaming and end on a new answer: not the text the chat
        // was shown.
        env.push((
            "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK".into(),
            "1".into(),
        ));
        let mut reader = stream::StreamReader::default();
        let mut on_line = |line: &str| {
            if let Some(piece) = reader.line(line) {
                on_text(&piece);
            }
        };
        let output = run_with_timeout(
            &self.program,
            &streaming_args(args),
            &env,
            &sandbox.work(),
            request.prompt.as_bytes(),
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

fn parse_output(program: &Path, output: Output) -> anyhow::Result<Reply> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let trimmed = stdout.trim();
    // An envelope says what went wrong better than an exit code: read it
    // first, whatever the exit status.
    if trimmed.starts_with('{') {
        let envelope = match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Object(envelope)) => envelope,
            Ok(_) => unreachable!("text starting with {{ parses as an object or not at all"),
            Err(e) => {
                return Err(failure(
                    Exit::ClaudeFailed,
                    format!(
                        "claude ({}) printed something that looks like JSON but does not parse \
                         ({e}); its output was not used as a reply: {}",
                        program.display(),
                        one_line(&last_chars(trimmed, 300))
                    ),
                ));
            }
        };
        return parse_envelope(program, &envelope);
    }
    if !output.status.success() {
        let how = match (output.status.code(), output.status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            _ => "failed".into(),
        };
        let detail = last_chars(stderr.trim(), 4000);
        let detail = if detail.is_empty() {
            last_chars(trimmed, 4000)
        } else {
            detail
        };
        return Err(failure(
            Exit::ClaudeFailed,
            format!("claude ({}) {how}: {detail}", program.display()),
        ));
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

/// claude's `--output-format json` result. Nothing of it is passed on as
/// a reply unless it is a successful one with text (or structured output).
fn parse_envelope(
    program: &Path,
    envelope: &serde_json::Map<String, Value>,
) -> anyhow::Result<Reply> {
    let bad = |what: String| {
        failure(
            Exit::ClaudeFailed,
            format!("claude ({}) {what}; no reply was used", program.display()),
        )
    };
    let is_error = envelope.get("is_error").and_then(Value::as_bool) == Some(true);
    let subtype = envelope.get("subtype").and_then(Value::as_str);
    if is_error || subtype.is_some_and(|s| s != "success") {
        return Err(api_failure(envelope));
    }
    if envelope.get("type").and_then(Value::as_str) != Some("result") {
        return Err(bad(
            "printed a JSON object that is not a result envelope (no \"type\": \"result\")".into(),
        ));
    }
    let structured = envelope
        .get("structured_output")
        .filter(|v| !v.is_null())
        .cloned();
    let text = match envelope.get("result") {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) if structured.is_some() => String::new(),
        None => return Err(bad("answered without a `result`".into())),
        Some(other) => {
            return Err(bad(format!(
                "answered with a `result` that is {}, not text",
                json_kind(other)
            )));
        }
    };
    if text.trim().is_empty() && structured.is_none() {
        return Err(bad("answered with an empty `result`".into()));
    }
    let cost_usd = match envelope.get("total_cost_usd") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(cost) if cost.is_finite() && cost >= 0.0 => Some(cost),
            _ => {
                return Err(bad(format!(
                    "reported an impossible cost (total_cost_usd {n})"
                )));
            }
        },
        Some(other) => {
            return Err(bad(format!(
                "reported a cost that is {}, not a number (total_cost_usd {})",
                json_kind(other),
                last_chars(&other.to_string(), 60)
            )));
        }
    };
    Ok(Reply {
        text,
        usage: total_usage(envelope),
        cost_usd,
        structured,
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The tokens of every request claude made: its `modelUsage` sums each
/// model's requests (a title or tool round included); `usage` alone covers
/// the main conversation only. Without `modelUsage`, `usage` as given.
fn total_usage(envelope: &serde_json::Map<String, Value>) -> Option<Value> {
    let per_model = envelope
        .get("modelUsage")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty());
    let Some(per_model) = per_model else {
        return envelope.get("usage").cloned();
    };
    let fields = [
        ("inputTokens", "input_tokens"),
        ("outputTokens", "output_tokens"),
        ("cacheReadInputTokens", "cache_read_input_tokens"),
        ("cacheCreationInputTokens", "cache_creation_input_tokens"),
    ];
    let mut total = serde_json::Map::new();
    for (theirs, ours) in fields {
        let sum: u64 = per_model
            .values()
            .filter_map(|m| m.get(theirs).and_then(Value::as_u64))
            .sum();
        total.insert(ours.into(), Value::from(sum));
    }
    let models: serde_json::Map<String, Value> = per_model
        .iter()
        .map(|(name, m)| {
            let mut entry = serde_json::Map::new();
            for (theirs, ours) in fields {
                if let Some(n) = m.get(theirs).and_then(Value::as_u64) {
                    entry.insert(ours.into(), Value::from(n));
                }
            }
            if let Some(cost) = m.get("costUSD").and_then(Value::as_f64) {
                entry.insert("costUsd".into(), Value::from(cost));
            }
            (name.clone(), Value::Object(entry))
        })
        .collect();
    total.insert("models".into(), Value::Object(models));
    Some(Value::Object(total))
}

/// An error envelope: its one-line message, and whether a retry may help
/// (rate limits, overload, server errors, the network) or not (auth, a bad
/// request, a turn limit).
fn api_failure(envelope: &serde_json::Map<String, Value>) -> anyhow::Error {
    let subtype = envelope
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or("error");
    let message = match envelope.get("result") {
        Some(Value::String(text)) if !text.trim().is_empty() => text.clone(),
        _ => match envelope.get("errors").and_then(Value::as_array) {
            Some(errors) if !errors.is_empty() => errors
                .iter()
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join("; "),
            _ => format!("claude ended with `{subtype}` and no message"),
        },
    };
    let status = envelope
        .get("api_error_status")
        .and_then(Value::as_u64)
        .or_else(|| status_in(&message));
    let message = one_line(&last_chars(&message, 500));
    if is_transient(status, &message) {
        failure(
            Exit::ClaudeUnavailable,
            format!("claude is unavailable for now (a retry later may work): {message}"),
        )
    } else {
        failure(Exit::ClaudeFailed, format!("claude failed: {message}"))
    }
}

/// `API Error: 529 …` or `Request rejected (429)`: the HTTP status in
/// claude's message.
fn status_in(message: &str) -> Option<u64> {
    let after = message.split_once("API Error:")?.1;
    after
        .split(|c: char| !c.is_ascii_digit())
        .find(|word| word.len() == 3)
        .and_then(|word| word.parse().ok())
}

fn is_transient(status: Option<u64>, message: &str) -> bool {
    if let Some(status) = status {
        return matches!(status, 408 | 409 | 429 | 500..=599);
    }
    const NETWORK: &[&str] = &[
        "Overloaded",
        "Unable to connect",
        "ECONNRESET",
        "ECONNREFUSED",
        "ETIMEDOUT",
        "EAI_AGAIN",
        "socket hang up",
        "Connection error",
        "timed out",
        // The API's event stream cut off midway (claude -p, streaming).
        "Stream ended",
    ];
    NETWORK.iter().any(|needle| message.contains(needle))
}

/// Newlines and runs of blanks as one space: an error is one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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
    /// Folders a killed `ask` left (a day old) go; fresh ones, and other
    /// names, stay.
    #[test]
    fn stale_call_folders_are_swept() {
        let base = tempfile::tempdir().unwrap();
        let make = |name: &str, age_hours: u64| {
            let path = base.path().join(name);
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("copy-of-attachment"), "x").unwrap();
            let when =
                std::time::SystemTime::now() - std::time::Duration::from_secs(age_hours * 3600);
            std::fs::File::open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
            path
        };
        let old = make("claude-session-call-old", 48);
        let fresh = make("claude-session-call-fresh", 1);
        let other = make("something-else", 48);
        super::sweep_stale_sandboxes(base.path(), &fresh);
        assert!(!old.exists());
        assert!(fresh.exists());
        assert!(other.exists());
    }

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

    fn error_of(stdout: &str) -> (Exit, String) {
        let err = parse_output(Path::new("claude"), output(1, stdout, "")).unwrap_err();
        (crate::error::exit_code_of(&err), format!("{err:#}"))
    }

    #[test]
    fn error_envelopes_give_their_one_line_message_and_whether_to_retry() {
        let envelope = |status: &str, result: &str| {
            format!(
                r#"{{"type":"result","subtype":"success","is_error":true,"api_error_status":{status},"result":"{result}","total_cost_usd":0}}"#
            )
        };
        for (stdout, exit) in [
            (
                envelope(
                    "null",
                    "API Error: Repeated 529 Overloaded errors.\\nTry again.",
                ),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope("429", "API Error: Request rejected (429) · slow down"),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope("500", "API Error: 500 internal"),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope("null", "API Error: Unable to connect to API (ECONNRESET)"),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope(
                    "null",
                    "API Error: Stream ended without receiving any events",
                ),
                Exit::ClaudeUnavailable,
            ),
            (
                envelope(
                    "401",
                    "Failed to authenticate. API Error: 401 invalid x-api-key",
                ),
                Exit::ClaudeFailed,
            ),
            (
                envelope("400", "API Error: 400 prompt is too long"),
                Exit::ClaudeFailed,
            ),
        ] {
            let (code, message) = error_of(&stdout);
            assert_eq!(code, exit, "{message}");
            assert!(!message.contains('\n'), "{message}");
            assert!(!message.contains("session_id"), "{message}");
            assert!(message.contains("API Error"), "{message}");
        }
    }

    #[test]
    fn output_that_is_not_a_reply_is_named_and_never_passed_on() {
        for (stdout, named) in [
            (
                r#"{"type":"result","subtype":"success","is_error":false}"#,
                "without a `result`",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":false,"result":42}"#,
                "a number, not text",
            ),
            (
                r#"{"type":"result","subtype":"success","is_error":false,"result":null}"#,
                "null, not text",
            ),
            (
                r#"{"type":"result","result":"hi","#,
                "looks like JSON but does not parse",
            ),
            (r#"{"result":"hi"}"#, "not a result envelope"),
            (
                r#"{"type":"result","subtype":"error_max_turns","is_error":false,"result":"x"}"#,
                "x",
            ),
            (
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":-1.5}"#,
                "impossible cost (total_cost_usd -1.5)",
            ),
            (
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":1e999}"#,
                "does not parse",
            ),
            (
                r#"{"type":"result","is_error":false,"result":"hi","total_cost_usd":"NaN"}"#,
                "a string, not a number",
            ),
        ] {
            let err = parse_output(Path::new("claude"), output(0, stdout, "")).unwrap_err();
            let message = format!("{err:#}");
            assert_eq!(
                crate::error::exit_code_of(&err),
                Exit::ClaudeFailed,
                "{message}"
            );
            assert!(message.contains(named), "{stdout} gave: {message}");
            assert!(
                !message.contains("answered with an error: success"),
                "{message}"
            );
        }
    }

    #[test]
    fn usage_sums_every_model_and_request() {
        let reply = parse_output(
            Path::new("claude"),
            output(
                0,
                r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","total_cost_usd":0.003,
                   "usage":{"input_tokens":100,"output_tokens":20},
                   "modelUsage":{"opus":{"inputTokens":100,"outputTokens":20,"cacheReadInputTokens":5,"cacheCreationInputTokens":0,"costUSD":0.002},
                                 "haiku":{"inputTokens":50,"outputTokens":10,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.001}}}"#,
                "",
            ),
        )
        .unwrap();
        let usage = reply.usage.unwrap();
        assert_eq!(usage["input_tokens"], 150);
        assert_eq!(usage["output_tokens"], 30);
        assert_eq!(usage["cache_read_input_tokens"], 5);
        assert_eq!(usage["models"]["haiku"]["costUsd"], 0.001);
        assert_eq!(reply.cost_usd, Some(0.003));
    }

    #[test]
    fn structured_output_is_a_reply_without_text() {
        let reply = parse_output(
            Path::new("claude"),
            output(
                0,
                r#"{"type":"result","subtype":"success","is_error":false,"structured_output":{"summary":"S"}}"#,
                "",
            ),
        )
        .unwrap();
        assert_eq!(reply.structured.unwrap()["summary"], "S");
    }

    #[test]
    fn arguments_in_order() {
        let claude = Claude {
            program: "claude".into(),
            model: Some("opus".into()),
            extra_args: vec!["--allowedTools".into(), "Read".into()],
            timeout: Duration::from_secs(1),
            temp_dir: std::env::temp_dir(),
            tools: Vec::new(),
            allowed_tools: Vec::new(),
            mcp_config: None,
            max_retries: 2,
            env: Vec::new(),
        };
        let args: Vec<String> = claude
            .args(SystemPromptMode::Append, Some(Path::new("/tmp/p.md")), None)
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
                "--tools",
                "",
                "--setting-sources",
                "",
                "--strict-mcp-config",
                "--disable-slash-commands",
                "--append-system-prompt-file",
                "/tmp/p.md",
                "--model",
                "opus",
                "--allowedTools",
                "Read"
            ]
        );
    }

    #[test]
    fn environment_is_an_allowlist() {
        let claude = Claude {
            program: "claude".into(),
            model: None,
            extra_args: Vec::new(),
            timeout: Duration::from_secs(1),
            temp_dir: std::env::temp_dir(),
            tools: Vec::new(),
            allowed_tools: Vec::new(),
            mcp_config: None,
            max_retries: 3,
            env: vec!["MY_*".into()],
        };
        let sandbox = Sandbox::new(&[]).unwrap();
        let env = claude.environment(&sandbox);
        let get = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(
            get("HOME"),
            Some(sandbox.home().to_string_lossy().into_owned())
        );
        assert_eq!(get("CLAUDE_CODE_MAX_RETRIES").as_deref(), Some("3"));
        assert_eq!(
            get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC").as_deref(),
            Some("1")
        );
        // Whatever the test runner has beyond the allowlist stays out.
        for (name, _) in &env {
            let name = name.to_string_lossy();
            assert!(
                ENV_ALLOWLIST.contains(&name.as_ref())
                    || name.starts_with("MY_")
                    || ENV_FIXED.iter().any(|(n, _)| *n == name)
                    || [
                        "HOME",
                        "CLAUDE_CONFIG_DIR",
                        "TMPDIR",
                        "CLAUDE_CODE_MAX_RETRIES"
                    ]
                    .contains(&name.as_ref()),
                "{name} leaked"
            );
        }
        use std::os::unix::fs::PermissionsExt as _;
        for dir in [sandbox.home(), sandbox.work()] {
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
        }
    }
}

//! Finding and running `claude -p`: the one place that makes a call, for
//! `ask`, compaction, summaries and `doctor --live` alike (the only other
//! start of claude is doctor's `claude --version` probe, through the same
//! [`supervise`]): its arguments, its environment (an allowlist)
//! and the private folders a call runs in (`sandbox`); images as content
//! blocks (`image`).
//! Reading what it printed is `reply`, its event stream `stream`; running
//! the child (timeout, process group, signals) is [`crate::claude::supervise`].
//!
//! The system prompt goes in a private temporary file and the prompt on
//! stdin, so no command-line size limit applies; both pass [`neutralise`]
//! on the way, and claude's process tree is confined ([`confine`]).

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

use crate::claude::supervise::{Landlock, Program, RunError, run_with_timeout};
use crate::error::{Exit, failure};

pub mod confine;
pub mod image;
mod neutralise;
mod reply;
mod sandbox;
pub mod stream;
pub mod supervise;

pub use image::Image;
pub use neutralise::neutralise;
use reply::parse_output;
pub use sandbox::Sandbox;

/// The oldest Claude Code release supported: the test suite runs it (the
/// npm package `@anthropic-ai/claude-code`, on the machine's node 20) and
/// the benchmarks use it; `doctor` compares.
pub const KNOWN_GOOD_VERSION: &str = "2.1.197";
/// The newest release tested (it needs node 22 or newer; the test support
/// installs the npm package `node` beside it).
pub const NEWEST_TESTED_VERSION: &str = "2.1.332";
/// Every release the real-CLI tests run on, oldest first.
pub const TESTED_VERSIONS: &[&str] = &[KNOWN_GOOD_VERSION, NEWEST_TESTED_VERSION];

/// claude's flags that choose its tools. Which tools a chat user's message
/// can make claude use is the operator's decision, made once in config
/// (`ask.tools`, `ask.allowedTools`), not per call: through `--claude-arg`
/// such a flag would either do nothing (our `--tools` wins over
/// `--allowedTools`) or widen what a chat user can reach.
pub const TOOL_FLAGS: &[&str] = &[
    "--tools",
    "--allowedTools",
    "--allowed-tools",
    "--disallowedTools",
    "--disallowed-tools",
];

/// One `--claude-arg` value, refused if it is one of [`TOOL_FLAGS`] (alone
/// or `=`-joined to its value), with where tools are set instead.
pub fn passthrough_arg(value: &str) -> Result<String, String> {
    let flag = value.split_once('=').map_or(value, |(flag, _)| flag);
    if let Some(flag) = TOOL_FLAGS.iter().find(|f| **f == flag) {
        return Err(format!(
            "{flag} is not passed through: the tools claude may use are set once for a state \
             dir, in sessions/config.json: \"ask.tools\" (the built-in tools offered, e.g. \
             [\"Read\"]) and \"ask.allowedTools\" (permission rules, e.g. [\"Bash(date)\"]); \
             see `claude-session doctor` for what each tool exposes"
        ));
    }
    Ok(value.to_owned())
}

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
    /// The state dir's temporary folder (`sessions/.tmp/`): claude's
    /// private folder is never made inside it.
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
    /// Landlock around claude's process tree (`ask.confinement`).
    pub confinement: confine::Mode,
    /// What a confined claude may read besides the system's files and its
    /// own install (`ask.readablePaths`, recall's memory).
    pub readable: Vec<PathBuf>,
    /// What it may write besides its private folder (`ask.writablePaths`).
    pub writable: Vec<PathBuf>,
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
    // 2.1.332 offers a "DeferredToolPlaceholder" tool whenever any tool
    // is enabled: a schema in every request that nobody may call.
    ("ENABLE_TOOL_SEARCH", "false"),
];

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
    /// Images sent with the prompt, as image blocks of the user message
    /// (then the prompt goes as `--input-format stream-json`).
    pub images: &'a [Image],
    /// `Read` offered for this call, with a permission rule for the call's
    /// working folder only (attachments copied there).
    pub read_work_folder: bool,
}

/// What claude gets as the user's turn: the prompt, with what the
/// message's attachments made of it.
#[derive(Debug, Default)]
pub struct UserInput {
    /// The message text, then the list of attachments.
    pub prompt: String,
    pub images: Vec<Image>,
    /// Some attachment waits in claude's folder: offer `Read` for it.
    pub read_work_folder: bool,
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
        // Bare mode (`--bare`) is the only switch that leaves out the
        // "# Environment" message 2.1.332 adds to every request (working
        // folder, OS and kernel, model: about 1 KB), and it expands no
        // mention either; but it reads no subscription token, so only
        // where claude authenticates with a key (which it would send
        // rather than the token anyway).
        let key = |name: &str| env.iter().any(|(k, v)| k == name && !v.is_empty());
        if key("ANTHROPIC_API_KEY") || key("ANTHROPIC_AUTH_TOKEN") {
            env.push(("CLAUDE_CODE_SIMPLE".into(), "1".into()));
        }
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
                ..Request::default()
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
        // The one boundary: everything claude is given, ours and the chat's,
        // is neutralised here, so no caller can forget it.
        let (mode, prompt_file) = match &request.system_prompt {
            Some((mode, text)) => (
                *mode,
                Some(write_prompt_file(&sandbox.root(), &neutralise(text))?),
            ),
            None => (SystemPromptMode::Append, None),
        };
        let prompt = neutralise(request.prompt);
        let for_this_call;
        let runner = match read_rule(request.read_work_folder, &sandbox.work()) {
            Some(rule) => {
                for_this_call = self.reading_attachments(rule);
                &for_this_call
            }
            None => self,
        };
        let mut args = runner.args(
            mode,
            prompt_file.as_ref().map(|f| f.path()),
            request.json_schema,
        );
        // Images go as content blocks of a stream-json user message; the
        // prompt is its one text block, neutralised as ever.
        let images = !request.images.is_empty();
        let stdin = if images {
            args = stream_json_input(args, on_text.is_none());
            image::user_line(&prompt, request.images)
        } else {
            prompt.as_bytes().to_vec()
        };
        let mut env = self.environment(sandbox);
        let ruleset = confine::ruleset(self.confinement, &self.policy(sandbox, &env))?;
        let args = match on_text {
            None => args,
            Some(_) => {
                // Without this, a connection lost midway makes claude ask
                // again without streaming and end on a new answer: not the
                // text the chat was shown.
                env.push((
                    "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK".into(),
                    "1".into(),
                ));
                streaming_args(args)
            }
        };
        let work = sandbox.work();
        let program = Program {
            path: &self.program,
            args: &args,
            env: &env,
            cwd: &work,
            landlock: ruleset.as_ref().map(|ruleset| Landlock {
                ruleset,
                own_proc_access: confine::own_proc_access(),
            }),
        };
        let output = match on_text {
            None => self.run_whole(&program, &stdin, images),
            Some(on_text) => self.run_streaming(&program, &stdin, on_text),
        };
        // The temp file goes now, whatever happened; drop removes it.
        drop(prompt_file);
        output
    }

    /// This runner with `Read` on for the attachments of one call, under
    /// `rule` (their folder only).
    fn reading_attachments(&self, rule: String) -> Claude {
        let mut runner = self.clone();
        if !runner.tools.iter().any(|t| t == "Read") {
            runner.tools.push("Read".into());
            // Read is on only for the attachment: a Read rule the operator
            // left beside tools that lack Read stays off.
            runner
                .allowed_tools
                .retain(|t| t != "Read" && !t.starts_with("Read("));
        }
        runner.allowed_tools.push(rule);
        runner
    }

    /// Run claude to its end and read its reply (with images, its output
    /// is an event stream whose `result` line is the envelope).
    fn run_whole(&self, program: &Program, stdin: &[u8], images: bool) -> anyhow::Result<Reply> {
        let mut output =
            run_with_timeout(program, stdin, self.timeout, None).map_err(|e| self.run_error(e))?;
        if images {
            let mut reader = stream::StreamReader::default();
            for line in String::from_utf8_lossy(&output.stdout).lines() {
                reader.line(line);
            }
            output.stdout = reader.into_stdout();
        }
        parse_output(&self.program, output)
    }

    /// Run claude with its reply handed to `on_text` as it streams; the
    /// reply fails when what was shown is not what claude ended on.
    fn run_streaming(
        &self,
        program: &Program,
        stdin: &[u8],
        on_text: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Reply> {
        let mut reader = stream::StreamReader::default();
        let mut on_line = |line: &str| {
            if let Some(piece) = reader.line(line) {
                on_text(&piece);
            }
        };
        let output = run_with_timeout(program, stdin, self.timeout, Some(&mut on_line));
        let mut output = output.map_err(|e| self.run_error(e))?;
        let streamed = reader.streamed().to_owned();
        let restarted = reader.restarted();
        output.stdout = reader.into_stdout();
        let reply = parse_output(&self.program, output)?;
        if restarted {
            return Err(failure(
                Exit::ClaudeUnavailable,
                "the connection to the API was lost while the reply was streaming and claude \
                 started it over; the chat was shown only the first part, so no reply was \
                 logged: deliver the message again",
            ));
        }
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

    /// What a confined call may reach: claude's install (both supported
    /// releases are one native program; no node runs), what the operator
    /// named, and the call's private folder.
    fn policy(&self, sandbox: &Sandbox, env: &[(OsString, OsString)]) -> confine::Policy {
        let keep_out: Vec<PathBuf> = [
            std::path::absolute(&self.temp_dir).ok(),
            std::env::current_dir().ok(),
            std::env::var_os("HOME").map(PathBuf::from),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut read: Vec<PathBuf> = confine::install_folder(&self.program, &keep_out)
            .into_iter()
            .collect();
        read.extend(self.readable.iter().cloned());
        let mut write = vec![sandbox.root()];
        write.extend(self.writable.iter().cloned());
        // What the environment claude gets points it at: certificates to
        // trust, and a login's config folder the operator passed on.
        let named = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| PathBuf::from(v))
        };
        read.extend(
            ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"]
                .iter()
                .filter_map(|name| named(name)),
        );
        write.extend(named("CLAUDE_CONFIG_DIR"));
        confine::Policy { read, write }
    }

    /// A run that gave no output, in claude's words: what to check.
    fn run_error(&self, error: RunError) -> anyhow::Error {
        let program = self.program.display();
        match error {
            RunError::Spawn(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
                ) =>
            {
                failure(
                    Exit::ClaudeNotFound,
                    format!(
                        "could not start claude ({program}): {e}; check --claude-bin or CLAUDE_BIN"
                    ),
                )
            }
            RunError::Spawn(e) => {
                anyhow::Error::new(e).context(format!("could not start {program}"))
            }
            RunError::TimedOut => failure(
                Exit::ClaudeTimeout,
                format!(
                    "claude did not answer within {} s and was stopped; raise --timeout \
                     or ask.timeoutSeconds if it needs longer",
                    self.timeout.as_secs()
                ),
            ),
            RunError::Wait(e) => anyhow::Error::new(e).context("could not wait for claude"),
        }
    }
}

/// Where the value of `--output-format` is in `args`.
fn output_format_value(args: &[OsString]) -> usize {
    args.iter()
        .position(|a| a == "--output-format")
        .expect("args() passes --output-format")
        + 1
}

/// `--output-format json` becomes the event stream, with a `stream_event`
/// per text delta (`--include-partial-messages` needs `--verbose`).
fn streaming_args(mut args: Vec<OsString>) -> Vec<OsString> {
    let format = output_format_value(&args);
    args[format] = "stream-json".into();
    args.splice(
        format + 1..format + 1,
        ["--verbose", "--include-partial-messages"].map(OsString::from),
    );
    args
}

/// The prompt as one stream-json user message on stdin, which claude
/// takes only with `--output-format stream-json --verbose`; `streaming_args`
/// has set those for a streamed call already.
fn stream_json_input(mut args: Vec<OsString>, not_streamed: bool) -> Vec<OsString> {
    if not_streamed {
        let format = output_format_value(&args);
        args[format] = "stream-json".into();
        args.insert(format + 1, "--verbose".into());
    }
    args.splice(1..1, ["--input-format", "stream-json"].map(OsString::from));
    args
}

/// The permission rule that lets `Read` open what is in claude's working
/// folder and nothing else (`//` starts an absolute path in claude's rule
/// syntax). None when not asked for, or when the folder's path holds a
/// character the rule list cannot carry (`,`, a space, a parenthesis):
/// claude's own default then still lets `Read` open its working folder
/// only.
fn read_rule(wanted: bool, work: &Path) -> Option<String> {
    let path = work.to_str()?;
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
    (wanted && plain && path.starts_with('/'))
        .then(|| format!("Read(/{}/**)", path.trim_end_matches('/')))
}

fn write_prompt_file(dir: &Path, text: &str) -> anyhow::Result<tempfile::NamedTempFile> {
    // tempfile creates it 0600 with a unique name, and removes it on drop;
    // one a killed process left goes with its call's private folder.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A runner with nothing set but the program.
    fn claude(program: &str) -> Claude {
        Claude {
            program: program.into(),
            model: None,
            extra_args: Vec::new(),
            timeout: Duration::from_secs(1),
            temp_dir: std::env::temp_dir(),
            tools: Vec::new(),
            allowed_tools: Vec::new(),
            mcp_config: None,
            max_retries: 2,
            env: Vec::new(),
            confinement: confine::Mode::Off,
            readable: Vec::new(),
            writable: Vec::new(),
        }
    }

    #[test]
    fn arguments_in_order() {
        let claude = Claude {
            model: Some("opus".into()),
            extra_args: vec!["--allowedTools".into(), "Read".into()],
            ..claude("claude")
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
    fn confined_claude_may_reach_its_install_its_folder_and_what_its_env_names() {
        let claude = Claude {
            confinement: confine::Mode::BestEffort,
            readable: vec!["/srv/kb".into()],
            writable: vec!["/srv/out".into()],
            ..claude("/usr/bin/true")
        };
        let sandbox = Sandbox::new(&[]).unwrap();
        let env: Vec<(OsString, OsString)> = vec![
            ("CLAUDE_CONFIG_DIR".into(), "/home/bot/.claude".into()),
            ("SSL_CERT_FILE".into(), "/opt/ca.pem".into()),
        ];
        let policy = claude.policy(&sandbox, &env);
        let real_true = std::fs::canonicalize("/usr/bin/true").unwrap();
        assert!(
            policy
                .read
                .contains(&real_true.parent().unwrap().to_path_buf())
        );
        for path in ["/srv/kb", "/opt/ca.pem"] {
            assert!(policy.read.contains(&PathBuf::from(path)), "{policy:?}");
        }
        for path in ["/srv/out", "/home/bot/.claude"] {
            assert!(policy.write.contains(&PathBuf::from(path)), "{policy:?}");
        }
        assert!(policy.write.contains(&sandbox.root()));
        // Nothing of the state dir or the current folder.
        let cwd = std::env::current_dir().unwrap();
        assert!(
            !policy
                .read
                .iter()
                .chain(&policy.write)
                .any(|p| cwd.starts_with(p))
        );
    }

    #[test]
    fn environment_is_an_allowlist() {
        let claude = Claude {
            max_retries: 3,
            env: vec!["MY_*".into()],
            ..claude("claude")
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
                        "CLAUDE_CODE_MAX_RETRIES",
                        "CLAUDE_CODE_SIMPLE"
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

//! Every clap type but one, and nothing else: parsing does no I/O, so
//! `--help` and usage errors never touch the state dir. (`--role`'s values
//! are [`Role`] itself, whose `ValueEnum` is derived where it is defined,
//! in `memory::message`.) One definition of each flag feeds the parser,
//! `--help`, the man pages and the completions.

pub mod completion;

use std::path::PathBuf;

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::engine::ArgValueCandidates;

use crate::cli::completion as complete;

use crate::layout::{ChannelName, ConversationKey, TopicSlug, UserId};
use crate::memory::message::{Attachment, Role};

const EXIT_CODES: &str = "\
Exit codes:
  0    success
  2    usage error or invalid input (bad flag, id, message text or config value)
  3    state or I/O error (the state dir could not be read or written, or is not one: see init)
  4    a lock stayed held by another process past its deadline
  5    the claude program was not found
  6    claude failed; a retry will not help (auth, bad request, output that is not a reply)
  7    a spending budget is used up; no call was made
  9    not found: nothing stored under that user or conversation id, no such profile or topic note
  75   claude is unavailable for now (rate limit, overload, server error, network): retry later
  124  claude timed out";

/// The environment variables the tool reads beside those of its flags
/// (`CLAUDE_SESSION_STATE_DIR`, `CLAUDE_BIN`), for the man page's
/// ENVIRONMENT section: a test checks that every variable the code reads
/// is here or a flag's.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "XDG_STATE_HOME",
        "The default state dir is $XDG_STATE_HOME/claude-session when it is an absolute path.",
    ),
    (
        "HOME",
        "The default state dir is ~/.local/state/claude-session without XDG_STATE_HOME. claude never \
         sees it: each call gets a private HOME.",
    ),
    (
        "PATH",
        "Where `claude` is found (without CLAUDE_BIN), passed on to claude.",
    ),
    (
        "TMPDIR",
        "Where each claude call's private folder (claude-session-call-*) and export temporaries are made.",
    ),
    (
        "ANTHROPIC_API_KEY",
        "The API key claude uses, passed on to it; doctor checks that a key or token is set.",
    ),
    (
        "CLAUDE_CODE_OAUTH_TOKEN",
        "A subscription token (claude setup-token), passed on to claude; checked by doctor.",
    ),
    (
        "ANTHROPIC_AUTH_TOKEN",
        "A bearer token, passed on to claude; checked by doctor.",
    ),
    (
        "CLAUDE_CONFIG_DIR",
        "Passed to claude only when config ask.env names it (doctor then counts it as a way to log in); \
         otherwise claude gets a private one.",
    ),
    (
        "LANG, LC_ALL, LC_CTYPE, TZ, ANTHROPIC_BASE_URL, HTTPS_PROXY, HTTP_PROXY, NO_PROXY, https_proxy, \
         http_proxy, no_proxy, NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, SSL_CERT_DIR",
        "Passed on to claude as they are; every other variable is withheld unless config ask.env or \
         CLAUDE_SESSION_CLAUDE_ENV names it.",
    ),
    (
        "CLAUDE_SESSION_CLAUDE_ENV",
        "More variables claude may see, on top of config ask.env: names or PREFIX*, comma-separated.",
    ),
    (
        "CLAUDE_SESSION_CLAUDE_WRITABLE",
        "More absolute paths a confined claude may write, on top of config ask.writablePaths, \
         comma-separated.",
    ),
    (
        "VISUAL, EDITOR",
        "The editor of session profile --edit (VISUAL first).",
    ),
    (
        "COLUMNS",
        "The width tables are fitted to (session users, conversations, topics); without it, the \
         terminal's width when stdout is one, else no limit.",
    ),
    (
        "COMPLETE",
        "Set by the shell completion scripts (completions/) to ask for completions.",
    ),
];

#[derive(Debug, Parser)]
#[command(
    name = "claude-session",
    version,
    about = "Gives chat bots memory around `claude -p`",
    long_about = "Gives chat bots memory around `claude -p`.\n\n\
        Each incoming chat message goes through `claude-session ask`: it is logged in a \
        per-user file layout, a memory context (profile, rolling summary, recent messages) \
        is built, `claude -p` runs with it, and the reply is logged and printed. Old messages \
        are compacted into LLM summaries and gzip archives.",
    after_help = EXIT_CODES,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// The state dir that holds `sessions/` (the seed's channel folder)
    /// [default: $XDG_STATE_HOME/claude-session, else ~/.local/state/claude-session]
    #[arg(
        long,
        global = true,
        env = "CLAUDE_SESSION_STATE_DIR",
        value_name = "DIR",
        value_hint = clap::ValueHint::DirPath
    )]
    pub state_dir: Option<PathBuf>,

    /// Use ./.claude/channels/NAME as the state dir (the seed's default place)
    #[arg(long, global = true, value_name = "NAME")]
    pub channel: Option<ChannelName>,

    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub json: bool,

    /// Say more on stderr; shows the cause chain of errors
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,

    /// Print no warnings, only errors
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Log a message, answer it with `claude -p` and the user's memory, print the reply
    #[command(after_help = ASK_EXAMPLES)]
    Ask(AskArgs),
    /// Log one message (any role), for brokers that call claude themselves
    #[command(after_help = APPEND_EXAMPLES)]
    Append(AppendArgs),
    /// Print the memory context block that `ask` would inject
    #[command(after_help = CONTEXT_EXAMPLES)]
    Context(ContextArgs),
    /// Summarise old messages of one user or all users now
    #[command(after_help = COMPACT_EXAMPLES)]
    Compact(CompactArgs),
    /// One pass of every scheduled task (expiry, rotation, summaries, prune); for cron
    #[command(after_help = MAINTAIN_EXAMPLES)]
    Maintain(MaintainArgs),
    /// Inspect and manage memory: status, users, show, clear, delete, profile, topics, search, export
    #[command(after_help = SESSION_EXAMPLES)]
    Session(SessionArgs),
    /// Check everything a broker needs before going live; say what to fix
    #[command(after_help = DOCTOR_EXAMPLES)]
    Doctor(DoctorArgs),
    /// A read-only MCP server on stdio over one person's (or one conversation's) memory
    #[command(after_help = MCP_EXAMPLES)]
    Mcp(McpArgs),
    /// Make a new state dir, once, for --state-dir or CLAUDE_SESSION_STATE_DIR to name
    #[command(after_help = INIT_EXAMPLES)]
    Init(InitArgs),
}

const INIT_EXAMPLES: &str = "\
Examples:
  claude-session init /srv/bot
  export CLAUDE_SESSION_STATE_DIR=/srv/bot; claude-session init

A state dir named with --state-dir or CLAUDE_SESSION_STATE_DIR must already
be one (hold a sessions/ folder): every command refuses it otherwise, with
exit 3, and creates nothing. So a file system that is not mounted, or a
typo, fails loudly instead of filling an empty folder. Only the default
state dir and --channel's folder are created on first use. Running init on
a state dir that exists changes nothing.";

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The folder to make a state dir [default: --state-dir, CLAUDE_SESSION_STATE_DIR, --channel or the default]
    #[arg(value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
}

const MCP_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack mcp --user U0123ABC
  claude-session --channel slack mcp --user U0123ABC --conversation C0456DEF

Speaks the Model Context Protocol (JSON-RPC, one message per line) on stdin
and stdout. Tools: search_memory(query, since?, until?, limit?), read_day(date),
profile(). Read-only; results hold no file paths and are capped in size.
`ask` starts it for claude when config ask.recall is true.";

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The person whose memory the tools read
    #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true)]
    pub user: UserId,

    /// Read this group or thread conversation instead (the person must have written in it)
    #[arg(long, value_name = "KEY", allow_negative_numbers = true)]
    pub conversation: Option<ConversationKey>,
}

const DOCTOR_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack doctor
  claude-session --state-dir /srv/bot doctor --live --json

Checks: claude found and its version (against the tested one), authentication
for claude (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN), the state dir
writable and private, config.json valid; with --live one minimal real call.
Exits 0 when every check passes, else with the code of the first failure.";

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also make one minimal real call to claude (costs a few tokens)
    #[arg(long)]
    pub live: bool,

    #[command(flatten)]
    pub claude: ClaudeArgs,
}

const ASK_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack ask --user U0123ABC --msg-id 1711.1 \\
      -- \"hi, remember me?\"
  echo \"what did I say earlier?\" | \\
      claude-session --state-dir /srv/bot ask --user U0123ABC
  claude-session --channel line ask --user U1 --attach /srv/inbox/a.png \\
      -- \"look at this\"
  claude-session --channel slack ask --stream --json --user U0123ABC \\
      --msg-id 1711.2 -- \"hi\"

By default claude gets no tools, a private empty working folder and no
settings, CLAUDE.md, hooks or MCP servers; enable tools with config
ask.tools and ask.allowedTools (see the README's Security section).";

const APPEND_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack append --user U0123ABC --role user -- \"hi\"
  claude-session --channel slack append --user U0123ABC --role assistant \\
      --reply-to 1711.1 -- \"Hello!\"
  claude-session --channel slack append --user U0123ABC \\
      --jsonl old-messages.jsonl";

const CONTEXT_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack context --user U0123ABC
  claude-session --channel slack context --user U0123ABC --window 20 --json
  claude-session --channel slack context --user U0123ABC --explain \\
      -- \"where did my sister move?\"";

const COMPACT_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack compact --user U0123ABC
  claude-session --channel slack compact --all --dry-run";

const MAINTAIN_EXAMPLES: &str = "\
Walks every person and conversation: its time grows with the number of people
(progress is shown on a terminal).

Examples:
  claude-session --channel slack maintain
  claude-session --channel slack maintain --only daily,weekly \\
      --max-llm-calls 20 --json
  # crontab: every 15 minutes
  */15 * * * * claude-session --state-dir /srv/bot maintain -q";

const SESSION_EXAMPLES: &str = "\
Examples:
  claude-session --channel slack session status
  claude-session --channel slack session users --sort activity --limit 20
  claude-session --channel slack session show --user U0123ABC -n 50";

/// How `ask` finds and runs claude. Shared by every command that calls it.
#[derive(Debug, Clone, Args, Default)]
pub struct ClaudeArgs {
    /// The claude program [default: `claude` on PATH]
    #[arg(long, env = "CLAUDE_BIN", value_name = "PATH", value_hint = clap::ValueHint::ExecutablePath)]
    pub claude_bin: Option<PathBuf>,

    /// Seconds before claude is killed [default: config ask.timeoutSeconds, 300]
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,

    /// Model for claude (passed as `--model`)
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,

    /// Pass ARG through to claude; repeat for several (`--claude-arg --fallback-model --claude-arg sonnet`); tool flags are refused: set ask.tools / ask.allowedTools in config
    #[arg(long = "claude-arg", value_name = "ARG", allow_hyphen_values = true, value_parser = crate::claude::passthrough_arg)]
    pub claude_args: Vec<String>,
}

/// An id that must say something: an empty or blank one (a broker's unset
/// variable) would make every later message a "duplicate" of the first.
fn non_blank(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        return Err(format!(
            "the value is {}; give the platform's id, or leave the option out",
            if value.is_empty() { "empty" } else { "blank" }
        ));
    }
    Ok(value.to_owned())
}

/// `--attach PATH` or `PATH:NAME`. The type is guessed from the
/// extension, as the seed's brokers tell images from other files (`ask`
/// decides by the content).
fn attachment(spec: &str) -> Result<Attachment, String> {
    let (path, name) = match spec.rsplit_once(':') {
        Some((path, name)) if !path.is_empty() && !name.is_empty() && !name.contains('/') => {
            (path, Some(name.to_owned()))
        }
        _ => (spec, None),
    };
    if path.is_empty() {
        return Err("--attach needs a path, as PATH or PATH:NAME".to_owned());
    }
    let extension = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let kind = match extension.as_deref() {
        Some("png" | "jpg" | "jpeg" | "gif" | "webp" | "heic" | "bmp") => "image",
        _ => "file",
    };
    Ok(Attachment {
        kind: kind.to_owned(),
        path: path.to_owned(),
        name,
        extra: Default::default(),
    })
}

fn platform_name(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        return Err(
            "the value is empty; give the platform's name (slack, line), or leave \
                    the option out"
                .to_owned(),
        );
    }
    Ok(value.to_owned())
}

/// Where a message comes from: shared by `ask` and `append`.
#[derive(Debug, Clone, Args)]
pub struct MessageArgs {
    /// The user (sender) the message belongs to
    #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
    pub user: UserId,

    /// The platform's message id (kept as `msgId`)
    #[arg(long, value_name = "ID", value_parser = non_blank, allow_negative_numbers = true)]
    pub msg_id: Option<String>,

    /// Thread id (kept as `threadId`)
    #[arg(long, value_name = "ID", value_parser = non_blank, allow_negative_numbers = true)]
    pub thread: Option<String>,

    /// Group id (kept as `groupId`)
    #[arg(long, value_name = "ID", value_parser = non_blank, allow_negative_numbers = true)]
    pub group: Option<String>,

    /// A file sent with the message, as PATH or PATH:NAME; repeat for several. `ask` sends an
    /// image (PNG, JPEG, GIF, WebP, by content) as an image, a small text file inline, and
    /// anything else for claude to Read from its own folder (caps: limits.attachmentBytes and
    /// limits.attachmentsPerMessage)
    #[arg(long, value_name = "PATH[:NAME]", value_parser = attachment)]
    pub attach: Vec<Attachment>,

    /// Platform name stored in the line's `channel` field [default: --channel's NAME, else "unknown"]
    #[arg(long, value_name = "NAME", value_parser = platform_name)]
    pub source: Option<String>,

    /// Group or thread whose shared memory this message belongs to; --user stays the sender
    #[arg(long, value_name = "KEY", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::conversations))]
    pub conversation: Option<ConversationKey>,

    /// The sender's name: kept as `userName` in a conversation; on `ask`, names a new profile (an empty one is left out)
    #[arg(long, value_name = "NAME")]
    pub display_name: Option<String>,

    /// The message text; read from stdin when not given. A text that starts
    /// with `-` goes after `--` (or on stdin): before it, a word that looks
    /// like a flag must be one
    #[arg(value_name = "TEXT")]
    pub text: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    #[command(flatten)]
    pub message: MessageArgs,

    /// Base system prompt [default: config ask.systemPrompt]
    #[arg(long, value_name = "TEXT", conflicts_with = "system_prompt_file")]
    pub system_prompt: Option<String>,

    /// Read the base system prompt from a file
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub system_prompt_file: Option<PathBuf>,

    /// Keep claude's own system prompt and append TEXT plus the memory context to it
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["system_prompt", "system_prompt_file"])]
    pub append_system_prompt: Option<String>,

    /// Output format of the reply (`json` is the same as --json)
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,

    /// Print the reply as claude writes it, flushed per piece; with --json, one event per line [default: config ask.stream]
    #[arg(long, overrides_with = "no_stream")]
    pub stream: bool,

    /// Print the reply only once it is complete, whatever ask.stream says
    #[arg(long, overrides_with = "stream")]
    pub no_stream: bool,

    /// Do not compact after answering, even when over the threshold
    #[arg(long)]
    pub no_compact: bool,

    #[command(flatten)]
    pub claude: ClaudeArgs,
}

#[derive(Debug, Args)]
pub struct AppendArgs {
    #[command(flatten)]
    pub message: MessageArgs,

    /// Who spoke
    #[arg(long, value_enum, default_value = "user")]
    pub role: Role,

    /// Time of the message, RFC 3339 [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = time)]
    pub ts: Option<DateTime<Utc>>,

    /// With --role assistant: the --msg-id of the message this answers (kept as `replyTo`,
    /// so a redelivered message is answered from the log, as `ask` does)
    #[arg(long, value_name = "ID", allow_negative_numbers = true)]
    pub reply_to: Option<String>,

    /// Import seed-format message lines from FILE (or - for stdin); all or nothing
    #[arg(long, value_name = "FILE", conflicts_with_all = ["text", "msg_id", "ts", "thread", "group", "attach", "reply_to", "conversation"])]
    pub jsonl: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Whose memory
    #[arg(
        long,
        short = 'u',
        value_name = "ID",
        allow_negative_numbers = true,
        required_unless_present = "show_config",
        add = ArgValueCandidates::new(complete::users)
    )]
    pub user: Option<UserId>,

    /// Number of recent messages [default: config stm.contextWindow]
    #[arg(long, short = 'n', value_name = "N", value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub window: Option<u32>,

    /// Whose shared memory, for a group or thread (--user is then the sender)
    #[arg(long, value_name = "KEY", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::conversations))]
    pub conversation: Option<ConversationKey>,

    /// List each part, its size and estimated tokens, and what the size budget dropped or cut
    #[arg(long)]
    pub explain: bool,

    /// Print the effective configuration (defaults merged with config.json) instead
    #[arg(long)]
    pub show_config: bool,

    /// The message to answer (after `--`, as `ask` takes it): the context then holds what recall finds for it
    #[arg(value_name = "TEXT", allow_hyphen_values = true, last = true)]
    pub message: Vec<String>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("who").required(true).args(["user", "conversation", "all"]))]
pub struct CompactArgs {
    /// Compact this user
    #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
    pub user: Option<UserId>,

    /// Compact this group or thread conversation
    #[arg(long, value_name = "KEY", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::conversations))]
    pub conversation: Option<ConversationKey>,

    /// Compact every user over the threshold
    #[arg(long)]
    pub all: bool,

    /// Compact even under the threshold (anything beyond the context window)
    #[arg(long)]
    pub force: bool,

    /// Say what would be compacted; change nothing, call nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Started by `ask` in the background: a failure also goes to the failure log
    #[arg(long, hide = true)]
    pub background: bool,

    #[command(flatten)]
    pub claude: ClaudeArgs,
}

#[derive(Debug, Args)]
pub struct MaintainArgs {
    /// Run only these tasks
    #[arg(long, value_enum, value_delimiter = ',', value_name = "TASK,…")]
    pub only: Vec<Task>,

    /// List every action; change nothing, call nothing
    #[arg(long)]
    pub dry_run: bool,

    /// LLM calls run in parallel
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=crate::claude::supervise::MAX_CHILDREN as i64))]
    pub jobs: u32,

    /// At most N LLM calls this run; the rest waits for the next run
    #[arg(long, value_name = "N")]
    pub max_llm_calls: Option<u32>,

    /// Pretend the time is this (RFC 3339), for catching up and tests
    #[arg(long, value_name = "RFC3339", value_parser = time)]
    pub now: Option<DateTime<Utc>>,

    /// Regenerate summaries that already exist
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub claude: ClaudeArgs,
}

#[derive(Debug, Args)]
pub struct SessionArgs {
    #[command(subcommand)]
    pub command: SessionCommand,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Channel-wide or one user's counts, storage and spend
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session status\n  \
        claude-session --channel slack session status --user U0123ABC --json"
    )]
    Status {
        /// Show this user only
        #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
        user: Option<UserId>,
    },
    /// One row per person (1:1 or in groups): messages, last activity, size, spend
    #[command(
        after_help = "Reads every person's files: its time grows with the number of people \
        (progress is shown on a terminal).\n\n\
        Examples:\n  claude-session --channel slack session users\n  \
        claude-session --channel slack session users --sort size --limit 10"
    )]
    Users {
        /// Order of the rows, largest or newest first
        #[arg(long, value_enum, default_value = "activity")]
        sort: UserSort,
        /// Show at most N users
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// One row per conversation (group or thread): messages, people, last activity, spend
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session conversations\n  \
        claude-session --channel slack session conversations --sort messages --json"
    )]
    Conversations {
        /// Order of the rows, largest or newest first
        #[arg(long, value_enum, default_value = "activity")]
        sort: UserSort,
        /// Show at most N conversations
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// The conversation, readable
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session show --user U0123ABC -n 20\n  \
        claude-session --channel slack session show --user U0123ABC \\\n      --archive --since 2026-03-01"
    )]
    #[command(group = clap::ArgGroup::new("whose").required(true).args(["user", "conversation"]))]
    Show {
        /// Whose conversation
        #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
        user: Option<UserId>,
        /// A group or thread conversation instead of a user's
        #[arg(long, value_name = "KEY", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::conversations))]
        conversation: Option<ConversationKey>,
        /// Last N messages
        #[arg(short = 'n', value_name = "N")]
        count: Option<usize>,
        /// Include the gzip archives, oldest first
        #[arg(long)]
        archive: bool,
        /// Only messages on or after DATE (YYYY-MM-DD or RFC 3339)
        #[arg(long, value_name = "DATE", value_parser = day_or_time)]
        since: Option<DayOrTime>,
    },
    /// Clear a user's short-term memory, or with --all everything of the user
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session clear --user U0123ABC\n  \
        claude-session --channel slack session clear --user U0123ABC --all --yes"
    )]
    Clear {
        /// Whose memory
        #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
        user: UserId,
        /// Everything: STM, profile, summaries, archive, index entry
        #[arg(long)]
        all: bool,
        /// Do not ask for confirmation
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Delete one message and the reply that answers it (LINE's unsend), from the log and archives
    #[command(
        after_help = "Examples:\n  claude-session --channel line session delete --user U1 --msg-id 4711\n  \
        claude-session --channel line session delete --user U1 --conversation C42 \\\n      --msg-id 4712 --json\n\n\
        Removes the line the person sent with that id and the reply to it, from the short-term\n\
        log and the archives, under the memory's lock; search no longer finds them. Summaries\n\
        already written are left as they are. Deleting a message that is gone changes nothing\n\
        and exits 0."
    )]
    Delete {
        /// Who sent the message
        #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
        user: UserId,
        /// The platform's message id it was logged with (`--msg-id` of ask or append)
        #[arg(long, value_name = "ID", value_parser = non_blank, allow_negative_numbers = true)]
        msg_id: String,
        /// The group or thread conversation it was sent in
        #[arg(long, value_name = "KEY", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::conversations))]
        conversation: Option<ConversationKey>,
    },
    /// Show, replace or edit a user's profile
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session profile --user U0123ABC\n  \
        claude-session --channel slack session profile --user U0123ABC \\\n      --set profile.md\n  \
        claude-session --channel slack session profile --user U0123ABC --edit"
    )]
    Profile {
        /// Whose profile
        #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
        user: UserId,
        /// Replace it with FILE (or - for stdin)
        #[arg(long, value_name = "FILE", conflicts_with = "edit")]
        set: Option<PathBuf>,
        /// Open it in $VISUAL or $EDITOR
        #[arg(long)]
        edit: bool,
    },
    /// List topic notes
    #[command(after_help = "Examples:\n  claude-session --channel slack session topics")]
    Topics,
    /// Show or set one topic note
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session topic show toeic\n  \
        claude-session --channel slack session topic set toeic notes.md \\\n      --tags exam,english"
    )]
    Topic {
        #[command(subcommand)]
        command: TopicCommand,
    },
    /// Delete a topic note
    #[command(after_help = "Examples:\n  claude-session --channel slack session forget toeic")]
    Forget {
        /// The topic's slug (its file name without .md)
        #[arg(add = ArgValueCandidates::new(complete::topics))]
        slug: TopicSlug,
    },
    /// Find anything anyone said: messages (short-term and archived), summaries, profiles, topics
    #[command(after_help = SEARCH_HELP)]
    Search(SearchArgs),
    /// Export everything of a user
    #[command(
        after_help = "Examples:\n  claude-session --channel slack session export --user U0123ABC --out u.json\n  \
        claude-session --channel slack session export --user U0123ABC --out u.tar.gz\n  \
        claude-session --channel slack session export --user U0123ABC \\\n      --out u-export/"
    )]
    Export {
        /// Whose data
        #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
        user: UserId,
        /// Where to write it (must not exist yet, or be an empty folder)
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
        /// dir: the sessions layout; json: one document; tar.gz: the dir, packed [default: from --out: json for *.json and -, tar.gz for *.tar.gz and *.tgz, else dir]
        #[arg(long, value_enum)]
        format: Option<ExportFormat>,
    },
    /// Rebuild ltm/index.json, the record of who wrote in which group, and the recall index, from the files
    #[command(after_help = "Examples:\n  claude-session --channel slack session reindex")]
    Reindex,
}

const SEARCH_HELP: &str = "\
One QUERY argument (one word, or words in quotes) matches as a phrase,
case-insensitively, in message text and in the text of summaries, profiles
and topic notes (not in ids or JSON keys); hits come newest first: where
(person or conversation, file, line), when, who spoke, and the line.

Several words, unquoted (`pottery class`), are ranked by relevance as
`ask`'s recall ranks them: every message and daily or weekly summary line
with any of the words is a hit, best first, with its rank and score;
words are matched whole, case-folded and stemmed (\"hiking\" finds
\"hiked\"), Chinese, Japanese and Korean by character pairs. --ranked
ranks one argument too; --phrase matches several words as one phrase;
--regex takes one pattern. Ranked search covers messages and daily and
weekly summaries, not profiles, topic notes or tags.

--json prints one object per hit (JSON Lines); a ranked hit has its rank
and score. A damaged archive is searched as far as it can be read, with a
warning. Without --user it reads every person's files: its time grows with
the number of people (progress is shown on a terminal).

Examples:
  claude-session --channel slack session search refund
  claude-session --channel slack session search --user U0123ABC pottery class
  claude-session --channel slack session search TOEIC --user U0123ABC \\
      --since 2026-03-01
  claude-session --channel slack session search --phrase thank you \\
      --kind messages
  claude-session --channel slack session search 'refund|chargeback' \\
      --regex --kind messages
  claude-session --channel slack --json session search invoice \\
      --conversation C042 --limit 0";

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// One argument: a phrase to find (case-insensitive), or with --regex a pattern; several: words to rank
    #[arg(value_name = "QUERY", required = true, num_args = 1..)]
    pub query: Vec<String>,

    /// QUERY is a regular expression (Rust regex syntax, case-insensitive)
    #[arg(long, short = 'e', conflicts_with_all = ["ranked", "phrase"])]
    pub regex: bool,

    /// Rank by relevance, best first, even a single QUERY argument
    #[arg(long, short = 'r', conflicts_with = "phrase")]
    pub ranked: bool,

    /// Match several QUERY words as one phrase, newest first, as one quoted argument would
    #[arg(long, short = 'p')]
    pub phrase: bool,

    /// Only this person: their own memory, and what they said (or were answered) in groups
    #[arg(long, short = 'u', value_name = "ID", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::users))]
    pub user: Option<UserId>,

    /// Only this group or thread conversation
    #[arg(long, value_name = "KEY", allow_negative_numbers = true, add = ArgValueCandidates::new(complete::conversations))]
    pub conversation: Option<ConversationKey>,

    /// Only messages of this role (leaves out summaries, profiles and topics)
    #[arg(long, value_enum)]
    pub role: Option<Role>,

    /// Only what was said on or after this (YYYY-MM-DD, midnight UTC, or RFC 3339)
    #[arg(long, value_name = "DATE", value_parser = day_or_time)]
    pub since: Option<DayOrTime>,

    /// Only what was said before this; a bare YYYY-MM-DD includes that whole day
    #[arg(long, value_name = "DATE", value_parser = day_or_time)]
    pub until: Option<DayOrTime>,

    /// Only these kinds of file; comma-separated or repeated
    #[arg(long, value_enum, value_delimiter = ',', value_name = "KIND,…")]
    pub kind: Vec<SearchKind>,

    /// Only profiles and topic notes with this tag; repeat for several
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,

    /// Show at most N hits, the newest (ranked: the best); 0 shows all
    #[arg(long, short = 'n', value_name = "N", default_value_t = 50)]
    pub limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchKind {
    Messages,
    Summaries,
    Profiles,
    Topics,
}

#[derive(Debug, Subcommand)]
pub enum TopicCommand {
    /// Print a topic note
    Show {
        /// The topic's slug
        #[arg(add = ArgValueCandidates::new(complete::topics))]
        slug: TopicSlug,
    },
    /// Write a topic note from FILE (or - / nothing for stdin)
    Set {
        /// The topic's slug (letters, digits, - _ .)
        #[arg(add = ArgValueCandidates::new(complete::topics))]
        slug: TopicSlug,
        /// The note (markdown, optional frontmatter); stdin when absent or -
        file: Option<PathBuf>,
        /// Tags, comma-separated
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
    },
}

impl Command {
    /// Every user id given on the command line (conversation keys keep the
    /// id rules at parse time already).
    pub fn user_ids(&self) -> Vec<&UserId> {
        match self {
            Command::Ask(args) => vec![&args.message.user],
            Command::Append(args) => vec![&args.message.user],
            Command::Context(args) => args.user.iter().collect(),
            Command::Compact(args) => args.user.iter().collect(),
            Command::Mcp(args) => vec![&args.user],
            Command::Maintain(_) | Command::Doctor(_) | Command::Init(_) => Vec::new(),
            Command::Session(args) => match &args.command {
                SessionCommand::Status { user } => user.iter().collect(),
                SessionCommand::Show { user, .. } => user.iter().collect(),
                SessionCommand::Clear { user, .. }
                | SessionCommand::Delete { user, .. }
                | SessionCommand::Profile { user, .. }
                | SessionCommand::Export { user, .. } => vec![user],
                _ => Vec::new(),
            },
        }
    }
}

/// The tasks of a `maintain` pass, in the order a pass runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Task {
    /// Move group conversations an earlier version kept under a bare key behind `#`
    Migrate,
    /// Archive the short-term memory of people idle for scheduler.stmExpireDays
    StmExpiry,
    /// Archive broker logs older than scheduler.logRotateDays
    LogRotation,
    /// Summarise old messages of everyone over the threshold
    Compact,
    /// Write the daily summaries due
    Daily,
    /// Write the weekly summaries due
    Weekly,
    /// Build the recall index of the past archive days not in a current one
    Index,
    /// Remove empty folders, stale temporary files and old in-chat exports
    Prune,
}

impl Task {
    /// Its name on the command line and in reports (`stm-expiry`): the
    /// value clap derives from the variant, the one definition.
    pub fn name(self) -> String {
        self.to_possible_value()
            .expect("no task is hidden")
            .get_name()
            .to_owned()
    }
}

/// In `maintain --json`, a task is its name.
impl serde::Serialize for Task {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// An RFC 3339 time (`--ts`, `--now`).
fn time(text: &str) -> Result<DateTime<Utc>, String> {
    crate::memory::message::parse_ts(text)
}

/// `YYYY-MM-DD` or an RFC 3339 time (`--since`, `--until`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayOrTime {
    Day(NaiveDate),
    Time(DateTime<Utc>),
}

impl DayOrTime {
    /// Where a range that starts here starts: a day's midnight (UTC).
    pub fn start(self) -> DateTime<Utc> {
        match self {
            DayOrTime::Day(day) => day.and_time(NaiveTime::MIN).and_utc(),
            DayOrTime::Time(time) => time,
        }
    }

    /// Where a range that ends here ends: after the whole day, at the next
    /// midnight (UTC).
    pub fn end(self) -> DateTime<Utc> {
        match self {
            DayOrTime::Day(day) => (day + chrono::Duration::days(1))
                .and_time(NaiveTime::MIN)
                .and_utc(),
            DayOrTime::Time(time) => time,
        }
    }
}

fn day_or_time(text: &str) -> Result<DayOrTime, String> {
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(DayOrTime::Day(day));
    }
    crate::memory::message::parse_ts(text)
        .map(DayOrTime::Time)
        .map_err(|e| format!("{e}; give YYYY-MM-DD or an RFC 3339 time"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UserSort {
    Activity,
    Messages,
    Size,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Dir,
    Json,
    #[value(name = "tar.gz")]
    TarGz,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn task_names_are_their_command_line_values() {
        for task in Task::value_variants() {
            let value = task.to_possible_value().expect("no task is hidden");
            assert_eq!(task.name(), value.get_name());
            assert_eq!(
                serde_json::to_value(task).unwrap(),
                serde_json::Value::from(task.name())
            );
        }
    }

    #[test]
    fn attachments() {
        let a = attachment("/tmp/x.PNG:photo").unwrap();
        assert_eq!(
            (a.kind.as_str(), a.path.as_str(), a.name.as_deref()),
            ("image", "/tmp/x.PNG", Some("photo"))
        );
        let b = attachment("/tmp/report.pdf").unwrap();
        assert_eq!((b.kind.as_str(), b.name), ("file", None));
        assert!(attachment("").is_err());
    }

    #[test]
    fn a_day_spans_from_its_midnight_to_the_next() {
        let day = day_or_time("2026-03-23").unwrap();
        assert_eq!(day.start().to_rfc3339(), "2026-03-23T00:00:00+00:00");
        assert_eq!(day.end().to_rfc3339(), "2026-03-24T00:00:00+00:00");
        let time = day_or_time("2026-03-23T10:00:00+02:00").unwrap();
        assert_eq!(time.start(), time.end());
        assert_eq!(time.start().to_rfc3339(), "2026-03-23T08:00:00+00:00");
        assert!(
            day_or_time("23/03/2026")
                .unwrap_err()
                .contains("YYYY-MM-DD")
        );
    }
}

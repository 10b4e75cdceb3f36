//! Every config key, defined once: its name as written in `config.json`,
//! its type, default, allowed values and one-line doc. The `Config`
//! structs, their defaults, the checks of `validate.rs`, the key list of
//! the did-you-mean and the README's configuration table all come from
//! the table at the bottom of this file; no other file defines a key (a
//! few name one in their words: the rule between the threshold and the
//! window in `validate.rs`, the seed's `stm.maxMessages` in `mod.rs`, the
//! hints of error messages).

use serde::{Deserialize, Serialize};

use crate::config::rules::{
    AbsolutePaths, Any, Check, EnvNames, Names, at_least, at_most, from_to,
};

/// One key of the table.
pub struct Key {
    /// As written in the file, dotted: `stm.contextWindow`.
    pub name: &'static str,
    /// The key's doc comment, one line per `///`, as the README shows it.
    pub doc: &'static str,
    /// The README's default where the default is unset (`null`).
    pub unset: Option<&'static str>,
    /// The key's rule applied to its value: `Err("is 0; it must be …")`.
    pub check: fn(&Config) -> Result<(), String>,
    /// What the rule allows, for the README (`None`: what the type says).
    pub allowed: fn() -> Option<String>,
}

impl Key {
    /// The doc as one line.
    pub fn doc(&self) -> String {
        self.doc.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

macro_rules! unset {
    () => {
        None
    };
    ($text:literal) => {
        Some($text)
    };
}

/// The table's grammar: sections, each with its keys as
/// `/// doc` then `field: Type = default, "name", rule[, unset "text"];`.
macro_rules! config_keys {
    ($(
        $(#[doc = $section_doc:literal])*
        $section:ident: $Section:ident = $section_name:literal {$(
            $(#[doc = $doc:literal])+
            $field:ident: $ty:ty = $default:expr, $key:literal, $rule:expr
            $(, unset $unset:literal)?;
        )+}
    )+) => {
        /// `sessions/config.json`: every section, every key optional.
        #[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
        #[serde(default)]
        pub struct Config {
            $(#[serde(rename = $section_name)] pub $section: $Section,)+
        }

        /// The sections, as written in the file.
        pub const SECTIONS: &[&str] = &[$($section_name),+];

        $(
            $(#[doc = $section_doc])*
            #[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
            #[serde(default)]
            pub struct $Section {
                $($(#[doc = $doc])+ #[serde(rename = $key)] pub $field: $ty,)+
            }

            impl Default for $Section {
                fn default() -> Self {
                    Self { $($field: $default,)+ }
                }
            }
        )+

        /// Every key, in the order of the file's sections.
        pub static KEYS: &[Key] = &[$($(Key {
            name: concat!($section_name, ".", $key),
            doc: concat!($($doc),+),
            unset: unset!($($unset)?),
            check: |config| <_ as Check<$ty>>::check(&$rule, &config.$section.$field),
            allowed: || <_ as Check<$ty>>::allowed(&$rule),
        },)+)+];
    };
}

/// The model alias of background work (compaction, summaries) unless
/// configured: small and cheap; the reply model stays the operator's.
pub const BACKGROUND_MODEL: &str = "haiku";

/// `compacting.mode`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum CompactionMode {
    /// The `ask` process compacts before it exits (stdout is closed first,
    /// but a broker that waits for the exit waits for the summariser).
    Inline,
    /// The `ask` process starts a detached `compact` and exits at once:
    /// the default, so no broker's reply waits for a summariser call.
    #[default]
    Background,
}

/// `ask.confinement`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confinement {
    /// Refuse to run claude where the kernel cannot confine it.
    Required,
    /// Confine where the kernel can; run unconfined (and `doctor` says so)
    /// where it cannot.
    #[default]
    BestEffort,
    /// Never confine.
    Off,
}

impl BudgetConfig {
    pub fn any_ask_cap(&self) -> bool {
        self.daily_usd.is_some()
            || self.monthly_usd.is_some()
            || self.channel_daily_usd.is_some()
            || self.channel_monthly_usd.is_some()
    }
}

config_keys! {
    /// The recent messages given to each call.
    stm: StmConfig = "stm" {
        /// the seed's name for the threshold: used when `compacting.threshold`
        /// is not set
        max_messages: u32 = 50, "maxMessages", Any;
        /// kept for compatibility with the seed; not used
        max_age_minutes: u32 = 120, "maxAgeMinutes", Any;
        /// recent messages injected into each call
        context_window: u32 = 10, "contextWindow", at_most(10_000);
        /// size budget of the whole context block; oldest messages drop
        /// first, then a long one is cut
        max_context_chars: u32 = 12_000, "maxContextChars", at_least(100);
    }
    /// Folding old messages into summaries, and when summaries are due.
    compacting: CompactingConfig = "compacting" {
        /// compact after `ask` and in `maintain`
        enabled: bool = true, "enabled", Any;
        /// compact when a user has more messages than this (at least
        /// `stm.contextWindow`)
        threshold: u32 = 50, "threshold", at_most(1_000_000);
        /// UTC hour from which daily summaries are written
        daily_summary_hour: u32 = 3, "dailySummaryHour",
            at_most(23).said("an hour from 0 to 23");
        /// weekday on which the past week's summary is due
        weekly_summary_day: u32 = 0, "weeklySummaryDay",
            at_most(6).said("0 (Sunday) to 6 (Saturday)");
        /// `background`: `ask` starts a detached `compact` and exits at
        /// once; `inline`: it compacts before it exits (the reply is out
        /// first, but the process ends after the summariser call)
        mode: CompactionMode = CompactionMode::Background, "mode", Any;
        /// replaces the summariser's instructions
        summary_prompt: Option<String> = None, "summaryPrompt", Any, unset "built in";
        /// model of compaction calls (`null`: claude's default); `--model`
        /// of `compact`/`maintain` wins
        model: Option<String> = Some(BACKGROUND_MODEL.into()), "model", Any;
    }
    /// What `maintain` expires, rotates and compresses.
    scheduler: SchedulerConfig = "scheduler" {
        /// days before `logs/broker-*.log` are archived
        log_rotate_days: u32 = 7, "logRotateDays", Any;
        /// days idle before a user's STM moves to the archive
        stm_expire_days: u32 = 3, "stmExpireDays", Any;
        /// the seed's timer interval; kept, cron decides here
        cleanup_interval_minutes: u32 = 60, "cleanupIntervalMinutes", Any;
        /// gzip rotated logs
        archive_compression: bool = true, "archiveCompression", Any;
    }
    /// How hard writes try to reach the disk, and how long locks wait.
    durability: DurabilityConfig = "durability" {
        /// fsync every append and rewrite
        fsync: bool = true, "fsync", Any;
        /// how long to wait for another process's lock (then exit 4)
        lock_timeout_ms: u64 = 10_000, "lockTimeoutMs", Any;
    }
    /// The claude call of `ask`.
    ask: AskConfig = "ask" {
        /// base system prompt when no flag gives one (replaces Claude Code's
        /// coding prompt; `--append-system-prompt` keeps that one instead)
        system_prompt: Option<String> = None, "systemPrompt", Any,
            unset "a short chat prompt";
        /// kill claude after this long (exit 124)
        timeout_seconds: u64 = 300, "timeoutSeconds", at_least(1);
        /// `ask` prints the reply as claude writes it (as `--stream`;
        /// `--no-stream` overrides)
        stream: bool = false, "stream", Any;
        /// built-in tools offered to the model, as claude's `--tools` takes
        /// them (`["Read"]`); none by default
        tools: Vec<String> = Vec::new(), "tools", Names;
        /// permission rules, as claude's `--allowedTools` takes them
        /// (`["Bash(date)"]`)
        allowed_tools: Vec<String> = Vec::new(), "allowedTools", Names;
        /// claude's own retries of a failed API request; then exit 75
        max_retries: u32 = 2, "maxRetries",
            at_most(10).because("each retry of a failing API keeps the broker waiting");
        /// more environment variables claude may see: names or prefixes
        /// (`"AWS_*"`); see Security
        env: Vec<String> = Vec::new(), "env", EnvNames;
        /// give claude the read-only memory tools of `claude-session mcp`
        /// (search_memory, read_day, profile) over this person's or this
        /// conversation's memory; see Recall
        recall: bool = false, "recall", Any;
        /// Landlock around claude's process tree: `"required"` (refuse to
        /// run claude where the kernel cannot confine it), `"best-effort"`
        /// (confine where it can; `doctor` says which), `"off"`; see Security
        confinement: Confinement = Confinement::BestEffort, "confinement", Any;
        /// absolute paths a confined claude may also read (a knowledge base
        /// for its `Read` tool)
        readable_paths: Vec<std::path::PathBuf> = Vec::new(), "readablePaths", AbsolutePaths;
        /// absolute paths a confined claude may also write (or the
        /// comma-separated `CLAUDE_SESSION_CLAUDE_WRITABLE`)
        writable_paths: Vec<std::path::PathBuf> = Vec::new(), "writablePaths", AbsolutePaths;
    }
    /// The long-term memory: the profile.
    ltm: LtmConfig = "ltm" {
        /// compaction merges durable facts into the user's profile
        auto_profile: bool = true, "autoProfile", Any;
        /// replaces the profile-facts instructions
        profile_prompt: Option<String> = None, "profilePrompt", Any, unset "built in";
    }
    /// Spending caps in US dollars; unset means no cap. Per-user caps count
    /// what `ask` spent for that sender; channel caps count every ask; the
    /// maintenance cap counts compaction and summary calls.
    budget: BudgetConfig = "budget" {
        /// per sender: no more asks today once spent
        daily_usd: Option<f64> = None, "dailyUsd", DOLLARS, unset "none";
        /// per sender, this calendar month (UTC)
        monthly_usd: Option<f64> = None, "monthlyUsd", DOLLARS, unset "none";
        /// all asks of the state dir, today
        channel_daily_usd: Option<f64> = None, "channelDailyUsd", DOLLARS, unset "none";
        /// all asks of the state dir, this month
        channel_monthly_usd: Option<f64> = None, "channelMonthlyUsd", DOLLARS, unset "none";
        /// compaction and summary calls, today
        maintenance_daily_usd: Option<f64> = None, "maintenanceDailyUsd", DOLLARS,
            unset "none";
        /// what `ask` answers when a budget is used up
        message: Option<String> = None, "message", Any, unset "built in";
    }
    /// Daily and weekly summaries (`maintain`).
    summaries: SummariesConfig = "summaries" {
        /// model of daily and weekly summaries (`null`: claude's default)
        model: Option<String> = Some(BACKGROUND_MODEL.into()), "model", Any;
    }
    /// Sizes and rates that keep one chat user from filling the disk or the
    /// bill: checked before anything is logged or written.
    limits: LimitsConfig = "limits" {
        /// longest message `ask` and `append` accept, and `context` shows
        /// a context for (bytes, UTF-8; above what any chat platform sends
        /// in one message); longer is refused (exit 2) before anything is
        /// logged
        max_message_bytes: u64 = 64 * 1024, "maxMessageBytes", at_least(1);
        /// longest reply kept in the log (bytes); the reply is printed
        /// whole, the stored copy is cut with a marker
        max_reply_bytes: u64 = 256 * 1024, "maxReplyBytes", at_least(1024);
        /// in-chat `/session export`s per person per day (UTC)
        chat_exports_per_day: u32 = 3, "chatExportsPerDay", Any;
        /// days an in-chat export is kept; `maintain` (prune) removes older
        /// ones
        chat_export_retention_days: u32 = 7, "chatExportRetentionDays", Any;
        /// largest file `ask --attach` takes (bytes); larger is refused
        /// (exit 2) before anything is logged (claude scales a large image
        /// down itself before sending it)
        attachment_bytes: u64 = 10 * 1024 * 1024, "attachmentBytes", at_least(1);
        /// most `--attach` files one message may carry (0 refuses every
        /// attachment); more is refused (exit 2) before anything is logged
        attachments_per_message: u32 = 10, "attachmentsPerMessage",
            at_most(100).because("the API takes at most 100 images in one request");
        /// characters of text attachments put into one prompt inline; a
        /// text file beyond them is left in claude's folder for `Read`
        /// instead (0: never inline)
        inline_text_chars: u32 = 20_000, "inlineTextChars", Any;
    }
    /// Auto-recall: earlier messages relevant to the one being answered, put
    /// into the context by `ask` (no extra call).
    recall: RecallConfig = "recall" {
        /// `ask` searches the whole memory (log, archives, daily, weekly
        /// and retired rolling summaries) for the message and adds the relevant earlier messages
        /// to the context; no extra call; see How memory works
        auto: bool = true, "auto", Any;
        /// characters the recalled section may take (inside
        /// `stm.maxContextChars`, still the cap of the whole block)
        max_chars: u32 = 4_000, "maxChars", Any;
        /// hits recalled at most, each with its neighbours
        max_passages: u32 = 12, "maxPassages", Any;
        /// the relevance floor (a BM25 score): a passage under it is not
        /// recalled, so small talk recalls nothing; raise it for less, lower
        /// it for more
        min_score: f64 = 3.0, "minScore", at_least(0).said("a number, 0 or more");
        /// the recency prior: the newest message's score is raised by this
        /// share, the oldest's not at all
        recency_weight: f64 = 0.05, "recencyWeight", from_to(0.0, 1.0);
        /// turns recalled on each side of a hit (the question before an
        /// answer, the answer after a question)
        neighbours: u32 = 1, "neighbours", at_most(5);
    }
}

/// A budget cap.
const DOLLARS: crate::config::rules::Range = at_least(0).said("a number of dollars, 0 or more");

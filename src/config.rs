//! `sessions/config.json`: the seed's keys and defaults, every field
//! optional, plus the keys this tool adds.
//!
//! A malformed file is an error naming file, line and column; a value of
//! the wrong type names its key; an unknown key is a warning. Nothing falls
//! back to defaults silently: a typo in a threshold must not go unnoticed.

use std::path::Path;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diag;
use crate::error::{Exit, failure};

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct Config {
    pub stm: StmConfig,
    pub compacting: CompactingConfig,
    pub scheduler: SchedulerConfig,
    pub durability: DurabilityConfig,
    pub ask: AskConfig,
    pub ltm: LtmConfig,
    pub budget: BudgetConfig,
    pub summaries: SummariesConfig,
    pub limits: LimitsConfig,
    pub recall: RecallConfig,
}

/// Auto-recall: earlier messages relevant to the one being answered, put
/// into the context by `ask` (no extra call).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct RecallConfig {
    /// Search the whole memory for each message and add what is relevant.
    pub auto: bool,
    /// Characters the recalled section may take (inside
    /// `stm.maxContextChars`, which stays the cap of the whole block).
    pub max_chars: u32,
    /// Passages (a hit with its neighbours) at most.
    pub max_passages: u32,
    /// The relevance floor: a passage scoring less is not recalled.
    pub min_score: f64,
    /// The recency prior: the newest message's score is raised by this
    /// share, the oldest's not at all.
    pub recency_weight: f64,
    /// Turns taken on each side of a hit (its question, its answer).
    pub neighbours: u32,
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            auto: true,
            max_chars: 4_000,
            max_passages: 12,
            min_score: 3.0,
            recency_weight: 0.05,
            neighbours: 1,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct StmConfig {
    /// The seed's name for the compaction threshold: used when
    /// `compacting.threshold` is not set.
    pub max_messages: u32,
    /// Kept for compatibility with the seed; not used by this tool.
    pub max_age_minutes: u32,
    /// Recent messages injected into each call.
    pub context_window: u32,
    /// Size budget of the whole context block, in characters.
    pub max_context_chars: u32,
}

impl Default for StmConfig {
    fn default() -> Self {
        Self {
            max_messages: 50,
            max_age_minutes: 120,
            context_window: 10,
            max_context_chars: 12_000,
        }
    }
}

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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct CompactingConfig {
    pub enabled: bool,
    pub threshold: u32,
    pub daily_summary_hour: u32,
    pub weekly_summary_day: u32,
    pub mode: CompactionMode,
    /// Replaces the built-in summariser prompt.
    pub summary_prompt: Option<String>,
    /// Model of compaction calls (`null`: claude's default). `--model`
    /// of `compact` and `maintain` wins.
    pub model: Option<String>,
}

impl Default for CompactingConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 50,
            daily_summary_hour: 3,
            weekly_summary_day: 0,
            mode: CompactionMode::Background,
            summary_prompt: None,
            model: Some(BACKGROUND_MODEL.into()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct SchedulerConfig {
    pub log_rotate_days: u32,
    pub stm_expire_days: u32,
    /// The seed's in-process timer interval; cron decides here. Kept for
    /// compatibility.
    pub cleanup_interval_minutes: u32,
    pub archive_compression: bool,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            log_rotate_days: 7,
            stm_expire_days: 3,
            cleanup_interval_minutes: 60,
            archive_compression: true,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct DurabilityConfig {
    /// fsync after every append and rewrite.
    pub fsync: bool,
    /// How long to wait for another process's lock before giving up.
    pub lock_timeout_ms: u64,
}

impl Default for DurabilityConfig {
    fn default() -> Self {
        Self {
            fsync: true,
            lock_timeout_ms: 10_000,
        }
    }
}

/// The model alias of background work (compaction, summaries) unless
/// configured: small and cheap; the reply model stays the operator's.
pub const BACKGROUND_MODEL: &str = "haiku";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct AskConfig {
    /// Base system prompt when neither flag gives one.
    pub system_prompt: Option<String>,
    pub timeout_seconds: u64,
    /// Print replies as claude writes them (`ask --stream`) unless
    /// `--no-stream` is given.
    pub stream: bool,
    /// Built-in tools offered to the model, as claude's `--tools` takes
    /// them (`["Read"]`); none by default.
    pub tools: Vec<String>,
    /// Permission rules, as claude's `--allowedTools` takes them.
    pub allowed_tools: Vec<String>,
    /// claude's own retries of a failed API request.
    pub max_retries: u32,
    /// More environment variables claude may see (names, or `PREFIX*`).
    pub env: Vec<String>,
    /// Give claude the read-only memory tools of `claude-session mcp`
    /// (search_memory, read_day, profile) for this person or conversation.
    pub recall: bool,
    /// Landlock around claude's process tree: `required`, `best-effort`
    /// (where the kernel has it) or `off`.
    pub confinement: Confinement,
    /// Absolute paths a confined claude may also read (a knowledge base
    /// for its Read tool); it always may read its install and the system's.
    pub readable_paths: Vec<std::path::PathBuf>,
    /// Absolute paths a confined claude may also write; it always may
    /// write its own private folder.
    pub writable_paths: Vec<std::path::PathBuf>,
}

impl Default for AskConfig {
    fn default() -> Self {
        Self {
            system_prompt: None,
            timeout_seconds: 300,
            stream: false,
            tools: Vec::new(),
            allowed_tools: Vec::new(),
            max_retries: 2,
            env: Vec::new(),
            recall: false,
            confinement: Confinement::BestEffort,
            readable_paths: Vec::new(),
            writable_paths: Vec::new(),
        }
    }
}

/// Daily and weekly summaries (`maintain`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct SummariesConfig {
    /// Model of summary calls (`null`: claude's default).
    pub model: Option<String>,
}

impl Default for SummariesConfig {
    fn default() -> Self {
        Self {
            model: Some(BACKGROUND_MODEL.into()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct LtmConfig {
    /// Let compaction merge durable facts into the user's profile.
    pub auto_profile: bool,
    /// Replaces the built-in profile-facts prompt.
    pub profile_prompt: Option<String>,
}

impl Default for LtmConfig {
    fn default() -> Self {
        Self {
            auto_profile: true,
            profile_prompt: None,
        }
    }
}

/// Spending caps in US dollars; unset means no cap. Per-user caps count
/// what `ask` spent for that sender; channel caps count every ask; the
/// maintenance cap counts compaction and summary calls.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct BudgetConfig {
    pub daily_usd: Option<f64>,
    pub monthly_usd: Option<f64>,
    pub channel_daily_usd: Option<f64>,
    pub channel_monthly_usd: Option<f64>,
    pub maintenance_daily_usd: Option<f64>,
    /// What `ask` answers when a cap is reached.
    pub message: Option<String>,
}

impl BudgetConfig {
    pub fn any_ask_cap(&self) -> bool {
        self.daily_usd.is_some()
            || self.monthly_usd.is_some()
            || self.channel_daily_usd.is_some()
            || self.channel_monthly_usd.is_some()
    }
}

/// Sizes and rates that keep one chat user from filling the disk or the
/// bill: checked before anything is logged or written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct LimitsConfig {
    /// Longest message text `ask` and `append` accept, in bytes (UTF-8).
    /// 64 KiB is above what any chat platform sends in one message.
    pub max_message_bytes: u64,
    /// Longest reply stored in the log, in bytes; the reply is printed
    /// whole, the stored copy is cut with a marker.
    pub max_reply_bytes: u64,
    /// In-chat `/session export`s one person may make per day (UTC).
    pub chat_exports_per_day: u32,
    /// Days an in-chat export is kept before `maintain` removes it.
    pub chat_export_retention_days: u32,
    /// Largest file `ask --attach` takes, in bytes (claude scales a large
    /// image down itself before sending it).
    pub attachment_bytes: u64,
    /// Most `--attach` files one message may carry; 0 refuses them all.
    pub attachments_per_message: u32,
    /// Characters of text attachments one prompt holds inline; a text file
    /// beyond them is read with `Read` from claude's folder instead.
    pub inline_text_chars: u32,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: 64 * 1024,
            max_reply_bytes: 256 * 1024,
            chat_exports_per_day: 3,
            chat_export_retention_days: 7,
            attachment_bytes: 10 * 1024 * 1024,
            attachments_per_message: 10,
            inline_text_chars: 20_000,
        }
    }
}

/// Upper bounds that keep a typo from asking for a billion-line read.
const MAX_CONTEXT_WINDOW: u32 = 10_000;
const MAX_THRESHOLD: u32 = 1_000_000;
const MAX_RETRIES: u32 = 10;
const MAX_ATTACHMENTS: u32 = 100;

impl Config {
    /// Defaults, then `config.json` if it exists.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let (config, unknown) = Self::load_reporting(path)?;
        for warning in unknown {
            diag::warn(warning);
        }
        Ok(config)
    }

    /// [`Config::load`], the unknown keys returned (one sentence each, with
    /// the key probably meant) instead of warned about: `doctor` shows them
    /// as its config check.
    pub fn load_reporting(path: &Path) -> anyhow::Result<(Self, Vec<String>)> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Self::default(), Vec::new()));
            }
            Err(e) => {
                return Err(e).with_context(|| format!("could not read {}", path.display()));
            }
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            failure(
                Exit::Usage,
                format!(
                    "{}: not UTF-8 text (bad byte at offset {}); save it as UTF-8 JSON",
                    path.display(),
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        Self::parse_reporting(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        let (config, unknown) = Self::parse_reporting(text, path)?;
        for warning in unknown {
            diag::warn(warning);
        }
        Ok(config)
    }

    fn parse_reporting(text: &str, path: &Path) -> anyhow::Result<(Self, Vec<String>)> {
        let bad = |message: String| failure(Exit::Usage, message);
        let value: Value = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "{}:{}:{}: malformed JSON: {}; fix the file or remove it to use the defaults",
                path.display(),
                e.line(),
                e.column(),
                strip_position(&e)
            ))
        })?;
        if !value.is_object() {
            return Err(bad(format!(
                "{}: the config must be a JSON object like {{\"stm\": {{\"contextWindow\": 10}}}}",
                path.display()
            )));
        }
        // serde would take a list for a section, field by field in order:
        // `{"compacting": [false]}` must not quietly turn compaction off.
        let defaults = serde_json::to_value(Config::default()).expect("config serialises");
        for (key, section) in value.as_object().expect("checked above") {
            if defaults.get(key).is_some_and(Value::is_object) && !section.is_object() {
                let given = match section {
                    Value::Array(_) => "a list",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "true/false",
                    _ => "null",
                };
                return Err(bad(format!(
                    "{}: `{key}` must be an object of settings, like {{\"{key}\": {{…}}}}, not {given}",
                    path.display()
                )));
            }
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let mut config: Config =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
                let inner = e.inner();
                bad(format!(
                    "{}:{}:{}: bad value for `{}`: {}",
                    path.display(),
                    inner.line(),
                    inner.column(),
                    e.path(),
                    strip_position(inner)
                ))
            })?;
        // The seed documents stm.maxMessages as the compaction trigger: a
        // seed config that sets only that key means it.
        let threshold_key = if value.pointer("/compacting/threshold").is_none()
            && value.pointer("/stm/maxMessages").is_some()
        {
            config.compacting.threshold = config.stm.max_messages;
            "stm.maxMessages"
        } else {
            "compacting.threshold"
        };
        let unknown = unknown_keys(&value, &defaults, "")
            .into_iter()
            .map(|key| {
                let hint = match closest_key(&key, &defaults) {
                    Some(meant) => format!("did you mean `{meant}`?"),
                    None => "check its spelling; `claude-session context --show-config` \
                             lists every key"
                        .to_owned(),
                };
                format!(
                    "{}: unknown key `{key}` is ignored ({hint})",
                    path.display()
                )
            })
            .collect();
        config.validate(path, threshold_key)?;
        Ok((config, unknown))
    }

    /// `threshold_key` names where the threshold came from, for the error.
    fn validate(&self, path: &Path, threshold_key: &str) -> anyhow::Result<()> {
        let bad = |message: String| {
            Err(failure(
                Exit::Usage,
                format!("{}: {message}", path.display()),
            ))
        };
        let window = self.stm.context_window;
        if window > MAX_CONTEXT_WINDOW {
            return bad(format!(
                "stm.contextWindow is {window}; it must be at most {MAX_CONTEXT_WINDOW}"
            ));
        }
        let threshold = self.compacting.threshold;
        if threshold > MAX_THRESHOLD {
            return bad(format!(
                "{threshold_key} is {threshold}; it must be at most {MAX_THRESHOLD}"
            ));
        }
        if threshold < window {
            return bad(format!(
                "{threshold_key} ({threshold}) is below stm.contextWindow ({window}); \
                 compaction keeps the window raw, so the threshold must be at least the window"
            ));
        }
        if self.stm.max_context_chars < 100 {
            return bad(format!(
                "stm.maxContextChars is {}; it must be at least 100",
                self.stm.max_context_chars
            ));
        }
        let recall = &self.recall;
        if !(recall.min_score.is_finite() && recall.min_score >= 0.0) {
            return bad(format!(
                "recall.minScore is {}; it must be a number, 0 or more",
                recall.min_score
            ));
        }
        if !(recall.recency_weight.is_finite() && (0.0..=1.0).contains(&recall.recency_weight)) {
            return bad(format!(
                "recall.recencyWeight is {}; it must be from 0 to 1",
                recall.recency_weight
            ));
        }
        if recall.neighbours > 5 {
            return bad(format!(
                "recall.neighbours is {}; it must be at most 5",
                recall.neighbours
            ));
        }
        if self.compacting.daily_summary_hour > 23 {
            return bad(format!(
                "compacting.dailySummaryHour is {}; it must be an hour from 0 to 23",
                self.compacting.daily_summary_hour
            ));
        }
        if self.compacting.weekly_summary_day > 6 {
            return bad(format!(
                "compacting.weeklySummaryDay is {}; it must be 0 (Sunday) to 6 (Saturday)",
                self.compacting.weekly_summary_day
            ));
        }
        for (key, value, min) in [
            ("limits.maxMessageBytes", self.limits.max_message_bytes, 1),
            ("limits.maxReplyBytes", self.limits.max_reply_bytes, 1024),
            ("limits.attachmentBytes", self.limits.attachment_bytes, 1),
        ] {
            if value < min {
                return bad(format!("{key} is {value}; it must be at least {min}"));
            }
        }
        if self.limits.attachments_per_message > MAX_ATTACHMENTS {
            return bad(format!(
                "limits.attachmentsPerMessage is {}; it must be at most {MAX_ATTACHMENTS} (the \
                 API takes at most 100 images in one request)",
                self.limits.attachments_per_message
            ));
        }
        let budget = &self.budget;
        for (key, value) in [
            ("budget.dailyUsd", budget.daily_usd),
            ("budget.monthlyUsd", budget.monthly_usd),
            ("budget.channelDailyUsd", budget.channel_daily_usd),
            ("budget.channelMonthlyUsd", budget.channel_monthly_usd),
            ("budget.maintenanceDailyUsd", budget.maintenance_daily_usd),
        ] {
            if let Some(value) = value
                && !(value.is_finite() && value >= 0.0)
            {
                return bad(format!(
                    "{key} is {value}; it must be a number of dollars, 0 or more"
                ));
            }
        }
        if self.ask.timeout_seconds == 0 {
            return bad("ask.timeoutSeconds is 0; it must be at least 1".into());
        }
        if self.ask.max_retries > MAX_RETRIES {
            return bad(format!(
                "ask.maxRetries is {}; it must be at most {MAX_RETRIES} (each retry of a \
                 failing API keeps the broker waiting)",
                self.ask.max_retries
            ));
        }
        for name in &self.ask.env {
            let bare = name.strip_suffix('*').unwrap_or(name);
            if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return bad(format!(
                    "ask.env has {name:?}; give variable names (letters, digits, _) or a \
                     prefix ending in * (`AWS_*`); a bare * would hand claude every secret \
                     of the broker"
                ));
            }
        }
        for (key, list) in [
            ("ask.readablePaths", &self.ask.readable_paths),
            ("ask.writablePaths", &self.ask.writable_paths),
        ] {
            if let Some(path) = list.iter().find(|p| !p.is_absolute()) {
                return bad(format!(
                    "{key} has {path:?}; give absolute paths (claude runs in a folder of its own)"
                ));
            }
        }
        for (key, list) in [
            ("ask.tools", &self.ask.tools),
            ("ask.allowedTools", &self.ask.allowed_tools),
        ] {
            if list.iter().any(|t| t.trim().is_empty()) {
                return bad(format!("{key} has an empty name; remove it"));
            }
        }
        Ok(())
    }

    /// The compaction threshold: `compacting.threshold` (the seed documents
    /// `stm.maxMessages` as the same number; the compacting key wins).
    pub fn threshold(&self) -> usize {
        self.compacting.threshold as usize
    }

    pub fn context_window(&self) -> usize {
        self.stm.context_window as usize
    }

    pub fn lock_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.durability.lock_timeout_ms)
    }
}

/// serde_json's message ends in " at line L column C"; we print those first.
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// Keys of `given` that `known` (the defaults, serialised) does not have.
fn unknown_keys(given: &Value, known: &Value, prefix: &str) -> Vec<String> {
    let (Value::Object(given), Value::Object(known)) = (given, known) else {
        return Vec::new();
    };
    let mut unknown = Vec::new();
    for (key, value) in given {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match known.get(key) {
            None => unknown.push(path),
            Some(known_value) => unknown.extend(unknown_keys(value, known_value, &path)),
        }
    }
    unknown
}

/// Every key of the defaults, dotted (`stm.contextWindow`).
fn known_keys(known: &Value, prefix: &str, out: &mut Vec<String>) {
    let Value::Object(known) = known else {
        return;
    };
    for (key, value) in known {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        known_keys(value, &path, out);
        out.push(path);
    }
}

/// The known key an unknown one probably meant: the same words in another
/// case or with `_` (`context_window`), a near spelling in the same
/// section (`contextWindw`), or the same name in another section
/// (`contextWindow` at the top level is `stm.contextWindow`).
fn closest_key(unknown: &str, defaults: &Value) -> Option<String> {
    let mut known = Vec::new();
    known_keys(defaults, "", &mut known);
    let fold = |s: &str| s.replace(['_', '-'], "").to_lowercase();
    let (section, name) = unknown.rsplit_once('.').unwrap_or(("", unknown));
    let name_of = |k: &str| {
        k.rsplit_once('.')
            .map_or(k.to_owned(), |(_, n)| n.to_owned())
    };
    let section_of = |k: &str| k.rsplit_once('.').map_or("", |(s, _)| s).to_owned();
    let siblings = known.iter().filter(|k| section_of(k) == section);
    let best = siblings
        .map(|k| (strsim::jaro_winkler(&fold(name), &fold(&name_of(k))), k))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((_, key)) = best {
        return Some(key.clone());
    }
    known
        .iter()
        .find(|k| fold(&name_of(k)) == fold(name))
        .cloned()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<Config> {
        Config::parse(text, Path::new("config.json"))
    }

    #[test]
    fn empty_object_gives_the_seed_defaults() {
        let config = parse("{}").unwrap();
        assert_eq!(config, Config::default());
        assert_eq!(config.stm.context_window, 10);
        assert_eq!(config.compacting.threshold, 50);
        assert_eq!(config.scheduler.stm_expire_days, 3);
        assert_eq!(config.stm.max_context_chars, 12_000);
        assert!(config.durability.fsync);
    }

    #[test]
    fn partial_override_keeps_other_defaults() {
        let config = parse(r#"{"stm": {"contextWindow": 4}}"#).unwrap();
        assert_eq!(config.stm.context_window, 4);
        assert_eq!(config.stm.max_messages, 50);
        assert_eq!(config.compacting.threshold, 50);
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let err = parse("{\n  \"stm\": {,}\n}").unwrap_err().to_string();
        assert!(err.starts_with("config.json:2:11:"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_key() {
        let err = parse(r#"{"stm": {"contextWindow": "ten"}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`stm.contextWindow`"), "{err}");
        let err = parse(r#"{"stm": {"contextWindow": -3}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`stm.contextWindow`"), "{err}");
    }

    #[test]
    fn a_seed_config_with_only_max_messages_sets_the_threshold() {
        let config = parse(r#"{"stm": {"maxMessages": 20}}"#).unwrap();
        assert_eq!(config.threshold(), 20);
        let config =
            parse(r#"{"stm": {"maxMessages": 20}, "compacting": {"threshold": 30}}"#).unwrap();
        assert_eq!(config.threshold(), 30);
    }

    #[test]
    fn a_low_max_messages_is_named_in_the_error() {
        let err = parse(r#"{"stm": {"maxMessages": 5}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("stm.maxMessages (5) is below"), "{err}");
    }

    #[test]
    fn a_section_given_as_a_list_is_refused() {
        let err = parse(r#"{"compacting": [false]}"#).unwrap_err().to_string();
        assert!(err.contains("`compacting` must be an object"), "{err}");
    }

    #[test]
    fn threshold_below_window_is_refused() {
        let err = parse(r#"{"compacting": {"threshold": 5}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("below stm.contextWindow"), "{err}");
    }

    #[test]
    fn unknown_keys_are_found_at_any_depth() {
        let given: Value =
            serde_json::from_str(r#"{"stm": {"contextWindw": 1}, "extra": 2}"#).unwrap();
        let known = serde_json::to_value(Config::default()).unwrap();
        assert_eq!(
            unknown_keys(&given, &known, ""),
            vec!["stm.contextWindw".to_string(), "extra".to_string()]
        );
    }

    /// Issue 25: a typo'd key names the key it probably meant.
    #[test]
    fn an_unknown_key_names_the_key_it_probably_meant() {
        let known = serde_json::to_value(Config::default()).unwrap();
        let meant = |key: &str| closest_key(key, &known);
        assert_eq!(
            meant("stm.contextWindw").as_deref(),
            Some("stm.contextWindow")
        );
        assert_eq!(
            meant("stm.context_window").as_deref(),
            Some("stm.contextWindow")
        );
        assert_eq!(meant("compactng").as_deref(), Some("compacting"));
        assert_eq!(meant("contextWindow").as_deref(), Some("stm.contextWindow"));
        assert_eq!(meant("zzzz"), None);
        let (_, unknown) =
            Config::parse_reporting(r#"{"stm": {"contextWindw": 2}}"#, Path::new("config.json"))
                .unwrap();
        assert_eq!(
            unknown,
            [
                "config.json: unknown key `stm.contextWindw` is ignored (did you mean \
              `stm.contextWindow`?)"
            ]
        );
    }
}

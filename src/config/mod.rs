//! `sessions/config.json`: the seed's keys and defaults, every field
//! optional, plus the keys this tool adds. Each key is defined once, in
//! `keys.rs` (its name, type, default, allowed values and doc); `rules.rs`
//! holds what the values may be, `validate.rs` checks them, `unknown.rs`
//! warns about keys the tool does not read, and `readme.rs` renders the
//! README's table from the definition.
//!
//! A malformed file is an error naming file, line and column; a value of
//! the wrong type names its key; an unknown key is a warning. Nothing falls
//! back to defaults silently: a typo in a threshold must not go unnoticed.

mod keys;
mod readme;
mod rules;
mod unknown;
mod validate;

use std::path::Path;

use anyhow::Context as _;
use serde_json::Value;

use crate::diag;
use crate::error::{Exit, failure};

pub use keys::{
    AskConfig, BACKGROUND_MODEL, BudgetConfig, CompactingConfig, CompactionMode, Config,
    Confinement, DurabilityConfig, KEYS, Key, LimitsConfig, LtmConfig, RecallConfig, SECTIONS,
    SchedulerConfig, StmConfig, SummariesConfig,
};
pub use readme::readme_table;

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
        check_shape(&value, path)?;
        let (mut config, unknown) = unknown::deserialize(text).map_err(|e| {
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
        let unknown = unknown
            .iter()
            .map(|key| unknown::warning(path, key))
            .collect();
        validate::validate(&config, path, threshold_key)?;
        Ok((config, unknown))
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

/// The file is an object, and each section in it an object: serde would
/// take a list for a section, field by field in order, and
/// `{"compacting": [false]}` must not quietly turn compaction off.
fn check_shape(value: &Value, path: &Path) -> anyhow::Result<()> {
    let Value::Object(sections) = value else {
        return Err(failure(
            Exit::Usage,
            format!(
                "{}: the config must be a JSON object like {{\"stm\": {{\"contextWindow\": 10}}}}",
                path.display()
            ),
        ));
    };
    for (key, section) in sections {
        if SECTIONS.contains(&key.as_str()) && !section.is_object() {
            let given = match section {
                Value::Array(_) => "a list",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "true/false",
                _ => "null",
            };
            return Err(failure(
                Exit::Usage,
                format!(
                    "{}: `{key}` must be an object of settings, like {{\"{key}\": {{…}}}}, not {given}",
                    path.display()
                ),
            ));
        }
    }
    Ok(())
}

/// serde_json's message ends in " at line L column C"; we print those first.
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
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
}

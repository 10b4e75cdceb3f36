//! The values of a parsed config, checked: each key against its own rule
//! (from the table in `keys.rs`), then the rules between keys. The first
//! fault is the error, naming file and key: a typo in a threshold must not
//! go unnoticed.

use std::path::Path;

use crate::config::keys::{Config, KEYS};
use crate::error::{Exit, failure};

/// The key whose value may come from the seed's name for it.
const THRESHOLD: &str = "compacting.threshold";

/// `threshold_key` names where the compaction threshold came from
/// (`stm.maxMessages` in a seed config), for the error.
pub fn validate(config: &Config, path: &Path, threshold_key: &str) -> anyhow::Result<()> {
    let bad = |message: String| {
        Err(failure(
            Exit::Usage,
            format!("{}: {message}", path.display()),
        ))
    };
    for key in KEYS {
        if let Err(fault) = (key.check)(config) {
            let name = if key.name == THRESHOLD {
                threshold_key
            } else {
                key.name
            };
            return bad(format!("{name} {fault}"));
        }
    }
    let (threshold, window) = (config.compacting.threshold, config.stm.context_window);
    if threshold < window {
        return bad(format!(
            "{threshold_key} ({threshold}) is below stm.contextWindow ({window}); \
             compaction keeps the window raw, so the threshold must be at least the window"
        ));
    }
    Ok(())
}

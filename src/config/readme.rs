//! The README's configuration table, rendered from the key table: one row
//! per key, its default read from `Config::default()`. `tests/readme.rs`
//! checks the README holds exactly these rows.

use serde_json::Value;

use crate::config::keys::{Config, KEYS, Key};

/// The table's header and one row per key, each line ending in `\n`.
pub fn readme_table() -> String {
    let defaults = serde_json::to_value(Config::default()).expect("config serialises");
    let mut table = String::from("| key | default | allowed | meaning |\n|---|---|---|---|\n");
    for key in KEYS {
        table.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            key.name,
            default_cell(key, &defaults),
            (key.allowed)().unwrap_or_default(),
            key.doc()
        ));
    }
    table
}

/// The default as JSON (strings and lists in backticks), or the key's
/// words for an unset one (`built in`).
fn default_cell(key: &Key, defaults: &Value) -> String {
    let pointer = format!("/{}", key.name.replacen('.', "/", 1));
    let value = defaults.pointer(&pointer).unwrap_or(&Value::Null);
    match (value, key.unset) {
        (Value::Null, Some(words)) => words.to_owned(),
        (Value::Null, None) => "`null`".to_owned(),
        (Value::String(_) | Value::Array(_) | Value::Object(_), _) => format!("`{value}`"),
        (value, _) => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_shows_the_default_the_rule_and_the_doc() {
        let table = readme_table();
        assert!(
            table.contains(
                "| `stm.contextWindow` | 10 | at most 10000 | recent messages injected into \
                 each call |\n"
            ),
            "{table}"
        );
        assert!(
            table.contains("| `compacting.model` | `\"haiku\"` |  | "),
            "{table}"
        );
        assert!(table.contains("| `budget.dailyUsd` | none | a number of dollars, 0 or more | "));
        assert!(table.contains("| `recall.minScore` | 3.0 | a number, 0 or more | "));
    }
}

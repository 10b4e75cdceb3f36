//! Keys the file has and the tool does not read: found by `serde_ignored`
//! as the file is deserialised (serde reports every field it skips, at any
//! depth), each warned about with the key it probably meant.

use std::path::Path;

use crate::config::keys::{Config, KEYS, SECTIONS};

/// The file's config and its unknown keys, dotted (`stm.contextWindw`),
/// in the order the file has them; a bad value's error names its key.
pub fn deserialize(
    text: &str,
) -> Result<(Config, Vec<String>), serde_path_to_error::Error<serde_json::Error>> {
    let mut unknown = Vec::new();
    let mut record = |path: serde_ignored::Path| unknown.push(path.to_string());
    let mut json = serde_json::Deserializer::from_str(text);
    let config =
        serde_path_to_error::deserialize(serde_ignored::Deserializer::new(&mut json, &mut record))?;
    Ok((config, unknown))
}

/// The warning about one unknown key of the file at `path`.
pub fn warning(path: &Path, key: &str) -> String {
    let hint = match closest_key(key) {
        Some(meant) => format!("did you mean `{meant}`?"),
        None => "check its spelling; `claude-session context --show-config` \
                 lists every key"
            .to_owned(),
    };
    format!(
        "{}: unknown key `{key}` is ignored ({hint})",
        path.display()
    )
}

/// Every key, dotted, each section after its keys.
fn known_keys() -> Vec<&'static str> {
    let mut known = Vec::new();
    for section in SECTIONS {
        known.extend(
            KEYS.iter()
                .map(|key| key.name)
                .filter(|name| name.split_once('.').is_some_and(|(s, _)| s == *section)),
        );
        known.push(section);
    }
    known
}

/// The known key an unknown one probably meant: the same words in another
/// case or with `_` (`context_window`), a near spelling in the same
/// section (`contextWindw`), or the same name in another section
/// (`contextWindow` at the top level is `stm.contextWindow`).
fn closest_key(unknown: &str) -> Option<String> {
    let known = known_keys();
    let fold = |s: &str| s.replace(['_', '-'], "").to_lowercase();
    let (section, name) = unknown.rsplit_once('.').unwrap_or(("", unknown));
    let name_of = |k: &str| k.rsplit_once('.').map_or(k, |(_, n)| n).to_owned();
    let section_of = |k: &str| k.rsplit_once('.').map_or("", |(s, _)| s).to_owned();
    let siblings = known.iter().filter(|k| section_of(k) == section);
    let best = siblings
        .map(|k| (strsim::jaro_winkler(&fold(name), &fold(&name_of(k))), k))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((_, key)) = best {
        return Some((*key).to_owned());
    }
    known
        .iter()
        .find(|k| fold(&name_of(k)) == fold(name))
        .map(|k| (*k).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_found_at_any_depth() {
        let (_, unknown) = deserialize(r#"{"stm": {"contextWindw": 1}, "extra": 2}"#).unwrap();
        assert_eq!(
            unknown,
            vec!["stm.contextWindw".to_string(), "extra".to_string()]
        );
    }

    /// Issue 25: a typo'd key names the key it probably meant.
    #[test]
    fn an_unknown_key_names_the_key_it_probably_meant() {
        let meant = closest_key;
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
        let (_, unknown) = crate::config::Config::parse_reporting(
            r#"{"stm": {"contextWindw": 2}}"#,
            Path::new("config.json"),
        )
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

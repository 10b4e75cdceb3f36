//! Markdown with YAML frontmatter between `---` lines, as the seed writes
//! summaries and profiles. Unknown keys survive a rewrite in their order.

use anyhow::{anyhow, bail};
use serde_yaml::{Mapping, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub front: Mapping,
    pub body: String,
}

impl Document {
    /// Split and parse. A file without frontmatter is all body; a file that
    /// opens frontmatter and never closes it is an error (it was cut or
    /// hand-edited, and a rewrite would lose what it meant).
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let Some(rest) = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
        else {
            return Ok(Self {
                front: Mapping::new(),
                body: text.to_owned(),
            });
        };
        let mut offset = 0;
        let mut close = None;
        for line in rest.split_inclusive('\n') {
            if line.trim_end_matches(['\n', '\r']) == "---" {
                close = Some((offset, offset + line.len()));
                break;
            }
            offset += line.len();
        }
        let Some((yaml_end, body_start)) = close else {
            bail!("the frontmatter opened by `---` on line 1 is never closed by a `---` line");
        };
        let yaml = &rest[..yaml_end];
        let front = if yaml.trim().is_empty() {
            Mapping::new()
        } else {
            match serde_yaml::from_str::<Value>(yaml)
                .map_err(|e| anyhow!("the frontmatter is not valid YAML: {e}"))?
            {
                Value::Mapping(map) => map,
                Value::Null => Mapping::new(),
                _ => bail!("the frontmatter must be YAML `key: value` lines"),
            }
        };
        let body = rest[body_start..]
            .trim_start_matches(['\n', '\r'])
            .to_owned();
        Ok(Self { front, body })
    }

    pub fn render(&self) -> String {
        let mut out = String::from("---\n");
        if !self.front.is_empty() {
            out.push_str(&render_front(&self.front));
        }
        out.push_str("---\n\n");
        out.push_str(self.body.trim_end_matches('\n'));
        out.push('\n');
        out
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.front.get(key).and_then(Value::as_str)
    }

    /// A scalar as text: `user_id: 987654321` (a YAML number, as numeric
    /// platform ids are written unquoted) reads as "987654321".
    pub fn get_text(&self, key: &str) -> Option<String> {
        match self.front.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.front.get(key).and_then(Value::as_u64)
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.front.insert(Value::from(key), value.into());
    }

    /// A list of strings (`tags: [a, b]`); anything else gives an empty list.
    pub fn get_str_list(&self, key: &str) -> Vec<String> {
        match self.front.get(key) {
            Some(Value::Sequence(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Some(Value::String(s)) => s
                .split(',')
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The frontmatter as YAML that reads back the same. serde_yaml's block
/// style is the readable default, but a value holding a character YAML
/// counts as a line break (U+2028, U+0085…) comes out unindented and can
/// swallow the closing `---`; such a mapping is written one
/// `"key": "value"` line per entry instead, in JSON syntax (which YAML
/// reads), with those characters escaped.
fn render_front(front: &Mapping) -> String {
    let yaml = serde_yaml::to_string(front).expect("a mapping serialises");
    if yaml.ends_with('\n') && serde_yaml::from_str::<Mapping>(&yaml).ok().as_ref() == Some(front) {
        return yaml;
    }
    let mut out = String::new();
    for (key, value) in front {
        out.push_str(&render_entry(key, value));
    }
    out
}

/// One `key: value` line in JSON syntax when that reads back the same;
/// otherwise (a tag, NaN, a non-string key inside) serde_yaml's own text
/// for the entry, never glued to what follows.
fn render_entry(key: &Value, value: &Value) -> String {
    let json =
        serde_json::to_string(key).and_then(|k| serde_json::to_string(value).map(|v| (k, v)));
    if let Ok((key_json, value_json)) = json {
        let line = format!("{}: {}\n", yaml_safe(&key_json), yaml_safe(&value_json));
        let mut single = Mapping::new();
        single.insert(key.clone(), value.clone());
        if serde_yaml::from_str::<Mapping>(&line).ok() == Some(single) {
            return line;
        }
    }
    let mut single = Mapping::new();
    single.insert(key.clone(), value.clone());
    let mut text = serde_yaml::to_string(&single).unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Escape what JSON leaves raw but YAML reads as a line break or refuses.
fn yaml_safe(json: &str) -> String {
    json.chars()
        .map(|c| match c {
            '\u{7f}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{feff}'
            | '\u{fffe}'
            | '\u{ffff}' => {
                format!("\\u{:04x}", c as u32)
            }
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED_PROFILE: &str = "---\nuser_id: U12345\ndisplay_name: Kevin\nchannel: line\n\
tags: [toeic, student, zh-tw]\n---\n\n## Preferences\n- Language: Traditional Chinese\n";

    #[test]
    fn seed_profile_round_trips_keys_and_body() {
        let doc = Document::parse(SEED_PROFILE).unwrap();
        assert_eq!(doc.get_str("user_id"), Some("U12345"));
        assert_eq!(doc.get_str_list("tags"), vec!["toeic", "student", "zh-tw"]);
        assert!(doc.body.starts_with("## Preferences"));
        let again = Document::parse(&doc.render()).unwrap();
        assert_eq!(again, doc);
        let keys: Vec<_> = again.front.keys().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["user_id", "display_name", "channel", "tags"]);
    }

    #[test]
    fn a_value_with_a_unicode_line_break_round_trips() {
        let mut doc = Document::default();
        doc.set("", "\n\u{2028}");
        doc.set("note", "a\u{85}b");
        let again = Document::parse(&doc.render()).unwrap();
        assert_eq!(again, doc);
    }

    #[test]
    fn odd_values_beside_a_line_break_neither_panic_nor_glue() {
        let text = "---\nweird: {[1, 2]: x}\nn: .nan\nnote: \"\\n\\u2028\"\n---\n\nbody\n";
        let doc = Document::parse(text).unwrap();
        let rendered = doc.render();
        let again = Document::parse(&rendered).unwrap();
        assert_eq!(again.body, "body\n");
        assert_eq!(again.get_text("note").as_deref(), Some("\n\u{2028}"));
        assert!(
            again
                .front
                .get("n")
                .and_then(Value::as_f64)
                .is_some_and(f64::is_nan)
        );
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        let doc = Document::parse("just text\n").unwrap();
        assert!(doc.front.is_empty());
        assert_eq!(doc.body, "just text\n");
    }

    #[test]
    fn unclosed_frontmatter_is_an_error() {
        let err = Document::parse("---\nuser_id: U1\nbody\n").unwrap_err();
        assert!(err.to_string().contains("never closed"));
    }
}

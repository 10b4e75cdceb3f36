//! Markdown with frontmatter between `---` lines, as the seed writes
//! summaries and profiles. Unknown keys survive a rewrite in their order.
//!
//! The seed does not parse YAML: its `parseFrontmatter` reads one
//! `key: value` per line, the value as written (quotes kept), `[a, b]` as a
//! list split on commas, `true`/`false` and digits as such. So this module
//! reads such lines the seed's way (`display_name: #1 Fan` is "#1 Fan",
//! not a YAML comment), and writes only lines the seed reads back the
//! same: flow lists (`[TOEIC, [draft], "quoted"]`: the seed keeps every
//! item as text), unquoted values wherever that is unambiguous. Files
//! that older versions of this tool wrote (YAML block lists, quoted
//! scalars) still read as before.

use anyhow::bail;
use serde_yaml::{Mapping, Number, Value};

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
        let Some((front_end, body_start)) = close else {
            bail!("the frontmatter opened by `---` on line 1 is never closed by a `---` line");
        };
        let front = parse_front(&rest[..front_end]);
        let body = rest[body_start..]
            .trim_start_matches(['\n', '\r'])
            .to_owned();
        Ok(Self { front, body })
    }

    pub fn render(&self) -> String {
        let mut out = String::from("---\n");
        for (key, value) in &self.front {
            out.push_str(&render_entry(key, value));
        }
        out.push_str("---\n\n");
        out.push_str(self.body.trim_end_matches('\n'));
        out.push('\n');
        out
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.front.get(key).and_then(Value::as_str)
    }

    /// A scalar as text: `user_id: 987654321` (a number to the seed's
    /// parser, as numeric platform ids are written unquoted) reads as
    /// "987654321".
    pub fn get_text(&self, key: &str) -> Option<String> {
        match self.front.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    pub fn get_u64(&self, key: &str) -> Option<u64> {
        match self.front.get(key)? {
            Value::String(s) => s.parse().ok(),
            value => value.as_u64(),
        }
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.front.insert(Value::from(key), value.into());
    }

    /// A number (`total_cost_usd: 0.25`); anything else gives `None`.
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.front.get(key).and_then(Value::as_f64)
    }

    /// Set a list of strings (`tags: [a, b]`).
    pub fn set_str_list(&mut self, key: &str, items: impl IntoIterator<Item = impl Into<String>>) {
        let items = items.into_iter().map(|item| Value::from(item.into()));
        self.set(key, Value::Sequence(items.collect()));
    }

    /// A list of strings (`tags: [a, b]`); anything else gives an empty list.
    pub fn get_str_list(&self, key: &str) -> Vec<String> {
        match self.front.get(key) {
            Some(Value::Sequence(items)) => items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .filter(|t| !t.is_empty())
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

// --- reading ---------------------------------------------------------------

/// The frontmatter's entries. Lines in the seed's one-line form (or this
/// tool's JSON-quoted form) are read line by line, as the seed does; a
/// frontmatter with other lines (YAML block lists, comments: older versions
/// of this tool) is read as YAML, and when that fails too, the seed's way
/// (lines it cannot read are skipped, as the seed skips them).
fn parse_front(text: &str) -> Mapping {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let entries: Vec<Option<(String, Value)>> = lines.iter().map(|l| read_line(l)).collect();
    if entries.iter().all(Option::is_some) {
        return entries
            .into_iter()
            .flatten()
            .map(|(k, v)| (Value::from(k), v))
            .collect();
    }
    match serde_yaml::from_str::<Value>(text) {
        Ok(Value::Mapping(map)) => map,
        Ok(Value::Null) => Mapping::new(),
        _ => entries
            .into_iter()
            .flatten()
            .map(|(k, v)| (Value::from(k), v))
            .collect(),
    }
}

/// One `key: value` line: the seed's form (`^(\w[\w_]*)\s*:\s*(.*)$`), or
/// a JSON-quoted key as this tool writes keys the seed's form cannot hold.
fn read_line(line: &str) -> Option<(String, Value)> {
    if line.starts_with('"') {
        let mut stream = serde_json::Deserializer::from_str(line).into_iter::<String>();
        let key = stream.next()?.ok()?;
        let rest = line[stream.byte_offset()..]
            .trim_start()
            .strip_prefix(':')?;
        return Some((key, read_value(rest.trim_start())));
    }
    let colon = line.find(':')?;
    let key = line[..colon].trim_end_matches([' ', '\t']);
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if key.is_empty() || !key.chars().all(word) {
        return None;
    }
    let raw = line[colon + 1..].trim_start_matches([' ', '\t']);
    Some((key.to_owned(), read_value(raw)))
}

/// A value as the seed's parser reads it, plus the quoted forms this tool
/// writes (JSON `"…"`, and YAML `'…'` from older versions).
fn read_value(raw: &str) -> Value {
    if raw.starts_with('[') && raw.ends_with(']') {
        if let Some(list) = compact_json_list(raw) {
            return list;
        }
        let inner = raw[1..raw.len() - 1].trim_matches(js_space);
        if inner.is_empty() {
            return Value::Sequence(Vec::new());
        }
        return Value::Sequence(
            inner
                .split(',')
                .map(|s| Value::from(s.trim_matches(js_space)))
                .collect(),
        );
    }
    match raw {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        // Digits the seed reads as a number; kept as text when a number
        // would change them (a leading zero, more than 64 bits).
        return match raw.parse::<u64>() {
            Ok(n) if n.to_string() == raw => Value::Number(Number::from(n)),
            _ => Value::from(raw),
        };
    }
    if is_number_text(raw)
        && let Ok(number @ Value::Number(_)) = serde_yaml::from_str::<Value>(raw)
    {
        return number;
    }
    if raw.starts_with('"')
        && let Ok(value) = serde_json::from_str::<String>(raw)
    {
        return Value::from(value);
    }
    if raw.starts_with('{')
        && let Ok(value @ serde_json::Value::Object(_)) = serde_json::from_str(raw)
    {
        return json_to_yaml(value);
    }
    if raw.len() >= 2
        && raw.starts_with('\'')
        && raw.ends_with('\'')
        && let Ok(Value::String(s)) = serde_yaml::from_str::<Value>(raw)
    {
        return Value::from(s);
    }
    Value::from(raw)
}

/// A list in the compact JSON form older versions of this tool wrote for
/// lists the seed's form could not hold (`["a,b","c"]`): exactly as
/// `json_line_text` writes it, so a list in the seed's form that happens
/// to parse as JSON (`["quoted"]`, a tag written with its quotes) is read
/// the seed's way.
fn compact_json_list(raw: &str) -> Option<Value> {
    let parsed: serde_json::Value = serde_json::from_str(raw).ok()?;
    if !parsed.is_array() {
        return None;
    }
    let value = json_to_yaml(parsed);
    (json_line_text(&value) == raw).then_some(value)
}

/// JavaScript's `\s` (what the seed's `trim()` removes): Unicode white
/// space and the byte order mark, but not U+0085.
fn js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// A negative integer, a decimal, or YAML's `.nan`/`.inf`: how numbers
/// other than plain digits are written (the seed keeps them as text).
fn is_number_text(raw: &str) -> bool {
    if matches!(raw, ".nan" | ".inf" | "-.inf") {
        return true;
    }
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    let (mantissa, exponent) = match digits.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['-', '+']).unwrap_or(e))),
        None => (digits, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, "0"));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole) && all_digits(fraction) && exponent.is_none_or(all_digits)
}

fn json_to_yaml(value: serde_json::Value) -> Value {
    serde_yaml::to_value(value).unwrap_or(Value::Null)
}

// --- writing ---------------------------------------------------------------

/// One line the seed's parser reads as this tool means it: the value bare
/// when that is unambiguous, else JSON (which the seed keeps as text).
fn render_entry(key: &Value, value: &Value) -> String {
    let key_text = match key {
        Value::String(k) if is_seed_key(k) => k.clone(),
        other => json_line_text(other),
    };
    format!("{key_text}: {}\n", render_value(value))
}

/// `\w[\w_]*` as the seed's regular expression means it (ASCII).
fn is_seed_key(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) if reads_back_bare(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Sequence(items) if items.iter().all(is_seed_list_item) => {
            let items: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            let list = format!("[{}]", items.join(", "));
            // `["x"]` (a tag written with its quotes) must not read back as
            // the compact JSON older versions wrote: a space the seed trims
            // away tells the two apart.
            if compact_json_list(&list).is_some() && !items.is_empty() {
                format!("[ {}]", items.join(", "))
            } else {
                list
            }
        }
        other => json_line_text(other),
    }
}

/// Text written bare reads back as the same string, to the seed and here.
fn reads_back_bare(s: &str) -> bool {
    // Numbers read back as numbers: only plain digits keep their text.
    let number_changes_it = is_number_text(s) && !is_plain_number(s);
    let ambiguous = s.is_empty()
        || s.trim() != s
        || matches!(s, "true" | "false")
        || number_changes_it
        || (s.starts_with('[') && s.ends_with(']'))
        || s.starts_with(['"', '\'', '{']);
    !ambiguous && !s.chars().any(breaks_a_line)
}

/// Digits that read back as the same text through a number (`123456789`,
/// a numeric platform id), as the seed's `parseInt` and this module read
/// them; `0123` is not one.
fn is_plain_number(s: &str) -> bool {
    s.parse::<u64>().is_ok_and(|n| n.to_string() == s)
}

/// An item of a flow list, which the seed splits on commas and trims,
/// and keeps as text whatever it holds (quotes, brackets, digits, `true`):
/// text without a comma, a line break or white space at either end. A
/// list with any other item is written as JSON, which the seed cannot
/// read item by item; tags are made to fit before they are written
/// (`ltm::normalise_tags`).
pub fn is_seed_list_item(item: &Value) -> bool {
    match item {
        Value::String(s) => {
            !s.is_empty()
                && !s.contains(',')
                && !s.starts_with(js_space)
                && !s.ends_with(js_space)
                && !s.chars().any(breaks_a_line)
        }
        _ => false,
    }
}

/// What ends a line for the seed's `.` (JavaScript) or for a reader of
/// this file, and what no bare value may hold.
fn breaks_a_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// JSON for a value that cannot be written bare, with every character a
/// reader could take as a line break escaped.
fn json_line_text(value: &Value) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    json.chars()
        .map(|c| match c {
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' => {
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
    fn typed_lists_and_numbers_round_trip() {
        let mut doc = Document::default();
        doc.set_str_list("tags", ["toeic", "student"]);
        doc.set_str_list("none", Vec::<String>::new());
        doc.set("total_cost_usd", 0.25);
        let text = doc.render();
        assert!(text.contains("tags: [toeic, student]\n"), "{text}");
        let doc = Document::parse(&text).unwrap();
        assert_eq!(doc.get_str_list("tags"), ["toeic", "student"]);
        assert!(doc.get_str_list("none").is_empty());
        assert_eq!(doc.get_f64("total_cost_usd"), Some(0.25));
        assert_eq!(doc.get_f64("tags"), None);
    }

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

    /// Issue 17: what YAML misreads in a seed profile reads as the seed
    /// reads it, and this tool's older YAML files read as before.
    #[test]
    fn seed_values_read_as_the_seed_reads_them() {
        let doc = Document::parse(
            "---\nuser_id: 123456789\ndisplay_name: #1 Fan\nnote: Kev: the [best] @home *\n\
             tags: [toeic, student]\nempty: []\nzero: 0123\n---\n\nbody\n",
        )
        .unwrap();
        assert_eq!(doc.get_text("user_id").as_deref(), Some("123456789"));
        assert_eq!(doc.get_str("display_name"), Some("#1 Fan"));
        assert_eq!(doc.get_str("note"), Some("Kev: the [best] @home *"));
        assert_eq!(doc.get_str_list("tags"), ["toeic", "student"]);
        assert!(doc.get_str_list("empty").is_empty());
        assert_eq!(doc.get_text("zero").as_deref(), Some("0123"));

        let older = Document::parse(
            "---\nuser_id: '123456789'\ndisplay_name: Kevin\ntags:\n- toeic\n- exam\n---\n\nb\n",
        )
        .unwrap();
        assert_eq!(older.get_text("user_id").as_deref(), Some("123456789"));
        assert_eq!(older.get_str_list("tags"), ["toeic", "exam"]);
    }

    #[test]
    fn writes_flow_lists_and_bare_values_where_unambiguous() {
        let mut doc = Document::default();
        doc.set("user_id", "123456789");
        doc.set("display_name", "Kev: the [best] @home *");
        doc.set(
            "tags",
            Value::Sequence(vec!["toeic".into(), "student".into()]),
        );
        doc.set("zero", "0123");
        doc.set("flag", "true");
        doc.set("padded", " x ");
        let text = doc.render();
        assert!(text.contains("\nuser_id: 123456789\n"), "{text}");
        assert!(
            text.contains("\ndisplay_name: Kev: the [best] @home *\n"),
            "{text}"
        );
        assert!(text.contains("\ntags: [toeic, student]\n"), "{text}");
        assert!(text.contains("\nzero: \"0123\"\n"), "{text}");
        assert!(text.contains("\nflag: \"true\"\n"), "{text}");
        assert!(text.contains("\npadded: \" x \"\n"), "{text}");
        let again = Document::parse(&text).unwrap();
        for key in ["user_id", "display_name", "zero", "flag", "padded"] {
            assert_eq!(again.get_text(key), doc.get_text(key), "{key}");
        }
    }

    /// Issue 25: a list item with brackets, quotes, `:` or digits stays in
    /// the seed's form (the seed keeps each item as text), and a lone item
    /// that looks like JSON is told apart from the JSON older versions wrote.
    #[test]
    fn seed_lists_hold_brackets_quotes_and_digits() {
        let items = [
            "TOEIC",
            "[draft]",
            "\"quoted\"",
            "a:b",
            "2026",
            "true",
            "x]y",
        ];
        let mut doc = Document::default();
        doc.set_str_list("tags", items);
        doc.set_str_list("one", ["\"only\""]);
        doc.set_str_list("odd", ["a,b", " c"]);
        let text = doc.render();
        assert!(
            text.contains("\ntags: [TOEIC, [draft], \"quoted\", a:b, 2026, true, x]y]\n"),
            "{text}"
        );
        assert!(text.contains("\none: [ \"only\"]\n"), "{text}");
        assert!(text.contains("\nodd: [\"a,b\",\" c\"]\n"), "{text}");
        let again = Document::parse(&text).unwrap();
        assert_eq!(again.get_str_list("tags"), items);
        assert_eq!(again.get_str_list("one"), ["\"only\""]);
        assert_eq!(again.get_str_list("odd"), ["a,b", " c"]);
        // The compact JSON of older versions reads as before.
        let older = Document::parse("---\ntags: [\"a,b\",\"c\"]\n---\n").unwrap();
        assert_eq!(older.get_str_list("tags"), ["a,b", "c"]);
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

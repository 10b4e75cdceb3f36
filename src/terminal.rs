//! Text made safe for a terminal: what a chat user wrote (or a model
//! answered) is printed by `show`, `search`, tables and every diagnostic
//! on stderr, and must not move the cursor, clear the screen or forge a
//! line there. `--json` output keeps the exact text.

/// Stored text as one line for a terminal (a search hit): [`printable`],
/// with line breaks and tabs escaped too (`\n`, `\t`), so a hit cannot
/// spill into the next row. A backslash stays as it is: this is for
/// reading, not for parsing back (`--json` is for that).
pub fn escape_for_terminal(text: &str) -> String {
    escape(text, true).into_owned()
}

/// Stored text made safe to print on a terminal: controls that move the
/// cursor, clear the screen or reorder what is shown (C0 but newline and
/// tab, DEL, C1, ESC, the bidi overrides and isolates, the Unicode line
/// and paragraph separators) are written as escapes (`\r`, `\u{1b}`), so a
/// stored `\r` cannot forge a row and `ESC [2J` cannot clear the screen.
/// `--json` output keeps the exact text.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    escape(text, false)
}

/// The one escaping of stored text for terminals; `one_line` escapes line
/// breaks and tabs too.
fn escape(text: &str, one_line: bool) -> std::borrow::Cow<'_, str> {
    let is_hazard = |c: char| {
        (c.is_control() && (one_line || (c != '\n' && c != '\t')))
            || matches!(
                c,
                '\u{200e}'
                    | '\u{200f}'
                    | '\u{061c}'
                    | '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}'
                    | '\u{2028}'
                    | '\u{2029}'
            )
    };
    if !text.chars().any(is_hazard) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' if one_line => out.push_str("\\n"),
            '\t' if one_line => out.push_str("\\t"),
            c if is_hazard(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_plain_text_is_untouched() {
        assert_eq!(printable("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(printable("a\rb"), "a\\rb");
        assert_eq!(printable("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(
            printable("\u{9b}x\u{202e}y\u{7f}"),
            "\\u{9b}x\\u{202e}y\\u{7f}"
        );
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(
            escape_for_terminal("a\x1b[31mb\tc\u{9b}d\u{202e}e\u{7f}é\nf"),
            "a\\u{1b}[31mb\\tc\\u{9b}d\\u{202e}e\\u{7f}é\\nf"
        );
    }
}

//! Terminal presentation: aligned tables, and colour only on a TTY when
//! `NO_COLOR` is not set.

use std::io::IsTerminal as _;

#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    /// A match inside a search hit: bold red.
    pub fn highlight(&self, text: &str) -> String {
        self.paint("1;31", text)
    }

    pub fn enabled(&self) -> bool {
        self.color
    }

    pub fn role(&self, role: &str) -> String {
        let code = match role {
            "user" => "36",
            "assistant" => "32",
            _ => "33",
        };
        self.paint(code, role)
    }
}

/// Text from chat users made safe to print on a terminal: control
/// characters (C0, DEL, C1) and the bidirectional overrides that reorder
/// what is shown become visible escapes (`\x1b`, `\u{202e}`), so no
/// message can move the cursor, recolour, retitle or disguise the
/// operator's terminal. A backslash stays as it is: this is for reading,
/// not for parsing back (`--json` is for that).
pub fn escape_for_terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Columns padded to their widest cell; the header in bold.
pub fn table(style: Style, headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let last = cells.len() - 1;
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == last {
                    cell.clone()
                } else {
                    format!("{cell}{}", " ".repeat(widths[i] - cell.chars().count()))
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = vec![style.bold(&line(headers.iter().map(|h| h.to_string()).collect()))];
    out.extend(rows.iter().map(|row| line(row.clone())));
    out.join("\n")
}

/// `12.3 KB` and friends.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align() {
        let text = table(
            Style { color: false },
            &["USER", "MESSAGES"],
            &[
                vec!["U1".into(), "3".into()],
                vec!["U12345".into(), "10".into()],
            ],
        );
        assert_eq!(text, "USER    MESSAGES\nU1      3\nU12345  10");
        assert_eq!(human_bytes(2048), "2.0 KB");
        assert_eq!(human_bytes(5), "5 B");
    }

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(
            escape_for_terminal("a\x1b[31mb\tc\u{9b}d\u{202e}e\u{7f}é"),
            "a\\x1b[31mb\\tc\\u{9b}d\\u{202e}e\\x7fé"
        );
    }
}

//! Terminal presentation: aligned tables, and colour only on a TTY when
//! `NO_COLOR` is not set.

use std::io::IsTerminal as _;

pub use crate::terminal::{escape_for_terminal, printable};

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

/// The columns a text takes on a terminal: two for a CJK character or an
/// emoji, none for a combining mark.
pub fn display_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text`, then spaces up to `width` columns.
pub fn pad(text: &str, width: usize) -> String {
    format!(
        "{text}{}",
        " ".repeat(width.saturating_sub(display_width(text)))
    )
}

/// Columns padded to their widest cell, by display width; the header in
/// bold.
pub fn table(style: Style, headers: &[&str], rows: &[Vec<String>]) -> String {
    // Cells hold stored names (ids, folder names, topic titles): one line
    // each, no control character.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| escape_for_terminal(cell)).collect())
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| display_width(h)).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(display_width(cell));
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
                    pad(cell, widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = vec![style.bold(&line(headers.iter().map(|h| h.to_string()).collect()))];
    out.extend(rows.into_iter().map(line));
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

    /// A CJK title takes two columns a character: the next column starts
    /// at the same terminal column on every row.
    #[test]
    fn wide_characters_keep_the_columns_aligned() {
        let text = table(
            Style { color: false },
            &["SLUG", "TITLE", "OWNER"],
            &[
                vec!["toeic".into(), "多益考試準備".into(), "U1".into()],
                vec!["tea".into(), "Tea".into(), "U2".into()],
                vec!["cafe".into(), "Cafe\u{301}".into(), "U3".into()],
            ],
        );
        let owner_columns: Vec<usize> = text
            .lines()
            .map(|line| {
                let at = line.rfind(['O', 'U']).expect("an owner cell");
                display_width(&line[..at])
            })
            .collect();
        assert_eq!(owner_columns, [21, 21, 21, 21], "{text}");
        assert_eq!(
            text.lines().nth(1),
            Some("toeic  多益考試準備  U1"),
            "{text}"
        );
    }
}

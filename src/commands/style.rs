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

/// The width tables are fitted to: `COLUMNS` when it is a number, else
/// the terminal's when stdout is one; `None` (no limit) when piped, so a
/// script reading the table gets every cell whole (`--json` has no table).
pub fn table_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
    {
        return Some(columns);
    }
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    rustix::termios::tcgetwinsize(&stdout)
        .ok()
        .map(|size| usize::from(size.ws_col))
        .filter(|c| *c > 0)
}

/// Columns padded to their widest cell, by display width; the header in
/// bold; fitted to [`table_width`] (any column may be cut).
pub fn table(style: Style, headers: &[&str], rows: &[Vec<String>]) -> String {
    table_within(style, headers, rows, table_width(), Fit::default())
}

/// How a table may narrow to fit the terminal: which columns may be cut
/// (names, ids, free text; `None`: any), and which may be left out, the
/// least wanted first, when cutting is not enough.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fit<'a> {
    pub cut: Option<&'a [usize]>,
    pub drop: &'a [usize],
}

/// No column is cut narrower than this (or than its header).
const MIN_COLUMN: usize = 8;

/// Columns are left out before a cell is cut narrower than this.
const COMFORTABLE_COLUMN: usize = 20;

/// [`table`] within `limit` columns: while the table is wider, the widest
/// column that may be cut and is still wider than [`MIN_COLUMN`] (and its
/// header) loses a column, and cells wider than their column end in `…`;
/// if that is not enough, the columns `fit.drop` names are left out, one
/// at a time. A table that cannot fit even so is printed at its narrowest.
pub fn table_within(
    style: Style,
    headers: &[&str],
    rows: &[Vec<String>],
    limit: Option<usize>,
    fit: Fit,
) -> String {
    // Cells hold stored names (ids, folder names, topic titles): one line
    // each, no control character.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| escape_for_terminal(cell)).collect())
        .collect();
    let mut natural: Vec<usize> = headers.iter().map(|h| display_width(h)).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            natural[i] = natural[i].max(display_width(cell));
        }
    }
    let mut kept: Vec<usize> = (0..headers.len()).collect();
    let mut widths = natural.clone();
    if let Some(limit) = limit {
        // A name cut to 20 columns reads better than one more column; a
        // name cut to 8, worse: leave columns out before cutting that far.
        'fitted: for floor in [COMFORTABLE_COLUMN, MIN_COLUMN] {
            for dropped in 0..=fit.drop.len() {
                kept = (0..headers.len())
                    .filter(|i| !fit.drop[..dropped].contains(i))
                    .collect();
                widths = natural.clone();
                if shrink_to(&mut widths, &kept, headers, fit.cut, floor, limit) {
                    break 'fitted;
                }
            }
        }
    }
    let headers: Vec<&str> = kept.iter().map(|&i| headers[i]).collect();
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| kept.iter().map(|&i| truncate(&row[i], widths[i])).collect())
        .collect();
    let widths: Vec<usize> = kept.iter().map(|&i| widths[i]).collect();
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

/// Narrow the widest columns of `kept` that may be cut until they (and
/// the two spaces between them) fit in `limit`. Whether they fit.
fn shrink_to(
    widths: &mut [usize],
    kept: &[usize],
    headers: &[&str],
    cut: Option<&[usize]>,
    min: usize,
    limit: usize,
) -> bool {
    let gaps = 2 * kept.len().saturating_sub(1);
    loop {
        let total: usize = kept.iter().map(|&i| widths[i]).sum::<usize>() + gaps;
        if total <= limit {
            return true;
        }
        let floor = |i: usize| min.max(display_width(headers[i]));
        let widest = kept
            .iter()
            .copied()
            .filter(|i| cut.is_none_or(|c| c.contains(i)))
            .filter(|&i| widths[i] > floor(i))
            .max_by_key(|&i| widths[i]);
        let Some(i) = widest else {
            return false;
        };
        widths[i] -= 1;
    }
}

/// `text` cut to `width` columns, ending in `…` when it was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
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

    /// Issue 25: a table wider than the terminal cuts its widest columns
    /// (names and ids, not numbers) with `…`, by display width, so a CJK
    /// name keeps the columns aligned.
    #[test]
    fn tables_fit_the_width_and_cut_names_with_an_ellipsis() {
        let rows = vec![
            vec!["U1".into(), "李小龍李小龍李小龍李小龍".into(), "12".into()],
            vec!["U0123456789ABCDEF".into(), "Kevin".into(), "3".into()],
        ];
        let text = table_within(
            Style { color: false },
            &["USER", "NAME", "MESSAGES"],
            &rows,
            Some(32),
            Fit::default(),
        );
        for line in text.lines() {
            assert!(display_width(line) <= 32, "{line:?} in\n{text}");
        }
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains('…') && lines[1].ends_with("12"), "{text}");
        assert!(
            lines[2].starts_with("U0123456…") || lines[2].contains('…'),
            "{text}"
        );
        let at = |line: &str| display_width(&line[..line.rfind(['1', '3', 'M']).unwrap()]);
        assert_eq!(at(lines[1]), at(lines[2]), "aligned:\n{text}");
        // Whole cells when there is room, or no limit.
        let wide = table_within(
            Style { color: false },
            &["USER", "NAME", "MESSAGES"],
            &rows,
            None,
            Fit::default(),
        );
        assert!(
            !wide.contains('…') && wide.contains("李小龍李小龍李小龍李小龍"),
            "{wide}"
        );
        assert_eq!(truncate("李小龍", 4), "李…");
        assert_eq!(truncate("abc", 3), "abc");
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

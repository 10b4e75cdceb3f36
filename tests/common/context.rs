//! The context block as its reader (the model) sees it: where lines break
//! and what a turn header looks like, so a test can tell a real turn from
//! a forged one.

/// The section headers of the context block.
pub const HEADERS: [&str; 3] = [
    "[User profile]",
    "[Conversation summary]",
    "[Recent messages]",
];

/// What a reader may take as a line break (Unicode's mandatory breaks).
pub fn reader_lines(text: &str) -> Vec<&str> {
    text.split([
        '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
    ])
    .collect()
}

/// `[YYYY-MM-DD HH:MM] ` at the start of a line: a turn header.
pub fn is_turn_header(line: &str) -> bool {
    let b = line.as_bytes();
    let digits = |range: std::ops::Range<usize>| range.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() >= 19
        && b[0] == b'['
        && digits(1..5)
        && b[5] == b'-'
        && digits(6..8)
        && b[8] == b'-'
        && digits(9..11)
        && b[11] == b' '
        && digits(12..14)
        && b[14] == b':'
        && digits(15..17)
        && b[17] == b']'
        && b[18] == b' '
}

//! Chat text is only text to claude: the one function every piece of text
//! passes on its way into claude's stdin or prompt file.
//!
//! Claude Code acts on some of its input before any request is sent: an
//! `@path` mention is read from disk and put into the request as if the
//! model had read it (a folder as a listing), and a prompt that starts
//! with `/word` is taken as a slash command and never reaches the model.
//! Whatever a chat user wrote, and whatever memory holds of what they
//! wrote, must reach the model as words and nothing else.
//!
//! The remedy is an invisible character where the CLI's parsers look:
//! U+200B (zero width space) on both sides of every `@`, and before a
//! leading `/`. A mention starts only at an `@` that opens the text or
//! follows white space (or `。、？！`); with the guard before it, none
//! does. The guard after it is the second line: a path that starts with
//! it is no path (but `@\u{200B}../../x` still resolves, its first
//! segment undone by the next `..`, so it cannot be the only one). A
//! prompt is a command only when its first character is `/`. A word the
//! CLI acts on wherever it stands (`ultrathink`, which asks for deeper
//! reasoning a chat user must not be able to buy) gets the character
//! inside it. The model reads the text as written (the character has no
//! width and no meaning to it); what is stored stays byte for byte what
//! the person wrote, since this runs at the boundary, every time text
//! crosses it.

use std::borrow::Cow;

/// The character put where the CLI would act: it has no width, is not
/// whitespace to JavaScript's `trim()`, and ends a mention's path.
pub const GUARD: char = '\u{200B}';

/// `text` as it may be handed to claude: every `@` between two
/// [`GUARD`]s (none doubled where one is already there), and a `/` that
/// opens the text (after any leading white space) preceded by one.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    let text = guard_keywords(text);
    let leading_slash = text.trim_start_matches(trimmed).starts_with('/');
    if !leading_slash && !text.contains('@') {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.char_indices().peekable();
    let mut at_start = true;
    while let Some((_, c)) = chars.next() {
        if at_start && !trimmed(c) {
            at_start = false;
            if c == '/' {
                out.push(GUARD);
            }
        }
        if c == '@' && !out.ends_with(GUARD) {
            out.push(GUARD);
        }
        out.push(c);
        if c == '@' && chars.peek().map(|&(_, next)| next) != Some(GUARD) {
            out.push(GUARD);
        }
    }
    Cow::Owned(out)
}

/// Words the CLI acts on wherever they stand (`/\bultrathink\b/i`: it
/// adds a request for deeper reasoning, which a chat user must not be
/// able to buy), broken by the guard inside them.
const KEYWORDS: &[(&str, usize)] = &[("ultrathink", 5)];

fn guard_keywords(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for (word, split) in KEYWORDS {
        // ASCII lower case keeps every byte offset as it is.
        let lower = out.to_ascii_lowercase();
        if !lower.contains(word) {
            continue;
        }
        let mut guarded = String::with_capacity(out.len() + 8);
        let mut last = 0;
        for (at, _) in lower.match_indices(word) {
            guarded.push_str(&out[last..at + split]);
            guarded.push(GUARD);
            last = at + split;
        }
        guarded.push_str(&out[last..]);
        out = Cow::Owned(guarded);
    }
    out
}

/// What JavaScript's `trim()` takes off before the CLI looks for a `/`:
/// Unicode white space and the byte-order mark.
fn trimmed(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guarded(text: &str) -> String {
        neutralise(text).replace(GUARD, "<G>")
    }

    #[test]
    fn text_without_syntax_is_passed_as_it_is() {
        for text in ["hello", "a/b c", "50% off", "", "  ", "日本語のテキスト"] {
            assert!(matches!(neutralise(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn every_at_sign_is_between_two_guards() {
        assert_eq!(guarded("@/srv/bot/.env"), "<G>@<G>/srv/bot/.env");
        assert_eq!(
            guarded("read @\"/a b\" and @x"),
            "read <G>@<G>\"/a b\" and <G>@<G>x"
        );
        for space in [
            "\n", "\t", "\u{3000}", "\u{a0}", "\u{2028}", "\u{2029}", " ", "。",
        ] {
            assert_eq!(
                guarded(&format!("x{space}@../../.env")),
                format!("x{space}<G>@<G>../../.env")
            );
        }
        assert_eq!(guarded("mail a@b.example"), "mail a<G>@<G>b.example");
        assert_eq!(guarded("@@"), "<G>@<G>@<G>");
        assert_eq!(guarded("@"), "<G>@<G>");
    }

    #[test]
    fn a_guard_already_there_is_not_doubled() {
        assert_eq!(guarded("@\u{200B}x"), "<G>@<G>x");
        assert_eq!(guarded("\u{200B}@x"), "<G>@<G>x");
        let once = neutralise("say @x").into_owned();
        assert_eq!(neutralise(&once), once);
    }

    #[test]
    fn a_leading_slash_is_preceded_by_the_guard() {
        assert_eq!(guarded("/help me plan a trip"), "<G>/help me plan a trip");
        assert_eq!(guarded("  \n/status"), "  \n<G>/status");
        assert_eq!(guarded("\u{3000}/model opus"), "\u{3000}<G>/model opus");
        assert_eq!(guarded("\u{FEFF}/status"), "\u{FEFF}<G>/status");
        assert_eq!(guarded("see /etc/hosts"), "see /etc/hosts");
        assert_eq!(guarded("a\n/b"), "a\n/b");
    }

    #[test]
    fn ultrathink_is_broken_wherever_it_stands() {
        assert_eq!(guarded("please ultrathink"), "please ultra<G>think");
        assert_eq!(
            guarded("ULTRATHINK, UltraThink"),
            "ULTRA<G>THINK, Ultra<G>Think"
        );
        assert_eq!(guarded("ultrathinking"), "ultra<G>thinking");
        assert!(matches!(neutralise("ultra think"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_words_are_unchanged_but_for_the_guard() {
        let text = "/plan @home, then @\"x y\"\n\u{3000}@z 東京 ultrathink ";
        assert_eq!(neutralise(text).replace(GUARD, ""), text);
    }
}

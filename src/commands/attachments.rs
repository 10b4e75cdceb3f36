//! `ask --attach`: what each attached file becomes for claude, decided by
//! its content, never by its name.
//!
//! - An image (PNG, JPEG, GIF, WebP, by its first bytes) goes to the model
//!   as an image block of the user message.
//! - A text file (valid UTF-8, no NUL) goes inline, after the message,
//!   fenced and headed as that attachment's content, while the message's
//!   inline text stays within `limits.inlineTextChars`.
//! - Anything else (and text beyond that) is copied into claude's private
//!   working folder, and `Read` is offered for that call with a rule for
//!   that folder only (the confinement keeps everything else out of reach
//!   whatever the rule).
//!
//! The path comes from the broker (the operator's side); the file's name
//! and content come from a chat user: a name is shown quoted and escaped,
//! never used as a path (the copy gets a name made of safe characters),
//! and everything goes through the neutraliser with the prompt. Every file
//! is read, checked against the `limits.*` caps and classified before
//! anything is logged: a refused attachment leaves no trace.

use std::io::Read as _;
use std::path::Path;

use crate::claude::{Image, Sandbox, UserInput, image};
use crate::config::LimitsConfig;
use crate::error::usage;
use crate::memory::message::Message;
use crate::terminal::escape_for_terminal;

/// How a PDF starts.
const PDF: &[u8] = b"%PDF-";

/// A message's attachments, read and classified.
#[derive(Debug, Default)]
pub struct Attachments {
    items: Vec<Item>,
}

#[derive(Debug)]
struct Item {
    /// The name the sender's platform gave it (or the file's), as shown.
    shown: String,
    size: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Image(Image),
    Text(String),
    /// Copied into claude's folder under this name, read with `Read`.
    File {
        copy_name: String,
        bytes: Vec<u8>,
    },
}

/// A path for a diagnostic: the broker chose it, but its file name may be
/// the chat user's.
fn shown_path(path: &str) -> String {
    escape_for_terminal(path)
}

impl Attachments {
    /// Read every attachment of `message` (a regular file that exists,
    /// within the caps), before anything is logged.
    pub fn read(message: &Message, limits: &LimitsConfig) -> anyhow::Result<Self> {
        let attachments = message.attachments.as_deref().unwrap_or_default();
        let allowed = limits.attachments_per_message as usize;
        if attachments.len() > allowed {
            return Err(usage(format!(
                "{} files attached (--attach); limits.attachmentsPerMessage is {allowed}: send \
                 at most {allowed} with one message, or raise the limit; nothing was logged",
                attachments.len()
            )));
        }
        let mut inline_left = limits.inline_text_chars as usize;
        let mut items = Vec::with_capacity(attachments.len());
        for (n, attachment) in attachments.iter().enumerate() {
            let bytes = read_capped(&attachment.path, limits.attachment_bytes)?;
            let name = attachment.name.clone().unwrap_or_else(|| {
                Path::new(&attachment.path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
            let size = bytes.len();
            // claude scales a large image down itself (to 2000 px on its
            // longer side, measured on both pinned releases) before the
            // API's 5 MiB limit applies: attachmentBytes is the only cap.
            let kind = if let Some(media_type) = image::media_type(&bytes) {
                Kind::Image(Image {
                    media_type,
                    data: bytes,
                })
            } else if bytes.starts_with(PDF) {
                // Text to a byte check, a document to a reader: `Read`
                // gives the model its pages.
                Kind::File {
                    copy_name: copy_name(n + 1, &name, &bytes),
                    bytes,
                }
            } else {
                match text_of(bytes) {
                    Ok(text) if text.chars().count() <= inline_left => {
                        inline_left -= text.chars().count();
                        Kind::Text(text)
                    }
                    Ok(text) => Kind::File {
                        copy_name: copy_name(n + 1, &name, text.as_bytes()),
                        bytes: text.into_bytes(),
                    },
                    Err(bytes) => Kind::File {
                        copy_name: copy_name(n + 1, &name, &bytes),
                        bytes,
                    },
                }
            };
            items.push(Item {
                shown: shown_name(&name),
                size,
                kind,
            });
        }
        Ok(Self { items })
    }

    /// The prompt for `text` with these attachments: copies of the files
    /// `Read` opens put into `sandbox`'s working folder.
    pub fn for_claude(&self, text: &str, sandbox: &Sandbox) -> UserInput {
        let mut out = UserInput {
            prompt: text.to_owned(),
            ..UserInput::default()
        };
        if self.items.is_empty() {
            return out;
        }
        out.prompt.push_str(
            "\n\nAttached files (each name is the one the sender's app gave, shown quoted):",
        );
        for (n, item) in self.items.iter().enumerate() {
            let head = format!("\n{}. {} ({} bytes", n + 1, item.shown, item.size);
            out.prompt.push_str(&head);
            match &item.kind {
                Kind::Image(image) => {
                    out.prompt.push_str(&format!(
                        ", {}): image {} of this message.",
                        image.media_type,
                        out.images.len() + 1
                    ));
                    out.images.push(image.clone());
                }
                Kind::Text(content) => {
                    let fence = fence_for(content);
                    let content = content.strip_suffix('\n').unwrap_or(content);
                    out.prompt.push_str(&format!(
                        ", text), its whole content between the two {fence} lines:\n{fence}\n{content}\n{fence}"
                    ));
                }
                Kind::File { copy_name, bytes } => match sandbox.stage(copy_name, bytes) {
                    Ok(copy) => {
                        out.prompt.push_str(&format!(
                            "): copied to {}; open it with the Read tool.",
                            copy.display()
                        ));
                        out.read_work_folder = true;
                    }
                    Err(e) => {
                        crate::diag::warn(format!("{e:#}; the attachment is left out"));
                        out.prompt.push_str("): could not be attached.");
                    }
                },
            }
        }
        out
    }
}

/// The file's bytes, if it is a regular file of at most `max` bytes.
fn read_capped(path: &str, max: u64) -> anyhow::Result<Vec<u8>> {
    let shown = shown_path(path);
    let refused = |why: String| usage(format!("--attach {shown}: {why}"));
    use std::os::unix::fs::OpenOptionsExt as _;
    // Non-blocking: opening a FIFO or a device must not wait (claude's
    // timeout has not started); the regular-file check below refuses it.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refused(
                "the file does not exist; attach a file the broker saved".into(),
            ));
        }
        Err(e) => return Err(refused(e.to_string())),
    };
    let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
    if !meta.is_file() {
        return Err(refused(
            "not a regular file; attach a file the broker saved".into(),
        ));
    }
    let too_big = |size: u64| {
        refused(format!(
            "the file is {size} bytes, over limits.attachmentBytes ({max}); send a smaller \
             one or raise the limit; nothing was logged"
        ))
    };
    if meta.len() > max {
        return Err(too_big(meta.len()));
    }
    // A file still growing is read only up to the cap.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refused(e.to_string()))?;
    if bytes.len() as u64 > max {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Text: valid UTF-8 without a NUL byte (which no text file holds).
fn text_of(bytes: Vec<u8>) -> Result<String, Vec<u8>> {
    if bytes.contains(&0) {
        return Err(bytes);
    }
    String::from_utf8(bytes).map_err(|e| e.into_bytes())
}

/// A name as the prompt shows it: quoted, at most 200 characters, with
/// controls, line breaks, bidi overrides and quotes escaped.
fn shown_name(name: &str) -> String {
    let mut short: String = name.chars().take(200).collect();
    if short.len() < name.len() {
        short.push('…');
    }
    if short.is_empty() {
        return "(no name)".into();
    }
    let escaped = escape_for_terminal(&short.replace('\\', "\\\\").replace('"', "\\\""));
    format!("\"{escaped}\"")
}

/// The copy's name in claude's folder: `N-` and the name with only
/// letters, digits, `.`, `_` and `-` (no path, no hidden file, at most
/// 100 bytes, its extension kept: `Read` goes by it). An extension that
/// would make `Read` take the file for an image it is not, or a PDF
/// without one, is put right.
fn copy_name(n: usize, name: &str, bytes: &[u8]) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    let (stem, extension) = match safe.rsplit_once('.') {
        Some((stem, ext)) if !ext.is_empty() && ext.len() <= 10 => (stem, Some(ext)),
        _ => (safe, None),
    };
    let mut stem: String = stem.chars().take(80).collect();
    if stem.is_empty() {
        stem = "attachment".into();
    }
    let mut extension = extension.map(str::to_ascii_lowercase);
    let pdf = bytes.starts_with(PDF);
    if pdf && extension.as_deref() != Some("pdf") {
        extension = Some("pdf".into());
    } else if matches!(
        extension.as_deref(),
        Some("png" | "jpg" | "jpeg" | "gif" | "webp" | "pdf" | "ipynb")
    ) && !pdf
    {
        // Not what its name says (images go as image blocks; a PDF is one
        // by its first bytes): Read would parse it as that and fail.
        extension = Some(format!("{}.bin", extension.unwrap_or_default()));
    }
    match extension {
        Some(ext) => format!("{n}-{stem}.{ext}"),
        None => format!("{n}-{stem}"),
    }
}

/// A fence of backticks longer than any run of them in `content`, so no
/// content can end its own block.
fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_names_are_safe_and_keep_what_read_needs() {
        assert_eq!(copy_name(1, "report.PDF", b"%PDF-1.4"), "1-report.pdf");
        assert_eq!(copy_name(2, "../../etc/passwd", b"x"), "2-_.._etc_passwd");
        assert_eq!(copy_name(3, ".env", b"x"), "3-env");
        assert_eq!(copy_name(4, "", b"x"), "4-attachment");
        assert_eq!(copy_name(5, "a\nb@c/d.zip", b"PK"), "5-a_b_c_d.zip");
        assert_eq!(copy_name(6, "scan", b"%PDF-1.7"), "6-scan.pdf");
        assert_eq!(copy_name(7, "fake.png", b"\0\x01"), "7-fake.png.bin");
        let long = "x".repeat(300) + ".txt";
        let name = copy_name(8, &long, b"x");
        assert!(name.len() <= 100 && name.ends_with(".txt"), "{name}");
        assert_eq!(copy_name(9, "写真.jpg.exe", b"MZ"), "9-__.jpg.exe");
    }

    #[test]
    fn names_are_shown_quoted_and_escaped() {
        assert_eq!(shown_name("a.png"), "\"a.png\"");
        assert_eq!(
            shown_name("x\"y\n\u{1b}[2J\u{202e}z"),
            "\"x\\\"y\\n\\u{1b}[2J\\u{202e}z\""
        );
        assert_eq!(shown_name(""), "(no name)");
        let long = shown_name(&"é".repeat(300));
        assert_eq!(long.chars().count(), 203, "{long}");
    }

    #[test]
    fn no_content_can_close_its_fence() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b ` c"), "`````");
    }

    #[test]
    fn text_is_utf8_without_nul() {
        assert_eq!(text_of(b"hi\n".to_vec()), Ok("hi\n".into()));
        assert!(text_of(b"a\0b".to_vec()).is_err());
        assert!(text_of(vec![0xff, 0xfe]).is_err());
    }
}

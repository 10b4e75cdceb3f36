//! Images sent to the model as image content blocks: what a file is, told
//! by its first bytes (never by its name, which a chat user chose), and
//! the user message that carries them (`--input-format stream-json`).

use std::fmt;

/// The image formats the Messages API takes, by their signatures.
const SIGNATURES: &[(&str, &[u8])] = &[
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff"),
    ("image/gif", b"GIF87a"),
    ("image/gif", b"GIF89a"),
];

/// The media type of an image the API takes (PNG, JPEG, GIF, WebP), from
/// its content; `None` for anything else.
pub fn media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    SIGNATURES
        .iter()
        .find(|(_, magic)| bytes.starts_with(magic))
        .map(|(media_type, _)| *media_type)
}

/// One image for the user message.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    pub media_type: &'static str,
    pub data: Vec<u8>,
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Image({}, {} bytes)", self.media_type, self.data.len())
    }
}

/// The one stdin line of `--input-format stream-json`: a user message of
/// the images, then the (neutralised) prompt as its only text block. The
/// API's advice is images first; and claude reads the last block as the
/// input (mentions, a leading `/`), so the guard is tested where it acts.
pub fn user_line(prompt: &str, images: &[Image]) -> Vec<u8> {
    let mut content: Vec<serde_json::Value> = images
        .iter()
        .map(|image| {
            serde_json::json!({
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": image.media_type,
                    "data": base64(&image.data),
                }
            })
        })
        .collect();
    content.push(serde_json::json!({"type": "text", "text": prompt}));
    let line = serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": content},
    });
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// Standard base64 with padding (RFC 4648, section 4), as the API reads it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn images_are_told_by_their_bytes_not_their_name() {
        assert_eq!(media_type(b"\x89PNG\r\n\x1a\n\0\0"), Some("image/png"));
        assert_eq!(media_type(b"\xff\xd8\xff\xe0JFIF"), Some("image/jpeg"));
        assert_eq!(media_type(b"GIF89a\x01\0"), Some("image/gif"));
        assert_eq!(media_type(b"GIF87a\x01\0"), Some("image/gif"));
        assert_eq!(media_type(b"RIFF\x10\0\0\0WEBPVP8 "), Some("image/webp"));
        for other in [
            &b"PNG"[..],
            b"%PDF-1.7",
            b"RIFF\x10\0\0\0WAVEfmt ",
            b"hello",
            b"",
        ] {
            assert_eq!(media_type(other), None, "{other:?}");
        }
    }

    #[test]
    fn the_user_line_holds_each_image_then_the_text() {
        let line = user_line(
            "look",
            &[Image {
                media_type: "image/gif",
                data: b"GIF89a".to_vec(),
            }],
        );
        assert_eq!(line.last(), Some(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/gif",
                    "data": "R0lGODlh"}},
                {"type": "text", "text": "look"}
            ]}})
        );
    }
}

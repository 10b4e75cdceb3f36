//! `ask --attach` with the real Claude Code CLI (every pinned release)
//! against the mock Messages API: an image reaches the model as an image
//! block (told by its bytes, with or without `--stream`; one too large
//! for the API scaled down by claude itself), a text file
//! inline and as words (its `@path` mentions read nothing), anything else
//! through `Read` of the copy in claude's own folder, where nothing
//! outside that folder can be read; and the caps refuse a message before
//! anything is logged or sent.

use std::path::{Path, PathBuf};

use crate::common::real_claude::{MockApi, RealCli, real_cli_test, tool_results, tool_use};
use crate::common::{Exit, Run, TestEnv, exit_of, stderr_of, write_file};
use serde_json::{Value, json};

const DOTENV_SECRET: &str = "xoxb-attachment-secret-8080";
const ZWSP: char = '\u{200B}';

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/attachments")
        .join(name)
}

/// The file as the API gets it: base64 (coreutils, an independent
/// encoder).
fn base64_of(path: &Path) -> String {
    let out = std::process::Command::new("base64")
        .arg("-w0")
        .arg(path)
        .output()
        .expect("run base64 (coreutils)");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// A broker's host: its `.env` beside where the chat files land.
struct Host {
    env: TestEnv,
    mock: MockApi,
    cli: RealCli,
}

impl Host {
    fn new(cli: RealCli) -> Self {
        let env = TestEnv::new();
        write_file(
            &env.dir.path().join("srv/bot/.env"),
            format!("SLACK_BOT_TOKEN={DOTENV_SECRET}\n").as_bytes(),
        );
        Self {
            env,
            mock: MockApi::start(),
            cli,
        }
    }

    fn dotenv(&self) -> PathBuf {
        self.env.dir.path().join("srv/bot/.env")
    }

    /// A file the broker saved from the chat.
    fn inbox(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.env.dir.path().join("srv/bot/inbox").join(name);
        write_file(&path, bytes);
        path
    }

    /// `ask` from the broker's folder, authenticated by a subscription
    /// token: with a key claude runs in bare mode, which expands no
    /// mention by itself, and the neutraliser would go untested.
    fn ask(&self, args: &[&str]) -> Run {
        self.env
            .real(self.cli, &self.mock)
            .current_dir(self.env.dir.path().join("srv/bot"))
            .env_remove("ANTHROPIC_API_KEY")
            .env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-test-token")
            .arg("ask")
            .args(args)
    }

    fn assert_no_secret(&self) {
        let bodies = self.mock.all_bodies();
        assert!(!bodies.is_empty(), "{}: claude made no request", self.cli);
        assert!(
            !bodies.contains(DOTENV_SECRET),
            "{}: the .env reached the API:\n{bodies}",
            self.cli
        );
    }
}

/// The content blocks of the first user message of a request.
fn user_blocks(request: &Value) -> Vec<Value> {
    request["messages"][0]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The names of the tools a request offers.
fn tools_offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

real_cli_test!(images_reach_the_model_as_image_blocks_streamed_or_not);
fn images_reach_the_model_as_image_blocks_streamed_or_not(cli: RealCli) {
    let host = Host::new(cli);
    // A PNG named as a JPEG, and a JPEG with no extension: the bytes say.
    let png = host.inbox("photo.jpg", &std::fs::read(fixture("pixel.png")).unwrap());
    let jpeg = host.inbox("upload", &std::fs::read(fixture("pixel.jpg")).unwrap());
    let attach = [
        "--attach",
        &format!("{}:IMG_0001.jpg", png.display()),
        "--attach",
        &*jpeg.to_string_lossy(),
    ];
    for (stream, reply) in [(false, "a red square"), (true, "a brown square")] {
        host.mock.push(json!({"text": reply}));
        let mut args = vec!["--user", "U1"];
        if stream {
            args.push("--stream");
        }
        args.extend(attach.iter().map(|s| &**s));
        args.extend(["--", "what is in these?"]);
        let mut run = host.ask(&args);
        if stream {
            // And with a key: claude in bare mode.
            run = run.env("ANTHROPIC_API_KEY", "sk-ant-test-dummy");
        }
        assert_eq!(run.succeeds().stdout(), format!("{reply}\n"), "{cli}");
    }
    let requests = host.mock.messages_requests();
    assert_eq!(requests.len(), 2, "{cli}: one request per ask");
    let (png_data, jpeg_data) = (base64_of(&png), base64_of(&jpeg));
    for request in &requests {
        let blocks = user_blocks(request);
        let images: Vec<(&str, &str)> = blocks
            .iter()
            .filter(|b| b["type"] == "image")
            .map(|b| {
                assert_eq!(b["source"]["type"], "base64", "{cli}: {b}");
                (
                    b["source"]["media_type"].as_str().unwrap(),
                    b["source"]["data"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            images,
            [
                ("image/png", png_data.as_str()),
                ("image/jpeg", jpeg_data.as_str())
            ],
            "{cli}"
        );
        let text: String = blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(text.contains("what is in these?"), "{cli}: {text}");
        assert!(text.contains("1. \"IMG_0001.jpg\""), "{cli}: {text}");
        assert!(
            tools_offered(request).is_empty(),
            "{cli}: no tool for an image"
        );
    }
    // Memory holds the message and its files by path, never their bytes.
    let log = String::from_utf8_lossy(&host.env.read_bytes("U1")).into_owned();
    assert!(!log.contains(&png_data[..40]) && !log.contains(&jpeg_data[..40]));
    let lines = host.env.messages("U1");
    assert_eq!(lines.len(), 4, "{cli}: {lines:#?}");
    assert_eq!(lines[0]["text"], "what is in these?");
    assert_eq!(lines[0]["attachments"][0]["name"], "IMG_0001.jpg");
    assert_eq!(lines[3]["text"], "a brown square");
}

/// An RGB PNG of `width` × `height` pixels of noise: it compresses to
/// about its raw size.
fn noise_png(width: u32, height: u32) -> Vec<u8> {
    use std::io::Write as _;
    let mut raw = Vec::with_capacity(((width * 3 + 1) * height) as usize);
    let mut x: u32 = 0x9E37_79B9;
    for _ in 0..height {
        // Each row: its filter type (none), then its pixels.
        raw.extend([0u8]);
        for _ in 0..width * 3 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            raw.push(x as u8);
        }
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&raw).unwrap();
    let idat = z.finish().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    for (kind, data) in [(&b"IHDR"[..], ihdr), (b"IDAT", idat), (b"IEND", Vec::new())] {
        png.extend((data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(&data);
        png.extend(kind);
        png.extend(&data);
        png.extend(crc.sum().to_be_bytes());
    }
    png
}

real_cli_test!(a_photo_over_the_apis_size_is_scaled_down_by_claude_and_sent);
fn a_photo_over_the_apis_size_is_scaled_down_by_claude_and_sent(cli: RealCli) {
    let host = Host::new(cli);
    // 6.3 MB: over the API's 5 MiB of base64 for one image as it is.
    let photo = host.inbox("IMG_4032.png", &noise_png(2400, 880));
    let size = std::fs::metadata(&photo).unwrap().len();
    assert!(size > 5 * 1024 * 1024 / 4 * 3, "{size}");
    host.mock.push(json!({"text": "noise"}));
    host.ask(&[
        "--user",
        "U1",
        "--attach",
        &*photo.to_string_lossy(),
        "--",
        "what is it?",
    ])
    .succeeds()
    .stdout_is("noise\n");
    let request = &host.mock.messages_requests()[0];
    let images: Vec<Value> = user_blocks(request)
        .into_iter()
        .filter(|b| b["type"] == "image")
        .collect();
    assert_eq!(images.len(), 1, "{cli}: {request}");
    let data = images[0]["source"]["data"].as_str().unwrap();
    assert!(
        data.len() < 5 * 1024 * 1024,
        "{cli}: claude sent {} bytes of base64",
        data.len()
    );
}

real_cli_test!(a_text_attachment_is_inline_and_its_mentions_read_nothing);
fn a_text_attachment_is_inline_and_its_mentions_read_nothing(cli: RealCli) {
    let host = Host::new(cli);
    // The first wall alone: no Landlock to catch what slips through.
    host.env.write_config(r#"{"ask": {"confinement": "off"}}"#);
    let dotenv = host.dotenv();
    let content = format!(
        "@{d} is the file\nand @\"{d}\"\n/help\n",
        d = dotenv.display()
    );
    let notes = host.inbox("notes.txt", content.as_bytes());
    let photo = host.inbox("p.png", &std::fs::read(fixture("pixel.png")).unwrap());
    let name = "@.env notes.txt";
    let note = format!("{}:{name}", notes.display());
    let photo = photo.to_string_lossy().into_owned();
    // Alone, the prompt goes on stdin; with a photo, as the text block of
    // a stream-json message (which claude expands mentions in too).
    for (n, with_photo) in [false, true].into_iter().enumerate() {
        host.mock.push(json!({"text": "read your notes"}));
        let mut args = vec!["--user", "U1", "--attach", &note];
        if with_photo {
            args.extend(["--attach", &photo]);
        }
        args.extend(["--", "my notes"]);
        host.ask(&args).succeeds().stdout_is("read your notes\n");
        host.assert_no_secret();
        let request = &host.mock.messages_requests()[n];
        let blocks = user_blocks(request);
        assert_eq!(
            blocks.iter().filter(|b| b["type"] == "image").count(),
            usize::from(with_photo),
            "{cli}: {request}"
        );
        let text: String = blocks
            .iter()
            .chain(std::iter::once(&request["messages"][0]["content"]))
            .filter_map(|b| b["text"].as_str().or(b.as_str()))
            .collect::<Vec<_>>()
            .join("\n")
            .replace(ZWSP, "");
        assert!(
            text.contains(&format!("\"{name}\" ({} bytes, text)", content.len())),
            "{cli}: {text}"
        );
        assert!(
            text.contains(&format!("```\n{}\n```", content.trim_end())),
            "{cli}: the whole content, as words: {text}"
        );
        assert!(tools_offered(request).is_empty(), "{cli}: no tool for text");
    }
}

real_cli_test!(a_document_is_read_from_claudes_folder_and_nothing_outside_it);
fn a_document_is_read_from_claudes_folder_and_nothing_outside_it(cli: RealCli) {
    let host = Host::new(cli);
    let invoice = host.inbox("scan", &std::fs::read(fixture("invoice.pdf")).unwrap());
    let dotenv = host.dotenv();
    let escape = format!(
        "{}{}",
        "../".repeat(16),
        dotenv.to_string_lossy().trim_start_matches('/')
    );
    let run = |config: &str| {
        host.env.write_config(config);
        for attempt in [
            tool_use("Read", json!({"file_path": dotenv})),
            tool_use("Read", json!({"file_path": escape})),
            // The copy, by its name in claude's working folder.
            tool_use("Read", json!({"file_path": "1-invoice.pdf"})),
        ] {
            host.mock.push(attempt);
        }
        host.mock.push(json!({"text": "it is an invoice"}));
        host.ask(&[
            "--user",
            "U1",
            "--attach",
            &format!("{}:invoice.pdf", invoice.display()),
            "--",
            "what is this?",
        ])
        .succeeds()
        .stdout_is("it is an invoice\n");
    };
    let pdf = base64_of(&invoice);
    // Claude's own rule alone (unconfined); a bare "Read" rule left in
    // allowedTools without Read among the tools (unconfined: it stays off
    // for the attachment's call); the operator's bare rule with Read on
    // and Landlock required: none reaches the .env, all read the copy.
    for config in [
        r#"{"ask": {"confinement": "off"}}"#,
        r#"{"ask": {"allowedTools": ["Read", "Read(//**)"], "confinement": "off"}}"#,
        r#"{"ask": {"tools": ["Read"], "allowedTools": ["Read"], "confinement": "required"}}"#,
    ] {
        let before = host.mock.count();
        run(config);
        let requests = host.mock.messages_requests();
        let this = &requests[before..];
        assert_eq!(this.len(), 4, "{cli} {config}: three reads and the answer");
        for request in this {
            assert_eq!(
                tools_offered(request),
                ["Read"],
                "{cli}: Read, for this call"
            );
        }
        // 2.1.332 puts the document into the tool result, 2.1.197 into a
        // message after it: the answer's request holds it either way.
        let answer = this.last().unwrap().to_string();
        assert!(
            answer.contains(&pdf[..60]),
            "{cli} {config}: Read gave the model the document: {:#?}",
            tool_results(this)
        );
        host.assert_no_secret();
        let text = this[0]["messages"][0]["content"].to_string();
        assert!(
            text.contains("1. \\\"invoice.pdf\\\"") && text.contains("/work/1-invoice.pdf"),
            "{cli}: {text}"
        );
    }
    // The control: unconfined, that bare rule does open the .env, so the
    // check above can fail.
    run(r#"{"ask": {"tools": ["Read"], "allowedTools": ["Read"], "confinement": "off"}}"#);
    assert!(
        host.mock.all_bodies().contains(DOTENV_SECRET),
        "{cli}: unconfined with a bare Read rule, the .env is readable"
    );
    // The next message, with no file: no tool at all.
    host.env.write_config("{}");
    host.mock.push(json!({"text": "hi"}));
    host.ask(&["--user", "U1", "--", "thanks"]).succeeds();
    let last = host.mock.messages_requests().pop().unwrap();
    assert!(
        tools_offered(&last).is_empty(),
        "{cli}: Read was for that call only"
    );
}

real_cli_test!(attachments_over_a_cap_are_refused_before_anything_is_sent);
fn attachments_over_a_cap_are_refused_before_anything_is_sent(cli: RealCli) {
    let host = Host::new(cli);
    host.env
        .write_config(r#"{"limits": {"attachmentsPerMessage": 1, "attachmentBytes": 100}}"#);
    let small = host.inbox("a.png", &std::fs::read(fixture("pixel.png")).unwrap());
    let big = host.inbox("b.pdf", &std::fs::read(fixture("invoice.pdf")).unwrap());
    let small = small.to_string_lossy().into_owned();
    let big = big.to_string_lossy().into_owned();
    for (args, says) in [
        (
            vec!["--attach", &*small, "--attach", &*small],
            "limits.attachmentsPerMessage is 1",
        ),
        (vec!["--attach", &*big], "over limits.attachmentBytes (100)"),
    ] {
        let mut all = vec!["--user", "U1", "--msg-id", "m1"];
        all.extend(args);
        all.extend(["--", "look"]);
        let out = host.ask(&all).output();
        assert_eq!(
            exit_of(&out),
            Some(Exit::Usage),
            "{cli}: {}",
            stderr_of(&out)
        );
        let err = stderr_of(&out);
        assert!(
            err.contains(says) && err.contains("nothing was logged"),
            "{cli}: {err}"
        );
    }
    assert_eq!(host.mock.count(), 0, "{cli}: nothing sent");
    assert!(
        !host.env.messages_path("U1").exists(),
        "{cli}: nothing logged"
    );
    // Within the caps, the same id goes through: nothing was claimed.
    host.mock.push(json!({"text": "a pixel"}));
    host.ask(&[
        "--user", "U1", "--msg-id", "m1", "--attach", &small, "--", "look",
    ])
    .succeeds()
    .stdout_is("a pixel\n");
    assert_eq!(host.env.messages("U1").len(), 2);
}

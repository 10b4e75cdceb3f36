//! The real Claude Code CLI and a loopback mock of the Messages API.
//!
//! [`real_claude`] installs the pinned `@anthropic-ai/claude-code` (see
//! `claude::KNOWN_GOOD_VERSION`) under `target/claude-code/<version>/` the
//! first time a test needs it, under a lock file so parallel test binaries
//! install it once. No npm: the test fails and says what to install; it is
//! never skipped. [`MockApi`] runs `tests/mock-messages-api.py` (python3)
//! for one test: a queue of scripted answers, every request recorded.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use claude_session::claude::KNOWN_GOOD_VERSION;

use super::TestEnv;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// The pinned Claude Code CLI, installed on first use.
pub fn real_claude() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(install).clone()
}

fn version_of(bin: &Path) -> Option<String> {
    let out = Command::new(bin)
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::temp_dir())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn install() -> PathBuf {
    let root = target_dir().join("claude-code");
    let prefix = root.join(KNOWN_GOOD_VERSION);
    let bin = prefix.join("node_modules/.bin/claude");
    std::fs::create_dir_all(&root).expect("create target/claude-code");
    // One installer at a time across test threads and test binaries.
    let lock = std::fs::File::create(root.join(".install.lock")).expect("create the install lock");
    lock.lock().expect("take the install lock");
    let good = |bin: &Path| {
        version_of(bin).is_some_and(|v| v.starts_with(&format!("{KNOWN_GOOD_VERSION} ")))
    };
    if good(&bin) {
        return bin;
    }
    let npm = which::which("npm").unwrap_or_else(|_| {
        panic!(
            "the end-to-end tests run the real Claude Code CLI and need npm to install it \
             (@anthropic-ai/claude-code@{KNOWN_GOOD_VERSION}, into {}): install Node.js 20 or \
             newer with npm (Debian/Ubuntu: apt-get install nodejs npm), then run the tests again",
            prefix.display()
        )
    });
    let _ = std::fs::remove_dir_all(&prefix);
    std::fs::create_dir_all(&prefix).expect("create the install folder");
    eprintln!(
        "installing @anthropic-ai/claude-code@{KNOWN_GOOD_VERSION} into {}",
        prefix.display()
    );
    let out = Command::new(npm)
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
        ])
        .arg(&prefix)
        .arg(format!("@anthropic-ai/claude-code@{KNOWN_GOOD_VERSION}"))
        .stdin(Stdio::null())
        .output()
        .expect("run npm");
    assert!(
        out.status.success() && good(&bin),
        "npm install of @anthropic-ai/claude-code@{KNOWN_GOOD_VERSION} failed ({}); \
         check network access to the npm registry:\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// A running mock of the Messages API, private to one test.
pub struct MockApi {
    pub dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
    queued: AtomicUsize,
}

impl MockApi {
    pub fn start() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("mock-messages-api-")
            .tempdir()
            .expect("create the mock's folder");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock-messages-api.py");
        let child = Command::new("python3")
            .arg(&script)
            .arg(dir.path())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "could not start python3 {} ({e}); install python3",
                    script.display()
                )
            });
        let port_file = dir.path().join("port");
        let started = Instant::now();
        while !port_file.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the mock Messages API did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Self {
            dir,
            child,
            port,
            queued: AtomicUsize::new(0),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Queue the answer to a later request (see the script's doc).
    pub fn push(&self, spec: Value) {
        let queue = self.dir.path().join("queue");
        std::fs::create_dir_all(&queue).unwrap();
        let n = self.queued.fetch_add(1, Ordering::SeqCst);
        let tmp = queue.join(format!(".{n:06}.tmp"));
        let mut file = std::fs::File::create(&tmp).unwrap();
        file.write_all(spec.to_string().as_bytes()).unwrap();
        std::fs::rename(&tmp, queue.join(format!("{n:06}.json"))).unwrap();
    }

    /// The answer when the queue has none for a request.
    pub fn set_default(&self, spec: Value) {
        std::fs::write(self.dir.path().join("default.json"), spec.to_string()).unwrap();
    }

    /// Every request line (`n`, `path`, `bytes`, …), in order.
    pub fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The bodies of the Messages requests, in order.
    pub fn messages_requests(&self) -> Vec<Value> {
        self.log()
            .iter()
            .filter(|l| l["path"].as_str().unwrap_or("").contains("/v1/messages"))
            .filter(|l| !l["path"].as_str().unwrap_or("").contains("count_tokens"))
            .map(|l| {
                let path = self
                    .dir
                    .path()
                    .join(format!("requests/{:04}.json", l["n"].as_u64().unwrap()));
                serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
            })
            .collect()
    }

    /// Every request body as text (for "this secret appears nowhere").
    pub fn all_bodies(&self) -> String {
        let dir = self.dir.path().join("requests");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        names.sort();
        names
            .iter()
            .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn count(&self) -> usize {
        self.messages_requests().len()
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The system prompt of a request, as one string.
pub fn system_text(request: &Value) -> String {
    match &request["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What points the built binary at the real claude and `mock`, with a
/// dummy API key.
fn real_claude_env(mock: &MockApi) -> [(&'static str, std::ffi::OsString); 3] {
    [
        ("CLAUDE_BIN", real_claude().into()),
        ("ANTHROPIC_BASE_URL", mock.base_url().into()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-dummy".into()),
    ]
}

impl TestEnv {
    /// The built binary with `--state-dir`, running the real claude
    /// against `mock`.
    pub fn real(&self, mock: &MockApi) -> assert_cmd::Command {
        let mut cmd = self.cmd();
        cmd.envs(real_claude_env(mock));
        cmd
    }

    /// [`TestEnv::real`] as a process to spawn and watch: stdin empty,
    /// stdout and stderr piped.
    pub fn real_process(&self, mock: &MockApi) -> Command {
        let mut cmd = self.process();
        cmd.envs(real_claude_env(mock))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

/// A mock answer that makes the model call tool `name` with `input`.
pub fn tool_use(name: &str, input: Value) -> Value {
    serde_json::json!({"tool_use": {"name": name, "input": input}})
}

/// The tool results claude sent back, as text.
pub fn tool_results(requests: &[Value]) -> Vec<String> {
    requests
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "tool_result")
        .map(|c| c["content"].to_string())
        .collect()
}

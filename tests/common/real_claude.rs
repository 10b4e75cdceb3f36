//! The real Claude Code CLI and a loopback mock of the Messages API.
//!
//! Two releases are pinned (`claude::TESTED_VERSIONS`): the oldest
//! supported, [`RealCli::OLDEST`] (`claude::KNOWN_GOOD_VERSION`), and the
//! newest tested, [`RealCli::NEWEST`] (`claude::NEWEST_TESTED_VERSION`).
//! [`real_cli_test!`] writes a test once and runs it on both. The first
//! test that needs a release installs the npm package
//! `@anthropic-ai/claude-code@<version>` under
//! `target/claude-code/<version>/`, under a lock file so parallel test
//! binaries install it once, and writes `target/claude-code/<version>/claude`,
//! the one executable the tests point `CLAUDE_BIN` at. A release whose
//! package asks for a newer Node.js than the machine's (2.1.332:
//! `engines.node >= 22`) is installed with the npm package `node`
//! ([`NODE_VERSION`], a registry package that carries the binary),
//! installed the same way under `target/claude-code/node-<version>/`. No
//! npm, or an install that fails: the test fails and says what to do; it
//! is never skipped. [`MockApi`] runs `tests/mock-messages-api.py`
//! (python3) for one test: a queue of scripted answers, every request
//! recorded.
//!
//! Both releases are native executables (Bun-compiled; the package's
//! postinstall `install.cjs` copies the platform package's binary over
//! `bin/claude.exe`): node runs npm and that script at install time only,
//! never when a test runs claude.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use claude_session::claude::{KNOWN_GOOD_VERSION, NEWEST_TESTED_VERSION, TESTED_VERSIONS};

use super::{Run, TestEnv};

/// The npm package `node` (Node.js as a registry package: its preinstall
/// fetches `node-<os>-<arch>@<same version>` from the registry, which
/// ships the binary) installed for a CLI whose `engines.node` the
/// machine's node does not meet. The newest 22.x the registry serves.
pub const NODE_VERSION: &str = "22.23.3";

/// The Node.js major each pinned release's package.json asks for
/// (`engines.node`).
const NODE_MAJOR_NEEDED: [(&str, u32); 2] = [(KNOWN_GOOD_VERSION, 18), (NEWEST_TESTED_VERSION, 22)];

// `real_cli_test!` makes one test per release, by name: a third release
// needs a third arm there.
const _: () = assert!(TESTED_VERSIONS.len() == 2);

/// One pinned Claude Code release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealCli {
    pub version: &'static str,
}

impl RealCli {
    /// The oldest release supported (`claude::KNOWN_GOOD_VERSION`).
    pub const OLDEST: RealCli = RealCli {
        version: KNOWN_GOOD_VERSION,
    };
    /// The newest release tested (`claude::NEWEST_TESTED_VERSION`).
    pub const NEWEST: RealCli = RealCli {
        version: NEWEST_TESTED_VERSION,
    };

    /// `target/claude-code/<version>/claude`, installed on first use.
    pub fn bin(&self) -> PathBuf {
        static INSTALLED: [OnceLock<PathBuf>; 2] = [OnceLock::new(), OnceLock::new()];
        let slot = TESTED_VERSIONS
            .iter()
            .position(|v| *v == self.version)
            .unwrap_or_else(|| panic!("{} is not in claude::TESTED_VERSIONS", self.version));
        INSTALLED[slot]
            .get_or_init(|| install(self.version))
            .clone()
    }
}

impl std::fmt::Display for RealCli {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "claude {}", self.version)
    }
}

/// `real_cli_test!(name);` beside `fn name(cli: RealCli) { … }`: the
/// test body written once, run on every pinned release as the tests
/// `name::oldest` ([`RealCli::OLDEST`]) and `name::newest`
/// ([`RealCli::NEWEST`]). (A module and a function may share a name; the
/// function stays outside the macro, so rustfmt formats it.)
macro_rules! real_cli_test {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[test]
            fn oldest() {
                super::$name($crate::common::real_claude::RealCli::OLDEST)
            }

            #[test]
            fn newest() {
                super::$name($crate::common::real_claude::RealCli::NEWEST)
            }
        }
    )+};
}
pub(crate) use real_cli_test;

pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// The first line `program --version` prints, in a bare environment.
pub fn version_of(program: &Path) -> Option<String> {
    let out = Command::new(program)
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().next().unwrap_or("").trim().to_owned())
}

/// The major of a `vX.Y.Z` node version.
fn node_major(version: &str) -> Option<u32> {
    version.strip_prefix('v')?.split('.').next()?.parse().ok()
}

fn npm() -> PathBuf {
    which::which("npm").unwrap_or_else(|_| {
        panic!(
            "the end-to-end tests run the real Claude Code CLI ({}) and need npm to install it \
             under {}: install Node.js 18 or newer with npm (Debian/Ubuntu: apt-get install \
             nodejs npm), then run the tests again",
            TESTED_VERSIONS.join(" and "),
            target_dir().join("claude-code").display()
        )
    })
}

/// `npm install <package>` into `prefix`, with `path_first` (a node's
/// folder) ahead of `PATH` so npm and the package's install scripts run
/// on that node; fails the test with npm's output.
pub fn npm_install(prefix: &Path, package: &str, path_first: Option<&Path>) {
    let _ = std::fs::remove_dir_all(prefix);
    std::fs::create_dir_all(prefix).expect("create the install folder");
    eprintln!("installing {package} into {}", prefix.display());
    let mut cmd = Command::new(npm());
    cmd.args([
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--prefix",
    ])
    .arg(prefix)
    .arg(package)
    .stdin(Stdio::null());
    if let Some(first) = path_first {
        let mut path = vec![first.to_owned()];
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        cmd.env("PATH", std::env::join_paths(path).unwrap());
    }
    let out = cmd.output().expect("run npm");
    assert!(
        out.status.success(),
        "npm install of {package} into {} failed ({}); check access to the npm registry, \
         then run the tests again:\n{}\n{}",
        prefix.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The node to install `version` with: the machine's when it meets the
/// package's `engines.node`, else [`NODE_VERSION`] from the registry
/// (installed once under `root`). `None`: the machine's, as on `PATH`.
fn node_for(root: &Path, version: &str) -> Option<PathBuf> {
    let needed = NODE_MAJOR_NEEDED
        .iter()
        .find(|(v, _)| *v == version)
        .map(|(_, major)| *major)
        .unwrap_or_else(|| panic!("no engines.node for {version} in NODE_MAJOR_NEEDED"));
    let system = which::which("node").ok();
    let system_major = system
        .as_deref()
        .and_then(version_of)
        .as_deref()
        .and_then(node_major);
    if system_major.is_some_and(|m| m >= needed) {
        return None;
    }
    let pinned_major = node_major(&format!("v{NODE_VERSION}")).unwrap();
    assert!(
        pinned_major >= needed,
        "Claude Code {version} needs node {needed} or newer; the machine's node is {}, and \
         NODE_VERSION ({NODE_VERSION}) is older too: raise NODE_VERSION in {}",
        system_major.map_or("missing".to_owned(), |m| m.to_string()),
        file!()
    );
    let prefix = root.join(format!("node-{NODE_VERSION}"));
    let node = prefix.join("node_modules/.bin/node");
    let want = format!("v{NODE_VERSION}");
    if version_of(&node).as_deref() != Some(want.as_str()) {
        npm_install(&prefix, &format!("node@{NODE_VERSION}"), None);
        let got = version_of(&node);
        assert!(
            got.as_deref() == Some(want.as_str()),
            "npm installed node@{NODE_VERSION} into {}, but {} --version says {got:?}: remove \
             that folder and run the tests again",
            prefix.display(),
            node.display()
        );
    }
    Some(prefix.join("node_modules/.bin"))
}

/// Installs Claude Code `version` (once; checked by `--version`) and
/// returns its wrapper, `target/claude-code/<version>/claude`.
fn install(version: &'static str) -> PathBuf {
    let root = target_dir().join("claude-code");
    let prefix = root.join(version);
    let wrapper = prefix.join("claude");
    std::fs::create_dir_all(&root).expect("create target/claude-code");
    // One installer at a time across test threads and test binaries.
    let lock = std::fs::File::create(root.join(".install.lock")).expect("create the install lock");
    lock.lock().expect("take the install lock");
    let good = |bin: &Path| version_of(bin).is_some_and(|v| v.starts_with(&format!("{version} ")));
    if good(&wrapper) {
        return wrapper;
    }
    let node_dir = node_for(&root, version);
    npm_install(
        &prefix,
        &format!("@anthropic-ai/claude-code@{version}"),
        node_dir.as_deref(),
    );
    let bin = prefix.join("node_modules/.bin/claude");
    assert!(
        good(&bin),
        "npm installed @anthropic-ai/claude-code@{version} into {}, but {} --version says \
         {:?} (did its postinstall, which puts the native binary in place, run? npm's \
         ignore-scripts must be off): remove that folder and run the tests again",
        prefix.display(),
        bin.display(),
        version_of(&bin)
    );
    // The one executable CLAUDE_BIN names; written last, under another
    // name first, so a half-done install is never taken for a good one.
    let target = bin.canonicalize().expect("the installed claude");
    assert!(
        !target.to_string_lossy().contains('\''),
        "{}: a path with a quote cannot go into the wrapper; set CARGO_TARGET_DIR elsewhere",
        target.display()
    );
    let script = format!(
        "#!/bin/sh\n# Claude Code {version}, installed by tests/common/real_claude.rs with {}.\n\
         # A native executable: no node runs it.\nexec '{}' \"$@\"\n",
        node_dir
            .as_deref()
            .map_or("the machine's node".to_owned(), |d| format!(
                "the node in {}",
                d.display()
            )),
        target.display()
    );
    let tmp = prefix.join(".claude.tmp");
    std::fs::write(&tmp, script).expect("write the claude wrapper");
    std::fs::set_permissions(
        &tmp,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .expect("make the claude wrapper executable");
    std::fs::rename(&tmp, &wrapper).expect("put the claude wrapper in place");
    assert!(
        good(&wrapper),
        "{} --version says {:?}",
        wrapper.display(),
        version_of(&wrapper)
    );
    wrapper
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

/// What points the built binary at `cli` and `mock`, with a dummy API
/// key.
fn real_claude_env(cli: RealCli, mock: &MockApi) -> [(&'static str, std::ffi::OsString); 3] {
    [
        ("CLAUDE_BIN", cli.bin().into()),
        ("ANTHROPIC_BASE_URL", mock.base_url().into()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-dummy".into()),
    ]
}

impl TestEnv {
    /// The built binary with `--state-dir`, running the real claude `cli`
    /// against `mock`.
    pub fn real(&self, cli: RealCli, mock: &MockApi) -> Run {
        real_claude_env(cli, mock)
            .into_iter()
            .fold(self.run([] as [&str; 0]), |run, (key, value)| {
                run.env(key, value)
            })
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

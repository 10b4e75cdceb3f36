//! The README as a newcomer meets it: every shell block marked
//! `# runnable` runs as written (in order, as one script, with the fake
//! claude), so does every Python block marked so (each on its own), and
//! the configuration table names every key the tool reads.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{TestEnv, binary, fake_claude, stderr_of, stdout_of};

const README: &str = include_str!("../README.md");

/// The ```sh blocks whose first line starts with `# runnable`.
fn runnable_blocks() -> Vec<String> {
    runnable_blocks_of("sh")
}

/// The blocks of `language` whose first line starts with `# runnable`.
fn runnable_blocks_of(language: &str) -> Vec<String> {
    let fence = format!("```{language}");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in README.lines() {
        match &mut current {
            None if line.trim_end() == fence => current = Some(String::new()),
            Some(block) if line.trim_end() == "```" => {
                if block.starts_with("# runnable") {
                    blocks.push(block.clone());
                }
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn every_runnable_readme_block_runs_as_written() {
    let blocks = runnable_blocks();
    assert!(
        blocks.len() >= 2,
        "the README lost its runnable tour and admin blocks"
    );
    let binary = Path::new(env!("CARGO_BIN_EXE_claude-session"));
    let home = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = format!("set -eu\n{}", blocks.join("\n"));
    let output = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", path)
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", home.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "a runnable README block failed ({}).\n--- script ---\n{script}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        output.status
    );
    // The tour shows memory at work: the second call saw the first.
    assert!(
        stdout.contains("fake reply to: What am I preparing for?"),
        "{stdout}"
    );
    assert!(stdout.contains("[Recent messages]"), "{stdout}");
    assert!(stdout.contains("Hi, I'm Kevin"), "{stdout}");
    // Issue 25: the tour's compaction gets the JSON it asks for from the
    // shipped fake: no warning, a summary of what was said.
    assert!(!stderr.contains("not the JSON asked for"), "{stderr}");
    assert!(
        stdout.contains("The user said: Hi, I'm Kevin. I'm preparing for the TOEIC."),
        "{stdout}"
    );
    // Nothing leaked into the repository.
    assert!(
        !Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(".claude")
            .exists()
    );
}

/// The streaming broker recipe, run as written against the fake claude
/// writing its reply a word every 0.3 s: it posts the first piece, edits
/// the message as more arrives, and ends on the logged reply.
#[test]
fn the_streaming_broker_recipe_runs_and_edits_as_deltas_arrive() {
    let blocks = runnable_blocks_of("python");
    assert_eq!(blocks.len(), 1, "the README has one runnable Python recipe");
    let binary = Path::new(env!("CARGO_BIN_EXE_claude-session"));
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("state");
    // The operator made the broker's state dir once, as the README says.
    let init = Command::new(binary)
        .arg("init")
        .arg(&state)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let run = |extra: &[(&str, &str)]| {
        Command::new("python3")
            .arg("-c")
            .arg(&blocks[0])
            // From the repository root, as the block says; it sets CLAUDE_BIN.
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    binary.parent().unwrap().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("HOME", home.path())
            .env("LANG", "C.UTF-8")
            .env("CLAUDE_SESSION_STATE_DIR", &state)
            // claude sees only the variables it is allowed (ask.env).
            .env("CLAUDE_SESSION_CLAUDE_ENV", "FAKE_CLAUDE_*")
            .envs(extra.iter().copied())
            .output()
            .unwrap()
    };
    // Issue 25: a stream that ends in an error names what failed.
    let failed = run(&[("FAKE_CLAUDE_STREAM_FAIL_AFTER", "2")]);
    let failed_out = String::from_utf8_lossy(&failed.stdout);
    let failed_err = String::from_utf8_lossy(&failed.stderr);
    assert!(
        failed_err.contains("claude-session failed (exit 75): ")
            && failed_err.contains("Stream ended"),
        "{failed_out}\n{failed_err}"
    );
    assert!(
        failed_out.contains("Sorry, something went wrong."),
        "{failed_out}"
    );
    let output = Command::new("python3")
        .arg("-c")
        .arg(&blocks[0])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                binary.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("CLAUDE_SESSION_STATE_DIR", &state)
        .env("FAKE_CLAUDE_CHUNK_DELAY", "0.3")
        // claude sees only the variables it is allowed (ask.env).
        .env("CLAUDE_SESSION_CLAUDE_ENV", "FAKE_CLAUDE_*")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let reply = "fake reply to: Tell me a story about a cat";
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.first(), Some(&"post: fake "), "{stdout}");
    let edits: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("edit message-1: "))
        .collect();
    assert!(edits.len() >= 2, "the message grew in place: {stdout}");
    assert!(
        edits
            .windows(2)
            .all(|w| w[1].starts_with(w[0]) && w[1] != w[0]),
        "each edit extends the last: {edits:?}"
    );
    assert_eq!(edits.last(), Some(&reply), "{stdout}");
    assert_eq!(lines.last(), Some(&"exit: 0"));
    let log = std::fs::read_to_string(state.join("sessions/stm/U0123ABC/messages.jsonl")).unwrap();
    assert!(log.contains(&format!("\"text\":\"{reply}\"")), "{log}");
}

#[test]
fn the_configuration_table_names_every_key() {
    let defaults = serde_json::to_value(claude_session::config::Config::default()).unwrap();
    let mut missing = Vec::new();
    for (section, keys) in defaults.as_object().unwrap() {
        for key in keys.as_object().unwrap().keys() {
            let name = format!("`{section}.{key}`");
            if !README.contains(&name) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README's configuration table lacks {missing:?}"
    );
}

/// The README's first block: the two commands a newcomer needs. The first
/// installs and answers one message with the shipped stand-in, in a
/// throwaway folder, never the real default state dir (issue 25); it is
/// run here as written after its `cargo install` (with the built binary on
/// `PATH`, as the install puts it there).
#[test]
fn the_first_command_installs_and_answers_one_message() {
    let first_block = README
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README opens with a sh block");
    let lines: Vec<&str> = first_block.lines().collect();
    assert_eq!(lines.len(), 2, "two commands: {first_block}");
    let install = "cargo install --locked --path . && ";
    let run = lines[0]
        .strip_prefix(install)
        .unwrap_or_else(|| panic!("the first command builds and installs first: {}", lines[0]));
    assert!(run.contains("claude-session --channel demo ask"), "{run}");
    assert_eq!(lines[1], "cargo test --locked");
    // `cargo install --path .` installs the binary under this name.
    let manifest = include_str!("../Cargo.toml");
    assert!(manifest.contains("[[bin]]\nname = \"claude-session\""));

    let binary = Path::new(env!("CARGO_BIN_EXE_claude-session"));
    let home = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = home.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("set -eu\n{run}"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", path)
        .env("HOME", home.path())
        .env("TMPDIR", &tmp)
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{run}\n{stdout}\n{stderr}");
    assert_eq!(stdout, "fake reply to: hello\n", "{stderr}");
    assert!(
        !home.path().join(".local/state/claude-session").exists(),
        "the first command wrote into the real default state dir"
    );
    let throwaway: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.join(".claude/channels/demo/sessions/stm/U1/messages.jsonl")
                .exists()
        })
        .collect();
    assert_eq!(throwaway.len(), 1, "not in a temporary folder: {stderr}");
    assert!(
        !Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(".claude")
            .exists()
    );
}

/// The module map of "For contributors" names every source file, so a new
/// module cannot land without a place in it.
#[test]
fn the_module_map_names_every_source_file() {
    let map = README
        .split("## For contributors")
        .nth(1)
        .expect("the README has a For contributors section");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    let mut folders = vec![src.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue; // test data such as claude/testdata/*.jsonl
            }
            let name = path.file_name().unwrap().to_str().unwrap();
            let parent = path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap();
            // `memory/stm.rs`, or `expiry.rs` on a row that names `memory/`.
            let qualified = format!("{parent}/{name}");
            let folder = format!("{parent}/");
            let bare = format!("`{name}`");
            let named = map.lines().any(|row| {
                row.contains(&qualified) || (row.contains(&folder) && row.contains(&bare))
            });
            if !named {
                missing.push(path.strip_prefix(&src).unwrap().display().to_string());
            }
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "README's module map lacks {missing:?}");
}

/// The block of `language` whose first line starts with `first`.
fn block_starting(language: &str, first: &str) -> String {
    let fence = format!("```{language}\n");
    README
        .split(&fence)
        .skip(1)
        .filter_map(|rest| rest.split("\n```").next())
        .find(|block| block.starts_with(first))
        .unwrap_or_else(|| panic!("the README has a ```{language} block starting {first:?}"))
        .to_owned()
}

/// What the README's scheduled-maintenance recipes name, and the test's
/// stand-ins for it: the installed binary, the env file, the state dir and
/// claude.
struct Recipe {
    binary: String,
    env_file: String,
    /// `KEY=value` lines of the README's env file.
    env_lines: Vec<(String, String)>,
}

impl Recipe {
    fn from_readme() -> Self {
        // The binary is where the install step puts it.
        let install = README
            .lines()
            .find(|l| l.starts_with("sudo install -m 0755 ~/.cargo/bin/claude-session "))
            .expect("the README installs the binary for the scheduled jobs");
        let binary = install.rsplit(' ').next().unwrap().to_owned();
        let env_block = block_starting("sh", "# /etc/claude-session/env");
        let env_file = env_block[2..].split(':').next().unwrap().to_owned();
        let env_lines = env_block
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (key, value) = l.split_once('=').unwrap_or_else(|| panic!("{l:?}"));
                assert!(
                    !value.contains([' ', '"', '\'']),
                    "systemd and sh read {l:?} differently"
                );
                (key.to_owned(), value.to_owned())
            })
            .collect();
        Self {
            binary,
            env_file,
            env_lines,
        }
    }

    /// The env file as the README gives it, with the fake claude and the
    /// test's state dir in place of the real ones, plus what the fake needs
    /// to record its calls; written into the test's folder.
    fn write_env_file(&self, env: &TestEnv) -> std::path::PathBuf {
        let mut text = String::new();
        for (key, value) in &self.env_lines {
            let value = match key.as_str() {
                "CLAUDE_BIN" => fake_claude().display().to_string(),
                "CLAUDE_SESSION_STATE_DIR" => env.state_dir().display().to_string(),
                _ => value.clone(),
            };
            text.push_str(&format!("{key}={value}\n"));
        }
        let log = env.claude_log().display().to_string();
        text.push_str(&format!(
            "FAKE_CLAUDE_LOG={log}\nCLAUDE_SESSION_CLAUDE_ENV=FAKE_CLAUDE_*\nCLAUDE_SESSION_CLAUDE_WRITABLE={log}\n"
        ));
        let path = env.dir.path().join("env");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn value_of(&self, key: &str) -> &str {
        &self
            .env_lines
            .iter()
            .find(|(k, _)| k == key)
            .unwrap_or_else(|| panic!("the README's env file sets no {key}"))
            .1
    }

    /// `command` with the README's paths replaced by the test's.
    fn localise(&self, command: &str, env_file: &Path) -> String {
        assert!(command.contains(&self.binary), "{command}");
        command
            .replace(&self.binary, binary().to_str().unwrap())
            .replace(&self.env_file, env_file.to_str().unwrap())
    }
}

/// A state dir with one user over the compaction threshold: `maintain`
/// must call claude for it.
fn a_state_dir_with_work(env: &TestEnv) {
    env.write_config(r#"{"compacting": {"threshold": 3}, "stm": {"contextWindow": 1}}"#);
    for i in 1..=4 {
        env.append(
            &["--user", "U1", "--msg-id", &i.to_string()],
            &format!("message {i}"),
        );
    }
}

/// The job did the pass: claude (the env file's `CLAUDE_BIN`) was called
/// for the compaction, with the env file's credentials.
#[track_caller]
fn maintained_with_the_env_files_claude(env: &TestEnv, recipe: &Recipe, output: &Output) {
    assert!(
        output.status.success(),
        "{}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        stdout_of(output),
        stderr_of(output)
    );
    assert!(env.claude_calls() >= 1, "maintain did not call claude");
    let recorded = std::fs::read_to_string(env.claude_log().join("call-1/env")).unwrap();
    let key = format!("ANTHROPIC_API_KEY={}", recipe.value_of("ANTHROPIC_API_KEY"));
    assert!(
        recorded.lines().any(|l| l == key),
        "claude did not get the key: {recorded}"
    );
    assert!(
        env.read_lines("U1").len() < 4,
        "the log was not compacted: {:?}",
        env.read_lines("U1")
    );
}

/// The cron line runs as cron runs it: `/bin/sh -c` with cron's own four
/// variables (`PATH=/usr/bin:/bin`, `HOME`, `LOGNAME`, `SHELL`) and nothing
/// else; quiet on success, so cron mails nothing.
#[test]
fn the_cron_recipe_runs_as_written_with_only_what_cron_and_the_env_file_give() {
    let recipe = Recipe::from_readme();
    let line = block_starting("cron", "");
    let line = line.trim();
    let command = line.splitn(6, ' ').nth(5).expect("five schedule fields");
    let env = TestEnv::new();
    a_state_dir_with_work(&env);
    let env_file = recipe.write_env_file(&env);
    let output = Command::new("env")
        .args(["-i", "PATH=/usr/bin:/bin", "LOGNAME=bot", "SHELL=/bin/sh"])
        .arg(format!("HOME={}", env.home().display()))
        .args(["/bin/sh", "-c", &recipe.localise(command, &env_file)])
        .current_dir(env.home())
        .output()
        .unwrap();
    maintained_with_the_env_files_claude(&env, &recipe, &output);
    assert_eq!(stdout_of(&output), "", "cron would mail this");
    assert_eq!(stderr_of(&output), "", "cron would mail this");
}

/// The unit runs as systemd runs it: `ExecStart` split into words and
/// executed without a shell, in the environment systemd gives a `User=`
/// service (its default `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`), then
/// `Environment=` and the `EnvironmentFile=`'s lines.
#[test]
fn the_systemd_recipe_runs_as_written_with_only_what_the_unit_gives() {
    let recipe = Recipe::from_readme();
    let unit = block_starting("ini", "[Unit]\nDescription=claude-session maintenance");
    let setting = |name: &str| -> Vec<&str> {
        unit.lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .collect()
    };
    assert_eq!(setting("EnvironmentFile"), [recipe.env_file.as_str()]);
    let exec_start = setting("ExecStart");
    assert_eq!(exec_start.len(), 1, "{unit}");
    let env = TestEnv::new();
    a_state_dir_with_work(&env);
    let env_file = recipe.write_env_file(&env);
    let argv: Vec<String> = recipe
        .localise(exec_start[0], &env_file)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert!(argv[0].starts_with('/'), "systemd needs an absolute path");
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .env("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin")
        .env("HOME", env.home())
        .env("USER", "bot")
        .env("LOGNAME", "bot")
        .env("SHELL", "/bin/sh")
        .current_dir("/");
    for assignment in setting("Environment") {
        let (key, value) = assignment.split_once('=').unwrap();
        cmd.env(key, value);
    }
    for line in std::fs::read_to_string(&env_file).unwrap().lines() {
        let (key, value) = line.split_once('=').unwrap();
        cmd.env(key, value);
    }
    let output = cmd.output().unwrap();
    maintained_with_the_env_files_claude(&env, &recipe, &output);
}

/// The README's JavaScript recipe runs under Node as written (its `ask`,
/// and its Slack ids for a private channel, with stand-ins for the
/// platform): the reply is read as it grows, the message lands in the
/// channel's memory.
#[test]
fn the_node_recipe_runs_under_node_and_reads_the_reply_as_it_grows() {
    let block = block_starting("js", "const { spawn }");
    let (function, usage) = block
        .split_once("// A Slack message event")
        .expect("the recipe's ask, then its use on a Slack event");
    let script = format!(
        r#"{function}
const msg = {{ user: "U1", ts: "1711.1", channel: "G1", channel_type: "group", text: "Standup at ten?" }};
const shown = [];
const showSoFar = (soFar) => shown.push(soFar);
const say = async (reply) => console.log(JSON.stringify({{ shown, reply }}));
const requeue = () => console.log("requeue");
(async () => {{
// A Slack message event{usage}
}})();
"#
    );
    let env = TestEnv::new();
    let path = format!(
        "{}:{}",
        binary().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = env
        .sealed("node")
        .args(["-e", &script])
        .env("PATH", path)
        .env("CLAUDE_BIN", fake_claude())
        .env("CLAUDE_SESSION_STATE_DIR", env.state_dir())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout_of(&output),
        stderr_of(&output)
    );
    let said: serde_json::Value = serde_json::from_str(stdout_of(&output).trim())
        .unwrap_or_else(|e| panic!("{e}: {}", stdout_of(&output)));
    let reply = "fake reply to: Standup at ten?";
    assert_eq!(said["reply"], reply);
    let shown = said["shown"].as_array().unwrap();
    assert!(shown.len() >= 2, "one call per piece: {said}");
    assert_eq!(shown.last().unwrap(), reply);
    let group = env.messages("#G1");
    assert_eq!(group.len(), 2, "{group:?}");
    assert_eq!(group[0]["userId"], "U1");
    assert_eq!(group[0]["channel"], "slack");
    assert!(env.read_lines("U1").is_empty());
}

/// Issue 26: the configuration table is the key table of `src/config/keys.rs`
/// rendered, row for row: each key's default (read from `Config::default()`),
/// allowed values and doc, so none can drift from what the code does.
#[test]
fn the_configuration_table_is_rendered_from_the_key_definitions() {
    let want = claude_session::config::readme_table();
    let start = README
        .find("| key | default |")
        .expect("README has a configuration table");
    let have: String = README[start..]
        .lines()
        .take_while(|line| line.starts_with('|'))
        .map(|line| format!("{line}\n"))
        .collect();
    if have != want {
        let differ = have
            .lines()
            .zip(want.lines())
            .find(|(a, b)| a != b)
            .map_or("a row is missing or extra".to_owned(), |(a, b)| {
                format!("README {a:?}\ndefinition {b:?}")
            });
        panic!(
            "README's configuration table differs from src/config/keys.rs:\n{differ}\n\
             Replace the table with:\n{want}"
        );
    }
}

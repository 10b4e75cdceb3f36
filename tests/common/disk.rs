//! Reading what the tool left on disk, and writing fixtures in its formats:
//! gzip archives (decoded with `gzip -dc`, the point being that standard
//! tools read them), snapshots of a tree, markdown with YAML frontmatter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{TestEnv, stderr_of};

/// `gzip -dc` of a file; panics unless gzip succeeds.
#[track_caller]
pub fn gunzip(path: &Path) -> Vec<u8> {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .expect("run gzip");
    assert!(
        out.status.success(),
        "gzip -dc {} failed: {}",
        path.display(),
        stderr_of(&out)
    );
    out.stdout
}

/// [`gunzip`] as UTF-8 text.
#[track_caller]
pub fn gunzip_text(path: &Path) -> String {
    String::from_utf8(gunzip(path))
        .unwrap_or_else(|_| panic!("{} does not decode to UTF-8", path.display()))
}

/// One gzip member holding `bytes`.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// One gzip member holding `lines`, each ended by a newline: an archive
/// day as compaction writes it.
pub fn gzip_lines(lines: &[String]) -> Vec<u8> {
    let mut text = String::new();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    gzip(text.as_bytes())
}

impl TestEnv {
    /// Every archive of a user (`*.jsonl.gz`): file name → decoded bytes,
    /// so oldest day first.
    pub fn archives(&self, user: &str) -> BTreeMap<String, Vec<u8>> {
        let Ok(entries) = std::fs::read_dir(self.archive_dir(user)) else {
            return BTreeMap::new();
        };
        entries
            .map(|e| e.unwrap())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl.gz"))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    gunzip(&e.path()),
                )
            })
            .collect()
    }

    /// Every archived line of a user, oldest day first.
    pub fn archived_lines(&self, user: &str) -> Vec<String> {
        self.archives(user)
            .into_values()
            .flat_map(|bytes| {
                String::from_utf8(bytes)
                    .expect("archives are UTF-8")
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every archived line of a user parsed as JSON (blank lines skipped).
    pub fn archived_messages(&self, user: &str) -> Vec<Value> {
        self.archived_lines(user)
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("an archived line of {user} is not JSON ({e}): {l}"))
            })
            .collect()
    }
}

/// Temporary files (`*.tmp`) anywhere under `root`.
pub fn temp_files(root: &Path) -> Vec<PathBuf> {
    files_under(root)
        .into_iter()
        .filter(|path| path.to_string_lossy().ends_with(".tmp"))
        .collect()
}

/// Files under `dir`, recursively, sorted (none if it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// What [`snapshot_tree`] returns.
pub type Snapshot = BTreeMap<String, Option<Vec<u8>>>;

/// A snapshot of the tree under `root`: every file (with its bytes) and
/// folder (`None`, its key ending in `/`) by path relative to `root`,
/// except the entries for which `skip(relative path)` is true (a skipped
/// folder is not entered).
pub fn snapshot_tree(root: &Path, skip: impl Fn(&str) -> bool) -> Snapshot {
    fn walk(root: &Path, dir: &Path, skip: &dyn Fn(&str) -> bool, out: &mut Snapshot) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if skip(&rel) {
                continue;
            }
            if path.is_dir() {
                out.insert(format!("{rel}/"), None);
                walk(root, &path, skip, out);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &skip, &mut out);
    out
}

/// Every file and folder under `root` ([`snapshot_tree`] skipping nothing).
pub fn tree(root: &Path) -> Snapshot {
    snapshot_tree(root, |_| false)
}

/// Only the files under `root`, with their bytes, by relative path.
pub fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    tree(root)
        .into_iter()
        .filter_map(|(k, v)| v.map(|bytes| (k, bytes)))
        .collect()
}

/// Which entries differ between two snapshots (for a readable failure).
pub fn differences(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| match (before.contains_key(k), after.contains_key(k)) {
            (true, false) => format!("removed {k}"),
            (false, true) => format!("created {k}"),
            _ => format!("changed {k}"),
        })
        .collect()
}

/// Copy the tree under `from` to `to` (created).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A file as UTF-8 text; panics naming the path.
#[track_caller]
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Frontmatter and body of a markdown file that opens with `---\n` and
/// closes its YAML frontmatter (a mapping, maybe empty) with a `---` line.
#[track_caller]
pub fn read_markdown(path: &Path) -> (serde_yaml::Mapping, String) {
    let text = read(path);
    let rest = text
        .strip_prefix("---\n")
        .unwrap_or_else(|| panic!("{} does not start with ---: {text:?}", path.display()));
    let close = rest
        .find("\n---\n")
        .map(|i| i + 1)
        .or_else(|| rest.starts_with("---\n").then_some(0))
        .unwrap_or_else(|| panic!("{} never closes its frontmatter: {text:?}", path.display()));
    let yaml = &rest[..close];
    let front = if yaml.trim().is_empty() {
        serde_yaml::Mapping::new()
    } else {
        serde_yaml::from_str(yaml).unwrap_or_else(|e| {
            panic!(
                "{}: the frontmatter is not a YAML mapping ({e}): {text:?}",
                path.display()
            )
        })
    };
    (front, rest[close + 4..].to_owned())
}

/// A string of a frontmatter mapping (`None` if absent or not a string).
pub fn yaml_str<'a>(front: &'a serde_yaml::Mapping, key: &str) -> Option<&'a str> {
    front.get(key).and_then(serde_yaml::Value::as_str)
}

/// The strings of a frontmatter list (empty if absent).
pub fn yaml_strs(front: &serde_yaml::Mapping, key: &str) -> Vec<String> {
    front
        .get(key)
        .and_then(serde_yaml::Value::as_sequence)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

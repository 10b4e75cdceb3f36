//! The layers of `src/lib.rs`, checked: no module imports one of a higher
//! layer, and no two modules import each other. Read from the source, as
//! a reviewer would: every `crate::…` path outside tests and comments.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules, lowest first (`src/lib.rs`). Modules of one
/// rank may use each other; `None` serves every layer and uses only its
/// own kind.
fn rank(top: &str) -> Option<u8> {
    Some(match top {
        "store" => 0,
        "layout" => 1,
        "state" | "config" => 2,
        "claude" => 3,
        "memory" => 4,
        "cli" => 5,
        "commands" => 6,
        "error" | "diag" | "progress" | "terminal" => return None,
        other => panic!("src/{other}: a top-level module src/lib.rs does not place in a layer"),
    })
}

/// `memory::people` for `src/memory/people.rs` (and `…/mod.rs`).
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            modules(&path, &inner, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut parts = prefix.to_vec();
            if stem != "mod" {
                parts.push(stem.to_owned());
            }
            if parts.is_empty() || parts == ["lib"] || parts == ["main"] {
                continue;
            }
            out.insert(parts.join("::"), std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The code of a file as the crate builds it: no unit tests, no comments.
fn code(source: &str) -> String {
    let source = source.split("#[cfg(test)]").next().unwrap_or_default();
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b` path, with `crate::a::{b, c::d}` spelt out.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let base = rest[..end].trim_end_matches(':').to_owned();
        if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
            let close = rest[end..].find('}').map_or(rest.len(), |i| end + i);
            for item in rest[end + 1..close].split(',') {
                let item = item.split(" as ").next().unwrap().trim();
                let item = item.split("::{").next().unwrap();
                match item {
                    "" | "self" => out.push(base.clone()),
                    _ => out.push(format!("{base}::{item}")),
                }
            }
        }
        out.push(base);
    }
    out
}

/// The module a path lands in: its longest prefix that is a module.
fn resolve<'a>(path: &str, modules: &'a BTreeMap<String, String>) -> Option<&'a str> {
    let segments: Vec<&str> = path.split("::").collect();
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find_map(|m| modules.get_key_value(&m).map(|(k, _)| k.as_str()))
}

fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut files,
    );
    files
        .iter()
        .map(|(module, source)| {
            let used = crate_paths(&code(source))
                .iter()
                .filter_map(|p| resolve(p, &files))
                .filter(|used| used != module)
                .map(str::to_owned)
                .collect();
            (module.clone(), used)
        })
        .collect()
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap()
}

fn within(module: &str, of: &str) -> bool {
    module == of || module.starts_with(&format!("{of}::"))
}

#[test]
fn no_module_imports_one_of_a_higher_layer() {
    let mut wrong = Vec::new();
    for (module, used) in imports() {
        for other in used {
            let up = match (rank(top(&module)), rank(top(&other))) {
                (Some(mine), Some(theirs)) => theirs > mine,
                (None, Some(_)) => true,
                (_, None) => false,
            };
            if up {
                wrong.push(format!("{module} imports {other}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports of a higher layer:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let graph = imports();
    // A module with its submodules: `memory::user_data` holds `…::stats`.
    let mut all: BTreeSet<String> = BTreeSet::new();
    for module in graph.keys() {
        let parts: Vec<&str> = module.split("::").collect();
        for n in 1..=parts.len() {
            all.insert(parts[..n].join("::"));
        }
    }
    let uses = |a: &str, b: &str| {
        graph
            .iter()
            .filter(|(m, _)| within(m, a))
            .any(|(_, used)| used.iter().any(|u| within(u, b)))
    };
    let all: Vec<&String> = all.iter().collect();
    let mut mutual = Vec::new();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            if within(a, b) || within(b, a) {
                continue;
            }
            if uses(a, b) && uses(b, a) {
                mutual.push((a.to_string(), b.to_string()));
            }
        }
    }
    // Name the closest pair: `memory::people` and `memory::user_data`, not
    // also `memory` and `commands` because of them.
    let closest: Vec<String> = mutual
        .iter()
        .filter(|(a, b)| {
            !mutual
                .iter()
                .any(|(c, d)| (c, d) != (a, b) && within(c, a) && within(d, b))
        })
        .map(|(a, b)| format!("{a} and {b}"))
        .collect();
    assert!(
        closest.is_empty(),
        "modules importing each other:\n{}",
        closest.join("\n")
    );
}

#[test]
fn the_checks_see_an_import_in_a_group_and_a_nested_path() {
    let paths =
        crate_paths("use crate::memory::{ltm, owners::Owner};\nlet x = crate::store::fs::read();");
    assert_eq!(
        paths,
        [
            "memory::ltm",
            "memory::owners::Owner",
            "memory",
            "store::fs::read"
        ]
    );
}

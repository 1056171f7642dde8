//! The source tree stays readable without a map: no library or binary source file over
//! 900 lines (not counting its inline `#[cfg(test)]` module) and no function over 100
//! lines, but for move generation and the parsers of records and positions
//! ([`LONG_FUNCTIONS_ALLOWED`], at most 150). Read from the text as rustfmt writes it: a
//! function's body closes with a `}` at the indentation of its `fn` line.

use std::fs;
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 900;
const MAX_FN_LINES: usize = 100;

/// Functions that may run to 150 lines (file, function): move generation and the parsers
/// of records and positions, one case after another, read better whole.
const LONG_FUNCTIONS_ALLOWED: [(&str, &str); 5] = [
    ("crates/rules/src/position/movegen.rs", "generate_into"),
    ("crates/tai/src/movegen.rs", "piece_moves"),
    ("crates/rules/src/kifu.rs", "csa_record"),
    ("crates/rules/src/position/sfen.rs", "from_sfen"),
    ("crates/tai/src/position.rs", "from_sfen"),
];
const MAX_ALLOWED_FN_LINES: usize = 150;

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `src/` files of every crate: tests, benches and examples are not held to it.
fn sources() -> Vec<PathBuf> {
    let crates = shogi_testkit::repo_root().join("crates");
    let mut files = Vec::new();
    for krate in fs::read_dir(&crates)
        .expect("crates/ is readable")
        .flatten()
    {
        rust_files(&krate.path().join("src"), &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "found only {} source files", files.len());
    files
}

/// The lines before the file's inline test module (a `#[cfg(test)]` at column 0).
fn without_tests(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .collect()
}

/// `(name, first line, length)` of each function with a body.
fn functions(lines: &[&str]) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let Some(at) = trimmed.find("fn ") else {
            continue;
        };
        let prefix = &trimmed[..at];
        let qualifiers = prefix
            .split_whitespace()
            .all(|w| w.starts_with("pub") || ["const", "async", "unsafe"].contains(&w));
        if !qualifiers || trimmed.starts_with("//") {
            continue;
        }
        let name: String = trimmed[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The signature ends at `{` (a body) or `;` (a declaration in a trait).
        let Some(open) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with('}') || t.ends_with(';')
        }) else {
            continue;
        };
        let t = lines[open].trim_end();
        if t.ends_with(';')
            || (t.ends_with('}') && t.matches('{').count() == t.matches('}').count())
        {
            continue;
        }
        let close = format!("{indent}}}");
        let end = (open + 1..lines.len())
            .find(|&j| lines[j].trim_end() == close)
            .unwrap_or_else(|| panic!("no closing brace for fn {name} at line {}", i + 1));
        found.push((name, i + 1, end - i + 1));
    }
    found
}

#[test]
fn function_reader_measures_bodies_and_skips_declarations() {
    let text = "pub trait T {\n    fn decl(&self) -> u8;\n    fn with_default(&self) {\n        let x = 1;\n    }\n}\n\npub(crate) fn free(\n    a: u8,\n) -> u8 {\n    a\n}\nfn one() {}\n";
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        functions(&lines),
        vec![
            ("with_default".to_string(), 3, 3),
            ("free".to_string(), 8, 5),
        ]
    );
}

#[test]
fn no_source_file_or_function_is_too_long_to_read() {
    let mut problems = Vec::new();
    for path in sources() {
        let text = fs::read_to_string(&path).expect("source is UTF-8");
        let lines = without_tests(&text);
        let shown = path
            .strip_prefix(shogi_testkit::repo_root())
            .unwrap_or(&path)
            .display()
            .to_string();
        if lines.len() > MAX_FILE_LINES {
            problems.push(format!(
                "{shown}: {} lines without its tests (at most {MAX_FILE_LINES}): split it by subject",
                lines.len()
            ));
        }
        for (name, line, len) in functions(&lines) {
            let allowed = LONG_FUNCTIONS_ALLOWED.contains(&(shown.as_str(), name.as_str()));
            let most = if allowed {
                MAX_ALLOWED_FN_LINES
            } else {
                MAX_FN_LINES
            };
            if len > most {
                problems.push(format!(
                    "{shown}:{line}: fn {name} is {len} lines (at most {most})"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The workspace crates (`shogi-*`) among the `[dependencies]` of `manifest` (a
/// Cargo.toml's text), without their prefix: dev-dependencies are not arrows.
fn crate_dependencies(manifest: &str) -> Vec<String> {
    let mut deps: Vec<String> = manifest
        .lines()
        .skip_while(|l| l.trim() != "[dependencies]")
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.strip_prefix("shogi-"))
        .filter_map(|l| l.split(['.', ' ', '=']).next())
        .map(str::to_string)
        .collect();
    deps.sort();
    deps
}

/// docs/ARCHITECTURE.md's table of crates states what each crate depends on, and the
/// arrows point down the table (a crate uses only crates listed above it): the table is
/// read as the code's map, so it must be the code's.
#[test]
fn the_crate_table_states_every_crates_dependencies_and_they_point_down() {
    let root = shogi_testkit::repo_root();
    let doc = fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let rows: Vec<(String, String, String)> = doc
        .lines()
        .filter(|l| l.starts_with("| shogi-"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells[1].trim_start_matches("shogi-").to_string();
            let dir = cells[2].to_string();
            (name, dir, cells[cells.len() - 2].to_string())
        })
        .collect();
    assert!(rows.len() >= 15, "only {} crate rows", rows.len());
    let mut listed = std::collections::HashSet::new();
    for (name, dir, stated) in &rows {
        let manifest = fs::read_to_string(root.join(dir).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{dir}/Cargo.toml: {e}"));
        let deps = crate_dependencies(&manifest);
        for dep in &deps {
            assert!(
                listed.contains(dep.as_str()),
                "shogi-{name} depends on shogi-{dep}, which is not above it in the table"
            );
        }
        if stated != "all" {
            let mut claimed: Vec<String> = stated
                .split(',')
                .map(|d| d.trim().trim_matches('*'))
                .filter(|d| rows.iter().any(|(n, _, _)| n == d))
                .map(str::to_string)
                .collect();
            claimed.sort();
            assert_eq!(
                claimed, deps,
                "docs/ARCHITECTURE.md: shogi-{name}'s \"depends on\" cell against its Cargo.toml"
            );
        }
        listed.insert(name.as_str());
    }
    // Every crate directory has its row.
    for krate in fs::read_dir(root.join("crates")).unwrap().flatten() {
        let dir = format!("crates/{}", krate.file_name().to_string_lossy());
        assert!(
            rows.iter().any(|(_, d, _)| *d == dir),
            "{dir} has no row in docs/ARCHITECTURE.md's table of crates"
        );
    }
}

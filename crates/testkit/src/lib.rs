//! What the test suites share (a dev-dependency only): where the repository is, the
//! one Python the tests run their oracles and USI doubles with (the venv that
//! `scripts/bootstrap.sh` creates, never a system `python3`), an SFEN helper and a dependency-free random source.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// `$SHOGI_ZERO_PYTHON` when set and not empty, else `<repo>/.venv/bin/python`; not
/// checked.
pub fn python_path() -> PathBuf {
    match std::env::var_os("SHOGI_ZERO_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => repo_root().join(".venv/bin/python"),
    }
}

/// [`python_path`], which must exist: a test that needs it fails, naming the fix, rather
/// than passing without having run.
pub fn python() -> PathBuf {
    let p = python_path();
    assert!(
        p.exists(),
        "no python at {} ($SHOGI_ZERO_PYTHON, else <repo>/.venv/bin/python): run \
         scripts/bootstrap.sh (make test does), which creates the venv with torch and the \
         test oracles",
        p.display()
    );
    p
}

/// Runs `program` with `args` and returns its output; the test fails, showing the
/// command, its stdout and its stderr, when it cannot start or exits unsuccessfully.
pub fn run_ok<S: AsRef<OsStr>>(program: impl AsRef<OsStr>, args: &[S]) -> Output {
    let program = program.as_ref();
    let shown: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    let out = Command::new(program)
        .args(&shown)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program:?}: {e}"));
    assert!(
        out.status.success(),
        "{program:?} {shown:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Reverses every rank of an SFEN board (the left-right mirror image); the side to
/// move, hands and move number are kept.
pub fn mirror_sfen(sfen: &str) -> String {
    let mut parts = sfen.split(' ');
    let board = parts.next().unwrap();
    let ranks: Vec<String> = board
        .split('/')
        .map(|rank| {
            let mut cells: Vec<String> = Vec::new();
            let mut promoted = false;
            for ch in rank.chars() {
                if ch == '+' {
                    promoted = true;
                } else if let Some(d) = ch.to_digit(10) {
                    cells.extend((0..d).map(|_| String::new()));
                } else {
                    cells.push(if promoted {
                        format!("+{ch}")
                    } else {
                        ch.to_string()
                    });
                    promoted = false;
                }
            }
            cells.reverse();
            let mut out = String::new();
            let mut empty = 0;
            for c in cells {
                if c.is_empty() {
                    empty += 1;
                } else {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push_str(&c);
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            out
        })
        .collect();
    let rest: Vec<&str> = parts.collect();
    format!("{} {}", ranks.join("/"), rest.join(" "))
}

/// The next state of a xorshift64 generator (`state` must not be 0): reproducible random
/// choices for playouts and test inputs without a `rand` dependency.
pub fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// One of `items` chosen by the next [`xorshift`] state (`items` must not be empty):
/// the random move of a playout.
pub fn pick<T: Copy>(state: &mut u64, items: &[T]) -> T {
    items[(xorshift(state) % items.len() as u64) as usize]
}

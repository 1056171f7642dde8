//! What the test suites share (a dev-dependency only): where the repository is, and the
//! one Python the tests run their oracles and USI doubles with, the venv that
//! `scripts/bootstrap.sh` creates, never a system `python3`.

use std::path::{Path, PathBuf};

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

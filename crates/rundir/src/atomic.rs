//! Publication by rename: every file or directory a reader may see while it is being
//! written (checkpoints, replay chunks, the config snapshot, `BEST`, plots, exports) is
//! written under one temporary name beside its destination and renamed into place, which
//! is atomic on one filesystem, so a reader sees the old content or the new, never half.
//!
//! The one temporary scheme is `.NAME.tmp-PID` ([`temporary_path`]): dot-named, so
//! directory listings that look for `step-*` or `*.szgr` skip it, and tagged with the
//! writer's process id, so two processes never write the same temporary.
//! [`is_temporary_name`] recognises it for the clean-up of a killed writer's leftovers.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Marks a temporary name: `.NAME.tmp-PID`.
const TEMPORARY_TAG: &str = ".tmp-";

/// The temporary path `dest` is written under before [`publish`] renames it into place:
/// `.NAME.tmp-PID` in the same directory (a rename across filesystems is not atomic).
pub fn temporary_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = dest.parent().unwrap_or(Path::new(""));
    dir.join(format!(".{name}{TEMPORARY_TAG}{}", std::process::id()))
}

/// Whether `name` (a file name, not a path) is a temporary of [`temporary_path`]'s
/// scheme, from this process or any other.
pub fn is_temporary_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    match rest.rsplit_once(TEMPORARY_TAG) {
        Some((stem, pid)) => {
            !stem.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Publishes `dest` atomically: `fill` writes a file or a whole directory at the
/// temporary path it is given, then the temporary is renamed to `dest` and the parent
/// directory is synced. A directory already at `dest` is replaced (removed just before
/// the rename: a reader may see it absent, never mixed); a file is replaced by the
/// rename itself. If `fill` fails, its temporary is removed and its error returned.
pub fn publish<T, E>(dest: &Path, fill: impl FnOnce(&Path) -> Result<T, E>) -> Result<T, E>
where
    E: From<io::Error>,
{
    let tmp = temporary_path(dest);
    remove_any(&tmp).map_err(context("removing the stale temporary", &tmp))?;
    let value = match fill(&tmp) {
        Ok(value) => value,
        Err(e) => {
            let _ = remove_any(&tmp);
            return Err(e);
        }
    };
    if tmp.is_dir() && dest.is_dir() {
        fs::remove_dir_all(dest).map_err(context("removing the old", dest))?;
    }
    fs::rename(&tmp, dest).map_err(context("renaming into place", dest))?;
    if let Some(dir) = dest.parent() {
        // Best effort: persist the rename itself (not every filesystem syncs a directory).
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(value)
}

/// Writes `bytes` to `path` atomically ([`publish`]), synced to disk before the rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    publish(path, |tmp| {
        let mut file = File::create(tmp).map_err(context("creating", tmp))?;
        file.write_all(bytes).map_err(context("writing", tmp))?;
        file.sync_all().map_err(context("syncing", tmp))
    })
}

/// Names the operation and the path in an I/O error, keeping its kind.
fn context(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> io::Error + use<> {
    let path = path.to_path_buf();
    move |e| io::Error::new(e.kind(), format!("{op} {}: {e}", path.display()))
}

/// Removes a file or a directory tree at `path`; absent is fine.
fn remove_any(path: &Path) -> io::Result<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The entries directly inside `dir` with a UTF-8 name, as (name, path); a missing
/// `dir` has none.
pub(crate) fn entries_of(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        if let Ok(name) = entry.file_name().into_string() {
            out.push((name, entry.path()));
        }
    }
    Ok(out)
}

/// Removes every temporary ([`is_temporary_name`]) directly inside `dir` and returns
/// their paths. Only for an owner that knows no writer is working in `dir`: a temporary
/// is otherwise a write in progress. A missing `dir` has none.
pub fn remove_temporaries(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for (name, path) in entries_of(dir)? {
        if is_temporary_name(&name) {
            remove_any(&path)?;
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_name_is_recognised_and_nothing_else_is() {
        let tmp = temporary_path(Path::new("/run/accepted/step-00000100"));
        assert_eq!(tmp.parent(), Some(Path::new("/run/accepted")));
        let name = tmp.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, format!(".step-00000100.tmp-{}", std::process::id()));
        assert!(is_temporary_name(name));
        assert!(is_temporary_name(".BEST.tmp-12"));
        for not in [
            "step-00000100",
            "chunk.szgr",
            ".hidden",
            ".tmp-12",
            ".x.tmp-",
            ".x.tmp-12a",
            "x.tmp-12",
        ] {
            assert!(!is_temporary_name(not), "{not}");
        }
    }

    #[test]
    fn write_atomic_replaces_a_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("BEST");
        write_atomic(&path, b"accepted/step-00000000\n").unwrap();
        write_atomic(&path, b"accepted/step-00000100\n").unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "accepted/step-00000100\n"
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn publish_replaces_a_directory_whole_and_a_failed_fill_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("step-00000100");
        let fill = |files: &'static [&'static str]| {
            move |tmp: &Path| -> io::Result<()> {
                fs::create_dir(tmp)?;
                for f in files {
                    fs::write(tmp.join(f), f)?;
                }
                Ok(())
            }
        };
        publish(&dest, fill(&["a", "b"])).unwrap();
        publish(&dest, fill(&["c"])).unwrap();
        let mut names: Vec<_> = fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["c"]);

        let err = publish(&dir.path().join("other"), |tmp: &Path| -> io::Result<()> {
            fs::create_dir(tmp)?;
            fs::write(tmp.join("half"), b"")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, ["step-00000100"]);
    }

    #[test]
    fn remove_temporaries_clears_a_killed_writers_leftovers_only() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".step-00000200.tmp-99")).unwrap();
        fs::write(dir.path().join(".chunk.szgr.tmp-7"), b"half").unwrap();
        fs::create_dir(dir.path().join("step-00000100")).unwrap();
        fs::write(dir.path().join("chunk.szgr"), b"whole").unwrap();
        let removed = remove_temporaries(dir.path()).unwrap();
        assert_eq!(removed.len(), 2);
        let mut left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["chunk.szgr", "step-00000100"]);
        assert!(
            remove_temporaries(&dir.path().join("absent"))
                .unwrap()
                .is_empty()
        );
    }
}

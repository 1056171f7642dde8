//! The run directory: the contract through which self-play, the learner and the gate
//! coordinate, in one process or on several machines with shared storage.
//!
//! ```text
//! <run>/
//!   config.toml        resolved config snapshot (tmp + rename; rewritten with the --set
//!                      overrides whenever the learner's process starts or resumes)
//!   candidates/        step-NNNNNNNN/  learner exports (dir renamed into place when complete)
//!   accepted/          step-NNNNNNNN/  promoted networks; the best is the highest step
//!                      (step-NNNNNNNN.superseded-N/: one damaged on disk, replaced by
//!                      the same step trained again from an older network)
//!   rejected/          step-NNNNNNNN/  with gate.json: the match that rejected it, why
//!                      it was set aside unplayed (`refused`: it does not load), or
//!                      the newer candidate gated instead (`passed_over_for`)
//!   BEST               `accepted/step-NNNNNNNN`: the best network's path relative to
//!                      the run (tmp + rename; written with the initial network)
//!   replay/            self-play record chunks (*.szgr, tmp + rename)
//!   games/             gate matches: every game as USI/CSA/KIF plus summary.json
//!                      (self-play games are in replay/; `shogi-zero export` converts)
//!   tensorboard/       learner scalars
//!   ratings.csv|json|png  Elo of every gated candidate against the first network
//!   train.log          tracing log
//!   run-seconds        the seconds the run has run, its invocations summed (`RunClock`)
//!   learner.lock       held (flock) by the one learner working on the run
//!   gate.lock          held (flock) by the one gate working on the run
//! ```
//!
//! Every writer publishes by `rename`, which is atomic on one filesystem, so a reader
//! never sees a half-written checkpoint or chunk. Promotion is the rename of a
//! candidate directory into `accepted/`; `BEST` is rewritten after it, and readers that
//! need certainty take the highest step in `accepted/` (what [`RunDir::best`] does).
//!
//! Self-play processes may be many; the learner and the gate must be one each. Each
//! takes [`RunDir::lock_role`], an advisory lock the operating system releases when the
//! process ends, however it ends, so a killed run never leaves a stale lock behind. (On
//! network filesystems without `flock` support the lock may not exclude other machines.)

use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use crate::atomic::{entries_of, write_atomic};

/// A complete checkpoint directory holds this manifest (written last, so its presence
/// means the weights it describes are there).
pub const MANIFEST_FILE: &str = "manifest.json";

/// Errors taking a role's lock on a run directory.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// Another process holds the role's lock.
    #[error(
        "another {role} is working on this run ({} is locked): a run has one {role} at a time",
        lock.display()
    )]
    Busy {
        /// `learner` or `gate`.
        role: &'static str,
        /// The lock file.
        lock: PathBuf,
    },
    /// Filesystem failure.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Prefix of checkpoint directory names: `step-` followed by the zero-padded step.
pub const STEP_PREFIX: &str = "step-";

/// Paths of one run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

/// A role's hold on a run directory ([`RunDir::lock_role`]); dropping it releases.
#[derive(Debug)]
pub struct RoleLock {
    _file: File,
}

/// The directory name of the checkpoint taken after `step` learner steps.
pub fn checkpoint_name(step: u64) -> String {
    format!("{STEP_PREFIX}{step:08}")
}

/// The step encoded in a checkpoint directory name, if it is one.
pub fn step_of(name: &str) -> Option<u64> {
    name.strip_prefix(STEP_PREFIX)?.parse().ok()
}

/// The checkpoint a user means by `path`: a checkpoint directory (or a file inside
/// one) is itself; a run directory stands for the network its `BEST` names. Anything
/// else is returned as given, for the loader to report what it lacks.
pub fn network_dir(path: &Path) -> io::Result<PathBuf> {
    let dir = if path.is_file() {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        path.to_path_buf()
    };
    if dir.join(MANIFEST_FILE).is_file() {
        return Ok(dir);
    }
    Ok(RunDir::new(&dir).best_pointed()?.unwrap_or(dir))
}

/// The run directory a network belongs to, if it is in one: `path` itself when it is a
/// run (it holds a `config.toml`), or the run around a checkpoint of its `accepted/`,
/// `candidates/` or `rejected/` (a file inside the checkpoint counts too). A checkpoint
/// copied out of its run belongs to none.
pub fn run_of_network(path: &Path) -> Option<PathBuf> {
    let dir = if path.is_file() { path.parent()? } else { path };
    if RunDir::new(dir).config_file().is_file() {
        return Some(dir.to_path_buf());
    }
    if !dir.join(MANIFEST_FILE).is_file() {
        return None;
    }
    let holder = dir.parent()?;
    let run = RunDir::new(holder.parent()?);
    let holds_checkpoints =
        [run.accepted(), run.candidates(), run.rejected()].contains(&holder.to_path_buf());
    (holds_checkpoints && run.config_file().is_file()).then(|| run.root().to_path_buf())
}

impl RunDir {
    /// The run directory at `root` (nothing is created).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunDir { root: root.into() }
    }

    /// Creates the directory and all its subdirectories.
    pub fn create(&self) -> io::Result<()> {
        for dir in [
            self.root.clone(),
            self.candidates(),
            self.accepted(),
            self.rejected(),
            self.replay(),
            self.games(),
            self.tensorboard(),
        ] {
            fs::create_dir_all(&dir)?;
        }
        Ok(())
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Takes the run's lock for `role` (`learner` or `gate`, one process each), held
    /// until the returned guard drops. Fails at once, naming the role and the lock file,
    /// when another process holds it.
    pub fn lock_role(&self, role: &'static str) -> Result<RoleLock, RunDirError> {
        let path = self.root.join(format!("{role}.lock"));
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| RunDirError::Io {
                op: "opening lock file",
                path: path.clone(),
                source,
            })?;
        match file.try_lock() {
            Ok(()) => Ok(RoleLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(RunDirError::Busy { role, lock: path }),
            Err(TryLockError::Error(source)) => Err(RunDirError::Io {
                op: "locking",
                path,
                source,
            }),
        }
    }
    /// `config.toml`: the resolved config snapshot.
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// `candidates/`.
    pub fn candidates(&self) -> PathBuf {
        self.root.join("candidates")
    }
    /// `accepted/`.
    pub fn accepted(&self) -> PathBuf {
        self.root.join("accepted")
    }
    /// `rejected/`.
    pub fn rejected(&self) -> PathBuf {
        self.root.join("rejected")
    }
    /// `replay/`.
    pub fn replay(&self) -> PathBuf {
        self.root.join("replay")
    }
    /// `games/`.
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    /// `tensorboard/`.
    pub fn tensorboard(&self) -> PathBuf {
        self.root.join("tensorboard")
    }
    /// `ratings.csv`.
    pub fn ratings_csv(&self) -> PathBuf {
        self.root.join("ratings.csv")
    }
    /// `ratings.json`.
    pub fn ratings_json(&self) -> PathBuf {
        self.root.join("ratings.json")
    }
    /// `ratings.png`.
    pub fn ratings_png(&self) -> PathBuf {
        self.root.join("ratings.png")
    }
    /// `train.log`.
    pub fn log_file(&self) -> PathBuf {
        self.root.join("train.log")
    }
    /// `BEST`: the best checkpoint's name.
    pub fn best_pointer(&self) -> PathBuf {
        self.root.join("BEST")
    }

    /// The checkpoint `BEST` names, if the file is there: `None` when it is absent, an
    /// error when it cannot be read or does not name a path inside the run.
    pub fn best_pointed(&self) -> io::Result<Option<PathBuf>> {
        let pointer = self.best_pointer();
        let text = match fs::read_to_string(&pointer) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let rel = Path::new(text.trim());
        let inside = !rel.as_os_str().is_empty()
            && rel
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} should name a checkpoint inside the run (like accepted/step-00000100), \
                     not {:?}",
                    pointer.display(),
                    text.trim()
                ),
            ));
        }
        Ok(Some(self.root.join(rel)))
    }

    /// Complete checkpoints in `dir` (a `manifest.json` present, not a dot-named
    /// temporary), sorted by step.
    pub fn checkpoints_in(dir: &Path) -> io::Result<Vec<(u64, PathBuf)>> {
        let mut found = Vec::new();
        for (name, path) in entries_of(dir)? {
            if let Some(step) = step_of(&name)
                && path.join(MANIFEST_FILE).is_file()
            {
                found.push((step, path));
            }
        }
        found.sort();
        Ok(found)
    }

    /// Every network of the run (candidates, accepted and rejected), the newest step
    /// first: where a learner's chain goes on from, gated or not.
    pub fn networks_newest_first(&self) -> io::Result<Vec<(u64, PathBuf)>> {
        let mut all = Vec::new();
        for dir in [self.candidates(), self.accepted(), self.rejected()] {
            all.extend(Self::checkpoints_in(&dir)?);
        }
        all.sort();
        all.reverse();
        Ok(all)
    }

    /// Candidates waiting for the gate, oldest first.
    pub fn pending_candidates(&self) -> io::Result<Vec<(u64, PathBuf)>> {
        Self::checkpoints_in(&self.candidates())
    }

    /// The best network: the highest-step checkpoint in `accepted/`.
    pub fn best(&self) -> io::Result<Option<(u64, PathBuf)>> {
        Ok(Self::checkpoints_in(&self.accepted())?.pop())
    }

    /// All accepted checkpoints, oldest first.
    pub fn accepted_checkpoints(&self) -> io::Result<Vec<(u64, PathBuf)>> {
        Self::checkpoints_in(&self.accepted())
    }

    /// The furthest learner step the run exported a network at: the highest step of its
    /// accepted, rejected and waiting candidates (0 for a run with none).
    pub fn exported_through(&self) -> io::Result<u64> {
        let mut furthest = 0;
        for dir in [self.accepted(), self.rejected(), self.candidates()] {
            if let Some((step, _)) = Self::checkpoints_in(&dir)?.pop() {
                furthest = furthest.max(step);
            }
        }
        Ok(furthest)
    }

    /// Promotes `candidate` (a directory in `candidates/`): writes `report` as its
    /// `gate.json`, renames it into `accepted/` and updates `BEST`. Returns the new path.
    pub fn promote(&self, candidate: &Path, report: &[u8]) -> io::Result<PathBuf> {
        self.move_checkpoint(candidate, &self.accepted(), report)
            .and_then(|dest| {
                let name = dest
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                self.write_best_pointer(&name)?;
                Ok(dest)
            })
    }

    /// Points `BEST` at `accepted/<name>` (tmp + rename).
    pub fn write_best_pointer(&self, name: &str) -> io::Result<()> {
        write_atomic(
            &self.best_pointer(),
            format!("accepted/{name}\n").as_bytes(),
        )
    }

    /// Rejects `candidate`: writes `report` as its `gate.json` and renames it into
    /// `rejected/` (kept, with the result). Returns the new path.
    pub fn reject(&self, candidate: &Path, report: &[u8]) -> io::Result<PathBuf> {
        self.move_checkpoint(candidate, &self.rejected(), report)
    }

    fn move_checkpoint(&self, candidate: &Path, to: &Path, report: &[u8]) -> io::Result<PathBuf> {
        let name = candidate.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a checkpoint directory", candidate.display()),
            )
        })?;
        fs::create_dir_all(to)?;
        write_atomic(&candidate.join("gate.json"), report)?;
        let dest = to.join(name);
        if dest.exists() {
            // A network of the same step is already there: one damaged on disk that the
            // learner passed over, resuming from an older one, and has now trained
            // again. It is kept beside, under a name that is no checkpoint's.
            fs::rename(&dest, superseded_path(&dest))?;
        }
        fs::rename(candidate, &dest)?;
        Ok(dest)
    }
}

/// `<dest>.superseded-<n>`, the first such name free.
fn superseded_path(dest: &Path) -> PathBuf {
    let mut n = 1;
    loop {
        let mut name = dest.as_os_str().to_owned();
        name.push(format!(".superseded-{n}"));
        let path = PathBuf::from(name);
        if !path.exists() {
            return path;
        }
        n += 1;
    }
}

/// The first network of `networks` (newest first, as `(step, directory)`) that `load`
/// accepts, with the ones passed over before it and why: a network damaged on disk
/// (truncated, non-finite, another layout) must not stop a role that has an older one
/// to go on with. `Err` holds every network tried and why, when none loads.
#[allow(clippy::type_complexity)]
pub fn newest_that_loads<T, E: std::fmt::Display>(
    networks: impl IntoIterator<Item = (u64, PathBuf)>,
    mut load: impl FnMut(&Path) -> Result<T, E>,
) -> Result<NewestLoaded<T>, Vec<(PathBuf, String)>> {
    let mut passed_over = Vec::new();
    for (step, dir) in networks {
        match load(&dir) {
            Ok(loaded) => {
                return Ok(NewestLoaded {
                    step,
                    dir,
                    loaded,
                    passed_over,
                });
            }
            Err(e) => passed_over.push((dir, e.to_string())),
        }
    }
    Err(passed_over)
}

/// What [`newest_that_loads`] found.
#[derive(Debug)]
pub struct NewestLoaded<T> {
    pub step: u64,
    pub dir: PathBuf,
    pub loaded: T,
    /// Newer networks that did not load, newest first, each with why.
    pub passed_over: Vec<(PathBuf, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_checkpoint(dir: &Path, step: u64) -> PathBuf {
        let path = dir.join(checkpoint_name(step));
        fs::create_dir_all(&path).unwrap();
        fs::write(path.join("manifest.json"), b"{}").unwrap();
        path
    }

    #[test]
    fn a_network_knows_its_run() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path().join("run"));
        run.create().unwrap();
        fs::write(run.config_file(), b"[run]\n").unwrap();
        let accepted = fake_checkpoint(&run.accepted(), 0);
        let candidate = fake_checkpoint(&run.candidates(), 100);
        let root = Some(run.root().to_path_buf());
        assert_eq!(run_of_network(run.root()), root);
        assert_eq!(run_of_network(&accepted), root);
        assert_eq!(run_of_network(&candidate), root);
        assert_eq!(run_of_network(&accepted.join("manifest.json")), root);
        // A checkpoint copied out of its run, or kept elsewhere in it, belongs to none.
        let loose = fake_checkpoint(tmp.path(), 5);
        assert_eq!(run_of_network(&loose), None);
        let stray = fake_checkpoint(&run.root().join("proof"), 7);
        assert_eq!(run_of_network(&stray), None);
        // Nor does a run's checkpoint once the run's config is gone.
        fs::remove_file(run.config_file()).unwrap();
        assert_eq!(run_of_network(&accepted), None);
        assert_eq!(run_of_network(&tmp.path().join("missing")), None);
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(checkpoint_name(1200), "step-00001200");
        assert_eq!(step_of("step-00001200"), Some(1200));
        assert_eq!(step_of(".tmp-step-1"), None);
    }

    #[test]
    fn promote_and_reject_move_candidates() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path().join("run"));
        run.create().unwrap();
        assert!(run.best().unwrap().is_none());
        let initial = fake_checkpoint(&run.accepted(), 0);
        assert_eq!(run.best().unwrap().unwrap().1, initial);
        let c1 = fake_checkpoint(&run.candidates(), 100);
        let c2 = fake_checkpoint(&run.candidates(), 200);
        // An incomplete export (no manifest yet) is not a candidate.
        fs::create_dir_all(run.candidates().join(checkpoint_name(300))).unwrap();
        assert_eq!(run.pending_candidates().unwrap().len(), 2);
        let rejected = run.reject(&c1, b"{\"score\":0.4}").unwrap();
        assert!(rejected.join("gate.json").is_file());
        let accepted = run.promote(&c2, b"{\"score\":0.6}").unwrap();
        assert_eq!(run.best().unwrap().unwrap(), (200, accepted));
        assert_eq!(
            fs::read_to_string(run.best_pointer()).unwrap(),
            "accepted/step-00000200\n"
        );
        assert!(run.pending_candidates().unwrap().is_empty());
        assert_eq!(run.exported_through().unwrap(), 200);
        // A rejected last candidate still counts as a step the learner reached.
        let c3 = fake_checkpoint(&run.candidates(), 400);
        assert_eq!(run.exported_through().unwrap(), 400, "waiting");
        run.reject(&c3, b"{}").unwrap();
        assert_eq!(run.exported_through().unwrap(), 400, "rejected");
    }

    #[test]
    fn a_run_stands_for_the_network_best_names() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path().join("run"));
        run.create().unwrap();
        let first = fake_checkpoint(&run.accepted(), 0);
        // No BEST yet: the path is returned as given.
        assert_eq!(network_dir(run.root()).unwrap(), run.root());
        run.write_best_pointer(&checkpoint_name(0)).unwrap();
        assert_eq!(network_dir(run.root()).unwrap(), first);
        // A checkpoint, or a file in one, is itself.
        assert_eq!(network_dir(&first).unwrap(), first);
        assert_eq!(network_dir(&first.join(MANIFEST_FILE)).unwrap(), first);
        // A BEST that points outside the run is refused with its content named.
        for bad in ["../elsewhere", "/etc", ""] {
            fs::write(run.best_pointer(), bad).unwrap();
            let err = network_dir(run.root()).unwrap_err().to_string();
            assert!(err.contains("BEST should name a checkpoint"), "{err}");
        }
    }

    #[test]
    fn a_role_lock_excludes_a_second_holder_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path());
        let learner = run.lock_role("learner").unwrap();
        // Another role is independent.
        let gate = run.lock_role("gate").unwrap();
        match run.lock_role("learner") {
            Err(RunDirError::Busy { role, lock }) => {
                assert_eq!(role, "learner");
                assert_eq!(lock, tmp.path().join("learner.lock"));
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(learner);
        let _again = run.lock_role("learner").unwrap();
        drop(gate);
    }

    #[test]
    fn newest_that_loads_passes_over_damaged_networks() {
        let nets = vec![
            (300, PathBuf::from("c")),
            (200, PathBuf::from("b")),
            (100, PathBuf::from("a")),
        ];
        let found = newest_that_loads(nets.clone(), |dir| {
            if dir == Path::new("a") || dir == Path::new("b") {
                Ok(dir.to_path_buf())
            } else {
                Err("truncated")
            }
        })
        .unwrap();
        assert_eq!((found.step, found.dir.as_path()), (200, Path::new("b")));
        assert_eq!(
            found.passed_over,
            vec![(PathBuf::from("c"), "truncated".to_string())]
        );
        let none = newest_that_loads(nets, |_| Err::<(), _>("bad")).unwrap_err();
        assert_eq!(none.len(), 3);
        assert!(newest_that_loads(Vec::new(), |_| Ok::<_, String>(())).is_err());
    }

    #[test]
    fn promoting_over_a_network_of_the_same_step_keeps_the_old_one_beside() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path());
        run.create().unwrap();
        for round in 0..3 {
            let candidate = run.candidates().join(checkpoint_name(80));
            fs::create_dir_all(&candidate).unwrap();
            fs::write(candidate.join(MANIFEST_FILE), format!("{round}")).unwrap();
            let dest = run.promote(&candidate, b"{}").unwrap();
            assert_eq!(
                fs::read_to_string(dest.join(MANIFEST_FILE)).unwrap(),
                format!("{round}")
            );
        }
        let accepted = run.accepted();
        assert!(accepted.join("step-00000080.superseded-1").is_dir());
        assert!(accepted.join("step-00000080.superseded-2").is_dir());
        assert_eq!(
            run.accepted_checkpoints().unwrap().len(),
            1,
            "a superseded network is no checkpoint"
        );
    }
}

//! An import that can be killed at any point and run again: record files read one after
//! the other into replay chunks, the resume state beside the chunks (for each file, the
//! records already written), and what was skipped, said as it happens and kept in
//! `OUT/skipped.txt`. The reading and filtering is [`Importer`]'s; what the user sees (a
//! line, a progress bar for a large file) is the caller's, through [`ImportWatch`].

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde::{Deserialize, Serialize};

use crate::import::{ImportFilter, ImportStats, Importer, RecordFormat};
use crate::record::{ChunkWriter, RecordError, read_chunk_dir};

/// The resume state's file in the output directory.
pub const STATE_FILE: &str = "import-state.json";
/// What was skipped, one line each, in the output directory.
pub const SKIPPED_FILE: &str = "skipped.txt";
/// The chunks' file name prefix.
const CHUNK_PREFIX: &str = "import";
/// Files above this size get a progress report while they are read.
const LARGE_FILE: u64 = 64 << 20;

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportRunError {
    #[error("{path} is not an import state file ({source}); remove it to start the import over")]
    BadState {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing chunks into {dir}: {source}")]
    Chunks { dir: PathBuf, source: RecordError },
    #[error("none of the {0} record files could be read")]
    NothingRead(usize),
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ImportRunError {
    let path = path.to_path_buf();
    move |source| ImportRunError::Io {
        action,
        path,
        source,
    }
}

/// What the caller shows of an import.
pub trait ImportWatch {
    /// A line for the user: resuming, a file or record skipped, a file's count.
    fn say(&mut self, line: &str);
    /// A large file's reading begins: its label, its size, and the bytes read so far
    /// (counted as it goes).
    fn large_file_begins(&mut self, _label: &str, _size: u64, _bytes: Arc<AtomicU64>) {}
    /// The large file of the last `large_file_begins` is read.
    fn large_file_ends(&mut self) {}
    /// Whether every file's count is said, or (on a terminal) every hundredth and the last.
    fn every_file(&self) -> bool {
        true
    }
}

/// For each input file, the records already written into chunks (a resumed import skips
/// them), and the files done.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ImportState {
    done: BTreeMap<String, u64>,
    finished: BTreeMap<String, bool>,
}

fn load_state(out: &Path) -> Result<ImportState, ImportRunError> {
    let path = out.join(STATE_FILE);
    if !path.exists() {
        return Ok(ImportState::default());
    }
    let text = std::fs::read_to_string(&path).map_err(io_error("reading", &path))?;
    serde_json::from_str(&text).map_err(|source| ImportRunError::BadState { path, source })
}

fn save_state(out: &Path, state: &ImportState) -> Result<(), ImportRunError> {
    let path = out.join(STATE_FILE);
    let text = serde_json::to_string_pretty(state).expect("the state serialises");
    shogi_rundir::write_atomic(&path, text.as_bytes()).map_err(io_error("writing", &path))
}

/// What an import did: the importer's counts and the files it could not read.
#[derive(Debug)]
pub struct ImportSummary {
    pub stats: ImportStats,
    pub files_skipped: u64,
}

impl ImportSummary {
    /// One line: the counts, and the files skipped where there were any.
    pub fn summary(&self) -> String {
        let skipped = if self.files_skipped == 0 {
            String::new()
        } else {
            format!("; files skipped {} (unreadable)", self.files_skipped)
        };
        format!("{}{skipped}", self.stats.summary())
    }
}

/// Imports `files` into `out` (created if missing) under `filter`, `games_per_chunk`
/// games a chunk, from where an earlier import into `out` stopped. A file that cannot be
/// read is named and skipped (a rerun tries it again); a chunk that cannot be written
/// ends the import, and so does an import none of whose files could be read.
pub fn import_files(
    files: &[(PathBuf, RecordFormat)],
    out: &Path,
    filter: ImportFilter,
    games_per_chunk: usize,
    watch: &mut dyn ImportWatch,
) -> Result<ImportSummary, ImportRunError> {
    std::fs::create_dir_all(out).map_err(io_error("creating", out))?;
    let state = load_state(out)?;
    let keep_duplicates = !filter.drop_duplicates;
    let mut importer = Importer::new(filter);
    if !state.done.is_empty() && !keep_duplicates {
        // Resuming: the games already written stay known, so duplicates stay dropped.
        let (games, _) = read_chunk_dir(out).map_err(|source| ImportRunError::Chunks {
            dir: out.to_path_buf(),
            source,
        })?;
        for g in &games {
            importer.remember(g);
        }
        watch.say(&format!(
            "import: resuming in {} ({} games already there)",
            out.display(),
            games.len()
        ));
    }
    let writer = ChunkWriter::new(out, CHUNK_PREFIX, games_per_chunk).map_err(|source| {
        ImportRunError::Chunks {
            dir: out.to_path_buf(),
            source,
        }
    })?;
    let mut run = ImportRun {
        out,
        writer,
        skips: SkipReport::new(out),
        importer,
        state,
        total_files: files.len(),
        watch,
    };
    for (file_no, (path, format)) in files.iter().enumerate() {
        run.file(file_no, path, *format)?;
    }
    if run.skips.files == files.len() as u64 {
        return Err(ImportRunError::NothingRead(files.len()));
    }
    Ok(ImportSummary {
        stats: run.importer.stats,
        files_skipped: run.skips.files,
    })
}

/// An import in progress: where it writes, what it has read and skipped, and how far
/// each file has come (saved, so a rerun resumes).
struct ImportRun<'a> {
    out: &'a Path,
    writer: ChunkWriter,
    skips: SkipReport,
    importer: Importer,
    state: ImportState,
    total_files: usize,
    watch: &'a mut dyn ImportWatch,
}

impl ImportRun<'_> {
    fn chunk_error(&self, source: RecordError) -> ImportRunError {
        ImportRunError::Chunks {
            dir: self.out.to_path_buf(),
            source,
        }
    }

    /// Imports one record file (the `file_no`-th), from where an earlier run stopped in
    /// it.
    fn file(
        &mut self,
        file_no: usize,
        path: &Path,
        format: RecordFormat,
    ) -> Result<(), ImportRunError> {
        let key = path.display().to_string();
        if self.state.finished.get(&key).copied().unwrap_or(false) {
            return Ok(());
        }
        let skip = self.state.done.get(&key).copied().unwrap_or(0);
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let label = format!("[{}/{}] {}", file_no + 1, self.total_files, path.display());
        let large = size > LARGE_FILE;
        if large {
            let bytes = Arc::clone(&self.importer.bytes_read);
            self.watch.large_file_begins(&label, size, bytes);
        }
        let (read_before, kept_before) = (self.importer.stats.read, self.importer.stats.kept);
        let mut last_index = skip;
        let mut write_error = None;
        let (out, writer, state) = (self.out, &mut self.writer, &mut self.state);
        let result = self
            .importer
            .read_file(path, format, skip, &mut |game, next| {
                if write_error.is_some() {
                    return;
                }
                last_index = next;
                match writer.push(game) {
                    Ok(Some(_)) => {
                        state.done.insert(key.clone(), next);
                        if let Err(e) = save_state(out, state) {
                            write_error = Some(e);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        write_error = Some(ImportRunError::Chunks {
                            dir: out.to_path_buf(),
                            source: e,
                        })
                    }
                }
            });
        if large {
            self.watch.large_file_ends();
        }
        if let Some(e) = write_error {
            return Err(e);
        }
        let errors = self.importer.stats.take_new_errors();
        self.skips.records(errors, &mut *self.watch)?;
        let records = match result {
            Ok(records) => records,
            Err(e) => return self.skips.file(path, &e, &mut *self.watch),
        };
        let encoding = &self.importer.last_encoding;
        if encoding != "UTF-8" && encoding != "binary" {
            let line = format!("{label}: read as {encoding}");
            self.watch.say(&line);
        }
        // The file's games are all written once the pending chunk is.
        self.writer.flush().map_err(|e| self.chunk_error(e))?;
        self.state.done.insert(key.clone(), records.max(last_index));
        self.state.finished.insert(key, true);
        save_state(self.out, &self.state)?;
        let last = file_no + 1 == self.total_files;
        if self.watch.every_file() || last || file_no.is_multiple_of(100) {
            let stats = &self.importer.stats;
            self.watch.say(&format!(
                "{label}: kept {} of {} records",
                stats.kept - kept_before,
                stats.read - read_before
            ));
        }
        Ok(())
    }
}

/// What an import leaves out, said as it happens: the first [`SkipReport::SAID`] through
/// the watch, every one in [`SKIPPED_FILE`], so a long import that is stopped still says
/// what it skipped. A resumed import adds to the file only what it does not hold (a file
/// retried and skipped again is listed once).
struct SkipReport {
    path: PathBuf,
    file: Option<std::fs::File>,
    /// The lines the file held when the import began.
    listed: HashSet<String>,
    said: usize,
    /// Files that could not be read.
    files: u64,
}

impl SkipReport {
    const SAID: usize = 20;

    fn new(out: &Path) -> SkipReport {
        let path = out.join(SKIPPED_FILE);
        let listed = std::fs::read_to_string(&path)
            .map(|text| text.lines().map(str::to_string).collect())
            .unwrap_or_default();
        SkipReport {
            path,
            file: None,
            listed,
            said: 0,
            files: 0,
        }
    }

    fn say(&mut self, line: String, watch: &mut dyn ImportWatch) -> Result<(), ImportRunError> {
        if self.said < Self::SAID {
            watch.say(&format!("import: skipped: {line}"));
        } else if self.said == Self::SAID {
            watch.say(&format!(
                "import: more skipped: every one is in {}",
                self.path.display()
            ));
        }
        self.said += 1;
        if self.listed.contains(&line) {
            return Ok(());
        }
        if self.file.is_none() {
            let file = std::fs::File::options()
                .create(true)
                .append(true)
                .open(&self.path)
                .map_err(io_error("opening", &self.path))?;
            self.file = Some(file);
        }
        let file = self.file.as_mut().expect("opened above");
        writeln!(file, "{line}").map_err(io_error("writing", &self.path))
    }

    fn file(
        &mut self,
        path: &Path,
        why: &std::io::Error,
        watch: &mut dyn ImportWatch,
    ) -> Result<(), ImportRunError> {
        self.files += 1;
        self.say(format!("{}: the file: {why}", path.display()), watch)
    }

    fn records(
        &mut self,
        errors: Vec<String>,
        watch: &mut dyn ImportWatch,
    ) -> Result<(), ImportRunError> {
        errors.into_iter().try_for_each(|e| self.say(e, watch))
    }
}

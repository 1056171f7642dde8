//! `shogi-zero import`: game records people have (CSA and floodgate archives, KIF, KI2, USI
//! lines, dlshogi's hcpe and hcpe3) as replay chunks that `learn` trains on, filtered
//! by rating, length, ending and duplicates. Killed at any point, the same command
//! resumes where its last chunk ended.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use shogi_records::import::{
    IMPORT_GAMES_PER_CHUNK, ImportFilter, Importer, RecordFormat, record_files,
};
use shogi_records::record::{ChunkWriter, read_chunk_dir};

/// Arguments of `shogi-zero import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Record files, or directories searched for them (.csa, .kif, .kifu, .ki2, .ki2u, .usi, .sfen,
    /// .hcpe, .hcpe3).
    #[arg(required = true)]
    pub records: Vec<PathBuf>,
    /// The replay directory to write chunks into (created if missing; `learn --replay`
    /// reads it).
    #[arg(long)]
    pub out: PathBuf,
    /// Keep a game only if both players are rated at least this, where the record
    /// states ratings (floodgate's `'black_rate` comments).
    #[arg(long)]
    pub min_rating: Option<f64>,
    /// Keep a game only if it has at least this many moves.
    #[arg(long, default_value_t = ImportFilter::default().min_moves)]
    pub min_moves: usize,
    /// The endings kept, comma-separated: resign, mate, declaration, repetition,
    /// impasse, max-moves, draw, time-up, illegal, or all. Default: every ending but
    /// time-up and draw (a clock's or an organiser's result, not the board's).
    #[arg(long, default_value_t = ImportFilter::default_endings_list())]
    pub endings: String,
    /// Keep duplicate games (the same start and moves) instead of dropping them.
    #[arg(long)]
    pub keep_duplicates: bool,
    /// Games per chunk file.
    #[arg(long, default_value_t = IMPORT_GAMES_PER_CHUNK)]
    pub games_per_chunk: usize,
}

/// The resume state beside the chunks: for each input file, the records already
/// written into chunks (a resumed import skips them).
#[derive(Debug, Default, Serialize, Deserialize)]
struct ImportState {
    done: BTreeMap<String, u64>,
    finished: BTreeMap<String, bool>,
}

const STATE_FILE: &str = "import-state.json";
const CHUNK_PREFIX: &str = "import";

fn load_state(out: &Path) -> Result<ImportState> {
    let path = out.join(STATE_FILE);
    if !path.exists() {
        return Ok(ImportState::default());
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not an import state file; remove it to start the import over",
            path.display()
        )
    })
}

fn save_state(out: &Path, state: &ImportState) -> Result<()> {
    let path = out.join(STATE_FILE);
    let text = serde_json::to_string_pretty(state)?;
    shogi_rundir::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Runs the subcommand.
pub fn run(args: &ImportArgs) -> Result<()> {
    let endings = ImportFilter::parse_endings(&args.endings).map_err(anyhow::Error::msg)?;
    if endings.is_empty() {
        bail!("--endings names no ending: nothing would be kept");
    }
    let filter = ImportFilter {
        min_rating: args.min_rating,
        min_moves: args.min_moves,
        endings,
        drop_duplicates: !args.keep_duplicates,
    };
    let files = record_files(&args.records)?;
    if files.is_empty() {
        bail!(
            "no record files under {} (looked for {})",
            args.records
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            RecordFormat::EXTENSIONS
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let state = load_state(&args.out)?;
    let mut importer = Importer::new(filter);
    if !state.done.is_empty() && !args.keep_duplicates {
        // Resuming: the games already written stay known, so duplicates stay dropped.
        let (games, _) =
            read_chunk_dir(&args.out).with_context(|| format!("reading {}", args.out.display()))?;
        for g in &games {
            importer.remember(g);
        }
        eprintln!(
            "import: resuming in {} ({} games already there)",
            args.out.display(),
            games.len()
        );
    }
    let mut import = ImportRun {
        out: &args.out,
        writer: ChunkWriter::new(&args.out, CHUNK_PREFIX, args.games_per_chunk)?,
        skips: SkipReport::new(&args.out),
        importer,
        state,
        interactive: std::io::stderr().is_terminal(),
        total_files: files.len(),
    };
    let start = Instant::now();
    for (file_no, (path, format)) in files.iter().enumerate() {
        import.file(file_no, path, *format)?;
    }
    let ImportRun {
        importer,
        skips,
        total_files,
        ..
    } = import;
    let stats = &importer.stats;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "import: {}{} in {:.1} s ({:.0} records/s, {:.0} positions/s) into {}",
        stats.summary(),
        skips.summary(),
        secs,
        stats.read as f64 / secs.max(1e-9),
        stats.positions as f64 / secs.max(1e-9),
        args.out.display()
    );
    if skips.files == total_files as u64 {
        bail!("none of the {total_files} record files could be read");
    }
    Ok(())
}

/// An import in progress: where it writes, what it has read and skipped, and how far
/// each file has come (saved, so a rerun resumes).
struct ImportRun<'a> {
    out: &'a Path,
    writer: ChunkWriter,
    skips: SkipReport,
    importer: Importer,
    state: ImportState,
    interactive: bool,
    total_files: usize,
}

impl ImportRun<'_> {
    /// Imports one record file (the `file_no`-th), from where an earlier run stopped in
    /// it. A file that cannot be read is named and skipped (a rerun tries it again); a
    /// chunk that cannot be written ends the import.
    fn file(&mut self, file_no: usize, path: &Path, format: RecordFormat) -> Result<()> {
        let key = path.display().to_string();
        if self.state.finished.get(&key).copied().unwrap_or(false) {
            return Ok(());
        }
        let skip = self.state.done.get(&key).copied().unwrap_or(0);
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let bytes = std::sync::Arc::clone(&self.importer.bytes_read);
        // A progress line for large files, redrawn in place on a terminal, every 10 s
        // in a log.
        let label = format!("[{}/{}] {}", file_no + 1, self.total_files, path.display());
        let done_flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let progress = (size > 64 << 20)
            .then(|| progress_thread(label.clone(), size, bytes, self.interactive, &done_flag));
        let stats = &self.importer.stats;
        let (read_before, kept_before) = (stats.read, stats.kept);
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
                    Err(e) => write_error = Some(e.into()),
                }
            });
        done_flag.store(true, Ordering::Relaxed);
        if let Some(handle) = progress {
            let _ = handle.join();
            if self.interactive {
                eprintln!();
            }
        }
        if let Some(e) = write_error {
            return Err(e.context(format!("writing chunks into {}", self.out.display())));
        }
        self.skips.records(self.importer.stats.take_new_errors())?;
        let records = match result {
            Ok(records) => records,
            Err(e) => return self.skips.file(path, &e),
        };
        if self.importer.last_encoding != "UTF-8" && self.importer.last_encoding != "binary" {
            eprintln!("{label}: read as {}", self.importer.last_encoding);
        }
        // The file's games are all written once the pending chunk is.
        self.writer.flush()?;
        self.state.done.insert(key.clone(), records.max(last_index));
        self.state.finished.insert(key, true);
        save_state(self.out, &self.state)?;
        let last = file_no + 1 == self.total_files;
        if !self.interactive || last || file_no.is_multiple_of(100) {
            let stats = &self.importer.stats;
            eprintln!(
                "{label}: kept {} of {} records",
                stats.kept - kept_before,
                stats.read - read_before
            );
        }
        Ok(())
    }
}

/// A large file's progress line, redrawn in place on a terminal, every 10 s in a log,
/// until `done` is raised.
fn progress_thread(
    label: String,
    size: u64,
    bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    interactive: bool,
    done: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let done = std::sync::Arc::clone(done);
    std::thread::spawn(move || {
        let begun = Instant::now();
        let every = Duration::from_secs(if interactive { 1 } else { 10 });
        let mut last = begun;
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            if last.elapsed() < every {
                continue;
            }
            last = Instant::now();
            let b = bytes.load(Ordering::Relaxed);
            let rate = b as f64 / begun.elapsed().as_secs_f64().max(1e-3) / 1e6;
            let line = format!(
                "{label}: {:.1}% ({:.0} MB/s)",
                100.0 * b as f64 / size.max(1) as f64,
                rate
            );
            if interactive {
                eprint!("\r{line}   ");
            } else {
                eprintln!("{line}");
            }
        }
    })
}

/// What an import leaves out, said as it happens: the first [`SkipReport::ON_SCREEN`]
/// on stderr, every one in `OUT/skipped.txt`, so a long import that is stopped still
/// says what it skipped. A resumed import adds to the file only what it does not hold
/// (a file retried and skipped again is listed once).
struct SkipReport {
    path: PathBuf,
    file: Option<std::fs::File>,
    /// The lines `skipped.txt` held when the import began.
    listed: std::collections::HashSet<String>,
    said: usize,
    /// Files that could not be read.
    files: u64,
    /// Records that could not be read.
    records: u64,
}

impl SkipReport {
    const ON_SCREEN: usize = 20;

    fn new(out: &Path) -> SkipReport {
        let path = out.join("skipped.txt");
        let listed = std::fs::read_to_string(&path)
            .map(|text| text.lines().map(str::to_string).collect())
            .unwrap_or_default();
        SkipReport {
            path,
            file: None,
            listed,
            said: 0,
            files: 0,
            records: 0,
        }
    }

    fn say(&mut self, line: String) -> Result<()> {
        use std::io::Write;
        if self.said < Self::ON_SCREEN {
            eprintln!("import: skipped: {line}");
        } else if self.said == Self::ON_SCREEN {
            eprintln!(
                "import: more skipped: every one is in {}",
                self.path.display()
            );
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
                .with_context(|| format!("opening {}", self.path.display()))?;
            self.file = Some(file);
        }
        let file = self.file.as_mut().expect("opened above");
        writeln!(file, "{line}").with_context(|| format!("writing {}", self.path.display()))
    }

    fn file(&mut self, path: &Path, why: &std::io::Error) -> Result<()> {
        self.files += 1;
        let line = format!("{}: the file: {why}", path.display());
        self.say(line)
    }

    fn records(&mut self, errors: Vec<String>) -> Result<()> {
        for e in errors {
            self.records += 1;
            self.say(e)?;
        }
        Ok(())
    }

    fn summary(&self) -> String {
        if self.files == 0 {
            String::new()
        } else {
            format!("; files skipped {} (unreadable)", self.files)
        }
    }
}

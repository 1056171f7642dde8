//! `shogi-zero import`: game records people have (CSA and floodgate archives, KIF, KI2, USI
//! lines, dlshogi's hcpe and hcpe3) as replay chunks that `learn` trains on, filtered
//! by rating, length, ending and duplicates. Killed at any point, the same command
//! resumes where its last chunk ended.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use shogi_records::import::{IMPORT_GAMES_PER_CHUNK, ImportFilter, RecordFormat, record_files};
use shogi_records::import_run::{ImportWatch, import_files};

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
    let start = Instant::now();
    let mut watch = StderrWatch {
        interactive: std::io::stderr().is_terminal(),
        progress: None,
    };
    let summary = import_files(&files, &args.out, filter, args.games_per_chunk, &mut watch)?;
    let (stats, secs) = (&summary.stats, start.elapsed().as_secs_f64());
    println!(
        "import: {} in {:.1} s ({:.0} records/s, {:.0} positions/s) into {}",
        summary.summary(),
        secs,
        stats.read as f64 / secs.max(1e-9),
        stats.positions as f64 / secs.max(1e-9),
        args.out.display()
    );
    Ok(())
}

/// An import shown on stderr: its lines, and a large file's progress redrawn in place on
/// a terminal, a line every 10 s in a log.
struct StderrWatch {
    interactive: bool,
    /// The progress thread of the file being read, and its stop flag.
    progress: Option<(JoinHandle<()>, Arc<AtomicBool>)>,
}

impl ImportWatch for StderrWatch {
    fn say(&mut self, line: &str) {
        eprintln!("{line}");
    }

    fn large_file_begins(&mut self, label: &str, size: u64, bytes: Arc<AtomicU64>) {
        let done = Arc::new(AtomicBool::new(false));
        let thread = progress_thread(label.to_string(), size, bytes, self.interactive, &done);
        self.progress = Some((thread, done));
    }

    fn large_file_ends(&mut self) {
        if let Some((thread, done)) = self.progress.take() {
            done.store(true, Ordering::Relaxed);
            let _ = thread.join();
            if self.interactive {
                eprintln!();
            }
        }
    }

    fn every_file(&self) -> bool {
        !self.interactive
    }
}

/// A large file's progress line, redrawn in place on a terminal, every 10 s in a log,
/// until `done` is raised.
fn progress_thread(
    label: String,
    size: u64,
    bytes: Arc<AtomicU64>,
    interactive: bool,
    done: &Arc<AtomicBool>,
) -> JoinHandle<()> {
    let done = Arc::clone(done);
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

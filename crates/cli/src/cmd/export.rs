//! `shogi-zero export`: self-play replay chunks as files any viewer reads — the USI
//! `position sfen ... moves ...` line always, CSA and KIF for standard shogi — or as one
//! dlshogi `hcpe3` file that existing shogi trainers read. A long export shows how many
//! chunks it has read.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use shogi_records::hcpe3;
use shogi_records::record::{GameRecord, read_chunk, read_chunk_dir};
use shogi_registry::ArenaGame;
use shogi_registry::with_game_type;

use super::progress::Reporter;

/// Arguments of `shogi-zero export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A replay chunk (`*.szgr`) or a directory of them (a run's `replay/`).
    pub input: PathBuf,
    /// `files`: the directory to write `<chunk>-gNNN.usi|csa|kif` into (created if
    /// missing). `hcpe3`: the file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// `files` (USI, CSA, KIF per game) or `hcpe3` (dlshogi's training format, standard
    /// shogi only: start position, moves, root evaluations and visit counts).
    #[arg(long, value_enum, default_value_t = ExportFormat::Files)]
    pub format: ExportFormat,
    /// Export at most this many games (newest chunks are not preferred: file order).
    #[arg(long)]
    pub limit: Option<usize>,
}

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One `.usi` (and for shogi `.csa`, `.kif`) file per game.
    Files,
    /// One dlshogi `hcpe3` file.
    Hcpe3,
}

/// Runs the subcommand.
pub fn run(args: &ExportArgs) -> Result<()> {
    let mut chunks: Vec<PathBuf> = if args.input.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&args.input)
            .with_context(|| format!("reading {}", args.input.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "szgr"))
            .collect();
        if v.is_empty() {
            // Say why rather than export nothing.
            let (_, errors) = read_chunk_dir(&args.input)?;
            bail!(
                "{} holds no replay chunks (*.szgr){}",
                args.input.display(),
                if errors.is_empty() {
                    ""
                } else {
                    "; some files are damaged"
                }
            );
        }
        v.sort();
        v
    } else if args.input.is_file() {
        vec![args.input.clone()]
    } else {
        bail!("{} does not exist", args.input.display());
    };
    chunks.dedup();
    let limit = args.limit.unwrap_or(usize::MAX);
    if args.format == ExportFormat::Hcpe3 {
        return export_hcpe3(&chunks, &args.out, limit);
    }
    let (mut games, mut files, mut skipped) = (0usize, 0usize, 0usize);
    let progress = Reporter::new("export", chunks.len() as u64, "chunks");
    let mut read = 0;
    'chunks: for chunk in &chunks {
        progress.report(read, chunks.len() as u64, &format!("{games} games"));
        read += 1;
        let Some(records) = read_or_skip(chunk, &mut skipped) else {
            continue;
        };
        let stem = chunk
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (i, record) in records.iter().enumerate() {
            if games >= limit {
                break 'chunks;
            }
            let name = format!("{stem}-g{i:03}");
            // Checked by replaying, then written in the game's formats.
            let written = record
                .game()
                .map_err(anyhow::Error::from)
                .and_then(|game| {
                    with_game_type!(game, G => G::write_game(record, &args.out, &name))
                        .map_err(anyhow::Error::from)
                })
                .with_context(|| format!("game {i} of {}", chunk.display()))?;
            files += written;
            games += 1;
        }
    }
    progress.report(read, chunks.len() as u64, &format!("{games} games"));
    progress.finish();
    println!(
        "exported {games} games ({files} files) from {} chunks to {}{}{}",
        chunks.len() - skipped,
        args.out.display(),
        if files > games {
            // Shogi games: their KIF as the format defines it (registry::export).
            "; KIF in Shift_JIS (.kif; UTF-8 .kifu for a game with a character Shift_JIS lacks)"
        } else {
            ""
        },
        if skipped > 0 {
            format!("; {skipped} damaged chunks skipped")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// Writes every game of `chunks` (up to `limit`) into one hcpe3 file, published by a
/// rename so a reader never sees half of it.
fn export_hcpe3(chunks: &[PathBuf], out: &std::path::Path, limit: usize) -> Result<()> {
    if out.is_dir() {
        bail!("--out {} is a directory; hcpe3 is one file", out.display());
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let (games, positions, skipped, unfit) = shogi_rundir::publish(out, |tmp| -> Result<_> {
        let file =
            std::fs::File::create(tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut writer = std::io::BufWriter::new(file);
        let (mut games, mut positions, mut skipped, mut unfit) = (0usize, 0usize, 0usize, 0usize);
        let progress = Reporter::new("export", chunks.len() as u64, "chunks");
        let mut read = 0;
        'chunks: for chunk in chunks {
            progress.report(read, chunks.len() as u64, &format!("{games} games"));
            read += 1;
            let Some(records) = read_or_skip(chunk, &mut skipped) else {
                continue;
            };
            for (i, record) in records.iter().enumerate() {
                if games >= limit {
                    break 'chunks;
                }
                match hcpe3::write_game(record, &mut writer) {
                    Ok(()) => {
                        games += 1;
                        positions += record.moves.len();
                    }
                    Err(hcpe3::Hcpe3Error::Io(e)) => {
                        return Err(e).with_context(|| format!("writing {}", tmp.display()));
                    }
                    // A game the format cannot hold (minishogi, a handicap start) is left out.
                    Err(e) => {
                        if unfit == 0 {
                            eprintln!("leaving out game {i} of {}: {e}", chunk.display());
                        }
                        unfit += 1;
                    }
                }
            }
        }
        progress.report(read, chunks.len() as u64, &format!("{games} games"));
        progress.finish();
        if games == 0 && unfit > 0 {
            bail!(
                "none of the {unfit} games has an hcpe3 form (standard shogi from a full set only)"
            );
        }
        use std::io::Write;
        writer
            .flush()
            .with_context(|| format!("writing {}", tmp.display()))?;
        writer
            .get_ref()
            .sync_all()
            .with_context(|| format!("syncing {}", tmp.display()))?;
        Ok((games, positions, skipped, unfit))
    })?;
    println!(
        "exported {games} games ({positions} positions) to {}{}{}",
        out.display(),
        if skipped > 0 {
            format!("; {skipped} damaged chunks skipped")
        } else {
            String::new()
        },
        if unfit > 0 {
            format!("; {unfit} games without an hcpe3 form left out")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// A chunk's games, or `None` (counted in `skipped`, with a warning) if it is damaged.
fn read_or_skip(chunk: &std::path::Path, skipped: &mut usize) -> Option<Vec<GameRecord>> {
    match read_chunk(chunk) {
        Ok(records) => Some(records),
        Err(e) => {
            eprintln!("skipping {}: {e}", chunk.display());
            *skipped += 1;
            None
        }
    }
}

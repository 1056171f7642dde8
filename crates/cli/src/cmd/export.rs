//! `shogi-zero export`: self-play replay chunks as files any viewer reads — the USI
//! `position sfen ... moves ...` line always, CSA and KIF for standard shogi.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use shogi_selfplay::convert::write_game_dir;
use shogi_selfplay::record::{read_chunk, read_chunk_dir};

/// Arguments of `shogi-zero export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A replay chunk (`*.szgr`) or a directory of them (a run's `replay/`).
    pub input: PathBuf,
    /// Directory to write `<chunk>-gNNN.usi|csa|kif` into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Export at most this many games (newest chunks are not preferred: file order).
    #[arg(long)]
    pub limit: Option<usize>,
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
    let (mut games, mut files, mut skipped) = (0usize, 0usize, 0usize);
    'chunks: for chunk in &chunks {
        let records = match read_chunk(chunk) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("skipping {}: {e}", chunk.display());
                skipped += 1;
                continue;
            }
        };
        let stem = chunk
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (i, record) in records.iter().enumerate() {
            if games >= limit {
                break 'chunks;
            }
            let written = write_game_dir(record, &args.out, &format!("{stem}-g{i:03}"))
                .with_context(|| format!("game {i} of {}", chunk.display()))?;
            files += written.len();
            games += 1;
        }
    }
    println!(
        "exported {games} games ({files} files) from {} chunks to {}{}",
        chunks.len() - skipped,
        args.out.display(),
        if skipped > 0 {
            format!("; {skipped} damaged chunks skipped")
        } else {
            String::new()
        }
    );
    Ok(())
}

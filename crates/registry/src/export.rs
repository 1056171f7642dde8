//! From records to positions and text: replay a recorded shogi or minishogi game through
//! the rules (which checks every move), and print it as a USI `position` line, CSA or KIF
//! (standard shogi only: neither format defines minishogi), or write all three into a
//! game directory. A game's own files are [`ArenaGame::write_game`](crate::ArenaGame::write_game).

use std::path::{Path, PathBuf};

use shogi_rules::kifu::{Ending, Record, to_csa, to_kif};
use shogi_rules::{ShogiGame, Variant};

use shogi_records::{GameRecord, ReplayError, variant_from_name};

use crate::RecordGame;

/// Replays a shogi or minishogi record through the rules, checking every move
/// ([`RecordGame::replay_each`]); returns the final game.
pub fn replay(record: &GameRecord) -> Result<ShogiGame, ReplayError> {
    ShogiGame::replay_each(record, |_, _| {})
}

/// `position sfen <start> moves <m1> ...`, the line a USI engine or GUI reads. Moves are
/// checked by replaying them.
pub fn to_usi_position(record: &GameRecord) -> Result<String, ReplayError> {
    let game = replay(record)?;
    let mut line = format!("position sfen {}", record.start_sfen);
    if !game.moves().is_empty() {
        line.push_str(" moves ");
        line.push_str(&join_moves(game.moves()));
    }
    Ok(line)
}

/// Why a record cannot be exported as text.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The record does not replay.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// CSA and KIF define standard shogi only.
    #[error("{format} export supports standard shogi only, not {variant}")]
    Variant {
        /// `CSA` or `KIF`.
        format: &'static str,
        /// The record's variant name.
        variant: String,
    },
    /// The rules' record writer refused the record.
    #[error("record export: {0}")]
    Record(#[from] shogi_rules::kifu::RecordError),
    /// Writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl ExportError {
    /// The error of an I/O failure on `path`, as a `map_err` argument.
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + use<> {
        let path = path.to_path_buf();
        move |source| ExportError::Io { path, source }
    }
}

/// The rules crate's [`Record`] of a game record (replayed, so every move is checked),
/// with its end marker. Standard shogi only.
pub fn to_rules_record(record: &GameRecord, format: &'static str) -> Result<Record, ExportError> {
    if variant_from_name(&record.variant) != Some(Variant::Shogi) {
        // Replay first so an unknown variant reports as such.
        replay(record)?;
        return Err(ExportError::Variant {
            format,
            variant: record.variant.clone(),
        });
    }
    let game = replay(record)?;
    Ok(Record {
        start: game.start_position().clone(),
        moves: game.moves().to_vec(),
        end: Ending::of_outcome(&record.outcome)
            .csa_marker()
            .map(str::to_string),
        names: [None, None],
        ratings: [None, None],
    })
}

/// The record as CSA (V2.2) text. Standard shogi only.
pub fn to_csa_text(record: &GameRecord) -> Result<String, ExportError> {
    Ok(to_csa(&to_rules_record(record, "CSA")?)?)
}

/// The record as KIF text. Standard shogi only.
pub fn to_kif_text(record: &GameRecord) -> Result<String, ExportError> {
    Ok(to_kif(&to_rules_record(record, "KIF")?)?)
}

/// Writes a finished game into `dir` (created if missing): `<name>.usi` (the
/// `position sfen ... moves ...` line) always, and `<name>.csa` and `<name>.kif` for
/// standard shogi (minishogi has no CSA/KIF); the KIF in Shift_JIS, as the format
/// defines (`<name>.kifu` in UTF-8 should a character have no Shift_JIS code:
/// [`shogi_records::text::kif_file`]). Each file is written to a temporary name and
/// renamed into place. Returns the paths written.
pub fn write_game_dir(
    record: &GameRecord,
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, ExportError> {
    let usi = to_usi_position(record)?;
    std::fs::create_dir_all(dir).map_err(ExportError::io(dir))?;
    let mut files = vec![(dir.join(format!("{name}.usi")), (usi + "\n").into_bytes())];
    if variant_from_name(&record.variant) == Some(Variant::Shogi) {
        files.push((
            dir.join(format!("{name}.csa")),
            to_csa_text(record)?.into_bytes(),
        ));
        let kif = shogi_records::text::kif_file(&to_kif_text(record)?);
        files.push((dir.join(format!("{name}.{}", kif.extension)), kif.bytes));
    }
    let mut written = Vec::new();
    for (path, bytes) in files {
        shogi_rundir::write_atomic(&path, &bytes).map_err(ExportError::io(&path))?;
        written.push(path);
    }
    Ok(written)
}

/// Moves separated by spaces, as USI writes a line of moves.
pub fn join_moves<M: std::fmt::Display>(moves: &[M]) -> String {
    moves
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

//! From records to positions and text: replay a recorded game through the rules (which
//! checks every move), and print it as a USI `position` line, CSA or KIF (standard shogi
//! only: neither format defines minishogi), or write all three into a game directory.

use std::path::{Path, PathBuf};

use shogi_game::{EndReason, Game, Outcome};
use shogi_rules::record::{Record, to_csa, to_kif};
use shogi_rules::{GameRules, ImpasseRule, Move, Position, ShogiGame, Variant};
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::record::{GameRecord, MoveRecord};

/// Why a record cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The variant name is not one these rules play.
    #[error("unknown variant {0:?}")]
    Variant(String),
    /// The start SFEN does not parse.
    #[error("bad start position: {0}")]
    Sfen(#[from] shogi_rules::SfenError),
    /// The tai shogi start SFEN does not parse.
    #[error("bad tai shogi start position: {0}")]
    TaiSfen(#[from] shogi_tai::SfenError),
    /// A move code is malformed or illegal where it stands.
    #[error("move {ply} (code {code:#06x}) is not legal in {sfen}")]
    Move {
        /// 1-based ply.
        ply: usize,
        /// The code.
        code: u32,
        /// The position it was played in.
        sfen: String,
    },
}

/// The rules variant a record's name stands for.
pub fn variant_from_name(name: &str) -> Option<Variant> {
    match name {
        "shogi" => Some(Variant::Shogi),
        "minishogi" => Some(Variant::Minishogi),
        _ => None,
    }
}

/// The record's move code of a shogi move.
pub fn move_code(mv: Move) -> u32 {
    u32::from(mv.to_u16())
}

/// Replays a record through the rules, checking every move; returns the final game.
pub fn replay(record: &GameRecord) -> Result<ShogiGame, ReplayError> {
    replay_each(record, |_, _| {})
}

/// Replays a record like [`replay`], calling `visit` with the game and the move's record
/// just before each move is played (the position the search saw).
pub fn replay_each(
    record: &GameRecord,
    mut visit: impl FnMut(&ShogiGame, &MoveRecord),
) -> Result<ShogiGame, ReplayError> {
    let variant = variant_from_name(&record.variant)
        .ok_or_else(|| ReplayError::Variant(record.variant.clone()))?;
    let start = Position::from_sfen(variant, &record.start_sfen)?;
    let impasse = match record.impasse {
        1 => ImpasseRule::Declaration27,
        2 => ImpasseRule::Points24,
        _ => ImpasseRule::None,
    };
    let mut game = ShogiGame::new(
        start,
        GameRules {
            max_plies: record.max_plies,
            impasse,
        },
    );
    for (i, m) in record.moves.iter().enumerate() {
        let illegal = |game: &ShogiGame| ReplayError::Move {
            ply: i + 1,
            code: m.mv,
            sfen: game.position().to_sfen(),
        };
        visit(&game, m);
        let mv = u16::try_from(m.mv)
            .ok()
            .and_then(Move::from_u16)
            .ok_or_else(|| illegal(&game))?;
        game.try_play(mv).map_err(|_| illegal(&game))?;
    }
    Ok(game)
}

/// Replays a tai shogi record under its recorded rule options and ply cap, checking
/// every move; `visit` sees the game before each move.
pub fn replay_tai_each(
    record: &GameRecord,
    mut visit: impl FnMut(&TaiGame, &MoveRecord),
) -> Result<TaiGame, ReplayError> {
    if record.variant != "tai" {
        return Err(ReplayError::Variant(record.variant.clone()));
    }
    let start = shogi_tai::Position::from_sfen(&record.start_sfen)?;
    let rules = TaiRules::from_options_code(record.impasse, record.max_plies)
        .ok_or_else(|| ReplayError::Variant(format!("tai (rule code {})", record.impasse)))?;
    let mut game = TaiGame::new(start, rules);
    let mut legal = Vec::new();
    for (i, m) in record.moves.iter().enumerate() {
        visit(&game, m);
        legal.clear();
        if game.outcome().is_none() {
            game.legal_moves(&mut legal);
        }
        match TaiMove::from_code(m.mv) {
            Some(mv) if legal.contains(&mv) => game.play(mv),
            _ => {
                return Err(ReplayError::Move {
                    ply: i + 1,
                    code: m.mv,
                    sfen: game.position().to_sfen(),
                });
            }
        }
    }
    Ok(game)
}

/// `position sfen <start> moves <m1> ...`, the line a USI engine or GUI reads. Moves are
/// checked by replaying them.
pub fn to_usi_position(record: &GameRecord) -> Result<String, ReplayError> {
    let game = replay(record)?;
    let mut line = format!("position sfen {}", record.start_sfen);
    if !game.moves().is_empty() {
        line.push_str(" moves");
        for mv in game.moves() {
            line.push(' ');
            line.push_str(&mv.to_string());
        }
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
    Record(#[from] shogi_rules::record::RecordError),
    /// Writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The CSA end marker (without `%`) of a game outcome.
pub fn csa_end_marker(outcome: &Outcome) -> &'static str {
    match outcome.reason {
        EndReason::Checkmate | EndReason::NoLegalMoves => "TSUMI",
        EndReason::Repetition | EndReason::PerpetualCheck => "SENNICHITE",
        EndReason::ImpasseDeclaration => "KACHI",
        EndReason::Impasse24 => "JISHOGI",
        EndReason::Resignation => "TORYO",
        EndReason::MaxPlies
        | EndReason::RoyalsCaptured
        | EndReason::Forfeit
        | EndReason::Adjudication => "CHUDAN",
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
        end: Some(csa_end_marker(&record.outcome).to_string()),
        names: [None, None],
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
/// standard shogi (minishogi has no CSA/KIF). Each file is written to a temporary name
/// and renamed into place. Returns the paths written.
pub fn write_game_dir(
    record: &GameRecord,
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, ExportError> {
    let usi = to_usi_position(record)?;
    std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files = vec![(dir.join(format!("{name}.usi")), usi + "\n")];
    if variant_from_name(&record.variant) == Some(Variant::Shogi) {
        files.push((dir.join(format!("{name}.csa")), to_csa_text(record)?));
        files.push((dir.join(format!("{name}.kif")), to_kif_text(record)?));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        shogi_rundir::write_atomic(&path, text.as_bytes()).map_err(|source| ExportError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

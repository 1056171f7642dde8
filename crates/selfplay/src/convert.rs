//! From records to positions and text: replay a recorded game through the rules (which
//! checks every move), and print it as a USI `position` line.

use shogi_rules::{GameRules, ImpasseRule, Move, Position, ShogiGame, Variant};

use crate::record::GameRecord;

/// Why a record cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The variant name is not one these rules play.
    #[error("unknown variant {0:?}")]
    Variant(String),
    /// The start SFEN does not parse.
    #[error("bad start position: {0}")]
    Sfen(#[from] shogi_rules::SfenError),
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
        let mv = u16::try_from(m.mv)
            .ok()
            .and_then(Move::from_u16)
            .ok_or_else(|| illegal(&game))?;
        game.try_play(mv).map_err(|_| illegal(&game))?;
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

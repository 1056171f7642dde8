//! [`RecordGame`]: what a game record needs from a game, implemented for shogi/minishogi
//! and tai shogi.

use shogi_game::{EndReason, Game, GameKind, Outcome};
use shogi_rules::{GameRules, ImpasseRule, Move, Position, ShogiGame, Variant};
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::record::{GameRecord, MoveRecord, ReplayError};

/// What a self-play record needs from a game: its header, a 32-bit code per move, and
/// the way back from a record to the game. Implemented for shogi/minishogi and tai shogi.
pub trait RecordGame: Game {
    /// A record of this game's start: variant name, start position, ply cap and rule
    /// code (the impasse rule for shogi,
    /// [`TaiRules::options_code`](shogi_tai::TaiRules::options_code) for tai shogi), with
    /// no moves yet and a placeholder outcome (a draw at the ply cap) for the caller to
    /// fill in.
    fn record_start(&self) -> GameRecord;

    /// The move's record code.
    fn move_code(mv: Self::Move) -> u32;

    /// The move a record code stands for, if the code is well formed (legality is the
    /// position's to judge).
    fn move_from_code(code: u32) -> Option<Self::Move>;

    /// The game at `record`'s start under its recorded rules and ply cap, before any
    /// move; an error if the record is of another game or its start does not parse.
    fn replay_start(record: &GameRecord) -> Result<Self, ReplayError>;

    /// Replays `record` under its recorded rules and ply cap, checking every move;
    /// `visit` sees the game and the move's record just before each move is played (the
    /// position the search saw). Returns the final game.
    fn replay_each(
        record: &GameRecord,
        mut visit: impl FnMut(&Self, &MoveRecord),
    ) -> Result<Self, ReplayError> {
        let mut game = Self::replay_start(record)?;
        for (i, m) in record.moves.iter().enumerate() {
            visit(&game, m);
            let played = Self::move_from_code(m.mv).map(|mv| game.play(mv));
            if !matches!(played, Some(Ok(()))) {
                return Err(ReplayError::Move {
                    ply: i + 1,
                    code: m.mv,
                    sfen: game.record_start().start_sfen,
                });
            }
        }
        Ok(game)
    }
}

/// A record with this header, no moves and a placeholder outcome.
fn record_header(variant: &str, start_sfen: String, max_plies: u32, rule_code: u8) -> GameRecord {
    GameRecord {
        variant: variant.to_string(),
        start_sfen,
        max_plies,
        impasse: rule_code,
        outcome: Outcome::draw(EndReason::MaxPlies),
        resignation_disabled: false,
        moves: Vec::new(),
    }
}

impl RecordGame for ShogiGame {
    fn record_start(&self) -> GameRecord {
        record_header(
            self.position().variant().name(),
            self.position().to_sfen(),
            self.rules().max_plies,
            impasse_code(self.rules().impasse),
        )
    }

    fn move_code(mv: Move) -> u32 {
        u32::from(mv.to_u16())
    }

    fn move_from_code(code: u32) -> Option<Move> {
        u16::try_from(code).ok().and_then(Move::from_u16)
    }

    fn replay_start(record: &GameRecord) -> Result<ShogiGame, ReplayError> {
        let variant = Variant::of(record.game()?)
            .ok_or_else(|| ReplayError::Variant(record.variant.clone()))?;
        let start = Position::from_sfen(variant, &record.start_sfen)?;
        let impasse = match record.impasse {
            1 => ImpasseRule::Declaration27,
            2 => ImpasseRule::Points24,
            _ => ImpasseRule::None,
        };
        Ok(ShogiGame::new(
            start,
            GameRules {
                max_plies: record.max_plies,
                impasse,
            },
        ))
    }
}

impl RecordGame for TaiGame {
    fn record_start(&self) -> GameRecord {
        record_header(
            GameKind::Tai.name(),
            self.position().to_sfen(),
            self.rules().max_plies,
            self.rules().options_code(),
        )
    }

    fn move_code(mv: TaiMove) -> u32 {
        mv.to_code()
    }

    fn move_from_code(code: u32) -> Option<TaiMove> {
        TaiMove::from_code(code)
    }

    fn replay_start(record: &GameRecord) -> Result<TaiGame, ReplayError> {
        if record.game()? != GameKind::Tai {
            return Err(ReplayError::Variant(record.variant.clone()));
        }
        let start = shogi_tai::Position::from_sfen(&record.start_sfen)?;
        let rules = TaiRules::from_options_code(record.impasse, record.max_plies)
            .ok_or_else(|| ReplayError::Variant(format!("tai (rule code {})", record.impasse)))?;
        Ok(TaiGame::new(start, rules))
    }
}

fn impasse_code(rule: ImpasseRule) -> u8 {
    match rule {
        ImpasseRule::None => 0,
        ImpasseRule::Declaration27 => 1,
        ImpasseRule::Points24 => 2,
    }
}

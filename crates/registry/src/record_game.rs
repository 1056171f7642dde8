//! [`RecordGame`]: what a game record needs from a game (its header, a code per move and
//! the way back from a record to the game). The record format itself is `shogi-records`.

use shogi_game::{EndReason, Game, GameKind, Outcome};
use shogi_records::{GameRecord, MoveRecord, ReplayError};

/// What a self-play record needs from a game: its header, a 32-bit code per move, and
/// the way back from a record to the game.
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

    /// A record of `kind` from `start_sfen` holding `moves`, each in the game's own move
    /// text ([`Game::parse_move`]) and checked by playing it; no ply cap or rule code,
    /// and a placeholder outcome (a draw at the ply cap). The error names the first move
    /// that is not legal where it stands.
    fn record_from_texts<'a>(
        kind: GameKind,
        start_sfen: &str,
        moves: impl IntoIterator<Item = &'a str>,
    ) -> Result<GameRecord, String>
    where
        Self: Sized,
    {
        let mut record = record_header(kind.name(), start_sfen.to_string(), 0, 0);
        let mut game = Self::replay_start(&record).map_err(|e| e.to_string())?;
        for (ply, text) in moves.into_iter().enumerate() {
            let mv = game
                .parse_move(text)
                .ok_or_else(|| format!("move {} {text:?} is not legal there", ply + 1))?;
            record
                .moves
                .push(MoveRecord::unsearched(Self::move_code(mv)));
            game.play_unchecked(mv);
        }
        Ok(record)
    }
}

/// A record with this header, no moves and a placeholder outcome.
pub(crate) fn record_header(
    variant: &str,
    start_sfen: String,
    max_plies: u32,
    rule_code: u8,
) -> GameRecord {
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

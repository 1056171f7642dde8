//! [`ArenaGame`]: what matches need from a game beyond search and the network, so the
//! same match code plays shogi, minishogi and tai shogi.

use std::fmt::Debug;
use std::path::Path;

use shogi_game::GameKind;
use shogi_records::GameRecord;

use crate::export::ExportError;
use crate::{GameSpec, NetGame, RecordGame};

/// A game the arena can play. It knows nothing of matches or players: the match takes
/// the game's rules as a [`GameSpec`].
pub trait ArenaGame: NetGame + RecordGame {
    /// A start position.
    type Start: Clone + Send + Sync + Debug;

    /// One opening line of `game` (`startpos`, an SFEN with or without `sfen `, or
    /// whatever else the game names positions by), checked.
    fn parse_start(game: GameKind, line: &str) -> Result<Self::Start, String>;

    /// The position this game stands in, as a start position.
    fn current_start(&self) -> Self::Start;

    /// A game from `start` under `spec`'s rules (ply cap, impasse rule, tai rule
    /// options).
    fn from_start(spec: &GameSpec, start: &Self::Start) -> Self;

    /// The start position's text (SFEN).
    fn start_text(start: &Self::Start) -> String;

    /// Whether the side to move may declare a win (shogi's 27-point impasse rule).
    fn can_declare_win(&self) -> bool {
        false
    }

    /// Checks one finished game by replaying it and writes it into `dir` as `stem.*`;
    /// returns how many files were written.
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ExportError>;
}

//! [`ArenaGame`]: what matches need from a game beyond search and the network, so the
//! same match code plays shogi, minishogi and tai shogi.

use std::fmt::Debug;
use std::path::Path;

use shogi_features::{GameSpec, NetGame};
use shogi_game::{Color, GameKind};
use shogi_records::RecordGame;
use shogi_records::convert::{ExportError, write_game_dir};
use shogi_records::record::GameRecord;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::error::{ArenaError, io_err};

/// A game the arena can play. It knows nothing of matches or players: the match takes
/// the game's rules as a [`GameSpec`], and the players a game offers beyond the generic
/// ones are [`GamePlayers`](crate::player::GamePlayers).
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
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ArenaError>;
}

impl ArenaGame for ShogiGame {
    type Start = Position;

    /// `startpos`, an SFEN (optionally after `sfen `), or a handicap (`handicap:NAME`,
    /// standard shogi only).
    fn parse_start(game: GameKind, line: &str) -> Result<Position, String> {
        let variant =
            Variant::of(game).ok_or_else(|| format!("{game} is not played by shogi rules"))?;
        if line == "startpos" {
            Ok(Position::startpos(variant))
        } else if let Some(name) = line.strip_prefix("handicap:") {
            if variant != Variant::Shogi {
                return Err("handicaps are standard shogi only".into());
            }
            Position::handicap(name).map_err(|e| e.to_string())
        } else {
            let sfen = line.strip_prefix("sfen ").unwrap_or(line);
            Position::from_sfen(variant, sfen).map_err(|e| e.to_string())
        }
    }

    fn current_start(&self) -> Position {
        self.position().clone()
    }

    fn from_start(spec: &GameSpec, start: &Position) -> Self {
        let rules = GameRules {
            max_plies: spec.max_plies,
            impasse: spec.impasse,
        };
        ShogiGame::new(start.clone(), rules)
    }

    fn start_text(start: &Position) -> String {
        start.to_sfen()
    }

    fn can_declare_win(&self) -> bool {
        ShogiGame::can_declare_win(self)
    }

    /// `stem.usi` always, `.csa` and `.kif` for standard shogi (replayed on the way).
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ArenaError> {
        Ok(write_game_dir(record, dir, stem)?.len())
    }
}

impl ArenaGame for TaiGame {
    type Start = shogi_tai::Position;

    /// `startpos` or a tai SFEN (optionally after `sfen `).
    fn parse_start(game: GameKind, line: &str) -> Result<shogi_tai::Position, String> {
        if game != GameKind::Tai {
            return Err(format!("{game} is not tai shogi"));
        }
        if line == "startpos" {
            Ok(shogi_tai::Position::startpos())
        } else {
            let sfen = line.strip_prefix("sfen ").unwrap_or(line);
            shogi_tai::Position::from_sfen(sfen).map_err(|e| e.to_string())
        }
    }

    fn current_start(&self) -> shogi_tai::Position {
        self.position().clone()
    }

    fn from_start(spec: &GameSpec, start: &shogi_tai::Position) -> Self {
        let rules = TaiRules {
            max_plies: spec.max_plies,
            ..spec.tai
        };
        TaiGame::new(start.clone(), rules)
    }

    fn start_text(start: &shogi_tai::Position) -> String {
        start.to_sfen()
    }

    /// `stem.txt`: the start SFEN, the moves in path notation, and the result (no tai
    /// shogi record format is shared by other tools).
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ArenaError> {
        TaiGame::replay_each(record, |_, _| {}).map_err(ExportError::from)?;
        let moves: Vec<String> = record
            .moves
            .iter()
            .map(|m| TaiMove::from_code(m.mv).map_or_else(|| "?".into(), |mv| mv.to_string()))
            .collect();
        let winner = match record.outcome.winner {
            Some(Color::Black) => "black",
            Some(Color::White) => "white",
            None => "draw",
        };
        let text = format!(
            "sfen {}\nmoves {}\nresult {winner} {:?}\n",
            record.start_sfen,
            moves.join(" "),
            record.outcome.reason
        );
        std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
        let path = dir.join(format!("{stem}.txt"));
        shogi_rundir::write_atomic(&path, text.as_bytes()).map_err(io_err("write", &path))?;
        Ok(1)
    }
}

//! [`ArenaGame`]: what matches need from a game beyond search and the network, so the
//! same match code plays shogi, minishogi and tai shogi.

use std::fmt::Debug;
use std::path::Path;

use shogi_features::NetGame;
use shogi_game::{Color, Game, GameKind};
use shogi_rules::{GameRules, ImpasseRule, Position, ShogiGame, Variant};
use shogi_selfplay::convert::{ExportError, write_game_dir};
use shogi_selfplay::play::RecordGame;
use shogi_selfplay::record::GameRecord;
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::alphabeta::AlphaBetaLimits;
use crate::error::{ArenaError, io_err};
use crate::matchplay::MatchConfig;
use crate::openings::opening_positions;
use crate::player::{AlphaBetaMover, Mover, UsiMover};
use crate::usi_client::UsiTimeControl;

/// A game the arena can play.
pub trait ArenaGame: NetGame + RecordGame {
    /// A start position.
    type Start: Clone + Send + Sync + Debug;

    /// The match's start positions (`n` distinct ones, or the configured list).
    fn openings(config: &MatchConfig, n: usize) -> Result<Vec<Self::Start>, ArenaError> {
        opening_positions::<Self>(&config.openings, config.game, n, config.seed)
    }

    /// One opening line of `game` (`startpos`, an SFEN with or without `sfen `, or
    /// whatever else the game names positions by), checked.
    fn parse_start(game: GameKind, line: &str) -> Result<Self::Start, String>;

    /// The position this game stands in, as a start position.
    fn current_start(&self) -> Self::Start;

    /// A game from `start` under the match's ply cap.
    fn from_start(start: &Self::Start, max_plies: u32) -> Self;

    /// The start position's text (SFEN).
    fn start_text(start: &Self::Start) -> String;

    /// Plays `mv` if it is legal here.
    fn try_play_move(&mut self, mv: Self::Move) -> Result<(), String>;

    /// Whether the side to move may declare a win (shogi's 27-point impasse rule).
    fn can_declare_win(&self) -> bool {
        false
    }

    /// Checks one finished game by replaying it and writes it into `dir` as `stem.*`;
    /// returns how many files were written.
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ArenaError>;

    /// A mover driving an external USI engine, where the arena's USI client speaks the
    /// variant (shogi and minishogi).
    fn usi_mover(command: &str, tc: &UsiTimeControl) -> Option<Box<dyn Mover<Self>>>;

    /// A mover playing the classical alpha-beta baseline, where the variant has one
    /// (shogi and minishogi).
    fn alphabeta_mover(_limits: &AlphaBetaLimits) -> Option<Box<dyn Mover<Self>>> {
        None
    }
}

fn shogi_rules_for(variant: Variant, max_plies: u32) -> GameRules {
    GameRules {
        max_plies,
        impasse: if variant == Variant::Shogi {
            ImpasseRule::Declaration27
        } else {
            ImpasseRule::None
        },
    }
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

    fn from_start(start: &Position, max_plies: u32) -> Self {
        ShogiGame::new(start.clone(), shogi_rules_for(start.variant(), max_plies))
    }

    fn start_text(start: &Position) -> String {
        start.to_sfen()
    }

    fn try_play_move(&mut self, mv: Self::Move) -> Result<(), String> {
        self.try_play(mv).map_err(|e| e.to_string())
    }

    fn can_declare_win(&self) -> bool {
        ShogiGame::can_declare_win(self)
    }

    /// `stem.usi` always, `.csa` and `.kif` for standard shogi (replayed on the way).
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ArenaError> {
        Ok(write_game_dir(record, dir, stem)?.len())
    }

    fn usi_mover(command: &str, tc: &UsiTimeControl) -> Option<Box<dyn Mover<Self>>> {
        Some(Box::new(UsiMover::new(command, tc)))
    }

    fn alphabeta_mover(limits: &AlphaBetaLimits) -> Option<Box<dyn Mover<Self>>> {
        Some(Box::new(AlphaBetaMover::new(limits)))
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

    fn from_start(start: &shogi_tai::Position, max_plies: u32) -> Self {
        TaiGame::new(
            start.clone(),
            TaiRules {
                max_plies,
                ..TaiRules::default()
            },
        )
    }

    fn start_text(start: &shogi_tai::Position) -> String {
        start.to_sfen()
    }

    fn try_play_move(&mut self, mv: TaiMove) -> Result<(), String> {
        let mut legal = Vec::new();
        if self.outcome().is_none() {
            self.legal_moves(&mut legal);
        }
        if !legal.contains(&mv) {
            return Err(format!("{mv} is not legal here"));
        }
        self.play(mv);
        Ok(())
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

    fn usi_mover(_command: &str, _tc: &UsiTimeControl) -> Option<Box<dyn Mover<Self>>> {
        None
    }
}

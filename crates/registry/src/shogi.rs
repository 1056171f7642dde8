//! Standard shogi and minishogi (one type, [`ShogiGame`]: the variant is part of its
//! position), every adapter in one place: started from a [`GameSpec`], encoded for the
//! network (`shogi-features`' planes and policy), recorded and played in matches (its
//! USI adapter is `shogi-usi`'s).

use std::path::Path;

use shogi_features::{FeatureSet, NetLayout, policy_index};
use shogi_game::{Game, GameKind};
use shogi_records::{GameRecord, ReplayError};
use shogi_rules::{GameRules, ImpasseRule, Move, Position, ShogiGame, Variant};

use crate::export::{ExportError, write_game_dir};
use crate::record_game::record_header;
use crate::{ArenaGame, FromSpec, GameSpec, NetGame, RecordGame};

impl FromSpec for ShogiGame {
    /// The variant's start position. A tai spec never reaches this type through the
    /// dispatch; called directly with one, it starts standard shogi.
    fn from_spec(spec: &GameSpec) -> ShogiGame {
        let variant = Variant::of(spec.kind).unwrap_or(Variant::Shogi);
        ShogiGame::new(
            Position::startpos(variant),
            GameRules {
                max_plies: spec.max_plies,
                impasse: spec.impasse,
            },
        )
    }
}

impl NetGame for ShogiGame {
    fn layout_for(kind: GameKind, features: FeatureSet) -> Result<NetLayout, String> {
        let variant = Variant::of(kind)
            .ok_or_else(|| format!("{kind} is not played by the shogi rules' positions"))?;
        Ok(NetLayout::shogi_with(variant, features))
    }

    fn layout(&self) -> NetLayout {
        NetLayout::shogi(self.position().variant())
    }

    fn encode_planes(&self, layout: &NetLayout, out: &mut [f32]) {
        let features = layout.features;
        shogi_features::encode(
            self.position(),
            features,
            self.repetitions(),
            self.ply(),
            out,
        );
    }

    fn move_index(&self, mv: Self::Move) -> Option<usize> {
        let pos = self.position();
        policy_index(pos.variant(), pos.side_to_move(), mv)
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
        let start = Position::from_sfen(variant, &record.start_sfen).map_err(|e| {
            ReplayError::StartPosition {
                game: variant.name(),
                why: e.to_string(),
            }
        })?;
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
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ExportError> {
        Ok(write_game_dir(record, dir, stem)?.len())
    }
}

/// The record's rule code of an impasse rule (read back by `replay_start`).
fn impasse_code(rule: ImpasseRule) -> u8 {
    match rule {
        ImpasseRule::None => 0,
        ImpasseRule::Declaration27 => 1,
        ImpasseRule::Points24 => 2,
    }
}

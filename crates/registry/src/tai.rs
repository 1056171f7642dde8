//! Tai shogi (大局将棋, 25x25), every adapter in one place: started from a [`GameSpec`]
//! (its rule options), encoded for the network (`shogi_tai::net`, sparse), recorded,
//! played in matches and over USI (bracketed SFEN positions, moves as squares in path
//! order).

use std::path::Path;

use shogi_features::{FeatureSet, NetLayout, SparsePlanes};
use shogi_game::{Color, GameKind};
use shogi_records::{GameRecord, ReplayError};
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::export::ExportError;
use crate::record_game::record_header;
use crate::{ArenaGame, FromSpec, GameSpec, NetGame, RecordGame};

impl FromSpec for TaiGame {
    fn from_spec(spec: &GameSpec) -> TaiGame {
        TaiGame::startpos(TaiRules {
            max_plies: spec.max_plies,
            ..spec.tai
        })
    }
}

/// Tai shogi's network: `shogi_tai::net`'s planes on its 25x25 board, reading the
/// pieces ([`FeatureSet::Pieces`], 207 planes) or the pieces and each square's exchange
/// ([`FeatureSet::Exchanges`], 2 planes more). Tai has no attack planes: a plane per kind
/// and side would double the 207 planes that are already the network's largest cost.
fn tai_layout(features: FeatureSet) -> NetLayout {
    NetLayout {
        variant: GameKind::Tai.name(),
        features,
        input_planes: shogi_tai::net::planes_for(features == FeatureSet::Exchanges),
        board: shogi_tai::SIZE,
        policy_planes: shogi_tai::net::POLICY_PLANES,
        feature_version: shogi_tai::net::FEATURE_VERSION,
        policy_version: shogi_tai::net::POLICY_VERSION,
    }
}

impl NetGame for TaiGame {
    fn layout_for(kind: GameKind, features: FeatureSet) -> Result<NetLayout, String> {
        match features {
            FeatureSet::Pieces | FeatureSet::Exchanges => Ok(tai_layout(features)),
            FeatureSet::Attacks => Err(format!(
                "{kind} has no {features} feature set (it reads {} or {})",
                FeatureSet::Pieces,
                FeatureSet::Exchanges
            )),
        }
    }

    fn layout(&self) -> NetLayout {
        tai_layout(FeatureSet::Pieces)
    }

    fn encode_planes(&self, layout: &NetLayout, out: &mut [f32]) {
        let exchanges = layout.features == FeatureSet::Exchanges;
        shogi_tai::net::encode(self, self.repetitions(), exchanges, out);
    }

    fn encode_sparse(&self, layout: &NetLayout, out: &mut SparsePlanes) -> bool {
        let exchanges = layout.features == FeatureSet::Exchanges;
        let (entries, fills) = (&mut out.entries, &mut out.fills);
        shogi_tai::net::encode_sparse(self, self.repetitions(), exchanges, entries, fills);
        true
    }

    fn move_index(&self, mv: Self::Move) -> Option<usize> {
        shogi_tai::net::policy_index(self, mv)
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
        let start = shogi_tai::Position::from_sfen(&record.start_sfen).map_err(|e| {
            ReplayError::StartPosition {
                game: GameKind::Tai.name(),
                why: e.to_string(),
            }
        })?;
        let rules = TaiRules::from_options_code(record.impasse, record.max_plies)
            .ok_or_else(|| ReplayError::Variant(format!("tai (rule code {})", record.impasse)))?;
        Ok(TaiGame::new(start, rules))
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
    fn write_game(record: &GameRecord, dir: &Path, stem: &str) -> Result<usize, ExportError> {
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
        std::fs::create_dir_all(dir).map_err(ExportError::io(dir))?;
        let path = dir.join(format!("{stem}.txt"));
        shogi_rundir::write_atomic(&path, text.as_bytes()).map_err(ExportError::io(&path))?;
        Ok(1)
    }
}

/// Reads a tai game as [`ArenaGame::write_game`] writes it (`sfen`, `moves` and
/// `result` lines): the record, every move checked by playing it, and the result line's
/// text (`unknown` where there is none).
pub fn read_text_game(text: &str) -> Result<(GameRecord, String), String> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).map(str::trim))
    };
    let sfen = field("sfen ")
        .ok_or("no `sfen` line (a tai game's .txt has sfen, moves and result lines)")?;
    let moves = text
        .lines()
        .find_map(|l| l.strip_prefix("moves"))
        .unwrap_or("");
    let record = TaiGame::record_from_texts(GameKind::Tai, sfen, moves.split_whitespace())?;
    let result = field("result ").unwrap_or("unknown").to_string();
    Ok((record, result))
}

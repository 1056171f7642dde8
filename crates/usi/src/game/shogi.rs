//! Standard shogi and minishogi over USI: SFEN positions and USI moves, the
//! `MaxMovesToDraw` cap, the 27-point declaration, the mate probe and `go mate`.

use shogi_game::{Game, GameKind};
use shogi_registry::GameSpec;
use shogi_rules::mate::{MateLimits, MateResult, search_mate};
use shogi_rules::{GameRules, Position, ShogiGame, Variant};

use shogi_registry::export::join_moves;

use super::{Parsed, UsiGame, ply_cap, sanitize};

impl UsiGame for ShogiGame {
    const KINDS: &'static [GameKind] = &[GameKind::Shogi, GameKind::Minishogi];

    fn parse_position(
        spec: &GameSpec,
        head: &[&str],
        moves: &[&str],
    ) -> Result<Parsed<Self>, String> {
        let variant = Variant::of(spec.kind).ok_or("not a shogi variant")?;
        let pos = match head.first() {
            Some(&"startpos") if head.len() == 1 => Position::startpos(variant),
            Some(&"sfen") => Position::from_sfen(variant, &head[1..].join(" "))
                .map_err(|e| sanitize(&e.to_string()))?,
            _ => return Err("expected 'startpos' or 'sfen <sfen>'".into()),
        };
        let rules = GameRules {
            max_plies: ply_cap(spec.max_plies, pos.move_number(), moves.len()),
            impasse: spec.impasse,
        };
        let mut game = ShogiGame::new(pos, rules);
        for (k, text) in moves.iter().enumerate() {
            let mv = game.position().parse_usi_move(text).map_err(|e| {
                format!(
                    "move {} ({}): {}",
                    k + 1,
                    sanitize(text),
                    sanitize(&e.to_string())
                )
            })?;
            game.play(mv)
                .map_err(|e| format!("move {} ({}): {}", k + 1, sanitize(text), e))?;
        }
        let key = game.start_position().key();
        let played = game.moves().to_vec();
        Ok((game, key, played))
    }

    fn twofold_in_search(&mut self) {
        let ply = self.ply();
        self.set_twofold_after(ply);
    }

    fn move_number(&self) -> u32 {
        self.position().move_number()
    }

    fn can_declare_win(&self) -> bool {
        ShogiGame::can_declare_win(self)
    }

    fn mate_probe(&self, limits: &MateLimits) -> Option<(Vec<Self::Move>, usize)> {
        match self.search_mate(limits) {
            (MateResult::Mate(line), stats) => Some((line, stats.nodes)),
            _ => None,
        }
    }

    fn mate_answer(&self, limits: &MateLimits) -> String {
        match search_mate(self.position(), limits).0 {
            MateResult::Mate(line) => format!("checkmate {}", join_moves(&line)),
            MateResult::NoMate => "checkmate nomate".into(),
            MateResult::Timeout => "checkmate timeout".into(),
        }
    }
}

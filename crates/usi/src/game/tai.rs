//! Tai shogi over USI: bracketed SFEN positions, moves as squares in path order
//! (`13m12l`, `13m12l13m`), the spec's tai rule options.

use shogi_game::{Game, GameKind};
use shogi_registry::GameSpec;
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use super::{Parsed, UsiGame, ply_cap, sanitize};

impl UsiGame for TaiGame {
    const KINDS: &'static [GameKind] = &[GameKind::Tai];

    /// `startpos` or `sfen <tai SFEN>`, then moves as squares in path order
    /// (`13m12l`, `13m12l13m`); the rules are the spec's tai rule options.
    fn parse_position(
        spec: &GameSpec,
        head: &[&str],
        moves: &[&str],
    ) -> Result<Parsed<Self>, String> {
        let pos = match head.first() {
            Some(&"startpos") if head.len() == 1 => shogi_tai::Position::startpos(),
            Some(&"sfen") => shogi_tai::Position::from_sfen(&head[1..].join(" "))
                .map_err(|e| sanitize(&e.to_string()))?,
            _ => return Err("expected 'startpos' or 'sfen <sfen>'".into()),
        };
        let rules = TaiRules {
            max_plies: ply_cap(spec.max_plies, pos.move_number(), moves.len()),
            ..spec.tai
        };
        let mut game = TaiGame::new(pos, rules);
        let key = game.key();
        let mut played = Vec::with_capacity(moves.len());
        for (k, text) in moves.iter().enumerate() {
            if game.outcome().is_some() {
                return Err(format!(
                    "move {} ({}): the game is over",
                    k + 1,
                    sanitize(text)
                ));
            }
            let mv: TaiMove = game
                .parse_move(text)
                .ok_or_else(|| format!("move {} ({}): not a legal move", k + 1, sanitize(text)))?;
            game.play_unchecked(mv);
            played.push(mv);
        }
        Ok((game, key, played))
    }

    fn move_number(&self) -> u32 {
        self.position().move_number()
    }
}

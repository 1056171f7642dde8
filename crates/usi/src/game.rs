//! [`UsiGame`]: what the USI engine needs from a game, so one protocol loop plays
//! standard shogi and minishogi (`ShogiGame`, switched by `UCI_Variant`) and tai shogi
//! (`TaiGame`: bracketed SFEN positions and moves as squares in path order).

use shogi_features::{NetGame, NetLayout};
use shogi_game::Game;
use shogi_rules::{GameRules, ImpasseRule, Position, ShogiGame, Variant};
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::engine::Options;
use shogi_rules::mate::{MateLimits, MateResult, search_mate};

/// A position parsed from a `position` command: the game, its start position's key and
/// the moves played since (for tree reuse).
pub type Parsed<G> = (G, u64, Vec<<G as Game>::Move>);

/// A game the USI engine plays.
pub trait UsiGame: NetGame {
    /// The `UCI_Variant` option line's tail (`default ... var ...`).
    fn variant_combo(options: &Options) -> String;

    /// Applies a `UCI_Variant` value; false if this engine does not play it.
    fn set_variant(options: &mut Options, value: &str) -> bool;

    /// The network layout under `options`.
    fn layout_for(options: &Options) -> NetLayout;

    /// Whether a parsed game still fits `options` (after `UCI_Variant` changed).
    fn fits(&self, options: &Options) -> bool;

    /// Parses `position` arguments: `head` is `startpos` or `sfen ...`, then the moves.
    fn parse_position(
        options: &Options,
        head: &[&str],
        moves: &[&str],
    ) -> Result<Parsed<Self>, String>;

    /// The move number the clock's budget uses.
    fn move_number(&self) -> u32;

    /// Whether the side to move may declare a win (`bestmove win`).
    fn can_declare_win(&self) -> bool {
        false
    }

    /// A forced mate for the side to move within `limits`: the line and the nodes
    /// searched. Variants without check have none.
    fn mate_probe(&self, _limits: &MateLimits) -> Option<(Vec<Self::Move>, usize)> {
        None
    }

    /// The answer to `go mate` (`checkmate ...`).
    fn mate_answer(&self, _limits: &MateLimits) -> String {
        "checkmate notimplemented".into()
    }
}

impl UsiGame for ShogiGame {
    fn variant_combo(options: &Options) -> String {
        format!("default {} var shogi var minishogi", options.variant.name())
    }

    fn set_variant(options: &mut Options, value: &str) -> bool {
        match value {
            "shogi" => options.variant = Variant::Shogi,
            "minishogi" => options.variant = Variant::Minishogi,
            _ => return false,
        }
        true
    }

    fn layout_for(options: &Options) -> NetLayout {
        NetLayout::shogi(options.variant)
    }

    fn fits(&self, options: &Options) -> bool {
        self.position().variant() == options.variant
    }

    fn parse_position(
        options: &Options,
        head: &[&str],
        moves: &[&str],
    ) -> Result<Parsed<Self>, String> {
        let variant = options.variant;
        let pos = match head.first() {
            Some(&"startpos") if head.len() == 1 => Position::startpos(variant),
            Some(&"sfen") => Position::from_sfen(variant, &head[1..].join(" "))
                .map_err(|e| crate::engine::sanitize(&e.to_string()))?,
            _ => return Err("expected 'startpos' or 'sfen <sfen>'".into()),
        };
        let rules = GameRules {
            max_plies: ply_cap(options, pos.move_number(), moves.len()),
            impasse: ImpasseRule::Declaration27,
        };
        let mut game = ShogiGame::new(pos, rules);
        for (k, text) in moves.iter().enumerate() {
            let sanitize = crate::engine::sanitize;
            let mv = game.position().parse_usi_move(text).map_err(|e| {
                format!(
                    "move {} ({}): {}",
                    k + 1,
                    sanitize(text),
                    sanitize(&e.to_string())
                )
            })?;
            game.try_play(mv)
                .map_err(|e| format!("move {} ({}): {}", k + 1, sanitize(text), e))?;
        }
        let key = game.start_position().key();
        let played = game.moves().to_vec();
        Ok((game, key, played))
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
            MateResult::Mate(line) => format!("checkmate {}", crate::engine::join_moves(&line)),
            MateResult::NoMate => "checkmate nomate".into(),
            MateResult::Timeout => "checkmate timeout".into(),
        }
    }
}

impl UsiGame for TaiGame {
    fn variant_combo(_options: &Options) -> String {
        "default tai var tai".into()
    }

    fn set_variant(_options: &mut Options, value: &str) -> bool {
        value == "tai"
    }

    fn layout_for(_options: &Options) -> NetLayout {
        NetLayout::tai()
    }

    fn fits(&self, _options: &Options) -> bool {
        true
    }

    /// `startpos` or `sfen <tai SFEN>`, then moves as squares in path order
    /// (`13m12l`, `13m12l13m`); the rules are the seed's defaults with no ply cap.
    fn parse_position(
        options: &Options,
        head: &[&str],
        moves: &[&str],
    ) -> Result<Parsed<Self>, String> {
        let sanitize = crate::engine::sanitize;
        let pos = match head.first() {
            Some(&"startpos") if head.len() == 1 => shogi_tai::Position::startpos(),
            Some(&"sfen") => shogi_tai::Position::from_sfen(&head[1..].join(" "))
                .map_err(|e| sanitize(&e.to_string()))?,
            _ => return Err("expected 'startpos' or 'sfen <sfen>'".into()),
        };
        let rules = TaiRules {
            max_plies: ply_cap(options, pos.move_number(), moves.len()),
            ..TaiRules::default()
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
            game.play(mv);
            played.push(mv);
        }
        Ok((game, key, played))
    }

    fn move_number(&self) -> u32 {
        self.position().move_number()
    }
}

/// The game's ply cap (counted from the `position` command's start) for the
/// `MaxMovesToDraw` option, counted from move 1 of a game whose start has SFEN move number
/// `move_number`. 0 = none. A position already at or past the limit keeps one more ply
/// so that the engine still has a move to answer with (every reply scores a draw).
fn ply_cap(options: &Options, move_number: u32, played: usize) -> u32 {
    if options.max_moves_to_draw == 0 {
        return 0;
    }
    let before = u64::from(move_number.max(1) - 1);
    let cap = options.max_moves_to_draw.saturating_sub(before);
    cap.max(played as u64 + 1).min(u64::from(u32::MAX)) as u32
}

//! [`UsiGame`]: what the USI engine needs from a game, so one protocol loop plays
//! standard shogi and minishogi (`ShogiGame`, switched by `UCI_Variant`) and tai shogi
//! (`TaiGame`: bracketed SFEN positions and moves as squares in path order).

use shogi_features::{GameSpec, NetGame};
use shogi_game::{Game, GameKind};
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_tai::{TaiGame, TaiMove, TaiRules};

use crate::protocol::{join_moves, sanitize};
use shogi_rules::mate::{MateLimits, MateResult, search_mate};

/// A position parsed from a `position` command: the game, its start position's key and
/// the moves played since (for tree reuse).
pub type Parsed<G> = (G, u64, Vec<<G as Game>::Move>);

/// A game the USI engine plays. It knows nothing of the engine: positions are parsed
/// under a [`GameSpec`] (the game `UCI_Variant` names, `MaxMovesToDraw` as its ply cap).
pub trait UsiGame: NetGame {
    /// The games this type plays: the values `UCI_Variant` takes, the first the default.
    const KINDS: &'static [GameKind];

    /// Parses `position` arguments under `spec` (whose ply cap counts from move 1):
    /// `head` is `startpos` or `sfen ...`, then the moves.
    fn parse_position(
        spec: &GameSpec,
        head: &[&str],
        moves: &[&str],
    ) -> Result<Parsed<Self>, String>;

    /// From this position on, the search scores a position's second occurrence with the
    /// repetition rule's verdict (option `TwoFoldDraws`; see
    /// [`ShogiGame::set_twofold_after`]). A game whose repetition rule is its own (tai
    /// shogi) keeps it.
    fn twofold_in_search(&mut self) {}

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

/// The game's ply cap (counted from the `position` command's start) for a limit of
/// `max_moves` plies counted from move 1 of a game whose start has SFEN move number
/// `move_number`. 0 = none. A position already at or past the limit keeps one more ply
/// so that the engine still has a move to answer with (every reply scores a draw).
fn ply_cap(max_moves: u32, move_number: u32, played: usize) -> u32 {
    if max_moves == 0 {
        return 0;
    }
    let before = move_number.max(1) - 1;
    let cap = max_moves.saturating_sub(before);
    cap.max(u32::try_from(played).unwrap_or(u32::MAX).saturating_add(1))
}

//! [`UsiGame`]: what the USI engine needs from a game, so one protocol loop plays
//! standard shogi and minishogi (`ShogiGame`, switched by `UCI_Variant`: [`shogi`]) and
//! tai shogi (`TaiGame`: bracketed SFEN positions and moves as squares in path order:
//! [`tai`]). The games' other adapters are `shogi-registry`'s; these are the engine's.

use shogi_game::{Game, GameKind};
use shogi_registry::{GameSpec, NetGame};
use shogi_rules::mate::MateLimits;

mod shogi;
mod tai;

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
    /// [`ShogiGame::set_twofold_after`](shogi_rules::ShogiGame::set_twofold_after)). A
    /// game whose repetition rule is its own (tai shogi) keeps it.
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

/// The game's ply cap (counted from the `position` command's start) for a limit of
/// `max_moves` plies counted from move 1 of a game whose start has SFEN move number
/// `move_number`. 0 = none. A position already at or past the limit keeps one more ply
/// so that the engine still has a move to answer with (every reply scores a draw).
pub(crate) fn ply_cap(max_moves: u32, move_number: u32, played: usize) -> u32 {
    if max_moves == 0 {
        return 0;
    }
    let before = move_number.max(1) - 1;
    let cap = max_moves.saturating_sub(before);
    cap.max(u32::try_from(played).unwrap_or(u32::MAX).saturating_add(1))
}

/// Control characters replaced, cut at 80 characters: safe to echo in `info string`.
pub fn sanitize(s: &str) -> String {
    let mut t: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(80)
        .collect();
    if s.chars().count() > 80 {
        t.push_str("...");
    }
    t
}

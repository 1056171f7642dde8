//! Piece values in centipawns and the material a side to move can win by captures alone
//! (駒の取り合い, the exchanges pending on the board), resolved by a capture-only search.
//!
//! The values are the classical baseline's (`shogi_arena::alphabeta` evaluates with
//! them); the capture search is the network search's optional leaf correction
//! (`selfplay.leaf_capture_nodes`), which shows a leaf's hanging pieces to a search of a
//! few dozen simulations that cannot afford to visit the capture itself.

use crate::{Move, MoveList, PieceKind, Position};

/// Board values by [`PieceKind`] index (pawn .. dragon; the king 0).
pub const BOARD_VALUE_CP: [i32; PieceKind::NUM] = [
    100, 300, 350, 500, 800, 950, 550, 0, 500, 480, 480, 520, 1050, 1250,
];

/// Hand values by hand-kind index (pawn .. gold): 10% above the board value, since a
/// piece in hand can be dropped where it is needed.
pub const HAND_VALUE_CP: [i32; 7] = [110, 330, 385, 550, 880, 1045, 605];

/// What `mv` wins for the side that plays it, before any reply: the captured piece's
/// board value (the opponent loses it) plus its hand value (the mover gains it), plus
/// the promotion's gain. 0 for a quiet move.
pub fn capture_swing_cp(pos: &Position, mv: Move) -> i32 {
    let Some(from) = mv.from() else {
        return 0;
    };
    let victim = pos.piece_at(mv.to()).map_or(0, |v| {
        BOARD_VALUE_CP[v.kind.index()] + HAND_VALUE_CP[v.kind.unpromote().index()]
    });
    let promotion = match (mv.is_promotion(), pos.piece_at(from)) {
        (true, Some(p)) => {
            BOARD_VALUE_CP[p.kind.promote().index()] - BOARD_VALUE_CP[p.kind.index()]
        }
        _ => 0,
    };
    victim + promotion
}

impl Position {
    /// The material (centipawns, at least 0) the side to move wins by captures alone
    /// from here: a capture-only negamax where either side may stop capturing at any
    /// point (stand pat), over legal captures, in most-valuable-victim order, searching
    /// at most `max_nodes` captures (0 means 0).
    ///
    /// A heuristic for what a leaf's exchanges will cost, not an evaluation: checks,
    /// drops and threats other than captures are not seen, and a side in check may
    /// stand pat.
    pub fn capture_gain_cp(&self, max_nodes: usize) -> i32 {
        let mut budget = max_nodes;
        self.resolve_captures(0, i32::MAX, &mut budget)
    }

    fn resolve_captures(&self, mut alpha: i32, beta: i32, budget: &mut usize) -> i32 {
        // Standing pat gains nothing: 0 is every side's floor.
        if beta <= 0 || *budget == 0 {
            return 0;
        }
        let mut legal = MoveList::new();
        self.generate(&mut legal);
        let mut captures: Vec<(i32, Move)> = legal
            .iter()
            .filter(|mv| !mv.is_drop() && self.piece_at(mv.to()).is_some())
            .map(|&mv| (capture_swing_cp(self, mv), mv))
            .collect();
        captures.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.to_u16().cmp(&b.1.to_u16())));
        let mut best = 0;
        for (swing, mv) in captures {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            // The opponent's gain from the position after `mv`, searched in the window
            // that can still change this side's result.
            let reply = self.after(mv).resolve_captures(
                swing.saturating_sub(beta),
                swing.saturating_sub(alpha),
                budget,
            );
            let score = swing - reply;
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    fn gain(sfen: &str) -> i32 {
        Position::from_sfen(Variant::Shogi, sfen)
            .expect("valid sfen")
            .capture_gain_cp(1_000)
    }

    #[test]
    fn the_start_position_has_nothing_to_win() {
        assert_eq!(Position::startpos(Variant::Shogi).capture_gain_cp(1_000), 0);
        assert_eq!(
            Position::startpos(Variant::Minishogi).capture_gain_cp(1_000),
            0
        );
    }

    #[test]
    fn a_hanging_rook_is_won_whole() {
        // White's rook on 3c, attacked by Black's bishop on 5e, defended by nothing.
        let g = gain("4k4/9/6r2/9/4B4/9/9/9/4K4 b - 1");
        assert_eq!(
            g,
            BOARD_VALUE_CP[PieceKind::Rook.index()]
                + HAND_VALUE_CP[PieceKind::Rook.index()]
                + (BOARD_VALUE_CP[PieceKind::Horse.index()]
                    - BOARD_VALUE_CP[PieceKind::Bishop.index()]),
            "bishop takes the rook on 3c and promotes (3c is in the zone)"
        );
    }

    #[test]
    fn a_defended_piece_is_taken_only_when_the_trade_pays() {
        // White's pawn on 5d is defended by the gold on 5c; Black's rook on 5h could
        // take it, but the gold takes the rook back: Black stands pat.
        assert_eq!(gain("4k4/9/4g4/4p4/9/9/9/4R4/4K4 b - 1"), 0);
        // The same pawn attacked by Black's pawn on 5e: pawn takes pawn (+210), gold
        // takes pawn back (-210): even.
        assert_eq!(gain("4k4/9/4g4/4p4/4P4/9/9/9/4K4 b - 1"), 0);
    }

    #[test]
    fn an_undefended_piece_is_won_by_the_cheapest_safe_capture() {
        // White's silver on 5d, undefended; Black's pawn on 5e takes it.
        let g = gain("4k4/9/9/4s4/4P4/9/9/9/4K4 b - 1");
        assert_eq!(
            g,
            BOARD_VALUE_CP[PieceKind::Silver.index()] + HAND_VALUE_CP[PieceKind::Silver.index()]
        );
    }

    #[test]
    fn the_gain_never_goes_below_zero_and_respects_the_budget() {
        assert_eq!(
            gain("4k4/9/6r2/9/4B4/9/9/9/4K4 w - 1"),
            0,
            "White to move has nothing to capture"
        );
        let pos = Position::from_sfen(Variant::Shogi, "4k4/9/6r2/9/4B4/9/9/9/4K4 b - 1").unwrap();
        assert_eq!(pos.capture_gain_cp(0), 0, "no budget, no search");
    }
}

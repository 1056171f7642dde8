//! Material points for tai shogi, used to adjudicate games stopped at a ply cap.
//!
//! Tai shogi has no agreed table of piece values, and the seed gives none. A piece's value
//! here is its mobility: the squares it can reach in one move from the centre of an
//! otherwise empty board, counting only those within [`VALUE_WINDOW`] squares
//! (Chebyshev distance) of its square. The window stands in for the crowded board (177
//! pieces a side fill 57% of the squares at the start), where long slides are blocked
//! early. So a pawn is worth 1, a gold general 6, a free king 32 and a lion 24.
//!
//! Royal pieces (the emperor and crown princes) count 0: losing the last one already ends
//! the game. The value is the kind's: a piece that reached its kind by promotion counts
//! what that kind counts.

use std::sync::LazyLock;

use shogi_game::Color;

use crate::movegen::{piece_moves, spec};
use crate::pieces::{Catalogue, PieceKind};
use crate::position::{Piece, Position, SIZE, SQUARES, Square};
use crate::rules::TaiRules;

/// Chebyshev radius, in squares, of the window a piece's reach is counted in.
pub const VALUE_WINDOW: i32 = 4;

static VALUES: LazyLock<Vec<u32>> = LazyLock::new(|| {
    let rules = TaiRules::default();
    let centre = Square::new(SIZE as i32 / 2, SIZE as i32 / 2).expect("on the board");
    Catalogue::get()
        .all()
        .map(|kind| {
            if kind.is_royal() {
                return 0;
            }
            let mut board = vec![None; SQUARES];
            let piece = Piece::new(kind, Color::Black);
            board[usize::from(centre.0)] = Some(piece);
            let mut moves = Vec::new();
            piece_moves(
                &board,
                usize::from(centre.0),
                piece,
                spec(kind, &rules),
                &mut moves,
            );
            let mut reached = vec![false; SQUARES];
            for mv in moves {
                let to = mv.to();
                let near = (to.row() - centre.row())
                    .abs()
                    .max((to.col() - centre.col()).abs());
                if to != centre && near <= VALUE_WINDOW {
                    reached[usize::from(to.0)] = true;
                }
            }
            reached.iter().filter(|&&r| r).count() as u32
        })
        .collect()
});

/// The material value of a piece of `kind` (0 for royals).
pub fn kind_value(kind: PieceKind) -> u32 {
    VALUES[usize::from(kind.0)]
}

/// The material of `c` on the board: the sum of its pieces' [`kind_value`]s.
pub fn material_points(position: &Position, c: Color) -> u32 {
    position
        .pieces()
        .filter(|(_, p)| p.color == c)
        .map(|(_, p)| kind_value(p.kind))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(abbr: &str) -> u32 {
        kind_value(Catalogue::get().by_abbr(abbr).expect(abbr))
    }

    #[test]
    fn values_follow_reach() {
        assert_eq!(value("P"), 1);
        assert_eq!(value("G"), 6);
        assert_eq!(value("FK"), 32); // queen: 8 directions x 4 squares in the window
        assert_eq!(value("Ln"), 24); // every square within two
        assert_eq!(value("E"), 0);
        assert_eq!(value("CP"), 0);
        for kind in Catalogue::get().all() {
            assert_eq!(kind_value(kind) == 0, kind.is_royal(), "{}", kind.abbr());
        }
    }

    #[test]
    fn the_setup_is_even_and_captures_count() {
        let mut pos = Position::startpos();
        let black = material_points(&pos, Color::Black);
        assert_eq!(black, material_points(&pos, Color::White));
        assert_eq!(black, 1997); // a regression figure: 177 pieces, the emperor 0
        let game = crate::TaiGame::startpos(TaiRules::default());
        assert_eq!(
            shogi_game::Game::material_points(&game, Color::White),
            Some(1997)
        );
        let (sq, pawn) = pos
            .pieces()
            .find(|(_, p)| p.color == Color::White && p.kind.abbr() == "P")
            .expect("a white pawn");
        pos.set(sq, None);
        assert_eq!(material_points(&pos, Color::White), black - 1);
        assert_eq!(pawn.kind, Catalogue::get().by_abbr("P").unwrap());
    }
}

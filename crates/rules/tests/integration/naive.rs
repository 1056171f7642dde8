//! Cross-check the generator against a naive one: every pseudo-legal move made on a
//! copy, kept if the own king is not attacked; pawn drops kept unless they mate.

use proptest::prelude::*;
use shogi_rules::{Bitboard, Move, PieceKind, Position, Square, Variant, piece_attacks};
use shogi_testkit::pick;

fn last_ranks(pos: &Position, us: shogi_rules::Color, n: u8) -> impl Fn(Square) -> bool {
    let size = pos.variant().size();
    move |sq: Square| match us {
        shogi_rules::Color::Black => sq.rank() < n,
        shogi_rules::Color::White => sq.rank() >= size - n,
    }
}

fn naive_moves(pos: &Position) -> Vec<Move> {
    let us = pos.side_to_move();
    let them = us.flip();
    let board = pos.board_mask();
    let own = pos.pieces(us);
    let occ = pos.occupied();
    let last1 = last_ranks(pos, us, 1);
    let last2 = last_ranks(pos, us, 2);
    let mut cands = Vec::new();
    for from in own {
        let p = pos.piece_at(from).unwrap();
        for to in piece_attacks(us, p.kind, from, occ) & board & !own {
            let can = p.kind.can_promote() && (pos.in_zone(us, from) || pos.in_zone(us, to));
            let dead = match p.kind {
                PieceKind::Pawn | PieceKind::Lance => last1(to),
                PieceKind::Knight => last2(to),
                _ => false,
            };
            if can {
                cands.push(Move::normal(from, to, true));
            }
            if !dead {
                cands.push(Move::normal(from, to, false));
            }
        }
    }
    let empty = board & !occ;
    for k in PieceKind::HAND {
        if pos.hand(us)[k.index()] == 0 {
            continue;
        }
        for to in empty {
            let dead = match k {
                PieceKind::Pawn | PieceKind::Lance => last1(to),
                PieceKind::Knight => last2(to),
                _ => false,
            };
            if dead {
                continue;
            }
            if k == PieceKind::Pawn {
                let nifu = (0..pos.variant().size()).any(|r| {
                    pos.piece_at(Square::new(to.file(), r))
                        .is_some_and(|p| p.color == us && p.kind == PieceKind::Pawn)
                });
                if nifu {
                    continue;
                }
            }
            cands.push(Move::drop(k, to));
        }
    }
    cands
        .into_iter()
        .filter(|&mv| {
            let after = pos.after(mv);
            if !after.attackers_to(after.king_square(us), them).is_empty() {
                return false;
            }
            !(mv.drop_kind() == Some(PieceKind::Pawn) && after.is_checkmate())
        })
        .collect()
}

/// Where the generator puts a move: king moves, then the pieces by kind group (pawn,
/// lance, knight, silver, bishop, rook, the gold-movers, horse, dragon) and square, each
/// piece's targets by square with the promotion first, then drops by kind and square.
/// A search's tree, and so every self-play game, depends on this order.
fn generator_order(pos: &Position, mv: Move) -> (u8, usize, usize, bool) {
    if let Some(kind) = mv.drop_kind() {
        return (10, kind.index(), mv.to().index(), false);
    }
    let from = mv.from().expect("a board move");
    let group = match pos.piece_at(from).expect("a piece moves").kind {
        PieceKind::King => 0,
        PieceKind::Pawn => 1,
        PieceKind::Lance => 2,
        PieceKind::Knight => 3,
        PieceKind::Silver => 4,
        PieceKind::Bishop => 5,
        PieceKind::Rook => 6,
        PieceKind::Horse => 8,
        PieceKind::Dragon => 9,
        _ => 7,
    };
    let from = if group == 0 { 0 } else { from.index() };
    (group, from, mv.to().index(), !mv.is_promotion())
}

/// The generator's list, its count and its yes/no against the naive list, in the
/// generator's documented order (so that a faster way to find the same moves, such as
/// the evasions found from the answer squares, cannot reorder them).
fn compare(pos: &Position) {
    let a: Vec<Move> = pos.legal_moves().iter().copied().collect();
    let mut b = naive_moves(pos);
    b.sort_by_key(|&mv| generator_order(pos, mv));
    assert_eq!(a, b, "{pos}");
    assert_eq!(pos.legal_move_count(), a.len(), "count in {pos}");
    assert_eq!(pos.has_legal_move(), !a.is_empty(), "any in {pos}");
}

/// [`compare`] on `pos` and on the position after each of its checks (the mate
/// search's defender: evasions from one or two checkers, near and far).
fn compare_with_checks(pos: &Position) {
    compare(pos);
    for &mv in pos.checking_moves(&pos.check_info()).iter() {
        compare(&pos.after(mv));
    }
}

fn walk(variant: Variant, seed: u64, plies: usize) {
    let mut rng = seed | 1;
    let mut pos = Position::startpos(variant);
    for _ in 0..plies {
        compare_with_checks(&pos);
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let mv = pick(&mut rng, &moves);
        pos.play_unchecked(mv);
    }
}

#[test]
fn table_positions_match_naive() {
    for line in include_str!("../data/perft.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if f.len() != 4 {
            continue;
        }
        let v = if f[0] == "shogi" {
            Variant::Shogi
        } else {
            Variant::Minishogi
        };
        let pos = Position::from_sfen(v, f[2]).unwrap();
        compare(&pos);
        for mv in pos.legal_moves().iter() {
            compare_with_checks(&pos.after(*mv));
        }
    }
}

#[test]
fn pinned_rook_on_diagonal() {
    let p = Position::from_sfen(Variant::Minishogi, "4k/2bPs/PRb1R/K4/3g1 b Gs 53").unwrap();
    assert!(!p.legal_moves().iter().any(|m| m.to_string() == "4c4e"));
    compare(&p);
    let q = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/9/2b6/3R5/4K4/9 b - 1").unwrap();
    assert!(
        !q.legal_moves()
            .iter()
            .any(|m| m.from() == Some(Square::new(5, 6)))
    );
    compare(&q);
    let _ = Bitboard::EMPTY;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_games_match_naive_shogi(seed in any::<u64>()) {
        walk(Variant::Shogi, seed, 200);
    }
    #[test]
    fn random_games_match_naive_minishogi(seed in any::<u64>()) {
        walk(Variant::Minishogi, seed, 150);
    }
}

//! The policy index is a bijection between legal moves and indices (with its inverse),
//! the mirror is a symmetry of the rules, and hand-written planes for known positions.

use rand::prelude::*;
use rand_chacha::ChaCha8Rng;
use shogi_features::*;
use shogi_rules::{Color, Move, Position, Variant};
use shogi_testkit::mirror_sfen;
use std::collections::{HashMap, HashSet};

/// Positions from random playouts (restarting at game end), many with pieces in hand.
fn random_positions(variant: Variant, count: usize, seed: u64) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    let mut pos = Position::startpos(variant);
    let mut plies = 0;
    while out.len() < count {
        let moves = pos.legal_moves();
        if moves.is_empty() || plies > 300 {
            pos = Position::startpos(variant);
            plies = 0;
            continue;
        }
        // Prefer captures and drops now and then so hands fill up.
        let mv = moves[rng.random_range(0..moves.len())];
        pos.play_unchecked(mv);
        plies += 1;
        out.push(pos.clone());
    }
    out
}

fn check_bijection(variant: Variant, count: usize) {
    let mut total = 0;
    for pos in random_positions(variant, count, 7) {
        let side = pos.side_to_move();
        let mut seen: HashMap<usize, Move> = HashMap::new();
        for &mv in pos.legal_moves().iter() {
            let idx = policy_index(variant, side, mv)
                .unwrap_or_else(|| panic!("{mv} in {} has no index", pos.to_sfen()));
            assert!(idx < policy_size(variant));
            if let Some(prev) = seen.insert(idx, mv) {
                panic!("{prev} and {mv} share index {idx} in {}", pos.to_sfen());
            }
            assert_eq!(
                move_from_policy_index(variant, side, idx),
                Some(mv),
                "inverse of {mv} (index {idx}) in {}",
                pos.to_sfen()
            );
            total += 1;
        }
    }
    assert!(total > count, "too few moves checked: {total}");
}

#[test]
fn shogi_policy_index_is_a_bijection_on_legal_moves() {
    check_bijection(Variant::Shogi, 3000);
}

#[test]
fn minishogi_policy_index_is_a_bijection_on_legal_moves() {
    check_bijection(Variant::Minishogi, 3000);
}

#[test]
fn sizes_follow_alphazero() {
    assert_eq!(policy_planes(Variant::Shogi), 139);
    assert_eq!(policy_size(Variant::Shogi), 11_259);
    assert_eq!(policy_planes(Variant::Minishogi), 69);
    assert_eq!(input_planes(Variant::Shogi, FeatureSet::Pieces), 47);
    assert_eq!(input_planes(Variant::Minishogi, FeatureSet::Pieces), 35);
}

#[test]
fn hand_computed_indices() {
    let pos = Position::startpos(Variant::Shogi);
    let idx = |p: &Position, s: &str| {
        let mv = p.parse_usi_move(s).unwrap();
        policy_index(p.variant(), p.side_to_move(), mv).unwrap()
    };
    // 7g7f: origin file 7 rank g = grid (6, 6); north, distance 1: plane 0.
    assert_eq!(idx(&pos, "7g7f"), 6 * 9 + 6);
    // White's mirror-image move 3c3d lands on the same index (the board is turned).
    let mut after = pos.clone();
    after.play_unchecked(after.parse_usi_move("7g7f").unwrap());
    assert_eq!(idx(&after, "3c3d"), 6 * 9 + 6);
    // 8h2b+ after 7g7f 3c3d: north-west 6, promoted: plane 66 + 7*8 + 5 = 127.
    after.play_unchecked(after.parse_usi_move("3c3d").unwrap());
    assert_eq!(idx(&after, "8h2b+"), 127 * 81 + 7 * 9 + 7);
    // A pawn drop on 5e: drop plane 132 at the destination (4, 4).
    let drop = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/9/9/9/9/4K4 b P 1").unwrap();
    assert_eq!(idx(&drop, "P*5e"), 132 * 81 + 4 * 9 + 4);
    // Knight from 8i to 7g: towards file 1, so grid column -1: plane 64 at (8, 7).
    let knight = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/9/9/9/9/1N2K4 b - 1").unwrap();
    assert_eq!(idx(&knight, "8i7g"), 64 * 81 + 8 * 9 + 7);
}

fn check_mirror(variant: Variant) {
    for pos in random_positions(variant, 1500, 11) {
        let mirrored = Position::from_sfen(variant, &mirror_sfen(&pos.to_sfen()))
            .unwrap_or_else(|e| panic!("mirror of {}: {e}", pos.to_sfen()));
        let side = pos.side_to_move();
        let ours: HashSet<usize> = pos
            .legal_moves()
            .iter()
            .map(|&mv| mirror_policy_index(variant, policy_index(variant, side, mv).unwrap()))
            .collect();
        let theirs: HashSet<usize> = mirrored
            .legal_moves()
            .iter()
            .map(|&mv| policy_index(variant, side, mv).unwrap())
            .collect();
        assert_eq!(ours, theirs, "mirror of {}", pos.to_sfen());
        // Mirroring twice is the identity.
        for &i in &ours {
            assert_eq!(
                mirror_policy_index(variant, mirror_policy_index(variant, i)),
                i
            );
        }
    }
}

#[test]
fn shogi_mirror_maps_legal_moves_to_legal_moves() {
    check_mirror(Variant::Shogi);
}

#[test]
fn minishogi_mirror_maps_legal_moves_to_legal_moves() {
    check_mirror(Variant::Minishogi);
}

fn plane(buf: &[f32], variant: Variant, p: usize) -> Vec<Vec<f32>> {
    let n = variant.size() as usize;
    (0..n)
        .map(|r| buf[p * n * n + r * n..p * n * n + (r + 1) * n].to_vec())
        .collect()
}

#[test]
fn golden_planes_minishogi_start() {
    // rbsgk/4p/5/P4/KGSBR b: Black's pawn on 5d, i.e. file 5 rank d -> grid (3, 4).
    let v = Variant::Minishogi;
    let pos = Position::startpos(v);
    let mut buf = vec![0.0; input_planes(v, FeatureSet::Pieces) * 25];
    encode(&pos, FeatureSet::Pieces, 0, 0, &mut buf);
    let own_pawn = plane(&buf, v, 0);
    let mut expected = vec![vec![0.0; 5]; 5];
    expected[3][4] = 1.0;
    assert_eq!(own_pawn, expected);
    // Own king (kind index 5 in minishogi's list) on 5e: (4, 4).
    let own_king = plane(&buf, v, 5);
    let mut expected = vec![vec![0.0; 5]; 5];
    expected[4][4] = 1.0;
    assert_eq!(own_king, expected);
    // Opponent pawn (plane 10) on 1b: file 1 rank b -> (1, 0).
    let their_pawn = plane(&buf, v, 10);
    let mut expected = vec![vec![0.0; 5]; 5];
    expected[1][0] = 1.0;
    assert_eq!(their_pawn, expected);
    // No hands, no repetition, Black to move, ply 0: the last 13 planes are zero.
    assert!(buf[20 * 25..].iter().all(|&x| x == 0.0));
}

#[test]
fn golden_planes_white_to_move_sees_a_turned_board() {
    let v = Variant::Minishogi;
    // After 1. 5d5c (Black's pawn forward) it is White's move; White's own pawn is on 1b,
    // which White sees at grid (3, 4), exactly where Black saw its own pawn.
    let mut pos = Position::startpos(v);
    pos.play_unchecked(pos.parse_usi_move("5d5c").unwrap());
    assert_eq!(pos.side_to_move(), Color::White);
    let mut buf = vec![0.0; input_planes(v, FeatureSet::Pieces) * 25];
    encode(&pos, FeatureSet::Pieces, 2, 256, &mut buf);
    let mut expected = vec![vec![0.0; 5]; 5];
    expected[3][4] = 1.0;
    assert_eq!(plane(&buf, v, 0), expected);
    // Black's pawn, now the opponent's, on 5c: turned, (2, 0).
    let mut expected = vec![vec![0.0; 5]; 5];
    expected[2][0] = 1.0;
    assert_eq!(plane(&buf, v, 10), expected);
    // Repetition planes for 2 earlier occurrences: 1, 1, 0; colour 1; ply 256/512.
    let base = 30;
    let value = |p: usize| buf[p * 25];
    assert_eq!(
        [value(base), value(base + 1), value(base + 2)],
        [1.0, 1.0, 0.0]
    );
    assert_eq!(value(base + 3), 1.0);
    assert_eq!(value(base + 4), 0.5);
}

#[test]
fn golden_hand_planes() {
    let v = Variant::Shogi;
    let pos = Position::from_sfen(v, "4k4/9/9/9/9/9/9/9/4K4 b 2P2br 1").unwrap();
    let mut buf = vec![0.0; input_planes(v, FeatureSet::Pieces) * 81];
    encode(&pos, FeatureSet::Pieces, 0, 0, &mut buf);
    let at = |p: usize| buf[p * 81 + 40];
    // Own hand planes 28..35: pawn 2/18; opponent hand 35..42: bishop 2/2, rook 1/2.
    assert_eq!(at(28), 2.0 / 18.0);
    assert_eq!(at(35 + 5), 1.0);
    assert_eq!(at(35 + 6), 0.5);
    assert_eq!(at(29), 0.0);
}

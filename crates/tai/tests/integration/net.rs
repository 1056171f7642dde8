//! The network side: every legal move has a policy index in range, distinct moves get
//! distinct indices (except the documented hook collision), and the encoding sees the
//! board from the side to move.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shogi_game::{Color, Game};
use shogi_tai::net::{POLICY_SIZE, encode, input_planes, policy_index};
use shogi_tai::{Catalogue, Position, Square, TaiGame, TaiMove, TaiRules};

#[test]
fn policy_indices_are_in_range_and_distinct_over_random_games() {
    let mut rng = StdRng::seed_from_u64(77);
    let mut positions = 0;
    let mut hook_collisions = 0;
    let mut moves_seen = 0;
    for _ in 0..3 {
        let mut game = TaiGame::startpos(TaiRules {
            max_plies: 600,
            ..TaiRules::default()
        });
        let mut moves = Vec::new();
        while game.outcome().is_none() {
            moves.clear();
            game.legal_moves(&mut moves);
            let mut seen: HashMap<usize, TaiMove> = HashMap::new();
            for &mv in &moves {
                let idx = policy_index(&game, mv).unwrap_or_else(|| panic!("no index for {mv}"));
                assert!(idx < POLICY_SIZE);
                if let Some(other) = seen.insert(idx, mv) {
                    // Only two hook movers arriving on one square along one direction
                    // may share an entry.
                    let plane = idx / 625;
                    assert!(plane >= 298, "{mv} and {other} share plane {plane}");
                    assert_eq!(mv.to(), other.to());
                    assert_ne!(mv.from(), other.from());
                    hook_collisions += 1;
                }
            }
            moves_seen += moves.len();
            positions += 1;
            let mv = moves[rng.random_range(0..moves.len())];
            game.play_unchecked(mv);
        }
    }
    eprintln!("{positions} positions, {moves_seen} moves, {hook_collisions} hook collisions");
    assert!(positions > 500);
    assert!(hook_collisions * 1000 <= moves_seen, "collisions stay rare");
}

#[test]
fn both_sides_see_the_point_symmetric_setup_alike() {
    let black = TaiGame::startpos(TaiRules::default());
    let mut pos = Position::startpos();
    pos.set_side_to_move(Color::White);
    let white = TaiGame::new(pos, TaiRules::default());
    let mut a = vec![0.0; input_planes() * 625];
    let mut b = a.clone();
    encode(&black, 0, false, &mut a);
    encode(&white, 0, false, &mut b);
    assert_eq!(a, b);
    // 177 own and 177 enemy pieces, one plane of ones.
    let ones = a.iter().filter(|&&x| x == 1.0).count();
    assert_eq!(ones, 2 * 177 + 625);
    // Each Black move and its rotation for White have the same index.
    let mut moves = Vec::new();
    black.legal_moves(&mut moves);
    for mv in moves {
        let rot = |s: Square| s.rotate();
        let vias: Vec<Square> = mv.vias().map(rot).collect();
        let turned = TaiMove::with_vias(rot(mv.from()), &vias, rot(mv.to())).unwrap();
        assert_eq!(
            policy_index(&black, mv),
            policy_index(&white, turned),
            "{mv}"
        );
    }
}

/// The exchanges feature set's two planes: a free pawn is the side to move's gain on its
/// square and, with the other side to move, the threat on it, at the same scale, each
/// seen from the side to move.
#[test]
fn the_exchange_planes_mark_what_each_side_wins() {
    use shogi_tai::net::{EXCHANGE_SCALE, planes_for};
    let kind = |abbr| Catalogue::get().by_abbr(abbr).unwrap();
    let mut pos = Position::empty();
    for (abbr, sq, color) in [
        ("R", "13m", Color::Black),
        ("P", "10f", Color::White),
        ("CP", "25y", Color::Black),
        ("CP", "1a", Color::White),
    ] {
        pos.set(
            Square::parse(sq).unwrap(),
            Some(shogi_tai::Piece::new(kind(abbr), color)),
        );
    }
    let planes = planes_for(true);
    assert_eq!(planes, input_planes() + 2);
    let pawn = shogi_tai::material::kind_value(kind("P")) as f32 / EXCHANGE_SCALE;
    let encoded = |to_move: Color, pos: &Position| {
        let mut pos = pos.clone();
        pos.set_side_to_move(to_move);
        let mut out = vec![0.0; planes * 625];
        encode(&TaiGame::new(pos, TaiRules::default()), 0, true, &mut out);
        out
    };
    // The rook on file 13 does not reach 10f; on 10m it does.
    let quiet = encoded(Color::Black, &pos);
    assert!(quiet[input_planes() * 625..].iter().all(|&x| x == 0.0));
    pos.set(Square::parse("13m").unwrap(), None);
    pos.set(
        Square::parse("10m").unwrap(),
        Some(shogi_tai::Piece::new(kind("R"), Color::Black)),
    );
    let pawn_sq = Square::parse("10f").unwrap();
    let cell = |sq: Square| usize::from(sq.0);
    let black = encoded(Color::Black, &pos);
    let gain = &black[input_planes() * 625..(input_planes() + 1) * 625];
    assert_eq!(gain[cell(pawn_sq)], pawn);
    assert_eq!(gain.iter().filter(|&&x| x != 0.0).count(), 1);
    assert!(
        black[(input_planes() + 1) * 625..]
            .iter()
            .all(|&x| x == 0.0)
    );
    let white = encoded(Color::White, &pos);
    let threat = &white[(input_planes() + 1) * 625..];
    assert_eq!(threat[cell(pawn_sq.rotate())], pawn, "seen from White");
    assert_eq!(threat.iter().filter(|&&x| x != 0.0).count(), 1);
}

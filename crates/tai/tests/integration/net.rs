//! The network side: every legal move has a policy index in range, distinct moves get
//! distinct indices (except the documented hook collision), and the encoding sees the
//! board from the side to move.

use std::collections::HashMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shogi_game::{Color, Game};
use shogi_tai::net::{POLICY_SIZE, encode, input_planes, policy_index};
use shogi_tai::{Position, Square, TaiGame, TaiMove, TaiRules};

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
    encode(&black, 0, &mut a);
    encode(&white, 0, &mut b);
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

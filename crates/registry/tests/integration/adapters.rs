//! Each game's adapters against each other: the network's sparse planes are its dense
//! planes.

use std::collections::HashSet;

use rand::prelude::*;
use rand_chacha::ChaCha8Rng;
use shogi_features::SparsePlanes;
use shogi_registry::NetGame;
use shogi_rules::Variant;

/// Tai shogi writes its planes sparsely, and the sparse planes are the dense ones: one
/// entry a piece and one a promotion mark, the ones plane filled, the move-number plane
/// filled once a move is played; standard shogi and minishogi write dense planes only.
#[test]
fn tai_sparse_planes_are_its_dense_planes_and_shogi_has_none() {
    use shogi_game::Game;
    use shogi_tai::{TaiGame, TaiRules};

    let mut game = TaiGame::startpos(TaiRules::default());
    let layout = NetGame::layout(&game);
    let exchanges = shogi_registry::layout_with(
        shogi_game::GameKind::Tai,
        shogi_features::FeatureSet::Exchanges,
    )
    .unwrap();
    assert_eq!(exchanges.input_planes, layout.input_planes + 2);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut moves = Vec::new();
    let mut exchange_cells = 0;
    for ply in 0..40 {
        // The sparse planes written out are the dense ones, with and without the
        // exchange planes (the same pieces, and the exchanges after them).
        let planes = |layout: &shogi_features::NetLayout| {
            let mut sparse = SparsePlanes::default();
            assert!(game.encode_sparse(layout, &mut sparse));
            let mut dense = vec![f32::NAN; layout.input_size()];
            game.encode_planes(layout, &mut dense);
            let mut written = vec![f32::NAN; layout.input_size()];
            sparse.write_dense(layout.board * layout.board, &mut written);
            assert_eq!(dense, written, "ply {ply}, {} planes", layout.input_planes);
            (sparse, dense)
        };
        let (_, dense) = planes(&exchanges);
        exchange_cells += dense[layout.input_size()..]
            .iter()
            .filter(|&&x| x != 0.0)
            .count();
        let (sparse, _) = planes(&layout);
        let pieces = game.position().pieces().count();
        let promoted = game.position().pieces().filter(|(_, p)| p.promoted).count();
        assert_eq!(sparse.entries.len(), pieces + promoted, "ply {ply}");
        let distinct: HashSet<u32> = sparse.entries.iter().map(|&(i, _)| i).collect();
        assert_eq!(distinct.len(), sparse.entries.len());
        assert_eq!(
            sparse.fills.len(),
            if ply == 0 { 1 } else { 2 },
            "ply {ply}"
        );
        moves.clear();
        game.legal_moves(&mut moves);
        game.play_unchecked(moves[rng.random_range(0..moves.len())]);
    }
    assert!(exchange_cells > 0, "random play leaves pieces to win");
    for variant in [Variant::Shogi, Variant::Minishogi] {
        let game = shogi_rules::ShogiGame::startpos(variant);
        let mut sparse = SparsePlanes::default();
        assert!(!game.encode_sparse(&game.layout(), &mut sparse));
    }
}

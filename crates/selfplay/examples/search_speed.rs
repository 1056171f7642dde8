//! Simulations per second of the search itself on shogi and minishogi: one thread, the
//! uniform evaluator called directly (no service, no network), so the figure is the cost
//! of selection, expansion (legal move generation), play and backup.
//!
//! `cargo run --release -p shogi-selfplay --example search_speed [-- SIMULATIONS]`

use std::time::Instant;

use shogi_game::Game;
use shogi_mcts::{RootSelection, Search, SearchConfig, SearchLimits, UniformEvaluator};
use shogi_rules::{ShogiGame, Variant};

fn main() {
    let sims: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    for variant in [Variant::Shogi, Variant::Minishogi] {
        for (name, root) in [
            ("puct", RootSelection::Puct),
            ("gumbel", RootSelection::Gumbel),
        ] {
            let config = SearchConfig {
                root_selection: root,
                tree_batch: 8,
                ..SearchConfig::default()
            };
            let mut search = Search::new(config, 1);
            let mut game = ShogiGame::startpos(variant);
            let (mut total, start) = (0u64, Instant::now());
            // A few moves of a game, so positions vary and tree reuse is exercised.
            for _ in 0..6 {
                let r = search
                    .search(
                        &game,
                        &UniformEvaluator::default(),
                        &SearchLimits::simulations(sims),
                    )
                    .expect("uniform evaluator never fails");
                total += u64::from(r.simulations);
                let mv = r.best_move.expect("not terminal");
                game.play_unchecked(mv);
                search.advance(mv);
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{:<9} {:<6} {total} simulations in {secs:.2} s: {:.0} simulations/s",
                variant.name(),
                name,
                total as f64 / secs
            );
        }
    }
}

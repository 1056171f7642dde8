//! Test fixture for the checks that selection's fast paths equal the Gumbel paper's
//! formulas (`crate::gumbel`): a searched tic-tac-toe tree whose priors and values come
//! from the position's key, and each expanded node's inputs to the formulas.

use shogi_game::Game;

use super::Search;
use crate::toy::TicTacToe;
use crate::{FnEvaluator, SearchConfig, SearchLimits, Wdl};

/// A tree of `simulations` simulations from the empty board (Gumbel root and the
/// deterministic interior, `gumbel_rescale_q` as given).
pub(super) fn searched_tree(rescale: bool, simulations: u32, seed: u64) -> Search<TicTacToe> {
    let evaluator = FnEvaluator::new(|g: &TicTacToe, moves: &[<TicTacToe as Game>::Move]| {
        let k = g.key();
        let priors: Vec<f32> = (0..moves.len())
            .map(|i| 1.0 + ((k >> (i % 60)) & 7) as f32)
            .collect();
        let sum: f32 = priors.iter().sum();
        let win = (k % 97) as f32 / 97.0 * 0.6 + 0.1;
        (
            priors.into_iter().map(|p| p / sum).collect(),
            Wdl::new(win, 0.2, 0.8 - win),
        )
    });
    let config = SearchConfig {
        simulations,
        gumbel_rescale_q: rescale,
        ..SearchConfig::default()
    };
    let mut search = Search::new(config, seed);
    search
        .search(
            &TicTacToe::new(),
            &evaluator,
            &SearchLimits::simulations(simulations),
        )
        .unwrap();
    search
}

/// What the formulas take at `node`, from its chooser's view.
pub(super) struct NodeInputs {
    pub(super) priors: Vec<f32>,
    pub(super) q: Vec<Option<f32>>,
    pub(super) visits: Vec<u32>,
    pub(super) v_pi: f32,
}

/// The formulas' inputs at `node`, or `None` when it has no children.
pub(super) fn node_inputs(search: &Search<TicTacToe>, node: usize) -> Option<NodeInputs> {
    let n = &search.nodes[node];
    if n.num_children == 0 {
        return None;
    }
    let c = n.to_move;
    let children = n.children();
    Some(NodeInputs {
        priors: children.clone().map(|i| search.nodes[i].prior).collect(),
        q: children
            .clone()
            .map(|i| search.nodes[i].q_for(c, search.draw_black))
            .collect(),
        visits: children.map(|i| search.nodes[i].visits).collect(),
        v_pi: n.nn_value_for(c),
    })
}

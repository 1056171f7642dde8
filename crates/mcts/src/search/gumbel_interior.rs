//! Gumbel's deterministic interior selection (Danihelka et al. 2022, appendix): the child
//! maximising pi'(a) - N(a) / (1 + sum_b N(b)), pi' = softmax(logit(prior) +
//! sigma(completed Q)), with in-flight visits counted as virtual loss.
//!
//! Every unvisited child has the same completed Q (v_mix), so its pi' is its prior times
//! one shared factor; only the children with a value need an exponential, and no
//! logarithm is taken. This runs at every interior node of every simulation. The
//! untouched children (no visit, none in flight, no proven value) come after the
//! touched ones, highest prior first ([`Search::order_children`]): their pi' weights
//! sum to the shared factor times their prior mass (1 less the touched children's), and
//! the first of them scores best among them, so only the touched children and that one
//! are read.

use shogi_game::Game;

use super::Search;
use crate::gumbel;

impl<G: Game> Search<G> {
    /// The child of `node` (an arena index) that the deterministic Gumbel interior
    /// selects. Equal to the formulas of [`gumbel::improved_policy`] over every child up
    /// to float rounding (a test checks it on searched trees).
    pub(super) fn select_gumbel_interior(&mut self, node: usize) -> usize {
        let mut w = std::mem::take(&mut self.sigma_scratch);
        let all = self.nodes[node].children();
        let touched = all.start..self.touched_end(node);
        let frontier = (touched.end < all.end).then_some(touched.end);
        let mix = self.children_q_in(node, touched.clone(), &mut w);
        let v_mix = mix.v_mix;
        let any_unvisited = mix.any_unvisited || frontier.is_some();
        // sigma(q) - sigma(v_mix) = scale * (q - v_mix) (over the span when rescaled).
        let mut scale = mix.sigma_scale(&self.config);
        if self.config.gumbel_rescale_q {
            let (mut lo, mut hi) = (mix.lo, mix.hi);
            if any_unvisited {
                lo = lo.min(v_mix);
                hi = hi.max(v_mix);
            }
            scale /= (hi - lo).max(1e-8);
        }
        // The largest exponent, so that no weight overflows: the greatest Q's (-inf when
        // no child has one), or the unvisited children's 0.
        let mut top = scale * (mix.hi - v_mix);
        if any_unvisited {
            top = top.max(0.0);
        }
        let unvisited_factor = (-top).exp();
        let (mut sum, mut touched_prior) = (0.0f32, 0.0f32);
        for (x, i) in w.iter_mut().zip(touched.clone()) {
            let prior = self.nodes[i].prior.max(gumbel::MIN_PRIOR);
            touched_prior += self.nodes[i].prior;
            *x = if x.is_nan() {
                prior * unvisited_factor
            } else {
                prior * (scale * (*x - v_mix) - top).exp()
            };
            sum += *x;
        }
        // The untouched children's weights: the priors sum to 1 over all children.
        let frontier_weight = frontier.map(|f| {
            let prior = self.nodes[f].prior.max(gumbel::MIN_PRIOR);
            (
                prior * unvisited_factor,
                (1.0 - touched_prior).max(prior) * unvisited_factor,
            )
        });
        if let Some((_, untouched_weight)) = frontier_weight {
            sum += untouched_weight;
        }
        let vl = self.config.virtual_loss;
        let effective =
            |i: usize| self.nodes[i].visits as f32 + vl * self.nodes[i].in_flight as f32;
        let total: f32 = touched.clone().map(effective).sum();
        let mut best = all.start;
        let mut best_v = f32::NEG_INFINITY;
        for (&x, i) in w.iter().zip(touched) {
            let v = x / sum - effective(i) / (1.0 + total);
            if v > best_v {
                best_v = v;
                best = i;
            }
        }
        if let (Some(f), Some((x, _))) = (frontier, frontier_weight)
            && x / sum > best_v
        {
            best = f;
        }
        self.sigma_scratch = w;
        best
    }
}

#[cfg(test)]
mod tests {
    use crate::gumbel;
    use crate::search::formula_check::{node_inputs, searched_tree};

    /// At every expanded node of searched trees (with and without rescaling, with
    /// in-flight visits set), the selection picks a child whose score under the paper's
    /// formulas (`gumbel::improved_policy`, then pi' - N / (1 + sum N)) is the best
    /// score, to float rounding.
    #[test]
    fn the_interior_selection_maximises_the_formulas_score() {
        for rescale in [false, true] {
            let mut search = searched_tree(rescale, 300, 5);
            let (mut checked, mut same) = (0, 0);
            for node in 1..search.nodes.len() {
                if search.nodes[node].num_children < 2 {
                    continue;
                }
                // Visits in flight on the touched children and the first untouched one
                // (where a selection puts them: the touched children stay a prefix).
                let end = search.touched_end(node);
                for (k, i) in search.nodes[node].children().enumerate() {
                    if i <= end {
                        search.nodes[i].in_flight = (k % 3) as u32;
                    }
                }
                let inputs = node_inputs(&search, node).expect("a node with children");
                let cfg = &search.config;
                let pi = gumbel::improved_policy(
                    &inputs.priors,
                    &inputs.q,
                    &inputs.visits,
                    inputs.v_pi,
                    cfg.gumbel_c_visit,
                    cfg.gumbel_c_scale,
                    rescale,
                );
                let children = search.nodes[node].children();
                let effective: Vec<f32> = children
                    .clone()
                    .map(|i| {
                        let c = &search.nodes[i];
                        c.visits as f32 + cfg.virtual_loss * c.in_flight as f32
                    })
                    .collect();
                let total: f32 = effective.iter().sum();
                let score: Vec<f32> = pi
                    .iter()
                    .zip(&effective)
                    .map(|(p, e)| p - e / (1.0 + total))
                    .collect();
                let best = score.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let expected = score.iter().position(|&s| s == best).unwrap();
                let chosen = search.select_gumbel_interior(node) - children.start;
                assert!(
                    (score[chosen] - best).abs() <= 1e-5,
                    "node {node}: chose {chosen} scoring {}, best {expected} scoring {best}",
                    score[chosen]
                );
                same += usize::from(chosen == expected);
                checked += 1;
            }
            assert!(checked > 10, "{checked} nodes checked");
            assert!(
                same * 10 >= checked * 9,
                "{same} of {checked} the same child"
            );
        }
    }
}

//! The Gumbel root (Danihelka et al. 2022): Gumbel-top-k sampling of the considered
//! moves and sequential halving of the simulation budget among them, with the completed
//! Q-values that both the root's selection and its improved policy use (`crate::gumbel`
//! holds the formulas).

use shogi_game::Game;

use super::Search;
use crate::{gumbel, noise};

pub(super) struct GumbelRoot {
    pub(super) g: Vec<f32>,
    pub(super) logits: Vec<f32>,
    pub(super) considered: Vec<bool>,
    pub(super) started: Vec<u32>,
    pub(super) sequence: Vec<u32>,
}

// A wrapper so `Search` can derive Debug without printing the Gumbel state.
pub(super) struct GumbelRootBox(pub(super) GumbelRoot);
impl std::fmt::Debug for GumbelRootBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GumbelRoot")
    }
}

impl<G: Game> Search<G> {
    pub(super) fn init_gumbel(&mut self, game: &G, budget: usize) {
        let range = self.nodes[0].children();
        let k = range.len();
        let needs_loss = self.config.gumbel_safety > 0.0 || self.config.gumbel_gain > 0.0;
        // What each root move loses by static exchange one ply later.
        let loss: Vec<i32> = if needs_loss {
            range
                .clone()
                .map(|i| self.nodes[i].mv.map_or(0, |mv| game.static_loss_after(mv)))
                .collect()
        } else {
            Vec::new()
        };
        // The least any move loses (nothing, if any move manages that).
        let least = loss.iter().copied().min().unwrap_or(0).max(0);
        let mut logits: Vec<f32> = range
            .clone()
            .map(|i| gumbel::logit(self.nodes[i].prior))
            .collect();
        if self.config.gumbel_safety > 0.0 {
            // The prior times exp(-safety * excess): in logits, a subtraction (the
            // softmax renormalises).
            for (logit, &l) in logits.iter_mut().zip(&loss) {
                *logit -= self.config.gumbel_safety * (l - least).max(0) as f32;
            }
        }
        if self.config.gumbel_gain > 0.0 {
            // What a move wins by static exchange (a loss below 0) raises its logit.
            for (logit, &l) in logits.iter_mut().zip(&loss) {
                *logit += self.config.gumbel_gain * (-l).max(0) as f32;
            }
        }
        let g = if self.config.gumbel_noise {
            noise::gumbel_samples(k, &mut self.rng)
        } else {
            vec![0.0; k]
        };
        let m = self.config.gumbel_considered.clamp(1, k.max(1));
        let mut considered = vec![false; k];
        // Moves that win material first (gumbel_captures), then the Gumbel top-k.
        let mut taken = 0;
        if self.config.gumbel_captures {
            for (j, i) in range.clone().enumerate() {
                if taken == m {
                    break;
                }
                if self.nodes[i].mv.is_some_and(|mv| game.wins_material(mv)) {
                    considered[j] = true;
                    taken += 1;
                }
            }
        }
        let by_score = |a: &usize, b: &usize| {
            (g[*b] + logits[*b])
                .total_cmp(&(g[*a] + logits[*a]))
                .then(a.cmp(b))
        };
        let mut order: Vec<usize> = (0..k).filter(|&j| !considered[j]).collect();
        order.sort_by(by_score);
        for &i in order.iter().take(m - taken) {
            considered[i] = true;
        }
        let sequence = gumbel::considered_visit_sequence(m, budget.min(1 << 16));
        self.gstate = Some(GumbelRootBox(GumbelRoot {
            g,
            logits,
            considered,
            started: vec![0; k],
            sequence,
        }));
    }

    /// sigma(completed Q) for the children of `node`, from the chooser's view, plus the
    /// priors in child order.
    pub(super) fn completed_sigma(&self, node: usize) -> (Vec<f32>, Vec<f32>) {
        let mut sigma = Vec::new();
        self.completed_sigma_into(node, &mut sigma);
        let priors = self.nodes[node]
            .children()
            .map(|i| self.nodes[i].prior)
            .collect();
        (sigma, priors)
    }

    /// [`Search::completed_sigma`]'s sigma written into `out` (cleared first), with no
    /// allocation once `out` has grown: selection asks for it at every Gumbel node on
    /// every simulation's path. The same float operations in the same order as
    /// [`gumbel::completed_q`] and [`gumbel::sigma`], so the values are identical.
    pub(super) fn completed_sigma_into(&self, node: usize, out: &mut Vec<f32>) {
        let mix = self.children_q_into(node, out);
        for x in out.iter_mut().filter(|x| x.is_nan()) {
            *x = mix.v_mix;
        }
        let scale = mix.sigma_scale(&self.config);
        if self.config.gumbel_rescale_q {
            let lo = out.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let span = (hi - lo).max(1e-8);
            for x in out.iter_mut() {
                *x = scale * (*x - lo) / span;
            }
        } else {
            for x in out.iter_mut() {
                *x *= scale;
            }
        }
    }

    /// Each child's Q of `node`, from the chooser's view, into `q` (cleared first; NaN
    /// where a child has none), and what completing them takes: the one pass over the
    /// children that the Gumbel root and interior share.
    pub(super) fn children_q_into(&self, node: usize, q: &mut Vec<f32>) -> QMix {
        self.children_q_in(node, self.nodes[node].children(), q)
    }

    /// [`Search::children_q_into`] over the children in `children` (the others count as
    /// unvisited: no visits, no Q).
    pub(super) fn children_q_in(
        &self,
        node: usize,
        children: std::ops::Range<usize>,
        q: &mut Vec<f32>,
    ) -> QMix {
        q.clear();
        let n = &self.nodes[node];
        let c = n.to_move;
        let (mut sum_n, mut sum_p, mut sum_pq, mut max_n) = (0.0f32, 0.0f32, 0.0f32, 0u32);
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        let mut any_unvisited = false;
        for i in children {
            let child = &self.nodes[i];
            sum_n += child.visits as f32;
            max_n = max_n.max(child.visits);
            match child.q_for(c, self.draw_black) {
                Some(value) => {
                    sum_p += child.prior;
                    sum_pq += child.prior * value;
                    lo = lo.min(value);
                    hi = hi.max(value);
                    q.push(value);
                }
                None => {
                    any_unvisited = true;
                    q.push(f32::NAN);
                }
            }
        }
        let v_pi = n.nn_value_for(c);
        let v_mix = if sum_p > 0.0 {
            (v_pi + sum_n * sum_pq / sum_p) / (1.0 + sum_n)
        } else {
            v_pi
        };
        QMix {
            v_mix,
            max_n,
            lo,
            hi,
            any_unvisited,
        }
    }
}

/// What completing a node's children's Q values takes ([`Search::children_q_into`]).
pub(super) struct QMix {
    /// The completed Q of every child without one: v_mix of the paper.
    pub(super) v_mix: f32,
    /// The most visits of a child.
    pub(super) max_n: u32,
    /// The least and greatest Q of the children that have one.
    pub(super) lo: f32,
    pub(super) hi: f32,
    /// Whether some child has no Q.
    pub(super) any_unvisited: bool,
}

impl QMix {
    /// sigma's factor, (c_visit + max_b N(b)) * c_scale.
    pub(super) fn sigma_scale(&self, config: &crate::SearchConfig) -> f32 {
        (config.gumbel_c_visit + self.max_n as f32) * config.gumbel_c_scale
    }
}

#[cfg(test)]
mod tests {
    use crate::gumbel;
    use crate::search::formula_check::{node_inputs, searched_tree};

    /// The buffer-reusing sigma that selection runs at every node equals the paper's
    /// formulas (`gumbel::completed_q` then `gumbel::sigma`) bit for bit, at every
    /// expanded node of a searched tree, with and without rescaling.
    #[test]
    fn completed_sigma_into_equals_the_formulas() {
        for rescale in [false, true] {
            let search = searched_tree(rescale, 200, 3);
            let mut checked = 0;
            let mut buffer = Vec::new();
            for node in 0..search.nodes.len() {
                let Some(inputs) = node_inputs(&search, node) else {
                    continue;
                };
                let cq =
                    gumbel::completed_q(&inputs.priors, &inputs.q, &inputs.visits, inputs.v_pi);
                let max_n = inputs.visits.iter().copied().max().unwrap_or(0);
                let cfg = &search.config;
                let expected =
                    gumbel::sigma(&cq, max_n, cfg.gumbel_c_visit, cfg.gumbel_c_scale, rescale);
                search.completed_sigma_into(node, &mut buffer);
                assert_eq!(buffer, expected, "node {node}");
                checked += 1;
            }
            assert!(checked > 10, "{checked} nodes checked");
        }
    }
}

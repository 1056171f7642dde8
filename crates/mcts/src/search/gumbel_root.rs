//! The Gumbel root (Danihelka et al. 2022): Gumbel-top-k sampling of the considered
//! moves and sequential halving of the simulation budget among them, with the completed
//! Q-values that both the root's selection and its improved policy use (`crate::gumbel`
//! holds the formulas).

use shogi_game::{Color, Game};

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
        let needs_loss = self.config.gumbel_safe
            || self.config.gumbel_safety > 0.0
            || self.config.gumbel_gain > 0.0;
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
        if self.config.gumbel_safe && taken < m {
            // The moves that lose least, best scores first, take up to half the slots.
            let mut safe: Vec<usize> = (0..k)
                .filter(|&j| !considered[j] && loss[j] <= least)
                .collect();
            safe.sort_by(by_score);
            let slots = m.div_ceil(2).min(m - taken);
            for &j in safe.iter().take(slots) {
                considered[j] = true;
                taken += 1;
            }
        }
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
        let n = &self.nodes[node];
        let c = n.to_move;
        let range = n.children();
        let priors: Vec<f32> = range.clone().map(|i| self.nodes[i].prior).collect();
        let q: Vec<Option<f32>> = range
            .clone()
            .map(|i| self.nodes[i].q_for(c, self.draw_black))
            .collect();
        let visits: Vec<u32> = range.map(|i| self.nodes[i].visits).collect();
        let v_pi = if c == Color::Black {
            n.nn_black
        } else {
            1.0 - n.nn_black
        };
        let cq = gumbel::completed_q(&priors, &q, &visits, v_pi);
        let max_n = visits.iter().copied().max().unwrap_or(0);
        let s = gumbel::sigma(
            &cq,
            max_n,
            self.config.gumbel_c_visit,
            self.config.gumbel_c_scale,
            self.config.gumbel_rescale_q,
        );
        (s, priors)
    }
}

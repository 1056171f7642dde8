//! The answer of a search: when it stops ([`Search::stop_reason`]), the move to play,
//! the root's statistics and policy target, the principal variation
//! ([`Search::finish`]); and the tree's invariants, checked by tests.

use std::sync::atomic::Ordering;
use std::time::Instant;

use rand::Rng;
use shogi_game::Game;

use super::{Search, Session};
use crate::config::RootSelection;
use crate::eval::Wdl;
use crate::gumbel;
use crate::result::{SearchResult, StopReason};
use crate::tree::{Proven, State};

impl<G: Game> Search<G> {
    pub(super) fn child_for_play(&self, node: usize) -> Option<usize> {
        let n = &self.nodes[node];
        let range = n.children();
        if range.is_empty() {
            return None;
        }
        let c = n.to_move;
        // A proven win: the fastest winning child.
        if let Proven::Win { winner, .. } = n.proven
            && winner == c
        {
            return range
                .filter(
                    |&i| matches!(self.nodes[i].proven, Proven::Win { winner: w, .. } if w == c),
                )
                .min_by_key(|&i| match self.nodes[i].proven {
                    Proven::Win { plies, .. } => plies,
                    _ => u32::MAX,
                });
        }
        // Most visited, ties to the first. Visits rank moves whose value is estimated; a
        // proven draw or loss has an exact value, so it is not played over a searched
        // move whose mean value is higher (at a few dozen simulations a strong prior can
        // give a known draw the most visits).
        let most_visited = |candidates: &mut dyn Iterator<Item = usize>| {
            candidates.fold(None, |best: Option<usize>, i| match best {
                Some(b) if self.nodes[i].visits <= self.nodes[b].visits => Some(b),
                _ => Some(i),
            })
        };
        let best = most_visited(&mut range.clone())?;
        let node = &self.nodes[best];
        if node.proven.is_known() {
            let exact = node.q_for(c, self.draw_black).unwrap_or(0.5);
            let better = most_visited(&mut range.filter(|&i| {
                let ch = &self.nodes[i];
                !ch.proven.is_known()
                    && ch.visits > 0
                    && ch.q_for(c, self.draw_black).is_some_and(|q| q > exact)
            }));
            if better.is_some() {
                return better;
            }
        }
        Some(best)
    }

    /// The root's win/draw/loss for its side to move: exact when proven, else the mean
    /// of its backed-up values.
    fn root_wdl(&self) -> Wdl {
        let root = &self.nodes[0];
        let c = root.to_move;
        if let Proven::Win { winner, .. } = root.proven {
            if winner == c { Wdl::WIN } else { Wdl::LOSS }
        } else if let Proven::Draw { .. } = root.proven {
            Wdl::DRAW
        } else if root.visits > 0 {
            let nv = root.visits as f64;
            let score = (root.score_for(c) / nv) as f32;
            let draw = (root.draw / nv) as f32;
            let win = (score - 0.5 * draw).clamp(0.0, 1.0);
            Wdl::new(win, draw, (1.0 - win - draw).max(0.0))
        } else {
            Wdl::DRAW
        }
    }

    /// Gumbel root: among the considered moves that got the most simulations, the one
    /// with the highest g + logit + sigma(completed Q) (`sigma` per root child).
    fn gumbel_choice(&self, sigma: &[f32]) -> Option<usize> {
        let gs = self.gstate.as_ref().map(|g| &g.0)?;
        let maxv = (0..sigma.len())
            .filter(|&i| gs.considered[i])
            .map(|i| gs.started[i])
            .max()
            .unwrap_or(0);
        let mut best = None;
        let mut bv = f32::NEG_INFINITY;
        for (i, &si) in sigma.iter().enumerate() {
            if gs.considered[i] && gs.started[i] == maxv {
                let v = gs.g[i] + gs.logits[i] + si;
                if best.is_none() || v > bv {
                    best = Some(i);
                    bv = v;
                }
            }
        }
        best
    }

    /// A root child drawn with probability proportional to visits^(1/tau).
    fn sample_by_visits(&mut self, visits: &[u32], tau: f32) -> usize {
        let w: Vec<f64> = visits
            .iter()
            .map(|&v| (v as f64).powf(1.0 / tau as f64))
            .collect();
        let s: f64 = w.iter().sum();
        let mut r = self.rng.random::<f64>() * s;
        let mut pick = w.len() - 1;
        for (i, x) in w.iter().enumerate() {
            if r < *x {
                pick = i;
                break;
            }
            r -= x;
        }
        pick
    }

    /// The moves the search would play from the root on, while they are visited or
    /// proven (at most 257).
    fn principal_variation(&self) -> Vec<G::Move> {
        let mut pv = Vec::new();
        let mut node = 0usize;
        while let Some(ch) = self.child_for_play(node) {
            if self.nodes[ch].visits == 0 && !self.nodes[ch].proven.is_known() {
                break;
            }
            pv.push(self.nodes[ch].mv.unwrap());
            node = ch;
            if pv.len() > 256 {
                break;
            }
        }
        pv
    }

    /// Why the running search should stop now, if it should.
    pub(super) fn stop_reason(&self, s: &Session<G>) -> Option<StopReason> {
        if self.nodes[0].state == State::Terminal {
            Some(StopReason::Terminal)
        } else if self.config.stop_when_proven && self.nodes[0].proven.is_known() {
            Some(StopReason::Proven)
        } else if s.sims >= s.budget {
            Some(StopReason::Simulations)
        } else if self.nodes.len() >= s.max_nodes {
            Some(StopReason::Nodes)
        } else if s
            .limits
            .stop
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            Some(StopReason::Stopped)
        } else if s.limits.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(StopReason::Deadline)
        } else {
            None
        }
    }

    /// The move to play and the policy target, from the root's children: the Gumbel
    /// root's choice and completed-Q target, or PUCT's visits with a move drawn at the
    /// temperature of `ply`; a proven win plays and targets its fastest win (the mate is
    /// known, not estimated).
    fn play_and_target(
        &mut self,
        ply: u32,
        moves: &[G::Move],
        visits: &[u32],
        priors: &[f32],
    ) -> (Option<G::Move>, Vec<f32>) {
        let root = &self.nodes[0];
        let (c, first, proven) = (root.to_move, root.children().start, root.proven);
        let gumbel_mode = self.config.root_selection == RootSelection::Gumbel && !moves.is_empty();
        let total: u32 = visits.iter().sum();
        let mut best_move = None;
        let mut policy_target = if gumbel_mode {
            let (s, pri) = self.completed_sigma(0);
            // The root's logits (the priors', less any `gumbel_safety` penalty).
            let gs = self.gstate.as_ref().map(|g| &g.0);
            let logit = |i: usize| gs.map_or_else(|| gumbel::logit(pri[i]), |g| g.logits[i]);
            let x: Vec<f32> = s.iter().enumerate().map(|(i, &s)| logit(i) + s).collect();
            best_move = self.gumbel_choice(&s).map(|i| moves[i]);
            gumbel::softmax(&x)
        } else if total > 0 {
            visits.iter().map(|&v| v as f32 / total as f32).collect()
        } else {
            priors.to_vec()
        };
        // Proven wins override everything; otherwise PUCT uses temperature.
        let proven_win = matches!(proven, Proven::Win { winner, .. } if winner == c);
        if proven_win || (!gumbel_mode && !moves.is_empty()) || best_move.is_none() {
            let tau = self.config.temperature_at(ply);
            if !proven_win && tau > 1e-3 && total > 0 {
                best_move = moves.get(self.sample_by_visits(visits, tau)).copied();
            } else if let Some(i) = self.child_for_play(0) {
                best_move = self.nodes[i].mv;
            }
        }
        if proven_win && let Some(i) = self.child_for_play(0) {
            policy_target = vec![0.0; moves.len()];
            policy_target[i - first] = 1.0;
        }
        (best_move, policy_target)
    }

    /// The result of the search `s`, ended for `stop_reason`.
    pub(super) fn finish(
        &mut self,
        s: &Session<G>,
        stop_reason: StopReason,
    ) -> SearchResult<G::Move> {
        let Session {
            game,
            sims,
            batches,
            collisions,
            evaluations,
            depth_sum,
            max_depth,
            is_full,
            start,
            ..
        } = s;
        let (sims, batches, collisions, evaluations, depth_sum, max_depth, is_full, start) = (
            *sims,
            *batches,
            *collisions,
            *evaluations,
            *depth_sum,
            *max_depth,
            *is_full,
            *start,
        );
        let root = &self.nodes[0];
        let c = root.to_move;
        let range = root.children();
        let moves: Vec<G::Move> = range.clone().map(|i| self.nodes[i].mv.unwrap()).collect();
        let visits: Vec<u32> = range.clone().map(|i| self.nodes[i].visits).collect();
        let priors: Vec<f32> = range.clone().map(|i| self.nodes[i].prior).collect();
        let q: Vec<Option<f32>> = range
            .clone()
            .map(|i| self.nodes[i].q_for(c, self.draw_black))
            .collect();
        let root_wdl = self.root_wdl();
        let raw = root.nn_value_for(c);
        let root_raw_wdl = Wdl::from_score(raw);
        let proven = root.proven;
        let (best_move, policy_target) = self.play_and_target(game.ply(), &moves, &visits, &priors);

        let pv = self.principal_variation();

        SearchResult {
            best_move,
            moves,
            visits,
            priors,
            q,
            policy_target,
            root_wdl,
            root_raw_wdl,
            proven,
            pv,
            max_depth,
            avg_depth: if sims > 0 {
                depth_sum as f32 / sims as f32
            } else {
                0.0
            },
            simulations: sims,
            root_visits: self.nodes[0].visits,
            nodes: self.nodes.len(),
            batches,
            collisions,
            evaluations,
            is_full_search: is_full,
            stop_reason,
            elapsed: start.elapsed(),
        }
    }
}

impl<G: Game> Search<G> {
    /// Checks tree invariants (for tests): no simulation left in flight, every expanded
    /// node's visits = 1 (own evaluation) + children's visits (more when exact values of a
    /// proven node were backed up), children point back to their parent.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        for (i, n) in self.nodes.iter().enumerate() {
            if n.in_flight != 0 || n.state == State::InFlight {
                return Err(format!("node {i} still in flight"));
            }
            if n.state == State::Expanded {
                let sum: u32 = n.children().map(|c| self.nodes[c].visits).sum();
                for c in n.children() {
                    if self.nodes[c].parent as usize != i {
                        return Err(format!(
                            "child {c} of {i} has parent {}",
                            self.nodes[c].parent
                        ));
                    }
                }
                // Below the root the touched children are a prefix, which selection
                // relies on ([`Search::touched_end`]), and PUCT reading only them and
                // the first untouched one chooses as reading every child.
                if i != 0 {
                    let end = self.touched_end(i);
                    if let Some(c) = (end..n.children().end)
                        .find(|&c| self.nodes[c].visits > 0 || self.nodes[c].proven.is_known())
                    {
                        return Err(format!("node {i}: child {c} touched after untouched {end}"));
                    }
                    let fast = self.select_puct(i, false);
                    if fast != self.select_puct_among(i, false, n.children()) {
                        return Err(format!(
                            "node {i}: PUCT chose {fast} from the prefix alone, not as from all children"
                        ));
                    }
                }
                let ok = if n.proven.is_known() {
                    n.visits > sum
                } else {
                    n.visits == sum + 1
                };
                if !ok {
                    return Err(format!(
                        "node {i}: visits {} children {sum} proven {:?}",
                        n.visits, n.proven
                    ));
                }
            }
            let s = n.black_score;
            if !(-1e-6..=n.visits as f64 + 1e-6).contains(&s) {
                return Err(format!("node {i}: score {s} visits {}", n.visits));
            }
        }
        Ok(())
    }
}

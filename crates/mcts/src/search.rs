//! Batched PUCT / Gumbel AlphaZero search over any [`Game`].
//!
//! The driver (one call, or resumable steps that hand leaves to an outside evaluator),
//! PUCT and Gumbel selection, backup and proofs. The tree's storage is in `tree`, the
//! limits and results in `result`.

use std::sync::atomic::Ordering;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_game::{Color, EndReason, Game, Outcome, adjudicate};

use crate::config::{GumbelInterior, RootSelection, SearchConfig};
use crate::eval::{EvalError, EvalRequest, Evaluator, Wdl};
use crate::noise;
pub use crate::result::{SearchError, SearchLimits, SearchResult, StopReason};
pub use crate::tree::Proven;

mod exchange;
#[cfg(test)]
mod formula_check;
mod gumbel_interior;
mod gumbel_root;
mod parallel;
mod proofs;
mod report;
mod spare;

pub use exchange::{LEAF_EXCHANGE_GAIN, raise_by_exchange};
pub use parallel::{LeafBatch, SharedProgress};

use crate::tree::{NONE, Node, State};
use gumbel_root::GumbelRootBox;

/// The longest mate (plies) the root mate search looks for: its node budget, not this,
/// is what bounds its cost.
const ROOT_MATE_MAX_PLIES: u32 = 31;

#[derive(Debug)]
struct Pending<G: Game> {
    node: u32,
    game: G,
    moves: Vec<G::Move>,
    path_start: usize,
    path_len: usize,
    priors: Vec<f32>,
    wdl: Wdl,
}

/// A selection that reached a terminal or proven node: its path (`path_len` entries of
/// `Search::path` from `path_start`) and the exact value to back up it, from Black's side
/// (expected score and draw probability).
struct ExactLeaf {
    path_start: usize,
    path_len: usize,
    black: f32,
    draw: f32,
}

enum Selected<G: Game> {
    Leaf(Pending<G>),
    Exact(ExactLeaf),
    Collision { path_start: usize, path_len: usize },
}

/// An MCTS searcher with a persistent tree (reused across moves via [`Search::advance`]).
/// One `Search` is driven by one thread; run many `Search`es on many threads that share an
/// evaluator for parallel self-play.
#[derive(Debug)]
pub struct Search<G: Game> {
    config: SearchConfig,
    nodes: Vec<Node<G::Move>>,
    root_game: Option<G>,
    noise_applied: bool,
    rng: ChaCha8Rng,
    path: Vec<u32>,
    gstate: Option<GumbelRootBox>,
    /// The running search between [`Search::begin`] and its last [`Search::step`].
    session: Option<Session<G>>,
    /// Leaves gathered by the last `step`, waiting for [`Search::provide`].
    pending: Vec<Pending<G>>,
    /// What a draw is worth to Black in this search: `SearchConfig::draw_value` seen
    /// from the root's side to move.
    draw_black: f32,
    /// Gumbel selection's sigma(completed Q) and softmax, reused across simulations.
    sigma_scratch: Vec<f32>,
    /// An expansion's children in the order they are stored ([`Search::order_children`]).
    child_order: Vec<(u32, Option<Outcome>)>,
    /// Games and move lists of finished simulations, reused by the next ones: a
    /// simulation copies the root's game into one (`Clone::clone_from` keeps the
    /// histories' allocations) instead of allocating a new game and move list.
    spare_games: Vec<G>,
    spare_moves: Vec<Vec<G::Move>>,
    /// Counts the trees this searcher has cleared: a [`LeafBatch`] of an earlier tree is
    /// dropped, not backed up into a tree that no longer has its nodes.
    epoch: u64,
}

/// What a resumable search needs next (see [`Search::begin`]).
#[derive(Debug)]
pub enum Progress<M> {
    /// Evaluate [`Search::pending_evaluations`] and call [`Search::provide`].
    Evaluate,
    /// The search is over (boxed: a result is large next to `Evaluate`).
    Done(Box<SearchResult<M>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    ExpandRoot,
    PrepareRoot,
    Simulate,
}

/// The state of one running search that lives across `step` calls.
#[derive(Debug)]
struct Session<G: Game> {
    game: G,
    limits: SearchLimits,
    start: Instant,
    budget: u32,
    /// The simulations of a full search (`budget` is fewer on a playout cap's cheap move).
    full_budget: u32,
    is_full: bool,
    max_nodes: usize,
    phase: Phase,
    batches: u32,
    sims: u32,
    collisions: u32,
    /// Leaves sent to the evaluator (simulations that did not end at an exact value).
    evaluations: u32,
    depth_sum: u64,
    max_depth: u32,
    /// Leaf batches handed to other threads ([`Search::step_detached`]) and not yet
    /// provided: the search ends only once they are back.
    outstanding: u32,
}

impl<G: Game> Session<G> {
    /// Counts one simulation that selected a path of `path_len` nodes (the root included).
    fn count_simulation(&mut self, path_len: usize) {
        let depth = (path_len - 1) as u32;
        self.depth_sum += u64::from(depth);
        self.max_depth = self.max_depth.max(depth);
        self.sims += 1;
    }
}

impl<G: Game> Search<G> {
    /// A searcher with the given config and RNG seed (noise, temperature sampling and
    /// playout-cap draws come from this seed: same seed + same evaluator = same result).
    pub fn new(config: SearchConfig, seed: u64) -> Self {
        Search {
            config,
            nodes: Vec::new(),
            root_game: None,
            noise_applied: false,
            rng: ChaCha8Rng::seed_from_u64(seed),
            path: Vec::new(),
            gstate: None,
            session: None,
            pending: Vec::new(),
            draw_black: 0.5,
            sigma_scratch: Vec::new(),
            child_order: Vec::new(),
            spare_games: Vec::new(),
            spare_moves: Vec::new(),
            epoch: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Mutable configuration (takes effect at the next `search`).
    pub fn config_mut(&mut self) -> &mut SearchConfig {
        &mut self.config
    }

    /// Nodes currently in the tree.
    pub fn tree_size(&self) -> usize {
        self.nodes.len()
    }

    /// Visits of the current root (0 for an empty tree).
    pub fn root_visits(&self) -> u32 {
        self.nodes.first().map_or(0, |n| n.visits)
    }

    /// Discards the tree (and ends a search begun with [`Search::begin`]).
    pub fn clear(&mut self) {
        self.epoch += 1;
        self.nodes.clear();
        self.root_game = None;
        self.noise_applied = false;
        self.gstate = None;
        // A running search refers to the tree: it ends with it.
        self.session = None;
        self.pending.clear();
    }

    /// Tells the searcher that `mv` was played from the current root (by either side).
    /// Keeps the subtree below `mv` when `tree_reuse` is on and the move was searched;
    /// otherwise clears the tree. The next `search` also checks the position key and ply
    /// and starts afresh if they do not match.
    pub fn advance(&mut self, mv: G::Move) {
        self.noise_applied = false;
        self.gstate = None;
        let Some(mut game) = self.root_game.take() else {
            self.clear();
            return;
        };
        if !self.config.tree_reuse || self.nodes.is_empty() {
            self.clear();
            return;
        }
        let child = self.nodes[0]
            .children()
            .find(|&i| self.nodes[i].mv == Some(mv));
        let Some(child) = child else {
            self.clear();
            return;
        };
        // Only an expanded child has a subtree worth keeping (a leaf proven by the leaf
        // mate search is terminal in the tree, not in the game, and must be searched anew).
        if self.nodes[child].state != State::Expanded {
            self.clear();
            return;
        }
        game.play_unchecked(mv);
        // Compact the subtree into a fresh arena (breadth first, children stay contiguous).
        let mut new: Vec<Node<G::Move>> = Vec::new();
        let mut root = self.nodes[child].clone();
        root.parent = NONE;
        root.mv = None;
        new.push(root);
        let mut queue = std::collections::VecDeque::from([(child, 0usize)]);
        while let Some((old, ni)) = queue.pop_front() {
            let range = self.nodes[old].children();
            if range.is_empty() {
                continue;
            }
            let first = new.len();
            for (k, oc) in range.enumerate() {
                let mut c = self.nodes[oc].clone();
                c.parent = ni as u32;
                new.push(c);
                queue.push_back((oc, first + k));
            }
            new[ni].first_child = first as u32;
        }
        self.nodes = new;
        self.root_game = Some(game);
    }

    /// Runs one search from `game` and returns the chosen move and statistics.
    ///
    /// Visit accounting: a simulation is one leaf playout below the root (the root's own
    /// evaluation is not one). On a fresh tree, after the call
    /// `sum(result.visits) == result.simulations` and `root_visits == simulations + 1`.
    /// With a reused tree the counts include the reused visits:
    /// `sum(visits) == root_visits - 1` and `root_visits == reused root visits + simulations`.
    /// (Once a non-root node is proven, simulations reaching it back up its exact value
    /// without descending, so below the root a proven node can have more visits than
    /// 1 + its children's.)
    ///
    /// Blocks while the evaluator does. Reuses the tree if `game` is the position the tree
    /// was advanced to (same key and ply), else starts a new tree.
    pub fn search<E: Evaluator<G> + ?Sized>(
        &mut self,
        game: &G,
        evaluator: &E,
        limits: &SearchLimits,
    ) -> Result<SearchResult<G::Move>, SearchError> {
        self.begin(game, limits.clone());
        loop {
            match self.step() {
                Progress::Done(result) => return Ok(*result),
                Progress::Evaluate => {
                    if let Err(err) = self.evaluate_pending(evaluator) {
                        self.abort();
                        return Err(err.into());
                    }
                }
            }
        }
    }

    /// Evaluates this search's [`Search::pending_evaluations`] with `evaluator` alone and
    /// [`Search::provide`]s the outputs (a caller driving many searches batches their
    /// leaves itself instead). On an error nothing is provided.
    pub fn evaluate_pending<E: Evaluator<G> + ?Sized>(
        &mut self,
        evaluator: &E,
    ) -> Result<(), EvalError> {
        let outputs = evaluate_leaves(evaluator, &self.pending)?;
        self.provide(outputs);
        Ok(())
    }

    /// Starts a resumable search from `game` (the non-blocking form of [`Search::search`],
    /// for a caller that drives many searches and evaluates their leaves together).
    /// Drive it with [`Search::step`]; whenever that returns [`Progress::Evaluate`],
    /// evaluate [`Search::pending_evaluations`] and hand the outputs to
    /// [`Search::provide`]. The same steps as `search` run in the same order, so with the
    /// same evaluator outputs the result is the same. A search already in progress is
    /// abandoned (its tree is cleared).
    pub fn begin(&mut self, game: &G, limits: SearchLimits) {
        if self.session.is_some() {
            self.abort();
        }
        // A kept subtree's root must also agree with `game` on whether the game is over:
        // the same position can be judged by other rules now (a repetition that ended a
        // line inside the last search need not end the game that was played into it).
        let draw_black = match game.side_to_move() {
            Color::Black => self.config.draw_value,
            Color::White => 1.0 - self.config.draw_value,
        };
        // The kept values counted draws at `draw_black`, so it must not have changed.
        let reuse = matches!(&self.root_game, Some(g) if g.key() == game.key() && g.ply() == game.ply())
            && draw_black == self.draw_black
            && self
                .nodes
                .first()
                .is_some_and(|root| (root.state == State::Terminal) == game.outcome().is_some());
        self.draw_black = draw_black;
        if !reuse {
            self.clear();
            self.nodes.push(Node::new(None, NONE, 1.0));
            self.root_game = Some(game.clone());
        }
        // Playout cap randomization.
        let full_budget = limits.simulations.unwrap_or(self.config.simulations);
        let cap = self.config.full_search_prob;
        let (budget, is_full) = if cap < 1.0 && self.rng.random::<f32>() >= cap {
            (self.config.cheap_simulations.min(full_budget), false)
        } else {
            (full_budget, true)
        };
        let max_nodes = limits
            .max_nodes
            .unwrap_or(self.config.max_nodes)
            .min(NONE as usize - 1);
        self.session = Some(Session {
            game: game.clone(),
            limits,
            start: Instant::now(),
            budget,
            full_budget,
            is_full,
            max_nodes,
            phase: Phase::ExpandRoot,
            batches: 0,
            sims: 0,
            collisions: 0,
            evaluations: 0,
            depth_sum: 0,
            max_depth: 0,
            outstanding: 0,
        });
    }

    /// Whether a search started by [`Search::begin`] is still running.
    pub fn is_searching(&self) -> bool {
        self.session.is_some()
    }

    /// The positions the running search waits for, with their legal moves, in the order
    /// [`Search::provide`] expects their outputs. Empty unless the last
    /// [`Search::step`] returned [`Progress::Evaluate`].
    pub fn pending_evaluations(&self) -> impl ExactSizeIterator<Item = (&G, &[G::Move])> {
        self.pending.iter().map(|p| (&p.game, p.moves.as_slice()))
    }

    /// Hands the evaluator's outputs (priors over each position's moves, value for its
    /// side to move) for [`Search::pending_evaluations`] to the search and backs them up.
    /// Priors are renormalised (uniform on all-zero or NaN). Panics if the number of
    /// outputs differs from the number of pending positions: that is a driver bug.
    pub fn provide<I: IntoIterator<Item = (Vec<f32>, Wdl)>>(&mut self, outputs: I) {
        let mut pending = std::mem::take(&mut self.pending);
        fill_outputs(&mut pending, outputs);
        self.backup_evaluated(pending);
    }

    /// Abandons a running search (the evaluator failed or the caller stops): clears the
    /// tree, whose in-flight marks would otherwise be stale.
    pub fn abort(&mut self) {
        self.clear();
    }

    /// Advances the running search until it needs evaluations or is done. Panics when no
    /// search was begun.
    pub fn step(&mut self) -> Progress<G::Move> {
        let mut s = self
            .session
            .take()
            .expect("Search::step called without Search::begin");
        assert!(
            self.pending.is_empty(),
            "Search::step called before Search::provide"
        );
        // Nothing is outstanding on one thread: `Evaluate` always has leaves.
        let progress = self.step_session(&mut s);
        if matches!(progress, Progress::Evaluate) {
            self.session = Some(s);
        }
        progress
    }

    /// One step of `s` for [`Search::step_detached`]: `Evaluate` with leaves in
    /// `self.pending`, `Evaluate` with none when only other threads' leaves can move the
    /// search on, or `Done` once nothing is outstanding.
    fn step_session(&mut self, s: &mut Session<G>) -> Progress<G::Move> {
        if s.phase == Phase::ExpandRoot {
            s.phase = Phase::PrepareRoot;
            if self.nodes[0].state == State::Unexpanded {
                self.path.clear();
                self.path.push(0);
                self.nodes[0].in_flight += 1;
                match self.leaf(s.game.clone(), 0, 1) {
                    Selected::Leaf(p) => {
                        s.batches += 1;
                        s.evaluations += 1;
                        self.pending.push(p);
                        return Progress::Evaluate;
                    }
                    Selected::Exact(exact) => self.backup_exact(&exact),
                    Selected::Collision { .. } => unreachable!("fresh root cannot collide"),
                }
            }
        }
        if s.phase == Phase::PrepareRoot {
            s.phase = Phase::Simulate;
            self.prepare_root(&s.game, s.budget, s.is_full);
            let root_mate_nodes = self.config.root_mate_budget(s.budget, s.full_budget);
            self.probe_root_mate(&s.game, root_mate_nodes);
        }
        loop {
            if let Some(stop_reason) = self.stop_reason(s) {
                if s.outstanding > 0 {
                    return Progress::Evaluate;
                }
                return Progress::Done(Box::new(self.finish(s, stop_reason)));
            }
            self.gather(s);
            if !self.pending.is_empty() {
                s.batches += 1;
                return Progress::Evaluate;
            }
            if s.outstanding > 0 {
                return Progress::Evaluate;
            }
        }
    }

    /// Root noise (PUCT) or the Gumbel root state, once the root is expanded.
    fn prepare_root(&mut self, game: &G, budget: u32, is_full: bool) {
        let gumbel_mode = self.config.root_selection == RootSelection::Gumbel;
        if self.nodes[0].state != State::Expanded {
            return;
        }
        if !gumbel_mode && is_full && !self.noise_applied && self.config.dirichlet_weight > 0.0 {
            let range = self.nodes[0].children();
            let mut p: Vec<f32> = range.clone().map(|i| self.nodes[i].prior).collect();
            noise::apply_dirichlet(
                &mut p,
                self.config.dirichlet_alpha,
                self.config.dirichlet_weight,
                &mut self.rng,
            );
            for (i, v) in range.zip(p) {
                self.nodes[i].prior = v;
            }
            self.noise_applied = true;
        }
        if gumbel_mode {
            self.init_gumbel(game, budget as usize);
        }
    }

    /// The root mate search of `budget` nodes ([`SearchConfig::root_mate_budget`]): a
    /// proven mate makes its first move a proven win for the side to move, so the root is
    /// proven too.
    fn probe_root_mate(&mut self, game: &G, budget: usize) {
        let root = &self.nodes[0];
        if budget == 0 || root.state != State::Expanded || root.proven.is_known() {
            return;
        }
        let Some(line) = game.find_mate(budget, ROOT_MATE_MAX_PLIES) else {
            return;
        };
        let winner = root.to_move;
        let Some(child) = root
            .children()
            .find(|&i| self.nodes[i].mv == line.first().copied())
        else {
            return;
        };
        // After the mating move `line.len() - 1` plies remain to the mate.
        self.nodes[child].proven = Proven::Win {
            winner,
            plies: line.len() as u32 - 1,
        };
        self.update_proofs(0);
    }

    /// Selects up to `tree_batch` leaves into `self.pending`, backing up exact values
    /// (terminal or proven leaves) on the way.
    fn gather(&mut self, s: &mut Session<G>) {
        self.path.clear();
        let mut round_collisions = 0usize;
        let batch = self.config.tree_batch.max(1);
        while self.pending.len() < batch && s.sims < s.budget {
            let path_start = self.path.len();
            match self.select(&s.game, path_start) {
                Selected::Leaf(p) => {
                    s.count_simulation(p.path_len);
                    s.evaluations += 1;
                    self.pending.push(p);
                }
                Selected::Exact(exact) => {
                    s.count_simulation(exact.path_len);
                    self.backup_exact(&exact);
                    self.path.truncate(path_start);
                    if self.config.stop_when_proven && self.nodes[0].proven.is_known() {
                        break;
                    }
                }
                Selected::Collision {
                    path_start,
                    path_len,
                } => {
                    self.undo_virtual(path_start, path_len);
                    self.path.truncate(path_start);
                    s.collisions += 1;
                    round_collisions += 1;
                    if round_collisions > self.config.max_collisions {
                        break;
                    }
                }
            }
            if s.limits
                .stop
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
            {
                break;
            }
        }
    }

    fn select_child(&mut self, node: usize, is_root: bool) -> usize {
        let gumbel_mode = self.config.root_selection == RootSelection::Gumbel;
        if gumbel_mode && is_root && self.gstate.is_some() {
            let mut s = std::mem::take(&mut self.sigma_scratch);
            self.completed_sigma_into(node, &mut s);
            let Some(GumbelRootBox(gs)) = self.gstate.as_ref() else {
                unreachable!()
            };
            let k: u32 = gs.started.iter().sum();
            let target = gs.sequence.get(k as usize).copied();
            let eligible = |i: usize| gs.considered[i] && target.is_none_or(|t| gs.started[i] == t);
            let any = (0..gs.g.len()).any(eligible);
            let mut best = usize::MAX;
            let mut best_v = f32::NEG_INFINITY;
            for (i, &si) in s.iter().enumerate() {
                let ok = if any { eligible(i) } else { gs.considered[i] };
                if !ok {
                    continue;
                }
                let v = gs.g[i] + gs.logits[i] + si;
                if best == usize::MAX || v > best_v {
                    best = i;
                    best_v = v;
                }
            }
            if let Some(GumbelRootBox(gs)) = self.gstate.as_mut() {
                gs.started[best] += 1;
            }
            self.sigma_scratch = s;
            return self.nodes[node].first_child as usize + best;
        }
        if gumbel_mode && self.config.gumbel_interior == GumbelInterior::Deterministic && !is_root {
            return self.select_gumbel_interior(node);
        }
        self.select_puct(node, is_root)
    }

    fn select_puct(&self, node: usize, is_root: bool) -> usize {
        let range = if is_root {
            self.nodes[node].children()
        } else {
            self.selectable_children(node)
        };
        self.select_puct_among(node, is_root, range)
    }

    /// PUCT's choice among the children of `node` in `range`.
    fn select_puct_among(
        &self,
        node: usize,
        is_root: bool,
        range: std::ops::Range<usize>,
    ) -> usize {
        let cfg = &self.config;
        let n = &self.nodes[node];
        let c = n.to_move;
        let vl = cfg.virtual_loss;
        let parent_n = n.visits as f32 + vl * n.in_flight as f32;
        let cs = ((1.0 + parent_n + cfg.c_base) / cfg.c_base).ln() + cfg.c_init;
        let sqrt_n = parent_n.max(1.0).sqrt();
        let parent_q = n.q_for(c, self.draw_black).unwrap_or(0.5);
        let visited_prior: f32 = range
            .clone()
            .filter(|&i| self.nodes[i].visits + self.nodes[i].in_flight > 0)
            .map(|i| self.nodes[i].prior)
            .sum();
        let red = if is_root {
            cfg.fpu_reduction_root
        } else {
            cfg.fpu_reduction
        };
        let fpu = parent_q - red * visited_prior.sqrt();
        let mut best = range.start;
        let mut best_v = f32::NEG_INFINITY;
        for i in range {
            let ch = &self.nodes[i];
            let n_eff = ch.visits as f32 + vl * ch.in_flight as f32;
            let q = if ch.proven.is_known() {
                ch.q_for(c, self.draw_black).unwrap_or(0.5)
            } else if n_eff > 0.0 {
                (ch.score_for(c) as f32) / n_eff
            } else {
                fpu
            };
            let u = cs * ch.prior * sqrt_n / (1.0 + n_eff);
            let v = q + u;
            if v > best_v {
                best_v = v;
                best = i;
            }
        }
        best
    }

    /// The end of `node`'s touched children: those with visits, visits in flight or a
    /// proven value. Below the root they are a prefix of the children: the children
    /// are stored with the game-ending moves first, then by prior, highest first
    /// ([`Search::order_children`]), and an untouched child's PUCT or Gumbel interior
    /// score grows with its prior alone, so selection takes an untouched child only at
    /// the front of the untouched ones.
    fn touched_end(&self, node: usize) -> usize {
        let range = self.nodes[node].children();
        range
            .clone()
            .find(|&i| {
                let c = &self.nodes[i];
                c.visits == 0 && c.in_flight == 0 && !c.proven.is_known()
            })
            .unwrap_or(range.end)
    }

    /// The children a selection below the root can choose among: the touched ones and
    /// the first untouched one, whose score is the best of the untouched ones (the
    /// rest score no higher and come after it), so that a move of 100 children reads a
    /// handful of them.
    fn selectable_children(&self, node: usize) -> std::ops::Range<usize> {
        let range = self.nodes[node].children();
        range.start..(self.touched_end(node) + 1).min(range.end)
    }

    /// Walks from the root to a leaf, adding virtual loss. The path is appended to
    /// `self.path` from `path_start`.
    fn select(&mut self, root_game: &G, path_start: usize) -> Selected<G> {
        let mut game = self.copy_game(root_game);
        let mut node = 0usize;
        loop {
            self.path.push(node as u32);
            self.nodes[node].in_flight += 1;
            let path_len = self.path.len() - path_start;
            let n = &self.nodes[node];
            // A proven node is an exact leaf, except the root: simulations still go to
            // its children so the root's visit counts keep adding up.
            if n.proven.is_known() && !(node == 0 && n.state == State::Expanded) {
                let (black, draw) = n.proven.black_value(self.draw_black);
                self.recycle(game, Vec::new());
                return Selected::Exact(ExactLeaf {
                    path_start,
                    path_len,
                    black,
                    draw,
                });
            }
            match n.state {
                State::Unexpanded => return self.leaf(game, node, path_len),
                State::InFlight => {
                    self.recycle(game, Vec::new());
                    return Selected::Collision {
                        path_start,
                        path_len,
                    };
                }
                State::Terminal => unreachable!("terminal nodes are proven"),
                State::Expanded => {}
            }
            let child = self.select_child(node, node == 0);
            game.play_unchecked(self.nodes[child].mv.expect("child has a move"));
            node = child;
        }
    }

    /// Handles an unexpanded node reached with `game`: terminal (exact value) or a leaf to
    /// evaluate (marked in flight). Its path is the last `path_len` entries of `self.path`.
    fn leaf(&mut self, game: G, node: usize, path_len: usize) -> Selected<G> {
        let path_start = self.path.len() - path_len;
        self.nodes[node].to_move = game.side_to_move();
        let outcome = game.outcome();
        let mut moves = self.spare_moves.pop().unwrap_or_default();
        let outcome = match outcome {
            Some(o) => Some(adjudicate(&game, o, self.config.adjudicate_margin)),
            None => {
                game.legal_moves(&mut moves);
                moves
                    .is_empty()
                    .then(|| Outcome::win(game.side_to_move().flip(), EndReason::NoLegalMoves))
            }
        };
        if let Some(o) = outcome {
            self.recycle(game, moves);
            return self.exact_leaf(node, Proven::from_outcome(&o), path_start, path_len);
        }
        // A mate for the side to move at a new leaf: an exact win, no network needed. The
        // root has its own mate search (root_mate_nodes) and must stay expandable.
        if node != 0
            && self.config.leaf_mate_nodes > 0
            && let Some(line) =
                game.find_mate(self.config.leaf_mate_nodes, self.config.leaf_mate_plies)
        {
            let proven = Proven::Win {
                winner: game.side_to_move(),
                plies: line.len() as u32,
            };
            self.recycle(game, moves);
            return self.exact_leaf(node, proven, path_start, path_len);
        }
        self.nodes[node].state = State::InFlight;
        Selected::Leaf(Pending {
            node: node as u32,
            game,
            moves,
            path_start,
            path_len,
            priors: Vec::new(),
            wdl: Wdl::DRAW,
        })
    }

    /// Makes `node` a leaf with a known value (a game end, or a mate found there): no
    /// network call, its parent's proof updated, the exact value to back up.
    fn exact_leaf(
        &mut self,
        node: usize,
        proven: Proven,
        path_start: usize,
        path_len: usize,
    ) -> Selected<G> {
        let n = &mut self.nodes[node];
        n.state = State::Terminal;
        n.proven = proven;
        let (black, draw) = n.proven.black_value(self.draw_black);
        n.nn_black = black;
        let parent = n.parent;
        self.update_proofs(parent);
        Selected::Exact(ExactLeaf {
            path_start,
            path_len,
            black,
            draw,
        })
    }

    /// Expands each evaluated leaf and backs its value up its path.
    fn backup_evaluated(&mut self, pending: Vec<Pending<G>>) {
        for p in pending {
            let node = p.node as usize;
            let priors = normalise(p.priors, p.moves.len());
            let to_move = p.game.side_to_move();
            let first = self.nodes.len() as u32;
            let mut order = std::mem::take(&mut self.child_order);
            self.order_children(&p.game, &p.moves, &priors, &mut order);
            let mut any_terminal = false;
            for &(k, outcome) in &order {
                let (mv, prior) = (p.moves[k as usize], priors[k as usize]);
                let mut child = Node::new(Some(mv), node as u32, prior);
                if let Some(o) = outcome {
                    // Rare: the child itself, for its side to move and material.
                    let mut g = p.game.clone();
                    g.play_unchecked(mv);
                    let o = adjudicate(&g, o, self.config.adjudicate_margin);
                    child.state = State::Terminal;
                    child.to_move = g.side_to_move();
                    child.proven = Proven::from_outcome(&o);
                    child.nn_black = child.proven.black_value(self.draw_black).0;
                    any_terminal = true;
                }
                self.nodes.push(child);
            }
            self.child_order = order;
            let mut black_score = match to_move {
                Color::Black => p.wdl.expected_score(),
                Color::White => p.wdl.flip().expected_score(),
            };
            if self.config.leaf_exchange > 0.0 {
                let weight = self.config.leaf_exchange;
                black_score = match to_move {
                    Color::Black => raise_by_exchange(&p.game, black_score, weight),
                    Color::White => 1.0 - raise_by_exchange(&p.game, 1.0 - black_score, weight),
                };
            }
            {
                let n = &mut self.nodes[node];
                n.first_child = first;
                n.num_children = p.moves.len() as u32;
                n.state = State::Expanded;
                n.nn_black = black_score;
            }
            self.backup(
                p.path_start,
                p.path_len,
                black_score,
                p.wdl.draw.clamp(0.0, 1.0),
            );
            if any_terminal {
                self.update_proofs(node as u32);
            }
            self.recycle(p.game, p.moves);
        }
    }

    /// The order an expanded node's children are stored in, into `order` (move index
    /// and, with `terminal_check`, how the move ends the game): the moves that end it
    /// first, then by prior, highest first (ties in move order). Below the root,
    /// selection then only reads a prefix of the children ([`Search::touched_end`]).
    fn order_children(
        &self,
        game: &G,
        moves: &[G::Move],
        priors: &[f32],
        order: &mut Vec<(u32, Option<Outcome>)>,
    ) {
        order.clear();
        order.extend((0..moves.len() as u32).map(|k| (k, None)));
        if self.config.terminal_check {
            game.outcomes_after(moves, |k, o| order[k].1 = Some(o));
        }
        order.sort_unstable_by(|&(a, oa), &(b, ob)| {
            ob.is_some()
                .cmp(&oa.is_some())
                .then(priors[b as usize].total_cmp(&priors[a as usize]))
                .then(a.cmp(&b))
        });
    }

    fn backup_exact(&mut self, exact: &ExactLeaf) {
        self.backup(exact.path_start, exact.path_len, exact.black, exact.draw);
    }

    fn backup(&mut self, path_start: usize, path_len: usize, black: f32, draw: f32) {
        for k in path_start..path_start + path_len {
            let n = &mut self.nodes[self.path[k] as usize];
            n.visits += 1;
            n.in_flight = n.in_flight.saturating_sub(1);
            n.black_score += black as f64;
            n.draw += draw as f64;
        }
    }

    fn undo_virtual(&mut self, path_start: usize, path_len: usize) {
        for k in path_start..path_start + path_len {
            let n = &mut self.nodes[self.path[k] as usize];
            n.in_flight = n.in_flight.saturating_sub(1);
        }
        if path_len >= 2
            && self.config.root_selection == RootSelection::Gumbel
            && let Some(gs) = self.gstate.as_mut()
        {
            let child = self.path[path_start + 1] as usize;
            let idx = child - self.nodes[0].first_child as usize;
            gs.0.started[idx] = gs.0.started[idx].saturating_sub(1);
        }
    }
}

/// `evaluator`'s outputs for the leaves `pending`, in order.
fn evaluate_leaves<G: Game, E: Evaluator<G> + ?Sized>(
    evaluator: &E,
    pending: &[Pending<G>],
) -> Result<Vec<(Vec<f32>, Wdl)>, EvalError> {
    let make = || {
        pending
            .iter()
            .map(|p| EvalRequest::new(&p.game, &p.moves))
            .collect()
    };
    crate::eval::evaluate_retrying(evaluator, make, |failures, err| {
        tracing::warn!("search: a network call failed ({failures} in a row), trying again: {err}");
        true
    })
}

/// Hands each pending leaf its evaluator output, in order. Panics if the counts differ:
/// that is a driver bug.
fn fill_outputs<G: Game, I: IntoIterator<Item = (Vec<f32>, Wdl)>>(
    pending: &mut [Pending<G>],
    outputs: I,
) {
    let mut n = 0;
    for (p, (priors, wdl)) in pending.iter_mut().zip(outputs) {
        p.priors = priors;
        p.wdl = wdl;
        n += 1;
    }
    assert_eq!(n, pending.len(), "one output per pending evaluation");
}

fn normalise(mut p: Vec<f32>, n: usize) -> Vec<f32> {
    p.resize(n, 0.0);
    let s: f32 = p.iter().filter(|x| x.is_finite() && **x > 0.0).sum();
    if s > 0.0 && s.is_finite() {
        for x in p.iter_mut() {
            *x = if x.is_finite() && *x > 0.0 {
                *x / s
            } else {
                0.0
            };
        }
    } else {
        p.iter_mut().for_each(|x| *x = 1.0 / n.max(1) as f32);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::RolloutEvaluator;
    use crate::toy::{Idx, MateIn, TicTacToe};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn invariants_hold(
            prefix in proptest::collection::vec(0u8..9, 0..4),
            batch in 1usize..24,
            vl in 0.0f32..3.0,
            sims in 1u32..300,
            gumbel in any::<bool>(),
            check in any::<bool>(),
            seed in 0u64..1000,
        ) {
            let mut g = TicTacToe::new();
            for m in prefix {
                let mut moves = Vec::new();
                g.legal_moves(&mut moves);
                if moves.is_empty() { break; }
                g.play_unchecked(moves[m as usize % moves.len()]);
            }
            let c = SearchConfig {
                simulations: sims,
                tree_batch: batch,
                virtual_loss: vl,
                terminal_check: check,
                stop_when_proven: false,
                root_selection: if gumbel { RootSelection::Gumbel } else { RootSelection::Puct },
                ..SearchConfig::default()
            };
            let mut s = Search::new(c, seed);
            let ev = RolloutEvaluator::new(1, 9, seed);
            let r = s.search(&g, &ev, &SearchLimits::default()).unwrap();
            prop_assert!(s.check_invariants().is_ok(), "{:?}", s.check_invariants());
            if r.stop_reason != StopReason::Terminal {
                prop_assert_eq!(r.simulations, sims, "{:?} {:?}", r.stop_reason, r.proven);
                prop_assert_eq!(r.visits.iter().sum::<u32>(), sims);
                prop_assert!((r.policy_target.iter().sum::<f32>() - 1.0).abs() < 1e-3);
                prop_assert!(r.best_move.is_some());
                // Reuse keeps invariants.
                let mv = r.best_move.unwrap();
                s.advance(mv);
                g.play_unchecked(mv);
                let _ = s.search(&g, &ev, &SearchLimits::simulations(50)).unwrap();
                prop_assert!(s.check_invariants().is_ok(), "{:?}", s.check_invariants());
            }
        }
    }

    #[test]
    fn proven_root_with_continued_search_keeps_invariants() {
        let g = MateIn::new(6, 2, 30);
        let c = SearchConfig {
            simulations: 2000,
            stop_when_proven: false,
            ..SearchConfig::for_play()
        };
        let mut s = Search::new(c, 1);
        let r = s
            .search(
                &g,
                &crate::UniformEvaluator::default(),
                &SearchLimits::default(),
            )
            .unwrap();
        assert_eq!(r.best_move, Some(g.attacking_move()));
        assert_eq!(r.best_move, Some(Idx(1)));
        s.check_invariants().unwrap();
    }
}

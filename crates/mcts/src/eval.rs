//! The evaluator seam: a batch of positions in; priors and a WDL value out.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_game::Game;

/// A value as win / draw / loss probabilities from one side's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Wdl {
    /// Probability of winning.
    pub win: f32,
    /// Probability of a draw.
    pub draw: f32,
    /// Probability of losing.
    pub loss: f32,
}

impl Wdl {
    /// A certain win.
    pub const WIN: Wdl = Wdl {
        win: 1.0,
        draw: 0.0,
        loss: 0.0,
    };
    /// A certain draw.
    pub const DRAW: Wdl = Wdl {
        win: 0.0,
        draw: 1.0,
        loss: 0.0,
    };
    /// A certain loss.
    pub const LOSS: Wdl = Wdl {
        win: 0.0,
        draw: 0.0,
        loss: 1.0,
    };

    /// Builds a WDL.
    pub const fn new(win: f32, draw: f32, loss: f32) -> Wdl {
        Wdl { win, draw, loss }
    }

    /// A WDL with no draw mass and the given expected score (clamped to 0..=1).
    pub fn from_score(score: f32) -> Wdl {
        let s = score.clamp(0.0, 1.0);
        Wdl {
            win: s,
            draw: 0.0,
            loss: 1.0 - s,
        }
    }

    /// Expected score W + 0.5 D (1 win, 0.5 draw, 0 loss).
    #[inline]
    pub fn expected_score(&self) -> f32 {
        self.win + 0.5 * self.draw
    }

    /// The same value from the opponent's point of view.
    #[inline]
    pub fn flip(self) -> Wdl {
        Wdl {
            win: self.loss,
            draw: self.draw,
            loss: self.win,
        }
    }
}

/// One position to evaluate. The search fills `game` and `moves`; the evaluator writes
/// `priors` (one per move, in the order of `moves`, summing to 1) and `wdl` (from the
/// point of view of `game.side_to_move()`).
#[derive(Debug)]
pub struct EvalRequest<'a, G: Game> {
    /// The position.
    pub game: &'a G,
    /// Its legal moves (never empty: terminal positions are not sent).
    pub moves: &'a [G::Move],
    /// Output: priors over `moves`. The evaluator must leave exactly `moves.len()` entries.
    /// The search renormalises defensively (and falls back to uniform on all-zero/NaN).
    pub priors: Vec<f32>,
    /// Output: value for the side to move.
    pub wdl: Wdl,
}

impl<'a, G: Game> EvalRequest<'a, G> {
    /// A request with empty outputs.
    pub fn new(game: &'a G, moves: &'a [G::Move]) -> Self {
        EvalRequest {
            game,
            moves,
            priors: Vec::new(),
            wdl: Wdl::DRAW,
        }
    }
}

/// Why an evaluation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The batched inference service has shut down (or dropped the request).
    #[error("inference service shut down")]
    ServiceShutDown,
    /// The caller stopped waiting for the answer.
    #[error("evaluation timed out")]
    Timeout,
    /// The model failed (panicked or returned the wrong number of outputs).
    #[error("model failed: {0}")]
    ModelFailed(String),
    /// The model answered with values that are not finite numbers (a NaN or an
    /// infinity: an overflow in half precision, a damaged network). Nothing of such a
    /// batch reaches a search.
    #[error(
        "the network returned non-finite values (NaN or infinity) for {bad} of {total} positions"
    )]
    NonFinite {
        /// Positions with a non-finite prior or value.
        bad: usize,
        /// Positions in the call.
        total: usize,
    },
}

/// Failed network calls in a row that a self-play actor or a match player survives:
/// each is tried again (a batch service survives a failed batch), and this many in a row
/// stop it with the last error rather than spin on a network that cannot answer.
pub const MAX_FAILED_EVALUATIONS_IN_A_ROW: u32 = 8;

impl EvalError {
    /// Whether trying again may succeed: everything but a service that is gone.
    pub fn is_transient(&self) -> bool {
        !matches!(self, EvalError::ServiceShutDown)
    }
}

/// Calls `evaluator` on the requests `make` builds and returns their priors and values
/// in order; a transient failure ([`EvalError::is_transient`]) is tried again, after a
/// short pause, up to [`MAX_FAILED_EVALUATIONS_IN_A_ROW`] failures in a row.
/// `on_failure(failures so far, error)` hears of each failure (to count or log it) and
/// may return `false` to give up at once (a stop); the last error is returned then.
pub fn evaluate_retrying<'a, G: Game, E: Evaluator<G> + ?Sized>(
    evaluator: &E,
    make: impl Fn() -> Vec<EvalRequest<'a, G>>,
    mut on_failure: impl FnMut(u32, &EvalError) -> bool,
) -> Result<Vec<(Vec<f32>, Wdl)>, EvalError> {
    let mut failures = 0;
    loop {
        let mut requests = make();
        let err = match evaluator.evaluate(&mut requests) {
            Ok(()) => return Ok(requests.into_iter().map(|r| (r.priors, r.wdl)).collect()),
            Err(err) => err,
        };
        failures += 1;
        let go_on = on_failure(failures, &err);
        if !go_on || !err.is_transient() || failures >= MAX_FAILED_EVALUATIONS_IN_A_ROW {
            return Err(err);
        }
        // A moment for whatever failed (memory, a device) to recover.
        std::thread::sleep(std::time::Duration::from_millis(10 << failures.min(6)));
    }
}

/// Whether every request's priors and value are finite numbers: an evaluator calls it
/// on what its network answered, so a NaN never enters a tree's sums.
pub fn check_finite<G: Game>(requests: &[EvalRequest<'_, G>]) -> Result<(), EvalError> {
    let bad = requests
        .iter()
        .filter(|r| {
            let w = r.wdl;
            !(w.win.is_finite() && w.draw.is_finite() && w.loss.is_finite())
                || r.priors.iter().any(|p| !p.is_finite())
        })
        .count();
    if bad == 0 {
        Ok(())
    } else {
        Err(EvalError::NonFinite {
            bad,
            total: requests.len(),
        })
    }
}

/// Evaluates positions in batches.
///
/// `evaluate` may block (a GPU evaluator waits for its batch; the batched service waits
/// for its reply) and may be called concurrently from any number of threads (the trait
/// requires `Send + Sync`); one `Search` calls it from the thread running `search`, once
/// per gathered batch of up to `SearchConfig::tree_batch` requests.
pub trait Evaluator<G: Game>: Send + Sync {
    /// Fills `priors` and `wdl` of every request.
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError>;
}

impl<G: Game, E: Evaluator<G> + ?Sized> Evaluator<G> for &E {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        (**self).evaluate(requests)
    }
}

impl<G: Game, E: Evaluator<G> + ?Sized> Evaluator<G> for std::sync::Arc<E> {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        (**self).evaluate(requests)
    }
}

impl<G: Game, E: Evaluator<G> + ?Sized> Evaluator<G> for Box<E> {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        (**self).evaluate(requests)
    }
}

/// Uniform priors and a fixed value (default: expected score 0.5 as a pure draw).
/// Never blocks.
#[derive(Clone, Copy, Debug)]
pub struct UniformEvaluator {
    /// The value returned for every position (side to move's view).
    pub wdl: Wdl,
}

impl Default for UniformEvaluator {
    fn default() -> Self {
        UniformEvaluator { wdl: Wdl::DRAW }
    }
}

impl<G: Game> Evaluator<G> for UniformEvaluator {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        for r in requests.iter_mut() {
            let n = r.moves.len();
            r.priors.clear();
            r.priors.resize(n, 1.0 / n.max(1) as f32);
            r.wdl = self.wdl;
        }
        Ok(())
    }
}

impl<G: Game> crate::Search<G> {
    /// [`Search::search`](crate::Search::search) with every position evaluated uniformly
    /// ([`UniformEvaluator`]: no network, never fails) under the default limits: the
    /// search alone, as tests and tools run it.
    pub fn search_uniform(&mut self, game: &G) -> crate::SearchResult<G::Move> {
        let limits = crate::SearchLimits::default();
        self.search(game, &UniformEvaluator::default(), &limits)
            .expect("the uniform evaluator never fails")
    }
}

/// An evaluator from a closure `Fn(&G, &[Move]) -> (priors, wdl)`, called per position.
pub struct FnEvaluator<F> {
    f: F,
}

impl<F> FnEvaluator<F> {
    /// Wraps `f`.
    pub fn new(f: F) -> Self {
        FnEvaluator { f }
    }
}

impl<F> fmt::Debug for FnEvaluator<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnEvaluator")
    }
}

impl<G, F> Evaluator<G> for FnEvaluator<F>
where
    G: Game,
    F: Fn(&G, &[G::Move]) -> (Vec<f32>, Wdl) + Send + Sync,
{
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        for r in requests.iter_mut() {
            let (p, v) = (self.f)(r.game, r.moves);
            r.priors = p;
            r.wdl = v;
        }
        Ok(())
    }
}

/// Uniform priors and the mean result of `playouts` uniformly random playouts, each cut
/// off as a draw after `max_plies` plies. Deterministic for a given seed and call order
/// (the random stream is derived from the seed, a call counter and the position key).
/// Never blocks; safe from any thread.
#[derive(Debug)]
pub struct RolloutEvaluator {
    /// Playouts per position.
    pub playouts: u32,
    /// Plies per playout before it counts as a draw.
    pub max_plies: u32,
    seed: u64,
    counter: AtomicU64,
}

impl RolloutEvaluator {
    /// A rollout evaluator.
    pub fn new(playouts: u32, max_plies: u32, seed: u64) -> Self {
        RolloutEvaluator {
            playouts: playouts.max(1),
            max_plies,
            seed,
            counter: AtomicU64::new(0),
        }
    }
}

impl<G: Game> Evaluator<G> for RolloutEvaluator {
    fn evaluate(&self, requests: &mut [EvalRequest<'_, G>]) -> Result<(), EvalError> {
        let mut moves = Vec::new();
        for r in requests.iter_mut() {
            let n = r.moves.len();
            r.priors.clear();
            r.priors.resize(n, 1.0 / n.max(1) as f32);
            let c = self.counter.fetch_add(1, Ordering::Relaxed);
            let mut rng = ChaCha8Rng::seed_from_u64(
                self.seed ^ r.game.key().rotate_left(17) ^ c.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            let me = r.game.side_to_move();
            let (mut w, mut d) = (0.0f32, 0.0f32);
            for _ in 0..self.playouts {
                let mut g = r.game.clone();
                let mut plies = 0;
                let result = loop {
                    if let Some(o) = g.outcome() {
                        break Some(o);
                    }
                    if plies >= self.max_plies {
                        break None;
                    }
                    moves.clear();
                    g.legal_moves(&mut moves);
                    if moves.is_empty() {
                        // No outcome reported but nothing to play: the mover loses.
                        break Some(shogi_game::Outcome::win(
                            g.side_to_move().flip(),
                            shogi_game::EndReason::NoLegalMoves,
                        ));
                    }
                    let mv = moves[rng.random_range(0..moves.len())];
                    g.play_unchecked(mv);
                    plies += 1;
                };
                match result.and_then(|o| o.winner) {
                    Some(c) if c == me => w += 1.0,
                    Some(_) => {}
                    None => d += 1.0,
                }
            }
            let k = self.playouts as f32;
            r.wdl = Wdl::new(w / k, d / k, 1.0 - (w + d) / k);
        }
        Ok(())
    }
}

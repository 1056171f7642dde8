//! One tree searched by several threads: a thread selects its leaves with the tree
//! locked ([`Search::step_detached`]; virtual loss keeps the threads on different paths),
//! evaluates them with its own evaluator unlocked ([`LeafBatch::evaluate`]), and backs
//! them up locked ([`Search::provide_detached`]); [`Search::search_parallel`] drives it.

use std::sync::{Condvar, Mutex};

use shogi_game::Game;

use super::{Pending, Phase, Progress, Search, SearchError, SearchLimits, SearchResult};
use crate::eval::{EvalError, Evaluator, Wdl};

/// Leaves one thread evaluates while others go on searching the same tree
/// ([`Search::step_detached`]); their paths carry virtual loss until
/// [`Search::provide_detached`] backs them up.
#[derive(Debug)]
pub struct LeafBatch<G: Game> {
    pending: Vec<Pending<G>>,
    path: Vec<u32>,
    epoch: u64,
}

impl<G: Game> LeafBatch<G> {
    /// The positions to evaluate, with their legal moves, in the order
    /// [`Search::provide_detached`] expects their outputs.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = (&G, &[G::Move])> {
        self.pending.iter().map(|p| (&p.game, p.moves.as_slice()))
    }

    /// Evaluates the positions with `evaluator` (no lock on the tree is needed): the
    /// outputs for [`Search::provide_detached`].
    pub fn evaluate<E: Evaluator<G> + ?Sized>(
        &self,
        evaluator: &E,
    ) -> Result<Vec<(Vec<f32>, Wdl)>, EvalError> {
        super::evaluate_leaves(evaluator, &self.pending)
    }
}

/// What a search shared by several threads needs next from the calling thread
/// ([`Search::step_detached`]).
#[derive(Debug)]
pub enum SharedProgress<G: Game> {
    /// Evaluate these leaves (without holding the tree) and hand them back with
    /// [`Search::provide_detached`].
    Evaluate(LeafBatch<G>),
    /// Nothing to select until another thread's leaves come back: wait for it.
    Wait,
    /// The search is over.
    Done(Box<SearchResult<G::Move>>),
}

impl<G: Game> Search<G> {
    /// The step of a search that several threads share ([`Search::search_parallel`]
    /// drives it; call it with the tree locked): leaves for the calling thread to
    /// evaluate while other threads select more (virtual loss keeps them apart), a wait
    /// while only other threads' leaves can move the search on (the root's expansion, or
    /// every path selected ends at a leaf in flight), or the result once every batch
    /// handed out is back. With one thread it runs the same steps as [`Search::step`].
    /// Panics when no search was begun.
    pub fn step_detached(&mut self) -> SharedProgress<G> {
        let mut s = self
            .session
            .take()
            .expect("Search::step_detached called without Search::begin");
        // The root is expanded and prepared once, before anything else is selected.
        if s.phase != Phase::Simulate && s.outstanding > 0 {
            self.session = Some(s);
            return SharedProgress::Wait;
        }
        let progress = self.step_session(&mut s);
        let detached = match progress {
            Progress::Done(result) => return SharedProgress::Done(result),
            Progress::Evaluate if self.pending.is_empty() => SharedProgress::Wait,
            Progress::Evaluate => {
                s.outstanding += 1;
                SharedProgress::Evaluate(LeafBatch {
                    pending: std::mem::take(&mut self.pending),
                    path: std::mem::take(&mut self.path),
                    epoch: self.epoch,
                })
            }
        };
        self.session = Some(s);
        detached
    }

    /// Backs up a batch of [`Search::step_detached`] with the evaluator's outputs for its
    /// [`LeafBatch::positions`] (call it with the tree locked). A batch of a tree since
    /// cleared is dropped. Panics if the number of outputs differs from the batch's.
    pub fn provide_detached<I: IntoIterator<Item = (Vec<f32>, Wdl)>>(
        &mut self,
        batch: LeafBatch<G>,
        outputs: I,
    ) {
        let LeafBatch {
            mut pending,
            path,
            epoch,
        } = batch;
        if epoch != self.epoch {
            return;
        }
        super::fill_outputs(&mut pending, outputs);
        let kept = std::mem::replace(&mut self.path, path);
        self.backup_evaluated(pending);
        self.path = kept;
        if let Some(s) = self.session.as_mut() {
            s.outstanding -= 1;
        }
    }

    /// [`Search::search`] on one thread per evaluator, all on this tree: each thread
    /// selects leaves with the tree locked ([`Search::step_detached`]; virtual loss keeps
    /// the threads on different paths), evaluates them with its own evaluator unlocked,
    /// and backs them up locked, so the threads' network calls run side by side (with an
    /// inference thread per evaluator, one core each) while selection and backup take
    /// turns (dlshogi's and lc0's search threads share a tree the same way). With one
    /// evaluator it is `search` exactly, deterministic; with more the tree depends on the
    /// threads' timing. Blocks until the search ends; on an evaluator's error every
    /// thread stops and the tree is cleared.
    pub fn search_parallel<E: Evaluator<G>>(
        &mut self,
        game: &G,
        evaluators: &[E],
        limits: &SearchLimits,
    ) -> Result<SearchResult<G::Move>, SearchError>
    where
        Self: Send,
    {
        match evaluators {
            [] => {
                return Err(SearchError::Eval(EvalError::ModelFailed(
                    "no evaluator".into(),
                )));
            }
            [one] => return self.search(game, one, limits),
            _ => {}
        }
        self.begin(game, limits.clone());
        let tree = Mutex::new(&mut *self);
        let turn = Condvar::new();
        let ended: Ended<G> = Mutex::new(None);
        std::thread::scope(|scope| {
            for evaluator in evaluators {
                let (tree, turn, ended) = (&tree, &turn, &ended);
                scope.spawn(move || search_thread(tree, turn, ended, evaluator));
            }
        });
        let ended = ended
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(|| {
                Err(SearchError::Eval(EvalError::ModelFailed(
                    "a search thread panicked".into(),
                )))
            });
        if ended.is_err() {
            self.abort();
        }
        ended
    }
}

/// How a shared search ended: its result, or the first thread's error (`None` while it
/// runs).
type Ended<G> = Mutex<Option<Result<SearchResult<<G as Game>::Move>, SearchError>>>;

/// One thread of [`Search::search_parallel`]: steps the shared search with the tree
/// locked, evaluates its leaves unlocked, until the search ends (`ended` is set, by this
/// thread or another) or its evaluator fails (it then sets `ended` to the error).
fn search_thread<G: Game, E: Evaluator<G>>(
    tree: &Mutex<&mut Search<G>>,
    turn: &Condvar,
    ended: &Ended<G>,
    evaluator: &E,
) {
    let mut search = tree.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if ended.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
            return;
        }
        match search.step_detached() {
            SharedProgress::Done(result) => {
                *ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(Ok(*result));
                turn.notify_all();
                return;
            }
            SharedProgress::Wait => {
                search = turn.wait(search).unwrap_or_else(|p| p.into_inner());
            }
            SharedProgress::Evaluate(batch) => {
                drop(search);
                let outputs = batch.evaluate(evaluator);
                search = tree.lock().unwrap_or_else(|p| p.into_inner());
                match outputs {
                    Ok(outputs) => search.provide_detached(batch, outputs),
                    Err(err) => {
                        ended
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert(Err(err.into()));
                        turn.notify_all();
                        return;
                    }
                }
                turn.notify_all();
            }
        }
    }
}

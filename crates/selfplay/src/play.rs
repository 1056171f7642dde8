//! One self-play game: search every move with the shared evaluator, record the searched
//! visit counts and policy targets, resign when hopeless (except in a configured share of
//! games, kept to measure false resignations), and end by the rules.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use shogi_game::{Color, EndReason, Game, Outcome, adjudicate};
use shogi_mcts::{
    Evaluator, Progress, Search, SearchConfig, SearchError, SearchLimits, SearchResult, Wdl,
};
use shogi_records::record::{GameRecord, MoveRecord, SearchedMove};
use shogi_registry::RecordGame;
use shogi_rules::ShogiGame;

/// Self-play settings besides the search's own.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlayConfig {
    /// Resign when the root expected score (0..1, side to move) stays below this for
    /// `resign_consecutive` of the resigner's own moves in a row. 0 disables. Default 0.05
    /// (AlphaZero's 5% win rate).
    pub resign_threshold: f32,
    /// Own moves in a row below the threshold before resigning. Default 3.
    pub resign_consecutive: u32,
    /// Share of games (0..=1) played with resignation disabled, to measure how often a
    /// resignation would have been wrong. Default 0.2 (AlphaGo Zero's was 10%).
    pub resign_disabled_fraction: f32,
    /// Uniformly random plies played before search starts (opening diversity; not
    /// recorded as targets). Default 0.
    pub random_opening_plies: u32,
    /// A game reaching the ply cap is won by the side this many material points ahead
    /// ([`shogi_game::adjudicate`]); 0 leaves it a draw. Gives the value head decisive
    /// targets where capped games rarely end by the rules (tai shogi on a CPU). The
    /// game's search scores capped leaves the same way
    /// ([`SearchConfig::adjudicate_margin`]). Default 0.
    pub adjudicate_margin: u32,
}

impl Default for PlayConfig {
    fn default() -> Self {
        PlayConfig {
            resign_threshold: 0.05,
            resign_consecutive: 3,
            resign_disabled_fraction: 0.2,
            random_opening_plies: 0,
            adjudicate_margin: 0,
        }
    }
}

/// What a finished self-play game reports besides its record.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedGame {
    /// The record to write.
    pub record: GameRecord,
    /// In a game with resignation disabled: the side that would have resigned first.
    pub would_have_resigned: Option<Color>,
    /// Simulations run over the whole game.
    pub simulations: u64,
}

impl PlayedGame {
    /// A resignation that would have been wrong: the side that would have resigned did
    /// not lose.
    pub fn false_resignation(&self) -> bool {
        self.would_have_resigned
            .is_some_and(|c| self.record.outcome.winner != Some(c.flip()))
    }
}

/// Plays one game from `start` to its end with `evaluator`. Deterministic for a given
/// seed and a deterministic evaluator. Blocks while the evaluator does.
pub fn play_game<G: RecordGame, E: Evaluator<G> + ?Sized>(
    start: G,
    search_config: &SearchConfig,
    play: &PlayConfig,
    evaluator: &E,
    seed: u64,
) -> Result<PlayedGame, SearchError> {
    let mut game = SelfPlayGame::new(start, search_config, play, seed);
    loop {
        match game.step() {
            GameProgress::Finished => return Ok(game.finish()),
            GameProgress::Evaluate => game.search.evaluate_pending(evaluator)?,
        }
    }
}

/// What a [`SelfPlayGame`] needs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameProgress {
    /// Evaluate [`SelfPlayGame::pending_evaluations`], then call
    /// [`SelfPlayGame::provide`].
    Evaluate,
    /// The game is over: take it with [`SelfPlayGame::finish`].
    Finished,
}

/// One self-play game as a resumable state machine, so a thread can advance many games
/// and send all their leaves to the network in one request. [`play_game`] drives one to
/// the end; the actors drive many side by side. Same seed and same evaluator outputs give
/// the same game either way.
#[derive(Debug)]
pub struct SelfPlayGame<G: Game = ShogiGame> {
    game: G,
    search: Search<G>,
    resign_threshold: f32,
    resign_consecutive: u32,
    resign_enabled: bool,
    record: GameRecord,
    low_streak: [u32; 2],
    would_have_resigned: Option<Color>,
    simulations: u64,
    adjudicate_margin: u32,
    outcome: Option<Outcome>,
}

impl<G: RecordGame> SelfPlayGame<G> {
    /// A game from `start`: plays the configured random opening plies at once, then waits
    /// for [`SelfPlayGame::step`].
    pub fn new(start: G, search_config: &SearchConfig, play: &PlayConfig, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5e1f_9a3e);
        let mut game = start;
        // The search scores capped leaves the way this game will be recorded.
        let search = Search::new(
            SearchConfig {
                adjudicate_margin: play.adjudicate_margin,
                ..search_config.clone()
            },
            seed,
        );
        let resign_enabled = play.resign_threshold > 0.0
            && !rng.random_bool(play.resign_disabled_fraction.clamp(0.0, 1.0).into());
        let mut record = GameRecord {
            resignation_disabled: !resign_enabled,
            ..game.record_start()
        };
        // Random opening plies: uniform over legal moves, not searched.
        let mut legal = Vec::new();
        for _ in 0..play.random_opening_plies {
            if game.outcome().is_some() {
                break;
            }
            legal.clear();
            game.legal_moves(&mut legal);
            let mv = legal[rng.random_range(0..legal.len())];
            record.moves.push(MoveRecord::unsearched(G::move_code(mv)));
            game.play_unchecked(mv);
        }
        SelfPlayGame {
            game,
            search,
            resign_threshold: play.resign_threshold,
            resign_consecutive: play.resign_consecutive,
            resign_enabled,
            record,
            low_streak: [0; 2],
            would_have_resigned: None,
            simulations: 0,
            adjudicate_margin: play.adjudicate_margin,
            outcome: None,
        }
    }

    /// Searches and plays moves until the network is needed or the game ends.
    pub fn step(&mut self) -> GameProgress {
        loop {
            if self.outcome.is_some() {
                return GameProgress::Finished;
            }
            if !self.search.is_searching() {
                if let Some(outcome) = self.game.outcome() {
                    self.outcome = Some(adjudicate(&self.game, outcome, self.adjudicate_margin));
                    return GameProgress::Finished;
                }
                self.search.begin(&self.game, SearchLimits::default());
            }
            match self.search.step() {
                Progress::Evaluate => return GameProgress::Evaluate,
                Progress::Done(result) => self.play_searched(*result),
            }
        }
    }

    /// The positions the current search waits for (see [`Search::pending_evaluations`]).
    pub fn pending_evaluations(&self) -> impl ExactSizeIterator<Item = (&G, &[G::Move])> {
        self.search.pending_evaluations()
    }

    /// The network's outputs for [`SelfPlayGame::pending_evaluations`], in order.
    pub fn provide<I: IntoIterator<Item = (Vec<f32>, Wdl)>>(&mut self, outputs: I) {
        self.search.provide(outputs);
    }

    /// Plies played so far (random opening plies included).
    pub fn plies(&self) -> usize {
        self.record.moves.len()
    }

    /// Simulations run so far by this game's searches.
    pub fn simulations(&self) -> u64 {
        self.simulations
    }

    /// The finished game's record and statistics. Call after [`GameProgress::Finished`];
    /// an unfinished game is recorded as drawn at max plies.
    pub fn finish(mut self) -> PlayedGame {
        if let Some(outcome) = self.outcome {
            self.record.outcome = outcome;
        }
        PlayedGame {
            record: self.record,
            would_have_resigned: self.would_have_resigned,
            simulations: self.simulations,
        }
    }

    /// Records a finished search, resigns or plays its move.
    fn play_searched(&mut self, result: SearchResult<G::Move>) {
        self.simulations += u64::from(result.simulations);
        let Some(mv) = result.best_move else {
            // The search saw a terminal root the rules did not: cannot happen with the
            // same rules; end as a draw rather than loop.
            self.outcome = Some(Outcome::draw(EndReason::NoLegalMoves));
            return;
        };
        let side = self.game.side_to_move();
        let value = result.root_value();
        if self.resign_threshold > 0.0 && value < self.resign_threshold {
            self.low_streak[side.index()] += 1;
            if self.low_streak[side.index()] >= self.resign_consecutive.max(1) {
                if self.resign_enabled {
                    self.outcome = Some(Outcome::win(side.flip(), EndReason::Resignation));
                    return;
                }
                self.would_have_resigned.get_or_insert(side);
            }
        } else {
            self.low_streak[side.index()] = 0;
        }
        let searched = result
            .moves
            .iter()
            .zip(&result.visits)
            .zip(&result.policy_target)
            .filter(|((_, visits), target)| **visits > 0 || **target > 0.0)
            .map(|((&m, &visits), &target)| SearchedMove {
                mv: G::move_code(m),
                visits,
                target,
            })
            .collect();
        self.record.moves.push(MoveRecord {
            mv: G::move_code(mv),
            root_value: value,
            full_search: result.is_full_search,
            searched,
        });
        self.game.play_unchecked(mv);
        self.search.advance(mv);
    }
}

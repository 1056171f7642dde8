//! One self-play game: search every move with the shared evaluator, record the searched
//! visit counts and policy targets, resign when hopeless (except in a configured share of
//! games, kept to measure false resignations), and end by the rules.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use shogi_game::{Color, EndReason, Game, Outcome};
use shogi_mcts::{Evaluator, Search, SearchConfig, SearchError, SearchLimits};
use shogi_rules::{ImpasseRule, ShogiGame};

use crate::convert::move_code;
use crate::record::{GameRecord, MoveRecord, SearchedMove};

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
    /// resignation would have been wrong. Default 0.1.
    pub resign_disabled_fraction: f32,
    /// Uniformly random plies played before search starts (opening diversity; not
    /// recorded as targets). Default 0.
    pub random_opening_plies: u32,
}

impl Default for PlayConfig {
    fn default() -> Self {
        PlayConfig {
            resign_threshold: 0.05,
            resign_consecutive: 3,
            resign_disabled_fraction: 0.1,
            random_opening_plies: 0,
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

fn impasse_code(rule: ImpasseRule) -> u8 {
    match rule {
        ImpasseRule::None => 0,
        ImpasseRule::Declaration27 => 1,
        ImpasseRule::Points24 => 2,
    }
}

/// Plays one game from `start` to its end with `evaluator`. Deterministic for a given
/// seed and a deterministic evaluator. Blocks while the evaluator does.
pub fn play_game<E: Evaluator<ShogiGame> + ?Sized>(
    start: ShogiGame,
    search_config: &SearchConfig,
    play: &PlayConfig,
    evaluator: &E,
    seed: u64,
) -> Result<PlayedGame, SearchError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5e1f_9a3e);
    let mut game = start;
    let mut search = Search::new(search_config.clone(), seed);
    let resign_enabled = play.resign_threshold > 0.0
        && !rng.random_bool(play.resign_disabled_fraction.clamp(0.0, 1.0).into());
    let mut record = GameRecord {
        variant: game.position().variant().name().to_string(),
        start_sfen: game.position().to_sfen(),
        max_plies: game.rules().max_plies,
        impasse: impasse_code(game.rules().impasse),
        outcome: Outcome::draw(EndReason::MaxPlies),
        resignation_disabled: !resign_enabled,
        moves: Vec::new(),
    };
    let mut low_streak = [0u32; 2];
    let mut would_have_resigned = None;
    let mut simulations = 0u64;
    let mut legal = Vec::new();
    // Random opening plies: uniform over legal moves, not searched.
    for _ in 0..play.random_opening_plies {
        if game.outcome().is_some() {
            break;
        }
        legal.clear();
        game.legal_moves(&mut legal);
        let mv = legal[rng.random_range(0..legal.len())];
        record.moves.push(MoveRecord {
            mv: move_code(mv),
            root_value: 0.5,
            full_search: false,
            searched: Vec::new(),
        });
        game.play(mv);
    }
    let limits = SearchLimits::default();
    let outcome = loop {
        if let Some(outcome) = game.outcome() {
            break outcome;
        }
        let result = search.search(&game, evaluator, &limits)?;
        simulations += u64::from(result.simulations);
        let Some(mv) = result.best_move else {
            // The search saw a terminal root the rules did not: cannot happen with the
            // same rules; end as a draw rather than loop.
            break Outcome::draw(EndReason::NoLegalMoves);
        };
        let side = game.side_to_move();
        let value = result.root_value();
        if play.resign_threshold > 0.0 && value < play.resign_threshold {
            low_streak[side.index()] += 1;
            if low_streak[side.index()] >= play.resign_consecutive.max(1) {
                if resign_enabled {
                    break Outcome::win(side.flip(), EndReason::Resignation);
                }
                would_have_resigned.get_or_insert(side);
            }
        } else {
            low_streak[side.index()] = 0;
        }
        let searched = result
            .moves
            .iter()
            .zip(&result.visits)
            .zip(&result.policy_target)
            .filter(|((_, visits), target)| **visits > 0 || **target > 0.0)
            .map(|((&m, &visits), &target)| SearchedMove {
                mv: move_code(m),
                visits,
                target,
            })
            .collect();
        record.moves.push(MoveRecord {
            mv: move_code(mv),
            root_value: value,
            full_search: result.is_full_search,
            searched,
        });
        game.play(mv);
        search.advance(mv);
    };
    record.outcome = outcome;
    Ok(PlayedGame {
        record,
        would_have_resigned,
        simulations,
    })
}

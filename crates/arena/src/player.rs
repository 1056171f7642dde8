//! Players: a checkpoint searched with MCTS, a uniform-prior search, a uniform random
//! mover, or an external USI engine. A [`PlayerSpec`] is what the user names; a
//! [`PreparedPlayer`] holds what all games share (one batched inference service per
//! network); a [`Mover`] plays the games of one worker thread.

use std::any::Any;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_features::NetLayout;
use shogi_game::{Game, GameKind};
use shogi_mcts::RootSettings;
use shogi_mcts::batch::BatchConfig;
use shogi_mcts::{
    Evaluator, RolloutEvaluator, RootSelection, Search, SearchConfig, SearchLimits, SearchSpeed,
    UniformEvaluator,
};
use shogi_model::{DEFAULT_DEVICE, NetService, Serving, parse_device, read_manifest};
use shogi_registry::with_game_type;
use shogi_rules::{Move, ShogiGame, Variant};

use crate::error::ArenaError;
use crate::usi_client::{UsiAnswer, UsiEngine, UsiTimeControl, variant_setoption};
use shogi_baseline::{AlphaBetaLimits, Baseline, GameBaseline};
use shogi_registry::ArenaGame;

/// Random playouts per position of the `rollout` player.
const ROLLOUT_PLAYOUTS: u32 = 4;
/// Plies per playout before it counts as a draw.
const ROLLOUT_PLIES: u32 = 60;

/// A player as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// `checkpoint:DIR`: a network checkpoint searched with MCTS.
    Checkpoint(PathBuf),
    /// `uniform`: MCTS with uniform priors and a neutral value (no network).
    Uniform,
    /// `rollout`: MCTS with uniform priors and values from random playouts (a searching
    /// player that needs no network).
    Rollout,
    /// `random`: a uniformly random legal move.
    Random,
    /// `usi:COMMAND ARGS`: an external USI engine.
    Usi(String),
    /// `alphabeta:depth=N`, `alphabeta:nodes=N` or `alphabeta:movetime=MS` (or several,
    /// comma separated): the game's classical network-free baseline (`shogi-baseline`:
    /// [`shogi_baseline::alphabeta`] for shogi and minishogi, [`shogi_baseline::alphabeta_tai`] for tai).
    AlphaBeta(AlphaBetaLimits),
}

impl FromStr for PlayerSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_prefix("checkpoint:") {
            Ok(PlayerSpec::Checkpoint(PathBuf::from(p)))
        } else if let Some(c) = s.strip_prefix("usi:") {
            if c.trim().is_empty() {
                return Err("usi: needs a command line".into());
            }
            Ok(PlayerSpec::Usi(c.to_string()))
        } else if let Some(l) = s.strip_prefix("alphabeta:") {
            Ok(PlayerSpec::AlphaBeta(l.parse()?))
        } else if s == "uniform" {
            Ok(PlayerSpec::Uniform)
        } else if s == "rollout" {
            Ok(PlayerSpec::Rollout)
        } else if s == "random" {
            Ok(PlayerSpec::Random)
        } else {
            Err(format!(
                "unknown player `{s}`: use checkpoint:DIR, uniform, rollout, random, alphabeta:depth=N, alphabeta:nodes=N, alphabeta:movetime=MS or usi:COMMAND"
            ))
        }
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Checkpoint(p) => write!(f, "checkpoint:{}", p.display()),
            PlayerSpec::Uniform => f.write_str("uniform"),
            PlayerSpec::Rollout => f.write_str("rollout"),
            PlayerSpec::Random => f.write_str("random"),
            PlayerSpec::Usi(c) => write!(f, "usi:{c}"),
            PlayerSpec::AlphaBeta(l) => write!(f, "alphabeta:{l}"),
        }
    }
}

/// Opening plies the searching players of a match play with temperature 1 unless told
/// otherwise: enough that paired games from one opening differ, few enough that the
/// networks are measured at their own strength.
pub const MATCH_TEMPERATURE_PLIES: u32 = 4;

/// Settings of the built-in players and the engine clock. The default is strength play
/// ([`SearchConfig::for_play`]) at its simulations and batch, with
/// [`MATCH_TEMPERATURE_PLIES`] of opening temperature.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSettings {
    /// MCTS simulations per move (checkpoint, uniform and rollout players); with
    /// `movetime_ms`, the most a move may use (`u32::MAX`: the time alone decides).
    pub simulations: u32,
    /// Time per move of the searching players (checkpoint, uniform and rollout), ms:
    /// the search stops when it has passed (or at `simulations`, whichever comes first),
    /// so that a network can play `alphabeta:movetime=MS` at equal time. `None`: the
    /// simulations alone decide (the same moves on every machine). A PUCT root stops
    /// at the deadline; a Gumbel root plans its sequential halving for the simulations
    /// its measured speed fits into the time (its first search, before any speed is
    /// known, plans for `simulations` and is cut at the deadline).
    pub movetime_ms: Option<u64>,
    /// Opening plies (counted from the game's start position) played with temperature
    /// 1 by the searching players; 0 afterwards. No Dirichlet noise.
    pub temperature_plies: u32,
    /// Leaves evaluated together per tree (search batch).
    pub tree_batch: usize,
    /// How the searching players' root searches (PUCT or a noise-free Gumbel root, and
    /// its options).
    pub root: RootSettings,
    /// Nodes of the searching players' root mate search (0 = off); default
    /// [`SearchConfig::for_play`]'s.
    pub root_mate_nodes: usize,
    /// Device of the networks (`auto`, `cpu`, `cuda`, `cuda:N`).
    pub device: String,
    /// Largest network batch of the shared inference service.
    pub max_batch: usize,
    /// Inference threads of a checkpoint player, each with its own copy of the network
    /// and its own batches; the match's game threads take them in turn. Default 1
    /// (`match` and `curve` size theirs from the cores: `shogi_model::match_threads`).
    pub inference_threads: usize,
    /// External engines' clock, fixed work and options (the options of player A's
    /// engine; see `usi_options_b`).
    pub usi: UsiTimeControl,
    /// `setoption` NAME, VALUE pairs for player B's engine (player A's are in
    /// `usi.options`).
    pub usi_options_b: Vec<(String, String)>,
}

impl Default for PlayerSettings {
    fn default() -> Self {
        let play = SearchConfig::for_play();
        PlayerSettings {
            simulations: play.simulations,
            movetime_ms: None,
            temperature_plies: MATCH_TEMPERATURE_PLIES,
            tree_batch: play.tree_batch,
            root: RootSettings::default(),
            root_mate_nodes: play.root_mate_nodes,
            device: DEFAULT_DEVICE.into(),
            max_batch: BatchConfig::default().max_batch,
            inference_threads: 1,
            usi: UsiTimeControl::default(),
            usi_options_b: Vec::new(),
        }
    }
}

/// The game a checkpoint was trained for (from its manifest).
pub fn checkpoint_game(dir: &Path) -> Result<GameKind, ArenaError> {
    let manifest = read_manifest(dir).map_err(|source| ArenaError::Checkpoint {
        path: dir.to_path_buf(),
        source,
    })?;
    manifest
        .meta
        .variant
        .parse()
        .map_err(|e| ArenaError::Config(format!("checkpoint {}: {e}", dir.display())))
}

/// A mover driving the external USI engine `command`, where the arena's USI client
/// speaks the game `G`: it speaks shogi's moves and positions ([`ShogiGame`]: shogi and
/// minishogi), so any other game has none.
fn usi_mover<G: Game>(command: &str, tc: &UsiTimeControl) -> Option<Box<dyn Mover<G>>> {
    let shogi: Box<dyn Mover<ShogiGame>> = Box::new(UsiMover::new(command, tc));
    let mover: Box<dyn Any> = Box::new(shogi);
    mover
        .downcast::<Box<dyn Mover<G>>>()
        .ok()
        .map(|mover| *mover)
}

/// A mover playing `G`'s classical baseline (its [`GameBaseline::baseline`]) at
/// `limits`.
fn alphabeta_mover<G: MatchGame>(limits: &AlphaBetaLimits) -> Box<dyn Mover<G>> {
    Box::new(AlphaBetaMover {
        limits: *limits,
        search: G::baseline(),
    })
}

/// The version of `G`'s classical baseline, recorded with every match it plays (a cache
/// of its games is keyed on it).
pub fn baseline_version<G: MatchGame>() -> u32 {
    G::baseline().version()
}

/// What a match needs of a game: its adapters (`shogi-registry`'s [`ArenaGame`]) and its
/// classical baseline (`shogi-baseline`'s [`GameBaseline`]). Every game type has both.
pub trait MatchGame: ArenaGame + GameBaseline {}

impl<G: ArenaGame + GameBaseline> MatchGame for G {}

/// Refuses `spec` where the game (`G`, named `game`) does not offer it: the arena's USI
/// client speaks shogi and minishogi only.
fn check_player_for<G: MatchGame>(spec: &PlayerSpec, game: &str) -> Result<(), ArenaError> {
    let refused = match spec {
        PlayerSpec::Usi(command) => usi_mover::<G>(command, &UsiTimeControl::default())
            .is_none()
            .then(|| format!("the arena's USI client speaks shogi and minishogi only, not {game}")),
        _ => None,
    };
    match refused {
        Some(why) => Err(ArenaError::Config(why)),
        None => Ok(()),
    }
}

/// Refuses a USI engine that cannot be told to play minishogi (it would read every
/// position as standard shogi and forfeit every game): for a minishogi match the engine
/// is started once, before the first game, and its options read. An engine that does
/// not start or answer is left to the games, which record why it forfeits.
fn check_usi_variant(command: &str, tc: &UsiTimeControl, game: &str) -> Result<(), ArenaError> {
    if game != Variant::Minishogi.name() {
        return Ok(());
    }
    let Ok(engine) = UsiEngine::launch(command, tc) else {
        return Ok(());
    };
    variant_setoption(&engine.advertised, tc, Variant::Minishogi)
        .map(drop)
        .map_err(|e| ArenaError::Config(format!("player `{command}` ({}): {e}", engine.name)))
}

/// Whether `game` can be played by `spec`, checked before anything is loaded (a gate
/// checks its fixed opponent so that a bad one costs no games).
pub fn check_player(game: GameKind, spec: &PlayerSpec) -> Result<(), ArenaError> {
    with_game_type!(game, G => check_player_for::<G>(spec, game.name()))
}

enum Shared<G: Game> {
    Net {
        /// One per inference thread; each mover takes the next.
        evaluators: Vec<Arc<dyn Evaluator<G>>>,
        next: AtomicUsize,
        // Kept alive for the evaluators; shut down on drop.
        _service: NetService,
    },
    /// A network-free search (uniform priors; neutral or rollout values).
    Plain(Arc<dyn Evaluator<G>>),
    Random,
    Usi(String),
    AlphaBeta(AlphaBetaLimits),
}

/// A player ready to play: networks loaded into one shared batched inference service.
pub struct PreparedPlayer<G: Game = ShogiGame> {
    /// What it is.
    pub spec: PlayerSpec,
    /// A short display name.
    pub name: String,
    shared: Shared<G>,
    settings: PlayerSettings,
}

impl<G: MatchGame> fmt::Debug for PreparedPlayer<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedPlayer")
            .field("spec", &self.spec)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<G: MatchGame> PreparedPlayer<G> {
    /// Loads what `spec` needs for a network of `layout` (a checkpoint's network into a
    /// batch service). An external USI engine is refused where the variant has no USI.
    pub fn prepare(
        spec: &PlayerSpec,
        layout: NetLayout,
        settings: &PlayerSettings,
    ) -> Result<PreparedPlayer<G>, ArenaError> {
        let (name, shared) = match spec {
            PlayerSpec::Checkpoint(dir) => {
                let device = parse_device(&settings.device)?;
                let batch = BatchConfig {
                    max_batch: settings.max_batch,
                    ..BatchConfig::default()
                };
                // Matches and the gate measure the network in f32, as it was trained.
                let serving = Serving {
                    inference_threads: settings.inference_threads.max(1),
                    ..Serving::ONE
                };
                let service =
                    NetService::from_checkpoint(dir, layout, device, batch, false, serving)?;
                let name = service
                    .manifest()
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                let evaluators = (0..service.inference_threads())
                    .map(|i| Arc::new(service.evaluator_for::<G>(i)) as Arc<dyn Evaluator<G>>)
                    .collect();
                (
                    name,
                    Shared::Net {
                        evaluators,
                        next: AtomicUsize::new(0),
                        _service: service,
                    },
                )
            }
            PlayerSpec::Uniform => (
                "uniform".to_string(),
                Shared::Plain(Arc::new(UniformEvaluator::default())),
            ),
            PlayerSpec::Rollout => (
                "rollout".to_string(),
                Shared::Plain(Arc::new(RolloutEvaluator::new(
                    ROLLOUT_PLAYOUTS,
                    ROLLOUT_PLIES,
                    0x5eed,
                ))),
            ),
            PlayerSpec::Random => ("random".to_string(), Shared::Random),
            PlayerSpec::AlphaBeta(limits) => {
                check_player_for::<G>(spec, layout.variant)?;
                (format!("alphabeta:{limits}"), Shared::AlphaBeta(*limits))
            }
            PlayerSpec::Usi(command) => {
                check_player_for::<G>(spec, layout.variant)?;
                check_usi_variant(command, &settings.usi, layout.variant)?;
                (command.clone(), Shared::Usi(command.clone()))
            }
        };
        Ok(PreparedPlayer {
            spec: spec.clone(),
            name,
            shared,
            settings: settings.clone(),
        })
    }

    /// A mover for one worker thread (reused for all its games); a network player's
    /// movers take its inference threads in turn.
    pub fn mover(&self) -> Box<dyn Mover<G> + '_> {
        let evaluator = match &self.shared {
            Shared::Net {
                evaluators, next, ..
            } => evaluators[next.fetch_add(1, Ordering::Relaxed) % evaluators.len()].clone(),
            Shared::Plain(evaluator) => evaluator.clone(),
            Shared::Random => {
                return Box::new(RandomMover {
                    rng: ChaCha8Rng::seed_from_u64(0),
                });
            }
            Shared::Usi(command) => {
                return usi_mover::<G>(command, &self.settings.usi)
                    .expect("checked when the player was prepared");
            }
            Shared::AlphaBeta(limits) => {
                return alphabeta_mover::<G>(limits);
            }
        };
        let mut config = SearchConfig::for_play();
        config.simulations = self.settings.simulations.max(1);
        config.tree_batch = self.settings.tree_batch.max(1);
        config.root_mate_nodes = self.settings.root_mate_nodes;
        self.settings.root.apply(&mut config);
        config.temperature = 1.0;
        config.temperature_plies = self.settings.temperature_plies;
        config.temperature_after = 0.0;
        Box::new(SearchMover {
            evaluator,
            search: Search::new(config.clone(), 0),
            movetime: self.settings.movetime_ms.map(Duration::from_millis),
            speed: SearchSpeed::default(),
            last_simulations: None,
            config,
        })
    }
}

/// One player's side of the games on one thread.
pub trait Mover<G: Game = ShogiGame>: Send {
    /// A new game starts from `game` (`seed` varies per game). An error forfeits it.
    fn new_game(&mut self, game: &G, seed: u64) -> Result<(), String>;
    /// The move for the side to move.
    fn choose(&mut self, game: &G) -> UsiAnswer<G::Move>;
    /// `mv` was played (by either side).
    fn observe(&mut self, mv: G::Move);
    /// The game ended; `score` is this player's (1, 0.5, 0).
    fn game_over(&mut self, score: f64);
    /// Nodes its last [`Mover::choose`] searched (a network player's simulations, a USI
    /// engine's own count), where the player says.
    fn searched(&self) -> Option<u64> {
        None
    }
}

struct SearchMover<G: Game> {
    evaluator: Arc<dyn Evaluator<G>>,
    search: Search<G>,
    config: SearchConfig,
    /// Time per move (none: simulations only).
    movetime: Option<Duration>,
    /// The speed of this player's earlier timed searches.
    speed: SearchSpeed,
    /// Simulations of the last search.
    last_simulations: Option<u64>,
}

impl<G: Game> SearchMover<G> {
    /// This move's limits: the config's simulations, or under a time per move a
    /// deadline and (Gumbel root) the simulations the measured speed fits into it.
    fn limits(&self) -> SearchLimits {
        let Some(movetime) = self.movetime else {
            return SearchLimits::default();
        };
        let mut budget = self.config.simulations;
        if self.config.root_selection == RootSelection::Gumbel
            && let Some(planned) = self.speed.budget(movetime, budget)
        {
            budget = planned;
        }
        SearchLimits {
            simulations: Some(budget.max(1)),
            deadline: Instant::now().checked_add(movetime),
            ..SearchLimits::default()
        }
    }
}

impl<G: Game> Mover<G> for SearchMover<G> {
    fn new_game(&mut self, _game: &G, seed: u64) -> Result<(), String> {
        self.search = Search::new(self.config.clone(), seed);
        Ok(())
    }
    fn choose(&mut self, game: &G) -> UsiAnswer<G::Move> {
        let limits = self.limits();
        // A failed network call is tried again inside the search (as in self-play);
        // only a network that keeps failing, or is gone, forfeits the game.
        let searched = self.search.search(game, &*self.evaluator, &limits);
        self.last_simulations = searched.as_ref().ok().map(|r| u64::from(r.simulations));
        match searched {
            Ok(r) => {
                if self.movetime.is_some() {
                    self.speed.observe(&r);
                }
                match r.best_move {
                    Some(mv) => UsiAnswer::Move(mv),
                    None => UsiAnswer::Forfeit("search found no move".into()),
                }
            }
            Err(e) => UsiAnswer::Forfeit(format!("search failed: {e}")),
        }
    }
    fn observe(&mut self, mv: G::Move) {
        self.search.advance(mv);
    }
    fn game_over(&mut self, _score: f64) {
        self.search.clear();
    }
    fn searched(&self) -> Option<u64> {
        self.last_simulations
    }
}

struct RandomMover {
    rng: ChaCha8Rng,
}

impl<G: Game> Mover<G> for RandomMover {
    fn new_game(&mut self, _game: &G, seed: u64) -> Result<(), String> {
        self.rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7a4d_0b5e);
        Ok(())
    }
    fn choose(&mut self, game: &G) -> UsiAnswer<G::Move> {
        let mut legal = Vec::new();
        game.legal_moves(&mut legal);
        if legal.is_empty() {
            return UsiAnswer::Resign;
        }
        UsiAnswer::Move(legal[self.rng.random_range(0..legal.len())])
    }
    fn observe(&mut self, _mv: G::Move) {}
    fn game_over(&mut self, _score: f64) {}
}

/// Drives an external USI engine (shogi and minishogi).
pub(crate) struct UsiMover {
    command: String,
    tc: UsiTimeControl,
    engine: Option<UsiEngine>,
    clock: [u64; 2],
}

impl UsiMover {
    pub(crate) fn new(command: &str, tc: &UsiTimeControl) -> UsiMover {
        UsiMover {
            command: command.to_string(),
            tc: tc.clone(),
            engine: None,
            clock: [0, 0],
        }
    }
}

impl Mover<ShogiGame> for UsiMover {
    fn new_game(&mut self, game: &ShogiGame, _seed: u64) -> Result<(), String> {
        if let Some(engine) = &mut self.engine
            && !engine.is_alive()
        {
            self.engine = None;
        }
        if self.engine.is_none() {
            let variant = game.start_position().variant();
            self.engine = Some(UsiEngine::start(&self.command, &self.tc, variant)?);
        }
        self.clock = [self.tc.main_time_ms; 2];
        let engine = self.engine.as_mut().ok_or("no engine")?;
        engine.new_game(&self.tc)
    }
    fn choose(&mut self, game: &ShogiGame) -> UsiAnswer {
        let Some(engine) = self.engine.as_mut() else {
            return UsiAnswer::Forfeit("engine not running".into());
        };
        let side = game.position().side_to_move().index();
        let began = std::time::Instant::now();
        let answer = engine.go(game, &self.tc, self.clock);
        // Main time: the bank shrinks by what the engine used beyond its byoyomi (or grows
        // by the increment); running past bank + byoyomi + margin is a forfeit (in `go`).
        let used = began.elapsed().as_millis() as u64;
        self.clock[side] = if self.tc.increment_ms > 0 {
            (self.clock[side] + self.tc.increment_ms).saturating_sub(used)
        } else {
            self.clock[side].saturating_sub(used.saturating_sub(self.tc.byoyomi_ms))
        };
        if let UsiAnswer::Forfeit(_) = answer {
            // The engine is in an unknown state: restart it for the next game.
            self.engine = None;
        }
        answer
    }
    fn observe(&mut self, _mv: Move) {}
    fn game_over(&mut self, score: f64) {
        if let Some(engine) = &mut self.engine {
            engine.game_over(score);
        }
    }
    fn searched(&self) -> Option<u64> {
        self.engine.as_ref().and_then(UsiEngine::last_nodes)
    }
}

/// Plays a game's classical baseline (`shogi-baseline`) at a fixed depth, node count or
/// time per move.
struct AlphaBetaMover<G: Game> {
    limits: AlphaBetaLimits,
    search: Box<dyn Baseline<G>>,
}

impl<G: Game> Mover<G> for AlphaBetaMover<G> {
    fn new_game(&mut self, _game: &G, seed: u64) -> Result<(), String> {
        // Nonzero: a zero seed turns the tie-break noise off.
        self.search.new_game(seed | 1);
        Ok(())
    }
    fn choose(&mut self, game: &G) -> UsiAnswer<G::Move> {
        match self.search.best_move(game, &self.limits) {
            Some(mv) => UsiAnswer::Move(mv),
            None => UsiAnswer::Resign,
        }
    }
    fn observe(&mut self, _mv: G::Move) {}
    fn game_over(&mut self, _score: f64) {}
}

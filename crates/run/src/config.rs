//! The run config: TOML, every key documented with its unit and default, unknown keys
//! rejected and out-of-range values refused with the key's full path.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use shogi_arena::{GATE_SPRT, GateConfig};
use shogi_features::FeatureSet;
use shogi_game::{GameKind, MaterialScale};
use shogi_learner::{LearnerConfig, ReplayWindow, SampleConfig};
use shogi_mcts::SearchKnob as Knob;
use shogi_mcts::knobs::KnobKind;
use shogi_mcts::{SEARCH_KNOBS, SearchConfig};
use shogi_model::{
    DEFAULT_BLOCKS, DEFAULT_CHANNELS, DEFAULT_DEVICE, DEFAULT_STEM_KERNEL, OptimizerKind,
    OptimizerSettings, SELFPLAY_HALF_INFERENCE, ThreadCount,
};
use shogi_registry::TRAINING_MAX_PLIES;
use shogi_rules::ImpasseRule;
use shogi_selfplay::actors::{ActorConfig, SELFPLAY_BATCH};
use shogi_selfplay::play::PlayConfig;
use shogi_tai::{EmperorCaptures, LionDog, PromotionTrigger, Repetition, TaiRules};

mod validate;

/// A config that could not be read, parsed or validated. Every message names the file
/// and the key (`section.key`) that was wrong.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid TOML.
    #[error("{origin}: not valid TOML: {message}")]
    Syntax {
        /// File name or `--set`.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A key is unknown or has the wrong type.
    #[error("{origin}: {key}: {message}")]
    Key {
        /// File name or `--set`.
        origin: String,
        /// Full path of the key, e.g. `selfplay.simulations`.
        key: String,
        /// What was wrong.
        message: String,
    },
    /// A value is out of its range.
    #[error("{origin}: {key} = {value} is out of range: {expected}")]
    Range {
        /// File name.
        origin: String,
        /// Full path of the key.
        key: String,
        /// The value given.
        value: String,
        /// The allowed range.
        expected: String,
    },
    /// A `--set` override is malformed.
    #[error("--set {given:?}: {message}")]
    Override {
        /// The override as given.
        given: String,
        /// What was wrong.
        message: String,
    },
}

/// `learner.optimizer`: which optimiser (its settings are other `learner` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerName {
    /// SGD with Nesterov momentum (`learner.momentum`).
    Sgd,
    /// AdamW (betas 0.9, 0.999).
    Adamw,
}

/// `learner.schedule`: the learning-rate schedule (its settings are the `lr_*` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScheduleName {
    /// `learner.lr` throughout.
    Constant,
    /// Multiplied by `lr_factor` at each of `lr_boundaries`.
    Steps,
    /// Warm-up over `lr_warmup`, cosine decay to `lr_min` at `lr_total`.
    Cosine,
}

/// The whole run config. A key's default is the library's own (the search's
/// [`SearchConfig::default`], the learner's [`OptimizerSettings::default`] and
/// [`SampleConfig::default`], the gate's [`GateConfig::default`], ...), written here
/// only where the run itself decides it; `configs/minishogi.toml` sets some keys
/// differently and lists every default in its comments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// `[run]`: where, how long, on what.
    pub run: RunSection,
    /// `[game]`: the variant and its rules.
    pub game: GameSection,
    /// `[network]`: the residual tower.
    pub network: NetworkSection,
    /// `[selfplay]`: actors and search.
    pub selfplay: SelfplaySection,
    /// `[learner]`: optimiser, schedule, replay window.
    pub learner: LearnerSection,
    /// `[gate]`: promotion of candidates.
    pub gate: GateSection,
    /// `[play]`: how the run's networks play when they are measured (read and written
    /// by [`RunConfig::parse`] and [`RunConfig::to_toml`]).
    #[serde(skip)]
    pub play: PlaySection,
}

/// `[run]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Run directory, relative to the working directory. Default `runs/minishogi`.
    pub dir: PathBuf,
    /// Seed of every random choice in the run. Default 1.
    pub seed: u64,
    /// The network a fresh run starts from instead of a random one: a checkpoint
    /// directory, or a run directory (its best network), e.g. one `learn` trained on
    /// imported game records. It must match the run's `[game]` and `[network]`; the
    /// run's manifest names it as the parent. Empty: a random network. Default "".
    pub init: String,
    /// Wall-clock budget in minutes (0 = none). Default 30.
    pub minutes: f64,
    /// Learner steps after which the run ends (0 = none). Default 0.
    pub max_steps: u64,
    /// Device: `auto`, `cpu`, `cuda`, `cuda:N`. Default `auto`.
    pub device: String,
    /// libtorch intra-op threads in each thread that runs a network: a number, or
    /// `auto`: 1 on a CPU (self-play already keeps every core busy, and intra-op teams on
    /// busy cores wait on each other), a quarter of the cores (at most 4) for the host
    /// side of a GPU. Default `auto`.
    pub torch_threads: ThreadCount,
    /// Seconds between status lines. Default 10.
    pub status_every_secs: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            dir: PathBuf::from("runs/minishogi"),
            seed: 1,
            init: String::new(),
            minutes: 30.0,
            max_steps: 0,
            device: DEFAULT_DEVICE.into(),
            torch_threads: ThreadCount::Auto,
            status_every_secs: 10,
        }
    }
}

/// `[game]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GameSection {
    /// `shogi`, `minishogi` or `tai`. Default `minishogi`.
    pub variant: GameKind,
    /// Plies after which a game is drawn. Default 200.
    pub max_plies: u32,
    /// Impasse rule: `none`, `declaration27`, `points24`. Default `none`.
    pub impasse: ImpasseRule,
    /// `[game.tai]`: tai shogi's switchable rule readings (ignored for other variants).
    pub tai: TaiSection,
}

impl Default for GameSection {
    fn default() -> Self {
        GameSection {
            variant: GameKind::Minishogi,
            max_plies: TRAINING_MAX_PLIES,
            impasse: ImpasseRule::None,
            tai: TaiSection::default(),
        }
    }
}

/// `[game.tai]`: the readings the seed leaves open (defaults: the seed's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaiSection {
    /// The emperor's captures: `undefended_royals` (the seed), `undefended_pieces`,
    /// `never`.
    pub emperor: EmperorCaptures,
    /// Promotion trigger: `first_capture` (the seed), `capturing_promoted`.
    pub promotion: PromotionTrigger,
    /// The lion dog: `three_step` (the seed), `q3`.
    pub lion_dog: LionDog,
    /// Whether the great elephant exists (without it the lion dog does not promote).
    pub great_elephant: bool,
    /// Repetition: `fourfold_draw` (default), `forbidden`.
    pub repetition: Repetition,
}

impl Default for TaiSection {
    fn default() -> Self {
        TaiSection {
            emperor: EmperorCaptures::UndefendedRoyals,
            promotion: PromotionTrigger::FirstCapture,
            lion_dog: LionDog::ThreeStep,
            great_elephant: true,
            repetition: Repetition::FourfoldDraw,
        }
    }
}

impl TaiSection {
    /// The rules these keys select, with `max_plies`.
    pub fn rules(&self, max_plies: u32) -> TaiRules {
        TaiRules {
            max_plies,
            emperor: self.emperor,
            promotion: self.promotion,
            lion_dog: self.lion_dog,
            great_elephant: self.great_elephant,
            repetition: self.repetition,
        }
    }
}

/// `[network]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkSection {
    /// Residual blocks. Default 4.
    pub blocks: usize,
    /// Channels per convolution. Default 32.
    pub channels: usize,
    /// Squeeze-and-excitation in each block (Leela Chess Zero's global context). Part
    /// of the architecture. Experimental (measured on a minishogi hour and not adopted:
    /// docs/EXPERIMENTS.md). Default false.
    pub se: bool,
    /// The value head pools its channels over the board (mean and max, KataGo's global
    /// pooling) instead of reading every square with its own weights. Part of the
    /// architecture. Tai's lever (`configs/tai.toml`: no 20,000-wide flat layer on its
    /// board); measured on a shogi hour and not adopted there (docs/EXPERIMENTS.md).
    /// Default false.
    pub value_pool: bool,
    /// Input planes: `pieces` (AlphaZero's) or `attacks` (pieces plus each side's
    /// attacked squares, attacker counts and check; shogi and minishogi). Recorded in
    /// every checkpoint; a run cannot change it. Default "pieces".
    pub features: FeatureSet,
    /// Kernel of the stem convolution, odd: 3 (AlphaZero's), or 1 where the input has
    /// many sparse planes (tai shogi's 207: there a 3x3 stem costs as much as the
    /// tower). Part of the architecture. Default 3.
    pub stem_kernel: usize,
}

impl Default for NetworkSection {
    fn default() -> Self {
        NetworkSection {
            blocks: DEFAULT_BLOCKS,
            channels: DEFAULT_CHANNELS,
            se: false,
            value_pool: false,
            features: FeatureSet::Pieces,
            stem_kernel: DEFAULT_STEM_KERNEL,
        }
    }
}

/// `[selfplay]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplaySection {
    /// The self-play search: every key of [`shogi_mcts::SEARCH_KNOBS`] (`simulations`,
    /// `root`, `gumbel_gain`, ...), described, range-checked and defaulted there and in
    /// docs/SEARCH.md; read and written by [`RunConfig::parse`] and
    /// [`RunConfig::to_toml`].
    #[serde(skip)]
    pub search: SearchConfig,
    /// Self-play games in flight, spread over `actor_threads`, whose network calls the
    /// `inference_threads` batch. Default 16.
    pub actors: usize,
    /// Threads that advance those games; each sends the leaves of its games in one
    /// request. A number, or `auto`: one per core the process may use (no more than
    /// `actors`) on a CPU, all cores but two with a GPU. Default `auto`.
    pub actor_threads: ThreadCount,
    /// Threads that run the self-play network, each with its own copy and its own
    /// batches, serving the actor threads in turn. A number, or `auto`: one per actor
    /// thread on a CPU (each pair alternates between search and network, so every core
    /// works and no batch waits for another thread), one on a GPU (which keeps two
    /// batches in flight). Default `auto`.
    pub inference_threads: ThreadCount,
    /// Uniformly random opening plies before search (not recorded as targets). Default 0.
    pub random_opening_plies: u32,
    /// Resign when the expected score stays below this (0 = never). Default 0.05.
    pub resign_threshold: f32,
    /// Share of games with resignation disabled (false-resignation check). Default 0.2.
    pub resign_disabled_fraction: f32,
    /// Material lead that wins a game reaching `max_plies` (shogi: rook and bishop 5,
    /// others 1; tai shogi: mobility values, see the tai crate's `material`); 0 = draw.
    /// Default 0.
    pub adjudicate_margin: u32,
    /// Largest network batch. Default 16.
    pub max_batch: usize,
    /// Longest wait for a batch to fill, in milliseconds. Default 2.
    pub max_wait_ms: u64,
    /// Games per replay chunk file. Default 8.
    pub games_per_chunk: usize,
    /// Games started between checks for a newer best network, and the seed block each
    /// generation number stands for. A newer network replaces the served one between
    /// two batches: the games in flight go on with it, no slot waits. Default 32.
    pub games_per_generation: u64,
    /// Run the self-play network in half precision: f16 on CUDA (about twice the
    /// throughput of f32 on tensor cores; the priors and values differ from f32 by about
    /// 1e-3), bf16 on a CPU with AVX-512 BF16 (about twice f32's convolutions), f32 on
    /// other CPUs (the log says which). Default true.
    pub half_inference: bool,
}

impl Default for SelfplaySection {
    /// The self-play libraries' defaults ([`SearchConfig`], [`PlayConfig`],
    /// [`ActorConfig`], [`SELFPLAY_BATCH`]); only the run-level keys are set here.
    fn default() -> Self {
        let play = PlayConfig::default();
        let actors = ActorConfig::default();
        SelfplaySection {
            search: SearchConfig::default(),
            actors: ActorConfig::DEFAULT_GAMES_IN_FLIGHT,
            actor_threads: ThreadCount::Auto,
            inference_threads: ThreadCount::Auto,
            random_opening_plies: play.random_opening_plies,
            resign_threshold: play.resign_threshold,
            resign_disabled_fraction: play.resign_disabled_fraction,
            adjudicate_margin: play.adjudicate_margin,
            max_batch: SELFPLAY_BATCH.max_batch,
            max_wait_ms: SELFPLAY_BATCH.max_wait.as_millis() as u64,
            games_per_chunk: actors.games_per_chunk,
            games_per_generation: 32,
            half_inference: SELFPLAY_HALF_INFERENCE,
        }
    }
}

/// `[learner]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LearnerSection {
    /// Minibatch size. Default 256.
    pub batch: usize,
    /// Replay window: the most recent positions sampled from. Default 100000.
    pub window: usize,
    /// Above 0, the window grows with the positions the run has played, N, as KataGo's
    /// does: `window x (1 + growth x ((N / window)^window_exponent - 1) /
    /// window_exponent)` once N passes `window` (KataGo: 0.4). 0: a fixed window.
    /// Experimental (measured past the hour and not adopted on its own, kept for runs
    /// longer still: docs/EXPERIMENTS.md, "Beyond the hour"). Default 0.
    pub window_growth: f64,
    /// The exponent of that growth, in (0, 1] (KataGo: 0.75). Default 0.75.
    pub window_exponent: f64,
    /// Positions in the window before the first step. Default 2000.
    pub min_positions: usize,
    /// Most samples trained per position played (throttles the learner so it does not
    /// overfit a small window). Default 4.0.
    pub replay_ratio: f64,
    /// Steps between candidate exports. Default 200.
    pub steps_per_candidate: u64,
    /// `sgd` (momentum, Nesterov) or `adamw`. Default `sgd`.
    pub optimizer: OptimizerName,
    /// Learning rate (peak for `cosine`, initial for `steps`). Default 0.02.
    pub lr: f64,
    /// `constant`, `steps` (multiply by `lr_factor` at each of `lr_boundaries`) or
    /// `cosine` (warm up over `lr_warmup`, decay to `lr_min` at `lr_total`). Default
    /// `constant`.
    pub schedule: ScheduleName,
    /// `steps`: learner steps at which the rate drops. Default [].
    pub lr_boundaries: Vec<u64>,
    /// `steps`: factor at each drop. Default 0.1.
    pub lr_factor: f64,
    /// `cosine`: warmup steps. Default 0.
    pub lr_warmup: u64,
    /// `cosine`: steps to reach `lr_min`. Default 10000.
    pub lr_total: u64,
    /// `cosine`: final rate. Default 0.0002.
    pub lr_min: f64,
    /// SGD momentum. Default 0.9 (AlphaZero).
    pub momentum: f64,
    /// Weight decay (L2). Default 1e-4 (AlphaZero).
    pub weight_decay: f64,
    /// Gradient-norm clip (0 = none). Default 10.
    pub grad_clip: f64,
    /// Weight of the value loss. Default 1.0.
    pub value_weight: f64,
    /// Blend of the root value into the value target, 0..=1. Experimental (measured
    /// and not adopted: docs/EXPERIMENTS.md). Default 0.0.
    pub q_blend: f32,
    /// Weight of the auxiliary material target; above 0 the network gets a material head
    /// predicting the side to move's material balance `material_plies` later (own minus
    /// the opponent's points over their sum: shogi's impasse points, tai's mobility
    /// values). Part of the architecture: fixed for a run. Experimental (measured and
    /// not adopted: docs/EXPERIMENTS.md). Default 0.0 (no head).
    pub material_weight: f64,
    /// Plies ahead of the position the material target is read (clamped to the game's
    /// last position). Default 8.
    pub material_plies: u32,
    /// Blend of the material outcome `material_plies` later into the value target, 0..=1
    /// (`shogi_learner::SampleConfig::material_value`): a dense value signal, needs no
    /// head. Default 0.0.
    pub material_value: f32,
    /// Gain of the material balance in that blend: the target's material score is
    /// `tanh(gain * balance)` (`shogi_learner::MATERIAL_VALUE_GAIN` by default, 5).
    pub material_gain: f32,
    /// The piece values of the material target and blend: `impasse` (shogi's impasse
    /// points: rook and bishop 5, every other piece 1) or `mobility` (each piece worth
    /// the squares it reaches from the centre of an empty board; tai counts this way
    /// under both). Default "impasse".
    pub material_scale: MaterialScale,
    /// Count in every material balance of the target and blend what the side to move
    /// wins by its best capture and the recaptures on that square (a static exchange
    /// evaluation from the rules; `shogi_learner::SampleConfig::material_exchange`), so
    /// a piece left hanging counts as lost even when the self-play players let it be.
    /// Tai shogi counts its own static exchange (`TaiGame::best_exchange`). Default
    /// false.
    pub material_exchange: bool,
    /// Delete replay chunks once all their games have left the window (`replay/` then
    /// holds about one window of games; `export` and a later larger window see no older
    /// games). Default false: keep every game.
    pub prune_replay: bool,
    /// Train in mixed precision where the device computes a half type natively: f16
    /// autocast with dynamic loss scaling on CUDA (the scale is saved with the
    /// optimiser's state), the convolutions in bf16 on a CPU with AVX-512 BF16; f32 on
    /// other CPUs (the log's first lines say which). Default true.
    pub mixed_precision: bool,
    /// Decay of an exponential moving average of the weights, updated every step, that
    /// candidates carry instead of the last step's weights (0 = none;
    /// [`OptimizerSettings::ema_decay`]). About `1 / (1 - decay)` steps are averaged.
    /// Experimental (measured on half-hour runs and not adopted, kept for long runs as
    /// KataGo's: docs/EXPERIMENTS.md). Default 0.
    pub ema_decay: f64,
    /// Weight of the auxiliary opponent-policy target; above 0 the network gets a second
    /// policy output predicting the opponent's reply (the next position's search policy,
    /// or the move played there; KataGo's target, weighted 0.15 there). Part of the
    /// architecture: fixed for a run. Experimental (measured on half-hour runs and not
    /// adopted: docs/EXPERIMENTS.md). Default 0.0 (no head).
    pub opponent_policy_weight: f64,
}

impl Default for LearnerSection {
    /// The learner libraries' defaults ([`OptimizerSettings`], [`SampleConfig`],
    /// [`LearnerConfig`], [`ReplayWindow`]); only the run-level keys are set here.
    fn default() -> Self {
        let train = OptimizerSettings::default();
        let samples = SampleConfig::default();
        let OptimizerKind::Sgd { momentum, .. } = train.optimizer else {
            unreachable!("OptimizerSettings::default() uses SGD")
        };
        LearnerSection {
            batch: LearnerConfig::DEFAULT_BATCH,
            window: ReplayWindow::DEFAULT_CAPACITY,
            window_growth: 0.0,
            window_exponent: 0.75,
            min_positions: 2000,
            replay_ratio: 4.0,
            steps_per_candidate: LearnerConfig::DEFAULT_EXPORT_EVERY,
            optimizer: OptimizerName::Sgd,
            lr: train.lr,
            schedule: ScheduleName::Constant,
            lr_boundaries: Vec::new(),
            lr_factor: 0.1,
            lr_warmup: 0,
            lr_total: 10_000,
            lr_min: 0.0002,
            momentum,
            weight_decay: train.weight_decay,
            grad_clip: train.grad_clip.unwrap_or(0.0),
            value_weight: train.value_weight,
            q_blend: samples.q_blend,
            // The run's 0 means "no material head" (OptimizerSettings's weight only scales
            // the loss of a network that has one).
            material_weight: 0.0,
            material_plies: samples.material_plies,
            material_value: samples.material_value,
            material_gain: samples.material_gain,
            material_scale: samples.material_scale,
            material_exchange: samples.material_exchange,
            prune_replay: false,
            mixed_precision: train.mixed_precision,
            ema_decay: train.ema_decay,
            // As material_weight: the run's 0 means no head.
            opponent_policy_weight: 0.0,
        }
    }
}

/// `[gate]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateSection {
    /// Gate candidates at all; off = every candidate is accepted (AlphaZero's
    /// continual update). Default true.
    pub enabled: bool,
    /// Games per gate match (colours alternate over opening pairs). Default 40.
    pub games: u32,
    /// Score the candidate needs, 0..=1. Default 0.55 (AlphaGo Zero).
    pub threshold: f64,
    /// Simulations per move in gate games. Default 64.
    pub simulations: u32,
    /// Gate games played at once. Default 8.
    pub parallel_games: usize,
    /// Random opening plies for the opening pairs. Default 4.
    pub opening_plies: u32,
    /// A gate game that reaches `game.max_plies` goes to the side ahead by at least this
    /// many material points (rook and bishop 5, other pieces 1, board plus hand; tai
    /// shogi: mobility values); 0 = such games are draws. Default 0. Early shogi networks
    /// draw most games at the ply limit, which leaves a threshold gate unable to tell them
    /// apart.
    pub adjudicate_margin: u32,
    /// Stop a gate match early by SPRT (H1 promotes, H0 rejects; undecided falls back
    /// to `threshold`). Default false.
    pub sprt: bool,
    /// SPRT: Elo of H0. Default 0.
    pub sprt_elo0: f64,
    /// SPRT: Elo of H1. Default 35 (a gate wants clear progress, not 5 Elo).
    pub sprt_elo1: f64,
    /// SPRT: false-positive and false-negative rates. Default 0.05.
    pub sprt_error: f64,
    /// A fixed opponent every accepted network also plays (a player spec such as
    /// `alphabeta:depth=2`), so that `ratings.png` has a line on a scale that does not
    /// move with the run. Empty = off. Default off.
    pub fixed_opponent: String,
    /// Games against `fixed_opponent` (paired). Default 20.
    pub fixed_games: u32,
}

impl Default for GateSection {
    /// The arena's defaults ([`GateConfig`], [`GATE_SPRT`]).
    fn default() -> Self {
        let gate = GateConfig::default();
        GateSection {
            enabled: true,
            games: gate.games,
            threshold: gate.threshold,
            simulations: gate.simulations,
            parallel_games: gate.parallel_games,
            opening_plies: gate.opening_plies,
            adjudicate_margin: gate.adjudicate_margin,
            sprt: gate.sprt.is_some(),
            sprt_elo0: GATE_SPRT.elo0,
            sprt_elo1: GATE_SPRT.elo1,
            sprt_error: GATE_SPRT.alpha,
            fixed_opponent: gate.fixed_opponent.unwrap_or_default(),
            fixed_games: gate.fixed_games,
        }
    }
}

/// `[play]`: how the run's networks play when they are measured (`learns.sh`'s matches,
/// its ladder and curve, `match`/`curve --root-of RUN`, the gate, the USI engine's
/// `RunSearch`): the self-play search without its noise, and these play knobs
/// ([`shogi_mcts::play_knobs`]) where set, which need not be what self-play
/// trained with (a search aid can help a network play without helping it learn). A
/// key left out is the `[selfplay]` value; a key given is the value at play time, 0 and
/// `false` included.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlaySection {
    set: Vec<(&'static str, f64)>,
}

impl PlaySection {
    /// The value `[play]` gives `key`, if it gives one.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.set.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }

    /// Gives the play knob `key` `value` at play time.
    pub fn set(&mut self, key: &'static str, value: f64) {
        self.set.retain(|(k, _)| *k != key);
        self.set.push((key, value));
    }

    /// The play knobs `[play]` sets, with their values.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.set.iter().copied()
    }
}

impl RunConfig {
    /// Reads `path`, applies `overrides` (`section.key=value`, the value in TOML syntax or
    /// a bare string) and validates.
    pub fn load(path: &Path, overrides: &[String]) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string(), overrides)
    }

    /// Parses `text` (named `origin` in errors), applies `overrides`, validates.
    pub fn parse(text: &str, origin: &str, overrides: &[String]) -> Result<RunConfig, ConfigError> {
        let mut table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigError::Syntax {
                    origin: origin.to_string(),
                    message: e.to_string().trim().to_string(),
                })?;
        for given in overrides {
            apply_override(&mut table, given)?;
        }
        let origin = if overrides.is_empty() {
            origin.to_string()
        } else {
            format!("{origin} (with --set)")
        };
        let (search, play) = take_knobs(&mut table, &origin)?;
        let mut config: RunConfig = serde_path_to_error::deserialize(toml::Value::Table(table))
            .map_err(|e| {
                let key = e.path().to_string();
                let message = e.into_inner().to_string();
                // For an unknown key the path names its section; the message names the key.
                ConfigError::Key {
                    origin: origin.clone(),
                    key: if key == "." {
                        "(top level)".into()
                    } else {
                        key
                    },
                    message: message.trim().to_string(),
                }
            })?;
        config.selfplay.search = search;
        config.play = play;
        config.validate(&origin)?;
        Ok(config)
    }

    /// The config as TOML (the run directory's snapshot): every key, the search knobs
    /// in `[selfplay]`, and `[play]` with the keys it sets.
    pub fn to_toml(&self) -> String {
        // Through text, so f32 values keep their shortest form (0.05, not 0.0500000007).
        let mut table: toml::Table = toml::to_string(self)
            .expect("a RunConfig always serialises")
            .parse()
            .expect("its own TOML reads back");
        let knob_value = |knob: &Knob, value: f64| match knob.kind {
            KnobKind::Switch => toml::Value::Boolean(value != 0.0),
            KnobKind::Count => toml::Value::Integer(value as i64),
            KnobKind::Choice(_) => toml::Value::String(knob.show(value)),
            KnobKind::Real => toml::Value::Float(knob.show(value).parse().unwrap_or(value)),
        };
        if let Some(selfplay) = table.get_mut("selfplay").and_then(|t| t.as_table_mut()) {
            for knob in SEARCH_KNOBS {
                let value = knob_value(knob, knob.get(&self.selfplay.search));
                selfplay.insert(knob.key.into(), value);
            }
        }
        let play: toml::Table = self
            .play
            .iter()
            .filter_map(|(key, value)| {
                let knob = shogi_mcts::knob(key)?;
                Some((key.to_string(), knob_value(knob, value)))
            })
            .collect();
        table.insert("play".into(), toml::Value::Table(play));
        toml::to_string_pretty(&table).expect("a RunConfig always serialises")
    }
}

/// Takes the search knobs out of `[selfplay]` (a fresh search's defaults where a key is
/// left out) and the play knobs `[play]` sets, each checked against its description;
/// the rest of the table is left for serde.
fn take_knobs(
    table: &mut toml::Table,
    origin: &str,
) -> Result<(SearchConfig, PlaySection), ConfigError> {
    let mut search = SearchConfig::default();
    for section in ["selfplay", "play"] {
        if let Some(given) = table.get_mut(section).and_then(|t| t.as_table_mut()) {
            take_retired(given, origin, section)?;
        }
    }
    if let Some(selfplay) = table.get_mut("selfplay").and_then(|t| t.as_table_mut()) {
        for knob in SEARCH_KNOBS {
            for name in std::iter::once(&knob.key).chain(knob.aliases) {
                if let Some(given) = selfplay.remove(*name) {
                    let key = format!("selfplay.{name}");
                    knob.set(&mut search, knob_value(knob, &given, origin, &key)?);
                }
            }
        }
    }
    let mut play = PlaySection::default();
    match table.remove("play") {
        None => {}
        Some(toml::Value::Table(given)) => {
            for (name, given) in given {
                let key = format!("play.{name}");
                let knob = shogi_mcts::knob(&name)
                    .filter(|k| k.play.is_some() && k.key == name)
                    .ok_or_else(|| {
                        let known: Vec<&str> = shogi_mcts::play_knobs().map(|k| k.key).collect();
                        ConfigError::Key {
                            origin: origin.to_string(),
                            key: key.clone(),
                            message: format!("unknown key; [play] takes {}", known.join(", ")),
                        }
                    })?;
                play.set(knob.key, knob_value(knob, &given, origin, &key)?);
            }
        }
        Some(_) => {
            return Err(ConfigError::Key {
                origin: origin.to_string(),
                key: "play".into(),
                message: "expected a section ([play])".into(),
            });
        }
    }
    Ok((search, play))
}

/// Takes the retired knobs out of `section`: at their off value they are the search
/// without them; any other value is refused, naming why.
fn take_retired(section: &mut toml::Table, origin: &str, name: &str) -> Result<(), ConfigError> {
    for retired in shogi_mcts::RETIRED_KNOBS {
        let Some(given) = section.remove(retired.key) else {
            continue;
        };
        let value = match given {
            toml::Value::Boolean(b) => f64::from(u8::from(b)),
            toml::Value::Integer(n) => n as f64,
            toml::Value::Float(x) => x,
            _ => f64::NAN,
        };
        if value != retired.off {
            return Err(ConfigError::Key {
                origin: origin.to_string(),
                key: format!("{name}.{}", retired.key),
                message: format!(
                    "{given} asks for a knob that was measured, not adopted and removed \
                     (docs/EXPERIMENTS.md names the commit that removed it); only its off \
                     value is read"
                ),
            });
        }
    }
    Ok(())
}

/// A knob's value in a config: the TOML type its kind takes, within its range.
fn knob_value(
    knob: &Knob,
    given: &toml::Value,
    origin: &str,
    key: &str,
) -> Result<f64, ConfigError> {
    let value = match (knob.kind, given) {
        (KnobKind::Switch, toml::Value::Boolean(b)) => Some(f64::from(u8::from(*b))),
        (KnobKind::Count, toml::Value::Integer(n)) if *n >= 0 => Some(*n as f64),
        (KnobKind::Real, toml::Value::Float(x)) => Some(*x),
        (KnobKind::Real, toml::Value::Integer(n)) => Some(*n as f64),
        (KnobKind::Choice(_), toml::Value::String(name)) => {
            let value = knob.parse(name).map_err(|e| ConfigError::Key {
                origin: origin.to_string(),
                key: key.to_string(),
                message: e.message,
            })?;
            Some(value)
        }
        _ => None,
    };
    let Some(value) = value else {
        let expected = match knob.kind {
            KnobKind::Switch => "true or false".to_string(),
            KnobKind::Count => "a whole number, at least 0".to_string(),
            KnobKind::Real => "a number".to_string(),
            KnobKind::Choice(names) => format!("one of {}", names.join(", ")),
        };
        return Err(ConfigError::Key {
            origin: origin.to_string(),
            key: key.to_string(),
            message: format!("invalid value {given}: expected {expected}"),
        });
    };
    match knob.refusal(value) {
        None => Ok(value),
        Some(expected) => Err(ConfigError::Range {
            origin: origin.to_string(),
            key: key.to_string(),
            value: knob.show(value),
            expected,
        }),
    }
}

/// Sets `section.key = value` in `table`; `value` is parsed as a TOML value, or taken as
/// a string when it is not one (so `--set run.dir=runs/x` works unquoted).
fn apply_override(table: &mut toml::Table, given: &str) -> Result<(), ConfigError> {
    let err = |message: &str| ConfigError::Override {
        given: given.to_string(),
        message: message.to_string(),
    };
    let (key, value) = given
        .split_once('=')
        .ok_or_else(|| err("expected section.key=value"))?;
    let path: Vec<&str> = key.trim().split('.').collect();
    if path.iter().any(|p| p.is_empty()) {
        return Err(err("expected section.key=value"));
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let (last, sections) = path.split_last().expect("non-empty path");
    let mut node = table;
    for section in sections {
        let entry = node
            .entry(section.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = entry
            .as_table_mut()
            .ok_or_else(|| err(&format!("{section} is not a section")))?;
    }
    node.insert(last.to_string(), parsed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why `text` (a config file's text) is refused.
    fn refusal(text: &str) -> String {
        RunConfig::parse(text, "x.toml", &[])
            .unwrap_err()
            .to_string()
    }

    /// Why the empty config with the override `set` is refused.
    fn refusal_with(set: String) -> String {
        RunConfig::parse("", "x.toml", &[set])
            .unwrap_err()
            .to_string()
    }

    /// The shipped configs, by file name.
    fn shipped_configs() -> Vec<(String, String)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut configs: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&p).unwrap())
            })
            .collect();
        configs.sort();
        assert!(
            configs.len() >= 5,
            "configs/ not found at {}",
            dir.display()
        );
        configs
    }

    /// The rows of the first markdown table with a `budget` column in `text`: each row's
    /// config name (its first cell, in backquotes) and its budget cell, thousands
    /// separators removed.
    fn budget_rows(text: &str) -> Vec<(String, String)> {
        let cells = |line: &str| -> Vec<String> {
            line.trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        };
        let header = text
            .lines()
            .find(|l| l.starts_with('|') && cells(l).iter().any(|c| c == "budget"))
            .expect("a table with a budget column");
        let column = cells(header).iter().position(|c| c == "budget").unwrap();
        text.lines()
            .skip_while(|l| *l != header)
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let row = cells(l);
                let name = row[0].trim_matches('`').to_string();
                (
                    name,
                    row.get(column)
                        .cloned()
                        .unwrap_or_default()
                        .replace(',', ""),
                )
            })
            .collect()
    }

    /// configs/README.md and the README's table of configs list every shipped config,
    /// and each row names the budget the file's `[run]` section sets (`M min`, `N learner
    /// steps`), so the tables and the files cannot drift apart; neither lists a file that
    /// is not there.
    #[test]
    fn every_config_is_listed_with_its_budget() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let configs = shipped_configs();
        for table in [dir.join("README.md"), dir.join("../README.md")] {
            let text = std::fs::read_to_string(&table).unwrap();
            let rows = budget_rows(&text);
            let shown = table.display();
            for (name, _) in &configs {
                let (_, budget) = rows
                    .iter()
                    .find(|(listed, _)| listed == name)
                    .unwrap_or_else(|| panic!("{shown} has no row for {name}"));
                let config = RunConfig::load(&dir.join(name), &[]).unwrap();
                if config.run.minutes > 0.0 {
                    let minutes = format!("{} min", config.run.minutes);
                    assert!(
                        budget.contains(&minutes),
                        "{shown}, {name}: budget cell {budget:?} lacks {minutes:?}"
                    );
                }
                if config.run.max_steps > 0 {
                    let steps = format!("{} learner steps", config.run.max_steps);
                    assert!(
                        budget.contains(&steps),
                        "{shown}, {name}: budget cell {budget:?} lacks {steps:?}"
                    );
                }
            }
            for (listed, _) in &rows {
                assert!(
                    configs.iter().any(|(n, _)| n == listed),
                    "{shown} lists {listed}, which configs/ lacks"
                );
            }
        }
    }

    #[test]
    fn budget_rows_read_the_budget_column_wherever_it_stands() {
        let text = "intro\n\n| config | for | budget | reaches |\n|---|---|---|---|\n\
                    | `a.toml` | x | 1,200 learner steps | 5% |\n| `b.toml` | y | 30 min | – |\n\nafter\n| `c.toml` | not a row |\n";
        assert_eq!(
            budget_rows(text),
            vec![
                ("a.toml".to_string(), "1200 learner steps".to_string()),
                ("b.toml".to_string(), "30 min".to_string()),
            ]
        );
    }

    /// Every `section.key` path below `table`, tables themselves excluded.
    fn key_paths(table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
        for (key, value) in table {
            let path = format!("{prefix}{key}");
            match value {
                toml::Value::Table(inner) => key_paths(inner, &format!("{path}."), out),
                _ => out.push(path),
            }
        }
    }

    /// Whether a comment's `Default X` states `value`.
    fn states(claimed: &str, value: &toml::Value) -> bool {
        match value {
            toml::Value::String(s) => {
                claimed.trim_matches('"') == s || (claimed == "off" && s.is_empty())
            }
            toml::Value::Integer(i) => claimed.parse::<f64>() == Ok(*i as f64),
            toml::Value::Float(f) => claimed.parse::<f64>() == Ok(*f),
            toml::Value::Boolean(b) => claimed == b.to_string(),
            toml::Value::Array(a) => claimed == "[]" && a.is_empty(),
            _ => false,
        }
    }

    #[test]
    fn minishogi_toml_documents_every_key() {
        let configs = shipped_configs();
        let (_, text) = configs.iter().find(|(n, _)| n == "minishogi.toml").unwrap();
        let file: toml::Table = text.parse().unwrap();
        let defaults: toml::Table = RunConfig::default().to_toml().parse().unwrap();
        let (mut listed, mut accepted) = (Vec::new(), Vec::new());
        key_paths(&file, "", &mut listed);
        key_paths(&defaults, "", &mut accepted);
        // The search's knobs are described in docs/SEARCH.md: the file may set them.
        let knob = |key: &String| {
            key.strip_prefix("selfplay.")
                .is_some_and(|k| shogi_mcts::knob(k).is_some())
        };
        listed.retain(|k| !knob(k));
        accepted.retain(|k| !knob(k));
        listed.sort();
        accepted.sort();
        assert_eq!(
            listed, accepted,
            "configs/minishogi.toml must list every key but the search's knobs"
        );
    }

    #[test]
    fn default_comments_in_shipped_configs_are_true() {
        let defaults: toml::Table = RunConfig::default().to_toml().parse().unwrap();
        let mut checked = 0;
        for (name, text) in shipped_configs() {
            RunConfig::parse(&text, &name, &[]).unwrap();
            let mut section: Vec<String> = Vec::new();
            for line in text.lines() {
                let code = line.split('#').next().unwrap().trim();
                if let Some(header) = code.strip_prefix('[') {
                    section = header
                        .trim_end_matches(']')
                        .split('.')
                        .map(String::from)
                        .collect();
                    continue;
                }
                let (Some((key, _)), Some(comment)) = (code.split_once('='), line.split_once('#'))
                else {
                    continue;
                };
                let Some((_, claim)) = comment.1.rsplit_once("Default ") else {
                    continue;
                };
                let claimed = claim.split_whitespace().next().unwrap_or_default();
                let mut value = &defaults[section[0].as_str()];
                for part in section[1..].iter().map(String::as_str).chain([key.trim()]) {
                    value = &value[part];
                }
                assert!(
                    states(claimed, value),
                    "{name}: [{}] {}: the comment says Default {claimed}, the default is {value}",
                    section.join("."),
                    key.trim()
                );
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} Default comments found");
    }

    /// configs/shogi-cpu-long.toml is configs/shogi-cpu.toml run for longer: the two
    /// differ in the budget and the learning-rate schedule and nowhere else, so a change
    /// to the hour's recipe cannot leave the long run's behind.
    #[test]
    fn the_long_cpu_config_is_the_hour_s_but_for_budget_and_schedule() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let resolved = |name: &str| -> toml::Table {
            let config = RunConfig::load(&dir.join(name), &[]).unwrap();
            config.to_toml().parse().unwrap()
        };
        let (mut hour, mut long) = (resolved("shogi-cpu.toml"), resolved("shogi-cpu-long.toml"));
        for key in [
            "run.dir",
            "run.minutes",
            "run.max_steps",
            "learner.schedule",
            "learner.lr_boundaries",
        ] {
            let (section, name) = key.split_once('.').unwrap();
            let take = |table: &mut toml::Table| {
                table[section].as_table_mut().unwrap().remove(name).unwrap()
            };
            let (in_hour, in_long) = (take(&mut hour), take(&mut long));
            assert_ne!(in_hour, in_long, "{key}: the long config should change it");
        }
        assert_eq!(
            hour, long,
            "the long config differs in more than its budget"
        );
    }

    #[test]
    fn defaults_validate_and_round_trip() {
        let config = RunConfig::default();
        config.validate("default").unwrap();
        let again = RunConfig::parse(&config.to_toml(), "snapshot", &[]).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn unknown_key_names_section_and_key() {
        let err = RunConfig::parse("[selfplay]\nsimulatons = 3\n", "x.toml", &[]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("x.toml"), "{msg}");
        assert!(msg.contains("selfplay"), "{msg}");
        assert!(msg.contains("simulatons"), "{msg}");
    }

    #[test]
    fn wrong_type_names_full_path() {
        let err = RunConfig::parse("[learner]\nbatch = \"big\"\n", "x.toml", &[]).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("learner.batch"), "{msg}");
        assert!(msg.contains("invalid type"), "{msg}");
    }

    /// Thread counts read `auto` or a number from 1 to 1024, from the file and from
    /// `--set` (bare or quoted); anything else is refused with the key named.
    #[test]
    fn thread_counts_read_auto_or_a_number_and_name_the_key() {
        let text = "[run]\ntorch_threads = 2\n[selfplay]\nactor_threads = \"auto\"\n";
        let config =
            RunConfig::parse(text, "x.toml", &["selfplay.inference_threads=3".into()]).unwrap();
        assert_eq!(
            (
                config.run.torch_threads,
                config.selfplay.actor_threads,
                config.selfplay.inference_threads
            ),
            (
                ThreadCount::Fixed(2),
                ThreadCount::Auto,
                ThreadCount::Fixed(3)
            )
        );
        let bare = RunConfig::parse("", "x.toml", &["run.torch_threads=auto".into()]).unwrap();
        assert_eq!(bare.run.torch_threads, ThreadCount::Auto);
        for bad in ["0", "-2", "\"many\"", "1.5"] {
            let err = RunConfig::parse(
                &format!("[selfplay]\ninference_threads = {bad}\n"),
                "x.toml",
                &[],
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("selfplay.inference_threads")
                    && err.contains("a number from 1 to 1024"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn out_of_range_names_full_path() {
        let err = RunConfig::parse("[gate]\nthreshold = 1.5\n", "x.toml", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.toml: gate.threshold = 1.5 is out of range: must be between 0 and 1"
        );
        let err = RunConfig::parse("[game]\nvariant = \"chess\"\n", "x.toml", &[]).unwrap_err();
        assert!(err.to_string().contains("game.variant"), "{err}");
        let text = "[gate]\nfixed_opponent = \"alphabeta:depth=x\"\n";
        let err = RunConfig::parse(text, "x.toml", &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("gate.fixed_opponent = alphabeta:depth=x is out of range"),
            "{err}"
        );
        let text = "[gate]\nfixed_opponent = \"alphabeta:depth=2\"\n";
        let config = RunConfig::parse(text, "x.toml", &[]).unwrap();
        assert_eq!(config.gate.fixed_opponent, "alphabeta:depth=2");
        let text = "[selfplay]\ngumbel_safety = -0.5\n";
        let err = RunConfig::parse(text, "x.toml", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.toml: selfplay.gumbel_safety = -0.5 is out of range: must be between 0 and 100"
        );
        // The play-time options: read, and range-checked by their own names.
        let text = "[play]\ngumbel_safety = 2.0\nleaf_exchange = 0.5\n";
        let config = RunConfig::parse(text, "x.toml", &[]).unwrap();
        assert_eq!(
            (
                config.play.get("gumbel_safety"),
                config.play.get("leaf_exchange"),
                config.play.get("gumbel_gain")
            ),
            (Some(2.0), Some(0.5), None)
        );
        for (text, why) in [
            (
                "[play]\ngumbel_safety = -1.0\n",
                "play.gumbel_safety = -1 is out of range: must be between 0 and 100",
            ),
            (
                "[play]\nleaf_exchange = 1.5\n",
                "play.leaf_exchange = 1.5 is out of range: must be between 0 and 1",
            ),
            (
                "[selfplay]\nleaf_exchange = -0.5\n",
                "selfplay.leaf_exchange = -0.5 is out of range: must be between 0 and 1",
            ),
            (
                "[learner]\nema_decay = 1.0\n",
                "learner.ema_decay = 1 is out of range: must be at least 0 and below 1",
            ),
            (
                "[learner]\nopponent_policy_weight = -0.15\n",
                "learner.opponent_policy_weight = -0.15 is out of range: must be >= 0",
            ),
            ("[play]\nroot = \"puct\"\n", "root"),
        ] {
            let err = refusal(text);
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    /// A config whose games cannot keep every thread and every batch slot busy is
    /// refused with both keys named (once 256 games a generation left 7 of 14 threads
    /// without a game).
    #[test]
    fn configs_that_idle_threads_or_batches_are_refused() {
        let err = RunConfig::parse(
            "[selfplay]
actors = 8
actor_threads = 14
",
            "x.toml",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "x.toml: selfplay.actor_threads = 14 is out of range: must not exceed selfplay.actors (8): a thread without a game idles"
        );
        let text = "[selfplay]
actors = 16
tree_batch = 2
max_batch = 64
";
        let err = refusal(text);
        assert!(
            err.contains("selfplay.max_batch = 64 is out of range")
                && err.contains("selfplay.actors x selfplay.tree_batch (16 x 2 = 32)"),
            "{err}"
        );
        // As many threads as games, and a batch as large as all their leaves, are fine.
        let text = "[selfplay]
actors = 16
actor_threads = 16
tree_batch = 2
max_batch = 32
";
        RunConfig::parse(text, "x.toml", &[]).unwrap();
    }

    #[test]
    fn named_values_read_into_their_enums_and_unknown_ones_name_the_key() {
        let c = RunConfig::parse(
            "[game]\nvariant = \"shogi\"\nimpasse = \"points24\"\n[selfplay]\nroot = \"puct\"\n\
             [learner]\noptimizer = \"adamw\"\nschedule = \"cosine\"\n",
            "x.toml",
            &[],
        )
        .unwrap();
        assert_eq!(c.game.variant, GameKind::Shogi);
        assert_eq!(c.game.impasse, ImpasseRule::Points24);
        assert_eq!(
            c.selfplay.search.root_selection,
            shogi_mcts::RootSelection::Puct
        );
        assert_eq!(c.learner.optimizer, OptimizerName::Adamw);
        assert_eq!(c.learner.schedule, ScheduleName::Cosine);
        // The snapshot spells them as the config does.
        let toml = c.to_toml();
        for line in [
            "variant = \"shogi\"",
            "impasse = \"points24\"",
            "root = \"puct\"",
            "optimizer = \"adamw\"",
            "schedule = \"cosine\"",
        ] {
            assert!(toml.contains(line), "{line} in\n{toml}");
        }
        for (set, key) in [
            ("game.variant=\"chess\"", "game.variant"),
            ("game.impasse=\"points27\"", "game.impasse"),
            ("selfplay.root=\"alphazero\"", "selfplay.root"),
            ("learner.optimizer=\"adam\"", "learner.optimizer"),
            ("learner.schedule=\"linear\"", "learner.schedule"),
            ("game.tai.lion_dog=\"q4\"", "game.tai.lion_dog"),
        ] {
            let err = RunConfig::parse("", "x.toml", &[set.into()])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(key)
                    && (err.contains("unknown variant") || err.contains("is not one of")),
                "{set}: {err}"
            );
        }
    }

    #[test]
    fn tai_rule_options_parse_and_are_checked() {
        let text = "[game]\nvariant = \"tai\"\n[game.tai]\nemperor = \"never\"\nlion_dog = \"q3\"\n[gate]\nenabled = false\n";
        let c = RunConfig::parse(text, "x.toml", &[]).unwrap();
        let rules = c.game.tai.rules(c.game.max_plies);
        assert_eq!(rules.emperor, shogi_tai::EmperorCaptures::Never);
        assert_eq!(rules.lion_dog, shogi_tai::LionDog::Q3);
        assert_eq!(rules.options_code(), 2 | 8);
        let err = RunConfig::parse(text, "x.toml", &["game.tai.emperor=\"sometimes\"".into()])
            .unwrap_err();
        assert!(err.to_string().contains("game.tai.emperor"), "{err}");
        // The snapshot keeps the table.
        let again = RunConfig::parse(&c.to_toml(), "snapshot", &[]).unwrap();
        assert_eq!(again, c);
    }

    /// The GPU precision keys: on by default (they act only on CUDA), read from the file
    /// and from `--set`, and a value of the wrong type names the key.
    #[test]
    fn precision_keys_are_read_and_checked() {
        let c = RunConfig::default();
        assert!(c.learner.mixed_precision && c.selfplay.half_inference);
        let text = "[learner]\nmixed_precision = false\n[selfplay]\nhalf_inference = false\n";
        let c = RunConfig::parse(text, "x.toml", &[]).unwrap();
        assert!(!c.learner.mixed_precision && !c.selfplay.half_inference);
        let c = RunConfig::parse(text, "x.toml", &["selfplay.half_inference=true".into()]).unwrap();
        assert!(c.selfplay.half_inference);
        for (text, key) in [
            (
                "[learner]\nmixed_precision = \"fp16\"\n",
                "learner.mixed_precision",
            ),
            (
                "[selfplay]\nhalf_inference = 1\n",
                "selfplay.half_inference",
            ),
        ] {
            let err = refusal(text);
            assert!(err.contains(key) && err.contains("invalid type"), "{err}");
        }
    }

    /// `network.features`: pieces by default, attacks for shogi and minishogi, refused
    /// by name for tai shogi and for an unknown set.
    #[test]
    fn feature_sets_are_read_and_checked_per_game() {
        assert_eq!(RunConfig::default().network.features, FeatureSet::Pieces);
        let c = RunConfig::parse("[network]\nfeatures = \"attacks\"\n", "x.toml", &[]).unwrap();
        assert_eq!(c.network.features, FeatureSet::Attacks);
        let c = RunConfig::parse("[network]\nfeatures = \"exchanges\"\n", "x.toml", &[]).unwrap();
        assert_eq!(c.network.features, FeatureSet::Exchanges);
        let again = RunConfig::parse(&c.to_toml(), "snapshot", &[]).unwrap();
        assert_eq!(again, c);
        let tai = "[game]\nvariant = \"tai\"\n[network]\nfeatures = \"attacks\"\n[gate]\nenabled = false\n";
        let err = refusal(tai);
        assert!(
            err.contains("network.features") && err.contains("tai has no attacks feature set"),
            "{err}"
        );
        let err = refusal("[network]\nfeatures = \"planes\"\n");
        assert!(
            err.contains("network.features") && err.contains("pieces"),
            "{err}"
        );
    }

    /// `network.stem_kernel` and `learner.material_scale`: refused with their key when
    /// out of range or unknown (run/settings.rs takes them through to the architecture
    /// and the samples).
    #[test]
    fn stem_kernel_and_material_scale_are_checked() {
        for bad in ["0", "2", "9"] {
            let err = refusal_with(format!("network.stem_kernel={bad}"));
            assert!(
                err.contains("network.stem_kernel") && err.contains("odd"),
                "{err}"
            );
        }
        let err = refusal("[learner]\nmaterial_scale = \"values\"\n");
        assert!(
            err.contains("material_scale") && err.contains("mobility"),
            "{err}"
        );
    }

    #[test]
    fn overrides_apply_and_are_checked() {
        let c = RunConfig::parse(
            "",
            "x.toml",
            &[
                "selfplay.simulations=32".into(),
                "run.dir=runs/other".into(),
                "learner.lr_boundaries=[10, 20]".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.selfplay.search.simulations, 32);
        assert_eq!(c.run.dir, PathBuf::from("runs/other"));
        assert_eq!(c.learner.lr_boundaries, vec![10, 20]);
        assert!(RunConfig::parse("", "x.toml", &["nokey".into()]).is_err());
        let err = RunConfig::parse("", "x.toml", &["selfplay.simulations=0".into()]).unwrap_err();
        assert!(err.to_string().contains("selfplay.simulations"), "{err}");
        let err = RunConfig::parse("", "x.toml", &["selfplay.nope=1".into()]).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn every_float_key_refuses_nan_and_infinities() {
        let keys = [
            "run.minutes",
            "selfplay.resign_threshold",
            "selfplay.resign_disabled_fraction",
            "learner.replay_ratio",
            "learner.window_growth",
            "learner.window_exponent",
            "learner.lr",
            "learner.lr_factor",
            "learner.lr_min",
            "learner.momentum",
            "learner.weight_decay",
            "learner.grad_clip",
            "learner.value_weight",
            "learner.q_blend",
            "learner.material_weight",
            "learner.material_value",
            "learner.material_gain",
            "learner.ema_decay",
            "learner.opponent_policy_weight",
            "gate.threshold",
            "gate.sprt_elo0",
            "gate.sprt_elo1",
            "gate.sprt_error",
        ];
        // The search's real-valued knobs, in [selfplay] and (the play knobs) in [play].
        let real = || {
            shogi_mcts::SEARCH_KNOBS
                .iter()
                .filter(|k| k.kind == shogi_mcts::knobs::KnobKind::Real)
        };
        let knob_keys = real()
            .map(|k| format!("selfplay.{}", k.key))
            .collect::<Vec<_>>();
        // Every f32/f64 field of the config is in the list (a new one must be added).
        let floats = RunConfig::default()
            .to_toml()
            .lines()
            .filter(|l| {
                l.split_once(" = ")
                    .is_some_and(|(_, v)| v.contains('.') && v.parse::<f64>().is_ok())
            })
            .count();
        assert_eq!(
            floats,
            keys.len() + knob_keys.len(),
            "{}",
            RunConfig::default().to_toml()
        );
        let play_keys = real()
            .filter(|k| k.play.is_some())
            .map(|k| format!("play.{}", k.key));
        for key in keys
            .iter()
            .map(|k| k.to_string())
            .chain(knob_keys.clone())
            .chain(play_keys)
        {
            for value in ["nan", "inf", "-inf"] {
                let err = RunConfig::parse("", "x.toml", &[format!("{key}={value}")])
                    .expect_err(&format!("{key} = {value} was accepted"));
                let shown = match value {
                    "nan" => "NaN",
                    "inf" => "inf",
                    _ => "-inf",
                };
                assert_eq!(
                    err.to_string(),
                    format!(
                        "x.toml (with --set): {key} = {shown} is out of range: must be a finite number"
                    ),
                );
            }
        }
        // With SPRT on as well (its checks run only then).
        let err =
            RunConfig::parse("[gate]\nsprt = true\nsprt_elo0 = nan\n", "x.toml", &[]).unwrap_err();
        assert!(err.to_string().contains("gate.sprt_elo0 = NaN"), "{err}");
    }

    #[test]
    fn lr_factor_is_checked() {
        for bad in ["0", "-0.5", "1.5"] {
            let err =
                RunConfig::parse("", "x.toml", &[format!("learner.lr_factor={bad}")]).unwrap_err();
            assert!(
                err.to_string().contains("learner.lr_factor")
                    && err.to_string().contains("at most 1"),
                "{err}"
            );
        }
        let c = RunConfig::parse("", "x.toml", &["learner.lr_factor=0.5".into()]).unwrap();
        assert_eq!(c.learner.lr_factor, 0.5);
    }

    #[test]
    fn syntax_error_is_reported() {
        let err = RunConfig::parse("[run\n", "x.toml", &[]).unwrap_err();
        assert!(
            err.to_string().starts_with("x.toml: not valid TOML"),
            "{err}"
        );
    }
}

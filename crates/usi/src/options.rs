//! The engine's USI options: their values, the `option` lines `usi` declares them with,
//! and `setoption` applied to them (clamped, validated, named in the error).

use shogi_game::GameKind;
use shogi_mcts::SearchKnob as Knob;
use shogi_mcts::knobs::KnobKind;
use shogi_mcts::{RootSettings, SearchConfig};
use shogi_model::parse_device;
use shogi_registry::GameSpec;

/// Bytes of tree memory assumed per search node when `USI_Hash` is turned into a node
/// limit.
pub const BYTES_PER_NODE: usize = 64;

/// The engine's options (the USI `option`s; see `docs/USI.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `USI_Hash`: MB for the search tree (turned into a node limit).
    pub hash_mb: u64,
    /// `USI_Ponder`.
    pub ponder: bool,
    /// `Threads`: search threads on the one tree, each with its own copy of the network
    /// (leaves selected in turn under virtual loss, evaluated side by side:
    /// [`shogi_mcts::Search::search_parallel`]). 1 is the deterministic search. Default:
    /// the cores the engine may use.
    pub threads: u64,
    /// `TorchThreads`: libtorch's intra-op threads in each search thread's network calls.
    /// Default 1: the search threads already keep the cores busy, and intra-op teams on
    /// busy cores wait on each other.
    pub torch_threads: u64,
    /// `MultiPV`.
    pub multipv: u64,
    /// `ModelPath`: a checkpoint directory (or a file inside it); empty = uniform
    /// evaluator (uniform priors, draw value).
    pub model_path: String,
    /// `Device`: auto, cpu, cuda, cuda:N.
    pub device: String,
    /// `TreeBatch`: leaves per network call.
    pub tree_batch: u64,
    /// `NetBatching`: whether the search threads share one copy of the network that
    /// batches their leaves together, or each runs its own.
    pub net_batching: NetBatching,
    /// `HalfPrecision`: the network in the device's half precision
    /// ([`shogi_model::half_kind`]: f16 on CUDA, bf16 on a CPU that computes it natively,
    /// f32 on any other CPU), as self-play runs it; off, f32, as matches measure with.
    pub half_precision: bool,
    /// `Simulations`: per-move simulation limit (0 = none).
    pub simulations: u64,
    /// `ByoyomiMargin` in ms.
    pub byoyomi_margin: u64,
    /// `ResignValue`: resign when the expected score stays below this many percent for
    /// two searches in a row, or the loss is proven (0 = never resign).
    pub resign_percent: u64,
    /// `UCI_Variant`: the game played (one the engine's game type plays).
    pub game: GameKind,
    /// `MaxMovesToDraw` (YaneuraOu's name; `Draw_Ply` is an alias): the game is drawn
    /// once this many plies were played, counted from move 1 of the SFEN's move number,
    /// and the search scores positions at the limit as draws. 0 = no limit.
    pub max_moves_to_draw: u64,
    /// `TwoFoldDraws` (lc0's name): the search scores a position's second occurrence as
    /// the repetition rule's verdict (a draw, or the perpetual checker's loss), as
    /// tournament runners that draw at the second occurrence (shogiarena's default)
    /// adjudicate it; so a side that is ahead avoids repeating and a side behind seeks it.
    /// Off: repetitions end the game at the fourth occurrence only (千日手).
    pub twofold_draws: bool,
    /// `Contempt`, in percent of expected score: a draw is worth 0.5 - Contempt/100 to
    /// the engine (and the complement to its opponent) inside its search, so with a
    /// positive value it plays on rather than repeat or draw unless its evaluation is
    /// that much below even; negative seeks draws. Network values are unchanged.
    pub contempt: i64,
    /// `RunSearch`: when `ModelPath` is a run directory or one of its checkpoints, search
    /// as the run measures its networks (its self-play root without noise and its
    /// `[play]` options, the search its figures were measured with) instead of with
    /// `GumbelRoot` and the play knobs' options.
    pub run_search: bool,
    /// `GumbelRoot` (0 for a PUCT root, `k` for a noise-free Gumbel root considering `k`
    /// moves, the root a run's self-play trains with) and one option per play knob
    /// ([`shogi_mcts::play_knobs`]: `GumbelGain`, `LeafExchange`, ..., a real
    /// number's in hundredths), declared and set from the knob's description.
    pub root: RootSettings,
}

/// The largest `Threads` and `TorchThreads`.
pub const MAX_THREADS: u64 = 256;

/// The largest `GumbelRoot`: more considered moves than this is a PUCT search's job.
pub const MAX_GUMBEL_ROOT: u64 = 64;

/// The `TreeBatch` option's default: leaves evaluated together per request, a match
/// player's [`shogi_mcts::PLAY_TREE_BATCH`], so the engine plays at the strength matches
/// measure: at few simulations a search of a few large batches is a poor tree
/// (docs/USI.md). On a GPU the threads' leaves are batched together ([`NetBatching`]).
pub const ENGINE_TREE_BATCH: u64 = shogi_mcts::PLAY_TREE_BATCH as u64;

/// `NetBatching`: how the search threads' leaves reach the network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NetBatching {
    /// Shared on CUDA, per thread on a CPU.
    #[default]
    Auto,
    /// Each search thread runs its own copy of the network on its `TreeBatch` leaves: on
    /// a CPU each thread's network call then runs on its own core, none waits for another.
    PerThread,
    /// One copy of the network on its own thread batches every search thread's leaves
    /// into one call (up to `Threads` x `TreeBatch` positions), as dlshogi and lc0 feed a
    /// GPU: a call of 8 positions leaves most of a GPU idle.
    Shared,
}

impl NetBatching {
    /// Every value, in the order `usi` lists them.
    const ALL: [NetBatching; 3] = [
        NetBatching::Auto,
        NetBatching::PerThread,
        NetBatching::Shared,
    ];

    /// The option's value as `usi` writes it.
    pub fn name(self) -> &'static str {
        match self {
            NetBatching::Auto => "auto",
            NetBatching::PerThread => "per-thread",
            NetBatching::Shared => "shared",
        }
    }

    /// The `option` line `usi` declares it with, `self` the default.
    fn option_line(self) -> String {
        let values: String = Self::ALL
            .iter()
            .map(|b| format!(" var {}", b.name()))
            .collect();
        format!(
            "option name NetBatching type combo default {}{values}",
            self.name()
        )
    }

    /// Whether the search threads share one batching copy of the network on `device`.
    pub fn shared_on(self, device: shogi_model::tch::Device) -> bool {
        match self {
            NetBatching::Auto => device.is_cuda(),
            NetBatching::PerThread => false,
            NetBatching::Shared => true,
        }
    }
}

impl std::str::FromStr for NetBatching {
    type Err = SetOptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or(SetOptionError::BadValue)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hash_mb: 256,
            ponder: false,
            threads: (shogi_model::available_cores() as u64).clamp(1, MAX_THREADS),
            torch_threads: 1,
            multipv: 1,
            model_path: String::new(),
            device: shogi_model::DEFAULT_DEVICE.into(),
            tree_batch: ENGINE_TREE_BATCH,
            net_batching: NetBatching::Auto,
            half_precision: true,
            simulations: 0,
            byoyomi_margin: 100,
            resign_percent: 2,
            game: GameKind::Shogi,
            max_moves_to_draw: 0,
            twofold_draws: true,
            contempt: 0,
            run_search: true,
            root: RootSettings::default(),
        }
    }
}

/// A `check` option's value.
fn check(value: &str) -> Result<bool, SetOptionError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(SetOptionError::BadValue),
    }
}

/// Why a `setoption` changed nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetOptionError {
    /// No option has this name.
    Unknown,
    /// The value is not one the option takes.
    BadValue,
}

impl Options {
    /// The search tree's node limit `USI_Hash` allows.
    pub fn max_nodes(&self) -> usize {
        ((self.hash_mb.clamp(1, 1 << 20) as usize) << 20) / BYTES_PER_NODE
    }

    /// The root the options ask for (`GumbelRoot` and the play knobs' options).
    pub fn root(&self) -> RootSettings {
        self.root.clone()
    }

    /// The search the options ask for.
    pub fn search_config(&self) -> SearchConfig {
        self.search_config_with(&self.root())
    }

    /// The search the options ask for, with `root` instead of the options' own (a run's,
    /// under `RunSearch`).
    pub fn search_config_with(&self, root: &RootSettings) -> SearchConfig {
        let mut config = SearchConfig {
            tree_batch: self.tree_batch.clamp(1, 1024) as usize,
            max_nodes: self.max_nodes(),
            // The engine probes for mate itself first, with the clock's budget, and
            // reports the line (`score mate`): the search need not probe again.
            root_mate_nodes: 0,
            draw_value: 0.5 - self.contempt.clamp(-50, 50) as f32 / 100.0,
            ..SearchConfig::for_play()
        };
        root.apply(&mut config);
        config
    }

    /// The game and rules positions are played under: `UCI_Variant`'s game as
    /// tournaments play it, with `MaxMovesToDraw` as its ply cap (counted from move 1).
    pub fn spec(&self) -> GameSpec {
        let cap = self.max_moves_to_draw.min(u64::from(u32::MAX)) as u32;
        GameSpec::standard(self.game, cap)
    }

    /// The `option` lines `usi` declares, the current values as defaults (so flags given
    /// on the command line survive a GUI that sends every option back at start-up);
    /// `UCI_Variant` offers `games`.
    pub fn usi_lines(&self, games: &[GameKind]) -> Vec<String> {
        let model = if self.model_path.is_empty() {
            "<empty>"
        } else {
            self.model_path.as_str()
        };
        let variants: String = games.iter().map(|g| format!(" var {g}")).collect();
        let mut lines = vec![
            format!(
                "option name USI_Hash type spin default {} min 1 max 65536",
                self.hash_mb
            ),
            format!("option name USI_Ponder type check default {}", self.ponder),
            format!(
                "option name Threads type spin default {} min 1 max {MAX_THREADS}",
                self.threads
            ),
            format!(
                "option name TorchThreads type spin default {} min 1 max {MAX_THREADS}",
                self.torch_threads
            ),
            format!(
                "option name MultiPV type spin default {} min 1 max 32",
                self.multipv
            ),
            format!("option name ModelPath type filename default {model}"),
            format!("option name Device type string default {}", self.device),
            format!(
                "option name TreeBatch type spin default {} min 1 max 1024",
                self.tree_batch
            ),
            self.net_batching.option_line(),
            format!(
                "option name HalfPrecision type check default {}",
                self.half_precision
            ),
            format!(
                "option name Simulations type spin default {} min 0 max 1000000000",
                self.simulations
            ),
            format!(
                "option name ByoyomiMargin type spin default {} min 0 max 60000",
                self.byoyomi_margin
            ),
            format!(
                "option name ResignValue type spin default {} min 0 max 50",
                self.resign_percent
            ),
            format!(
                "option name UCI_Variant type combo default {}{variants}",
                self.game
            ),
            format!(
                "option name MaxMovesToDraw type spin default {} min 0 max 100000",
                self.max_moves_to_draw
            ),
            format!(
                "option name Draw_Ply type spin default {} min 0 max 100000",
                self.max_moves_to_draw
            ),
            format!(
                "option name TwoFoldDraws type check default {}",
                self.twofold_draws
            ),
            format!(
                "option name Contempt type spin default {} min -50 max 50",
                self.contempt
            ),
            format!(
                "option name RunSearch type check default {}",
                self.run_search
            ),
            format!(
                "option name GumbelRoot type spin default {} min 0 max {MAX_GUMBEL_ROOT}",
                self.root.gumbel
            ),
        ];
        lines.extend(shogi_mcts::play_knobs().map(|knob| {
            let value = knob.get_at_play(&self.root).unwrap_or_default();
            match knob.kind {
                KnobKind::Switch => {
                    format!(
                        "option name {} type check default {}",
                        knob.usi_name(),
                        value != 0.0
                    )
                }
                _ => {
                    let (min, max) = spin_range(knob);
                    let default = (value * knob.usi_scale()).round() as i64;
                    format!(
                        "option name {} type spin default {default} min {min} max {max}",
                        knob.usi_name()
                    )
                }
            }
        }));
        lines
    }

    /// Applies `setoption name <name> value <value>` (names case-insensitive; spins
    /// clamped to their range); `UCI_Variant` takes one of `games`.
    pub fn set(
        &mut self,
        name: &str,
        value: &str,
        games: &[GameKind],
    ) -> Result<(), SetOptionError> {
        let spin = |min: u64, max: u64| -> Result<u64, SetOptionError> {
            value
                .parse::<u64>()
                .map(|v| v.clamp(min, max))
                .map_err(|_| SetOptionError::BadValue)
        };
        match name.to_ascii_lowercase().as_str() {
            "usi_hash" => self.hash_mb = spin(1, 65536)?,
            "usi_ponder" => self.ponder = check(value)?,
            "twofolddraws" => self.twofold_draws = check(value)?,
            "contempt" => {
                self.contempt = value
                    .parse::<i64>()
                    .map(|v| v.clamp(-50, 50))
                    .map_err(|_| SetOptionError::BadValue)?
            }
            "threads" => self.threads = spin(1, MAX_THREADS)?,
            "torchthreads" => self.torch_threads = spin(1, MAX_THREADS)?,
            "multipv" => self.multipv = spin(1, 32)?,
            "modelpath" => self.model_path = value.to_string(),
            "device" => {
                if value.is_empty() {
                    self.device = "auto".into();
                } else if parse_device(value).is_ok() {
                    self.device = value.to_string();
                } else {
                    return Err(SetOptionError::BadValue);
                }
            }
            "treebatch" => self.tree_batch = spin(1, 1024)?,
            "netbatching" => self.net_batching = value.parse()?,
            "halfprecision" => self.half_precision = check(value)?,
            "simulations" | "nodes" => self.simulations = spin(0, 1_000_000_000)?,
            "byoyomimargin" => self.byoyomi_margin = spin(0, 60_000)?,
            "resignvalue" => self.resign_percent = spin(0, 50)?,
            "runsearch" => self.run_search = check(value)?,
            "gumbelroot" => self.root.gumbel = spin(0, MAX_GUMBEL_ROOT)? as usize,
            "uci_variant" => {
                self.game = value
                    .to_ascii_lowercase()
                    .parse::<GameKind>()
                    .ok()
                    .filter(|g| games.contains(g))
                    .ok_or(SetOptionError::BadValue)?;
            }
            "maxmovestodraw" | "draw_ply" => self.max_moves_to_draw = spin(0, 100_000)?,
            other => {
                let knob = shogi_mcts::play_knobs()
                    .find(|k| k.usi_name().to_ascii_lowercase() == other)
                    .ok_or(SetOptionError::Unknown)?;
                let setting = match knob.kind {
                    KnobKind::Switch => f64::from(u8::from(check(value)?)),
                    _ => {
                        let (min, max) = spin_range(knob);
                        let units = value
                            .parse::<i64>()
                            .map_err(|_| SetOptionError::BadValue)?
                            .clamp(min, max);
                        units as f64 / knob.usi_scale()
                    }
                };
                knob.set_at_play(&mut self.root, setting);
            }
        }
        Ok(())
    }
}

/// A play knob's spin range in the option's units (a real number's in hundredths; a
/// range open at its least value starts one unit above it).
fn spin_range(knob: &Knob) -> (i64, i64) {
    let scale = knob.usi_scale();
    let min = (knob.min * scale).ceil() as i64 + i64::from(knob.above_min);
    (min, (knob.max * scale).floor() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_batching_is_shared_on_cuda_by_default_and_as_set() {
        use shogi_model::tch::Device;
        let mut options = Options::default();
        assert!(options.net_batching.shared_on(Device::Cuda(0)));
        assert!(!options.net_batching.shared_on(Device::Cpu));
        options.set("NetBatching", "shared", &[]).unwrap();
        assert!(options.net_batching.shared_on(Device::Cpu));
        options.set("netbatching", "per-thread", &[]).unwrap();
        assert!(!options.net_batching.shared_on(Device::Cuda(0)));
        assert_eq!(
            options.set("NetBatching", "both", &[]),
            Err(SetOptionError::BadValue)
        );
        assert_eq!(options.net_batching, NetBatching::PerThread);
    }

    #[test]
    fn setoption_validates_clamps_and_names_the_game() {
        let shogi = [GameKind::Shogi, GameKind::Minishogi];
        let mut o = Options::default();
        o.set("USI_Hash", "999999", &shogi).unwrap();
        assert_eq!(o.hash_mb, 65536);
        assert_eq!(
            o.set("USI_Hash", "x", &shogi),
            Err(SetOptionError::BadValue)
        );
        assert_eq!(o.set("Nope", "1", &shogi), Err(SetOptionError::Unknown));
        o.set("UCI_Variant", "MiniShogi", &shogi).unwrap();
        assert_eq!(o.game, GameKind::Minishogi);
        assert_eq!(
            o.set("UCI_Variant", "tai", &shogi),
            Err(SetOptionError::BadValue)
        );
        assert_eq!(o.game, GameKind::Minishogi);
        o.set("TwoFoldDraws", "false", &shogi).unwrap();
        assert!(!o.twofold_draws);
        assert_eq!(
            o.set("TwoFoldDraws", "no", &shogi),
            Err(SetOptionError::BadValue)
        );
        o.set("Contempt", "80", &shogi).unwrap();
        assert_eq!(o.contempt, 50);
        assert_eq!(o.search_config().draw_value, 0.0);
        o.set("Contempt", "-10", &shogi).unwrap();
        assert!((o.search_config().draw_value - 0.6).abs() < 1e-6);
        assert_eq!(o.search_config().leaf_exchange, 0.0);
        o.set("LeafExchange", "250", &[GameKind::Shogi]).unwrap();
        assert_eq!(o.search_config().leaf_exchange, 1.0);
        o.set("leafexchange", "50", &[GameKind::Shogi]).unwrap();
        assert_eq!(o.search_config().leaf_exchange, 0.5);
        assert_eq!(
            o.set("Contempt", "x", &shogi),
            Err(SetOptionError::BadValue)
        );
        assert_eq!(
            o.search_config().root_selection,
            shogi_mcts::RootSelection::Puct
        );
        o.set("GumbelRoot", "500", &shogi).unwrap();
        o.set("GumbelCaptures", "true", &shogi).unwrap();
        o.set("GumbelSafety", "250", &shogi).unwrap();
        o.set("GumbelGain", "50", &shogi).unwrap();
        let gumbel = o.search_config();
        assert_eq!(gumbel.root_selection, shogi_mcts::RootSelection::Gumbel);
        assert_eq!(gumbel.gumbel_considered, MAX_GUMBEL_ROOT as usize);
        assert!(gumbel.gumbel_captures && !gumbel.gumbel_noise);
        assert!((gumbel.gumbel_safety - 2.5).abs() < 1e-6);
        assert!((gumbel.gumbel_gain - 0.5).abs() < 1e-6);
        assert_eq!(gumbel.leaf_exchange, 0.5);
        assert_eq!(
            o.set("GumbelCaptures", "1", &shogi),
            Err(SetOptionError::BadValue)
        );
        o.set("RunSearch", "false", &shogi).unwrap();
        assert!(!o.run_search);
        o.set("Draw_Ply", "256", &shogi).unwrap();
        assert_eq!(o.spec().max_plies, 256);
        assert_eq!(o.spec().kind, GameKind::Minishogi);
        let lines = o.usi_lines(&shogi);
        assert!(lines.contains(
            &"option name UCI_Variant type combo default minishogi var shogi var minishogi".into()
        ));
    }
}

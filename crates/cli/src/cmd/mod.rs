//! One module per subcommand: arguments, validation, run.

pub mod curve;
pub mod export;
pub mod gate;
pub mod import;
pub mod info;
pub mod learn;
pub mod match_cmd;
pub mod perft;
pub(crate) mod progress;
pub mod selfplay;
pub mod train;
pub mod usi;
pub mod view;

use shogi_arena::PlayerSettings;
use shogi_mcts::RootSettings;

/// Where networks run: `--device` and `--torch-threads`, shared by every command that
/// loads one.
#[derive(Debug, clap::Args)]
pub struct DeviceArgs {
    /// Device of the networks: auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = shogi_model::DEFAULT_DEVICE)]
    pub device: String,
    /// libtorch CPU threads (0 = libtorch's default).
    #[arg(long, default_value_t = 1)]
    pub torch_threads: usize,
}

impl DeviceArgs {
    /// Sets libtorch's CPU threads when asked for a number.
    pub fn apply_threads(&self) {
        if self.torch_threads > 0 {
            shogi_model::set_num_threads(self.torch_threads);
        }
    }
}

/// How many games `match` and `curve` play at once, and on how many inference threads
/// a network player runs: both sized from the cores when `auto`
/// ([`shogi_model::match_threads`]).
#[derive(Debug, Clone, clap::Args)]
pub struct ParallelArgs {
    /// Games played at once: a number, or auto (two a core the process may use).
    #[arg(long, default_value_t = shogi_model::ThreadCount::Auto, value_name = "N|auto")]
    pub parallel: shogi_model::ThreadCount,
    /// Inference threads of each network player, each with its own copy of the network:
    /// a number, or auto (one a core, no more than the games at once).
    #[arg(long, default_value_t = shogi_model::ThreadCount::Auto, value_name = "N|auto")]
    pub inference_threads: shogi_model::ThreadCount,
}

impl ParallelArgs {
    /// (games at once, inference threads) on this machine.
    pub fn resolve(&self) -> (usize, usize) {
        shogi_model::match_threads(
            shogi_model::available_cores(),
            self.parallel,
            self.inference_threads,
        )
    }
}

/// How the networks of `match` and `curve` search: `--root-of RUN`, the search a run's
/// networks are measured with (its self-play root and `[play]` options,
/// [`shogi_run::play_root`]; `learns.sh` passes it), or the flags one by one.
#[derive(Debug, Clone, clap::Args)]
pub struct RootArgs {
    /// Search as the run RUN measures its networks: its self-play root without noise and
    /// its `[play]` options, read from RUN/config.toml. Excludes the flags below.
    #[arg(long, value_name = "RUN", conflicts_with_all = [
        "gumbel", "gumbel_captures", "gumbel_safe", "gumbel_safety", "gumbel_gain", "gumbel_c_scale",
        "leaf_mate_nodes", "leaf_exchange",
    ])]
    pub root_of: Option<std::path::PathBuf>,
    /// With `--root-of`: the run's search without the rules written by hand (the root's
    /// exchange rules and the leaves' exchange term): the same Gumbel root, simulations
    /// and leaf mate search, so the score is what the network owns.
    #[arg(long, requires = "root_of")]
    pub plain: bool,
    /// Searching players use a noise-free Gumbel root considering this many moves (the
    /// search self-play trains with, at least 1) instead of PUCT (without the flag).
    #[arg(long, value_name = "MOVES", value_parser = at_least_one)]
    pub gumbel: Option<usize>,
    /// With `--gumbel`: every move that wins material by static exchange is among the
    /// root's considered moves (a run's `selfplay.gumbel_captures`).
    #[arg(long, requires = "gumbel")]
    pub gumbel_captures: bool,
    /// With `--gumbel`: half the root's considered moves go to the best-prior moves that
    /// lose nothing by static exchange one ply later (a run's `selfplay.gumbel_safe`).
    #[arg(long, requires = "gumbel")]
    pub gumbel_safe: bool,
    /// With `--gumbel`: the logits a root move loses per point it loses by static
    /// exchange one ply later beyond the least any move loses (a pawn 2, a silver 10, a
    /// rook 32; a run's `selfplay.gumbel_safety`); 0 = off.
    #[arg(long, requires = "gumbel", default_value_t = RootSettings::default().gumbel_safety, value_name = "LOGITS", value_parser = non_negative)]
    pub gumbel_safety: f32,
    /// With `--gumbel`: the logits a root move gains per point it wins by static exchange
    /// one ply later (what it takes less the opponent's best exchange after it; a run's
    /// `selfplay.gumbel_gain`); 0 = off.
    #[arg(long, requires = "gumbel", default_value_t = RootSettings::default().gumbel_gain, value_name = "LOGITS", value_parser = non_negative)]
    pub gumbel_gain: f32,
    /// With `--gumbel`: the root's c_scale, how far searched values move its choice
    /// against the prior (sigma(q) = (50 + max visits) * c_scale * q; a run's
    /// `selfplay.gumbel_c_scale`).
    #[arg(long, requires = "gumbel", default_value_t = RootSettings::default().gumbel_c_scale, value_name = "SCALE", value_parser = positive_scale)]
    pub gumbel_c_scale: f32,
    /// Nodes of the searching players' mate search at every new leaf (a mate in up to 5
    /// plies makes the leaf a proven win); 0 = off. Give a run's networks its
    /// `selfplay.leaf_mate_nodes`.
    #[arg(long, default_value_t = RootSettings::default().leaf_mate_nodes, value_name = "NODES")]
    pub leaf_mate_nodes: usize,
    /// Weight (0..=1) of what the side to move wins by static exchange in every network
    /// leaf's value, a one-step quiescence; 0 = off. Give a run's networks its
    /// `selfplay.leaf_exchange`.
    #[arg(long, default_value_t = RootSettings::default().leaf_exchange, value_name = "WEIGHT", value_parser = unit_fraction)]
    pub leaf_exchange: f32,
}

impl RootArgs {
    /// The root these flags ask for; with `--root-of`, the run's (its config unreadable
    /// or invalid: the error says which file and key).
    pub fn settings(&self) -> anyhow::Result<RootSettings> {
        if let Some(run) = &self.root_of {
            let path = shogi_rundir::RunDir::new(run).config_file();
            let config = shogi_run::RunConfig::load(&path, &[])?;
            return Ok(if self.plain {
                shogi_run::plain_root(&config)
            } else {
                shogi_run::play_root(&config)
            });
        }
        Ok(RootSettings {
            gumbel: self.gumbel.unwrap_or(0),
            gumbel_captures: self.gumbel_captures,
            gumbel_safe: self.gumbel_safe,
            gumbel_safety: self.gumbel_safety,
            gumbel_gain: self.gumbel_gain,
            gumbel_c_scale: self.gumbel_c_scale,
            leaf_mate_nodes: self.leaf_mate_nodes,
            leaf_exchange: self.leaf_exchange,
        })
    }

    /// `settings` with this root.
    pub fn apply(&self, settings: PlayerSettings) -> anyhow::Result<PlayerSettings> {
        Ok(PlayerSettings {
            root: self.settings()?,
            ..settings
        })
    }
}

/// Parses a number that must be finite and at least zero (a penalty): `nan` or `-1` is
/// refused with the value named.
pub(crate) fn non_negative(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        Ok(_) => Err(format!("{text:?} is not a finite number of at least 0")),
        Err(e) => Err(format!("{text:?} is not a number: {e}")),
    }
}

/// Parses a weight that must lie in 0..=1: `1.5` or `nan` is refused with the value named.
pub(crate) fn unit_fraction(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err(format!("{text:?} is not a number from 0 to 1")),
        Err(e) => Err(format!("{text:?} is not a number: {e}")),
    }
}

/// Parses a number that must be finite and above zero (a scale): `--gumbel-c-scale 0`
/// or `nan` is refused with the value named, not searched with.
pub(crate) fn positive_scale(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err(format!("{text:?} is not a finite number above 0")),
        Err(e) => Err(format!("{text:?} is not a number: {e}")),
    }
}

/// Parses a learning rate: finite, above 0 and at most 10 (`nan`, `0` or `-1` is refused
/// with the value named, before any step).
pub(crate) fn learning_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= 10.0 => Ok(x),
        Ok(_) => Err(format!(
            "{text:?} is not a learning rate (above 0, at most 10)"
        )),
        Err(e) => Err(format!("{text:?} is not a number: {e}")),
    }
}

/// Parses a count that must be at least 1 (a batch size; `--gumbel`, whose PUCT is the
/// flag left out).
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err(format!("{text:?} must be at least 1")),
        Err(e) => Err(format!("{text:?} is not a count: {e}")),
    }
}

/// The model of a fresh network of `blocks` x `channels` for `layout`, refused by name
/// where it would not build (a zero or an oversized dimension, too many parameters).
pub(crate) fn fresh_model_config(
    layout: &shogi_features::NetLayout,
    blocks: usize,
    channels: usize,
) -> anyhow::Result<shogi_model::ModelConfig> {
    let config = shogi_model::model_config_for_layout(layout, blocks, channels);
    config.validate().map_err(|why| {
        anyhow::anyhow!(
            "--blocks {blocks} --channels {channels}: {}",
            why.trim_start_matches("model config: ")
        )
    })?;
    Ok(config)
}

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
use shogi_mcts::SearchKnob as Knob;
use shogi_mcts::knobs::KnobKind;

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
    #[arg(long, value_name = "RUN", conflicts_with = "gumbel")]
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
    /// The play knobs, one flag each (`--gumbel-gain`, `--leaf-exchange`, ...).
    #[command(flatten)]
    pub knobs: PlayKnobArgs,
}

/// One flag per play knob ([`shogi_mcts::play_knobs`]), written from its
/// description: its help, its range check, `--gumbel` required where only a Gumbel root
/// reads it, and `--root-of` excluded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlayKnobArgs {
    /// The knobs given, with their values.
    pub given: Vec<(&'static str, f64)>,
}

/// One flag per search knob ([`shogi_mcts::SEARCH_KNOBS`]; `selfplay`'s), written from
/// its description, its default the self-play search's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchKnobArgs {
    /// The knobs given, with their values.
    pub given: Vec<(&'static str, f64)>,
}

impl SearchKnobArgs {
    /// The self-play search with the knobs given.
    pub fn search_config(&self) -> shogi_mcts::SearchConfig {
        let mut config = shogi_mcts::SearchConfig::default();
        for &(key, value) in &self.given {
            if let Some(knob) = shogi_mcts::knob(key) {
                knob.set(&mut config, value);
            }
        }
        config
    }
}

/// A knob's flag: `--KEY VALUE` (a switch `--KEY` or `--KEY=false`), its help the
/// knob's meaning with its default, its value range-checked by the knob.
fn knob_arg(knob: &'static Knob, default: f64, help_prefix: &str) -> clap::Arg {
    let help = format!(
        "{help_prefix}{} (`selfplay.{}`; default {})",
        knob.meaning
            .trim_start_matches("Gumbel: ")
            .trim_end_matches('.'),
        knob.key,
        knob.show(default)
    );
    let value_name = match knob.kind {
        KnobKind::Switch => "BOOL".to_string(),
        KnobKind::Choice(names) => names.join("|").to_uppercase(),
        _ if knob.unit.is_empty() => "VALUE".to_string(),
        _ => knob
            .unit
            .split(' ')
            .next()
            .unwrap_or("VALUE")
            .to_uppercase(),
    };
    let arg = clap::Arg::new(knob.key)
        .long(knob.flag())
        .help(help)
        .value_name(value_name)
        .value_parser(move |text: &str| knob.parse(text).map_err(|e| e.message));
    if knob.kind == KnobKind::Switch {
        // `--terminal-check` alone is true; `=` so that a following word is not its value.
        arg.num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true")
    } else {
        arg
    }
}

/// The knobs of `knobs` given on the command line, with their values.
fn knobs_given(
    matches: &clap::ArgMatches,
    knobs: impl Iterator<Item = &'static Knob>,
) -> Vec<(&'static str, f64)> {
    knobs
        .filter_map(|knob| Some((knob.key, *matches.get_one::<f64>(knob.key)?)))
        .collect()
}

impl clap::FromArgMatches for PlayKnobArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let given = knobs_given(matches, shogi_mcts::play_knobs());
        Ok(PlayKnobArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for PlayKnobArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let play = RootSettings::default();
        shogi_mcts::play_knobs().fold(cmd, |cmd, knob| {
            let gumbel_only = knob.play.is_some_and(|p| p.gumbel_only);
            let default = knob.get_at_play(&play).unwrap_or_default();
            let prefix = if gumbel_only { "With `--gumbel`: " } else { "" };
            let mut arg = knob_arg(knob, default, prefix).conflicts_with("root_of");
            if gumbel_only {
                arg = arg.requires("gumbel");
            }
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for SearchKnobArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let given = knobs_given(matches, shogi_mcts::SEARCH_KNOBS.iter());
        Ok(SearchKnobArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for SearchKnobArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        shogi_mcts::SEARCH_KNOBS.iter().fold(cmd, |cmd, knob| {
            cmd.arg(knob_arg(knob, knob.default_value(), ""))
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
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
        let mut root = RootSettings {
            gumbel: self.gumbel.unwrap_or(0),
            ..RootSettings::default()
        };
        for &(key, value) in &self.knobs.given {
            if let Some(knob) = shogi_mcts::knob(key) {
                knob.set_at_play(&mut root, value);
            }
        }
        Ok(root)
    }

    /// `settings` with this root.
    pub fn apply(&self, settings: PlayerSettings) -> anyhow::Result<PlayerSettings> {
        Ok(PlayerSettings {
            root: self.settings()?,
            ..settings
        })
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

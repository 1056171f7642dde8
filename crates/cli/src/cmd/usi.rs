//! `shogi-zero usi`: the USI engine on stdin/stdout (also what the binary runs when
//! started with no subcommand, which is how a GUI launches it). See docs/USI.md.

use std::io::{BufReader, stdin, stdout};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use shogi_game::GameKind;
use shogi_mcts::RootSettings;
use shogi_registry::with_game_type;
use shogi_usi::{Engine, Options, SearchSource};

/// Arguments: start-up values of the engine's USI options (a GUI's `setoption` still
/// overrides them).
#[derive(Debug, Default, Args)]
pub struct UsiArgs {
    /// Checkpoint directory (option `ModelPath`); without it the engine searches with
    /// the uniform evaluator until a GUI sets `ModelPath`.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Device for the network: auto, cpu, cuda, cuda:N (option `Device`).
    #[arg(long)]
    device: Option<String>,
    /// Variant (option `UCI_Variant`).
    #[arg(long, value_enum)]
    variant: Option<GameKind>,
    /// Per-move simulation limit, 0 = none (option `Simulations`).
    #[arg(long)]
    simulations: Option<u64>,
    /// Byoyomi safety margin in ms (option `ByoyomiMargin`).
    #[arg(long)]
    byoyomi_margin: Option<u64>,
    /// Any USI option's start-up value, as `setoption` gives it (`--option
    /// GumbelGain=200`; repeatable; names as `usi` lists them, docs/USI.md).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
}

/// Runs the engine until `quit` or end of input.
pub fn run(args: &UsiArgs) -> Result<()> {
    let mut options = Options::default();
    if let Some(m) = &args.model {
        let Some(s) = m.to_str() else {
            bail!("--model path is not valid UTF-8: {}", m.display());
        };
        options.model_path = s.to_string();
    }
    if let Some(d) = &args.device {
        shogi_model::parse_device(d)?;
        options.device = d.clone();
    }
    let game = args.variant.unwrap_or(GameKind::Shogi);
    options.game = game;
    if let Some(s) = args.simulations {
        options.simulations = s;
    }
    if let Some(m) = args.byoyomi_margin {
        options.byoyomi_margin = m;
    }
    for given in &args.options {
        let Some((name, value)) = given.split_once('=') else {
            bail!("--option {given:?}: expected NAME=VALUE");
        };
        match options.set(name.trim(), value.trim(), &[game]) {
            Ok(()) => {}
            Err(shogi_usi::SetOptionError::Unknown) => {
                bail!("--option {given:?}: no option is named {name:?} (`usi` lists them)")
            }
            Err(shogi_usi::SetOptionError::BadValue) => {
                bail!("--option {given:?}: {value:?} is not a value the option takes")
            }
        }
    }
    // Tai shogi reads bracketed SFEN positions and moves as squares in path order.
    with_game_type!(game, G => Engine::<G>::new(stdout(), options)
        .with_run_search(run_search_of)
        .run(BufReader::new(stdin().lock())))?;
    Ok(())
}

/// The search a network's run measures its networks with (the engine's `RunSearch`):
/// the same [`shogi_run::play_root`] as `match --root-of RUN` when the network sits in
/// its run, else the one its manifest recorded when the run exported it, so a network
/// copied out of its run plays as its run measured it.
fn run_search_of(model: &Path) -> Result<Option<(SearchSource, RootSettings)>, String> {
    if let Some(run) = shogi_rundir::run_of_network(model) {
        let path = shogi_rundir::RunDir::new(&run).config_file();
        let config = shogi_run::RunConfig::load(&path, &[]).map_err(|e| format!("{e:#}"))?;
        return Ok(Some((
            SearchSource::Run(run),
            shogi_run::play_root(&config),
        )));
    }
    // No run around it: what its manifest says (a network that cannot be read is the
    // loader's to report).
    let Ok(dir) = shogi_rundir::network_dir(model) else {
        return Ok(None);
    };
    Ok(shogi_model::read_manifest(&dir)
        .ok()
        .and_then(|m| m.meta.play)
        .map(|root| (SearchSource::Manifest(dir), root)))
}

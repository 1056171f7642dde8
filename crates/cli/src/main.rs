//! `shogi-zero <subcommand>`: one binary, one file per subcommand under `cmd/`.
//!
//! Raw arguments (clap) become validated settings in each subcommand's `run`, which
//! returns `anyhow::Result`; `main` turns that into an exit code and treats a closed
//! pipe (a GUI or `head` that stopped reading) as a normal exit.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "shogi-zero",
    version,
    about = "AlphaZero-style self-play trainer for shogi"
)]
struct Cli {
    /// With no subcommand the binary speaks USI on stdin/stdout, so a GUI can launch
    /// it directly.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a training run from a TOML config (self-play, learner and gate in one process).
    #[command(after_help = examples::TRAIN)]
    Train(cmd::train::TrainArgs),
    /// Speak USI on stdin/stdout (what a shogi GUI launches).
    #[command(after_help = examples::USI)]
    Usi(cmd::usi::UsiArgs),
    /// Play a match between two players (checkpoints or external USI engines).
    #[command(after_help = examples::MATCH)]
    Match(Box<cmd::match_cmd::MatchArgs>),
    /// Measure a run's accepted networks against one fixed opponent (learning curve).
    #[command(after_help = examples::CURVE)]
    Curve(cmd::curve::CurveArgs),
    /// Gate candidate checkpoints of a run directory against its best network.
    #[command(after_help = examples::GATE)]
    Gate(cmd::gate::GateArgs),
    /// Count the legal-move tree below a position (rules-core check and speed figure).
    #[command(after_help = examples::PERFT)]
    Perft(cmd::perft::PerftArgs),
    /// Play self-play games into a replay directory.
    #[command(after_help = examples::SELFPLAY)]
    Selfplay(cmd::selfplay::SelfplayArgs),
    /// Train on a replay directory and export candidate checkpoints.
    #[command(after_help = examples::LEARN)]
    Learn(cmd::learn::LearnArgs),
    /// Write self-play games from replay chunks as USI, CSA and KIF files.
    #[command(after_help = examples::EXPORT)]
    Export(cmd::export::ExportArgs),
    /// Turn game records (CSA, floodgate archives, KIF, KI2, USI, hcpe, hcpe3) into replay chunks to learn from.
    #[command(after_help = examples::IMPORT)]
    Import(cmd::import::ImportArgs),
    /// Print versions, libtorch's view of the machine, and the device a run would use.
    #[command(after_help = examples::INFO)]
    Info(cmd::info::InfoArgs),
    /// Write one game (self-play chunk, match or gate games) as a self-contained HTML page.
    #[command(after_help = examples::VIEW)]
    View(cmd::view::ViewArgs),
}

/// Each subcommand's `--help` ends with examples; a test parses every one of them.
mod examples {
    pub const TRAIN: &str = "Examples:
  shogi-zero train configs/minishogi.toml
      start the run the config names (runs/minishogi), or refuse if it exists
  shogi-zero train runs/minishogi
      resume that run with its own config
  shogi-zero train configs/shogi-cpu.toml --resume --set run.seed=2 --set run.minutes=10
      resume or start, with two keys overridden";
    pub const USI: &str = "Examples:
  shogi-zero usi --model runs/minishogi --variant minishogi
      play the run's best network (the bare `shogi-zero` speaks USI too)";
    pub const MATCH: &str = "Examples:
  shogi-zero match --a checkpoint:runs/shogi-cpu/accepted/step-00001800 --b alphabeta:depth=1 --games 100 --simulations 32 --root-of runs/shogi-cpu
      a network, searched as its run measures it, against the fixed scale's anchor
  shogi-zero match --a checkpoint:runs/minishogi/accepted/step-00012000 --b random --games 20
      against a uniform-random mover";
    pub const CURVE: &str = "Examples:
  shogi-zero curve runs/shogi-cpu --opponent alphabeta:depth=1 --points 6 --games 20
      six of the run's networks, first to last, against depth 1: RUN/proof/curve-*/curve.png";
    pub const GATE: &str = "Examples:
  shogi-zero gate --run runs/minishogi --games 40
      gate the run's pending candidates against its best network";
    pub const PERFT: &str = "Examples:
  shogi-zero perft --depth 4
      the start position's 719,731 leaves
  shogi-zero perft --variant minishogi --depth 3 --divide
      per first move";
    pub const SELFPLAY: &str = "Examples:
  shogi-zero selfplay --variant minishogi --games 16 --out runs/replay
      16 games of a fresh network into runs/replay
  shogi-zero selfplay --follow runs/shogi-cpu
      join a run on a shared filesystem as one more self-play process";
    pub const LEARN: &str = "Examples:
  shogi-zero learn --replay runs/replay --run runs/learn --steps 200 --export-every 100
      train on a replay directory, exporting a candidate every 100 steps";
    pub const EXPORT: &str = "Examples:
  shogi-zero export runs/minishogi/replay --out runs/games --limit 20
      the first 20 games as .usi (and for shogi .csa and .kif) files
  shogi-zero export runs/shogi-cpu/replay --format hcpe3 --out runs/shogi.hcpe3
      every game as one dlshogi hcpe3 file";
    pub const IMPORT: &str = "Examples:
  shogi-zero import floodgate/2024 --out runs/floodgate-replay --min-rating 2500 --min-moves 50
      every CSA game under the directory by two players rated 2500+, 50 moves or more
  shogi-zero import games.hcpe --out runs/teacher-replay
      dlshogi positions; run it again after a stop to resume";
    pub const INFO: &str = "Examples:
  shogi-zero info --device auto
      versions, the build's hash, libtorch's threads and the device a run would use";
    pub const VIEW: &str = "Examples:
  shogi-zero view runs/minishogi/proof/vs-random --game 2 --out game.html
      the second game of a match as one HTML page";

    /// Every example command line of every subcommand.
    #[cfg(test)]
    pub fn all() -> impl Iterator<Item = &'static str> {
        [
            TRAIN, USI, MATCH, CURVE, GATE, PERFT, SELFPLAY, LEARN, EXPORT, IMPORT, INFO, VIEW,
        ]
        .into_iter()
        .flat_map(|text| text.lines())
        .filter_map(|line| line.strip_prefix("  shogi-zero "))
    }
}

fn main() -> ExitCode {
    // A closed stdout (`shogi-zero info | head -1`) ends the process quietly, as it ends
    // any Unix filter, instead of a panic about a broken pipe. Rust ignores SIGPIPE.
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        None => cmd::usi::run(&cmd::usi::UsiArgs::default()),
        Some(Command::Train(args)) => cmd::train::run(&args),
        Some(Command::Usi(args)) => cmd::usi::run(&args),
        Some(Command::Match(args)) => cmd::match_cmd::run(&args),
        Some(Command::Gate(args)) => cmd::gate::run(&args),
        Some(Command::Curve(args)) => cmd::curve::run(&args),
        Some(Command::Perft(args)) => cmd::perft::run(&args),
        Some(Command::Info(args)) => cmd::info::run(&args),
        Some(Command::Selfplay(args)) => cmd::selfplay::run(&args),
        Some(Command::Learn(args)) => cmd::learn::run(&args),
        Some(Command::Export(args)) => cmd::export::run(&args),
        Some(Command::Import(args)) => cmd::import::run(&args),
        Some(Command::View(args)) => cmd::view::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("shogi-zero: error: {}", error_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, `: `-separated, leaving out a cause whose text the message
/// already holds (library errors often print their source inside their own message).
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn causes_already_in_the_message_are_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = anyhow::Error::new(io).context("read X/manifest.json: no such file");
        let err = err.context("checkpoint X");
        assert_eq!(
            error_text(&err),
            "checkpoint X: read X/manifest.json: no such file"
        );
    }
}

/// Every command-line default is the library default it stands for: a command run with
/// no flags plays, searches, trains and gates as the libraries (and a training run with
/// no keys set) do, except where a difference is a named constant (checked here as such).
#[cfg(test)]
mod defaults {
    use super::{Cli, Command};
    use clap::{CommandFactory, Parser};
    use shogi_arena::{GateConfig, MatchConfig, PlayerSettings, UsiTimeControl};
    use shogi_learner::{LearnerConfig, ReplayWindow};
    use shogi_mcts::RootSettings;
    use shogi_mcts::SearchConfig;
    use shogi_model::{DEFAULT_BLOCKS, DEFAULT_CHANNELS, OptimizerSettings};
    use shogi_ratings::SprtConfig;
    use shogi_ratings::curve::CURVE_SIMULATIONS;
    use shogi_registry::{TOURNAMENT_MAX_PLIES, TRAINING_MAX_PLIES};
    use shogi_run::RunConfig;
    use shogi_selfplay::actors::{ActorConfig, SELFPLAY_BATCH};
    use shogi_selfplay::play::PlayConfig;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("shogi-zero").chain(args.iter().copied()))
            .unwrap()
            .command
            .unwrap()
    }

    /// `match --a random --b random` and then `extra`: a match with no networks.
    fn try_match(extra: &[&str]) -> Result<Cli, clap::Error> {
        let head = ["shogi-zero", "match", "--a", "random", "--b", "random"];
        Cli::try_parse_from(head.iter().copied().chain(extra.iter().copied()))
    }

    fn parse_match(extra: &[&str]) -> super::cmd::match_cmd::MatchArgs {
        match try_match(extra).unwrap().command {
            Some(Command::Match(args)) => *args,
            _ => panic!("not match"),
        }
    }

    #[test]
    fn the_argument_parser_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn selfplay_plays_a_runs_games() {
        let Command::Selfplay(args) = parse(&["selfplay", "--out", "x"]) else {
            panic!("not selfplay")
        };
        assert_eq!(args.search_config(), SearchConfig::default());
        assert_eq!(args.play_config(), PlayConfig::default());
        // Threads follow the machine, as a run's do (`shogi_model::selfplay_threads`).
        let threads = args.threads(false);
        let (actor_threads, games_per_thread) =
            ActorConfig::spread(ActorConfig::DEFAULT_GAMES_IN_FLIGHT, threads.actor_threads);
        assert_eq!(
            args.actor_config(&threads),
            ActorConfig {
                threads: actor_threads,
                games_per_thread,
                ..ActorConfig::default()
            }
        );
        assert_eq!(
            shogi_run::run::selfplay_threads(&RunConfig::default(), shogi_model::tch::Device::Cpu),
            threads
        );
        assert_eq!(args.batch_config(), SELFPLAY_BATCH);
        assert_eq!(
            (args.blocks, args.channels),
            (DEFAULT_BLOCKS, DEFAULT_CHANNELS)
        );
        // And those are the run config's: `selfplay` reproduces a run's games.
        let run = RunConfig::default();
        assert_eq!(shogi_run::run::search_config(&run), args.search_config());
        assert_eq!(shogi_run::run::play_config(&run), args.play_config());
        assert_eq!(shogi_run::run::batch_config(&run), args.batch_config());
        assert_eq!(
            (run.network.blocks, run.network.channels, run.game.max_plies),
            (args.blocks, args.channels, TRAINING_MAX_PLIES)
        );
        let Command::Selfplay(puct) = parse(&["selfplay", "--out", "x", "--root", "puct"]) else {
            panic!("not selfplay")
        };
        assert_eq!(
            puct.search_config().root_selection,
            shogi_mcts::RootSelection::Puct
        );
    }

    #[test]
    fn gate_is_the_arenas_gate() {
        let Command::Gate(args) = parse(&["gate", "--run", "r"]) else {
            panic!("not gate")
        };
        assert_eq!(
            args.gate_config(None).unwrap(),
            GateConfig {
                // --torch-threads is 1 for every command (the arena leaves libtorch as is).
                torch_threads: 1,
                ..GateConfig::default()
            }
        );
    }

    #[test]
    fn match_and_curve_play_the_arenas_defaults() {
        let args = parse_match(&[]);
        // Games at once and inference threads follow the machine (two games and one
        // inference thread a core), not MatchConfig's and PlayerSettings' fixed defaults.
        let auto = shogi_model::ThreadCount::Auto;
        let (parallel, inference_threads) =
            shogi_model::match_threads(shogi_model::available_cores(), auto, auto);
        assert_eq!(
            args.player_settings().unwrap(),
            PlayerSettings {
                inference_threads,
                ..PlayerSettings::default()
            }
        );
        let config = MatchConfig::default();
        assert_eq!(
            (
                args.games,
                args.parallel.resolve().0,
                args.seed,
                args.limit.max_plies
            ),
            (config.games, parallel, config.seed, TOURNAMENT_MAX_PLIES)
        );
        assert_eq!(
            shogi_arena::Openings::Random {
                plies: args.opening_plies
            },
            config.openings
        );
        assert_eq!(
            (args.sprt.alpha, args.sprt.beta),
            (SprtConfig::default().alpha, SprtConfig::default().beta)
        );
        let usi = UsiTimeControl::default();
        assert_eq!(
            (
                args.byoyomi,
                args.increment,
                args.main_time,
                args.usi_margin
            ),
            (
                usi.byoyomi_ms,
                usi.increment_ms,
                usi.main_time_ms,
                usi.margin_ms
            )
        );
        let Command::Curve(curve) = parse(&["curve", "runs/x"]) else {
            panic!("not curve")
        };
        assert_eq!(
            curve.player_settings().unwrap(),
            PlayerSettings {
                simulations: CURVE_SIMULATIONS,
                inference_threads,
                ..PlayerSettings::default()
            }
        );
        assert_eq!(
            (curve.games, curve.parallel.resolve().0, curve.seed),
            (config.games, parallel, config.seed)
        );
    }

    #[test]
    fn root_flags_reach_the_players_and_scales_refuse_values_out_of_range() {
        let args = parse_match(&[
            "--gumbel",
            "8",
            "--gumbel-c-scale",
            "3",
            "--gumbel-safety",
            "0.5",
        ]);
        let settings = args.player_settings().unwrap();
        assert_eq!(settings.root.gumbel_safety, 0.5);
        assert_eq!(settings.root.gumbel_c_scale, 3.0);
        assert_eq!(settings.root.gumbel, 8);
        assert!(!settings.root.gumbel_captures);
        let Command::Curve(curve) = parse(&[
            "curve",
            "runs/x",
            "--gumbel",
            "4",
            "--gumbel-c-scale",
            "2.5",
            "--gumbel-captures",
        ]) else {
            panic!("not curve")
        };
        let settings = curve.player_settings().unwrap();
        assert_eq!(settings.root.gumbel_c_scale, 2.5);
        assert_eq!(settings.root.gumbel, 4);
        assert!(settings.root.gumbel_captures);
        let puct = parse_match(&[]).player_settings().unwrap();
        assert_eq!(puct.root.gumbel, 0, "PUCT unless --gumbel");
        // A Gumbel root's flags need the root: refused by the parser, not ignored.
        for flag in [
            &["--gumbel-captures"][..],
            &["--gumbel-safety", "2"],
            &["--gumbel-gain", "2"],
            &["--gumbel-c-scale", "2"],
        ] {
            let err = try_match(flag).unwrap_err().to_string();
            assert!(
                err.contains(flag[0]) && err.contains("--gumbel <MOVES>"),
                "{flag:?}: {err}"
            );
        }
        // One meaning: a count of root moves, PUCT being the flag left out.
        let err = try_match(&["--gumbel", "0"]).unwrap_err().to_string();
        assert!(err.contains("--gumbel") && err.contains("\"0\""), "{err}");
        let switch = ["shogi-zero", "selfplay", "--gumbel", "--out", "/tmp/x"];
        assert!(
            Cli::try_parse_from(switch).is_err(),
            "selfplay: --root gumbel"
        );
        for bad in ["0", "-1", "nan", "inf", "x"] {
            // `=`: clap reads a lone "-1" as a flag, not as the value.
            let err = try_match(&[&format!("--gumbel-c-scale={bad}")])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("--gumbel-c-scale") && err.contains(bad),
                "{bad}: {err}"
            );
        }
        for bad in ["-1", "nan", "inf", "x"] {
            let args = [
                "shogi-zero",
                "curve",
                "runs/x",
                &format!("--gumbel-safety={bad}"),
            ];
            let err = Cli::try_parse_from(args).unwrap_err().to_string();
            assert!(
                err.contains("--gumbel-safety") && err.contains(bad),
                "{bad}: {err}"
            );
        }
    }

    /// `match --tree-batch N`: the players' search batch, 1 to 1,024; nothing else
    /// changes with it (its default is strength play's).
    #[test]
    fn match_tree_batch_reaches_the_players_and_refuses_zero() {
        let args = parse_match(&["--tree-batch", "1"]);
        assert_eq!(
            args.player_settings().unwrap(),
            PlayerSettings {
                tree_batch: 1,
                inference_threads: args.parallel.resolve().1,
                ..PlayerSettings::default()
            }
        );
        for bad in ["0", "1025", "x"] {
            let err = try_match(&["--tree-batch", bad]).unwrap_err().to_string();
            assert!(err.contains("--tree-batch"), "{bad}: {err}");
        }
    }

    /// `--root-of RUN`: the run's play search (its self-play root, `[play]` over it),
    /// read from its config; never mixed with the flags it replaces; a run without a
    /// readable config is an error naming the file.
    #[test]
    fn root_of_a_run_reads_its_play_search() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[selfplay]\nroot = \"gumbel\"\ngumbel_considered = 8\ngumbel_captures = true\n\
                    leaf_exchange = 0.5\ngumbel_safety = 1.0\n[play]\ngumbel_safety = 2.0\n";
        std::fs::write(dir.path().join("config.toml"), text).unwrap();
        let run = dir.path().to_str().unwrap();
        let args = parse_match(&["--root-of", run]);
        let root = args.player_settings().unwrap().root;
        assert_eq!(
            root,
            RootSettings {
                gumbel: 8,
                gumbel_captures: true,
                gumbel_safety: 2.0,
                leaf_exchange: 0.5,
                ..RootSettings::default()
            }
        );
        let Command::Curve(curve) = parse(&["curve", run, "--root-of", run]) else {
            panic!("not curve")
        };
        assert_eq!(curve.player_settings().unwrap().root, root);
        // The gate of that run plays the same search; without a snapshot, PUCT.
        let Command::Gate(gate) = parse(&["gate", "--run", run]) else {
            panic!("not gate")
        };
        let run_dir = shogi_rundir::RunDir::new(dir.path());
        assert_eq!(gate.run_gate_config(&run_dir).unwrap().root, root);
        let bare = shogi_rundir::RunDir::new(dir.path().join("bare"));
        assert_eq!(
            gate.run_gate_config(&bare).unwrap().root,
            RootSettings::default()
        );
        let mixed = [
            "shogi-zero",
            "curve",
            run,
            "--root-of",
            run,
            "--gumbel",
            "4",
        ];
        let err = Cli::try_parse_from(mixed).unwrap_err().to_string();
        assert!(
            err.contains("--gumbel") && err.contains("--root-of"),
            "{err}"
        );
        let missing = dir.path().join("nope");
        let missing = missing.to_str().unwrap();
        let Command::Curve(curve) = parse(&["curve", run, "--root-of", missing]) else {
            panic!("not curve")
        };
        let err = format!("{:#}", curve.player_settings().unwrap_err());
        assert!(err.contains("nope") && err.contains("config.toml"), "{err}");
        let bad = ["shogi-zero", "curve", run, "--leaf-exchange=1.5"];
        let err = Cli::try_parse_from(bad).unwrap_err().to_string();
        assert!(
            err.contains("--leaf-exchange") && err.contains("1.5"),
            "{err}"
        );
    }

    #[test]
    fn learn_trains_as_a_run_does() {
        let Command::Learn(args) = parse(&["learn", "--replay", "r", "--run", "x"]) else {
            panic!("not learn")
        };
        assert_eq!(args.optimizer_settings(), OptimizerSettings::default());
        assert_eq!(
            (args.batch, args.window, args.blocks, args.channels),
            (
                LearnerConfig::DEFAULT_BATCH,
                ReplayWindow::DEFAULT_CAPACITY,
                DEFAULT_BLOCKS,
                DEFAULT_CHANNELS
            )
        );
    }

    fn long_help(subcommand: &str) -> String {
        Cli::command()
            .find_subcommand_mut(subcommand)
            .unwrap()
            .render_long_help()
            .to_string()
    }

    #[test]
    fn help_shows_the_library_defaults() {
        let help = long_help("selfplay");
        let simulations = format!("default {})", SearchConfig::default().simulations);
        assert!(help.contains(&simulations), "{help}");
        assert!(help.contains("`selfplay.root`; default gumbel)"), "{help}");
        let help = long_help("match");
        let simulations = format!("[default: {};", PlayerSettings::default().simulations);
        assert!(help.contains(&simulations), "{help}");
    }
}

#[cfg(test)]
mod help_tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, examples};

    /// Every example in the help parses as the command line it claims to be.
    #[test]
    fn every_help_example_parses() {
        let mut count = 0;
        for line in examples::all() {
            let args = std::iter::once("shogi-zero").chain(line.split_whitespace());
            if let Err(e) = Cli::try_parse_from(args) {
                panic!("`shogi-zero {line}` does not parse: {e}");
            }
            count += 1;
        }
        assert!(count >= 15, "{count} examples");
    }

    /// Each subcommand's help starts with one sentence of what it is for and ends with
    /// an example of it.
    #[test]
    fn every_subcommand_says_what_it_is_for_and_shows_an_example() {
        let mut cli = Cli::command();
        for sub in cli.get_subcommands_mut() {
            let name = sub.get_name().to_string();
            if name == "help" {
                continue;
            }
            let help = sub.render_long_help().to_string();
            let first = help.lines().next().unwrap_or("");
            assert!(
                first.starts_with(|c: char| c.is_ascii_uppercase())
                    && first.split_whitespace().count() >= 4,
                "{name}: {first:?}"
            );
            assert!(
                help.contains(&format!("  shogi-zero {name}")),
                "{name}'s help has no example of itself:\n{help}"
            );
        }
    }

    /// A mistyped subcommand gets the closest one suggested.
    #[test]
    fn a_mistyped_subcommand_is_corrected() {
        let err = Cli::try_parse_from(["shogi-zero", "trian"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("'train'"), "{err}");
    }
}

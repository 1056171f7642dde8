//! `shogi-zero selfplay`: actor threads play games with a network (a checkpoint, or a
//! freshly initialised one) or the uniform test evaluator, batched by inference threads,
//! into a replay directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Result, bail};
use clap::Args;
use shogi_features::{FeatureSet, NetLayout};
use shogi_game::GameKind;
use shogi_mcts::batch::{BatchConfig, BatchEvaluator, BatchService, BatchStats, uniform_batch};
use shogi_mcts::{Evaluator, SearchConfig};
use shogi_model::{
    DEFAULT_BLOCKS, DEFAULT_CHANNELS, InferenceOptions, Model, NetService, SELFPLAY_HALF_INFERENCE,
    SelfplayThreads, Serving, ThreadCount, available_cores, parse_device, selfplay_threads,
};
use shogi_registry::RecordGame;
use shogi_registry::{FromSpec, GameSpec, NetGame, TRAINING_MAX_PLIES, with_game_type};
use shogi_selfplay::actors::{
    ActorConfig, ActorStats, ActorSummary, SELFPLAY_BATCH, SeedRange, run_actors,
};
use shogi_selfplay::play::PlayConfig;

/// Arguments of `shogi-zero selfplay`. Every default is a training run's (the search's
/// [`SearchConfig::default`], [`PlayConfig::default`], [`ActorConfig::default`],
/// [`SELFPLAY_BATCH`]), so these games are the games a run with no keys set plays.
#[derive(Debug, Args)]
pub struct SelfplayArgs {
    /// Which game to play.
    #[arg(long, value_enum, default_value = "minishogi")]
    variant: GameKind,
    /// Replay directory to write chunks into (created if missing).
    #[arg(long, required_unless_present = "follow")]
    out: Option<PathBuf>,
    #[command(flatten)]
    follow: super::train::FollowArgs,
    /// Checkpoint directory to play with; without it a fresh network is initialised.
    #[arg(long, conflicts_with = "uniform")]
    checkpoint: Option<PathBuf>,
    /// Use uniform priors and a draw value instead of a network (tests, search speed).
    #[arg(long)]
    uniform: bool,
    /// Residual blocks of a fresh network.
    #[arg(long, default_value_t = DEFAULT_BLOCKS)]
    pub(crate) blocks: usize,
    /// Channels of a fresh network.
    #[arg(long, default_value_t = DEFAULT_CHANNELS)]
    pub(crate) channels: usize,
    /// Input planes of a fresh network: pieces | attacks | exchanges (a checkpoint reads its own).
    #[arg(long, default_value = "pieces", conflicts_with = "checkpoint")]
    features: FeatureSet,
    /// Games to play.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
    games: u64,
    /// Games in flight (all sharing the network batch).
    #[arg(long, default_value_t = ActorConfig::DEFAULT_GAMES_IN_FLIGHT)]
    actors: usize,
    /// Threads advancing those games; each sends its games' leaves in one request. A
    /// number, or auto: one per core on a CPU, all cores but two with a GPU
    /// (`selfplay.actor_threads` in a run config).
    #[arg(long, default_value_t = ThreadCount::Auto, value_name = "N|auto")]
    threads: ThreadCount,
    /// Threads running the network, each with its own copy and batches. A number, or
    /// auto: one per actor thread on a CPU, one on a GPU (`selfplay.inference_threads`).
    #[arg(long, default_value_t = ThreadCount::Auto, value_name = "N|auto")]
    inference_threads: ThreadCount,
    /// Largest network batch.
    #[arg(long, default_value_t = SELFPLAY_BATCH.max_batch)]
    max_batch: usize,
    /// Run the network in half precision (the run config's `selfplay.half_inference`):
    /// f16 on CUDA, bf16 on a CPU with AVX-512 BF16, f32 on other CPUs.
    #[arg(long, default_value_t = SELFPLAY_HALF_INFERENCE, action = clap::ArgAction::Set, value_name = "BOOL")]
    half_inference: bool,
    /// Draw a game at this many plies.
    #[arg(long, default_value_t = TRAINING_MAX_PLIES)]
    max_plies: u32,
    /// Give a game reaching --max-plies to the side this many material points ahead
    /// (shogi: rook and bishop 5, others 1; tai: mobility values); 0 = a draw.
    #[arg(long, default_value_t = PlayConfig::default().adjudicate_margin, value_name = "POINTS")]
    adjudicate: u32,
    /// The search: one flag per knob (`--simulations`, `--root`, `--terminal-check`,
    /// ...: docs/SEARCH.md), each at the self-play default when left out.
    #[command(flatten)]
    search: super::SearchKnobArgs,
    #[command(flatten)]
    net: super::DeviceArgs,
    /// Base seed (game i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl SelfplayArgs {
    /// The search these flags ask for.
    pub(crate) fn search_config(&self) -> SearchConfig {
        self.search.search_config()
    }

    /// The self-play settings these flags ask for.
    pub(crate) fn play_config(&self) -> PlayConfig {
        PlayConfig {
            adjudicate_margin: self.adjudicate,
            ..PlayConfig::default()
        }
    }

    /// The thread counts these flags ask for on this machine, the network on a GPU when
    /// `cuda`.
    pub(crate) fn threads(&self, cuda: bool) -> SelfplayThreads {
        selfplay_threads(
            available_cores(),
            cuda,
            self.actors,
            self.threads,
            self.inference_threads,
            ThreadCount::Fixed(self.net.torch_threads.max(1)),
        )
    }

    /// The actors these flags ask for on `threads` threads.
    pub(crate) fn actor_config(&self, threads: &SelfplayThreads) -> ActorConfig {
        let (threads, games_per_thread) = ActorConfig::spread(self.actors, threads.actor_threads);
        ActorConfig {
            threads,
            games_per_thread,
            ..ActorConfig::default()
        }
    }

    /// The inference service's batching these flags ask for.
    pub(crate) fn batch_config(&self) -> BatchConfig {
        BatchConfig {
            max_batch: self.max_batch,
            ..SELFPLAY_BATCH
        }
    }
}

pub fn run(args: &SelfplayArgs) -> Result<()> {
    if let Some(run_dir) = &args.follow.follow {
        return super::train::follow(run_dir, &args.follow.overrides, shogi_run::Roles::SELFPLAY);
    }
    let Some(out) = &args.out else {
        bail!("--out DIR (or --follow RUN_DIR) is required");
    };
    if args.actors == 0 || args.max_batch == 0 {
        bail!("--actors and --max-batch must be at least 1");
    }
    // The engines' default rules (no impasse rule; tai shogi's seed defaults) and the
    // requested ply cap.
    let spec = GameSpec::new(args.variant, args.max_plies);
    let layout =
        shogi_registry::layout_with(spec.kind, args.features).map_err(anyhow::Error::msg)?;
    with_game_type!(spec.kind, G => play(args, out, layout, move |_seed: u64| {
        G::from_spec(&spec)
    }))
}

/// Plays `args.games` games of any variant from `start` into `out`.
fn play<G, S>(args: &SelfplayArgs, out: &Path, layout: NetLayout, start: S) -> Result<()>
where
    G: NetGame + RecordGame,
    S: Fn(u64) -> G + Sync,
{
    let search = args.search_config();
    let play = args.play_config();
    let batch = args.batch_config();
    let stop = AtomicBool::new(false);
    let stats = ActorStats::default();
    let seeds = SeedRange::new(args.seed, Some(args.games));
    // The games on `actors`' threads, evaluated by `evaluators` (one per thread, or one
    // for all).
    let play_games = |actors: &ActorConfig, evaluators: &[&dyn Evaluator<G>]| {
        run_actors(
            actors, &seeds, &search, &play, &start, evaluators, out, "selfplay", &stop, &stats,
        )
    };

    let (summary, service_stats) = if args.uniform {
        let actors = args.actor_config(&args.threads(false));
        let service = BatchService::start(batch, uniform_batch::<G>);
        let evaluator = BatchEvaluator::new(service.handle());
        let summary = play_games(&actors, &[&evaluator])?;
        (summary, service.shutdown())
    } else {
        let device = parse_device(&args.net.device)?;
        args.net.apply_threads();
        let threads = args.threads(device.is_cuda());
        let actors = args.actor_config(&threads);
        let serving = Serving {
            inference_threads: threads.inference_threads,
            callers: actors.threads,
            background: false,
        };
        eprintln!(
            "selfplay: {} cores available; {} actor threads, {} inference threads",
            available_cores(),
            actors.threads,
            threads.inference_threads
        );
        let service = network_service(args, layout, batch, device, serving)?;
        let evaluators = service.evaluators::<G>(actors.threads);
        let evaluators: Vec<&dyn Evaluator<G>> =
            evaluators.iter().map(|e| e as &dyn Evaluator<G>).collect();
        let summary = play_games(&actors, &evaluators)?;
        (summary, service.shutdown())
    };
    print_summary(&summary, &stats, &service_stats);
    println!("replay: {}", out.display());
    Ok(())
}

/// The network self-play evaluates with: `--checkpoint`'s, or a fresh one of
/// `--blocks` x `--channels`, served on `serving`'s inference threads.
fn network_service(
    args: &SelfplayArgs,
    layout: NetLayout,
    batch: BatchConfig,
    device: shogi_model::tch::Device,
    serving: Serving,
) -> Result<NetService> {
    if let Some(dir) = &args.checkpoint {
        let service =
            NetService::from_checkpoint(dir, layout, device, batch, args.half_inference, serving)?;
        if let Some(manifest) = service.manifest() {
            eprintln!(
                "selfplay: checkpoint {} (step {})",
                manifest.name, manifest.meta.training_step
            );
        }
        return Ok(service);
    }
    let cfg = super::fresh_model_config(&layout, args.blocks, args.channels)?;
    eprintln!(
        "selfplay: fresh network {} blocks x {} channels",
        cfg.blocks, cfg.channels
    );
    let options = InferenceOptions {
        half: args.half_inference,
        ..NetService::inference_options(&batch)
    };
    let model = Model::new(&cfg, device);
    Ok(NetService::from_model(
        model, device, &options, layout, batch, serving,
    )?)
}

/// What the games were and what they cost: rates, results, the network's batches.
fn print_summary(summary: &ActorSummary, stats: &ActorStats, service_stats: &BatchStats) {
    let secs = summary.elapsed.as_secs_f64().max(1e-9);
    println!(
        "games {} plies {} ({:.1} plies/s, {:.0} games/h) simulations {} ({:.0}/s)",
        summary.games,
        summary.plies,
        summary.plies as f64 / secs,
        summary.games as f64 / secs * 3600.0,
        summary.simulations,
        summary.simulations as f64 / secs
    );
    println!(
        "results black {} white {} draws {} resignations {} (false {} of {} checked) adjudications {}",
        stats.black_wins.load(Ordering::Relaxed),
        stats.white_wins.load(Ordering::Relaxed),
        stats.draws.load(Ordering::Relaxed),
        stats.resignations.load(Ordering::Relaxed),
        stats.false_resignations.load(Ordering::Relaxed),
        stats.would_resign.load(Ordering::Relaxed),
        stats.adjudications.load(Ordering::Relaxed),
    );
    println!(
        "network: {} batches, {:.1} evaluations per batch ({:.0}% fill), {:.0} evaluations/s, {:.0}% of wall time inside the model (its inference threads' time added up)",
        service_stats.batches,
        service_stats.avg_batch,
        service_stats.avg_fill * 100.0,
        service_stats.inputs as f64 / secs,
        service_stats.model_time.as_secs_f64() / secs * 100.0
    );
}

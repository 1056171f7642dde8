//! Self-play's search alone under a run config's search settings (root, simulations,
//! playout cap, terminal checks, root mate search, game rules): one thread advances one
//! actor thread's share of the config's games in flight, with the uniform evaluator
//! called directly (no network, no inference service, no learner), for a fixed time.
//! The figure is what the search itself costs a self-play thread; the network adds to
//! it. `scripts/bench/search_ab.sh` runs two builds of it alternated.
//!
//! `cargo run --release -p shogi-run --example config_search_speed -- CONFIG [SECONDS] [GAMES]`

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use shogi_mcts::{EvalRequest, Evaluator, SearchConfig, UniformEvaluator};
use shogi_registry::{FromSpec, GameSpec, RecordGame, with_game_type};
use shogi_run::RunConfig;
use shogi_run::run::{game_spec, play_config, search_config, selfplay_threads};
use shogi_selfplay::play::{GameProgress, PlayConfig, SelfPlayGame};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .context("usage: config_search_speed CONFIG [SECONDS] [GAMES]")?;
    let config = RunConfig::load(Path::new(path), &[])?;
    let seconds: f64 = args.get(2).map_or(Ok(20.0), |s| s.parse())?;
    let s = &config.selfplay;
    // The actor threads this machine would run (a CPU's).
    let threads = selfplay_threads(&config, shogi_model::tch::Device::Cpu).actor_threads;
    let games: usize = args
        .get(3)
        .map_or(Ok(s.actors.div_ceil(threads)), |g| g.parse())?;
    let spec = game_spec(&config);
    let (search, play) = (search_config(&config), play_config(&config));
    let duration = Duration::from_secs_f64(seconds);
    let (sims, plies, finished, elapsed) = with_game_type!(spec.kind, G => {
        measure::<G>(&spec, &search, &play, games.max(1), duration)
    });
    let secs = elapsed.as_secs_f64();
    println!(
        "{path}: {games} games on one thread for {secs:.1} s: {sims} simulations ({:.0}/s), {plies} plies ({:.1}/s), {finished} games finished",
        sims as f64 / secs,
        plies as f64 / secs,
    );
    Ok(())
}

/// Plays until `duration` has passed; returns (simulations, plies, finished games, time).
fn measure<G: RecordGame + FromSpec>(
    spec: &GameSpec,
    search: &SearchConfig,
    play: &PlayConfig,
    games: usize,
    duration: Duration,
) -> (u64, u64, u64, Duration) {
    let evaluator = UniformEvaluator::default();
    let mut next_seed = 1u64;
    let mut new_game = || {
        next_seed += 1;
        SelfPlayGame::new(G::from_spec(spec), search, play, next_seed)
    };
    let mut slots: Vec<SelfPlayGame<G>> = (0..games).map(|_| new_game()).collect();
    let (mut sims, mut plies, mut finished) = (0u64, 0u64, 0u64);
    let began = Instant::now();
    while began.elapsed() < duration {
        for slot in slots.iter_mut() {
            loop {
                match slot.step() {
                    GameProgress::Evaluate => {
                        let outputs: Vec<_> = {
                            let mut requests: Vec<EvalRequest<'_, G>> = slot
                                .pending_evaluations()
                                .map(|(g, m)| EvalRequest::new(g, m))
                                .collect();
                            evaluator
                                .evaluate(&mut requests)
                                .expect("the uniform evaluator never fails");
                            requests.into_iter().map(|r| (r.priors, r.wdl)).collect()
                        };
                        slot.provide(outputs);
                        break;
                    }
                    GameProgress::Finished => {
                        let done = std::mem::replace(slot, new_game());
                        sims += done.simulations();
                        plies += done.plies() as u64;
                        finished += 1;
                    }
                }
            }
        }
    }
    let elapsed = began.elapsed();
    for game in &slots {
        sims += game.simulations();
        plies += game.plies() as u64;
    }
    (sims, plies, finished, elapsed)
}

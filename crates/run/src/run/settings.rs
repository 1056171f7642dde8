//! The run config translated into each library's settings: one function per settings
//! struct, so a test can hold `RunConfig::default()` to the libraries' defaults.

use super::*;
use shogi_mcts::RootSettings;

/// The network layout of the config's game and input planes (checked by
/// [`RunConfig::validate`]).
pub(super) fn layout_of(config: &RunConfig) -> NetLayout {
    shogi_registry::layout_with(game_spec(config).kind, config.network.features)
        .expect("a validated config's feature set fits its game")
}

/// Self-play's thread counts on this machine: the config's, with each `auto` sized from
/// the cores the process may use and whether the network runs on `device`'s GPU
/// ([`shogi_model::selfplay_threads`]).
pub fn selfplay_threads(config: &RunConfig, device: shogi_model::tch::Device) -> SelfplayThreads {
    let s = &config.selfplay;
    shogi_model::selfplay_threads(
        shogi_model::available_cores(),
        device.is_cuda(),
        s.actors,
        s.actor_threads,
        s.inference_threads,
        config.run.torch_threads,
    )
}

/// The game and rules the config asks for.
pub fn game_spec(config: &RunConfig) -> GameSpec {
    let g = &config.game;
    GameSpec {
        kind: g.variant,
        max_plies: g.max_plies,
        impasse: g.impasse,
        tai: g.tai.rules(g.max_plies),
    }
}

/// How the run's networks play when they are measured (`learns.sh`, `match`/`curve
/// --root-of RUN`, the gate, the USI engine's `RunSearch`): the self-play search without
/// its noise (its Gumbel root of `gumbel_considered` moves, or PUCT) and every play knob
/// at its self-play value, or at `[play]`'s where `[play]` sets it.
pub fn play_root(config: &RunConfig) -> RootSettings {
    let mut root = RootSettings::of_search(&config.selfplay.search);
    for (key, value) in config.play.iter() {
        if let Some(knob) = shogi_mcts::knob(key) {
            knob.set_at_play(&mut root, value);
        }
    }
    root
}

/// The run's networks searched without any rule written by hand: [`play_root`] with
/// its static-exchange aids off ([`RootSettings::plain`]): the same root, its c_scale
/// and leaf mate search. What the network owns of the play search's strength:
/// `learns.sh`, `ladder.sh` and `match`/`curve --root-of RUN --plain` report it beside
/// the play search.
pub fn plain_root(config: &RunConfig) -> RootSettings {
    play_root(config).plain()
}

/// The network architecture a config asks for.
pub fn model_config(config: &RunConfig) -> ModelConfig {
    let mut arch = model_config_for_layout(
        &layout_of(config),
        config.network.blocks,
        config.network.channels,
    );
    arch.se = config.network.se;
    arch.value_pool = config.network.value_pool;
    arch.stem_kernel = config.network.stem_kernel;
    arch.material_head = config.learner.material_weight > 0.0;
    arch.opponent_policy = config.learner.opponent_policy_weight > 0.0;
    arch
}

/// The self-play search of a config (its `[selfplay]` search knobs).
pub fn search_config(config: &RunConfig) -> SearchConfig {
    config.selfplay.search.clone()
}

pub(super) fn schedule(config: &RunConfig) -> LrSchedule {
    let l = &config.learner;
    match l.schedule {
        ScheduleName::Steps => LrSchedule::Steps {
            initial: l.lr,
            factor: l.lr_factor,
            boundaries: l.lr_boundaries.clone(),
        },
        ScheduleName::Cosine => LrSchedule::Cosine {
            peak: l.lr,
            min: l.lr_min,
            warmup: l.lr_warmup,
            total: l.lr_total,
        },
        ScheduleName::Constant => LrSchedule::Constant(l.lr),
    }
}

/// The self-play settings of a config besides the search's.
pub fn play_config(config: &RunConfig) -> PlayConfig {
    let s = &config.selfplay;
    PlayConfig {
        resign_threshold: s.resign_threshold,
        resign_disabled_fraction: s.resign_disabled_fraction,
        random_opening_plies: s.random_opening_plies,
        adjudicate_margin: s.adjudicate_margin,
        ..PlayConfig::default()
    }
}

/// The self-play inference service's batching of a config.
pub fn batch_config(config: &RunConfig) -> BatchConfig {
    BatchConfig {
        max_batch: config.selfplay.max_batch,
        max_wait: Duration::from_millis(config.selfplay.max_wait_ms),
        ..BatchConfig::default()
    }
}

/// How the learner turns a config's replay into samples.
pub fn sample_config(config: &RunConfig) -> SampleConfig {
    let l = &config.learner;
    SampleConfig {
        q_blend: l.q_blend,
        features: config.network.features,
        material_plies: l.material_plies,
        material_value: l.material_value,
        material_gain: l.material_gain,
        material_scale: l.material_scale,
        material_exchange: l.material_exchange,
        opponent_policy: l.opponent_policy_weight > 0.0,
        game: Some(config.game.variant),
    }
}

/// The optimiser settings of a config.
pub fn optimizer_settings(config: &RunConfig) -> OptimizerSettings {
    let l = &config.learner;
    OptimizerSettings {
        optimizer: match l.optimizer {
            OptimizerName::Adamw => OptimizerKind::AdamW {
                beta1: 0.9,
                beta2: 0.999,
            },
            OptimizerName::Sgd => OptimizerKind::Sgd {
                momentum: l.momentum,
                nesterov: true,
            },
        },
        lr: l.lr,
        weight_decay: l.weight_decay,
        grad_clip: (l.grad_clip > 0.0).then_some(l.grad_clip),
        value_weight: l.value_weight,
        material_weight: l.material_weight,
        opponent_policy_weight: l.opponent_policy_weight,
        mixed_precision: l.mixed_precision,
        ema_decay: l.ema_decay,
    }
}

/// The gate settings of a config.
pub fn gate_config(config: &RunConfig) -> GateConfig {
    let g = &config.gate;
    GateConfig {
        games: g.games,
        threshold: g.threshold,
        simulations: g.simulations,
        root: play_root(config),
        max_plies: config.game.max_plies,
        adjudicate_margin: g.adjudicate_margin,
        parallel_games: g.parallel_games,
        device: config.run.device.clone(),
        // The run applies its own count (`selfplay_threads`) before the gate starts.
        torch_threads: config.run.torch_threads.fixed().unwrap_or(0),
        opening_plies: g.opening_plies,
        seed: config.run.seed,
        fixed_opponent: Some(g.fixed_opponent.trim().to_string()).filter(|s| !s.is_empty()),
        fixed_games: g.fixed_games,
        rules: Some(game_spec(config)),
        sprt: g.sprt.then_some(shogi_ratings::SprtConfig {
            elo0: g.sprt_elo0,
            elo1: g.sprt_elo1,
            alpha: g.sprt_error,
            beta: g.sprt_error,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi_game::MaterialScale;
    use shogi_selfplay::actors::SELFPLAY_BATCH;

    /// The run config's defaults are the libraries': a run with no keys set searches,
    /// plays, samples, trains and gates as the libraries do by default, except where the
    /// run itself owns a setting (listed here).
    #[test]
    fn run_defaults_are_the_libraries_defaults() {
        let run = RunConfig::default();
        assert_eq!(search_config(&run), SearchConfig::default());
        assert_eq!(play_config(&run), PlayConfig::default());
        assert_eq!(batch_config(&run), SELFPLAY_BATCH);
        assert_eq!(
            sample_config(&run),
            SampleConfig {
                // The learner takes the run's game only.
                game: Some(run.game.variant),
                ..SampleConfig::default()
            }
        );
        assert_eq!(
            optimizer_settings(&run),
            OptimizerSettings {
                // The run's 0 is "no head"; OptimizerSettings's weights scale a head's loss.
                material_weight: 0.0,
                opponent_policy_weight: 0.0,
                ..OptimizerSettings::default()
            }
        );
        assert_eq!(
            gate_config(&run),
            GateConfig {
                // The gate plays the run's own game, seed, threads and play search.
                root: crate::play_root(&run),
                max_plies: run.game.max_plies,
                seed: run.run.seed,
                torch_threads: 0,
                rules: Some(crate::game_spec(&run)),
                ..GateConfig::default()
            }
        );
        // Thread counts follow the machine (`shogi_model::selfplay_threads`), not
        // ActorConfig's fixed default.
        assert_eq!(
            (
                run.selfplay.actors,
                run.selfplay.games_per_chunk,
                run.selfplay.actor_threads,
                run.selfplay.inference_threads,
                run.run.torch_threads
            ),
            (
                ActorConfig::DEFAULT_GAMES_IN_FLIGHT,
                ActorConfig::default().games_per_chunk,
                ThreadCount::Auto,
                ThreadCount::Auto,
                ThreadCount::Auto
            )
        );
        assert_eq!(
            (
                run.learner.batch,
                run.learner.window,
                run.learner.steps_per_candidate
            ),
            (
                LearnerConfig::DEFAULT_BATCH,
                ReplayWindow::DEFAULT_CAPACITY,
                LearnerConfig::DEFAULT_EXPORT_EVERY
            )
        );
    }

    /// `network.stem_kernel` and `learner.material_scale` reach the architecture and the
    /// samples.
    #[test]
    fn stem_kernel_and_material_scale_reach_the_model_and_the_samples() {
        let c = RunConfig::parse("", "x.toml", &["network.stem_kernel=1".into()]).unwrap();
        assert_eq!(model_config(&c).stem_kernel, 1);
        let c =
            RunConfig::parse("[learner]\nmaterial_scale = \"mobility\"\n", "x.toml", &[]).unwrap();
        assert_eq!(sample_config(&c).material_scale, MaterialScale::Mobility);
    }

    /// The plain search keeps the run's search (Gumbel root, its considered moves and
    /// c_scale, the leaf mate search) and drops every rule written by hand, whether
    /// self-play or `[play]` set it; shogi-cpu's play search has rules to drop.
    #[test]
    fn the_plain_root_is_the_play_root_without_the_hand_written_rules() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/shogi-cpu.toml");
        let mut config = RunConfig::load(&path, &[]).unwrap();
        config.selfplay.search.leaf_mate_nodes = 300;
        config.selfplay.search.leaf_exchange = 0.25;
        let (play, plain) = (play_root(&config), plain_root(&config));
        assert!(
            play.gumbel > 0
                && play.gumbel_captures
                && play.gumbel_safety > 0.0
                && play.gumbel_gain > 0.0
        );
        assert_eq!(plain.gumbel, play.gumbel);
        assert_eq!(plain.gumbel_c_scale, play.gumbel_c_scale);
        assert_eq!(plain.leaf_mate_nodes, 300);
        assert!(!plain.gumbel_captures);
        assert_eq!(
            (plain.gumbel_safety, plain.gumbel_gain, plain.leaf_exchange),
            (0.0, 0.0, 0.0)
        );
        // A PUCT run's plain search is PUCT.
        config.selfplay.search.root_selection = shogi_mcts::RootSelection::Puct;
        assert_eq!(plain_root(&config).gumbel, 0);
    }

    /// A `[play]` key left out is the self-play value; one given is the play-time value,
    /// 0 and `false` included (an aid self-play uses, turned off at play time alone);
    /// the snapshot keeps which were given; a key `[play]` does not take is refused.
    #[test]
    fn play_keys_are_set_or_left_out_and_zero_turns_an_aid_off() {
        let selfplay = "[selfplay]\ngumbel_gain = 2.0\ngumbel_captures = true\n";
        let inherit = RunConfig::parse(selfplay, "x.toml", &[]).unwrap();
        let root = play_root(&inherit);
        assert_eq!((root.gumbel_gain, root.gumbel_captures), (2.0, true));
        let text = format!("{selfplay}[play]\ngumbel_gain = 0\ngumbel_captures = false\n");
        let off = RunConfig::parse(&text, "x.toml", &[]).unwrap();
        let root = play_root(&off);
        assert_eq!((root.gumbel_gain, root.gumbel_captures), (0.0, false));
        assert_eq!(search_config(&off).gumbel_gain, 2.0, "self-play keeps it");
        for config in [&inherit, &off] {
            let again = RunConfig::parse(&config.to_toml(), "snapshot", &[]).unwrap();
            assert_eq!(&again, config);
            assert_eq!(play_root(&again), play_root(config));
        }
        for (text, why) in [
            ("[play]\nsimulations = 8\n", "play.simulations: unknown key"),
            (
                "[play]\ngumbel_gain = true\n",
                "play.gumbel_gain: invalid value",
            ),
            ("play = 1\n", "play: expected a section"),
        ] {
            let err = RunConfig::parse(text, "x.toml", &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    /// A run directory written before a knob was retired still resumes: the knob at its
    /// off value is read as the search without it; on, it is refused by name.
    #[test]
    fn retired_knobs_read_when_off_and_refused_when_on() {
        let old = "[selfplay]\ngumbel_safe = false\ngumbel_noise_plies = 0\n[play]\ngumbel_safe = false\n";
        let config = RunConfig::parse(old, "x.toml", &[]).unwrap();
        assert_eq!(config, RunConfig::default());
        for on in [
            "[selfplay]\ngumbel_safe = true\n",
            "[selfplay]\ngumbel_noise_plies = 12\n",
        ] {
            let err = RunConfig::parse(on, "x.toml", &[]).unwrap_err().to_string();
            assert!(
                err.contains("selfplay.gumbel_") && err.contains("removed"),
                "{err}"
            );
        }
    }
}

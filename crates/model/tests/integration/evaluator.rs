//! The network as the search's evaluator: priors cover exactly the legal moves, values
//! are WDL probabilities, the direct and batched paths agree, and a search and a
//! self-play game run on it end to end.

use std::time::Duration;

use shogi_game::Game;
use shogi_mcts::batch::{BatchConfig, BatchEvaluator, BatchService};
use shogi_mcts::{EvalRequest, Evaluator, Search, SearchConfig, SearchLimits};
use shogi_model::tch::Device;
use shogi_model::{
    Inference, InferenceOptions, Model, NetBatchModel, NetEvaluator, encode_input, model_config_for,
};
use shogi_rules::{ShogiGame, Variant};

fn inference(variant: Variant) -> Inference {
    shogi_model::tch::manual_seed(3);
    let model = Model::new(&model_config_for(variant, 1, 16), Device::Cpu);
    Inference::new(model, Device::Cpu, &InferenceOptions::default())
}

fn positions(variant: Variant) -> Vec<ShogiGame> {
    let mut game = ShogiGame::startpos(variant);
    let mut out = vec![game.clone()];
    let mut moves = Vec::new();
    for ply in 0..12 {
        moves.clear();
        game.legal_moves(&mut moves);
        game.play_unchecked(moves[(ply * 5) % moves.len()]);
        out.push(game.clone());
    }
    out
}

#[test]
fn priors_cover_the_legal_moves_and_values_are_probabilities() {
    for variant in [Variant::Shogi, Variant::Minishogi] {
        let eval = NetEvaluator::new(inference(variant), variant).unwrap();
        let games = positions(variant);
        let moves: Vec<Vec<_>> = games
            .iter()
            .map(|g| {
                let mut m = Vec::new();
                g.legal_moves(&mut m);
                m
            })
            .collect();
        let mut requests: Vec<_> = games
            .iter()
            .zip(&moves)
            .map(|(g, m)| EvalRequest::new(g, m))
            .collect();
        eval.evaluate(&mut requests).unwrap();
        for r in &requests {
            assert_eq!(r.priors.len(), r.moves.len());
            assert!(r.priors.iter().all(|p| p.is_finite() && *p > 0.0));
            assert!((r.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            let total = r.wdl.win + r.wdl.draw + r.wdl.loss;
            assert!((total - 1.0).abs() < 1e-4, "{:?}", r.wdl);
        }
        assert_eq!(eval.stats().positions, games.len() as u64);
    }
}

#[test]
fn a_network_of_the_wrong_variant_is_refused_by_name() {
    let err = NetEvaluator::new(inference(Variant::Minishogi), Variant::Shogi).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("shogi") && text.contains("input planes"),
        "{text}"
    );
}

#[test]
fn batched_service_agrees_with_the_direct_evaluator() {
    let variant = Variant::Minishogi;
    // One set of weights for both paths (tests run in parallel on one global torch RNG,
    // so seeding twice would not give the same weights).
    let model = Model::new(&model_config_for(variant, 1, 16), Device::Cpu);
    let twin = model.copy_to(Device::Cpu).unwrap();
    let options = InferenceOptions::default();
    let direct = NetEvaluator::new(Inference::new(twin, Device::Cpu, &options), variant).unwrap();
    let service = BatchService::start_with(
        BatchConfig {
            max_batch: 64,
            max_wait: Duration::from_millis(1),
            callers: 0,
        },
        move || NetBatchModel::new(Inference::new(model, Device::Cpu, &options), variant).unwrap(),
    );
    let layout = direct.layout();
    let batched = BatchEvaluator::with_encoder(service.handle(), move |g: &ShogiGame, m: &[_]| {
        encode_input(g, &layout, m)
    });
    for game in positions(variant) {
        let mut moves = Vec::new();
        game.legal_moves(&mut moves);
        let mut a = [EvalRequest::new(&game, &moves)];
        let mut b = [EvalRequest::new(&game, &moves)];
        direct.evaluate(&mut a).unwrap();
        batched.evaluate(&mut b).unwrap();
        assert_eq!(a[0].priors, b[0].priors);
        assert_eq!(a[0].wdl, b[0].wdl);
    }
    service.shutdown();
}

#[test]
fn search_runs_on_the_network() {
    let variant = Variant::Shogi;
    let eval = NetEvaluator::new(inference(variant), variant).unwrap();
    let game = ShogiGame::startpos(variant);
    let mut search = Search::new(
        SearchConfig {
            tree_batch: 8,
            ..SearchConfig::for_play()
        },
        1,
    );
    let result = search
        .search(&game, &eval, &SearchLimits::simulations(64))
        .unwrap();
    let best = result.best_move.expect("a move from the start position");
    assert!(game.position().is_legal(best));
    assert_eq!(result.visits.iter().sum::<u32>(), 64);
}

/// A served network replaced by another checkpoint: the same evaluators (as the actors
/// hold them), on each of its inference threads, answer with the new network from then
/// on, exactly as that network alone would; a checkpoint that reads other input planes,
/// or none at all, is refused with the reason and the served network stays on every
/// thread.
#[test]
fn a_served_network_is_replaced_by_a_newer_checkpoint() {
    use shogi_features::{FEATURE_VERSION, FeatureSet, POLICY_VERSION};
    use shogi_game::GameKind;
    use shogi_model::{
        CheckpointMeta, NetService, Serving, model_config_for_layout, save_checkpoint,
    };

    let tmp = tempfile::tempdir().unwrap();
    let save = |name: &str, features: FeatureSet| {
        let layout = shogi_registry::layout_with(GameKind::Minishogi, features).unwrap();
        let cfg = model_config_for_layout(&layout, 1, 8);
        let model = Model::new(&cfg, Device::Cpu);
        let meta = CheckpointMeta {
            architecture: cfg,
            variant: "minishogi".into(),
            feature_version: FEATURE_VERSION,
            features,
            policy_version: POLICY_VERSION,
            training_step: 0,
            samples_seen: 0,
            parent: None,
            play: None,
            run_seconds: None,
        };
        let dir = tmp.path().join(name);
        save_checkpoint(&dir, &model.vs, &meta).unwrap();
        dir
    };
    let (first, second) = (
        save("step-1", FeatureSet::Pieces),
        save("step-2", FeatureSet::Pieces),
    );
    let attacks = save("step-3", FeatureSet::Attacks);
    let layout = shogi_registry::layout_with(GameKind::Minishogi, FeatureSet::Pieces).unwrap();
    let batch = BatchConfig::default();
    let serving = Serving {
        inference_threads: 2,
        callers: 3,
        background: true,
    };
    let serve =
        |dir| NetService::from_checkpoint(dir, layout, Device::Cpu, batch.clone(), false, serving);
    let answers = |evaluator: &dyn Evaluator<ShogiGame>| -> Vec<(Vec<f32>, [f32; 3])> {
        positions(Variant::Minishogi)
            .iter()
            .map(|game| {
                let mut moves = Vec::new();
                game.legal_moves(&mut moves);
                let mut request = [EvalRequest::new(game, &moves)];
                evaluator.evaluate(&mut request).unwrap();
                let [r] = request;
                (r.priors, [r.wdl.win, r.wdl.draw, r.wdl.loss])
            })
            .collect()
    };
    let alone = serve(&second).unwrap();
    let expected = answers(&alone.evaluator::<ShogiGame>());
    alone.shutdown();

    let mut service = serve(&first).unwrap();
    assert_eq!(service.inference_threads(), 2);
    let evaluators = service.evaluators::<ShogiGame>(3);
    let evaluator = &evaluators[1];
    let before = answers(evaluator);
    assert_ne!(before, expected, "two random networks answer alike");
    for other in [&evaluators[0], &evaluators[2]] {
        assert_eq!(
            answers(other),
            before,
            "the inference threads serve one network"
        );
    }
    service.replace_checkpoint(&second).unwrap();
    assert_eq!(service.manifest().unwrap().name, "step-2");
    for evaluator in &evaluators {
        assert_eq!(answers(evaluator), expected);
    }
    for (dir, why) in [
        (attacks, "reads attacks input planes"),
        (tmp.path().join("step-9"), "loading checkpoint"),
    ] {
        let err = service.replace_checkpoint(&dir).unwrap_err().to_string();
        assert!(err.contains(why), "{err}");
        assert_eq!(service.manifest().unwrap().name, "step-2");
        for evaluator in &evaluators {
            assert_eq!(answers(evaluator), expected);
        }
    }
    // Once on each of the two inference threads.
    assert_eq!(service.shutdown().replacements, 2);
}

//! End to end on synthetic self-play data: train a tiny net, loss decreases, candidates
//! are written and load back, TensorBoard scalars read back with tbparse.

use crate::common;

use shogi_testkit::python;

use shogi_learner::{Learner, LearnerConfig, LrSchedule, ReplayWindow, SampleConfig};
use shogi_model::{Expected, Model, OptimizerSettings, model_config_for, tch::Device};
use shogi_records::write_chunk;
use shogi_rules::Variant;

#[test]
fn trains_exports_and_logs() {
    let replay = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let games: Vec<_> = (0..4)
        .map(|seed| common::minishogi_game(seed, 60, 16))
        .collect();
    write_chunk(&replay.path().join("c-000.szgr"), &games).unwrap();
    let mut window = ReplayWindow::new(replay.path(), 100_000, SampleConfig::default());
    window.refresh().unwrap();
    let arch = model_config_for(Variant::Minishogi, 1, 8);
    let model = Model::new(&arch, Device::Cpu);
    let config = LearnerConfig {
        layout: shogi_registry::layout(shogi_game::GameKind::Minishogi),
        batch: 32,
        schedule: LrSchedule::Constant(0.05),
        export_every: 20,
        run_dir: run.path().to_path_buf(),
        parent: None,
        seed: 1,
        start_step: 0,
        start_samples: 0,
        play: None,
        clock: None,
    };
    let mut learner = Learner::new(model, OptimizerSettings::default(), config).unwrap();
    let first = learner.run(&window, 3).unwrap();
    let later = learner.run(&window, 57).unwrap();
    let (a, b) = (first.last.unwrap().total, later.last.unwrap().total);
    assert!(b < a, "loss did not decrease: {a} -> {b}");
    assert_eq!(later.steps, 60);
    assert_eq!(later.candidates.len(), 3);
    let expected = Expected {
        architecture: Some(arch.clone()),
        variant: "minishogi".into(),
        feature_version: shogi_features::FEATURE_VERSION,
        features: Some(Default::default()),
        policy_version: shogi_features::POLICY_VERSION,
    };
    let (loaded, manifest) =
        shogi_model::load_checkpoint(&later.candidates[2], &expected, Device::Cpu).unwrap();
    assert_eq!(manifest.meta.training_step, 60);
    assert_eq!(manifest.meta.samples_seen, 60 * 32);
    // Each candidate carries the optimiser's state, and a learner resumed from it
    // restores it (a directory without one is refused by name, the optimiser stays fresh).
    assert!(
        later.candidates[2]
            .join(shogi_model::OPTIMIZER_FILE)
            .is_file()
    );
    let resumed_dir = tempfile::tempdir().unwrap();
    let mut resumed = Learner::new(
        loaded,
        OptimizerSettings::default(),
        LearnerConfig {
            layout: shogi_registry::layout(shogi_game::GameKind::Minishogi),
            batch: 32,
            schedule: LrSchedule::Constant(0.05),
            export_every: 20,
            run_dir: resumed_dir.path().to_path_buf(),
            parent: None,
            seed: 1,
            start_step: 60,
            start_samples: 60 * 32,
            play: None,
            clock: None,
        },
    )
    .unwrap();
    resumed.restore_optimizer(&later.candidates[2]).unwrap();
    let err = resumed.restore_optimizer(run.path()).unwrap_err();
    assert!(
        err.contains("optimizer.safetensors does not exist"),
        "{err}"
    );
    drop(learner);

    let script = "import sys\nfrom tbparse import SummaryReader\ndf = SummaryReader(sys.argv[1]).scalars\nfor tag, g in df.groupby('tag'):\n    print(tag, len(g))\n";
    let board = run.path().join("tensorboard");
    let out = shogi_testkit::run_ok(
        python(),
        &["-c".as_ref(), script.as_ref(), board.as_os_str()],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for tag in [
        "loss/policy",
        "loss/value",
        "loss/total",
        "lr",
        "grad_norm",
        "samples_per_sec",
    ] {
        assert!(
            text.lines().any(|l| l == format!("{tag} 60")),
            "tag {tag} missing:\n{text}"
        );
    }
}

//! `shogi-zero match` and `shogi-zero gate` end to end.

use std::path::{Path, PathBuf};
use std::process::Command;

use shogi_features::{FEATURE_VERSION, POLICY_VERSION};
use shogi_model::{CheckpointMeta, Model, model_config_for, save_checkpoint, tch};
use shogi_rules::Variant;

fn shogi_zero(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(args)
        .output()
        .expect("run shogi-zero");
    assert!(
        out.status.success(),
        "shogi-zero {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn match_between_builtin_players_writes_games_table_and_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let text = shogi_zero(&[
        "match",
        "--a",
        "rollout",
        "--b",
        "random",
        "--variant",
        "minishogi",
        "--games",
        "6",
        "--simulations",
        "32",
        "--max-plies",
        "100",
        "--parallel",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    for needle in [
        "A: rollout",
        "B: random",
        "black",
        "white",
        "total",
        "Elo(A - B)",
        "LOS",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    let s = summary(&out);
    let total = &s["total"];
    let games = total["wins"].as_u64().unwrap()
        + total["draws"].as_u64().unwrap()
        + total["losses"].as_u64().unwrap();
    assert_eq!(games, 6);
    assert_eq!(s["games"].as_array().unwrap().len(), 6);
    assert!(out.join("game-0005.usi").is_file());
}

#[test]
fn match_against_a_usi_engine_with_sprt_options() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("u");
    let root = repo_root();
    // The venv's interpreter, never a system `python3` the double might not run under.
    let python = std::env::var_os("SHOGI_ZERO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv/bin/python"));
    assert!(
        python.exists(),
        "no python at {}: run scripts/bootstrap.sh (or set SHOGI_ZERO_PYTHON)",
        python.display()
    );
    let python = python.display().to_string();
    let engine = format!(
        "usi:{python} {} normal",
        root.join("scripts/usi_doubles/engine.py").display()
    );
    let text = shogi_zero(&[
        "match",
        "--a",
        &engine,
        "--b",
        "random",
        "--games",
        "2",
        "--max-plies",
        "30",
        "--byoyomi",
        "100",
        "--sprt",
        "0,50",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(text.contains("SPRT LLR"), "{text}");
    let s = summary(&out);
    assert_eq!(s["forfeits"].as_u64(), Some(0), "{s}");
    assert_eq!(s["variant"], "shogi");
    for ext in ["usi", "csa", "kif"] {
        assert!(out.join(format!("game-0001.{ext}")).is_file(), "{ext}");
    }
}

#[test]
fn match_rejects_a_bad_player() {
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["match", "--a", "stockfish", "--b", "random"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown player"));
}

fn tiny_net(dir: &Path, step: u64) {
    tch::manual_seed(step as i64);
    let cfg = model_config_for(Variant::Minishogi, 1, 8);
    let model = Model::new(&cfg, tch::Device::Cpu);
    let meta = CheckpointMeta {
        architecture: cfg,
        variant: "minishogi".into(),
        feature_version: FEATURE_VERSION,
        policy_version: POLICY_VERSION,
        training_step: step,
        samples_seen: 0,
        parent: None,
    };
    save_checkpoint(dir.join(format!("step-{step:08}")), &model.vs, &meta).unwrap();
}

#[test]
fn gate_gates_pending_candidates_once() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    tiny_net(&run.join("accepted"), 0);
    tiny_net(&run.join("candidates"), 50);
    let r = run.to_str().unwrap();
    let common = [
        "--run",
        r,
        "--games",
        "2",
        "--simulations",
        "4",
        "--max-plies",
        "40",
        "--device",
        "cpu",
    ];
    let mut args = vec!["gate"];
    args.extend(common);
    args.extend(["--threshold", "0"]);
    let text = shogi_zero(&args);
    assert!(text.contains("step-00000050 vs step-00000000"), "{text}");
    assert!(text.contains("accepted"), "{text}");
    assert!(run.join("accepted/step-00000050/gate.json").is_file());
    assert!(run.join("ratings.png").is_file());
    // A second gate on the same run is refused while one holds it.
    let held = shogi_arena::RunDir::new(&run).lock_role("gate").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .arg("gate")
        .args(common)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("another gate is working on this run") && stderr.contains("gate.lock"),
        "{stderr}"
    );
    drop(held);
    // Nothing left: a second call says so.
    let mut again = vec!["gate"];
    again.extend(common);
    assert!(shogi_zero(&again).contains("no pending candidates"));
    // A candidate that cannot reach the threshold is rejected.
    tiny_net(&run.join("candidates"), 90);
    let mut args = vec!["gate"];
    args.extend(common);
    args.extend(["--threshold", "1.01"]);
    let text = shogi_zero(&args);
    assert!(text.contains("rejected"), "{text}");
    assert!(run.join("rejected/step-00000090/gate.json").is_file());
    let csv = std::fs::read_to_string(run.join("ratings.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
}

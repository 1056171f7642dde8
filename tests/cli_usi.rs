//! The USI engine driven by a client no one here wrote: cshogi's `cshogi.usi.Engine`
//! launches the bare binary the way a GUI does and plays whole games at short byoyomi,
//! with legality judged by cshogi (shogi) and pyffish (minishogi). See
//! `scripts/usi/client_games.py`.

use shogi_testkit::{python, repo_root};
use std::path::{Path, PathBuf};
use std::process::Command;

use shogi_features::{FEATURE_VERSION, POLICY_VERSION};
use shogi_model::{CheckpointMeta, Model, model_config_for, save_checkpoint, tch};
use shogi_rules::Variant;

const BIN: &str = env!("CARGO_BIN_EXE_shogi-zero");

/// Runs the client and returns its JSON summary.
fn client_games(args: &[&str]) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("summary.json");
    let out = Command::new(python())
        .arg(repo_root().join("scripts/usi/client_games.py"))
        .args(["--engine", BIN, "--json", json.to_str().unwrap()])
        .args(args)
        .output()
        .expect("run the cshogi client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(summary["illegal_moves"], 0, "{summary}");
    assert_eq!(summary["time_losses"], 0, "{summary}");
    summary
}

/// An untrained network (random weights, fixed seed) in a checkpoint directory.
fn untrained_checkpoint(dir: &Path, variant: Variant) -> PathBuf {
    tch::manual_seed(11);
    let cfg = model_config_for(variant, 1, 16);
    let model = Model::new(&cfg, tch::Device::Cpu);
    let meta = CheckpointMeta {
        architecture: cfg,
        variant: variant.name().into(),
        feature_version: FEATURE_VERSION,
        features: Default::default(),
        policy_version: POLICY_VERSION,
        training_step: 0,
        samples_seen: 0,
        parent: None,
        play: None,
        run_seconds: None,
    };
    let path = dir.join("step-00000000");
    save_checkpoint(&path, &model.vs, &meta).unwrap();
    path
}

#[test]
fn cshogi_client_plays_whole_shogi_games_at_200ms_byoyomi() {
    let tmp = tempfile::tempdir().unwrap();
    let net = untrained_checkpoint(tmp.path(), Variant::Shogi);
    let model = format!("ModelPath={}", net.display());
    let s = client_games(&[
        "--games",
        "4",
        "--byoyomi",
        "200",
        "--max-plies",
        "160",
        "--option",
        &model,
        "--option",
        "Device=cpu",
    ]);
    let games = s["games"].as_array().unwrap();
    assert_eq!(games.len(), 4);
    assert!(s["moves"].as_u64().unwrap() >= 60, "{s}");
}

#[test]
fn cshogi_client_plays_minishogi_through_uci_variant() {
    let s = client_games(&[
        "--variant",
        "minishogi",
        "--games",
        "4",
        "--byoyomi",
        "150",
        "--max-plies",
        "120",
    ]);
    assert_eq!(s["games"].as_array().unwrap().len(), 4);
    assert!(s["moves"].as_u64().unwrap() >= 10, "{s}");
}

/// A third-party tournament runner (shogiarena, pinned in scripts/requirements.txt and
/// installed by the bootstrap) starts the engine with its default rules, which hand the
/// ply limit to the engine through `MaxMovesToDraw`/`Draw_Ply`, and plays every game
/// to its end without an error game. See `scripts/usi/shogiarena.sh`.
#[test]
fn shogiarena_runner_plays_games_to_the_end_with_its_default_rules() {
    let root = repo_root();
    let python = python();
    let runner = root.join(".venv/bin/shogiarena");
    assert!(
        runner.exists(),
        "{} missing: run `bash scripts/bootstrap.sh` (make test does)",
        runner.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let net = untrained_checkpoint(tmp.path(), Variant::Shogi);
    let out = Command::new("bash")
        .arg(root.join("scripts/usi/shogiarena.sh"))
        .arg("2")
        .arg(&net)
        .env("SHOGIARENA", &runner)
        .env("SHOGI_ZERO_BIN", BIN)
        .env("SHOGI_ZERO_PYTHON", &python)
        .env("SIMULATIONS", "4")
        .env("BYOYOMI_MS", "200")
        .env("OUT", tmp.path().join("arena"))
        .output()
        .expect("run scripts/usi/shogiarena.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("shogiarena: clean, 2/2 games, 0 errors"),
        "{stdout}"
    );
    // Each game reports how it ended (a result and a move count), not an abort.
    let finished = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with('g') && l.contains(" after "))
        .count();
    assert_eq!(finished, 2, "{stdout}");
}

/// The bare binary (as a GUI starts it) fed `lines` on stdin; its stdout once it exits.
fn engine_session(lines: &[String]) -> String {
    engine_session_with(lines, false)
}

/// The engine's output to `lines`, its input left open until it answers the last `go`
/// with `bestmove` (end of input stops a search, as `quit` does).
fn engine_session_to_bestmove(lines: &[String]) -> String {
    engine_session_with(lines, true)
}

/// The bare binary fed `lines`, its input closed at once or, with `until_bestmove`, once
/// it has said `bestmove`; its whole stdout.
fn engine_session_with(lines: &[String], until_bestmove: bool) -> String {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let mut child = Command::new(BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take();
    for line in lines {
        writeln!(stdin.as_mut().unwrap(), "{line}").unwrap();
    }
    if !until_bestmove {
        stdin = None;
    }
    let mut out = String::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("bestmove ") {
            stdin = None;
        }
        out.push_str(&line);
        out.push('\n');
    }
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{out}");
    out
}

/// `HalfPrecision` (on by default) runs the network in the device's half precision, bf16
/// on a CPU that computes it natively and f32 on any other, and says which when it loads;
/// turning it off reloads the network in f32, and both search.
#[test]
fn the_network_runs_in_the_half_precision_the_device_computes() {
    let tmp = tempfile::tempdir().unwrap();
    let net = untrained_checkpoint(tmp.path(), Variant::Shogi);
    let out = engine_session(&[
        "usi".to_string(),
        format!("setoption name ModelPath value {}", net.display()),
        "setoption name Device value cpu".into(),
        "isready".into(),
        "position startpos".into(),
        "go nodes 32".into(),
        "setoption name HalfPrecision value false".into(),
        "isready".into(),
        "go nodes 32".into(),
    ]);
    let half = if shogi_model::cpu_computes_bf16() {
        "bf16"
    } else {
        "f32"
    };
    let loaded: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("info string model loaded"))
        .collect();
    assert_eq!(
        loaded,
        [
            format!("info string model loaded ({half})"),
            "info string model loaded (f32)".to_string()
        ],
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("bestmove ")).count(),
        2,
        "{out}"
    );
}

/// `NetBatching shared` (the default on CUDA) serves one copy of the network that
/// batches every search thread's leaves: the engine says so when it loads, searches with
/// several threads, and with one thread plays the very search of a thread's own copy
/// (the same network outputs, so the same nodes and principal variation).
#[test]
fn search_threads_can_share_one_batching_copy_of_the_network() {
    let tmp = tempfile::tempdir().unwrap();
    let net = untrained_checkpoint(tmp.path(), Variant::Shogi);
    let session = |batching: &str, threads: u32| {
        engine_session_to_bestmove(&[
            "usi".to_string(),
            format!("setoption name ModelPath value {}", net.display()),
            "setoption name Device value cpu".into(),
            format!("setoption name Threads value {threads}"),
            format!("setoption name NetBatching value {batching}"),
            "isready".into(),
            "position startpos moves 7g7f 3c3d".into(),
            "go nodes 96".into(),
        ])
    };
    let loaded = |out: &str| -> String {
        out.lines()
            .find(|l| l.starts_with("info string model loaded"))
            .unwrap_or_else(|| panic!("no model loaded line: {out}"))
            .to_string()
    };
    // The last info line with a pv, without the fields that depend on timing (`depth` is
    // the mean depth of the last stretch between two info lines).
    let last_info = |out: &str| -> String {
        let line = out
            .lines()
            .rfind(|l| l.starts_with("info ") && l.contains(" pv "))
            .unwrap_or_else(|| panic!("no info line with a pv: {out}"));
        let mut kept = Vec::new();
        let mut words = line.split_whitespace();
        while let Some(word) = words.next() {
            if ["depth", "time", "nps", "hashfull"].contains(&word) {
                words.next();
            } else {
                kept.push(word);
            }
        }
        kept.join(" ")
    };
    let shared = session("shared", 2);
    assert!(
        loaded(&shared)
            .ends_with(", one copy batching the 2 search threads' leaves (up to 16 a call)"),
        "{shared}"
    );
    assert_eq!(
        shared
            .lines()
            .filter(|l| l.starts_with("bestmove "))
            .count(),
        1,
        "{shared}"
    );
    let (own, one_shared) = (session("per-thread", 1), session("shared", 1));
    assert!(!loaded(&own).contains("batching"), "{own}");
    assert_eq!(
        last_info(&own),
        last_info(&one_shared),
        "{own}\n{one_shared}"
    );
    // The CPU's default is a copy per thread.
    assert!(!loaded(&session("auto", 2)).contains("batching"));
}

/// A network copied out of its run plays as its run measured it: the search its
/// manifest recorded (here a Gumbel root of 8 with the captures and the safety prior),
/// and the engine says where that search came from.
#[test]
fn a_network_out_of_its_run_is_searched_as_its_manifest_records() {
    let tmp = tempfile::tempdir().unwrap();
    let net = untrained_checkpoint(tmp.path(), Variant::Shogi);
    let mut manifest = shogi_model::read_manifest(&net).unwrap();
    manifest.meta.play = Some(shogi_mcts::RootSettings {
        gumbel: 8,
        gumbel_captures: true,
        gumbel_safety: 2.0,
        ..Default::default()
    });
    std::fs::write(
        net.join("manifest.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let out = engine_session(&[
        "usi".to_string(),
        format!("setoption name ModelPath value {}", net.display()),
        "isready".into(),
        "position startpos".into(),
        "go nodes 32".into(),
    ]);
    let expected = format!(
        "info string search: as its run measured it (recorded in {}, the network is not in its run): Gumbel root of 8 moves, winning captures always considered, safety 2 logits a point",
        net.join("manifest.json").display()
    );
    assert!(out.lines().any(|l| l == expected), "{out}");
    assert!(out.lines().any(|l| l.starts_with("bestmove ")), "{out}");
}

/// The engine as a GUI starts it (the bare binary), given a network of a run directory,
/// searches as that run measures its networks (`RunSearch`: here `configs/shogi-cpu.toml`'s
/// Gumbel root of 8 moves with the captures, the safety prior and the gain of its `[play]`) and
/// says so; with `RunSearch` off it keeps the options' PUCT root and says that too.
#[test]
fn a_run_network_is_searched_as_its_run_measures_it() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let net = untrained_checkpoint(&run.join("accepted"), Variant::Shogi);
    std::fs::copy(
        repo_root().join("configs/shogi-cpu.toml"),
        run.join("config.toml"),
    )
    .unwrap();
    let session = engine_session;
    let model = format!("setoption name ModelPath value {}", net.display());
    let out = session(&[
        "usi".into(),
        model.clone(),
        "isready".into(),
        "position startpos".into(),
        "go nodes 32".into(),
    ]);
    let expected = format!(
        "info string search: as run {} measures its networks: Gumbel root of 8 moves, winning captures always considered, safety 2 logits a point, gain 2 logits a point",
        run.display()
    );
    assert!(out.lines().any(|l| l == expected), "{out}");
    assert!(out.lines().any(|l| l.starts_with("bestmove ")), "{out}");
    let out = session(&[
        "usi".into(),
        "setoption name RunSearch value false".into(),
        model,
        "isready".into(),
    ]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("info string search: the options' (PUCT root), not run")),
        "{out}"
    );
}

//! `shogi-zero match` and `shogi-zero gate` end to end.

use shogi_testkit::repo_root;
use std::path::{Path, PathBuf};
use std::process::Command;

use shogi_features::{FEATURE_VERSION, POLICY_VERSION};
use shogi_model::{CheckpointMeta, Model, model_config_for, save_checkpoint, tch};
use shogi_rules::Variant;

fn shogi_zero(args: &[&str]) -> String {
    let out = shogi_testkit::run_ok(env!("CARGO_BIN_EXE_shogi-zero"), args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs the binary, asserts that it failed, and returns its standard error.
/// The learner step of each point in a `curve.csv`, in its order.
fn curve_steps(csv: &str) -> Vec<&str> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect()
}

fn shogi_zero_fails(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn match_between_builtin_players_writes_games_table_and_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let run = shogi_testkit::run_ok(
        env!("CARGO_BIN_EXE_shogi-zero"),
        &[
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
        ],
    );
    let text = String::from_utf8_lossy(&run.stdout);
    // Its progress on stderr (not a terminal here: a line a game for 6 games), ending
    // with the whole match.
    let progress = String::from_utf8_lossy(&run.stderr);
    assert!(progress.contains("match: 1/6 games, A "), "{progress}");
    assert!(progress.contains("match: 6/6 games, A "), "{progress}");
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

/// The USI test double that plays legal random moves, as a player spec: run by the
/// venv's interpreter, never a system `python3` the double might not run under.
fn usi_double() -> String {
    let python = std::env::var_os("SHOGI_ZERO_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    assert!(
        python.exists(),
        "no python at {}: run scripts/bootstrap.sh (or set SHOGI_ZERO_PYTHON)",
        python.display()
    );
    format!(
        "usi:{} {} normal",
        python.display(),
        repo_root().join("scripts/usi_doubles/engine.py").display()
    )
}

#[test]
fn match_against_a_usi_engine_with_sprt_options() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("u");
    let engine = usi_double();
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
        features: Default::default(),
        policy_version: POLICY_VERSION,
        training_step: step,
        samples_seen: 0,
        parent: None,
        play: None,
        // The run's clock: a minute a hundred steps (the initial network records none,
        // as one written before the clock).
        run_seconds: (step > 0).then_some(step as f64 * 0.6),
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
    let gated = shogi_testkit::run_ok(env!("CARGO_BIN_EXE_shogi-zero"), &args);
    let text = String::from_utf8_lossy(&gated.stdout);
    assert!(text.contains("step-00000050 vs step-00000000"), "{text}");
    // Its progress on stderr (not a terminal here: a line a game), as a match's.
    let progress = String::from_utf8_lossy(&gated.stderr);
    assert!(progress.contains("gate: 1/2 games, A "), "{progress}");
    assert!(progress.contains("gate: 2/2 games, A "), "{progress}");
    assert!(text.contains("accepted"), "{text}");
    assert!(run.join("accepted/step-00000050/gate.json").is_file());
    assert!(run.join("ratings.png").is_file());
    // A second gate on the same run is refused while one holds it.
    let held = shogi_rundir::RunDir::new(&run).lock_role("gate").unwrap();
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

/// The binary run with `args` in a process group of its own, sent one SIGINT (a
/// terminal's Ctrl-C) once `ready` holds (within two minutes, else `never` fails the
/// test); its output once it exits.
fn interrupted_once(
    args: &[impl AsRef<std::ffi::OsStr>],
    ready: impl Fn() -> bool,
    never: &str,
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let child = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(args)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let began = std::time::Instant::now();
    while !ready() {
        assert!(began.elapsed().as_secs() < 120, "{never}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to the child's own process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// Ctrl-C stops a gate between moves: nothing is promoted or rejected, the candidate
/// stays pending, the command says so and exits 0, and the same command gates it again.
#[test]
fn an_interrupted_gate_leaves_its_candidate_pending() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    tiny_net(&run.join("accepted"), 0);
    tiny_net(&run.join("candidates"), 50);
    let r = run.to_str().unwrap();
    let gate = |games: &'static str| {
        [
            "gate",
            "--run",
            r,
            "--games",
            games,
            "--simulations",
            "4",
            "--max-plies",
            "40",
            "--device",
            "cpu",
        ]
        .map(String::from)
    };
    let games = run.join("games/gate-step-00000050");
    let played = || std::fs::read_dir(&games).map_or(0, |d| d.count());
    let stopped = interrupted_once(&gate("2000"), || played() >= 4, "no gate games written");
    let stdout = String::from_utf8_lossy(&stopped.stdout);
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert!(stopped.status.success(), "{stderr}");
    assert!(
        stdout.contains("gate: interrupted after ") && stdout.contains("of 2000 games"),
        "{stdout}"
    );
    assert!(
        stderr.contains("stopping: finishing the moves in progress"),
        "{stderr}"
    );
    assert!(run.join("candidates/step-00000050").is_dir());
    assert!(!run.join("accepted/step-00000050").exists());
    assert!(!run.join("rejected/step-00000050").exists());
    let again = shogi_testkit::run_ok(env!("CARGO_BIN_EXE_shogi-zero"), &gate("2"));
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(text.contains("step-00000050 vs step-00000000"), "{text}");
    assert!(!run.join("candidates/step-00000050").exists());
}

#[test]
fn curve_measures_accepted_networks_against_one_opponent_and_reuses_points() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    for step in [0, 100, 200, 300] {
        tiny_net(&run.join("accepted"), step);
    }
    let r = run.to_str().unwrap();
    let args = [
        "curve",
        r,
        "--points",
        "3",
        "--games",
        "2",
        "--simulations",
        "4",
        "--max-plies",
        "30",
        "--device",
        "cpu",
    ];
    let text = shogi_zero(&args);
    let out = run.join("proof/curve-random");
    let csv = std::fs::read_to_string(out.join("curve.csv")).unwrap();
    let steps = curve_steps(&csv);
    // The first, the last and one between; every point played 2 games.
    assert_eq!(steps.len(), 3, "{csv}");
    assert_eq!((steps[0], steps[2]), ("0", "300"), "{csv}");
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        // Minutes on the run's clock, from the initial network (its zero).
        let step: f64 = f[1].parse().unwrap();
        let minutes: f64 = f[3].parse().unwrap();
        assert!((minutes - step * 0.01).abs() < 1e-9, "{line}");
        assert_eq!(f[4], "random");
        let (w, d, l): (u32, u32, u32) = (
            f[6].parse().unwrap(),
            f[7].parse().unwrap(),
            f[8].parse().unwrap(),
        );
        assert_eq!(w + d + l, 2, "{line}");
        assert!(out.join(f[0]).join("game-0001.usi").is_file());
    }
    assert!(out.join("curve.png").is_file());
    assert!(!text.contains("measured before"), "{text}");
    // Run again with the same settings: nothing is replayed.
    let again = shogi_zero(&args);
    assert_eq!(again.matches("measured before").count(), 3, "{again}");
    // At fixed learner steps: the network each step had (250 had step 200's), the steps
    // past the learner's last export skipped with a word, into their own directory.
    let steps_out = tmp.path().join("by-steps");
    let mut at_steps = args.to_vec();
    at_steps.splice(2..4, ["--at-steps", "100,250,900"]);
    at_steps.extend(["--out", steps_out.to_str().unwrap()]);
    let by_steps = shogi_testkit::run_ok(env!("CARGO_BIN_EXE_shogi-zero"), &at_steps);
    let text = String::from_utf8_lossy(&by_steps.stderr);
    assert!(
        text.contains("has not reached step 900 (its learner exported up to step 300)"),
        "{text}"
    );
    let csv = std::fs::read_to_string(steps_out.join("curve.csv")).unwrap();
    let steps = curve_steps(&csv);
    assert_eq!(steps, ["100", "200"], "{csv}");
    // Steps the run never reached are an error, not an empty curve.
    let none = shogi_zero_fails(&["curve", r, "--at-steps", "5000", "--device", "cpu"]);
    assert!(none.contains("reached none of the steps [5000]"), "{none}");
    // A directory without networks is a clear error.
    let bad = shogi_zero_fails(&["curve", tmp.path().to_str().unwrap()]);
    assert!(bad.contains("accepted"), "{bad}");
    // The run's curves in one picture, nothing played; none measured is said.
    let text = shogi_zero(&["curve", r, "--combine"]);
    assert!(text.contains("curves.png"), "{text}");
    let png = std::fs::read(run.join("proof/curves.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let none = shogi_zero_fails(&["curve", tmp.path().to_str().unwrap(), "--combine"]);
    assert!(none.contains("no curves yet"), "{none}");
}

#[test]
fn match_takes_alphabeta_players_and_usi_options() {
    let text = shogi_zero(&[
        "match",
        "--a",
        "alphabeta:depth=2",
        "--b",
        "random",
        "--variant",
        "minishogi",
        "--games",
        "4",
        "--max-plies",
        "80",
    ]);
    assert!(text.contains("A: alphabeta:depth=2"), "{text}");
    assert!(
        text.contains(&format!(
            "alphabeta baseline version {}",
            shogi_baseline::BASELINE_VERSION
        )),
        "{text}"
    );
    // At equal time: a network-free searcher at 5 ms a move against the baseline at 5 ms
    // a move; the summary records the baseline's version.
    let tmp = tempfile::tempdir().unwrap();
    let text = shogi_zero(&[
        "match",
        "--a",
        "uniform",
        "--b",
        "alphabeta:movetime=5",
        "--movetime",
        "5",
        "--variant",
        "minishogi",
        "--games",
        "2",
        "--parallel",
        "1",
        "--max-plies",
        "40",
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert!(text.contains("B: alphabeta:movetime=5"), "{text}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["forfeits"], 0, "{summary}");
    assert_eq!(
        summary["baseline_version"].as_u64(),
        Some(u64::from(shogi_baseline::BASELINE_VERSION))
    );
    // Options for a player that is not a USI engine are refused, not ignored.
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args([
            "match",
            "--a",
            "random",
            "--b",
            "random",
            "--a-option",
            "USI_Hash=16",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--a-option is for a usi: player"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["match", "--a", "alphabeta:depth=0", "--b", "random"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("depth must be at least 1"), "{err}");
}

#[test]
fn the_ladder_script_rates_a_tiny_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    tiny_net(tmp.path(), 0);
    let ck = tmp.path().join("step-00000000");
    let out = tmp.path().join("ladder");
    let root = repo_root();
    let ladder = || {
        let run = Command::new("bash")
            .arg(root.join("scripts/bench/ladder.sh"))
            .arg(&ck)
            .args(["2", "2"])
            .env("SHOGI_ZERO_BIN", env!("CARGO_BIN_EXE_shogi-zero"))
            .env("LADDER", "random alphabeta:depth=1 alphabeta:depth=2")
            .env("LADDER_OUT", &out)
            .env("LADDER_MAX_PLIES", "40")
            .env("LADDER_DEVICE", "cpu")
            .env("LADDER_PARALLEL", "2")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&run.stdout).to_string();
        assert!(
            run.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&run.stderr)
        );
        text
    };
    let text = ladder();
    assert!(text.contains("anchor alphabeta:depth=1 = 0 Elo"), "{text}");
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("ladder.json")).unwrap()).unwrap();
    assert_eq!(j["ratings"]["alphabeta:depth=1"]["elo"].as_f64(), Some(0.0));
    assert!(
        j["ratings"]["net"]["elo"].as_f64().unwrap().is_finite(),
        "{j}"
    );
    // Two rung pairings and three net pairings.
    assert_eq!(j["pairs"].as_array().unwrap().len(), 5, "{j}");
    // The rung-vs-rung games are cached under the variant, both rungs, the games and
    // the ply limit, and reused while the baseline's version is the same...
    let cached = out.join("rung-minishogi-alphabeta_depth_2-vs-alphabeta_depth_1-g2-p40");
    assert!(cached.join("summary.json").is_file(), "{text}");
    let text = ladder();
    assert!(
        text.contains(&format!(
            "rung-minishogi-alphabeta_depth_2-vs-alphabeta_depth_1-g2-p40: cached (baseline version {})",
            shogi_baseline::BASELINE_VERSION
        )),
        "{text}"
    );
    // ...but played again when they come from another version of the baseline.
    let path = cached.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    summary["baseline_version"] = serde_json::json!(shogi_baseline::BASELINE_VERSION - 1);
    std::fs::write(&path, serde_json::to_vec(&summary).unwrap()).unwrap();
    let text = ladder();
    assert!(
        text.contains(&format!(
            "cached games are of baseline version {}, now {}: playing them again",
            shogi_baseline::BASELINE_VERSION - 1,
            shogi_baseline::BASELINE_VERSION
        )),
        "{text}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        summary["baseline_version"].as_u64(),
        Some(u64::from(shogi_baseline::BASELINE_VERSION))
    );
}

/// `learns.sh` gives every figure twice: the run's play search and the plain search
/// (the same root without the rules written by hand), in matches, the curve and the
/// ladder (`net` and `net-plain` in one fit).
#[test]
fn learns_sh_reports_the_play_and_the_plain_search() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    tiny_net(&run.join("accepted"), 0);
    tiny_net(&run.join("accepted"), 50);
    // The default config with a play-time rule, so that the two searches differ.
    let default = std::fs::read_to_string(repo_root().join("configs/minishogi.toml")).unwrap();
    assert!(default.contains("\n[play]"), "a [play] section");
    let config = default.replacen("\n[play]", "\n[play]\ngumbel_safety = 2.0", 1);
    std::fs::write(run.join("config.toml"), config).unwrap();
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/bench/learns.sh"))
        .arg(&run)
        .args(["2", "2"])
        .env("SHOGI_ZERO_BIN", env!("CARGO_BIN_EXE_shogi-zero"))
        .env("SHOGI_ZERO_PYTHON", shogi_testkit::python())
        .env("CURVE_POINTS", "2")
        .env("CURVE_GAMES", "2")
        .env("LADDER_GAMES", "2")
        .env("LADDER", "random alphabeta:depth=1")
        .env("LADDER_MAX_PLIES", "40")
        .env("LADDER_DEVICE", "cpu")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("== the play search") && text.contains("== the plain search"),
        "{text}"
    );
    let proof = run.join("proof");
    for dir in [
        "vs-random",
        "vs-random-plain",
        "vs-initial",
        "vs-initial-plain",
    ] {
        assert!(
            proof.join(dir).join("summary.json").is_file(),
            "{dir}: {text}"
        );
    }
    for dir in ["curve-alphabeta-depth-1", "curve-alphabeta-depth-1-plain"] {
        let curve: serde_json::Value =
            serde_json::from_slice(&std::fs::read(proof.join(dir).join("curve.json")).unwrap())
                .unwrap();
        let safety = curve["gumbel_safety"].as_f64().unwrap();
        assert_eq!(safety == 0.0, dir.ends_with("-plain"), "{dir}: {curve}");
    }
    let ladder: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("ladder/ladder.json")).unwrap()).unwrap();
    for player in ["net", "net-plain"] {
        assert!(
            ladder["ratings"][player]["elo"]
                .as_f64()
                .unwrap()
                .is_finite(),
            "{ladder}"
        );
    }
    assert!(text.contains("strongest rung net-plain scores"), "{text}");
}

/// A network player whose calls fail now and then (one batch in 3 fails, one in 5
/// answers a NaN: the soak bench's hook) tries them again: no game is forfeited.
#[test]
fn a_network_that_fails_now_and_then_forfeits_no_game() {
    let tmp = tempfile::tempdir().unwrap();
    tiny_net(tmp.path(), 0);
    let net = format!("checkpoint:{}", tmp.path().join("step-00000000").display());
    let out_dir = tmp.path().join("games");
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .env(
            shogi_model::faults::INJECT_FAULTS_VAR,
            "fail_every=3,nan_every=5",
        )
        .args([
            "match",
            "--a",
            &net,
            "--b",
            "random",
            "--variant",
            "minishogi",
        ])
        .args(["--games", "4", "--simulations", "8", "--max-plies", "40"])
        .args(["--device", "cpu", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = summary(&out_dir);
    assert_eq!(s["games"].as_array().map(Vec::len), Some(4), "{s}");
    assert_eq!(s["forfeits"].as_u64(), Some(0), "{s}");
}

/// Ctrl-C at a terminal (SIGINT to the whole process group) stops a match between moves:
/// the games played are kept and said, its USI engine is not killed mid-game (it runs in
/// its own process group, so no game is lost to a forfeit), and the same command plays
/// the rest.
#[test]
fn an_interrupted_match_keeps_its_games_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let engine = usi_double();
    let args = [
        "match",
        "--a",
        &engine,
        "--b",
        "random",
        "--games",
        "400",
        "--max-plies",
        "200",
        "--byoyomi",
        "100",
        "--parallel",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    let log = out.join(shogi_arena::matchplay::RESULTS_FILE);
    let logged = || std::fs::read_to_string(&log).map_or(0, |t| t.lines().count());
    let stopped = interrupted_once(&args, || logged() >= 4, "no games logged");
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert!(stopped.status.success(), "{stderr}");
    let kept = summary(&out)["games"].as_array().unwrap().len();
    assert!((3..400).contains(&kept), "{kept}");
    assert!(
        stderr.contains(&format!("interrupted: the {kept} games played are kept in")),
        "{stderr}"
    );
    assert_eq!(
        logged(),
        kept + 1,
        "the log: its header and every game kept"
    );
    let s = summary(&out);
    assert!(
        s["games"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["reason"] != "Forfeit"),
        "{s}"
    );
    // The same command with fewer games asked: nothing more to play.
    let mut again = args.to_vec();
    let games = kept.to_string();
    again[6] = &games;
    let text = shogi_zero(&again);
    assert!(text.contains(&format!("{kept} more read back")), "{text}");
}

//! `shogi-zero train` end to end on the smoke config: the full loop, resume after an
//! interruption, kill -9 at random instants, and config errors a user can act on.

use shogi_testkit::repo_root;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shogi_model::Expected;
use shogi_rundir::RunDir;

const BIN: &str = env!("CARGO_BIN_EXE_shogi-zero");

fn smoke_config() -> PathBuf {
    repo_root().join("configs/smoke.toml")
}

fn train(run_dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("train")
        .arg(smoke_config())
        .arg("--set")
        .arg(format!("run.dir={:?}", run_dir.display().to_string()))
        .args(extra)
        .output()
        .expect("run shogi-zero")
}

fn minishogi() -> Expected {
    Expected {
        architecture: None,
        variant: "minishogi".into(),
        feature_version: shogi_features::FEATURE_VERSION,
        features: Some(Default::default()),
        policy_version: shogi_features::POLICY_VERSION,
    }
}

/// Every published checkpoint loads (manifest + sha256) and every replay chunk reads;
/// a candidate the gate set aside because it would not load is the one exception.
fn assert_consistent(run: &RunDir) {
    assert_consistent_but(run, &[]);
}

/// [`assert_consistent`], `damaged` (networks a test damaged) excepted.
fn assert_consistent_but(run: &RunDir, damaged: &[&Path]) {
    for dir in [run.candidates(), run.accepted(), run.rejected()] {
        for (_, path) in RunDir::checkpoints_in(&dir).unwrap() {
            let report = std::fs::read_to_string(path.join("gate.json")).unwrap_or_default();
            if report.contains("\"refused\"") || damaged.contains(&path.as_path()) {
                continue;
            }
            shogi_model::load_checkpoint(&path, &minishogi(), shogi_model::tch::Device::Cpu)
                .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
        }
    }
    for entry in std::fs::read_dir(run.replay()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "szgr") {
            shogi_records::record::read_chunk(&path)
                .unwrap_or_else(|e| panic!("{} is damaged: {e}", path.display()));
        }
    }
}

#[test]
fn smoke_run_completes_the_loop_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = train(&dir, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "train failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("step budget reached"), "{stdout}");
    let run = RunDir::new(&dir);
    // The initial network plus at least one gated candidate were accepted.
    let accepted = run.accepted_checkpoints().unwrap();
    assert!(accepted.len() >= 2, "accepted: {accepted:?}\n{stderr}");
    assert!(run.pending_candidates().unwrap().is_empty());
    for (_, path) in &accepted[1..] {
        assert!(path.join("gate.json").is_file());
    }
    for file in [
        run.config_file(),
        run.ratings_csv(),
        run.ratings_json(),
        run.ratings_png(),
        run.log_file(),
        run.best_pointer(),
    ] {
        assert!(file.is_file(), "{} missing", file.display());
    }
    // The log's first line says where the networks run and why.
    let log = std::fs::read_to_string(run.log_file()).unwrap();
    let first = log.lines().next().unwrap_or_default();
    assert!(
        first.contains("device cpu (requested \"cpu\"; the CPU was asked for)"),
        "{first}"
    );
    // The learner's and self-play's half precision on the CPU: bf16 where the CPU
    // computes it natively, f32 elsewhere, and the log says which.
    let (learner, selfplay) = if shogi_model::cpu_computes_bf16() {
        (
            "learner.mixed_precision = true: learner convolutions in bf16 on this CPU",
            "selfplay.half_inference = true: self-play inference in bf16 on the CPU",
        )
    } else {
        (
            "learner.mixed_precision = true has no effect on this CPU (no native bf16)",
            "selfplay.half_inference = true is ignored on this CPU (no AVX-512 BF16)",
        )
    };
    assert!(log.contains(learner), "{log}");
    assert!(log.contains(selfplay), "{log}");
    assert!(std::fs::read_dir(run.tensorboard()).unwrap().count() > 0);
    assert_consistent(&run);
    // Every network carries the search its run measures it with (`play_root`), the
    // initial one and the learner's alike, so a copy out of the run plays the same.
    let config = shogi_run::RunConfig::load(&run.config_file(), &[]).unwrap();
    let mut clock = 0.0;
    for (_, path) in &accepted {
        let manifest = shogi_model::read_manifest(path).unwrap();
        assert_eq!(
            manifest.meta.play,
            Some(shogi_run::play_root(&config)),
            "{}",
            path.display()
        );
        // And the run's clock when it was written, from 0 for the initial network.
        let at = manifest.meta.run_seconds.expect("the run's clock");
        assert!(at >= clock, "{}: {at} after {clock}", path.display());
        clock = at;
    }
    let recorded = |run: &RunDir| -> f64 {
        std::fs::read_to_string(run.run_seconds_file())
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let first_invocation = recorded(&run);
    assert!(first_invocation >= clock, "{first_invocation} < {clock}");

    // The USI engine plays the accepted network under a real client (cshogi's USI
    // driver, legality by pyffish): a whole minishogi game, legal and on time.
    let (_, best) = run.best().unwrap().unwrap();
    let client = Command::new(repo_root().join(".venv/bin/python"))
        .arg(repo_root().join("scripts/usi/client_games.py"))
        .args(["--engine", BIN, "--variant", "minishogi", "--games", "1"])
        .args(["--byoyomi", "200", "--max-plies", "60"])
        .arg("--option")
        .arg(format!("ModelPath={}", best.display()))
        .args(["--option", "Device=cpu"])
        .output()
        .expect("run the cshogi client");
    assert!(
        client.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&client.stdout),
        String::from_utf8_lossy(&client.stderr)
    );

    // Self-play games export as USI lines any viewer replays.
    let games = tmp.path().join("games");
    let export = Command::new(BIN)
        .arg("export")
        .arg(run.replay())
        .args(["--limit", "3", "--out"])
        .arg(&games)
        .output()
        .unwrap();
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    assert!(String::from_utf8_lossy(&export.stdout).contains("exported 3 games"));
    // Its progress on stderr (not a terminal: a line every twentieth of the chunks, and
    // where it stopped).
    let progress = String::from_utf8_lossy(&export.stderr);
    assert!(
        progress
            .lines()
            .any(|l| l.starts_with("export: ") && l.ends_with(" chunks, 3 games")),
        "{progress}"
    );
    let usi: Vec<_> = std::fs::read_dir(&games)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "usi"))
        .collect();
    assert_eq!(usi.len(), 3);
    let line = std::fs::read_to_string(&usi[0]).unwrap();
    assert!(
        line.starts_with("position sfen rbsgk/4p/5/P4/KGSBR b - 1 moves "),
        "{line}"
    );
    // hcpe3 (dlshogi's format) has no minishogi form: refused with the reason, no file.
    let hcpe3 = dir.join("games.hcpe3");
    let export = Command::new(BIN)
        .arg("export")
        .arg(run.replay())
        .args(["--format", "hcpe3", "--out"])
        .arg(&hcpe3)
        .output()
        .unwrap();
    assert!(!export.status.success());
    assert!(
        String::from_utf8_lossy(&export.stderr).contains("standard shogi only"),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    assert!(!hcpe3.exists());

    // Starting again without --resume refuses to overwrite the run.
    let again = train(&dir, &[]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));

    // Resuming with a larger step budget continues from the last step. With a
    // one-batch window and pruning on, the chunks that left the window are deleted.
    let chunks = || -> Vec<PathBuf> {
        std::fs::read_dir(run.replay())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "szgr"))
            .collect()
    };
    let before = chunks();
    // A candidate damaged on disk (its weights cut short), newer than any network: the
    // learner passes it over and the gate sets it aside, naming why; the run goes on.
    let damaged = run.candidates().join("step-00000079");
    copy_dir(&accepted.last().unwrap().1, &damaged);
    std::fs::remove_file(damaged.join("gate.json")).unwrap();
    let weights = damaged.join(shogi_model::WEIGHTS_FILE);
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    let resumed = train(
        &dir,
        &[
            "--resume",
            "--set",
            "run.max_steps=80",
            "--set",
            "learner.window=300",
            "--set",
            "learner.prune_replay=true",
        ],
    );
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(stdout.contains("learner at step 80"), "{stdout}");
    // The learner went on with the optimiser state saved beside the weights it resumed
    // from (momentum was restarted on every resume before).
    let log = std::fs::read_to_string(run.log_file()).unwrap();
    assert!(
        log.contains("learner: optimiser state restored from step-"),
        "{log}"
    );
    assert!(!log.contains("optimiser state NOT restored"), "{log}");
    assert!(
        log.contains("step-00000079 does not load, an older network is used"),
        "{log}"
    );
    assert!(
        log.contains("gate: step-00000079 does not load; set aside in rejected/"),
        "{log}"
    );
    let set_aside = run.rejected().join("step-00000079").join("gate.json");
    let report = std::fs::read_to_string(&set_aside).unwrap();
    assert!(
        report.contains("\"refused\"") && report.contains("sha256"),
        "{report}"
    );
    assert!(log.contains("faults: candidates set aside 1"), "{log}");
    let pruned = before.iter().filter(|p| !p.exists()).count();
    assert!(pruned > 0, "no chunk of {} pruned", before.len());
    assert!(!chunks().is_empty());
    let (best_step, best_dir) = run.best().unwrap().unwrap();
    assert!(
        best_step > accepted.last().unwrap().0,
        "no progress on resume"
    );
    // The clock went on from the first invocation's time, not from 0.
    let at = shogi_model::read_manifest(&best_dir)
        .unwrap()
        .meta
        .run_seconds
        .unwrap();
    assert!(at > first_invocation, "{at} <= {first_invocation}");
    assert!(recorded(&run) >= at);
    assert_consistent(&run);

    // A new run started from this one's best network (`run.init`): its first network
    // is that network, and its manifest names where it came from.
    let (_, best_dir) = run.best().unwrap().unwrap();
    let best_name = best_dir.file_name().unwrap().to_string_lossy().into_owned();
    let second = tmp.path().join("second");
    let init = format!("run.init={:?}", dir.display().to_string());
    let out = train(&second, &["--set", &init, "--set", "run.minutes=0.01"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = RunDir::new(&second).accepted().join("step-00000000");
    let manifest = std::fs::read_to_string(first.join("manifest.json")).unwrap();
    assert!(manifest.contains(&best_name), "{manifest}");
    let weights = |d: &Path| {
        let (model, _) =
            shogi_model::load_checkpoint(d, &minishogi(), shogi_model::tch::Device::Cpu).unwrap();
        model
            .vs
            .variables()
            .into_iter()
            .map(|(name, t)| (name, Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(weights(&first), weights(&best_dir));
    // A network of another architecture is refused by name, before anything is written.
    let third = tmp.path().join("third");
    let out = train(&third, &["--set", &init, "--set", "network.channels=8"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("run.init"), "{err}");
    assert!(
        !RunDir::new(&third).config_file().exists(),
        "a refused start leaves no run"
    );

    // The best network damaged on disk after it was accepted: self-play, the learner and
    // the gate go on with the newest network that loads, each naming the one passed over;
    // the learner trains that step again, and its network supersedes the damaged one.
    let (best_step, best_dir) = run.best().unwrap().unwrap();
    let best_weights = best_dir.join(shogi_model::WEIGHTS_FILE);
    let bytes = std::fs::read(&best_weights).unwrap();
    std::fs::write(&best_weights, &bytes[..bytes.len() / 2]).unwrap();
    let budget = format!("run.max_steps={}", best_step + 20);
    let again = train(&dir, &["--resume", "--set", &budget]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let log = std::fs::read_to_string(run.log_file()).unwrap();
    let passed_over = format!(
        "{} does not load, an older network is used",
        best_dir.display()
    );
    assert!(log.contains(&format!("self-play: {passed_over}")), "{log}");
    assert!(log.contains(&format!("learner: {passed_over}")), "{log}");
    assert!(
        log.contains("gate: an accepted network does not load"),
        "{log}"
    );
    // The step trained again supersedes the damaged one when the gate promotes it (the
    // damaged one kept beside); when a newer candidate was pending with it, the gate
    // passes it over and the damaged one stays in accepted/, passed over by every role.
    let superseded = PathBuf::from(format!("{}.superseded-1", best_dir.display()));
    let retrained = run.rejected().join(best_dir.file_name().unwrap());
    let report = std::fs::read_to_string(retrained.join("gate.json")).unwrap_or_default();
    assert!(
        superseded.is_dir() || report.contains("passed_over_for") && best_dir.is_dir(),
        "the damaged network is superseded or kept, its step trained again passed over: {report}"
    );
    assert_eq!(run.best().unwrap().unwrap().0, best_step + 20);
    assert_consistent_but(&run, &[&best_dir]);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Continuous self-play: every slot stays busy for the whole run (each status line
/// shows all 8 games in flight), and each newer network is served to the games in
/// progress (a generation of 4 games, half the slots, once drained to nothing and left
/// half the slots idle); the games are whole and the run consistent.
#[test]
fn selfplay_keeps_every_slot_busy_and_takes_each_new_network_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = train(
        &dir,
        &[
            "--set",
            "run.minutes=0.4",
            "--set",
            "run.max_steps=0",
            "--set",
            "run.status_every_secs=2",
            "--set",
            "selfplay.games_per_generation=4",
            "--set",
            "gate.enabled=false",
            // A window that grows with the positions played (KataGo's): the status line
            // shows its size.
            "--set",
            "learner.window=400",
            "--set",
            "learner.window_growth=0.4",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run = RunDir::new(&dir);
    let log = std::fs::read_to_string(run.log_file()).unwrap();
    let status: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("simulations/s"))
        .collect();
    assert!(status.len() >= 3, "{log}");
    // Every status line but the last (written after the actors stopped) sees 8 games.
    for line in &status[..status.len() - 1] {
        assert!(line.contains("8 in flight"), "{line}");
    }
    let swaps = log
        .lines()
        .filter(|l| l.contains("from the next batch on (8 games in flight go on with it)"))
        .count();
    assert!(
        swaps >= 1,
        "no network was served to the games in flight:\n{log}"
    );
    let grown = status
        .iter()
        .filter_map(|l| {
            l.split(" window ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .max();
    assert!(
        grown.is_some_and(|w| w > 400),
        "the window never grew:\n{log}"
    );
    let (games, skipped) = shogi_records::read_chunk_dir(&run.replay()).unwrap();
    assert!(
        skipped.is_empty() && games.len() >= 8,
        "{} games",
        games.len()
    );
    assert_consistent(&run);
}

/// Starts a five-minute smoke run in `dir` and returns once the learner has trained a
/// little (a candidate pending or a second network accepted).
fn train_until_a_candidate(dir: &Path) -> (std::process::Child, RunDir) {
    let child = Command::new(BIN)
        .arg("train")
        .arg(smoke_config())
        .args(["--set", &format!("run.dir={:?}", dir.display().to_string())])
        .args(["--set", "run.max_steps=100000", "--set", "run.minutes=5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = RunDir::new(dir);
    let began = Instant::now();
    while run
        .pending_candidates()
        .map(|c| c.is_empty())
        .unwrap_or(true)
        && run
            .accepted_checkpoints()
            .map(|a| a.len() < 2)
            .unwrap_or(true)
    {
        assert!(began.elapsed() < Duration::from_secs(120), "no candidate");
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, run)
}

/// The run in `dir` is whole and goes on with `--resume`.
fn assert_resumes(dir: &Path, run: &RunDir) {
    assert_consistent(run);
    let resumed = train(dir, &["--resume", "--set", "run.max_steps=1"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
}

/// A role that cannot go on stops the run loudly: a network whose every batch fails
/// (the soak bench's hook) stops self-play after 8 tries in a row, and the process
/// exits non-zero with the role and the cause on the log's last line and on stderr
/// (it once exited 0 saying the time budget was spent).
#[test]
fn a_role_that_cannot_go_on_stops_the_run_with_its_cause() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = Command::new(BIN)
        .env(shogi_model::faults::INJECT_FAULTS_VAR, "fail_every=1")
        .arg("train")
        .arg(smoke_config())
        .args(["--set", &format!("run.dir={:?}", dir.display().to_string())])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the self-play stopped: actor thread")
            && stderr.contains("8 network calls in a row failed"),
        "{stderr}"
    );
    let log = std::fs::read_to_string(RunDir::new(&dir).log_file()).unwrap();
    let last = log.lines().last().unwrap_or_default();
    assert!(
        last.contains("ERROR run stopped: the self-play stopped: actor thread"),
        "{last}"
    );
    assert!(!log.contains("time budget"), "{log}");
}

/// The replay-ratio budget is the run's, not the invocation's: three invocations train
/// no more samples a position than `learner.replay_ratio`, counted over the positions the
/// run played once each (a resumed learner does not count its window again).
#[test]
fn a_resumed_run_keeps_its_replay_ratio_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (ratio, batch) = (2.0, 64u64);
    let train_to = |steps: u64| {
        let out = train(
            &dir,
            &[
                "--resume",
                "--set",
                &format!("run.max_steps={steps}"),
                "--set",
                &format!("learner.replay_ratio={ratio}"),
                "--set",
                "learner.steps_per_candidate=4",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for steps in [12, 24, 36] {
        train_to(steps);
    }
    let run = RunDir::new(&dir);
    let log = std::fs::read_to_string(run.log_file()).unwrap();
    assert_eq!(log.matches("replay account restored").count(), 2, "{log}");
    let mut unique = shogi_learner::ReplayWindow::new(
        run.replay(),
        usize::MAX,
        shogi_learner::SampleConfig::default(),
    );
    let played = unique.refresh().unwrap() as u64;
    let (_, last) = RunDir::checkpoints_in(&run.candidates())
        .unwrap()
        .into_iter()
        .chain(run.accepted_checkpoints().unwrap())
        .max_by_key(|(step, _)| *step)
        .unwrap();
    let manifest = shogi_model::read_manifest(&last).unwrap();
    assert_eq!(manifest.meta.training_step, 36);
    let account = shogi_learner::read_replay_account(&last).unwrap().unwrap();
    assert!(
        account.positions <= played,
        "counted {} of {played} positions played",
        account.positions
    );
    // The learner checks its budget before each call of up to 5 steps.
    let most = ratio * account.positions as f64 + (4 * batch) as f64;
    assert!(
        manifest.meta.samples_seen as f64 <= most,
        "{} samples on {} positions ({played} played)",
        manifest.meta.samples_seen,
        account.positions
    );

    // A candidate without an account (exported before accounts were kept): the resumed
    // learner counts the chunks present as trained on and its samples so far as outside
    // the budget, and the account it saves next says so, so the invocation after it
    // weighs only the samples trained since against the positions counted since (it
    // once weighed the run's whole life against them and waited for hours of games).
    std::fs::remove_file(last.join(shogi_learner::REPLAY_ACCOUNT_FILE)).unwrap();
    for steps in [48, 52] {
        train_to(steps);
    }
    let log = std::fs::read_to_string(run.log_file()).unwrap();
    assert!(log.contains("has no replay account"), "{log}");
    let step_48 = [run.accepted(), run.rejected(), run.candidates()]
        .iter()
        .map(|d| d.join("step-00000048"))
        .find(|d| d.is_dir())
        .unwrap();
    let account = shogi_learner::read_replay_account(&step_48)
        .unwrap()
        .unwrap();
    assert_eq!(account.samples_before, manifest.meta.samples_seen);
    let since = shogi_model::read_manifest(&step_48)
        .unwrap()
        .meta
        .samples_seen
        - account.samples_before;
    assert!(
        since as f64 <= ratio * account.positions as f64 + (4 * batch) as f64,
        "{since} samples on {} positions counted since",
        account.positions
    );
}

#[test]
fn sigterm_stops_gracefully_and_the_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (child, run) = train_until_a_candidate(&dir);
    let stopped_at = Instant::now();
    send_signal(child.id(), "TERM");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("interrupted"), "{stdout}");
    assert!(stopped_at.elapsed() < Duration::from_secs(30), "slow stop");
    assert_resumes(&dir, &run);
}

/// A second interrupt quits at once with status 130 (not a crash in libtorch's exit
/// handlers while its threads still run), and the run resumes from what was published.
#[test]
fn a_second_interrupt_quits_at_once_and_the_run_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let (child, run) = train_until_a_candidate(&dir);
    send_signal(child.id(), "INT");
    std::thread::sleep(Duration::from_millis(20));
    send_signal(child.id(), "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{:?}\n{stderr}", out.status);
    assert!(stderr.contains("second interrupt"), "{stderr}");
    assert_resumes(&dir, &run);
}

fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// `n` kill instants in 200..3200 ms drawn from `seed` (splitmix64).
fn kill_delays(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            200 + (z ^ (z >> 31)) % 3000
        })
        .collect()
}

/// kill -9 at random instants, resume each time: nothing published is ever half-written
/// and the run still finishes. The instants come from a seed that changes every run (so
/// more of a run's life is covered over time), printed with the test's output on failure;
/// `SHOGI_ZERO_KILL_SEED=N` replays one.
#[test]
fn kill_nine_at_random_instants_never_corrupts_the_run() {
    let seed = std::env::var("SHOGI_ZERO_KILL_SEED")
        .ok()
        .map(|s| s.parse::<u64>().expect("SHOGI_ZERO_KILL_SEED: a u64"))
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let delays_ms = kill_delays(seed, 6);
    eprintln!("kill -9 instants {delays_ms:?} ms (replay: SHOGI_ZERO_KILL_SEED={seed})");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let run = RunDir::new(&dir);
    for delay in delays_ms {
        let mut child = Command::new(BIN)
            .arg("train")
            .arg(smoke_config())
            .args(["--set", &format!("run.dir={:?}", dir.display().to_string())])
            .args(["--resume", "--set", "run.max_steps=100000"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        child.wait().unwrap();
        if run.config_file().exists() {
            assert_consistent(&run);
        }
    }
    let out = train(&dir, &["--resume", "--set", "run.max_steps=1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_consistent(&run);
    assert!(run.best().unwrap().is_some());
}

#[test]
fn kill_delays_are_a_function_of_the_seed() {
    assert_eq!(kill_delays(5, 6), kill_delays(5, 6));
    assert_ne!(kill_delays(5, 6), kill_delays(6, 6));
    let many = kill_delays(1, 1000);
    assert!(many.iter().all(|d| (200..3200).contains(d)));
    // Spread over the whole range, not stuck in one corner.
    assert!(many.iter().any(|&d| d < 500) && many.iter().any(|&d| d > 2900));
}

/// The self-play games of a fresh `--roles selfplay` run with `run.seed = seed`, as move
/// lists, sorted (which thread plays which game, and so the chunk order, is scheduling).
fn selfplay_games(seed: u64) -> Vec<Vec<u32>> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = train(
        &dir,
        &[
            "--roles",
            "selfplay",
            "--set",
            &format!("run.seed={seed}"),
            "--set",
            "run.minutes=0.2",
            "--set",
            "game.max_plies=30",
            "--set",
            "selfplay.games_per_generation=8",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (games, skipped) = shogi_records::read_chunk_dir(&RunDir::new(&dir).replay()).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let mut moves: Vec<Vec<u32>> = games
        .iter()
        .map(|g| g.moves.iter().map(|m| m.mv).collect())
        .collect();
    moves.sort();
    moves
}

/// How many games two sorted multisets share.
fn shared(a: &[Vec<u32>], b: &[Vec<u32>]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Two runs with one `run.seed` play the same games (the generation seed once mixed in
/// the clock's nanoseconds, so no two runs shared a game); another seed plays others.
/// The three runs play at once, each for 12 s, so they may finish different numbers of
/// games: every game of the first generation (8) must be in both of the same seed.
#[test]
fn the_same_seed_plays_the_same_selfplay_games() {
    let (a, b, c) = std::thread::scope(|s| {
        let runs = [11, 11, 12].map(|seed| s.spawn(move || selfplay_games(seed)));
        let [a, b, c] = runs.map(|run| run.join().expect("a self-play run panicked"));
        (a, b, c)
    });
    assert!(
        a.len() >= 8 && b.len() >= 8,
        "{} and {} games",
        a.len(),
        b.len()
    );
    let same = shared(&a, &b);
    eprintln!(
        "seed 11: {} and {} games, {same} shared; seed 12: {} games, {} shared with the first",
        a.len(),
        b.len(),
        c.len(),
        shared(&a, &c)
    );
    assert!(
        same >= 8 && same >= a.len().min(b.len()) - 8,
        "seed 11 twice: {same} shared of {} and {}",
        a.len(),
        b.len()
    );
    let other = shared(&a, &c);
    assert!(
        other < 8,
        "seeds 11 and 12 share {other} of {} games",
        a.len()
    );
}

fn train_error(config: &str, extra: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, config).unwrap();
    let out = Command::new(BIN)
        .arg("train")
        .arg(&path)
        .args(extra)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "an error, not a crash: {stderr}"
    );
    stderr
}

#[test]
fn config_errors_name_the_key() {
    let err = train_error("[selfplay]\nsimulatons = 32\n", &[]);
    assert!(
        err.contains("unknown field `simulatons`") && err.contains("selfplay"),
        "{err}"
    );
    let err = train_error("[learner]\nbatch = \"large\"\n", &[]);
    assert!(
        err.contains("learner.batch") && err.contains("invalid type"),
        "{err}"
    );
    let err = train_error("[gate]\nthreshold = 2.0\n", &[]);
    assert!(
        err.contains("gate.threshold = 2 is out of range: must be between 0 and 1"),
        "{err}"
    );
    let err = train_error("", &["--set", "selfplay.actors=0"]);
    assert!(err.contains("selfplay.actors"), "{err}");
    let err = train_error("", &["--set", "run.device=tpu"]);
    assert!(
        err.contains("run.device") && err.contains("invalid device"),
        "{err}"
    );
    let err = train_error("[run\n", &[]);
    assert!(err.contains("not valid TOML"), "{err}");
    // Values far out of any run's range are refused by name, never a panic, an abort or
    // a process that spawns threads until the system has none left.
    for (set, key) in [
        ("run.minutes=1e300", "run.minutes"),
        ("run.minutes=1.7e17", "run.minutes"),
        ("selfplay.actors=4000000000", "selfplay.actors"),
        ("learner.batch=100000000", "learner.batch"),
        ("network.blocks=100000", "blocks = 100000"),
        ("network.channels=1000000", "channels = 1000000"),
        ("gate.parallel_games=100000000", "gate.parallel_games"),
        ("selfplay.actor_threads=100000", "selfplay.actor_threads"),
        ("run.torch_threads=5000", "run.torch_threads"),
    ] {
        let err = train_error("", &["--set", set]);
        assert!(err.contains(key), "{set}: {err}");
    }
}

#[test]
fn shipped_configs_are_valid() {
    for entry in std::fs::read_dir(repo_root().join("configs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            shogi_run::RunConfig::load(&path, &[])
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// Scale-out: one process runs the learner and the gate, another (as on a second machine
/// sharing the directory) runs self-play with `selfplay --follow`; they coordinate only
/// through the run directory and both stop at the run's step budget.
#[test]
fn separate_selfplay_and_learner_processes_share_one_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let run = RunDir::new(&dir);
    let learner = Command::new(BIN)
        .arg("train")
        .arg(smoke_config())
        .args(["--set", &format!("run.dir={:?}", dir.display().to_string())])
        .args(["--roles", "learn,gate", "--set", "run.status_every_secs=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while !run.config_file().is_file() || run.best().ok().flatten().is_none() {
        assert!(began.elapsed() < Duration::from_secs(60), "run not created");
        std::thread::sleep(Duration::from_millis(50));
    }
    // One generation for the whole run, as on a GPU where a generation of thousands of
    // games outlasts the status lines: the batch fill must be reported all the same.
    let actors = Command::new(BIN)
        .args(["selfplay", "--follow"])
        .arg(&dir)
        .args(["--set", "run.status_every_secs=1"])
        .args(["--set", "selfplay.games_per_generation=1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let learner = learner.wait_with_output().unwrap();
    let actors = actors.wait_with_output().unwrap();
    for (what, out) in [("learner", &learner), ("selfplay", &actors)] {
        assert!(
            out.status.success(),
            "{what}:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("step budget reached"),
            "{what} did not stop at the step budget"
        );
    }
    // The learner trained on chunks only the other process wrote, under its own tag.
    let chunks: Vec<String> = std::fs::read_dir(run.replay())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".szgr"))
        .collect();
    assert!(!chunks.is_empty());
    assert!(
        chunks.iter().all(|n| n.starts_with("selfplay-")),
        "{chunks:?}"
    );
    assert!(run.accepted_checkpoints().unwrap().len() >= 2);
    assert!(run.root().join("selfplay.log").is_file());
    let log = std::fs::read_to_string(run.root().join("selfplay.log")).unwrap();
    let fills: Vec<f64> = log
        .lines()
        .filter_map(|l| {
            l.split("batch fill ")
                .nth(1)?
                .split('%')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    // Every line but the last is printed while the one generation is still running.
    assert!(fills.len() >= 2, "{log}");
    assert!(
        fills[..fills.len() - 1].iter().any(|&f| f > 0.0),
        "the batch fill stayed at 0% while self-play ran: {fills:?}"
    );
    assert!(run.root().join("learn+gate.log").is_file());
    assert_consistent(&run);
    // One learner per run: a second one is refused while the first holds the run.
    let held = run.lock_role("learner").unwrap();
    let out = Command::new(BIN)
        .args(["learn", "--follow"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("another learner is working on this run"),
        "{stderr}"
    );
    drop(held);
    // A directory that is not a run is refused with a clear error.
    let out = Command::new(BIN)
        .args(["gate", "--follow"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a run directory"));
}

/// `train configs/tai.toml` shrunk to seconds: a tiny network, short games, small
/// batches; `extra` adds `--set` overrides.
fn tai_train(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("train")
        .arg(repo_root().join("configs/tai.toml"))
        .args(["--set", &format!("run.dir={:?}", dir.display().to_string())])
        .args(["--set", "run.minutes=3", "--set", "run.device=\"cpu\""])
        .args(["--set", "network.blocks=1", "--set", "network.channels=8"])
        .args([
            "--set",
            "selfplay.actors=4",
            "--set",
            "selfplay.simulations=4",
        ])
        .args(["--set", "selfplay.gumbel_considered=4"])
        .args(["--set", "selfplay.games_per_generation=4"])
        .args([
            "--set",
            "learner.batch=8",
            "--set",
            "learner.steps_per_candidate=5",
        ]);
    for e in extra {
        cmd.args(["--set", e]);
    }
    cmd.output().unwrap()
}

/// Tai shogi through the same `train` command: self-play, learner and candidates with a
/// tiny network and short games (the gate is off for tai: every candidate is accepted),
/// with tai's exchange planes, the end test of every expanded child, the root's gain in
/// self-play and its safety at play time.
#[test]
fn tai_shogi_runs_through_the_same_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = tai_train(
        &dir,
        &[
            "run.max_steps=10",
            "game.max_plies=12",
            "learner.min_positions=40",
            "game.tai.lion_dog=\"q3\"",
            "network.features=\"exchanges\"",
            "selfplay.terminal_check=true",
            "selfplay.gumbel_gain=2.0",
            "play.gumbel_safety=2.0",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "train failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("step budget reached"), "{stdout}");
    let run = RunDir::new(&dir);
    let accepted = run.accepted_checkpoints().unwrap();
    assert!(accepted.len() >= 2, "accepted: {accepted:?}\n{stderr}");
    let tai = Expected::for_layout(
        &shogi_registry::layout_with(
            shogi_game::GameKind::Tai,
            shogi_features::FeatureSet::Exchanges,
        )
        .unwrap(),
    );
    for (_, path) in &accepted {
        shogi_model::load_checkpoint(path, &tai, shogi_model::tch::Device::Cpu)
            .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    }
    let (games, skipped) = shogi_records::read_chunk_dir(&run.replay()).unwrap();
    assert!(skipped.is_empty() && !games.is_empty());
    for g in &games {
        // The records carry the rule options they were played under (the Q3 lion dog).
        assert_eq!(g.impasse, 8);
        <shogi_tai::TaiGame as shogi_registry::RecordGame>::replay_each(g, |_, _| {}).unwrap();
    }
    // The arena plays tai shogi: the newest network, searched as its run measures it,
    // against a random mover.
    let (_, newest) = accepted.last().unwrap();
    let games = tmp.path().join("games");
    let out = Command::new(BIN)
        .arg("match")
        .arg("--a")
        .arg(format!("checkpoint:{}", newest.display()))
        .args(["--b", "random", "--games", "2", "--simulations", "4"])
        .arg("--root-of")
        .arg(&dir)
        .args([
            "--max-plies",
            "10",
            "--parallel",
            "2",
            "--device",
            "cpu",
            "--out",
        ])
        .arg(&games)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("2 games in"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(games.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["variant"], "tai");
    assert!(games.join("game-0001.txt").exists());
}

/// The gate plays tai shogi candidates against the best like any other variant.
#[test]
fn tai_shogi_gate_plays_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = tai_train(
        &dir,
        &[
            "run.max_steps=5",
            "game.max_plies=8",
            "learner.min_positions=30",
            "gate.enabled=true",
            "gate.games=2",
            "gate.simulations=2",
            "gate.parallel_games=2",
            "gate.threshold=0.0",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "train failed:\n{stdout}\n{stderr}");
    let run = RunDir::new(&dir);
    let gated = run.accepted_checkpoints().unwrap();
    assert!(gated.len() >= 2, "{stderr}");
    let (_, cand) = gated.last().unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cand.join("gate.json")).unwrap()).unwrap();
    assert_eq!(report["variant"], "tai");
    assert_eq!(report["games"], 2, "{report}");
}

/// `network.features = "attacks"`: the run's networks read the attack planes, say so in
/// their manifests (and refuse to load as another set), play in the USI engine, which
/// reads the set from the manifest, and a resume with another set is refused by name.
#[test]
fn attack_planes_are_recorded_served_and_kept_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let attacks = [
        "--set",
        "network.features=\"attacks\"",
        "--set",
        "run.max_steps=10",
    ];
    let out = train(&dir, &attacks);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "train failed:\n{stderr}");
    let run = RunDir::new(&dir);
    let expected = Expected {
        features: Some(shogi_features::FeatureSet::Attacks),
        ..minishogi()
    };
    let accepted = run.accepted_checkpoints().unwrap();
    for (_, path) in &accepted {
        let (model, manifest) =
            shogi_model::load_checkpoint(path, &expected, shogi_model::tch::Device::Cpu)
                .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
        assert_eq!(manifest.meta.features, shogi_features::FeatureSet::Attacks);
        assert_eq!(model.config().input_planes, 62);
        let err = shogi_model::load_checkpoint(path, &minishogi(), shogi_model::tch::Device::Cpu)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("reads the attacks input planes, expected pieces"),
            "{err}"
        );
    }
    let mut usi = Command::new(BIN)
        .args(["usi", "--variant", "minishogi"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let script = format!(
        "usi\nsetoption name ModelPath value {}\nisready\nposition startpos\ngo nodes 16\nquit\n",
        dir.display()
    );
    use std::io::Write;
    usi.stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let transcript = String::from_utf8(usi.wait_with_output().unwrap().stdout).unwrap();
    assert!(
        transcript.contains("model loaded") && transcript.contains("bestmove "),
        "{transcript}"
    );
    assert!(!transcript.contains("error"), "{transcript}");
    let snapshot = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    let out = train(
        &dir,
        &[
            "--resume",
            "--set",
            "network.features=\"pieces\"",
            "--set",
            "run.max_steps=20",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the run's networks read the attacks input planes but the config asks for pieces (network.features)"),
        "{stderr}"
    );
    // Another architecture is refused the same way, naming the field and its key.
    let out = train(&dir, &["--resume", "--set", "learner.material_weight=1.0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("material_head: false vs true (learner.material_weight > 0)"),
        "{stderr}"
    );
    // A refused resume changes nothing: the run's config is the one it had.
    assert_eq!(
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        snapshot
    );
}

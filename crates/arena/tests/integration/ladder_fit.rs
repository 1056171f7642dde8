//! The ladder's Bradley-Terry fit (`scripts/bench/ladder_fit.py`, run by `ladder.sh`)
//! against ratings and intervals worked out by hand.
//!
//! With one virtual draw per pairing, a pairing of n games where A scores w wins and d
//! draws counts as n' = n + 1 games with score S = w + d/2 + 1/2. For two players the
//! maximum-likelihood difference is closed form: s = S / n', Elo = 400 log10(s / (1 - s)),
//! and its standard deviation is 1 / sqrt(I) with the Fisher information
//! I = k^2 n' s (1 - s), k = ln(10) / 400. For a chain anchor - B - C (no pairing closes
//! a cycle) each link is fitted on its own: r_B = Elo(B vs anchor), r_C = r_B +
//! Elo(C vs B), and var(r_C) = 1/I_1 + 1/I_2 (the inverse of [[I_1 + I_2, -I_2], [-I_2,
//! I_2]]).

use serde_json::Value;

/// Runs `ladder_fit.fit(players, pairs, anchor)` in the venv's python; returns the
/// ratings and standard deviations by player.
fn fit(players: &[&str], pairs: &[(&str, &str, u32, u32, u32)], anchor: &str) -> (Value, Value) {
    let pairs: Vec<Value> = pairs
        .iter()
        .map(|&(a, b, w, d, l)| serde_json::json!([a, b, w, d, l]))
        .collect();
    let input = serde_json::json!({"players": players, "pairs": pairs, "anchor": anchor});
    let script = "import json, sys\n\
                  sys.path.insert(0, sys.argv[1])\n\
                  import ladder_fit\n\
                  a = json.loads(sys.argv[2])\n\
                  r, sd = ladder_fit.fit(a['players'], [tuple(p) for p in a['pairs']], a['anchor'])\n\
                  print(json.dumps({'r': r, 'sd': sd}))\n";
    let dir = shogi_testkit::repo_root().join("scripts/bench");
    let input = input.to_string();
    let out = shogi_testkit::run_ok(
        shogi_testkit::python(),
        &[
            "-c".as_ref(),
            script.as_ref(),
            dir.as_os_str(),
            input.as_ref(),
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["r"].clone(), v["sd"].clone())
}

fn near(v: &Value, expected: f64, what: &str) {
    let got = v.as_f64().unwrap_or(f64::NAN);
    assert!(
        (got - expected).abs() < 0.01,
        "{what}: got {got}, expected {expected}"
    );
}

const K: f64 = std::f64::consts::LN_10 / 400.0;

#[test]
fn two_players_match_the_closed_form() {
    // B vs the anchor A: 3 wins, 2 draws, 1 loss (n = 6). n' = 7, S = 3 + 1 + 0.5 = 4.5,
    // s = 4.5 / 7 = 0.642857: Elo = 400 log10(0.642857 / 0.357143) = 400 log10(1.8)
    // = +102.11. I = k^2 * 7 * 0.642857 * 0.357143 = 3.3137e-5 * 1.607143 = 5.3256e-5,
    // sd = 137.03, so the 95% interval is 102.11 +- 268.58 = [-166.47, +370.69].
    let (r, sd) = fit(&["A", "B"], &[("B", "A", 3, 2, 1)], "A");
    near(&r["A"], 0.0, "anchor");
    near(&sd["A"], 0.0, "anchor sd");
    near(&r["B"], 400.0 * 1.8f64.log10(), "B");
    near(&r["B"], 102.109, "B by hand");
    near(&sd["B"], 137.030, "B sd by hand");
    let s: f64 = 4.5 / 7.0;
    near(&sd["B"], 1.0 / (K * K * 7.0 * s * (1.0 - s)).sqrt(), "B sd");
    near(
        &Value::from(r["B"].as_f64().unwrap() - 1.96 * sd["B"].as_f64().unwrap()),
        -166.47,
        "B low",
    );
    near(
        &Value::from(r["B"].as_f64().unwrap() + 1.96 * sd["B"].as_f64().unwrap()),
        370.69,
        "B high",
    );
    // The same pairing written from the anchor's side gives the same rating.
    let (r2, sd2) = fit(&["A", "B"], &[("A", "B", 1, 2, 3)], "A");
    near(&r2["B"], 102.109, "B, other side");
    near(&sd2["B"], 137.030, "B sd, other side");
}

#[test]
fn a_clean_sweep_stays_finite() {
    // 4-0-0: n' = 5, S = 4.5, s = 0.9: Elo = 400 log10(9) = +381.70;
    // I = k^2 * 5 * 0.09 = 1.4912e-5, sd = 258.96.
    let (r, sd) = fit(&["A", "B"], &[("B", "A", 4, 0, 0)], "A");
    near(&r["B"], 400.0 * 9f64.log10(), "B");
    near(&r["B"], 381.697, "B by hand");
    near(&sd["B"], 258.963, "B sd by hand");
    // And 0-0-4 mirrors it.
    let (r, _) = fit(&["A", "B"], &[("B", "A", 0, 0, 4)], "A");
    near(&r["B"], -381.697, "B swept");
}

#[test]
fn a_chain_of_three_adds_up() {
    // B vs anchor A: 3-2-1, as above: +102.11, I_1 = 5.3256e-5 (1/I_1 = 18777.3).
    // C vs B: 1-0-3 (n = 4): n' = 5, S = 1.5, s = 0.3: Elo = 400 log10(0.3 / 0.7)
    // = -147.19; I_2 = k^2 * 5 * 0.21 = 3.4794e-5 (1/I_2 = 28740.6).
    // r_C = 102.11 - 147.19 = -45.08; sd_C = sqrt(18777.3 + 28740.6) = 217.99.
    let (r, sd) = fit(
        &["A", "B", "C"],
        &[("B", "A", 3, 2, 1), ("C", "B", 1, 0, 3)],
        "A",
    );
    near(&r["B"], 102.109, "B");
    near(&sd["B"], 137.030, "B sd");
    near(
        &r["C"],
        400.0 * 1.8f64.log10() + 400.0 * (3.0f64 / 7.0).log10(),
        "C",
    );
    near(&r["C"], -45.082, "C by hand");
    near(&sd["C"], 217.987, "C sd by hand");
    let (s1, s2): (f64, f64) = (4.5 / 7.0, 0.3);
    let var = 1.0 / (K * K * 7.0 * s1 * (1.0 - s1)) + 1.0 / (K * K * 5.0 * s2 * (1.0 - s2));
    near(&sd["C"], var.sqrt(), "C sd");
    // The anchor may be any player: with C fixed, A sits at +45.08.
    let (r, _) = fit(
        &["A", "B", "C"],
        &[("B", "A", 3, 2, 1), ("C", "B", 1, 0, 3)],
        "C",
    );
    near(&r["A"], 45.082, "A above C");
}

/// Writes `RUN/proof/DIR/curve.json` with one point: the network at `step` against
/// `opponent` with A's wins, draws and losses.
fn write_curve(run: &std::path::Path, dir: &str, opponent: &str, step: u64, wdl: (u32, u32, u32)) {
    let dir = run.join("proof").join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (wins, draws, losses) = wdl;
    let curve = serde_json::json!({
        "opponent": opponent,
        "points": [{"checkpoint": format!("step-{step:08}"), "step": step, "minutes": 30.0,
                    "wins": wins, "draws": draws, "losses": losses}],
    });
    std::fs::write(dir.join("curve.json"), curve.to_string()).unwrap();
}

/// Runs `curve_ladder.py RUN`; its output and exit status.
fn curve_ladder(run: &std::path::Path) -> std::process::Output {
    std::process::Command::new(shogi_testkit::python())
        .arg(shogi_testkit::repo_root().join("scripts/bench/curve_ladder.py"))
        .arg(run)
        .output()
        .unwrap()
}

#[test]
fn a_run_s_curves_join_the_ladder_in_one_fit() {
    let run = tempfile::tempdir().unwrap();
    let run = run.path();
    // The plain search at step 100 against depth 1: 3-2-1 (+102.11, as above); the play
    // search at step 100 against depth 2 only, which a curve alone cannot place.
    write_curve(
        run,
        "curve-alphabeta-depth-1-plain",
        "alphabeta:depth=1",
        100,
        (3, 2, 1),
    );
    write_curve(
        run,
        "curve-alphabeta-depth-2",
        "alphabeta:depth=2",
        100,
        (3, 2, 1),
    );
    let refused = curve_ladder(run);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("alphabeta:depth=1 | alphabeta:depth=2"),
        "{why}"
    );

    // ladder.sh's directory: depth 2 against depth 1, 1-0-3 (-147.19 for depth 2), and
    // its network (the run's best, step 200) against depth 2, 4-0-0 (+381.70 above it).
    let ladder = run.join("ladder");
    for (name, (w, d, l)) in [("rung", (1, 0, 3)), ("net", (4, 0, 0))] {
        std::fs::create_dir_all(ladder.join(name)).unwrap();
        let summary = serde_json::json!({"total": {"wins": w, "draws": d, "losses": l}});
        std::fs::write(ladder.join(name).join("summary.json"), summary.to_string()).unwrap();
    }
    std::fs::write(
        ladder.join("pairs.tsv"),
        "net\talphabeta:depth=2\tnet\nalphabeta:depth=2\talphabeta:depth=1\trung\n",
    )
    .unwrap();
    std::fs::write(run.join("BEST"), "accepted/step-00000200\n").unwrap();
    let out = curve_ladder(run);
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("    100       30"), "{table}");
    let fitted: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("proof/curve-ladder.json")).unwrap(),
    )
    .unwrap();
    let elo = |player: &str| fitted["ratings"][player]["elo"].clone();
    near(&elo("alphabeta:depth=1"), 0.0, "anchor");
    near(&elo("step 100 plain"), 102.109, "plain search at 100");
    near(&elo("alphabeta:depth=2"), -147.190, "depth 2");
    near(&elo("step 100"), -147.190 + 102.109, "play search at 100");
    near(
        &elo("step 200"),
        -147.190 + 381.697,
        "the best network, from the ladder",
    );
}

/// `curve_plot.py` draws each curve of a run as a line of its points' scores (wins and
/// half the draws) against the learner step and against the minutes, and refuses a run
/// without curves.
#[test]
fn a_run_s_curves_are_drawn_as_lines_of_their_scores() {
    let plot = |runs: &[&std::path::Path], out: &std::path::Path| {
        std::process::Command::new(shogi_testkit::python())
            .arg(shogi_testkit::repo_root().join("scripts/bench/curve_plot.py"))
            .args(runs)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let run = tempfile::tempdir().unwrap();
    let out = run.path().join("curves.svg");
    let refused = plot(&[run.path()], &out);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("has no curve"));

    let dir = run.path().join("proof/curve-alphabeta-depth-2-plain");
    std::fs::create_dir_all(&dir).unwrap();
    let curve = serde_json::json!({
        "opponent": "alphabeta:depth=2",
        "points": [
            {"step": 2000, "minutes": 20.0, "wins": 10, "draws": 0, "losses": 0},
            {"step": 1000, "minutes": 10.0, "wins": 1, "draws": 2, "losses": 7},
        ],
    });
    std::fs::write(dir.join("curve.json"), curve.to_string()).unwrap();
    let drawn = plot(&[run.path()], &out);
    assert!(drawn.status.success(), "{drawn:?}");
    let svg = std::fs::read_to_string(&out).unwrap();
    // One line a panel, its points in step order; a score of 1 at the plot's top edge
    // (y 30) and of 0.2 at 80% of its height down (30 + 0.8 x 230).
    let lines: Vec<&str> = svg.lines().filter(|l| l.starts_with("<polyline")).collect();
    assert_eq!(lines.len(), 2, "{svg}");
    for line in &lines {
        let points = line.split('"').nth(1).unwrap();
        let ys: Vec<f64> = points
            .split(' ')
            .map(|p| p.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(ys, [214.0, 30.0], "{line}");
    }
    assert_eq!(svg.matches("<circle").count(), 4);
    let name = run
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        svg.contains(&format!("{name}: alphabeta:depth=2, plain")),
        "{svg}"
    );
}

//! `shogi-zero selfplay` then `shogi-zero learn` end to end: a candidate appears.

fn shogi_zero(args: &[&str]) -> String {
    let out = shogi_testkit::run_ok(env!("CARGO_BIN_EXE_shogi-zero"), args);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn selfplay_then_learn_writes_a_candidate() {
    let tmp = tempfile::tempdir().unwrap();
    let replay = tmp.path().join("R");
    let run = tmp.path().join("RUN");
    let (r, g) = (replay.to_str().unwrap(), run.to_str().unwrap());
    shogi_zero(&[
        "selfplay",
        "--uniform",
        "--variant",
        "minishogi",
        "--games",
        "4",
        "--simulations",
        "8",
        "--max-plies",
        "60",
        "--out",
        r,
    ]);
    let text = shogi_zero(&[
        "learn",
        "--replay",
        r,
        "--run",
        g,
        "--steps",
        "5",
        "--export-every",
        "5",
        "--blocks",
        "1",
        "--channels",
        "8",
        "--device",
        "cpu",
    ]);
    assert!(text.contains("steps: 5"), "{text}");
    let candidates: Vec<_> = std::fs::read_dir(run.join("candidates"))
        .unwrap()
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(candidates.len(), 1, "{text}");
    assert!(candidates[0].path().join("manifest.json").exists());
}

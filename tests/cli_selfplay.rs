//! End-to-end: `shogi-zero selfplay` writes replay chunks that read back and replay.

use std::process::Command;

fn selfplay(extra: &[&str], out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args([
            "selfplay",
            "--variant",
            "minishogi",
            "--games",
            "3",
            "--actors",
            "2",
        ])
        .args(["--simulations", "8", "--max-plies", "60", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn selfplay_with_a_fresh_network_writes_replayable_games() {
    let dir = tempfile::tempdir().unwrap();
    let out = selfplay(
        &["--blocks", "1", "--channels", "8", "--device", "cpu"],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("games 3 "), "{stdout}");
    let (games, skipped) = shogi_records::read_chunk_dir(dir.path()).unwrap();
    assert!(skipped.is_empty());
    assert_eq!(games.len(), 3);
    for g in &games {
        shogi_registry::export::replay(g).unwrap();
    }
}

#[test]
fn selfplay_with_the_uniform_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    let out = selfplay(&["--uniform"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        shogi_records::read_chunk_dir(dir.path()).unwrap().0.len(),
        3
    );
}

#[test]
fn a_missing_checkpoint_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = selfplay(&["--checkpoint", "/nonexistent/ckpt"], dir.path());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/ckpt"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn tai_shogi_selfplay_writes_games_that_replay() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args([
            "selfplay",
            "--variant",
            "tai",
            "--games",
            "2",
            "--actors",
            "2",
        ])
        .args(["--simulations", "8", "--max-plies", "12", "--blocks", "1"])
        .args([
            "--channels",
            "8",
            "--device",
            "cpu",
            "--adjudicate",
            "2",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(" adjudications "), "{stdout}");
    let (games, skipped) = shogi_records::read_chunk_dir(dir.path()).unwrap();
    assert!(skipped.is_empty());
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g.variant, "tai");
        assert_eq!(g.moves.len(), 12);
        let mut searched = 0;
        let end = <shogi_tai::TaiGame as shogi_registry::RecordGame>::replay_each(g, |_, m| {
            searched += usize::from(!m.searched.is_empty());
        })
        .unwrap();
        assert_eq!(searched, 12, "every move was searched");
        // At the cap, a lead of 2 material points wins (--adjudicate 2).
        use shogi_game::{Color, EndReason, Game};
        let rules_end = end.outcome().expect("over at the cap");
        assert_eq!(rules_end.reason, EndReason::MaxPlies);
        let material = |c| shogi_tai::material::material_points(end.position(), c);
        let (black, white) = (material(Color::Black), material(Color::White));
        let expected = match (black >= white + 2, white >= black + 2) {
            (true, _) => (Some(Color::Black), EndReason::Adjudication),
            (_, true) => (Some(Color::White), EndReason::Adjudication),
            _ => (None, EndReason::MaxPlies),
        };
        assert_eq!(
            (g.outcome.winner, g.outcome.reason),
            expected,
            "{black} to {white}"
        );
    }
    // `export` replays and writes tai games as text.
    let text = dir.path().join("text");
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .arg("export")
        .arg(dir.path())
        .arg("--out")
        .arg(&text)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<_> = std::fs::read_dir(&text).unwrap().collect();
    assert_eq!(files.len(), 2);
}

#[test]
fn tai_perft_and_the_usi_engine_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["perft", "--variant", "tai", "--depth", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nodes 479"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
        .args(["usi", "--variant", "tai"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"usi\nisready\nposition startpos\ngo nodes 8\nquit\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("default tai var tai"), "{stdout}");
    let best = stdout
        .lines()
        .find_map(|l| l.strip_prefix("bestmove "))
        .expect("a bestmove");
    let game = shogi_tai::TaiGame::startpos(shogi_tai::TaiRules::default());
    assert!(
        shogi_game::Game::parse_move(&game, best).is_some(),
        "{best}"
    );
}

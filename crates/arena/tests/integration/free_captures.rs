//! `scripts/bench/free_captures.py` (the hanging-piece count of a run's games) on games
//! whose free captures are known by hand.

/// Runs the script on `path`; its stdout.
fn run(path: &std::path::Path) -> String {
    let script = shogi_testkit::repo_root().join("scripts/bench/free_captures.py");
    let out = shogi_testkit::run_ok(
        shogi_testkit::python(),
        &[script.as_os_str(), path.as_os_str()],
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes each `(sfen, moves)` as a game record `gK.usi` in `dir`.
fn write_games<'a>(dir: &std::path::Path, games: impl IntoIterator<Item = (&'a str, &'a str)>) {
    for (k, (sfen, moves)) in games.into_iter().enumerate() {
        let line = format!("position sfen {sfen} moves {moves}\n");
        std::fs::write(dir.join(format!("g{k}.usi")), line).unwrap();
    }
}

// Black's rook on 5h and White's lone pawn on 5e: 5h5e takes it and no white piece can
// take back. With a white gold on 5d the same capture is recaptured: not free.
const HANGING: &str = "4k4/9/9/9/4p4/9/9/4R4/4K4 b - 1";
const DEFENDED: &str = "4k4/9/9/4g4/4p4/9/9/4R4/4K4 b - 1";

#[test]
fn free_captures_are_counted_offered_and_taken() {
    let dir = tempfile::tempdir().unwrap();
    let games = [
        // Takes it (then White, with nothing to take, moves its king).
        (HANGING, "5h5e 5a4a"),
        // Leaves it.
        (HANGING, "5i4i"),
        // Its only capture is recaptured.
        (DEFENDED, "5h5e"),
    ];
    write_games(dir.path(), games.iter().copied());
    let out = run(dir.path());
    assert!(
        out.contains(
            "(3 games): 4 positions; a free capture in 2 (50.0%), one taken in 1 (50.0%);"
        ),
        "{out}"
    );

    // A match's summary.json is split by player: A (Black here) took, B had none.
    let summary = serde_json::json!({"games": [
        {"a_black": true, "start_sfen": HANGING, "moves": ["5h5e", "5a4a"]},
    ]});
    let path = dir.path().join("summary.json");
    std::fs::write(&path, summary.to_string()).unwrap();
    let out = run(&path);
    assert!(
        out.contains("A's moves: 1 positions; a free capture in 1 (100.0%), one taken in 1"),
        "{out}"
    );
    assert!(
        out.contains("B's moves: 1 positions; a free capture in 0 (0.0%)"),
        "{out}"
    );
}

// White's pawn on 5d attacks Black's rook on 5e and nothing defends it.
const ROOK_ATTACKED: &str = "4k4/9/9/4p4/4R4/9/9/9/4K4 b - 1";

/// A threat to a piece worth a lance or more is answered by moving it away or by taking
/// the attacker (worth less, but then nothing is left en prise), not by a king move.
#[test]
fn threats_to_the_movers_pieces_are_counted_and_answered() {
    let dir = tempfile::tempdir().unwrap();
    let games = ["5e4e", "5e5d", "5i4i"].map(|moves| (ROOK_ATTACKED, moves));
    write_games(dir.path(), games);
    let out = run(dir.path());
    assert!(
        out.contains(
            "a piece of the mover's (lance or more) threatened in 3 (100.0%), answered in 2 (66.7%)"
        ),
        "{out}"
    );
    // A pawn attacked is below the threshold: not counted.
    let dir = tempfile::tempdir().unwrap();
    let pawn = "4k4/9/9/4p4/4P4/9/9/9/4K4 b - 1";
    write_games(dir.path(), [(pawn, "5i4i")]);
    assert!(run(dir.path()).contains("threatened in 0 (0.0%)"));
}

//! Robustness: thousands of random, malformed and hostile lines never crash the engine,
//! and it still answers `isready`, `usi` and a real search afterwards.

use std::time::Duration;

use crate::common::Harness;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shogi_game::Game;
use shogi_rules::{ShogiGame, Variant};
use shogi_usi::Options;

const T: Duration = Duration::from_secs(60);

const COMMANDS: &[&str] = &[
    "usi",
    "isready",
    "usinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "gameover",
    "setoption",
    "debug",
    "register",
    "",
    "quit_",
    "POSITION",
    "bestmove",
    "info",
];

const FRAGMENTS: &[&str] = &[
    "startpos",
    "sfen",
    "moves",
    "7g7f",
    "3c3d",
    "8h2b+",
    "P*5e",
    "5a5b",
    "1a1a",
    "9i9a+",
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL",
    "b",
    "w",
    "-",
    "1",
    "0",
    "btime",
    "wtime",
    "binc",
    "winc",
    "byoyomi",
    "movetime",
    "nodes",
    "depth",
    "infinite",
    "ponder",
    "searchmoves",
    "mate",
    "name",
    "value",
    "USI_Hash",
    "Threads",
    "MultiPV",
    "UCI_Variant",
    "minishogi",
    "shogi",
    "ModelPath",
    "/nonexistent/model",
    "TreeBatch",
    "HalfPrecision",
    "NetBatching",
    "shared",
    "Simulations",
    "ResignValue",
    "MaxMovesToDraw",
    "Draw_Ply",
    "TwoFoldDraws",
    "Contempt",
    "LeafExchange",
    "RunSearch",
    "GumbelRoot",
    "GumbelCaptures",
    "GumbelSafety",
    "GumbelGain",
    "GumbelCScale",
    "LeafMateNodes",
    "ByoyomiMargin",
    "USI_Ponder",
    "true",
    "false",
    "win",
    "lose",
    "draw",
    "-1",
    "18446744073709551616",
    "99999999999999999999999999",
    "1e9",
    "NaN",
    "rbsgk/4p/5/P4/KGSBR",
    "9/9/9/9/4k4/9/9/9/K8",
    "RBG",
    "2P",
    "100P",
    "+",
    "*",
];

/// Bytes that are not text: control characters, invalid UTF-8, lone CRs.
fn noise(rng: &mut StdRng) -> Vec<u8> {
    let n = rng.random_range(0..80);
    (0..n)
        .map(|_| match rng.random_range(0..4) {
            0 => rng.random_range(0x80..=0xff),
            1 => rng.random_range(0..0x20),
            _ => rng.random_range(0x20..0x7f),
        })
        .filter(|&b| b != b'\n')
        .collect()
}

fn random_line(rng: &mut StdRng) -> Vec<u8> {
    match rng.random_range(0..10) {
        0 => noise(rng),
        1 => {
            // A truncated valid command.
            let full = "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 7g7f 3c3d 8h2b+";
            full.as_bytes()[..rng.random_range(0..full.len())].to_vec()
        }
        2 => {
            // Go with random (often absurd) limits; searches are stopped by the next line.
            let mut l = String::from("go");
            for _ in 0..rng.random_range(0..4) {
                let key = [
                    "btime", "wtime", "byoyomi", "binc", "movetime", "nodes", "depth", "mate",
                ][rng.random_range(0..8)];
                let val = ["0", "1", "50", "-5", "abc", "18446744073709551616", ""]
                    [rng.random_range(0..7)];
                l.push_str(&format!(" {key} {val}"));
            }
            l.into_bytes()
        }
        _ => {
            let mut l = String::from(COMMANDS[rng.random_range(0..COMMANDS.len())]);
            for _ in 0..rng.random_range(0..8) {
                l.push(' ');
                l.push_str(FRAGMENTS[rng.random_range(0..FRAGMENTS.len())]);
            }
            l.into_bytes()
        }
    }
}

#[test]
fn thousands_of_malformed_lines_never_break_the_engine() {
    let mut rng = StdRng::seed_from_u64(20261123);
    let mut h = Harness::start(Options {
        simulations: 16,
        ..Options::default()
    });
    h.ready();
    let mut sent = 0;
    for round in 0..40 {
        for _ in 0..100 {
            let mut line = random_line(&mut rng);
            line.push(b'\n');
            h.send_bytes(&line);
            sent += 1;
        }
        // The engine is still there and answers between the noise. The noise itself may
        // hold `isready` or `usi`, so synchronise on a line only this marker produces.
        h.send("stop");
        let marker = format!("sync-{round}");
        h.send(&marker);
        let expect = format!("info string unknown command: {marker}");
        h.until(T, |l| l == expect);
        h.ready();
    }
    assert_eq!(sent, 4000);
    // The full protocol still works: handshake, a position, a search with a legal move.
    h.send("stop");
    h.send("setoption name UCI_Variant value shogi");
    h.send("setoption name ResignValue value 0");
    h.handshake();
    h.ready();
    h.send("usinewgame");
    h.send("position startpos moves 7g7f");
    h.send("go nodes 32");
    let lines = h.bestmove(T);
    let best = &lines.last().unwrap().1;
    let mv = best.split_whitespace().nth(1).unwrap();
    let mut game = ShogiGame::startpos(Variant::Shogi);
    let first = game.position().parse_usi_move("7g7f").unwrap();
    game.play(first).unwrap();
    let reply = game.position().parse_usi_move(mv).unwrap_or_else(|e| {
        panic!(
            "{best}: {e}\n{:?}",
            &h.log[h.log.len().saturating_sub(30)..]
        )
    });
    game.play(reply)
        .unwrap_or_else(|e| panic!("{best} is not legal after 7g7f: {e}"));
    h.quit();
}

#[test]
fn an_unterminated_last_line_and_eof_end_the_engine_cleanly() {
    let mut h = Harness::start(Options::default());
    h.ready();
    // A line that is not UTF-8 is answered with a reason and changes nothing.
    h.send_bytes(b"position sfen \xff\xfe garbage\n");
    let said = h.ready_lines();
    assert!(
        said.iter().any(|(_, l)| l.starts_with("info string")),
        "no reason given for the bad position: {said:?}"
    );
    // The input's last line has no newline and the input ends there (a GUI that writes
    // `isready` and closes the pipe): the line is still answered, and the engine ends
    // without an error.
    h.send_bytes(b"isready");
    let lines = h.end_input(Duration::from_secs(30));
    assert_eq!(lines, ["readyok"], "the last, unterminated line");
}

//! `go mate` and the mate search on tsume positions. The mate lengths were checked with
//! cshogi's mate search (`Board.mate_move_in_1ply` / `mate_move(n)`: no mate in n-2, a
//! mate in n), except the one marked below, where cshogi finds no mate in 3 but the line
//! `G*2c 2b3a 5d5a` is a mate cshogi itself confirms move by move (its `mate_move` is not
//! exhaustive). The tests also prove minimality themselves: with the ply limit at n-2 the
//! exhaustive search must answer `NoMate`.

use std::time::{Duration, Instant};

use crate::common::Harness;
use shogi_rules::mate::{MateLimits, MateResult, is_mating_line, search_mate};
use shogi_rules::{Position, Variant};
use shogi_usi::Options;

const TSUME: &[(usize, &str)] = &[
    (1, "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"),
    (3, "5ks2/4n4/6RS1/7s1/9/9/9/9/K8 b RBG 1"),
    (3, "8l/5p2k/7l1/6+R2/8P/9/9/9/K8 b RS 1"),
    (3, "9/4b2k1/4R4/9/5S3/9/9/9/K8 b RG 1"),
    (3, "9/7k1/9/3g+R3S/9/9/9/9/K8 b BG 1"), // cshogi: no mate in 3 (see above)
    (5, "8k/9/4n4/9/9/9/9/9/K8 b B2GL 1"),
    (5, "8s/6kB1/9/7B1/9/9/9/9/K8 b R2GL 1"),
    (7, "5gk2/3p2s2/9/3+R5/5L3/9/9/9/K8 b B 1"),
    (7, "5kl2/5l3/3n5/5n3/5+R3/9/9/9/K8 b RBG 1"),
    (7, "5k3/9/6n2/9/4+R4/9/9/9/K8 b RP 1"),
    (7, "7k1/9/9/3S1gg+P1/9/9/9/9/K8 b RS 1"),
    (7, "8k/3n5/5l1sg/9/6+R2/9/9/9/K8 b SL 1"),
];

/// Checks, captures-only: the gold can only be dropped next to the king and taken.
const NO_MATE: &[&str] = &["8k/9/9/9/9/9/9/9/K8 b G 1", "4k4/9/9/9/9/9/9/9/4K4 b - 1"];

#[test]
fn solver_finds_mates_in_1_3_5_7() {
    for &(n, sfen) in TSUME {
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        let t = Instant::now();
        let (r, st) = search_mate(&pos, &MateLimits::default());
        let MateResult::Mate(line) = r else {
            panic!("{sfen}: expected mate in {n}, got {r:?}");
        };
        assert!(
            is_mating_line(&pos, &line),
            "{sfen}: not a mating line {line:?}"
        );
        assert!(
            line.len() >= n,
            "{sfen}: mate in {} is shorter than the known {n}",
            line.len()
        );
        eprintln!(
            "mate in {n}: line of {} plies, {} nodes, {:?}",
            line.len(),
            st.nodes,
            t.elapsed()
        );
        // Exactly n: no mate within n - 2 plies, a mate of length n within n.
        if n > 1 {
            let shorter = MateLimits {
                max_plies: n as u32 - 2,
                ..MateLimits::default()
            };
            assert_eq!(search_mate(&pos, &shorter).0, MateResult::NoMate, "{sfen}");
        }
        let exact = MateLimits {
            max_plies: n as u32,
            ..MateLimits::default()
        };
        match search_mate(&pos, &exact).0 {
            MateResult::Mate(l) => {
                assert_eq!(l.len(), n, "{sfen}");
                assert!(is_mating_line(&pos, &l), "{sfen}");
            }
            other => panic!("{sfen}: {other:?} within {n} plies"),
        }
    }
}

#[test]
fn solver_says_nomate() {
    for sfen in NO_MATE {
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        assert_eq!(
            search_mate(&pos, &MateLimits::default()).0,
            MateResult::NoMate,
            "{sfen}"
        );
    }
}

/// A bare king in the open against rook, bishop and gold in hand: checks everywhere, and
/// no proof or disproof within seconds (the `go mate` test below stops it after 100 ms).
const HARD: &str = "9/9/9/9/4k4/9/9/9/K8 b RBG 1";

#[test]
fn solver_times_out_at_its_deadline() {
    let pos = Position::from_sfen(Variant::Shogi, HARD).unwrap();
    let t = Instant::now();
    let limits = MateLimits {
        deadline: Some(t + Duration::from_millis(20)),
        max_nodes: usize::MAX,
        ..MateLimits::default()
    };
    let (r, st) = search_mate(&pos, &limits);
    let took = t.elapsed();
    assert_eq!(r, MateResult::Timeout, "{st:?}");
    // The deadline, not the node budget, ended it; generous bound for a loaded machine.
    // The attacker has checks, so the search really ran (the start position has none
    // and is answered `NoMate` before any deadline is looked at).
    assert!(st.expansions > 1, "{st:?}");
    assert!(took >= Duration::from_millis(20), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// Sends `position sfen SFEN` and `go`, then waits (up to a minute) for the `checkmate`
/// answer and returns it.
fn ask_mate(h: &mut Harness, sfen: &str, go: &str) -> String {
    h.send(&format!("position sfen {sfen}"));
    h.send(go);
    let lines = h.until(Duration::from_secs(60), |l| l.starts_with("checkmate"));
    lines.last().unwrap().1.clone()
}

#[test]
fn tsume_without_the_attackers_king_is_refused_never_nomate() {
    // A mate in 3 (cshogi, with a king added at 9i: no mate in 1, `mate_move(3)` = G*3b)
    // as GUIs send tsume problems: no black king. The engine needs both kings; it must say so, and must not
    // answer `nomate` ("this problem has no mate").
    let mut h = Harness::start(Options::default());
    h.ready();
    h.send("position sfen 7k1/8l/5G3/9/9/9/9/9/9 b GN 1");
    h.send("go mate 1000");
    let lines = h.until(Duration::from_secs(30), |l| l.starts_with("checkmate"));
    let all: Vec<&String> = lines.iter().map(|(_, l)| l).collect();
    assert_eq!(
        all.last().unwrap().as_str(),
        "checkmate notimplemented",
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|l| l.starts_with("info string error: go mate: positions without")),
        "{all:?}"
    );
    // The same problem with the attacker's king added is solved.
    let last = &ask_mate(&mut h, "7k1/8l/5G3/9/9/9/9/9/K8 b GN 1", "go mate 10000");
    assert!(
        last.starts_with("checkmate ") && last.split(' ').count() == 4,
        "{last}"
    );
    // Another broken position is not a tsume problem: `timeout` (nothing searched).
    h.send("position sfen 7k1/8l/5G3/9/9/9/9/9/K8 b GN");
    h.send("position sfen 9/9/9/9/9/9/9/9/9 x - 1");
    h.send("go mate 1000");
    let lines = h.until(Duration::from_secs(30), |l| l.starts_with("checkmate"));
    assert_eq!(lines.last().unwrap().1, "checkmate timeout");
    h.quit();
}

#[test]
fn go_mate_with_a_bad_value_answers_an_error_and_does_not_search() {
    let mut h = Harness::start(Options::default());
    h.ready();
    h.send(&format!("position sfen {HARD}"));
    for go in ["go mate abc", "go mate btime 100"] {
        h.send(go);
        // A search started here would run for seconds; `stop` would make it answer
        // `checkmate timeout` before `readyok`.
        h.send("stop");
        h.send("isready");
        let lines = h.until(Duration::from_secs(30), |l| l == "readyok");
        let all: Vec<&String> = lines.iter().map(|(_, l)| l).collect();
        assert!(
            all.iter().all(|l| !l.starts_with("checkmate")),
            "{go}: {all:?}"
        );
        assert!(
            all.iter()
                .any(|l| l.starts_with("info string error: go mate: bad value")),
            "{go}: {all:?}"
        );
    }
    // A number still works.
    assert_ne!(
        ask_mate(&mut h, TSUME[0].1, "go mate 10000"),
        "checkmate nomate"
    );
    h.quit();
}

#[test]
fn go_mate_answers_checkmate_lines() {
    let mut h = Harness::start(Options::default());
    h.ready();
    for &(_, sfen) in TSUME {
        let text = &ask_mate(&mut h, sfen, "go mate 10000");
        let moves: Vec<&str> = text.split_whitespace().skip(1).collect();
        assert!(
            !moves.is_empty() && moves[0] != "nomate" && moves[0] != "timeout",
            "{sfen}: {text}"
        );
        let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
        let mut p = pos.clone();
        let mut line = Vec::new();
        for m in moves {
            let mv = p.parse_usi_move(m).unwrap();
            line.push(mv);
            p.play(mv).unwrap();
        }
        assert!(is_mating_line(&pos, &line), "{sfen}: {text}");
    }
    for sfen in NO_MATE {
        let answer = ask_mate(&mut h, sfen, "go mate infinite");
        assert_eq!(answer, "checkmate nomate");
    }
    // A stopped mate search reports a timeout (this one runs for seconds).
    h.send(&format!("position sfen {HARD}"));
    h.send("go mate infinite");
    std::thread::sleep(Duration::from_millis(100));
    h.send("stop");
    let l = h.until(Duration::from_secs(10), |l| l.starts_with("checkmate"));
    assert_eq!(l.last().unwrap().1, "checkmate timeout");
    h.ready();
    h.quit();
}

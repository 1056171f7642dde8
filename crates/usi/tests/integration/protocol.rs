//! Golden transcripts and common command sequences, driven in-process.

use std::time::Duration;

use crate::common::Harness;
use shogi_game::Game;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};
use shogi_usi::Options;

const T: Duration = Duration::from_secs(60);

fn golden_handshake() -> Vec<String> {
    let text = format!(
        "id name shogi-zero {}
id author the shogi-zero authors
option name USI_Hash type spin default 256 min 1 max 65536
option name USI_Ponder type check default false
option name Threads type spin default {threads} min 1 max 256
option name TorchThreads type spin default 1 min 1 max 256
option name MultiPV type spin default 1 min 1 max 32
option name ModelPath type filename default <empty>
option name Device type string default auto
option name TreeBatch type spin default 8 min 1 max 1024
option name NetBatching type combo default auto var auto var per-thread var shared
option name HalfPrecision type check default true
option name Simulations type spin default 0 min 0 max 1000000000
option name ByoyomiMargin type spin default 100 min 0 max 60000
option name ResignValue type spin default 2 min 0 max 50
option name UCI_Variant type combo default shogi var shogi var minishogi
option name MaxMovesToDraw type spin default 0 min 0 max 100000
option name Draw_Ply type spin default 0 min 0 max 100000
option name TwoFoldDraws type check default true
option name Contempt type spin default 0 min -50 max 50
option name RunSearch type check default true
option name GumbelRoot type spin default 0 min 0 max 64
usiok",
        env!("CARGO_PKG_VERSION"),
        // The cores the engine may use.
        threads = Options::default().threads
    );
    text.lines().map(String::from).collect()
}

fn game_after(variant: Variant, sfen: Option<&str>, moves: &[&str]) -> ShogiGame {
    let pos = match sfen {
        Some(s) => Position::from_sfen(variant, s).unwrap(),
        None => Position::startpos(variant),
    };
    let mut g = ShogiGame::new(pos, GameRules::default());
    for m in moves {
        let mv = g.position().parse_usi_move(m).unwrap();
        g.play(mv).unwrap();
    }
    g
}

/// Checks the structure of a search transcript and returns the best move text.
fn check_search_lines(lines: &[(std::time::Instant, String)], game: &ShogiGame) -> String {
    let (last, infos) = lines.split_last().unwrap();
    assert!(!infos.is_empty(), "no info line before bestmove");
    for (_, l) in infos {
        assert!(l.starts_with("info "), "unexpected line {l:?}");
        if l.starts_with("info string") {
            continue;
        }
        let t: Vec<&str> = l.split_whitespace().collect();
        for key in ["depth", "seldepth", "nodes", "nps", "time", "score", "pv"] {
            assert!(t.contains(&key), "{key} missing in {l:?}");
        }
        let s = t.iter().position(|&x| x == "score").unwrap();
        assert!(matches!(t[s + 1], "cp" | "mate"), "{l:?}");
        t[s + 2].parse::<i64>().expect("score value is a number");
        // The pv is a legal line.
        let p = t.iter().position(|&x| x == "pv").unwrap();
        let mut g = game.clone();
        for m in &t[p + 1..] {
            let mv = g
                .position()
                .parse_usi_move(m)
                .unwrap_or_else(|e| panic!("pv move {m}: {e}"));
            g.play(mv).unwrap();
        }
    }
    let t: Vec<&str> = last.1.split_whitespace().collect();
    assert_eq!(t[0], "bestmove");
    let mv = t[1].to_string();
    game.position()
        .parse_usi_move(&mv)
        .unwrap_or_else(|e| panic!("bestmove {mv}: {e}"));
    if t.len() > 2 {
        assert_eq!(t[2], "ponder");
        let mut g = game.clone();
        g.play(g.position().parse_usi_move(&mv).unwrap()).unwrap();
        g.position()
            .parse_usi_move(t[3])
            .expect("ponder move legal after bestmove");
    }
    mv
}

/// The handshake is the golden transcript, with one line per play knob among its
/// options (declared from the knob's description: a `check` for a switch, else a `spin`
/// whose default is the play default in the option's units).
#[test]
fn handshake_matches_golden_transcript() {
    let mut h = Harness::start(Options::default());
    let mut handshake = h.handshake();
    let play = shogi_mcts::RootSettings::default();
    for knob in shogi_mcts::play_knobs() {
        let name = format!("option name {} type ", knob.usi_name());
        let at = handshake
            .iter()
            .position(|l| l.starts_with(&name))
            .unwrap_or_else(|| panic!("no option for {}", knob.key));
        let line = handshake.remove(at);
        let default = knob.get_at_play(&play).unwrap();
        let expected = match knob.kind {
            shogi_mcts::knobs::KnobKind::Switch => format!("check default {}", default != 0.0),
            _ => format!("spin default {} min ", default * knob.usi_scale()),
        };
        assert!(line[name.len()..].starts_with(&expected), "{line}");
    }
    assert_eq!(handshake, golden_handshake());
    h.send("isready");
    let got: Vec<String> = h
        .until(T, |l| l == "readyok")
        .into_iter()
        .map(|x| x.1)
        .collect();
    assert_eq!(got, vec!["readyok"]);
    h.quit();
}

#[test]
fn go_nodes_sequence_gives_info_then_legal_bestmove() {
    let mut h = Harness::start(Options::default());
    h.handshake();
    h.send("setoption name USI_Ponder value true");
    h.send("setoption name MultiPV value 3");
    h.ready();
    h.send("usinewgame");
    h.send("position startpos moves 7g7f 3c3d");
    h.send("go nodes 200");
    let lines = h.bestmove(T);
    let game = game_after(Variant::Shogi, None, &["7g7f", "3c3d"]);
    let mv = check_search_lines(&lines, &game);
    // MultiPV 3: the last info block carries multipv 1..3.
    let multi: Vec<&String> = lines
        .iter()
        .map(|x| &x.1)
        .filter(|l| l.contains(" multipv "))
        .collect();
    assert!(multi.iter().any(|l| l.contains(" multipv 3 ")), "{multi:?}");
    // The node count reaches the limit (root visits = simulations + 1).
    let last_info = &lines[lines.len() - 2].1;
    assert!(last_info.contains("nodes 201 "), "{last_info}");
    // Second move of the same game reuses the tree and still answers.
    h.send(&format!("position startpos moves 7g7f 3c3d {mv} 8c8d"));
    h.send("go btime 0 wtime 0 byoyomi 300");
    let lines = h.bestmove(T);
    let game = game_after(Variant::Shogi, None, &["7g7f", "3c3d", &mv, "8c8d"]);
    check_search_lines(&lines, &game);
    h.send("gameover win");
    h.ready();
    h.quit();
}

#[test]
fn bad_positions_are_reported_and_not_kept() {
    let mut h = Harness::start(Options::default());
    h.ready();
    for bad in [
        "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9 b - 1",
        "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1",
        "position startpos moves 7g7f 7g7f",
        "position startpos moves 1a1b",
        "position startpos moves P*5e",
        "position",
        "position foo",
    ] {
        h.send(bad);
        let l = h.until(T, |_| true);
        assert!(
            l[0].1.starts_with("info string error: position"),
            "{bad}: {:?}",
            l[0].1
        );
        // No broken position is kept: go answers at once with resign.
        h.send("go nodes 10");
        let l = h.bestmove(T);
        assert_eq!(l.last().unwrap().1, "bestmove resign", "{bad}");
        h.ready();
    }
    // A good position after the bad ones plays normally.
    h.send("position startpos moves 2g2f");
    h.send("go nodes 20");
    let lines = h.bestmove(T);
    check_search_lines(&lines, &game_after(Variant::Shogi, None, &["2g2f"]));
    h.quit();
}

#[test]
fn mated_side_resigns_and_declaration_wins() {
    let mut h = Harness::start(Options::default());
    h.ready();
    // White to move is checkmated (gold on 5b supported by the pawn on 5c).
    h.send("position sfen 4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1");
    h.send("go byoyomi 200");
    assert_eq!(h.bestmove(T).last().unwrap().1, "bestmove resign");
    // Black's king in the camp with ten pieces there and 30 points: declare.
    let sfen = "9/G3K4/PPPPPPPPP/9/9/9/9/9/4k4 b 2R2B 1";
    let g = ShogiGame::new(
        Position::from_sfen(Variant::Shogi, sfen).unwrap(),
        GameRules::default(),
    );
    assert!(g.can_declare_win());
    h.send(&format!("position sfen {sfen}"));
    h.send("go btime 1000 wtime 1000 byoyomi 200");
    assert_eq!(h.bestmove(T).last().unwrap().1, "bestmove win");
    h.quit();
}

#[test]
fn normal_search_plays_a_forced_mate() {
    let mut h = Harness::start(Options::default());
    h.ready();
    // Mate in 3 (verified with cshogi's mate search): the engine plays it and says so.
    let sfen = "8l/5p2k/7l1/6+R2/8P/9/9/9/K8 b RS 1";
    h.send(&format!("position sfen {sfen}"));
    h.send("go btime 0 wtime 0 byoyomi 1000");
    let lines = h.bestmove(T);
    let mate_info = lines
        .iter()
        .find(|l| l.1.contains("score mate"))
        .expect("score mate info");
    let t: Vec<&str> = mate_info.1.split_whitespace().collect();
    let pv_at = t.iter().position(|&x| x == "pv").unwrap();
    let pos = Position::from_sfen(Variant::Shogi, sfen).unwrap();
    let mut p = pos.clone();
    let mut line = Vec::new();
    for m in &t[pv_at + 1..] {
        let mv = p.parse_usi_move(m).unwrap();
        line.push(mv);
        p.play(mv).unwrap();
    }
    assert!(
        shogi_rules::mate::is_mating_line(&pos, &line),
        "{}",
        mate_info.1
    );
    let best = lines
        .last()
        .unwrap()
        .1
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(best, t[pv_at + 1]);
    h.quit();
}

#[test]
fn max_moves_to_draw_turns_a_mate_beyond_the_limit_into_a_draw() {
    // The mate in 3 of `normal_search_plays_a_forced_mate`, at move 101 of a game.
    let sfen = "8l/5p2k/7l1/6+R2/8P/9/9/9/K8 b RS 101";
    let search = |h: &mut Harness| {
        h.send(&format!("position sfen {sfen}"));
        h.send("go nodes 400");
        h.bestmove(T)
    };
    let mut h = Harness::start(Options::default());
    h.handshake();
    // Plies 101 and 102 are allowed, the mate needs 101..=103: a draw.
    h.send("setoption name MaxMovesToDraw value 102");
    h.ready();
    let lines = search(&mut h);
    assert!(
        !lines.iter().any(|l| l.1.contains("score mate")),
        "{lines:?}"
    );
    // The limit reaches the mate: it is found again (Draw_Ply is the same option).
    h.send("setoption name Draw_Ply value 103");
    let lines = search(&mut h);
    assert!(
        lines.iter().any(|l| l.1.contains("score mate 3")),
        "{lines:?}"
    );
    // 0 = no limit.
    h.send("setoption name MaxMovesToDraw value 0");
    let lines = search(&mut h);
    assert!(
        lines.iter().any(|l| l.1.contains("score mate")),
        "{lines:?}"
    );
    h.quit();
}

#[test]
fn minishogi_through_uci_variant() {
    let mut h = Harness::start(Options::default());
    h.handshake();
    h.send("setoption name UCI_Variant value minishogi");
    h.ready();
    h.send("usinewgame");
    h.send("position startpos moves 5d5c");
    h.send("go btime 1000 wtime 1000 byoyomi 100");
    let lines = h.bestmove(T);
    check_search_lines(&lines, &game_after(Variant::Minishogi, None, &["5d5c"]));
    // A 9x9 SFEN is rejected under minishogi.
    h.send("position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1");
    assert!(h.until(T, |_| true)[0].1.starts_with("info string error"));
    h.quit();
}

/// Tai shogi through the same engine: bracketed SFEN positions, moves as squares in path
/// order, a legal `bestmove` from a search, and malformed input answered, not fatal.
#[test]
fn tai_shogi_through_the_same_protocol_loop() {
    use shogi_game::Game;
    use shogi_tai::{TaiGame, TaiRules};
    let mut h = Harness::start_for::<TaiGame>(Options::default());
    let lines = h.handshake();
    assert!(
        lines
            .iter()
            .any(|l| l == "option name UCI_Variant type combo default tai var tai"),
        "{lines:?}"
    );
    h.ready();
    h.send("setoption name UCI_Variant value shogi");
    let bad = h.until(T, |l| l.starts_with("info string bad value"));
    assert!(bad.last().unwrap().1.contains("UCI_Variant"));
    // Black pushes the file-25 pawn; White searches.
    h.send("position startpos moves 25s25r");
    h.send("go nodes 32");
    let out = h.bestmove(T);
    let best = out
        .last()
        .unwrap()
        .1
        .strip_prefix("bestmove ")
        .unwrap()
        .to_string();
    let mut game = TaiGame::startpos(TaiRules::default());
    let opening = game.parse_move("25s25r").unwrap();
    game.play_unchecked(opening);
    assert!(
        game.parse_move(&best).is_some(),
        "{best} is not legal for White"
    );
    // The same from the SFEN of that position.
    h.send(&format!("position sfen {}", game.position().to_sfen()));
    h.send("go nodes 16");
    let best = h.bestmove(T).last().unwrap().1.clone();
    assert!(
        game.parse_move(best.strip_prefix("bestmove ").unwrap())
            .is_some()
    );
    // Tai shogi has no check, so no mate search: said, not guessed.
    h.send("go mate 1000");
    h.until(T, |l| l == "checkmate notimplemented");
    // An illegal move is reported and leaves no position.
    h.send("position startpos moves 25s25q");
    let err = h.until(T, |l| l.starts_with("info string error: position"));
    assert!(
        err.last().unwrap().1.contains("not a legal move"),
        "{err:?}"
    );
    h.send("go nodes 8");
    let out = h.bestmove(T);
    assert_eq!(out.last().unwrap().1, "bestmove resign");
    // No position, so nothing is known: never `nomate` ("this problem has no mate").
    h.send("go mate 100");
    h.until(T, |l| l == "checkmate timeout");
    h.quit();
}

/// Several search threads share one tree: a node limit is searched exactly (the last
/// `info` counts every simulation once), the tree is reused on the next move, and a
/// `go infinite` stops when told, on each of 1 to 3 threads.
#[test]
fn search_threads_share_one_tree() {
    for threads in [1, 2, 3] {
        let mut h = Harness::start(Options::default());
        h.send(&format!("setoption name Threads value {threads}"));
        h.ready();
        h.send("position startpos");
        h.send("go nodes 300");
        let lines = h.bestmove(T);
        let game = game_after(Variant::Shogi, None, &[]);
        let mv = check_search_lines(&lines, &game);
        let nodes = |lines: &[(std::time::Instant, String)]| -> u64 {
            let info = lines
                .iter()
                .rev()
                .find(|(_, l)| l.starts_with("info depth"))
                .expect("an info line");
            let t: Vec<&str> = info.1.split_whitespace().collect();
            t[t.iter().position(|&x| x == "nodes").unwrap() + 1]
                .parse()
                .unwrap()
        };
        // 300 simulations and the root's own evaluation.
        assert_eq!(nodes(&lines), 301, "{threads} threads: {lines:?}");
        h.send(&format!("position startpos moves {mv} 3c3d"));
        h.send("go nodes 200");
        let game = game_after(Variant::Shogi, None, &[&mv, "3c3d"]);
        check_search_lines(&h.bestmove(T), &game);
        h.send("go infinite");
        std::thread::sleep(Duration::from_millis(200));
        let stopped = h.send("stop");
        let lines = h.bestmove(T);
        let answered = lines.last().unwrap().0.duration_since(stopped);
        assert!(
            answered < Duration::from_secs(5),
            "{threads} threads: {answered:?}"
        );
        check_search_lines(&lines, &game);
        h.quit();
    }
}

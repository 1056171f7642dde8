//! The classical baseline player: mates, material, legality over random positions,
//! determinism, and matches in the arena's player vocabulary.

use std::sync::atomic::AtomicBool;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_arena::{MatchConfig, Openings, PlayerSpec, run_match};
use shogi_baseline::{AlphaBeta, AlphaBetaLimits};
use shogi_game::{Color, EndReason, Game, Outcome};
use shogi_rules::{GameRules, Move, Position, ShogiGame, Variant};

fn pos(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap()
}

fn depth(d: u32) -> AlphaBetaLimits {
    AlphaBetaLimits::depth(d)
}

fn mates_in_one(p: &Position, mv: Move) -> bool {
    p.is_legal(mv) && p.after(mv).is_checkmate()
}

/// Mate in 1 (the same positions as the MCTS tsume tests, both kings on the board).
const MATE_IN_1: [(&str, &str); 3] = [
    ("head gold", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"),
    ("promoting rook", "8k/6S2/p8/9/9/9/9/7R1/4K4 b - 1"),
    ("sliding rook drop", "7lk/7p1/9/9/9/9/9/9/4K4 b R 1"),
];

/// Mate in 3 (no mate in 1).
const MATE_IN_3: [(&str, &str); 3] = [
    ("rook takes gold", "6k2/9/6g2/9/6R2/9/9/9/4K4 b PS 1"),
    ("dragon slide", "7k1/9/4+R4/7N1/9/9/9/9/4K4 b RS 1"),
    ("rook drop", "8k/4+B1+Prl/6s2/9/9/9/9/9/4K4 b R 1"),
];

#[test]
fn finds_mate_in_one() {
    for (name, sfen) in MATE_IN_1 {
        let p = pos(sfen);
        for d in 1..=3 {
            let r = AlphaBeta::new(0).search_position(&p, &depth(d));
            let mv = r.best_move.unwrap();
            assert!(mates_in_one(&p, mv), "{name} depth {d}: {mv} does not mate");
            assert_eq!(r.mate_in(), Some(1), "{name} depth {d}: {r:?}");
        }
    }
}

#[test]
fn finds_mate_in_three() {
    for (name, sfen) in MATE_IN_3 {
        let p = pos(sfen);
        assert!(p.mate_in_one().is_none(), "{name}");
        let r = AlphaBeta::new(0).search_position(&p, &depth(3));
        assert_eq!(r.mate_in(), Some(3), "{name}: {r:?}");
        // The move forces mate: every reply leaves a mate in 1.
        let mv = r.best_move.unwrap();
        let after = p.after(mv);
        let replies = after.legal_moves();
        assert!(!replies.is_empty(), "{name}");
        for &reply in replies.iter() {
            assert!(
                after.after(reply).mate_in_one().is_some(),
                "{name}: after {mv} {reply} there is no mate"
            );
        }
        // The mated side sees it too: after the first move it is mated in 2 plies.
        let r2 = AlphaBeta::new(0).search_position(&after, &depth(3));
        assert_eq!(r2.mate_in(), Some(-2), "{name}: {r2:?}");
    }
}

#[test]
fn a_side_without_a_king_is_refused_by_the_rules_not_the_search() {
    // The rules core requires both kings; tsume positions without the attacker's king
    // cannot reach the search at all.
    assert!(Position::from_sfen(Variant::Shogi, "7k1/8l/5G3/9/9/9/9/9/9 b GN 1").is_err());
}

#[test]
fn prefers_the_shorter_mate() {
    // Mate in 1 is available; deeper searches must not trade it for a longer one.
    let p = pos("4k4/9/4P4/9/9/9/9/9/4K4 b GR 1");
    let r = AlphaBeta::new(0).search_position(&p, &depth(4));
    assert_eq!(r.mate_in(), Some(1), "{r:?}");
    assert!(mates_in_one(&p, r.best_move.unwrap()));
}

#[test]
fn takes_a_hanging_piece() {
    // The white rook on 2e hangs to the bishop on 5h.
    let cases = [
        ("4k4/9/9/9/7r1/9/9/4B4/4K4 b - 1", "5h2e"),
        // A white bishop hangs to a pawn; the side to move is White in the second case.
        ("4k4/9/9/9/9/4b4/4P4/9/4K4 b - 1", "5g5f"),
        ("4k4/9/9/4p4/4R4/9/9/9/4K4 w - 1", "5d5e"),
    ];
    for (sfen, expected) in cases {
        let p = pos(sfen);
        for d in 1..=3 {
            let r = AlphaBeta::new(0).search_position(&p, &depth(d));
            assert_eq!(
                r.best_move.unwrap().to_string(),
                expected,
                "{sfen} depth {d}: {r:?}"
            );
            assert!(r.score > 500, "{sfen} depth {d}: {r:?}");
        }
    }
}

#[test]
fn quiescence_sees_a_defended_piece() {
    // The pawn on 5d is defended by the gold on 5c: taking it with the rook loses the
    // rook. Depth 1 (quiescence only after the capture) must see the recapture.
    let p = pos("4k4/9/4g4/4p4/9/9/9/4R4/4K4 b - 1");
    let r = AlphaBeta::new(0).search_position(&p, &depth(1));
    assert_ne!(r.best_move.unwrap().to_string(), "5h5d", "{r:?}");
}

/// Random positions of both variants from random playouts.
fn random_games(variant: Variant, n: usize, seed: u64) -> Vec<ShogiGame> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut g = ShogiGame::new(
            Position::startpos(variant),
            GameRules {
                max_plies: 0,
                ..GameRules::default()
            },
        );
        let plies = rng.random_range(0..120);
        shogi_game::play_picked_moves(&mut g, plies, |n| rng.random_range(0..n));
        if g.outcome().is_none() {
            out.push(g);
        }
    }
    out
}

#[test]
fn never_plays_an_illegal_move_on_random_positions() {
    let limits = AlphaBetaLimits {
        depth: Some(3),
        nodes: Some(400),
        movetime: None,
    };
    let mut ab = AlphaBeta::new(7);
    for variant in [Variant::Shogi, Variant::Minishogi] {
        for (i, g) in random_games(variant, 150, 3).into_iter().enumerate() {
            let r = ab.search(&g, &limits);
            let mv = r
                .best_move
                .expect("a position with legal moves gets a move");
            assert!(
                g.position().is_legal(mv),
                "{variant:?} #{i}: {mv} is illegal in {}",
                g.position().to_sfen()
            );
            // The node limit ends the search from depth 2 on; depth 1 always completes.
            assert!(r.depth >= 1, "{r:?}");
            assert!(r.nodes <= 401 || r.depth == 1, "{r:?}");
        }
    }
}

#[test]
fn deterministic_for_a_seed_and_the_node_count_is_the_limit() {
    let g = &random_games(Variant::Shogi, 1, 9)[0];
    let limits = AlphaBetaLimits {
        depth: None,
        nodes: Some(3000),
        movetime: None,
    };
    let a = AlphaBeta::new(5).search(g, &limits);
    let b = AlphaBeta::new(5).search(g, &limits);
    assert_eq!(a, b);
    assert!(a.nodes <= 3001 && a.depth >= 1, "{a:?}");
}

#[test]
fn a_repetition_is_a_draw_in_the_search() {
    // Both kings shuffle: after 5i5h 5a5b 5h5i 5b5a the start repeats. With only kings
    // and a pawn each, the search from a position that has occurred before scores the
    // return to it as a draw, not as the material balance.
    let mut g = ShogiGame::new(pos("4k4/9/4p4/9/9/9/4P4/9/4K4 b G 1"), GameRules::default());
    for m in ["5i4h", "5a4a", "4h5i", "4a5a", "5i4h", "5a4a", "4h5i"] {
        let mv = g.position().parse_usi_move(m).unwrap();
        g.play_unchecked(mv);
    }
    // White to move; 4a5a repeats the start position (Black a gold up): a draw for
    // White is better than anything else it has.
    let r = AlphaBeta::new(0).search(&g, &depth(2));
    assert_eq!(r.best_move.unwrap().to_string(), "4a5a", "{r:?}");
    assert_eq!(r.score, 0, "{r:?}");
}

/// Plays `moves` (USI) on `g`.
fn play_all(g: &mut ShogiGame, moves: &[&str]) {
    for m in moves {
        let mv = g.position().parse_usi_move(m).unwrap();
        g.play_unchecked(mv);
    }
}

fn capped(sfen: &str, max_plies: u32) -> ShogiGame {
    ShogiGame::new(
        pos(sfen),
        GameRules {
            max_plies,
            ..GameRules::default()
        },
    )
}

#[test]
fn a_mate_on_the_last_allowed_ply_wins() {
    // The rules are the oracle: a game whose last allowed ply mates is won, not drawn
    // (checkmate is tested before the cap).
    for (name, sfen) in MATE_IN_1 {
        let g = capped(sfen, 1);
        let mut after = g.clone();
        after.play_unchecked(g.position().mate_in_one().unwrap());
        assert_eq!(
            after.outcome(),
            Some(Outcome::win(Color::Black, EndReason::Checkmate)),
            "{name}"
        );
        for d in 1..=3 {
            let r = AlphaBeta::new(0).search(&g, &depth(d));
            assert_eq!(r.mate_in(), Some(1), "{name} depth {d}: {r:?}");
            assert!(mates_in_one(g.position(), r.best_move.unwrap()), "{name}");
        }
    }
    // Mate in 3 with exactly 3 plies left: the mate lands on the cap.
    for (name, sfen) in MATE_IN_3 {
        let g = capped(sfen, 3);
        for d in 3..=4 {
            let r = AlphaBeta::new(0).search(&g, &depth(d));
            assert_eq!(r.mate_in(), Some(3), "{name} depth {d}: {r:?}");
            // Every reply leaves a mate in 1 that the rules score as a win at the cap.
            let mut after = g.clone();
            after.play_unchecked(r.best_move.unwrap());
            for reply in after.position().legal_moves().iter().copied() {
                let mut g3 = after.clone();
                g3.play_unchecked(reply);
                let mate = g3.position().mate_in_one().expect("a mate in 1 remains");
                g3.play_unchecked(mate);
                assert_eq!(
                    g3.outcome(),
                    Some(Outcome::win(Color::Black, EndReason::Checkmate)),
                    "{name}"
                );
            }
        }
    }
}

#[test]
fn the_quiescence_search_stops_at_the_ply_cap() {
    // Black's rook can take the loose gold on 3c, but with two plies left the game ends
    // in the cap's draw whatever is captured, and no side can mate in that time: every
    // line is worth exactly 0 (no capture made past the cap counts).
    let sfen = "6k2/9/6g2/9/6R2/9/9/9/4K4 b PS 1";
    let free = AlphaBeta::new(0).search_position(&pos(sfen), &depth(1));
    assert!(free.score > 300, "without a cap the gold is won: {free:?}");
    for d in 1..=3 {
        let r = AlphaBeta::new(0).search(&capped(sfen, 2), &depth(d));
        assert_eq!(r.score, 0, "depth {d}: {r:?}");
    }
}

#[test]
fn a_repetition_draw_found_in_one_search_does_not_cut_a_later_one() {
    // The table lives for the whole game (as in a match). Search 1: in X (White to
    // move, Black a gold and a silver up) White's 4a5a repeats Y, a position of the
    // game, so the draw is White's best.
    let y = "4k4/9/4p4/9/9/9/4P4/8G/4K4 b S 1";
    let mut g1 = ShogiGame::new(pos(y), GameRules::default());
    play_all(&mut g1, &["5i4h", "5a4a", "4h5i"]);
    assert_eq!(g1.position().to_sfen(), "5k3/9/4p4/9/9/9/4P4/8G/4K4 w S 4");
    let mut ab = AlphaBeta::new(0);
    let r1 = ab.search(&g1, &depth(2));
    assert_eq!(r1.best_move.unwrap().to_string(), "4a5a", "{r1:?}");
    assert_eq!(r1.score, 0, "{r1:?}");
    // Search 2, same searcher: a game where Black's gold takes the silver on 1h, which
    // reaches X with no history, so no repetition is there and Black is simply ahead.
    // The draw of search 1 depended on its path and must not cut this search.
    let g2 = ShogiGame::new(
        pos("5k3/9/4p4/9/9/9/4P4/8s/4K3G b - 1"),
        GameRules::default(),
    );
    let fresh = AlphaBeta::new(0).search(&g2, &depth(3));
    assert_eq!(fresh.best_move.unwrap().to_string(), "1i1h", "{fresh:?}");
    assert!(fresh.score > 300, "{fresh:?}");
    let reused = ab.search(&g2, &depth(3));
    assert_eq!(
        (reused.best_move, reused.score),
        (fresh.best_move, fresh.score),
        "reused {reused:?}, fresh {fresh:?}"
    );
}

#[test]
fn a_node_limit_below_one_iteration_still_plays_a_searched_move() {
    // Depth 1 always completes: a node limit smaller than it plays depth 1's move,
    // never an unsearched first generated move.
    let limits = AlphaBetaLimits {
        depth: None,
        nodes: Some(1),
        movetime: None,
    };
    for (sfen, expected) in [
        ("4k4/9/9/9/7r1/9/9/4B4/4K4 b - 1", "5h2e"),
        ("4k4/9/9/9/9/4b4/4P4/9/4K4 b - 1", "5g5f"),
        ("4k4/9/9/4p4/4R4/9/9/9/4K4 w - 1", "5d5e"),
    ] {
        let r = AlphaBeta::new(0).search_position(&pos(sfen), &limits);
        assert_eq!(r.depth, 1, "{sfen}: {r:?}");
        assert_eq!(r.best_move.unwrap().to_string(), expected, "{sfen}: {r:?}");
        let d1 = AlphaBeta::new(0).search_position(&pos(sfen), &depth(1));
        assert_eq!((r.best_move, r.score), (d1.best_move, d1.score), "{sfen}");
    }
}

#[test]
fn a_move_time_limit_returns_a_searched_legal_move_in_bounded_time() {
    // Loose bounds only (the machine may be loaded): a 1 ms limit still completes depth
    // 1; a 30 ms limit stops well before the deepest depth; with a depth limit as well,
    // whichever comes first ends the search.
    for (variant, plies) in [(Variant::Shogi, 40), (Variant::Minishogi, 10)] {
        let mut g = ShogiGame::startpos(variant);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut legal = Vec::new();
        for _ in 0..plies {
            legal.clear();
            g.legal_moves(&mut legal);
            if g.outcome().is_some() {
                break;
            }
            g.play_unchecked(legal[rng.random_range(0..legal.len())]);
        }
        if g.outcome().is_some() {
            continue;
        }
        for (spec, max_secs) in [("movetime=1", 10.0), ("movetime=30", 10.0)] {
            let limits: AlphaBetaLimits = spec.parse().unwrap();
            let t = std::time::Instant::now();
            let r = AlphaBeta::new(1).search(&g, &limits);
            let secs = t.elapsed().as_secs_f64();
            let mv = r.best_move.expect("a move");
            assert!(g.position().is_legal(mv), "{spec}: {mv}");
            assert!(r.depth >= 1, "{spec}: {r:?}");
            assert!(r.depth < 64, "{spec}: {r:?}");
            assert!(secs < max_secs, "{spec} took {secs:.2} s: {r:?}");
        }
        let limits: AlphaBetaLimits = "depth=2,movetime=60000".parse().unwrap();
        let r = AlphaBeta::new(1).search(&g, &limits);
        assert_eq!(r.depth, 2, "{r:?}");
        assert_eq!(r, AlphaBeta::new(1).search(&g, &depth(2)));
    }
}

#[test]
fn player_specs_parse_and_print() {
    let s: PlayerSpec = "alphabeta:depth=3".parse().unwrap();
    assert_eq!(s, PlayerSpec::AlphaBeta(depth(3)));
    assert_eq!(s.to_string(), "alphabeta:depth=3");
    let s: PlayerSpec = "alphabeta:nodes=10000".parse().unwrap();
    assert_eq!(s.to_string(), "alphabeta:nodes=10000");
    for text in [
        "alphabeta:movetime=1000",
        "alphabeta:depth=3,movetime=500",
        "alphabeta:depth=2,nodes=100,movetime=50",
    ] {
        let s: PlayerSpec = text.parse().unwrap();
        assert_eq!(s.to_string(), text);
        assert_eq!(s.to_string().parse::<PlayerSpec>().unwrap(), s);
    }
    let PlayerSpec::AlphaBeta(l) = "alphabeta:movetime=250".parse().unwrap() else {
        panic!("not alphabeta")
    };
    assert_eq!(
        l,
        AlphaBetaLimits {
            depth: None,
            nodes: None,
            movetime: Some(250),
        }
    );
    for bad in [
        "alphabeta:",
        "alphabeta:depth=0",
        "alphabeta:depth=x",
        "alphabeta:time=3",
        "alphabeta:movetime=0",
        "alphabeta:movetime=x",
    ] {
        assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
    }
}

use crate::common;

/// The shared minishogi match at one simulation, from 2-ply openings, seed 5.
fn minishogi(games: u32) -> MatchConfig {
    MatchConfig {
        openings: Openings::Random { plies: 2 },
        seed: 5,
        ..common::minishogi(games, 1)
    }
}

#[test]
fn the_baseline_beats_random_and_depth_beats_depth() {
    let stop = AtomicBool::new(false);
    let ab2: PlayerSpec = "alphabeta:depth=2".parse().unwrap();
    let s = run_match(&ab2, &PlayerSpec::Random, &minishogi(10), &stop).unwrap();
    assert_eq!(s.forfeits, 0);
    assert!(s.score >= 0.95, "{}", s.table());
    let ab3: PlayerSpec = "alphabeta:depth=3".parse().unwrap();
    let ab1: PlayerSpec = "alphabeta:depth=1".parse().unwrap();
    let s = run_match(&ab3, &ab1, &minishogi(10), &stop).unwrap();
    assert!(s.score >= 0.6, "{}", s.table());
    // Same seed, same games.
    let again = run_match(&ab3, &ab1, &minishogi(10), &stop).unwrap();
    let moves =
        |m: &shogi_arena::MatchSummary| m.games.iter().map(|g| g.moves.clone()).collect::<Vec<_>>();
    assert_eq!(moves(&s), moves(&again));
}

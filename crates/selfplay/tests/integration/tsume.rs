//! MCTS with a uniform evaluator (no knowledge at all) solves real tsume-shogi problems:
//! it finds mates in 1 (a head-gold drop 頭金, a promoting rook move, a sliding rook
//! drop) and proves mates in 3 (attacker checks every move), and does not report a proven
//! win where there is no mate. Every position is checked with the rules first: the
//! expected move is legal and mates (or forces mate), and no shorter mate exists.

use shogi_game::{Color, Game};
use shogi_mcts::{Proven, Search, SearchConfig, SearchLimits, UniformEvaluator};
use shogi_rules::{GameRules, Move, Position, ShogiGame, Variant};

/// Whether the side to move forces mate within `plies` (odd), checking with every move
/// (tsume rules); returns such a first move.
fn tsume_mate(pos: &Position, plies: u32) -> Option<Move> {
    pos.legal_moves().iter().copied().find(|&mv| {
        let p = pos.after(mv);
        if !p.in_check() {
            return false;
        }
        let replies = p.legal_moves();
        replies.is_empty()
            || (plies >= 3
                && replies
                    .iter()
                    .all(|&r| tsume_mate(&p.after(r), plies - 2).is_some()))
    })
}

fn pos(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap()
}

fn config() -> SearchConfig {
    SearchConfig {
        simulations: 4000,
        tree_batch: 1,
        terminal_check: true,
        // These tests are about the tree's own proofs; the root mate search has its own.
        root_mate_nodes: 0,
        ..SearchConfig::for_play()
    }
}

/// Black's proven mate in `plies`.
fn black_mates_in(plies: u32) -> Proven {
    Proven::Win {
        winner: Color::Black,
        plies,
    }
}

fn solve(sfen: &str, simulations: u32) -> shogi_mcts::SearchResult<Move> {
    let game = ShogiGame::new(pos(sfen), GameRules::default());
    let mut search = Search::new(config(), 1);
    search
        .search(
            &game,
            &UniformEvaluator::default(),
            &SearchLimits::simulations(simulations),
        )
        .unwrap()
}

fn is_mate_after(p: &Position, mv: Move) -> bool {
    p.is_legal(mv) && p.after(mv).is_checkmate()
}

/// (name, SFEN, expected mating move)
const MATE_IN_1: [(&str, &str, &str); 3] = [
    // 頭金: gold dropped on the king's head, supported by the pawn.
    ("head gold", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1", "G*5b"),
    // The rook promotes on the back rank: the dragon covers 1b diagonally, the silver
    // guards it. Not promoting is no mate (the king escapes to 1b). White's pawn keeps
    // a legal move, so smothering the king without check (a no-legal-move win) is not
    // an alternative.
    ("promoting rook", "8k/6S2/p8/9/9/9/9/7R1/4K4 b - 1", "2h2a+"),
    // A rook dropped far down the open file; the lance and pawn wall the king in and
    // White has nothing to interpose.
    ("sliding rook drop", "7lk/7p1/9/9/9/9/9/9/4K4 b R 1", "R*1i"),
];

#[test]
fn mate_in_one_positions_are_what_they_claim() {
    for (name, sfen, expected) in MATE_IN_1 {
        let p = pos(sfen);
        assert!(!p.in_check(), "{name}");
        let mv = p.parse_usi_move(expected).unwrap();
        assert!(is_mate_after(&p, mv), "{name}: {expected} does not mate");
    }
    // The promotion matters: 2h2a without promoting lets the king out.
    let p = pos(MATE_IN_1[1].1);
    let plain = p.parse_usi_move("2h2a").unwrap();
    assert!(p.after(plain).in_check() && !p.after(plain).is_checkmate());
}

#[test]
fn uniform_search_finds_mate_in_one() {
    for (name, sfen, _) in MATE_IN_1 {
        let p = pos(sfen);
        let result = solve(sfen, 2000);
        let best = result.best_move.expect("a move");
        assert!(
            is_mate_after(&p, best),
            "{name}: chose {best}, which does not mate"
        );
        assert_eq!(result.proven, black_mates_in(1), "{name}");
    }
}

/// (name, SFEN, a first move that forces mate in 3)
const MATE_IN_3: [(&str, &str, &str); 3] = [
    // The rook takes the gold and promotes with check; every reply allows a mate.
    (
        "rook takes gold",
        "6k2/9/6g2/9/6R2/9/9/9/4K4 b PS 1",
        "3e3c+",
    ),
    // The dragon slides across the third rank to check the king on its file.
    ("dragon slide", "7k1/9/4+R4/7N1/9/9/9/9/4K4 b RS 1", "5c2c"),
    // A rook drop on the back rank; the king is hemmed in by its own rook and lance.
    ("rook drop", "8k/4+B1+Prl/6s2/9/9/9/9/9/4K4 b R 1", "R*3a"),
];

#[test]
fn mate_in_three_positions_are_what_they_claim() {
    for (name, sfen, first) in MATE_IN_3 {
        let p = pos(sfen);
        assert!(!p.in_check(), "{name}");
        // No mate in 1 by any move (checking or not).
        assert!(p.mate_in_one().is_none(), "{name}: has a mate in 1");
        let mv = p.parse_usi_move(first).unwrap();
        let after = p.after(mv);
        assert!(after.in_check(), "{name}: {first} is not a check");
        let replies = after.legal_moves();
        assert!(!replies.is_empty(), "{name}: {first} mates at once");
        // Every defence allows a checkmate: the full line ends in 詰み.
        for &r in replies.iter() {
            let q = after.after(r);
            let mate = q
                .mate_in_one()
                .unwrap_or_else(|| panic!("{name}: after {first} {r} no mate"));
            assert!(q.after(mate).is_checkmate());
        }
        assert_eq!(tsume_mate(&p, 1), None, "{name}");
        assert!(tsume_mate(&p, 3).is_some(), "{name}");
    }
}

#[test]
fn uniform_search_proves_mate_in_three() {
    for (name, sfen, _) in MATE_IN_3 {
        let p = pos(sfen);
        let result = solve(sfen, 4000);
        let best = result.best_move.expect("a move");
        assert_eq!(
            result.proven,
            black_mates_in(3),
            "{name} after {} simulations",
            result.simulations
        );
        // The chosen move keeps the forced win: every reply allows a mate in 1.
        let after = p.after(best);
        assert!(!after.is_checkmate(), "{name}: no mate in 1 exists");
        for &r in after.legal_moves().iter() {
            assert!(
                after.after(r).mate_in_one().is_some(),
                "{name}: chose {best}; {r} escapes"
            );
        }
    }
}

#[test]
fn no_mate_no_proven_win() {
    // A lone gold in hand against a bare king: no forced mate anywhere near.
    let sfen = "4k4/9/9/9/9/9/9/9/4K4 b G 1";
    let p = pos(sfen);
    assert!(tsume_mate(&p, 3).is_none());
    let result = solve(sfen, 2000);
    assert!(
        !matches!(result.proven, Proven::Win { .. }),
        "{:?}",
        result.proven
    );
    // The even start position, too.
    let start = Position::startpos(Variant::Shogi).to_sfen();
    let result = solve(&start, 1000);
    assert_eq!(result.proven, Proven::Unknown);
}

/// Self-play's search at its own budget: a Gumbel root that keeps 4 of the ~80 legal
/// moves (uniform priors, so which 4 is chance) plays each mate in one, and its policy
/// target puts nearly all its mass there, once children are checked at expansion
/// (`selfplay.terminal_check`). Without the check the same searches miss most of them:
/// the mating move is found only when the Gumbel draw happens to keep it.
#[test]
fn gumbel_selfplay_search_with_terminal_check_plays_and_targets_every_mate_in_one() {
    use shogi_mcts::RootSelection;
    let gumbel = |check: bool| SearchConfig {
        simulations: 32,
        tree_batch: 4,
        root_selection: RootSelection::Gumbel,
        gumbel_considered: 4,
        terminal_check: check,
        ..SearchConfig::default()
    };
    let mut misses_without_check = 0;
    for (name, sfen, expected) in MATE_IN_1 {
        let p = pos(sfen);
        let mate = p.parse_usi_move(expected).unwrap();
        let game = ShogiGame::new(p.clone(), GameRules::default());
        for seed in 0..6 {
            let r = Search::new(gumbel(true), seed).search_uniform(&game);
            let best = r.best_move.expect("a move");
            assert!(is_mate_after(&p, best), "{name} seed {seed}: played {best}");
            let target: f32 = r
                .moves
                .iter()
                .zip(&r.policy_target)
                .filter(|(m, _)| is_mate_after(&p, **m))
                .map(|(_, t)| t)
                .sum();
            assert!(target > 0.9, "{name} seed {seed}: mate target {target}");
            let r = Search::new(gumbel(false), seed).search_uniform(&game);
            if r.best_move != Some(mate) {
                misses_without_check += 1;
            }
        }
    }
    assert!(
        misses_without_check >= 9,
        "the control: without the check the Gumbel root should miss most mates, missed {misses_without_check} of 18"
    );
}

/// Self-play's search with the root mate search (`selfplay.root_mate_nodes`): each
/// mate in 3 is proven before any simulation, its first move is played and is the whole
/// policy target. The control: the same 32-simulation Gumbel search without it proves
/// none of them (4 of ~80 root moves considered, uniform priors).
#[test]
fn root_mate_search_plays_mate_in_three_at_once_with_a_one_hot_target() {
    use shogi_mcts::RootSelection;
    let gumbel = |root_mate_nodes: usize| SearchConfig {
        simulations: 32,
        tree_batch: 4,
        root_selection: RootSelection::Gumbel,
        gumbel_considered: 4,
        terminal_check: true,
        root_mate_nodes,
        ..SearchConfig::default()
    };
    let mut proven_without = 0;
    for (name, sfen, _) in MATE_IN_3 {
        let p = pos(sfen);
        let game = ShogiGame::new(p.clone(), GameRules::default());
        for seed in 0..3 {
            let r = Search::new(gumbel(3000), seed).search_uniform(&game);
            assert_eq!(
                r.proven,
                Proven::Win {
                    winner: Color::Black,
                    plies: 3
                },
                "{name} seed {seed}"
            );
            assert_eq!(
                r.simulations, 0,
                "{name}: a proven root needs no simulation"
            );
            let best = r.best_move.expect("a move");
            let after = p.after(best);
            assert!(after.in_check(), "{name}: {best} is no check");
            for &reply in after.legal_moves().iter() {
                assert!(
                    after.after(reply).mate_in_one().is_some(),
                    "{name}: played {best}; {reply} escapes"
                );
            }
            let i = r.moves.iter().position(|&m| m == best).unwrap();
            assert_eq!(
                r.policy_target[i], 1.0,
                "{name}: target {:?}",
                r.policy_target
            );
            assert_eq!(r.policy_target.iter().sum::<f32>(), 1.0);
            let r = Search::new(gumbel(0), seed).search_uniform(&game);
            if r.proven != Proven::Unknown {
                proven_without += 1;
            }
        }
    }
    assert_eq!(
        proven_without, 0,
        "the control proved a mate in 3 without the mate search"
    );
}

/// The root mate search never claims a mate that is not there, and a mate longer than
/// the plies left before the ply cap is no mate (the game is drawn first).
#[test]
fn root_mate_search_no_false_mate_and_respects_the_ply_cap() {
    let probing = SearchConfig {
        simulations: 64,
        root_mate_nodes: 20_000,
        ..SearchConfig::for_play()
    };
    for sfen in [
        "4k4/9/9/9/9/9/9/9/4K4 b G 1".to_string(),
        Position::startpos(Variant::Shogi).to_sfen(),
    ] {
        let game = ShogiGame::new(pos(&sfen), GameRules::default());
        assert_eq!(game.find_mate(20_000, 31), None, "{sfen}");
        let r = Search::new(probing.clone(), 1).search_uniform(&game);
        assert!(
            !matches!(r.proven, Proven::Win { .. }),
            "{sfen}: {:?}",
            r.proven
        );
    }
    for (name, sfen, _) in MATE_IN_3 {
        let capped = |max_plies| {
            let rules = GameRules {
                max_plies,
                ..GameRules::default()
            };
            ShogiGame::new(pos(sfen), rules).find_mate(20_000, 31)
        };
        assert_eq!(capped(2), None, "{name}: 3 plies do not fit in 2");
        let line = capped(3).unwrap_or_else(|| panic!("{name}: no mate within 3 plies"));
        assert_eq!(line.len(), 3, "{name}");
        assert!(
            shogi_rules::mate::is_mating_line(&pos(sfen), &line),
            "{name}"
        );
    }
}

/// (name, SFEN): forced mates in 5 by checks, none in 3 (checked below by brute force).
const MATE_IN_5: [(&str, &str); 2] = [
    ("bishop and golds", "8k/9/4n4/9/9/9/9/9/K8 b B2GL 1"),
    ("two bishops", "8s/6kB1/9/7B1/9/9/9/9/K8 b R2GL 1"),
];

/// `sfen` turned around: the board rotated half a turn, the colours (and hands)
/// swapped, Black to move.
fn turned_around(sfen: &str) -> String {
    let fields: Vec<&str> = sfen.split(' ').collect();
    let swap = |c: char| {
        if c.is_ascii_uppercase() {
            c.to_ascii_lowercase()
        } else {
            c.to_ascii_uppercase()
        }
    };
    let ranks: Vec<String> = fields[0]
        .split('/')
        .rev()
        .map(|rank| {
            let mut tokens: Vec<String> = Vec::new();
            let mut chars = rank.chars();
            while let Some(c) = chars.next() {
                if c == '+' {
                    tokens.push(format!("+{}", swap(chars.next().unwrap())));
                } else {
                    tokens.push(swap(c).to_string());
                }
            }
            tokens.reverse();
            tokens.concat()
        })
        .collect();
    let hand: String = if fields[2] == "-" {
        "-".into()
    } else {
        fields[2].chars().map(swap).collect()
    };
    format!("{} b {hand} 1", ranks.join("/"))
}

/// The leaf mate search (`selfplay.leaf_mate_nodes`) at the leaves themselves: each tsume
/// position turned around, so that Black to move is the side in the mating net and
/// White threatens the mate. A Gumbel root considering every move visits each child
/// once at least; a child is a leaf with White to move, and its value is exactly a loss
/// for Black (q = 0) if and only if White mates from there within the search's plies,
/// as the brute-force oracle `tsume_mate` says: every mate in 1, 3 and 5 found, never a
/// false one. Without the leaf search (the control) the same budget proves fewer.
#[test]
fn leaf_mate_search_proves_exactly_the_leaves_with_a_mate_in_3_and_5() {
    use shogi_mcts::RootSelection;
    let sources = MATE_IN_3
        .iter()
        .map(|&(name, sfen, _)| (name, sfen))
        .chain(MATE_IN_5.iter().copied());
    let (mut proven_total, mut beyond_one) = (0, 0);
    for (name, source) in sources {
        let root = pos(&turned_around(source));
        let children = root.legal_moves().len();
        assert!(children > 0, "{name}");
        for leaf_plies in [3u32, 5] {
            let config = |leaf_nodes: usize| SearchConfig {
                simulations: (children * 8) as u32,
                tree_batch: 1,
                root_selection: RootSelection::Gumbel,
                gumbel_considered: children,
                terminal_check: true,
                root_mate_nodes: 0,
                leaf_mate_nodes: leaf_nodes,
                leaf_mate_plies: leaf_plies,
                ..SearchConfig::for_play()
            };
            let game = ShogiGame::new(root.clone(), GameRules::default());
            let search =
                |leaf_nodes: usize| Search::new(config(leaf_nodes), 1).search_uniform(&game);
            let with = search(100_000);
            let without = search(0);
            let (mut proven, mut proven_without) = (0, 0);
            for (i, &mv) in with.moves.iter().enumerate() {
                assert!(with.visits[i] > 0, "{name}: {mv} never visited");
                let child = root.after(mv);
                let mate = tsume_mate(&child, leaf_plies).is_some();
                let exact_loss = with.q[i] == Some(0.0);
                assert_eq!(
                    exact_loss, mate,
                    "{name}, leaf plies {leaf_plies}: after {mv} White mates within {leaf_plies}: {mate}; the search's value {:?}",
                    with.q[i]
                );
                proven += usize::from(exact_loss);
                // Without it, the tree proves some mates itself (terminal checks when
                // children are expanded), never one the leaf search misses.
                let j = without.moves.iter().position(|&m| m == mv).unwrap();
                if without.q[j] == Some(0.0) {
                    assert!(exact_loss, "{name}: only the control proved {mv}");
                    proven_without += 1;
                }
            }
            eprintln!(
                "{name}, leaf plies {leaf_plies}: {proven} of {children} replies lose to a mate ({proven_without} proven without the leaf search)"
            );
            proven_total += proven;
            beyond_one += proven - proven_without;
        }
    }
    assert!(proven_total > 0, "no position had a mating reply at all");
    assert!(
        beyond_one > 0,
        "the leaf search proved nothing the tree did not"
    );
}

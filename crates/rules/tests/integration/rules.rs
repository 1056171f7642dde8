//! Hand-written positions with their expected answers.

use shogi_game::{EndReason, Game};
use shogi_rules::{
    Color, GameRules, IllegalMove, ImpasseRule, MoveParseError, Position, SfenError, ShogiGame,
    Variant,
};

fn pos(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap()
}

fn illegal_reason(p: &Position, usi: &str) -> IllegalMove {
    match p.parse_usi_move(usi) {
        Err(MoveParseError::Illegal { reason, .. }) => reason,
        other => panic!("{usi} in {p}: expected illegal, got {other:?}"),
    }
}

#[test]
fn uchifuzume_with_pinned_defender() {
    // White king 1a, silver 2a could take a pawn on 1b but is pinned by the rook on 5a;
    // the gold on 2c guards 1b and 2b. P*1b is mate, hence illegal (打ち歩詰め).
    let p = pos("4R2sk/9/7G1/9/9/9/9/9/4K4 b P 1");
    assert_eq!(illegal_reason(&p, "P*1b"), IllegalMove::Uchifuzume);
    assert!(!p.legal_moves().iter().any(|m| m.to_string() == "P*1b"));
    // Without the pinning rook the silver captures: the drop is legal.
    let q = pos("7sk/9/7G1/9/9/9/9/9/4K4 b P 1");
    assert!(q.parse_usi_move("P*1b").is_ok());
}

#[test]
fn uchifuzume_simple_and_king_can_take() {
    let p = pos("7nk/9/7G1/9/9/9/9/9/K8 b P 1");
    assert_eq!(illegal_reason(&p, "P*1b"), IllegalMove::Uchifuzume);
    // Gold on 3c does not guard 1b: the king may take the pawn, so the drop is legal.
    let q = pos("7nk/9/6G2/9/9/9/9/9/K8 b P 1");
    let mv = q.parse_usi_move("P*1b").unwrap();
    assert!(q.gives_check(mv));
    // Moving a pawn (not dropping) to give mate is fine: 突き歩詰め.
    let r = pos("7nk/9/7GP/9/9/9/9/9/K8 b - 1");
    let push = r.parse_usi_move("1c1b").unwrap();
    assert!(r.after(push).is_checkmate());
}

#[test]
fn dead_piece_drops_and_moves() {
    let p = pos("4k4/9/9/9/9/9/9/9/4K4 b NLP 1");
    assert_eq!(illegal_reason(&p, "P*1a"), IllegalMove::DeadPiece(sq("1a")));
    assert_eq!(illegal_reason(&p, "L*9a"), IllegalMove::DeadPiece(sq("9a")));
    assert_eq!(illegal_reason(&p, "N*1b"), IllegalMove::DeadPiece(sq("1b")));
    assert!(p.parse_usi_move("N*1c").is_ok());
    assert!(p.parse_usi_move("L*1b").is_ok());
    assert!(p.parse_usi_move("P*1b").is_ok());
    // Pawn on 1b must promote on 1a; knight on 2d must promote on 1b.
    let q = pos("4k4/8P/9/7N1/9/9/9/9/4K4 b - 1");
    assert!(q.parse_usi_move("1b1a+").is_ok());
    assert_eq!(illegal_reason(&q, "1b1a"), IllegalMove::DeadPiece(sq("1a")));
    assert!(q.parse_usi_move("2d3b+").is_ok());
    assert_eq!(illegal_reason(&q, "2d3b"), IllegalMove::DeadPiece(sq("3b")));
    // Knight to the third rank may stay unpromoted.
    let r = pos("4k4/9/9/9/7N1/9/9/9/4K4 b - 1");
    assert!(r.parse_usi_move("2e1c").is_ok());
    assert!(r.parse_usi_move("2e1c+").is_ok());
}

fn sq(s: &str) -> shogi_rules::Square {
    shogi_rules::Square::from_usi(s, Variant::Shogi).unwrap()
}

#[test]
fn nifu_only_unpromoted_pawns() {
    let p = pos("4k4/9/9/9/9/9/P8/9/4K4 b P 1");
    assert_eq!(illegal_reason(&p, "P*9e"), IllegalMove::Nifu(sq("9e")));
    let q = pos("4k4/9/9/9/9/9/+P8/9/4K4 b P 1");
    assert!(q.parse_usi_move("P*9e").is_ok());
}

#[test]
fn other_illegal_reasons() {
    let p = Position::startpos(Variant::Shogi);
    assert_eq!(
        illegal_reason(&p, "5c5d"),
        IllegalMove::NotYourPiece(sq("5c"))
    );
    assert_eq!(illegal_reason(&p, "5e5d"), IllegalMove::NoPiece(sq("5e")));
    assert_eq!(
        illegal_reason(&p, "7g7e"),
        IllegalMove::CannotReach {
            from: sq("7g"),
            to: sq("7e")
        }
    );
    assert_eq!(illegal_reason(&p, "7g7f+"), IllegalMove::CannotPromote);
    assert_eq!(
        illegal_reason(&p, "P*5e"),
        IllegalMove::NotInHand(shogi_rules::PieceKind::Pawn)
    );
    assert!(matches!(
        p.parse_usi_move("7g7"),
        Err(MoveParseError::Syntax(_))
    ));
    // Pinned piece: the gold on 5h is pinned by the rook on 5a.
    let q = pos("k3r4/9/9/9/9/9/9/4G4/4K4 b - 1");
    assert_eq!(illegal_reason(&q, "5h4h"), IllegalMove::LeavesKingInCheck);
    assert!(q.parse_usi_move("5h5g").is_ok());
}

#[test]
fn usi_text_round_trip() {
    let mut p = Position::startpos(Variant::Shogi);
    for m in ["7g7f", "3c3d", "8h2b+", "3a2b", "B*5e"] {
        let mv = p.parse_usi_move(m).unwrap();
        assert_eq!(mv.to_string(), m);
        p.play(mv).unwrap();
    }
    for mv in p.legal_moves().iter() {
        assert_eq!(p.parse_usi_move(&mv.to_string()).unwrap(), *mv);
    }
    let m = Position::startpos(Variant::Minishogi);
    let texts: Vec<String> = m.legal_moves().iter().map(|m| m.to_string()).collect();
    assert!(texts.contains(&"5d5c".to_string()), "{texts:?}");
    assert!(m.parse_usi_move("5d5c").is_ok());
    assert!(matches!(
        m.parse_usi_move("9g9f"),
        Err(MoveParseError::Syntax(_))
    ));
}

#[test]
fn checkmate_and_mate_in_one() {
    let p = pos("4k4/9/4G4/9/9/9/9/9/4K4 b G 1");
    let mv = p.mate_in_one().unwrap();
    assert!(p.after(mv).is_checkmate());
    assert!(Position::startpos(Variant::Shogi).mate_in_one().is_none());
    let mated = pos("4k4/4G4/4G4/9/9/9/9/9/4K4 w - 2");
    assert!(mated.in_check() && mated.is_checkmate());
}

#[test]
fn has_legal_move_in_mate_stalemate_and_with_only_a_drop() {
    // Mate: no legal move, in check.
    let mated = pos("4k4/4G4/4G4/9/9/9/9/9/4K4 w - 2");
    assert!(!mated.has_legal_move() && mated.legal_moves().is_empty());
    // Stalemate: White's lone king on 1a, the dragon on 3b guards 2a, 2b and 1b but
    // gives no check. No legal move, and the rules give the game to Black.
    let stalemate = pos("8k/6+R2/9/9/9/9/9/9/4K4 w - 1");
    assert!(!stalemate.in_check());
    assert!(!stalemate.has_legal_move() && stalemate.legal_moves().is_empty());
    let game = ShogiGame::new(stalemate.clone(), GameRules::default());
    let outcome = game.outcome().unwrap();
    assert_eq!(outcome.winner, Some(Color::Black));
    assert_eq!(outcome.reason, EndReason::NoLegalMoves);
    // The same king with a gold in hand: the drops are its only moves.
    let drop_only = pos("8k/6+R2/9/9/9/9/9/9/4K4 w g 1");
    assert!(drop_only.has_legal_move());
    assert!(drop_only.legal_moves().iter().all(|m| m.is_drop()));
    // A pawn in hand: pawn drops (not on White's last rank) are its only moves.
    let pawn = pos("8k/6+R2/9/9/9/9/9/9/4K4 w p 1");
    assert!(pawn.has_legal_move());
    assert!(pawn.legal_moves().iter().all(|m| m.is_drop()));
}

#[test]
fn handicaps() {
    for (name, _) in shogi_rules::HANDICAPS {
        let p = Position::handicap(name).unwrap();
        assert_eq!(p.side_to_move(), Color::White, "{name}");
    }
    let p = Position::handicap("2-piece").unwrap();
    assert_eq!(
        p.to_sfen(),
        "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
    );
    let p = Position::handicap("lance").unwrap();
    assert!(p.piece_at(sq("1a")).is_none() && p.piece_at(sq("9a")).is_some());
    assert!(Position::handicap("queen").is_err());
}

#[test]
fn sfen_errors_name_the_field() {
    let bad = |s: &str| Position::from_sfen(Variant::Shogi, s).unwrap_err();
    assert!(matches!(bad("9/9 b - 1"), SfenError::Board { .. }));
    assert!(matches!(
        bad("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1"),
        SfenError::Side(_)
    ));
    assert!(matches!(
        bad("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b K 1"),
        SfenError::Hands { .. }
    ));
    assert!(matches!(
        bad("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 0"),
        SfenError::MoveNumber(_)
    ));
    for sfen in [
        // Too many pawns.
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b P 1",
        // Nifu, dead pawn, side not to move in check, missing king.
        "4k4/9/9/9/9/9/P8/P8/4K4 b - 1",
        "P3k4/9/9/9/9/9/9/9/4K4 b - 1",
        "4k4/4R4/9/9/9/9/9/9/4K4 b - 1",
        "9/9/9/9/9/9/9/9/4K4 b - 1",
    ] {
        assert!(matches!(bad(sfen), SfenError::Invalid(_)), "{sfen}");
    }
    assert!(matches!(
        bad("4k4/9/9/9/9/9/9/9/4K4 b"),
        SfenError::FieldCount(2)
    ));
    // Minishogi has no lances.
    assert!(Position::from_sfen(Variant::Minishogi, "rbsgk/4p/5/P4/KGSBR b L 1").is_err());
    let e = bad("4k4/9/9/9/9/9/9/9/4K4 b 3Q 1").to_string();
    assert!(e.contains("hands") && e.contains("3Q"), "{e}");
}

fn drive(g: &mut ShogiGame, moves: &[&str]) {
    for m in moves {
        assert!(
            g.outcome().is_none(),
            "game over before {m}: {:?}",
            g.outcome()
        );
        let mv = g
            .parse_move(m)
            .unwrap_or_else(|| panic!("{m} illegal in {}", g.position()));
        g.play_unchecked(mv);
    }
}

#[test]
fn perpetual_check_loses() {
    // Black rook checks from 9a and 9b while the white king shuffles 1a-1b.
    let p = pos("8k/R8/9/9/9/9/9/9/4K4 b - 1");
    let mut g = ShogiGame::new(p, GameRules::default());
    let cycle = ["9b9a", "1a1b", "9a9b", "1b1a"];
    for _ in 0..2 {
        drive(&mut g, &cycle);
    }
    drive(&mut g, &cycle[..3]);
    // After 11 plies the start position has occurred 3 times; the 12th ply repeats it.
    drive(&mut g, &cycle[3..]);
    let o = g.outcome().unwrap();
    assert_eq!(o.reason, EndReason::PerpetualCheck);
    assert_eq!(o.winner, Some(Color::White));
}

/// The game from `sfen` after `cycle` is played three times (the start position's
/// fourth occurrence, 千日手).
fn after_three_cycles(sfen: &str, cycle: &[&str]) -> ShogiGame {
    let mut g = ShogiGame::new(pos(sfen), GameRules::default());
    for _ in 0..3 {
        drive(&mut g, cycle);
    }
    g
}

#[test]
fn plain_repetition_draws() {
    let kings = "4k4/9/9/9/9/9/9/9/4K4 b - 1";
    let g = after_three_cycles(kings, &["5i5h", "5a5b", "5h5i", "5b5a"]);
    let o = g.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (None, EndReason::Repetition));
}

/// Past `set_twofold_after(ply)` a second occurrence ends the game with the repetition
/// rule's verdict; at or before that ply the fourfold rule holds (the game as played).
#[test]
fn twofold_repetitions_after_the_search_root() {
    let cycle = ["5i5h", "5a5b", "5h5i", "5b5a"];
    // From the start: the first return to the start position is its second occurrence.
    let mut g = ShogiGame::new(pos("4k4/9/9/9/9/9/9/9/4K4 b - 1"), GameRules::default());
    g.set_twofold_after(0);
    drive(&mut g, &cycle);
    let o = g.outcome().unwrap();
    assert_eq!((o.reason, o.winner), (EndReason::Repetition, None));
    // A repetition inside the game as played (up to the root at ply 4) does not end it;
    // the next one, past the root, does, although the position occurs only twice since.
    let mut g = ShogiGame::new(pos("4k4/9/9/9/9/9/9/9/4K4 b - 1"), GameRules::default());
    drive(&mut g, &cycle);
    g.set_twofold_after(4);
    assert!(g.outcome().is_none());
    drive(&mut g, &cycle[..1]);
    assert_eq!(
        g.outcome().unwrap().reason,
        EndReason::Repetition,
        "5h: second time"
    );
    // Perpetual check at the second occurrence is the checker's loss.
    let mut g = ShogiGame::new(pos("8k/R8/9/9/9/9/9/9/4K4 b - 1"), GameRules::default());
    g.set_twofold_after(0);
    drive(&mut g, &["9b9a", "1a1b", "9a9b", "1b1a"]);
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.reason, o.winner),
        (EndReason::PerpetualCheck, Some(Color::White))
    );
    // Without it, the same cycle is only the second of four.
    let mut g = ShogiGame::new(pos("8k/R8/9/9/9/9/9/9/4K4 b - 1"), GameRules::default());
    drive(&mut g, &["9b9a", "1a1b", "9a9b", "1b1a"]);
    assert!(g.outcome().is_none());
}

#[test]
fn max_plies_draw() {
    let rules = GameRules {
        max_plies: 4,
        impasse: ImpasseRule::None,
    };
    let mut g = ShogiGame::new(Position::startpos(Variant::Shogi), rules);
    drive(&mut g, &["7g7f", "3c3d", "2g2f", "8c8d"]);
    assert_eq!(g.outcome().unwrap().reason, EndReason::MaxPlies);
}

#[test]
fn checkmate_outcome() {
    let g = ShogiGame::new(pos("4k4/4G4/4G4/9/9/9/9/9/4K4 w - 2"), GameRules::default());
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Color::Black), EndReason::Checkmate)
    );
}

fn game27(sfen: &str) -> ShogiGame {
    ShogiGame::new(
        pos(sfen),
        GameRules {
            max_plies: 512,
            impasse: ImpasseRule::Declaration27,
        },
    )
}

#[test]
fn declaration_27_points() {
    // Black: king 5c; in camp R B (10) + 4G 3S (7) + 3P (3) = 20 points, 12 pieces;
    // 8 pawns in hand = 28 points: exactly enough for Black.
    let yes = game27("GGGGSSSBR/PPP6/4K4/9/9/9/9/9/4k4 b 8Prbs4n4l7p 1");
    assert!(yes.can_declare_win());
    let o = yes.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Color::Black), EndReason::ImpasseDeclaration)
    );
    // 27 points is one short for Black.
    let no = game27("GGGGSSSBR/PPP6/4K4/9/9/9/9/9/4k4 b 7Prbs4n4l8p 1");
    assert!(!no.can_declare_win());
    assert!(no.outcome().is_none());
    // 28 points but only 9 pieces in the camp.
    let few = game27("GGGGSSSBR/9/4K4/9/9/9/9/9/4k4 b 11Prbs4n4l4p 1");
    assert!(!few.can_declare_win());
    // King not in the camp.
    let out = game27("GGGGSSSBR/PPP6/9/4K4/9/9/9/9/4k4 b 8Prbs4n4l7p 1");
    assert!(!out.can_declare_win());
    // White needs 27: 20 in camp + 7 pawns in hand.
    let w = game27("4K4/9/9/9/9/9/4k4/6ppp/rbsssgggg w RBS4N4L8P7p 1");
    assert!(w.can_declare_win());
    let w26 = game27("4K4/9/9/9/9/9/4k4/6ppp/rbsssgggg w RBS4N4L9P6p 1");
    assert!(!w26.can_declare_win());
    // Without the rule enabled the game goes on; the explicit declaration still works.
    let mut plain = ShogiGame::new(yes.position().clone(), GameRules::default());
    assert!(plain.outcome().is_none());
    assert!(plain.declare_win());
    assert_eq!(
        plain.outcome().unwrap().reason,
        EndReason::ImpasseDeclaration
    );
}

#[test]
fn impasse_24_points() {
    // Both kings entered; White has far fewer than 24 points.
    let rules = GameRules {
        max_plies: 512,
        impasse: ImpasseRule::Points24,
    };
    // Black: 2R 2B (20) + 16 minor pieces + 17 pawns = 53 points; White: 1 point.
    let g = ShogiGame::new(pos("4K4/9/9/9/9/9/4k4/9/9 b 2R2B4G4S4N4L17Pp 1"), rules);
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Color::Black), EndReason::Impasse24)
    );
}

#[test]
fn minishogi_basics() {
    let p = Position::startpos(Variant::Minishogi);
    assert_eq!(p.to_sfen(), "rbsgk/4p/5/P4/KGSBR b - 1");
    assert_eq!(p.legal_moves().len(), 14);
    // Pawn reaching the last rank must promote (the zone is only that rank).
    let q = Position::from_sfen(Variant::Minishogi, "2k2/P4/5/5/4K b - 1").unwrap();
    let texts: Vec<String> = q.legal_moves().iter().map(|m| m.to_string()).collect();
    assert!(texts.contains(&"5b5a+".to_string()) && !texts.contains(&"5b5a".to_string()));
}

#[test]
fn perpetual_check_by_white_loses() {
    let g = after_three_cycles(
        "4k4/9/9/9/9/9/9/r8/8K w - 1",
        &["9h9i", "1i1h", "9i9h", "1h1i"],
    );
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Color::Black), EndReason::PerpetualCheck)
    );
    assert_eq!(g.ply(), 12);
}

#[test]
fn game_trait_basics() {
    let mut g = ShogiGame::startpos(Variant::Minishogi);
    assert_eq!(g.variant_name(), "minishogi");
    let mut v = Vec::new();
    g.legal_moves(&mut v);
    assert_eq!(v.len(), 14);
    let mv = g.parse_move("5d5c").unwrap();
    g.play_unchecked(mv);
    assert_eq!(g.side_to_move(), Color::White);
    assert_eq!(g.key(), g.position().key());
    assert!(g.play(mv).is_err());
}

#[test]
fn repetitions_count_earlier_occurrences_of_the_position() {
    use shogi_rules::{ShogiGame, Variant};
    let mut game = ShogiGame::startpos(Variant::Shogi);
    assert_eq!(game.repetitions(), 0);
    let cycle = ["5i5h", "5a5b", "5h5i", "5b5a"];
    for round in 1..=3u32 {
        for (i, text) in cycle.iter().enumerate() {
            let mv = game.position().parse_usi_move(text).unwrap();
            game.play(mv).unwrap();
            if i < 3 {
                // Positions inside the cycle occurred round - 1 times before.
                assert_eq!(game.repetitions(), round - 1, "round {round}, after {text}");
            }
        }
        assert_eq!(
            game.repetitions(),
            round,
            "start position after round {round}"
        );
    }
}

#[test]
fn mobility_values_are_the_squares_reached_from_the_centre() {
    use shogi_rules::{Bitboard, Color, MOBILITY_VALUE, PieceKind, Square, piece_attacks};
    let centre = Square::new(4, 4);
    for kind in PieceKind::ALL {
        let reached = piece_attacks(Color::Black, kind, centre, Bitboard::default())
            .0
            .count_ones();
        let want = if kind == PieceKind::King { 0 } else { reached };
        assert_eq!(MOBILITY_VALUE[kind.index()], want, "{kind:?}");
    }
    // Counted over board and hand: the start has 1*9 + 4*2 + 2*2 + 5*2 + 16 + 16 + 6*2 a side.
    let start = pos("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1");
    for c in Color::ALL {
        assert_eq!(start.mobility_points(c), 75);
    }
    // A silver taken into hand moves 5 points (the impasse count: 1).
    let taken = pos("lnsgkg1nl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b S 1");
    assert_eq!(taken.mobility_points(Color::Black), 80);
    assert_eq!(taken.mobility_points(Color::White), 70);
    assert_eq!(taken.material_points(Color::Black), 28);
    assert_eq!(taken.material_points(Color::White), 26);
    // A promoted pawn counts as a gold, a dragon as rook plus king steps.
    let promoted = pos("4k4/9/9/9/9/9/9/9/+P+R2K4 b - 1");
    assert_eq!(promoted.mobility_points(Color::Black), 6 + 20);
    assert_eq!(
        Game::material_on(
            &shogi_rules::ShogiGame::new(promoted.clone(), Default::default()),
            Color::Black,
            shogi_game::MaterialScale::Mobility
        ),
        Some(26)
    );
}

/// `gives_check` (and with `check_info`, and `checking_moves`), `key_after` and
/// `king_can_step_after` read a move's check, key and the
/// reply's king steps off the position without making it (the search's terminal checks and the mate search's move filter): on every
/// legal move of random games on both boards, with captures, promotions, drops and
/// discovered checks among them, they equal the position after the move, and so does
/// `ShogiGame::outcome_after`'s shortcut (which the debug build asserts move by move).
#[test]
fn gives_check_and_key_after_agree_with_the_position_after_the_move() {
    use shogi_testkit::pick;
    let mut checks = 0;
    for (variant, seed) in [
        (Variant::Shogi, 3u64),
        (Variant::Minishogi, 5),
        (Variant::Shogi, 11),
    ] {
        let mut rng = seed;
        for _ in 0..40 {
            let mut game = ShogiGame::new(
                Position::startpos(variant),
                GameRules {
                    max_plies: 150,
                    impasse: ImpasseRule::Declaration27,
                },
            );
            while game.outcome().is_none() {
                let mut moves = Vec::new();
                game.legal_moves(&mut moves);
                let pos = game.position().clone();
                let info = pos.check_info();
                // The checks generated alone are the legal moves that check, in order.
                let checking: Vec<_> = moves
                    .iter()
                    .copied()
                    .filter(|&mv| pos.after(mv).in_check())
                    .collect();
                assert_eq!(pos.checking_moves(&info).as_slice(), checking, "{pos}");
                for &mv in &moves {
                    let after = pos.after(mv);
                    assert_eq!(pos.gives_check(mv), after.in_check(), "{mv} in {pos}");
                    assert_eq!(
                        pos.gives_check_with(&info, mv),
                        after.in_check(),
                        "{mv} in {pos}"
                    );
                    assert_eq!(pos.key_after(mv), after.key(), "{mv} in {pos}");
                    checks += usize::from(after.in_check());
                    if !after.in_check() {
                        // A king step is among the legal replies exactly when it says so.
                        let king = after.king_square(after.side_to_move());
                        let steps = after.legal_moves().iter().any(|m| m.from() == Some(king));
                        assert_eq!(pos.king_can_step_after(mv), steps, "{mv} in {pos}");
                        if pos.other_side_can_move_after(mv) {
                            assert!(after.has_legal_move(), "{mv} in {pos}");
                        }
                    }
                    let _ = game.outcome_after(mv);
                }
                game.play_unchecked(pick(&mut rng, &moves));
            }
        }
    }
    assert!(checks > 500, "{checks} checking moves seen");
}

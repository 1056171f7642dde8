//! CSA and KIF records.

use shogi_rules::kifu::{Record, from_csa, kif_move, to_csa, to_kif};
use shogi_rules::{Color, Position, Variant};
use shogi_testkit::xorshift;

fn random_game(seed: u64, start: Position, plies: usize) -> Record {
    let mut rng = seed | 1;
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let ms = pos.legal_moves();
        if ms.is_empty() {
            break;
        }
        xorshift(&mut rng);
        let mv = ms[(rng % ms.len() as u64) as usize];
        pos.play_unchecked(mv);
        moves.push(mv);
    }
    Record {
        start,
        moves,
        end: Some("TORYO".into()),
        names: [Some("sente".into()), None],
    }
}

#[test]
fn csa_round_trip_random_games() {
    for seed in 1..40u64 {
        let start = if seed % 3 == 0 {
            Position::handicap("2-piece").unwrap()
        } else if seed % 3 == 1 {
            Position::startpos(Variant::Shogi)
        } else {
            Position::from_sfen(
                Variant::Shogi,
                "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",
            )
            .unwrap()
        };
        let rec = random_game(seed * 7919, start, 150);
        let text = to_csa(&rec).unwrap();
        let back = from_csa(&text).unwrap();
        assert_eq!(back.moves, rec.moves, "{text}");
        assert_eq!(back.end.as_deref(), Some("TORYO"));
        assert_eq!(back.names[0].as_deref(), Some("sente"));
        // Start positions agree up to the move number.
        let a = back.start.to_sfen();
        let b = rec.start.to_sfen();
        assert_eq!(a.rsplit_once(' ').unwrap().0, b.rsplit_once(' ').unwrap().0);
        // KIF export works on the same game.
        let kif = to_kif(&rec).unwrap();
        assert!(kif.lines().count() >= rec.moves.len() + 5);
    }
}

#[test]
fn csa_import_standard_text() {
    let text = "V2.2\nN+Alice\nN-Bob\n'comment\nPI\n+\n+7776FU\nT3\n-3334FU\n+8822UM\n-3122GI\n+0045KA\n%TORYO\n";
    let rec = from_csa(text).unwrap();
    let usi: Vec<String> = rec.moves.iter().map(|m| m.to_string()).collect();
    assert_eq!(usi, ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]);
    assert_eq!(rec.names[1].as_deref(), Some("Bob"));
    // Handicap: PI with the rook and bishop removed, White to move.
    let h = from_csa("PI82HI22KA\n-\n-5142OU\n%CHUDAN\n").unwrap();
    assert_eq!(h.start.side_to_move(), Color::White);
    assert_eq!(
        h.start.to_sfen(),
        Position::handicap("2-piece").unwrap().to_sfen()
    );
    assert_eq!(h.moves.len(), 1);
    // Errors name the line.
    let e = from_csa("PI\n+\n+7775FU\n").unwrap_err().to_string();
    assert!(e.contains("line 3"), "{e}");
    assert!(from_csa("PI\n+\n+7776XX\n").is_err());
}

#[test]
fn csa_hand_counts_past_255_are_an_error() {
    // 256 pawns in hand wrapped a u8 counter (a panic in debug, 0 pawns in release).
    let board = "P1-KY-KE-GI-KI-OU-KI-GI-KE-KY\nP2 * -HI *  *  *  *  * -KA * \nP9+KY+KE+GI+KI+OU+KI+GI+KE+KY\n";
    for n in [255usize, 256, 300] {
        let text = format!("{board}P+{}\n+\n+1918KY\n", "00FU".repeat(n));
        let err = from_csa(&text).unwrap_err().to_string();
        if n > 255 {
            assert!(err.contains("too many hand pieces"), "{n}: {err}");
        } else {
            assert!(!err.contains("too many hand pieces"), "{n}: {err}");
        }
    }
}

#[test]
fn kif_notation() {
    let mut pos = Position::startpos(Variant::Shogi);
    let mut prev = None;
    let mut out = Vec::new();
    for m in ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"] {
        let mv = pos.parse_usi_move(m).unwrap();
        out.push(kif_move(&pos, mv, prev));
        prev = Some(mv.to());
        pos.play_unchecked(mv);
    }
    assert_eq!(
        out,
        [
            "７六歩(77)",
            "３四歩(33)",
            "２二角成(88)",
            "同　銀(31)",
            "４五角打"
        ]
    );
    let p = Position::from_sfen(Variant::Shogi, "4k4/9/9/2S6/9/9/9/9/4K4 b - 1").unwrap();
    let mv = p.parse_usi_move("7d7c").unwrap();
    assert_eq!(kif_move(&p, mv, None), "７三銀不成(74)");
}

//! Property tests over random playouts and arbitrary parser input.

use proptest::prelude::*;
use shogi_rules::{Move, Position, Variant};
use shogi_testkit::pick;

/// Plays a random game and checks invariants at every ply.
fn playout(variant: Variant, seed: u64, plies: usize) {
    let mut rng = seed | 1;
    let mut pos = Position::startpos(variant);
    for _ in 0..plies {
        let moves = pos.legal_moves();
        // No duplicates.
        let mut v: Vec<u16> = moves.iter().map(|m| m.to_u16()).collect();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), moves.len(), "duplicate moves in {pos}");
        assert_eq!(pos.has_legal_move(), !moves.is_empty(), "{pos}");
        if moves.is_empty() {
            break;
        }
        let us = pos.side_to_move();
        for &mv in moves.iter() {
            // Own king never left in check; parse(display) is the identity.
            let after = pos.after(mv);
            assert!(
                after
                    .attackers_to(after.king_square(us), us.flip())
                    .is_empty(),
                "{mv} in {pos}"
            );
            assert_eq!(after.in_check(), pos.gives_check(mv));
            assert_eq!(pos.parse_usi_syntax(&mv.to_string()), Some(mv));
            assert_eq!(Move::from_u16(mv.to_u16()), Some(mv));
        }
        let mv = pick(&mut rng, &moves);
        assert!(pos.is_legal(mv));
        let mut p2 = pos.clone();
        p2.play(mv).unwrap();
        pos.play_unchecked(mv);
        assert_eq!(p2, pos);
        // Incremental key equals the key recomputed from scratch; SFEN round trip.
        assert_eq!(pos.key(), pos.key_from_scratch(), "{pos}");
        let sfen = pos.to_sfen();
        let back = Position::from_sfen(variant, &sfen).unwrap();
        assert_eq!(back.to_sfen(), sfen);
        assert_eq!(back.key(), pos.key());
        assert_eq!(back.in_check(), pos.in_check());
        assert_eq!(back, pos);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_playouts_shogi(seed in any::<u64>()) {
        playout(Variant::Shogi, seed, 160);
    }

    #[test]
    fn random_playouts_minishogi(seed in any::<u64>()) {
        playout(Variant::Minishogi, seed, 100);
    }

    #[test]
    fn sfen_parser_never_panics(s in ".{0,120}") {
        let _ = Position::from_sfen(Variant::Shogi, &s);
        let _ = Position::from_sfen(Variant::Minishogi, &s);
    }

    #[test]
    fn sfen_parser_never_panics_structured(
        s in "[lnsgkrbpLNSGKRBP+1-9/]{0,40} [bwx] [-0-9PLNSGBRKplnsgbrk]{0,12} [0-9]{0,4}"
    ) {
        for v in [Variant::Shogi, Variant::Minishogi] {
            if let Ok(p) = Position::from_sfen(v, &s) {
                let again = Position::from_sfen(v, &p.to_sfen()).unwrap();
                prop_assert_eq!(again.to_sfen(), p.to_sfen());
                let _ = p.legal_moves();
            }
        }
    }

    #[test]
    fn sfen_parser_never_panics_bytes(b in proptest::collection::vec(any::<u8>(), 0..100)) {
        let s = String::from_utf8_lossy(&b);
        let _ = Position::from_sfen(Variant::Shogi, &s);
    }

    /// KIF, KI2 and CSA readers on text made of their own pieces: an error at worst.
    #[test]
    fn record_readers_never_panic(
        s in "(▲|△|同|　| |[１-９]|[一-九]|歩|香|桂|銀|金|角|飛|玉|と|成香|龍|馬|右|左|直|上|引|寄|打|成|不成|\\(|\\)|[1-9]|\n|まで|手で|先手の勝ち|手合割：|その他|\\||v|・){0,60}"
    ) {
        let _ = shogi_rules::kifu::from_ki2(&s);
        let _ = shogi_rules::kifu::from_kif(&s);
        let _ = shogi_rules::kifu::from_csa(&s);
    }

    #[test]
    fn usi_parser_never_panics(s in ".{0,8}", t in "[1-9a-iPLNSGBRK*+]{0,6}") {
        let p = Position::startpos(Variant::Shogi);
        let m = Position::startpos(Variant::Minishogi);
        for x in [&s, &t] {
            let _ = p.parse_usi_move(x);
            let _ = m.parse_usi_move(x);
        }
    }
}

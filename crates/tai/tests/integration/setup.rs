//! The catalogue and the setup: piece counts, point symmetry, the royal set, and the
//! text form round-trips (and refuses malformed text without panicking).

use std::collections::HashMap;

use shogi_game::Color;
use shogi_tai::{Catalogue, PIECES_PER_SIDE, Piece, Position, SETUP_KINDS, Square};

#[test]
fn the_catalogue_loads_and_is_consistent() {
    let cat = Catalogue::get();
    assert_eq!(cat.len(), 101);
    assert_eq!(
        cat.kinds().iter().filter(|k| k.in_setup).count(),
        SETUP_KINDS
    );
    assert_eq!(
        cat.kinds().iter().map(|k| k.per_side).sum::<u32>(),
        PIECES_PER_SIDE
    );
    let royals: Vec<&str> = cat
        .all()
        .filter(|k| k.is_royal())
        .map(|k| k.abbr())
        .collect();
    assert_eq!(royals, ["E", "CP"]);
    // A few promotions the seed states in words.
    let promo = |a: &str| cat.by_abbr(a).unwrap().promotes_to().map(|k| k.abbr());
    assert_eq!(promo("DE"), Some("CP"), "drunk elephant -> crown prince");
    assert_eq!(promo("DV"), Some("TK"), "deva -> teaching king");
    assert_eq!(promo("DSp"), Some("BSp"), "dark spirit -> buddhist spirit");
    assert_eq!(promo("E"), None, "the emperor does not promote");
    assert_eq!(promo("HM"), Some("G"), "hook mover -> gold");
    assert_eq!(promo("P"), None, "the seed's pawn does not promote");
    // Promoted-only kinds have no setup count and nothing promotes into a setup-only
    // chain that could loop.
    for k in cat.all() {
        if let Some(p) = k.promotes_to() {
            assert_ne!(p, k, "{} promotes to itself", k.abbr());
        }
    }
    // Lookup ignores case; bad data is refused with a reason.
    assert_eq!(cat.by_abbr("lgn"), cat.by_abbr("LGn"));
    assert!(Catalogue::parse("[[piece]]\nabbr = \"X\"").is_err());
}

#[test]
fn the_setup_has_177_pieces_a_side_and_is_point_symmetric() {
    let pos = Position::startpos();
    let cat = Catalogue::get();
    for color in Color::ALL {
        let mut counts: HashMap<&str, u32> = HashMap::new();
        for (_, p) in pos.pieces().filter(|(_, p)| p.color == color) {
            assert!(!p.promoted);
            *counts.entry(p.kind.abbr()).or_default() += 1;
        }
        assert_eq!(counts.values().sum::<u32>(), PIECES_PER_SIDE, "{color:?}");
        assert_eq!(counts.len(), SETUP_KINDS, "{color:?}");
        for k in cat.kinds() {
            assert_eq!(
                counts.get(k.abbr.as_str()).copied().unwrap_or(0),
                k.per_side,
                "{color:?} {}",
                k.abbr
            );
        }
        // One emperor and one crown prince.
        let royals: Vec<&str> = pos.royals(color).map(|(_, p)| p.kind.abbr()).collect();
        assert_eq!(royals.len(), 2, "{color:?}: {royals:?}");
        assert!(royals.contains(&"E") && royals.contains(&"CP"));
    }
    // Point symmetry: the rotation of every square holds the same kind for the other side.
    for sq in Square::all() {
        let a = pos.piece(sq);
        let b = pos.piece(sq.rotate());
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                assert_eq!(a.kind, b.kind, "{sq}");
                assert_eq!(a.color, b.color.flip(), "{sq}");
            }
            _ => panic!("{sq} and {} differ", sq.rotate()),
        }
    }
    // Black's emperor stands on its back rank (y), file 13, the centre.
    let e = pos.royals(Color::Black).find(|(_, p)| p.kind.abbr() == "E");
    assert_eq!(e.map(|(sq, _)| sq.to_string()), Some("13y".into()));
    // Ranks i..p (the middle nine... minus the go-betweens' ranks) are empty.
    for row in 9..=15 {
        for col in 0..25 {
            assert!(pos.piece(Square::new(row, col).unwrap()).is_none());
        }
    }
}

#[test]
fn squares_parse_and_print() {
    for sq in Square::all() {
        assert_eq!(Square::parse(&sq.to_string()), Some(sq));
    }
    assert_eq!(Square::parse("25a"), Square::new(0, 0));
    assert_eq!(Square::parse("1y"), Square::new(24, 24));
    for bad in [
        "", "0a", "26a", "1z", "a", "13", "013m", "13mm", "-1a", "1A",
    ] {
        assert_eq!(Square::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn the_text_form_round_trips() {
    let start = Position::startpos();
    let text = start.to_sfen();
    assert!(text.ends_with(" b - 1"), "{text}");
    assert!(text.contains("[DE]") && text.contains("[de]"), "{text}");
    assert_eq!(Position::from_sfen(&text).unwrap(), start);
    // A promoted piece and White to move.
    let mut pos = start.clone();
    let cat = Catalogue::get();
    let sq = Square::parse("13m").unwrap();
    pos.set(
        sq,
        Some(Piece {
            kind: cat.by_abbr("G").unwrap(),
            color: Color::White,
            promoted: true,
        }),
    );
    pos.set_side_to_move(Color::White);
    let text = pos.to_sfen();
    assert!(text.contains("+g"), "{text}");
    assert_eq!(Position::from_sfen(&text).unwrap(), pos);
    let empty = Position::empty().to_sfen();
    assert_eq!(empty, format!("{} b - 1", vec!["25"; 25].join("/")));
    assert_eq!(Position::from_sfen(&empty).unwrap(), Position::empty());
}

#[test]
fn malformed_text_is_refused_with_a_reason_never_a_panic() {
    let good = Position::startpos().to_sfen();
    let cases = [
        ("", "4 fields"),
        ("25/25 b - 1", "25"),
        (&good.replacen("[DE]", "[XX]", 1) as &str, "XX"),
        (&good.replacen(" b ", " x ", 1), "side"),
        (&good.replacen(" - ", " P ", 1), "hand"),
        (&good.replacen(" 1", " 0", 1), "move number"),
        (&good.replacen("25/", "24/", 1), "24 files"),
        (&good.replacen("25/", "26/", 1), "26"),
        (&good.replacen("[DE]", "[DE", 1), "DE"),
        (&good.replacen("[DE]", "[De]", 1), "rank"),
    ];
    for (text, needle) in cases {
        let err = Position::from_sfen(text).expect_err(text).to_string();
        assert!(err.contains(needle), "{text:?}: {err}");
    }
    // Every truncation and every single-byte corruption of the start position: an error
    // or a position, never a panic.
    for cut in (0..good.len()).step_by(7) {
        let _ = Position::from_sfen(&good[..cut]);
    }
    let bytes = good.as_bytes();
    let replacements = [b'+', b'[', b']', b'9', b'/', b' ', b'q'];
    for (i, replacement) in (0..bytes.len()).step_by(5).zip(replacements.iter().cycle()) {
        let mut b = bytes.to_vec();
        b[i] = *replacement;
        let _ = Position::from_sfen(&String::from_utf8_lossy(&b));
    }
}

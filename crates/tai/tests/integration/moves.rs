//! Every kind's moves against an oracle that does not share the move generator's code:
//! a small Betza reader written here, that decides for each target square whether the
//! Betza allows it (the generator instead enumerates from compiled tables), and
//! hand-worked cases for the multi-leg pieces (lion, lion dog, hook movers, horned
//! falcon, soaring eagle, emperor).

use std::collections::BTreeSet;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shogi_game::{Color, Game};
use shogi_tai::{Catalogue, Piece, PieceKind, Position, SIZE, Square, TaiGame, TaiMove, TaiRules};

/// One Betza term: modifier text (brackets kept), atom, range (0 = unlimited).
struct Term {
    mods: String,
    atom: char,
    range: i32,
}

fn terms(betza: &str) -> Vec<Term> {
    let mut out = Vec::new();
    let mut mods = String::new();
    let mut chars = betza.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_uppercase() {
            let mut range = 0;
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                range = range * 10 + d as i32;
                chars.next();
            }
            out.push(Term {
                mods: std::mem::take(&mut mods),
                atom: c,
                range,
            });
        } else {
            mods.push(c);
        }
    }
    out
}

/// The kinds whose Betza is a plain list of leapers and riders.
fn is_simple(betza: &str) -> bool {
    !betza.is_empty() && !betza.contains('a') && !betza.contains('m') && !betza.contains('U')
}

/// Whether a term allows the unit direction `(v, h)` (v: -1 forward, h: -1 left, in
/// Black's frame).
fn term_allows(term: &Term, v: i32, h: i32) -> bool {
    let vname = match v {
        -1 => "f",
        1 => "b",
        _ => "",
    };
    let hname = match h {
        -1 => "l",
        1 => "r",
        _ => "",
    };
    let diagonal = v != 0 && h != 0;
    let family_ok = match term.atom {
        'W' | 'R' | 'D' => !diagonal,
        'F' | 'B' | 'A' => diagonal,
        _ => true,
    };
    if !family_ok {
        return false;
    }
    if term.mods.is_empty() {
        return true;
    }
    // Bracketed pairs name one diagonal each; the rest are single letters.
    let mut singles = String::new();
    let mut rest = term.mods.as_str();
    while let Some(open) = rest.find('[') {
        singles.push_str(&rest[..open]);
        let close = rest.find(']').unwrap();
        if diagonal && rest[open + 1..close] == format!("{vname}{hname}") {
            return true;
        }
        rest = &rest[close + 1..];
    }
    singles.push_str(rest);
    let singles = singles.replace('v', "fb").replace('s', "lr");
    if diagonal {
        match term.atom {
            // On a diagonal atom a letter picks both diagonals on its side.
            'F' | 'B' | 'A' => singles.contains(vname) || singles.contains(hname),
            // On K and Q only f/b reach the diagonals.
            _ => singles.contains(vname),
        }
    } else {
        singles.contains(vname) && !vname.is_empty() || singles.contains(hname) && !hname.is_empty()
    }
}

/// Whether the simple Betza lets a Black piece on `from` reach `to` on `board`.
fn oracle_reaches(betza: &str, board: &Position, from: Square, to: Square, color: Color) -> bool {
    let sign = if color == Color::Black { 1 } else { -1 };
    let (dr, dc) = (
        sign * (to.row() - from.row()),
        sign * (to.col() - from.col()),
    );
    if let Some(p) = board.piece(to)
        && p.color == color
    {
        return false;
    }
    terms(betza).iter().any(|t| {
        match t.atom {
            'N' => {
                let forward_narrow = dr == -2 && dc.abs() == 1;
                let any = (dr.abs(), dc.abs()) == (2, 1) || (dr.abs(), dc.abs()) == (1, 2);
                if t.mods == "ff" {
                    forward_narrow
                } else {
                    t.mods.is_empty() && any
                }
            }
            'W' | 'F' | 'K' | 'D' | 'A' => {
                let dist = if matches!(t.atom, 'D' | 'A') { 2 } else { 1 };
                let aligned = (dr.abs() == dist || dr == 0) && (dc.abs() == dist || dc == 0);
                aligned && (dr, dc) != (0, 0) && term_allows(t, dr.signum(), dc.signum())
            }
            _ => {
                let n = dr.abs().max(dc.abs());
                let aligned = (dr == 0 || dc == 0 || dr.abs() == dc.abs()) && n > 0;
                if !aligned
                    || (t.range > 0 && n > t.range)
                    || !term_allows(t, dr.signum(), dc.signum())
                {
                    return false;
                }
                // Every square strictly between must be empty.
                (1..n).all(|k| {
                    let sq = Square::new(
                        from.row() + sign * dr.signum() * k,
                        from.col() + sign * dc.signum() * k,
                    )
                    .unwrap();
                    board.piece(sq).is_none()
                })
            }
        }
    })
}

fn moves_of(game: &TaiGame, from: Square) -> Vec<TaiMove> {
    let mut all = Vec::new();
    game.legal_moves(&mut all);
    all.into_iter().filter(|m| m.from() == from).collect()
}

fn targets(moves: &[TaiMove]) -> BTreeSet<String> {
    moves.iter().map(|m| m.to().to_string()).collect()
}

fn kind(abbr: &str) -> PieceKind {
    Catalogue::get().by_abbr(abbr).unwrap()
}

/// A board with both royals tucked in the corners (so the game is not over) and
/// `density` random blockers of both colours.
fn scattered(rng: &mut StdRng, density: f64) -> Position {
    let mut pos = Position::empty();
    let pawn = kind("P");
    for sq in Square::all() {
        if rng.random_bool(density) {
            let color = if rng.random_bool(0.5) {
                Color::Black
            } else {
                Color::White
            };
            pos.set(sq, Some(Piece::new(pawn, color)));
        }
    }
    pos.set(
        Square::parse("1a").unwrap(),
        Some(Piece::new(kind("CP"), Color::White)),
    );
    pos.set(
        Square::parse("25y").unwrap(),
        Some(Piece::new(kind("CP"), Color::Black)),
    );
    pos
}

#[test]
fn every_simple_kind_matches_the_betza_reader() {
    let cat = Catalogue::get();
    let mut rng = StdRng::seed_from_u64(9);
    let squares = ["13m", "1y", "25a", "2b", "24m", "13x", "7c"];
    let mut checked = 0;
    for k in cat.all() {
        let betza = &k.info().betza;
        if !is_simple(betza) {
            continue;
        }
        for &density in &[0.0, 0.15, 0.4] {
            for &at in &squares {
                for color in Color::ALL {
                    let mut pos = scattered(&mut rng, density);
                    let from = Square::parse(at).unwrap();
                    pos.set(from, Some(Piece::new(k, color)));
                    pos.set_side_to_move(color);
                    let game = TaiGame::new(pos.clone(), TaiRules::default());
                    let moves = moves_of(&game, from);
                    assert!(
                        moves.iter().all(|m| m.vias().next().is_none()),
                        "{}",
                        k.abbr()
                    );
                    let got = targets(&moves);
                    assert_eq!(got.len(), moves.len(), "{}: duplicate moves", k.abbr());
                    let want: BTreeSet<String> = Square::all()
                        .filter(|&to| to != from && oracle_reaches(betza, &pos, from, to, color))
                        .map(|s| s.to_string())
                        .collect();
                    assert_eq!(
                        got,
                        want,
                        "{} ({betza}) on {at} for {color:?}, density {density}",
                        k.abbr()
                    );
                    checked += 1;
                }
            }
        }
    }
    // 88 of the 101 kinds are plain leapers and riders.
    assert_eq!(checked, 88 * 3 * squares.len() * 2);
}

/// A game with `pieces` (`+` before a kind's abbreviation: promoted) and each side's
/// royal out of the way where it has none, `to_move` to move.
fn game_with(pieces: &[(&str, &str, Color)], to_move: Color) -> TaiGame {
    let mut pos = Position::empty();
    for &(abbr, sq, color) in pieces {
        let (abbr, promoted) = abbr.strip_prefix('+').map_or((abbr, false), |a| (a, true));
        let piece = Piece {
            kind: kind(abbr),
            color,
            promoted,
        };
        pos.set(Square::parse(sq).unwrap(), Some(piece));
    }
    // Royals out of the way so the game is on.
    for (sq, color) in [("25y", Color::Black), ("1a", Color::White)] {
        let has_royal = pieces
            .iter()
            .any(|p| (p.0 == "CP" || p.0 == "E") && p.2 == color);
        if pos.piece(Square::parse(sq).unwrap()).is_none() && !has_royal {
            pos.set(
                Square::parse(sq).unwrap(),
                Some(Piece::new(kind("CP"), color)),
            );
        }
    }
    pos.set_side_to_move(to_move);
    TaiGame::new(pos, TaiRules::default())
}

/// Plays `text` (path notation), which must parse.
fn play(g: &mut TaiGame, text: &str) {
    let mv = g.parse_move(text).unwrap();
    g.play_unchecked(mv);
}

/// The abbreviation of the kind on `sq` and whether it is promoted.
fn piece_at(g: &TaiGame, sq: &str) -> (&'static str, bool) {
    let p = g.position().piece(Square::parse(sq).unwrap()).unwrap();
    (p.kind.abbr(), p.promoted)
}

fn texts(moves: &[TaiMove]) -> BTreeSet<String> {
    moves.iter().map(|m| m.to_string()).collect()
}

use Color::{Black, White};

#[test]
fn lion_jumps_double_captures_igui_and_pass() {
    let game = game_with(
        &[
            ("Ln", "13m", Black),
            ("P", "13l", White),
            ("P", "12m", Black),
        ],
        Black,
    );
    let moves = texts(&moves_of(&game, Square::parse("13m").unwrap()));
    // 24 squares within two, less the own pawn: 23 single moves; 8 second steps after
    // capturing on 13l (one of them back home: igui), less the own pawn's square: 7; pass.
    assert_eq!(moves.len(), 23 + 7 + 1, "{moves:?}");
    for m in [
        "13m13l13m",
        "13m13l13k",
        "13m13l12k",
        "13m13l14m",
        "13m13m",
        "13m13k",
        "13m11k",
    ] {
        assert!(moves.contains(m), "{m}");
    }
    assert!(
        !moves.contains("13m13l12m"),
        "a second step onto an own piece"
    );
    assert!(!moves.contains("13m12m"), "onto an own piece");
}

#[test]
fn lion_dog_three_steps_along_a_line() {
    let game = game_with(
        &[
            ("LD", "13m", Black),
            ("P", "13l", White),
            ("P", "13k", White),
        ],
        Black,
    );
    let moves = texts(&moves_of(&game, Square::parse("13m").unwrap()));
    let forward: BTreeSet<&str> = [
        "13m13l",       // capture on 1
        "13m13l13m",    // igui on 1
        "13m13k",       // jump 1, capture on 2
        "13m13l13k",    // capture on 1 and 2
        "13m13k13l",    // capture on 2 and back to 1 (capturing 1)
        "13m13j",       // jump both
        "13m13l13j",    // capture 1, jump 2
        "13m13k13j",    // jump 1, capture 2
        "13m13l13k13j", // capture all the way
    ]
    .into_iter()
    .collect();
    let got_forward: BTreeSet<&str> = moves
        .iter()
        .map(String::as_str)
        .filter(|m| {
            let mv = TaiMove::parse(m).unwrap();
            mv.to().file() == 13 && mv.to().row() < 12 || mv.vias().next().is_some()
        })
        .collect();
    assert_eq!(got_forward, forward);
    // 7 open lines x 3 squares, the forward line's 9, and a pass.
    assert_eq!(moves.len(), 21 + 9 + 1, "{moves:?}");
    // Q3 reading: a plain rider.
    let rules = TaiRules {
        lion_dog: shogi_tai::LionDog::Q3,
        ..TaiRules::default()
    };
    let q3 = TaiGame::new(game.position().clone(), rules);
    let q3_moves = texts(&moves_of(&q3, Square::parse("13m").unwrap()));
    assert_eq!(q3_moves.len(), 21 + 1);
}

#[test]
fn horned_falcon_and_soaring_eagle_have_lion_power_forward_only() {
    let game = game_with(
        &[
            ("HF", "13m", Black),
            ("P", "13l", White),
            ("P", "14n", White),
        ],
        Black,
    );
    let moves = texts(&moves_of(&game, Square::parse("13m").unwrap()));
    for m in ["13m13l", "13m13l13m", "13m13k", "13m13l13k", "13m14n"] {
        assert!(moves.contains(m), "{m} in {moves:?}");
    }
    assert!(!moves.contains("13m14n13m"), "no igui backwards");
    assert!(
        !moves.contains("13m13m"),
        "no pass: the forward square is occupied"
    );
    let eagle = game_with(&[("SE", "13m", Black), ("P", "12l", White)], Black);
    let moves = texts(&moves_of(&eagle, Square::parse("13m").unwrap()));
    for m in ["13m12l", "13m12l13m", "13m12l11k", "13m11k", "13m13m"] {
        assert!(moves.contains(m), "{m} in {moves:?}");
    }
}

#[test]
fn hook_movers_turn_once_around_blockers() {
    // On an empty board the hook mover reaches every square, the capricorn every square
    // of its colour.
    let hm = game_with(&[("HM", "13m", Black)], Black);
    // Every other square but the own prince on 25y (White's on 1a is a capture).
    assert_eq!(moves_of(&hm, Square::parse("13m").unwrap()).len(), 624 - 1);
    let ca = game_with(&[("Ca", "13m", Black)], Black);
    assert_eq!(moves_of(&ca, Square::parse("13m").unwrap()).len(), 312 - 1);
    // Boxed in by own pieces except one enemy: only that capture, no turn through it.
    let boxed = game_with(
        &[
            ("HM", "13m", Black),
            ("P", "13l", White),
            ("P", "12m", Black),
            ("P", "14m", Black),
            ("P", "13n", Black),
        ],
        Black,
    );
    assert_eq!(
        texts(&moves_of(&boxed, Square::parse("13m").unwrap())),
        ["13m13l".to_string()].into()
    );
    // Brute force over corners, written as sets: slide, then one perpendicular slide.
    let mut rng = StdRng::seed_from_u64(4);
    for (abbr, first, turns_diagonal) in [("HM", "R", false), ("Ca", "B", true), ("LGn", "B", true)]
    {
        for _ in 0..20 {
            let mut pos = scattered(&mut rng, 0.2);
            let from = Square::new(
                rng.random_range(0..SIZE as i32),
                rng.random_range(0..SIZE as i32),
            )
            .unwrap();
            pos.set(from, Some(Piece::new(kind(abbr), Black)));
            let game = TaiGame::new(pos.clone(), TaiRules::default());
            let got = targets(&moves_of(&game, from));
            let dirs: Vec<(i32, i32)> = if turns_diagonal {
                vec![(-1, -1), (-1, 1), (1, -1), (1, 1)]
            } else {
                vec![(-1, 0), (1, 0), (0, -1), (0, 1)]
            };
            let mut want = BTreeSet::new();
            let free = |sq: Square| pos.piece(sq).is_none();
            let enemy = |sq: Square| pos.piece(sq).is_some_and(|p| p.color == White);
            let ray = |start: Square,
                       d: (i32, i32),
                       want: &mut BTreeSet<String>,
                       corners: &mut Vec<Square>| {
                let mut k = 1;
                while let Some(sq) = Square::new(start.row() + d.0 * k, start.col() + d.1 * k) {
                    if free(sq) {
                        want.insert(sq.to_string());
                        corners.push(sq);
                    } else {
                        if enemy(sq) {
                            want.insert(sq.to_string());
                        }
                        break;
                    }
                    k += 1;
                }
            };
            for &d in &dirs {
                let mut corners = Vec::new();
                ray(from, d, &mut want, &mut corners);
                for c in corners {
                    for turn in [(d.1, -d.0), (-d.1, d.0)] {
                        ray(c, turn, &mut want, &mut Vec::new());
                    }
                }
            }
            if abbr == "LGn" {
                for d in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    if let Some(sq) = Square::new(from.row() + d.0, from.col() + d.1)
                        && (free(sq) || enemy(sq))
                    {
                        want.insert(sq.to_string());
                    }
                }
            }
            want.remove(&from.to_string());
            assert_eq!(got, want, "{abbr} ({first} hook) on {from}");
        }
    }
    // The peacock hooks only from its forward diagonals.
    let pc = game_with(&[("PC", "13m", Black)], Black);
    let pc_moves = targets(&moves_of(&pc, Square::parse("13m").unwrap()));
    assert!(
        pc_moves.contains("19o"),
        "forward-left, then back-left: {pc_moves:?}"
    );
    assert!(
        !pc_moves.contains("13q"),
        "no hook from a backward diagonal"
    );
}

#[test]
fn the_emperor_jumps_anywhere_and_captures_royals_only_undefended() {
    // White's prince on 5e, defended by a gold on 5d: the emperor may not take it.
    let game = game_with(
        &[
            ("E", "20t", Black),
            ("CP", "5e", White),
            ("G", "5d", White),
            ("P", "9i", White),
            ("CP", "25y", Black),
        ],
        Black,
    );
    let moves = texts(&moves_of(&game, Square::parse("20t").unwrap()));
    assert!(moves.contains("20t9i"), "a non-royal anywhere");
    assert!(!moves.contains("20t5e"), "a defended prince");
    let empties = 625 - 5;
    assert_eq!(
        moves.len(),
        empties + 2,
        "every empty square, the pawn and the gold"
    );
    // Undefended: capture allowed, and it ends the game (White's only royal).
    let mut game = game_with(
        &[
            ("E", "20t", Black),
            ("CP", "5e", White),
            ("CP", "25y", Black),
        ],
        Black,
    );
    let take = game.parse_move("20t5e").expect("an undefended prince");
    game.play_unchecked(take);
    assert_eq!(game.outcome().unwrap().winner, Some(Black));
    // White's emperor is the only defender, but Black's gold would retake on 5e: the
    // white emperor could not recapture there, so the prince is undefended.
    let game = game_with(
        &[
            ("E", "20t", Black),
            ("CP", "5e", White),
            ("E", "1a", White),
            ("G", "5f", Black),
            ("CP", "25y", Black),
        ],
        Black,
    );
    assert!(game.parse_move("20t5e").is_some());
    // Without Black's gold the white emperor recaptures: defended.
    let game = game_with(
        &[
            ("E", "20t", Black),
            ("CP", "5e", White),
            ("E", "1a", White),
            ("CP", "25y", Black),
        ],
        Black,
    );
    assert!(game.parse_move("20t5e").is_none());
}

#[test]
fn promotion_on_the_first_capture_only_and_contagion() {
    let game = game_with(
        &[
            ("R", "13m", Black),
            ("P", "13f", White),
            ("P", "13b", White),
        ],
        Black,
    );
    let mut g = game.clone();
    play(&mut g, "13m13f");
    assert_eq!(piece_at(&g, "13f"), ("G", true), "a rook becomes a gold");
    // A lion that double-captures promotes after the whole move.
    let mut g = game_with(
        &[
            ("Ln", "13m", Black),
            ("P", "13l", White),
            ("P", "13k", White),
        ],
        Black,
    );
    play(&mut g, "13m13l13k");
    assert_eq!(piece_at(&g, "13k"), ("FF", true));
    assert!(g.position().piece(Square::parse("13l").unwrap()).is_none());
    // A promoted furious fiend does not promote again; a piece without promotion neither.
    let mut g = game_with(&[("FK", "13m", Black), ("P", "13l", White)], Black);
    play(&mut g, "13m13l");
    assert_eq!(piece_at(&g, "13l").0, "FK");
    // Contagion: a promoted gold that takes a deva becomes a teaching king.
    let mut g = game_with(&[("+G", "13m", Black), ("DV", "13l", White)], Black);
    play(&mut g, "13m13l");
    assert_eq!(piece_at(&g, "13l").0, "TK");
    // A lion taking a deva then a dark spirit becomes a buddhist spirit (the last one).
    let mut g = game_with(
        &[
            ("Ln", "13m", Black),
            ("DV", "13l", White),
            ("DSp", "13k", White),
        ],
        Black,
    );
    play(&mut g, "13m13l13k");
    assert_eq!(piece_at(&g, "13k").0, "BSp");
    // A drunk elephant taking a deva becomes a prince: one more royal.
    let mut g = game_with(&[("DE", "13m", Black), ("DV", "13l", White)], Black);
    assert_eq!(g.royal_count(Black), 1);
    play(&mut g, "13m13l");
    assert_eq!(piece_at(&g, "13l").0, "CP");
    assert_eq!(g.royal_count(Black), 2);
    // The alternative trigger: promote only when capturing a promoted piece.
    let rules = TaiRules {
        promotion: shogi_tai::PromotionTrigger::CapturingPromoted,
        ..TaiRules::default()
    };
    let mut g = TaiGame::new(game.position().clone(), rules);
    play(&mut g, "13m13f");
    assert_eq!(piece_at(&g, "13f").0, "R");
}

#[test]
fn the_game_ends_when_every_royal_is_captured() {
    let mut g = game_with(
        &[
            ("R", "13m", Black),
            ("CP", "13f", White),
            ("E", "1f", White),
            ("P", "20a", White),
            ("CP", "25y", Black),
        ],
        Black,
    );
    play(&mut g, "13m13f");
    assert_eq!(g.royal_count(White), 1);
    assert!(g.outcome().is_none(), "the emperor is left");
    // Capturing the last royal wins at once.
    let mut g = game_with(
        &[("L", "1y", Black), ("E", "1f", White), ("CP", "25y", Black)],
        Black,
    );
    play(&mut g, "1y1f");
    let outcome = g.outcome().unwrap();
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Black), shogi_game::EndReason::RoyalsCaptured)
    );
}

#[test]
fn no_pass_right_after_a_pass_and_fourfold_repetition_draws() {
    let mut g = game_with(&[("Ln", "13m", Black), ("Ln", "13c", White)], Black);
    play(&mut g, "13m13m");
    assert!(g.parse_move("13c13c").is_none(), "two passes in a row");
    play(&mut g, "13c13d");
    assert!(g.parse_move("13m13m").is_some());
    // Shuffle back and forth: the start position recurs for the fourth time at ply 12.
    let mut g = game_with(&[("G", "13m", Black), ("G", "13c", White)], Black);
    let cycle = ["13m13l", "13c13d", "13l13m", "13d13c"];
    for (i, m) in cycle.iter().cycle().take(12).enumerate() {
        assert!(g.outcome().is_none(), "ply {i}");
        g.play_unchecked(g.parse_move(m).unwrap());
    }
    assert_eq!(
        g.outcome().unwrap().reason,
        shogi_game::EndReason::Repetition
    );
    // The strict rule forbids returning to an earlier position instead.
    let rules = TaiRules {
        repetition: shogi_tai::Repetition::Forbidden,
        ..TaiRules::default()
    };
    let mut g = TaiGame::new(
        game_with(&[("G", "13m", Black), ("G", "13c", White)], Black)
            .position()
            .clone(),
        rules,
    );
    for m in &cycle[..3] {
        g.play_unchecked(g.parse_move(m).unwrap());
    }
    assert!(
        g.parse_move("13d13c").is_none(),
        "would repeat the start position"
    );
}

#[test]
fn compound_lion_pieces_are_the_union_of_their_powers() {
    let count = |abbr: &str| {
        let g = game_with(&[(abbr, "13m", Black)], Black);
        moves_of(&g, Square::parse("13m").unwrap()).len()
    };
    // From the centre (12 squares to each edge) of a board holding only the princes on
    // the corners 25y (own: the back-left diagonal stops one short) and 1a (a capture):
    // furious fiend = lion (24 squares within two) + lion dog's third squares (8) + pass.
    assert_eq!(count("FF"), 24 + 8 + 1);
    // teaching king = queen (8 x 12 - 1) + pass (its lion-dog steps lie on the queen's
    // lines).
    assert_eq!(count("TK"), 95 + 1);
    // buddhist spirit = queen + the lion's 8 knight-shaped jumps + pass.
    assert_eq!(count("BSp"), 95 + 8 + 1);
    // great elephant = rook (48) + backward bishop (24 - 1) + forward diagonals up to 2
    // (4) + pass.
    assert_eq!(count("GE"), 48 + 23 + 4 + 1);
    // The furious fiend keeps both multi-captures: the lion's any-direction double and
    // the lion dog's triple along a line.
    let g = game_with(
        &[
            ("FF", "13m", Black),
            ("P", "13l", White),
            ("P", "13k", White),
            ("P", "12l", White),
        ],
        Black,
    );
    let moves = texts(&moves_of(&g, Square::parse("13m").unwrap()));
    for m in ["13m13l12l", "13m13l13k13j", "13m13k13l", "13m13l13m"] {
        assert!(moves.contains(m), "{m}");
    }
}

#[test]
fn a_promoted_piece_never_promotes_again_and_contagion_follows_the_path() {
    // A lion that is a promoted eastern barbarian keeps being a lion after capturing.
    let mut g = game_with(&[("+Ln", "13m", Black), ("P", "13l", White)], Black);
    play(&mut g, "13m13l");
    assert_eq!(piece_at(&g, "13l"), ("Ln", true));
    // A lion dog capturing a dark spirit on 13l (passed first) and a deva on 13k, then
    // stepping back to 13l: the deva is the last capture, so it becomes a teaching king.
    let mut g = game_with(
        &[
            ("LD", "13m", Black),
            ("DSp", "13l", White),
            ("DV", "13k", White),
        ],
        Black,
    );
    play(&mut g, "13m13k13l");
    assert_eq!(piece_at(&g, "13l").0, "TK");
    assert!(g.position().piece(Square::parse("13k").unwrap()).is_none());
}

/// `wins_material` (a Gumbel root's `gumbel_captures`): a capture no recapture answers,
/// one of a piece worth more than the capturer, and one of the last royal win material;
/// a defended pawn taken by a rook, a quiet move, and a rook's first capture of a pawn
/// (it promotes to a gold: tai's promotion on the first capture can cost more than the
/// pawn) do not. `exchange_gain` (the learner's `material_exchange`) is the best exchange
/// on any square: what it takes, less what the recaptures there win back.
#[test]
fn wins_material_is_the_static_exchange_on_the_capture_square() {
    use shogi_game::MaterialScale::Mobility;
    use shogi_tai::exchange::exchange_value;
    let value = |abbr| exchange_value(Piece::new(kind(abbr), Black));
    let exchange = |pieces: &[(&str, &str, Color)]| {
        let g = game_with(pieces, Black);
        i64::from(g.exchange_gain(Mobility).unwrap())
    };
    let capture = |pieces: &[(&str, &str, Color)], text: &str| {
        let g = game_with(pieces, Black);
        let mv = g.parse_move(text).unwrap();
        (g.wins_material(mv), g.capture_exchange(mv))
    };
    assert_eq!(kind("R").promotes_to(), Some(kind("G")));
    assert!(value("R") > value("G") && value("G") > value("P"));
    // A promoted rook promotes no more.
    let rook_takes_pawn = [("+R", "13m", Black), ("P", "13f", White)];
    assert_eq!(capture(&rook_takes_pawn, "13m13f"), (true, value("P")));
    assert_eq!(
        capture(&rook_takes_pawn, "13m13g"),
        (false, 0),
        "a quiet move"
    );
    let demoted = [("R", "13m", Black), ("P", "13f", White)];
    assert_eq!(
        capture(&demoted, "13m13f"),
        (false, value("P") + value("G") - value("R"))
    );
    let defended = [
        ("+R", "13m", Black),
        ("P", "13f", White),
        ("G", "13e", White),
    ];
    assert_eq!(
        capture(&defended, "13m13f"),
        (false, value("P") - value("R")),
        "the gold takes the rook back"
    );
    let pawn_takes_rook = [
        ("P", "13g", Black),
        ("R", "13f", White),
        ("G", "13e", White),
    ];
    assert_eq!(
        capture(&pawn_takes_rook, "13g13f"),
        (true, value("R") - value("P")),
        "a rook for a pawn (tai's pawn never promotes)"
    );
    let royal = [
        ("+R", "13m", Black),
        ("CP", "13f", White),
        ("G", "13e", White),
    ];
    assert!(capture(&royal, "13m13f").0, "the last royal");
    assert_eq!(exchange(&rook_takes_pawn), i64::from(value("P")));
    assert_eq!(exchange(&defended), 0, "no capture keeps anything");
    assert_eq!(
        exchange(&pawn_takes_rook),
        i64::from(value("R") - value("P"))
    );
}

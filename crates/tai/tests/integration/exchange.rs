//! Attacks and the static exchange (`shogi_tai::exchange`) against brute force: the
//! game's own move generation, asked on random positions for every capture that lands on
//! or passes through a square, and the exchange played out move by move with it.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use shogi_game::{Color, Game};
use shogi_tai::exchange::{ROYAL_VALUE, exchange_value, exchanges};
use shogi_tai::material::kind_value;
use shogi_tai::{
    Catalogue, EmperorCaptures, Piece, PieceKind, Position, Square, TaiGame, TaiMove, TaiRules,
    promoted_piece,
};

fn kind(abbr: &str) -> PieceKind {
    Catalogue::get().by_abbr(abbr).unwrap()
}

fn is_emperor(p: Piece) -> bool {
    p.kind == kind("E")
}

/// `pos` with `color` to move, under `rules`.
fn game_for(pos: &Position, color: Color, rules: TaiRules) -> TaiGame {
    let mut pos = pos.clone();
    pos.set_side_to_move(color);
    TaiGame::new(pos, rules)
}

/// `color`'s legal moves in `pos` by pieces other than the emperor (generated with the
/// emperor barred from capturing, which changes no other piece's moves).
fn non_emperor_moves(pos: &Position, color: Color, rules: TaiRules) -> Vec<TaiMove> {
    let rules = TaiRules {
        emperor: EmperorCaptures::Never,
        ..rules
    };
    let game = game_for(pos, color, rules);
    let mut moves = Vec::new();
    game.legal_moves(&mut moves);
    moves
        .into_iter()
        .filter(|m| !pos.piece(m.from()).is_some_and(is_emperor))
        .collect()
}

/// Brute force of `plain_attackers`: with an enemy pawn on `target`, the pieces with a
/// move that ends there and takes nothing on the way.
fn oracle_plain(pos: &Position, target: Square, color: Color, rules: TaiRules) -> Vec<u16> {
    let mut pos = pos.clone();
    pos.set(target, Some(Piece::new(kind("P"), !color)));
    let mut from: Vec<u16> = non_emperor_moves(&pos, color, rules)
        .into_iter()
        .filter(|m| m.to() == target && m.from() != target && m.vias().next().is_none())
        .map(|m| m.from().0)
        .collect();
    from.sort_unstable();
    from.dedup();
    from
}

/// Brute force of `attacked_by`: any move of `color` that lands on or passes through
/// `target`, or its emperor's capture under the rule (one level deep).
fn oracle_attacked(
    pos: &Position,
    target: Square,
    color: Color,
    rules: TaiRules,
    emperors: bool,
) -> bool {
    let reaches = non_emperor_moves(pos, color, rules)
        .iter()
        .any(|m| (m.to() == target && m.from() != target) || m.vias().any(|v| v == target));
    if reaches || !emperors {
        return reaches;
    }
    let Some((emperor, _)) = pos
        .pieces()
        .find(|&(sq, p)| p.color == color && is_emperor(p) && sq != target)
    else {
        return false;
    };
    let victim = pos.piece(target).unwrap();
    match rules.emperor {
        EmperorCaptures::Never => false,
        EmperorCaptures::UndefendedRoyals if !victim.kind.is_royal() => true,
        _ => {
            let mut after = pos.clone();
            after.set(target, after.piece(emperor));
            after.set(emperor, None);
            !oracle_attacked(&after, target, !color, rules, false)
        }
    }
}

/// Brute force of the exchange: `side` plays its least valuable legal plain capture on
/// `target` (valued promoted, ties to the lower square), the game's own move, and the
/// other side answers the same way; each may stop.
fn oracle_exchange(game: &TaiGame, target: Square, side: Color) -> i32 {
    let pos = game.position();
    let Some(victim) = pos.piece(target).filter(|p| p.color != side) else {
        return 0;
    };
    let mut to_move = game_for(pos, side, *game.rules());
    if game.side_to_move() == side {
        to_move = game.clone();
    }
    let mut moves = Vec::new();
    to_move.legal_moves(&mut moves);
    let best = moves
        .into_iter()
        .filter(|m| m.to() == target && m.from() != target && m.vias().next().is_none())
        .min_by_key(|m| {
            let mover = pos.piece(m.from()).unwrap();
            let after = promoted_piece(mover, &[victim], game.rules());
            (exchange_value(after), m.from().0)
        });
    let Some(mv) = best else { return 0 };
    let gain = exchange_value(victim);
    let mut after = to_move.clone();
    after.play_unchecked(mv);
    if after.royal_count(!side) == 0 {
        return gain;
    }
    (gain - oracle_exchange(&after, target, !side)).max(0)
}

/// A crowded 9x9 block around the centre of random pieces of every kind (royals
/// included), an emperor for each side somewhere on the board most of the time, and a
/// crown prince in each far corner so the game is on.
fn clustered(rng: &mut StdRng, density: f64) -> Position {
    let kinds: Vec<PieceKind> = Catalogue::get().all().collect();
    let mut pos = Position::empty();
    for r in 8..17 {
        for c in 8..17 {
            if rng.random_bool(density) {
                let k = *kinds.choose(rng).unwrap();
                let color = if rng.random_bool(0.5) {
                    Color::Black
                } else {
                    Color::White
                };
                let mut piece = Piece::new(k, color);
                piece.promoted = rng.random_bool(0.2);
                pos.set(Square::new(r, c).unwrap(), Some(piece));
            }
        }
    }
    // One emperor a side at most: the rules' emperor test is exact only then.
    let emperor = kind("E");
    for sq in Square::all() {
        if pos.piece(sq).is_some_and(|p| p.kind == emperor) {
            pos.set(sq, None);
        }
    }
    for (color, corner) in [(Color::Black, "25y"), (Color::White, "1a")] {
        pos.set(
            Square::parse(corner).unwrap(),
            Some(Piece::new(kind("CP"), color)),
        );
        if rng.random_bool(0.7) {
            let sq = loop {
                let sq = Square::new(rng.random_range(0..25), rng.random_range(0..25)).unwrap();
                if pos.piece(sq).is_none() {
                    break sq;
                }
            };
            pos.set(sq, Some(Piece::new(emperor, color)));
        }
    }
    pos
}

/// The start position after `plies` random moves.
fn played(rng: &mut StdRng, plies: usize) -> TaiGame {
    let mut game = TaiGame::startpos(TaiRules {
        max_plies: 0,
        ..TaiRules::default()
    });
    shogi_game::play_picked_moves(&mut game, plies, |n| rng.random_range(0..n));
    game
}

/// Checks every occupied square of `game` among `squares`, for the side that does not
/// own its piece; returns how many exchanges won something.
fn check_squares(game: &TaiGame, squares: &[Square], what: &str) -> usize {
    let pos = game.position();
    let rules = *game.rules();
    let map = game.attack_map();
    let mut won = std::collections::HashMap::new();
    exchanges(game, None, |sq, side, gain| {
        assert_eq!(Some(!side), pos.piece(sq).map(|p| p.color), "{what}: {sq}");
        assert!(won.insert(sq, gain).is_none(), "{what}: {sq} twice");
    });
    let mut winning = 0;
    for &sq in squares {
        let Some(p) = pos.piece(sq) else { continue };
        let side = !p.color;
        let mut got: Vec<u16> = game.plain_attackers(sq, side).iter().map(|s| s.0).collect();
        got.sort_unstable();
        assert_eq!(
            got,
            oracle_plain(pos, sq, side, rules),
            "{what}: attackers of {sq}"
        );
        let mut defenders: Vec<u16> = game
            .plain_attackers(sq, p.color)
            .iter()
            .map(|s| s.0)
            .collect();
        defenders.sort_unstable();
        assert_eq!(
            defenders,
            oracle_plain(pos, sq, p.color, rules),
            "{what}: defenders of {sq}"
        );
        assert_eq!(
            map.attackers(usize::from(sq.0), side),
            &got[..],
            "{what}: mapped attackers of {sq}"
        );
        assert_eq!(
            map.attackers(usize::from(sq.0), p.color),
            &defenders[..],
            "{what}: mapped defenders of {sq}"
        );
        assert_eq!(
            game.attacked_by(sq, side),
            oracle_attacked(pos, sq, side, rules, true),
            "{what}: whether {side:?} takes on {sq}\n{}",
            pos.to_sfen()
        );
        let fast = game.exchange_on(sq, side);
        assert_eq!(
            fast,
            oracle_exchange(game, sq, side),
            "{what}: {side:?}'s exchange on {sq}\n{}",
            pos.to_sfen()
        );
        assert_eq!(
            won.get(&sq).copied().unwrap_or(0),
            fast,
            "{what}: mapped exchange on {sq}"
        );
        winning += usize::from(fast > 0);
    }
    winning
}

#[test]
fn attacks_and_exchanges_match_brute_force_on_crowded_blocks() {
    let mut rng = StdRng::seed_from_u64(75);
    let block: Vec<Square> = (8..17)
        .flat_map(|r| (8..17).map(move |c| Square::new(r, c).unwrap()))
        .collect();
    let mut winning = 0;
    for (i, rule) in [
        EmperorCaptures::UndefendedRoyals,
        EmperorCaptures::UndefendedPieces,
        EmperorCaptures::Never,
    ]
    .into_iter()
    .cycle()
    .take(60)
    .enumerate()
    {
        let density = [0.3, 0.5, 0.7][i % 3];
        let pos = clustered(&mut rng, density);
        let rules = TaiRules {
            emperor: rule,
            max_plies: 0,
            ..TaiRules::default()
        };
        let game = TaiGame::new(pos, rules);
        winning += check_squares(&game, &block, &format!("block {i} ({rule:?}, {density})"));
    }
    // Not a vacuous comparison: many exchanges win something.
    assert!(winning > 200, "{winning} winning exchanges");
}

#[test]
fn attacks_and_exchanges_match_brute_force_in_played_games() {
    let mut rng = StdRng::seed_from_u64(76);
    let mut winning = 0;
    for plies in [100, 400, 800, 1200] {
        let game = played(&mut rng, plies);
        let squares: Vec<Square> = Square::all().collect();
        winning += check_squares(&game, &squares, &format!("after {plies} random plies"));
    }
    assert!(winning > 20, "{winning} winning exchanges");
}

/// The exchange's rules on hand-built squares: a free piece is won whole, a defended one
/// not with a more valuable capturer, a slider behind the capturer takes back (x-ray),
/// and the emperor takes any piece but is lost where the square is defended.
#[test]
fn the_exchange_counts_x_rays_promotions_and_the_emperor() {
    use Color::{Black, White};
    let game = |pieces: &[(&str, &str, Color)], to_move: Color| {
        let mut pos = Position::empty();
        for &(abbr, sq, color) in pieces {
            pos.set(
                Square::parse(sq).unwrap(),
                Some(Piece::new(kind(abbr), color)),
            );
        }
        for (sq, color) in [("25y", Black), ("1a", White)] {
            if pos.piece(Square::parse(sq).unwrap()).is_none() {
                pos.set(
                    Square::parse(sq).unwrap(),
                    Some(Piece::new(kind("CP"), color)),
                );
            }
        }
        pos.set_side_to_move(to_move);
        TaiGame::new(pos, TaiRules::default())
    };
    let value = |abbr: &str| exchange_value(Piece::new(kind(abbr), Black));
    // A piece's value once it has made its first capture (of a pawn: no contagion).
    let after_capture = |abbr: &str| {
        let pawn = Piece::new(kind("P"), White);
        exchange_value(promoted_piece(
            Piece::new(kind(abbr), Black),
            &[pawn],
            &TaiRules::default(),
        ))
    };
    let sq = |s: &str| Square::parse(s).unwrap();
    let free = game(&[("R", "13m", Black), ("P", "13f", White)], Black);
    assert_eq!(free.exchange_on(sq("13f"), Black), value("P"));
    let defended = game(
        &[
            ("R", "13m", Black),
            ("P", "13f", White),
            ("G", "13e", White),
        ],
        Black,
    );
    assert_eq!(
        defended.exchange_on(sq("13f"), Black),
        0,
        "a gold takes the new dragon back"
    );
    // A lion defended by a gold: rook takes (and promotes), gold takes back (and
    // promotes), and a second rook behind the first takes again through the square
    // the first left.
    let x_ray = game(
        &[
            ("R", "13m", Black),
            ("R", "13n", Black),
            ("Ln", "13f", White),
            ("G", "13e", White),
        ],
        Black,
    );
    let with_x_ray = (value("Ln") - (after_capture("R") - after_capture("G")).max(0)).max(0);
    let without = (value("Ln") - after_capture("R")).max(0);
    assert_ne!(with_x_ray, without, "the position tests the x-ray");
    assert_eq!(x_ray.exchange_on(sq("13f"), Black), with_x_ray);
    // The emperor takes an undefended piece anywhere, and no defended one.
    let emperor = game(&[("E", "20c", Black), ("G", "5t", White)], Black);
    assert_eq!(emperor.exchange_on(sq("5t"), Black), value("G"));
    let guarded = game(
        &[("E", "20c", Black), ("G", "5t", White), ("G", "5s", White)],
        Black,
    );
    assert_eq!(guarded.exchange_on(sq("5t"), Black), 0);
    // The exchanges' shortcut (an emperor that a plain capture takes back wins nothing)
    // needs a royal to outweigh any two other pieces.
    let most = Catalogue::get().all().map(kind_value).max().unwrap() as i32;
    assert!(ROYAL_VALUE > 2 * most, "{most}");
}

/// `static_loss_after` on random positions against its definition played out with the
/// brute-force exchange: the opponent's best exchange after the move, less what the move
/// takes and gains by promoting. Most moves of a crowded block lose nothing, some leave
/// a piece en prise and some win.
#[test]
fn the_loss_one_ply_later_is_the_opponents_best_exchange_less_the_take() {
    let mut rng = StdRng::seed_from_u64(78);
    let (mut losing, mut winning) = (0, 0);
    for i in 0..6 {
        let pos = clustered(&mut rng, [0.3, 0.5][i % 2]);
        for to_move in Color::ALL {
            let game = game_for(
                &pos,
                to_move,
                TaiRules {
                    max_plies: 0,
                    ..TaiRules::default()
                },
            );
            let mut moves = Vec::new();
            game.legal_moves(&mut moves);
            for &mv in moves.choose_multiple(&mut rng, 40) {
                // What the move took and what the mover became, read off the game.
                let mover = game.position().piece(mv.from()).unwrap();
                let total = |g: &TaiGame, c: Color| -> i32 {
                    g.position()
                        .pieces()
                        .filter(|(_, p)| p.color == c)
                        .map(|(_, p)| exchange_value(p))
                        .sum()
                };
                let mut after = game.clone();
                after.play_unchecked(mv);
                let promoted = after.position().piece(mv.to()).unwrap();
                let mut won = total(&game, !to_move) - total(&after, !to_move);
                if !promoted.kind.is_royal() {
                    won += exchange_value(promoted) - exchange_value(mover);
                }
                let want = if after.outcome().is_some() {
                    -won
                } else {
                    let best = shogi_tai::Square::all()
                        .filter(|&sq| {
                            after
                                .position()
                                .piece(sq)
                                .is_some_and(|p| p.color == to_move)
                        })
                        .map(|sq| oracle_exchange(&after, sq, !to_move))
                        .max()
                        .unwrap_or(0);
                    best - won
                };
                let got = game.static_loss_after(mv);
                assert_eq!(got, want, "{mv} in\n{}", game.position().to_sfen());
                losing += usize::from(got > 0);
                winning += usize::from(got < 0);
            }
        }
    }
    assert!(
        losing > 10 && winning > 0,
        "{losing} losing, {winning} winning"
    );
}

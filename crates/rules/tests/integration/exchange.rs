//! Static exchange evaluation on hand-made positions, each worked out by hand: a
//! hanging piece, a defended one, a recapture sequence, an x-ray behind the first
//! capturer, a king that may recapture only where nothing takes it back, a promotion.

use shogi_rules::{IMPASSE_VALUE, MOBILITY_VALUE, Position, Variant};

fn pos(sfen: &str) -> Position {
    Position::from_sfen(Variant::Shogi, sfen).unwrap_or_else(|e| panic!("{sfen}: {e}"))
}

/// The position of `sfen` and its move `usi`.
fn pos_and_move(sfen: &str, usi: &str) -> (Position, shogi_rules::Move) {
    let p = pos(sfen);
    let mv = p
        .parse_usi_move(usi)
        .unwrap_or_else(|e| panic!("{usi} in {sfen}: {e}"));
    (p, mv)
}

fn gain_of(sfen: &str, usi: &str) -> i32 {
    let (p, mv) = pos_and_move(sfen, usi);
    p.exchange_gain(mv, &MOBILITY_VALUE)
}

/// A gold nothing defends: the rook wins it whole, off the board (6) and into the hand
/// (6); 1 + 1 on the impasse count.
#[test]
fn a_hanging_piece_is_won_whole() {
    let sfen = "4k4/9/9/9/4g4/9/9/4R4/4K4 b - 1";
    assert_eq!(gain_of(sfen, "5h5e"), 12);
    assert_eq!(pos(sfen).best_exchange_gain(&MOBILITY_VALUE), 12);
    assert_eq!(pos(sfen).best_exchange_gain(&IMPASSE_VALUE), 2);
}

/// The same gold defended by a pawn: the rook takes it (+12) and the pawn takes the rook
/// (-32), so the capture loses 20 and the best exchange is to take nothing.
#[test]
fn a_defended_piece_is_not_worth_the_rook() {
    let sfen = "4k4/9/9/4p4/4g4/9/9/4R4/4K4 b - 1";
    assert_eq!(gain_of(sfen, "5h5e"), -20);
    assert_eq!(pos(sfen).best_exchange_gain(&MOBILITY_VALUE), 0);
}

/// A silver takes the defended gold (+12), the pawn takes the silver (-10) and the rook
/// the pawn (+2): 4, which beats the rook's own capture (-20). On the impasse count the
/// gold, silver and pawn are all 1 (a swing of 2 each): 2.
#[test]
fn the_least_valuable_attacker_goes_first() {
    let sfen = "4k4/9/9/4p4/4g4/5S3/9/4R4/4K4 b - 1";
    assert_eq!(gain_of(sfen, "4f5e"), 4);
    assert_eq!(pos(sfen).best_exchange_gain(&MOBILITY_VALUE), 4);
    assert_eq!(pos(sfen).best_exchange_gain(&IMPASSE_VALUE), 2);
}

/// The pawn takes a silver (+10); White's rook could take the pawn (+2), but the black
/// rook behind the pawn then takes White's rook (x-ray through the square the pawn
/// left), so White stops: 10. Without the x-ray it would be 8.
#[test]
fn a_slider_behind_the_capturer_joins() {
    let sfen = "4k4/4r4/9/9/4s4/4P4/9/4R4/4K4 b - 1";
    assert_eq!(gain_of(sfen, "5f5e"), 10);
    let no_xray = "4k4/4r4/9/9/4s4/4P4/9/9/4K4 b - 1";
    assert_eq!(gain_of(no_xray, "5f5e"), 8);
}

/// A gold takes the pawn in front of the king (+2). Alone, the king takes the gold back
/// (-12), so the capture loses 10; with a lance behind the gold, the king cannot
/// recapture and the pawn is won.
#[test]
fn a_king_recaptures_only_where_nothing_takes_it() {
    let guarded = "4k4/4p4/4G4/9/9/9/9/9/K3L4 b - 1";
    assert_eq!(gain_of(guarded, "5c5b"), 2);
    let alone = "4k4/4p4/4G4/9/9/9/9/9/K8 b - 1";
    assert_eq!(gain_of(alone, "5c5b"), -10);
    assert_eq!(pos(alone).best_exchange_gain(&MOBILITY_VALUE), 0);
}

/// A silver takes a pawn in the promotion zone: the pawn (2) plus the promotion's gain
/// (a promoted silver 6 against a silver 5) when it promotes.
#[test]
fn a_promotion_adds_its_gain() {
    let sfen = "4k4/9/4p4/4S4/9/9/9/9/4K4 b - 1";
    assert_eq!(gain_of(sfen, "5d5c"), 2);
    assert_eq!(gain_of(sfen, "5d5c+"), 3);
    assert_eq!(pos(sfen).best_exchange_gain(&MOBILITY_VALUE), 3);
    // Drops and quiet moves capture nothing.
    assert_eq!(gain_of(sfen, "5i5h"), 0);
}

/// The start position has no capture: nothing to win, for either side.
#[test]
fn nothing_to_take_at_the_start() {
    let p = Position::startpos(Variant::Shogi);
    assert_eq!(p.best_exchange_gain(&MOBILITY_VALUE), 0);
    assert_eq!(p.best_exchange_gain(&IMPASSE_VALUE), 0);
}

/// The threat on a square, for either side whoever is to move: Black (to move) wins
/// the undefended gold whole (12); White's gold would win the undefended rook whole
/// (16 off the board, 16 into the hand); nobody wins by taking its own piece or an
/// empty square, and a defended piece only by the least costly capture (4, the silver).
#[test]
fn capture_gain_is_the_threat_on_a_square_for_either_side() {
    use shogi_rules::{Color, Square};
    let sq = |s: &str| Square::from_usi(s, Variant::Shogi).unwrap();
    let p = pos("4k4/9/9/9/4g4/4R4/9/9/4K4 b - 1");
    assert_eq!(p.capture_gain(sq("5e"), Color::Black, &MOBILITY_VALUE), 12);
    assert_eq!(p.capture_gain(sq("5f"), Color::White, &MOBILITY_VALUE), 32);
    assert_eq!(p.capture_gain(sq("5f"), Color::Black, &MOBILITY_VALUE), 0);
    assert_eq!(p.capture_gain(sq("5e"), Color::White, &MOBILITY_VALUE), 0);
    assert_eq!(p.capture_gain(sq("5d"), Color::Black, &MOBILITY_VALUE), 0);
    let defended = pos("4k4/9/9/4p4/4g4/5S3/9/4R4/4K4 b - 1");
    assert_eq!(
        defended.capture_gain(sq("5e"), Color::Black, &MOBILITY_VALUE),
        4
    );
    // The pawn defending the gold is attacked by nothing of Black's.
    assert_eq!(
        defended.capture_gain(sq("5d"), Color::Black, &MOBILITY_VALUE),
        0
    );
}

fn loss_of(sfen: &str, usi: &str) -> i32 {
    let (p, mv) = pos_and_move(sfen, usi);
    p.static_loss_after(mv, &MOBILITY_VALUE)
}

/// Black's rook on 5e is attacked by a pawn nothing of Black's defends: a move that
/// ignores it loses the rook's whole swing (16 off the board, 16 into White's hand), a
/// rook move out of the attack loses nothing, and taking the pawn wins it (-2).
#[test]
fn static_loss_after_prices_an_ignored_threat() {
    let sfen = "4k4/9/9/4p4/4R4/9/9/9/4K4 b - 1";
    assert_eq!(loss_of(sfen, "5i4h"), 32);
    assert_eq!(loss_of(sfen, "5e4e"), 0);
    assert_eq!(loss_of(sfen, "5e5d"), -2);
}

/// A quiet move that puts a piece where a pawn takes it loses it; a promotion that
/// nothing attacks wins the promotion's gain (a dragon over a rook).
#[test]
fn static_loss_after_prices_a_hung_piece_and_a_promotion() {
    use shogi_rules::PieceKind;
    let sfen = "4k4/9/9/4p4/9/5G3/9/R8/4K4 b - 1";
    // The gold steps next to White's pawn's square of attack: 5e is attacked by 5d.
    assert_eq!(loss_of(sfen, "4f5e"), 12);
    assert_eq!(loss_of(sfen, "4f4e"), 0);
    let promotion = MOBILITY_VALUE[PieceKind::Dragon.index()] as i32
        - MOBILITY_VALUE[PieceKind::Rook.index()] as i32;
    assert!(promotion > 0);
    assert_eq!(loss_of(sfen, "9h9c+"), -promotion);
}

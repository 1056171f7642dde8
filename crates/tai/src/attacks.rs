//! Who attacks a square in tai shogi, found backwards from the square.
//!
//! Tai's attackers are not shogi's: lions and lion dogs capture on squares they pass,
//! hook movers turn a corner, and the emperor jumps anywhere and takes any non-royal
//! piece (a royal only where nothing can take it back). So each kind of power is walked
//! back from the target by its own walk, never by generating every move of every piece:
//! [`plain_attackers`] (moves that end on the square and take nothing on the way) and
//! [`attacked_by`] (any legal capture, also through the square or by the emperor: the
//! "defended" test of the emperor's rule, which [`emperor_moves`] asks for each piece it
//! may take). The static exchange ([`crate::exchange`]) is built on these.

use std::sync::LazyLock;

use shogi_game::Color;

use crate::betza::{KING_DIRECTIONS, Offset};
use crate::movegen::{TaiMove, is_emperor, mv, piece_moves, spec};
use crate::pieces::Catalogue;
use crate::position::{Piece, SIZE, SQUARES};
use crate::rules::{EmperorCaptures, TaiRules};

/// Every leap offset (Black's frame) any kind has, so a reverse lookup tries only those.
static LEAP_OFFSETS: LazyLock<Vec<Offset>> = LazyLock::new(|| {
    let mut offsets = Vec::new();
    for rules in [TaiRules::default(), q3_rules()] {
        for kind in Catalogue::get().all() {
            for &o in &spec(kind, &rules).leaps {
                if !offsets.contains(&o) {
                    offsets.push(o);
                }
            }
        }
    }
    offsets
});

fn q3_rules() -> TaiRules {
    TaiRules {
        lion_dog: crate::rules::LionDog::Q3,
        ..TaiRules::default()
    }
}

#[inline]
fn offset_from(sq: usize, (dr, dc): (i32, i32)) -> Option<usize> {
    let r = (sq / SIZE) as i32 + dr;
    let c = (sq % SIZE) as i32 + dc;
    ((0..SIZE as i32).contains(&r) && (0..SIZE as i32).contains(&c))
        .then(|| r as usize * SIZE + c as usize)
}

/// `d` as a board direction for `color` (White's pieces face the other way).
#[inline]
fn oriented(color: Color, (dr, dc): Offset) -> (i32, i32) {
    match color {
        Color::Black => (i32::from(dr), i32::from(dc)),
        Color::White => (-i32::from(dr), -i32::from(dc)),
    }
}

#[inline]
fn unit(d: Offset) -> (i32, i32) {
    (i32::from(d.0), i32::from(d.1))
}

/// `color`'s non-emperor piece on `sq`, if one stands there.
#[inline]
fn attacker_at(board: &[Option<Piece>], sq: usize, color: Color) -> Option<Piece> {
    board[sq].filter(|p| p.color == color && !is_emperor(p.kind))
}

/// Appends the squares of `color`'s pieces (the emperor aside) that can move to
/// `target` by a plain move: one that ends there and captures nothing on the way. The
/// board's piece on `target` is not looked at, so this answers "attacks" for an enemy
/// there and "defends" for a piece of `color`'s own. A piece with two such moves is
/// listed once.
pub(crate) fn plain_attackers(
    board: &[Option<Piece>],
    target: usize,
    color: Color,
    rules: &TaiRules,
    out: &mut Vec<u16>,
) {
    let start = out.len();
    let push = |sq: usize, out: &mut Vec<u16>| {
        if !out[start..].contains(&(sq as u16)) {
            out.push(sq as u16);
        }
    };
    // Steps and jumps: the piece `o` away backwards, if its kind has that leap.
    for &o in LEAP_OFFSETS.iter() {
        let (dr, dc) = oriented(color, o);
        if let Some(from) = offset_from(target, (-dr, -dc))
            && let Some(p) = attacker_at(board, from, color)
            && spec(p.kind, rules).leaps.contains(&o)
        {
            push(from, out);
        }
    }
    for e in KING_DIRECTIONS {
        let e = unit(e);
        // Slides: the first piece outwards, if it slides back this far.
        let mut k = 0;
        let mut at = target;
        while let Some(next) = offset_from(at, e) {
            k += 1;
            at = next;
            let Some(p) = board[at] else { continue };
            if p.color == color && !is_emperor(p.kind) {
                let back = (-e.0, -e.1);
                if spec(p.kind, rules)
                    .slides
                    .iter()
                    .any(|s| oriented(color, s.dir) == back && i32::from(s.max) >= k)
                {
                    push(at, out);
                }
            }
            break;
        }
        // The lion-dog lines: a straight jump over whatever stands between.
        let mut at = target;
        for k in 1..=3 {
            let Some(next) = offset_from(at, e) else {
                break;
            };
            at = next;
            if let Some(p) = attacker_at(board, at, color) {
                let back = (-e.0, -e.1);
                if spec(p.kind, rules)
                    .lines
                    .iter()
                    .any(|&(d, n)| oriented(color, d) == back && i32::from(n) >= k)
                {
                    push(at, out);
                }
            }
        }
    }
    hook_attackers(board, target, color, rules, |sq| push(sq, out));
}

/// Calls `found` with the square of every piece of `color` that reaches `target` by a
/// hook move: along its first leg through empty squares to an empty corner, a 90° turn,
/// then through empty squares to `target`.
fn hook_attackers(
    board: &[Option<Piece>],
    target: usize,
    color: Color,
    rules: &TaiRules,
    mut found: impl FnMut(usize),
) {
    for p in KING_DIRECTIONS {
        // `p`: the second leg's direction, from the corner towards the target.
        let p = unit(p);
        let mut corner = target;
        while let Some(c) = offset_from(corner, (-p.0, -p.1)) {
            corner = c;
            if board[corner].is_some() {
                break;
            }
            // The first leg came along `f`, perpendicular to `p`, from the first piece
            // behind the corner.
            for f in [(p.1, -p.0), (-p.1, p.0)] {
                let mut at = corner;
                while let Some(b) = offset_from(at, (-f.0, -f.1)) {
                    at = b;
                    let Some(piece) = board[at] else { continue };
                    if piece.color == color
                        && !is_emperor(piece.kind)
                        && spec(piece.kind, rules)
                            .hooks
                            .iter()
                            .any(|&h| oriented(color, h) == f)
                    {
                        found(at);
                    }
                    break;
                }
            }
        }
    }
}

/// Whether `color` has a legal capture of the piece on `target` (which is not
/// `color`'s): a plain move, a lion's or lion dog's capture on the way, or its emperor
/// under the emperor's rule. `emperors: false` leaves the emperor out; the emperor's own
/// test looks one level deep, which is exact with one emperor a side.
pub(crate) fn attacked_by(
    board: &[Option<Piece>],
    target: usize,
    color: Color,
    rules: &TaiRules,
    emperors: bool,
) -> bool {
    let mut plain = Vec::new();
    plain_attackers(board, target, color, rules, &mut plain);
    if !plain.is_empty() {
        return true;
    }
    // Captures on the way: lion powers reach at most three squares.
    let (tr, tc) = ((target / SIZE) as i32, (target % SIZE) as i32);
    let mut moves = Vec::new();
    for r in (tr - 3).max(0)..=(tr + 3).min(SIZE as i32 - 1) {
        for c in (tc - 3).max(0)..=(tc + 3).min(SIZE as i32 - 1) {
            let sq = r as usize * SIZE + c as usize;
            let Some(p) = attacker_at(board, sq, color) else {
                continue;
            };
            let spec = spec(p.kind, rules);
            if !spec.area_lion && spec.lines.is_empty() {
                continue;
            }
            moves.clear();
            piece_moves(board, sq, p, spec, &mut moves);
            let through = |m: &TaiMove| {
                usize::from(m.to().0) == target || m.vias().any(|v| usize::from(v.0) == target)
            };
            if moves.iter().any(through) {
                return true;
            }
        }
    }
    emperors && emperor_may_take(board, target, color, rules)
}

/// Whether `color`'s emperor may take the piece on `target` under the emperor's rule.
pub(crate) fn emperor_may_take(
    board: &[Option<Piece>],
    target: usize,
    color: Color,
    rules: &TaiRules,
) -> bool {
    let Some(victim) = board[target] else {
        return false;
    };
    let Some(emperor) = (0..SQUARES).find(|&sq| {
        sq != target && board[sq].is_some_and(|p| p.color == color && is_emperor(p.kind))
    }) else {
        return false;
    };
    match rules.emperor {
        EmperorCaptures::Never => false,
        EmperorCaptures::UndefendedRoyals if !victim.kind.is_royal() => true,
        _ => {
            let mut after = board.to_vec();
            after[target] = after[emperor].take();
            !attacked_by(&after, target, !color, rules, false)
        }
    }
}

/// Appends the emperor's moves: every empty square, and the captures its rule allows.
pub(crate) fn emperor_moves(
    board: &[Option<Piece>],
    from: usize,
    piece: Piece,
    rules: &TaiRules,
    out: &mut Vec<TaiMove>,
) {
    let mut after: Option<Vec<Option<Piece>>> = None;
    for t in 0..SQUARES {
        if t == from {
            continue;
        }
        match board[t] {
            None => out.push(mv(from, &[], t)),
            Some(p) if p.color == piece.color => {}
            Some(p) => {
                let needs_test = match rules.emperor {
                    EmperorCaptures::Never => continue,
                    EmperorCaptures::UndefendedRoyals => p.kind.is_royal(),
                    EmperorCaptures::UndefendedPieces => true,
                };
                if needs_test {
                    let after = after.get_or_insert_with(|| {
                        let mut b = board.to_vec();
                        b[from] = None;
                        b
                    });
                    after[t] = Some(piece);
                    let defended = attacked_by(after, t, p.color, rules, true);
                    after[t] = Some(p);
                    if defended {
                        continue;
                    }
                }
                out.push(mv(from, &[], t));
            }
        }
    }
}

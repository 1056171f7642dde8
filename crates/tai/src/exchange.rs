//! Attacks and static exchange (SEE) for tai shogi.
//!
//! Tai's attackers are not shogi's: lions and lion dogs capture on squares they pass,
//! hook movers turn a corner, and the emperor jumps anywhere and takes any non-royal
//! piece (a royal only where nothing can take it back). So attacks are found backwards
//! from the target square, each kind of power by its own walk, and never by generating
//! every move of every piece:
//!
//! - [`TaiGame::plain_attackers`]: the pieces that can take on a square by a plain move
//!   (one that ends there and takes nothing on the way): steps and jumps, slides, the
//!   lion-dog lines' straight jumps, and hook moves;
//! - [`TaiGame::attacked_by`]: whether any legal capture reaches the square, also through
//!   it (a lion's or lion dog's capture on the way) or by the emperor: the "defended"
//!   test of the emperor's rule, which move generation asks for every royal it may take;
//! - [`TaiGame::exchange_on`]: what a side wins by the plain captures on one square and
//!   the plain recaptures that follow, each side taking with its least valuable piece
//!   (its value after the capture's promotion) and free to stop: shogi's static
//!   exchange, with the x-rays that a vacated square opens found by walking again;
//!   [`exchanges`] does it for every square of a position at once, over an
//!   [`AttackMap`].
//!
//! A royal counts [`ROYAL_VALUE`] here (its material value is 0: the last one lost ends
//! the game, and an exchange on a royal ends when the last one is taken).

use std::sync::LazyLock;

use shogi_game::{Color, Game};

use crate::betza::{KING_DIRECTIONS, Offset};
use crate::game::{TaiGame, promoted_piece};
use crate::material::kind_value;
use crate::movegen::{is_emperor, piece_moves, plain_reach, spec};
use crate::pieces::Catalogue;
use crate::position::{Piece, SIZE, SQUARES, Square};
use crate::rules::{EmperorCaptures, TaiRules};

/// What a royal piece (emperor, prince) counts in an exchange: more than any exchange of
/// other pieces on one square can win (a hook mover, the most valuable, is 80).
pub const ROYAL_VALUE: i32 = 1000;

/// A piece's value in an exchange: its material value ([`kind_value`]), or
/// [`ROYAL_VALUE`] for a royal.
pub fn exchange_value(piece: Piece) -> i32 {
    if piece.kind.is_royal() {
        ROYAL_VALUE
    } else {
        kind_value(piece.kind) as i32
    }
}

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
            let through = |m: &crate::TaiMove| {
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
fn emperor_may_take(
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

/// What `side` wins by taking the piece on `target` and the exchange of plain captures
/// that follows there (module docs): 0 when the square holds no piece of the other side,
/// no capture is possible, or every capture loses (a side may always decline).
/// `royals` are each side's royal counts (the exchange ends when a side's last royal is
/// taken). The board is left as it was.
pub(crate) fn exchange(
    board: &mut [Option<Piece>],
    target: usize,
    side: Color,
    rules: &TaiRules,
    royals: [u32; 2],
) -> i32 {
    let Some(victim) = board[target].filter(|p| p.color != side) else {
        return 0;
    };
    let Some((from, after)) = least_valuable_capture(board, target, side, victim, rules) else {
        return 0;
    };
    let gain = exchange_value(victim);
    let mut royals = royals;
    if victim.kind.is_royal() {
        royals[(!side).index()] -= 1;
        if royals[(!side).index()] == 0 {
            return gain;
        }
    }
    let mover = board[from].take().expect("the capturer");
    if after.kind.is_royal() && !mover.kind.is_royal() {
        royals[side.index()] += 1;
    }
    board[target] = Some(after);
    let reply = exchange(board, target, !side, rules, royals);
    board[target] = Some(victim);
    board[from] = Some(mover);
    (gain - reply).max(0)
}

/// The capture on `target` by `side`'s least valuable capturer, valued as it stands
/// there after the capture (promoted); ties go to the lower square. The emperor takes
/// last, when its rule lets it.
fn least_valuable_capture(
    board: &[Option<Piece>],
    target: usize,
    side: Color,
    victim: Piece,
    rules: &TaiRules,
) -> Option<(usize, Piece)> {
    let mut squares = Vec::new();
    plain_attackers(board, target, side, rules, &mut squares);
    let mut best: Option<(i32, usize, Piece)> = None;
    for sq in squares {
        let sq = usize::from(sq);
        let mover = board[sq].expect("an attacker");
        let after = promoted_piece(mover, &[victim], rules);
        let key = (exchange_value(after), sq);
        if best.is_none_or(|(v, s, _)| key < (v, s)) {
            best = Some((key.0, key.1, after));
        }
    }
    if best.is_none_or(|(v, _, _)| v >= ROYAL_VALUE) && emperor_may_take(board, target, side, rules)
    {
        let emperor = (0..SQUARES)
            .find(|&sq| board[sq].is_some_and(|p| p.color == side && is_emperor(p.kind)))
            .expect("an emperor");
        let after = promoted_piece(board[emperor].expect("the emperor"), &[victim], rules);
        let key = (exchange_value(after), emperor);
        if best.is_none_or(|(v, s, _)| key < (v, s)) {
            best = Some((key.0, key.1, after));
        }
    }
    best.map(|(_, sq, after)| (sq, after))
}

/// Each side's plain attacks on every square of one position, found by walking each
/// piece's moves forwards once ([`plain_reach`]), which costs about what generating both
/// sides' moves costs: for each square, the squares of the pieces that move there by a
/// plain move (attack it, or defend their own piece there). The emperor is not listed.
#[derive(Clone, Debug)]
pub struct AttackMap {
    /// Per colour: where each target square's attackers begin in `from`
    /// (`SQUARES + 1` offsets).
    start: [Vec<u32>; 2],
    /// Per colour: the attackers' squares, grouped by target, ascending.
    from: [Vec<u16>; 2],
}

impl AttackMap {
    /// The attacks of every piece on `board`.
    pub(crate) fn new(board: &[Option<Piece>], rules: &TaiRules) -> AttackMap {
        let mut pairs: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        for (sq, cell) in board.iter().enumerate() {
            let Some(p) = *cell else { continue };
            if is_emperor(p.kind) {
                continue;
            }
            let list = &mut pairs[p.color.index()];
            plain_reach(board, sq, p, spec(p.kind, rules), |t| {
                list.push((t as u32) << 16 | sq as u32);
            });
        }
        let mut start: [Vec<u32>; 2] = [vec![0; SQUARES + 1], vec![0; SQUARES + 1]];
        let mut from: [Vec<u16>; 2] = [Vec::new(), Vec::new()];
        for c in 0..2 {
            let list = &mut pairs[c];
            list.sort_unstable();
            list.dedup();
            for &pair in list.iter() {
                start[c][(pair >> 16) as usize + 1] += 1;
            }
            for t in 0..SQUARES {
                start[c][t + 1] += start[c][t];
            }
            from[c] = list.iter().map(|&pair| pair as u16).collect();
        }
        AttackMap { start, from }
    }

    /// The squares of `color`'s pieces that move to `target` by a plain move, ascending.
    pub fn attackers(&self, target: usize, color: Color) -> &[u16] {
        let c = color.index();
        &self.from[c][self.start[c][target] as usize..self.start[c][target + 1] as usize]
    }
}

/// Calls `found(square, side, gain)` for every occupied square where `side`, the other
/// side to the piece there, wins `gain > 0` by the exchange there ([`TaiGame::exchange_on`]): what a
/// side wins on each of its opponent's pieces, in one pass over the position; with
/// `only`, that side's gains alone.
///
/// The [`AttackMap`] settles most squares without an exchange: one no plain move
/// reaches is won only by the emperor, and only if no plain capture takes the emperor
/// back (a royal, worth more than anything it can take), so a square with a plain
/// defender that stays a non-royal when it takes is won by nobody who has no plain
/// attacker.
pub fn exchanges(game: &TaiGame, only: Option<Color>, mut found: impl FnMut(Square, Color, i32)) {
    let board = game.position().board();
    let rules = game.rules();
    let map = AttackMap::new(board, rules);
    let mut emperor: [Option<Piece>; 2] = [None, None];
    for p in board.iter().flatten() {
        if is_emperor(p.kind) {
            emperor[p.color.index()] = Some(*p);
        }
    }
    let royals = game.royal_counts();
    let mut scratch = board.to_vec();
    for (sq, cell) in board.iter().enumerate() {
        let Some(p) = *cell else { continue };
        let side = !p.color;
        if only.is_some_and(|only| only != side) {
            continue;
        }
        if map.attackers(sq, side).is_empty() {
            let Some(own_emperor) = emperor[side.index()] else {
                continue;
            };
            if rules.emperor == EmperorCaptures::Never {
                continue;
            }
            let loses_the_emperor = map.attackers(sq, p.color).iter().any(|&d| {
                let defender = board[usize::from(d)].expect("a defender");
                !promoted_piece(defender, &[own_emperor], rules)
                    .kind
                    .is_royal()
            });
            if loses_the_emperor {
                continue;
            }
        }
        let gain = exchange(&mut scratch, sq, side, rules, royals);
        if gain > 0 {
            found(Square(sq as u16), side, gain);
        }
    }
}

impl TaiGame {
    /// Each side's royal count, indexed by colour.
    fn royal_counts(&self) -> [u32; 2] {
        let mut royals = [0; 2];
        for c in Color::ALL {
            royals[c.index()] = self.royal_count(c);
        }
        royals
    }

    /// What `side` wins by taking the piece on `target` and the plain recaptures there
    /// (module docs), whoever is to move.
    pub fn exchange_on(&self, target: Square, side: Color) -> i32 {
        let mut board = self.position().board().to_vec();
        exchange(
            &mut board,
            usize::from(target.0),
            side,
            self.rules(),
            self.royal_counts(),
        )
    }

    /// The squares of `color`'s pieces that can move to `target` by a plain move
    /// (module docs), in no particular order.
    pub fn plain_attackers(&self, target: Square, color: Color) -> Vec<Square> {
        let mut out = Vec::new();
        let board = self.position().board();
        plain_attackers(board, usize::from(target.0), color, self.rules(), &mut out);
        out.into_iter().map(Square).collect()
    }

    /// What capture `mv` (legal here) wins by the static exchange on the square it ends
    /// on: what it takes (each piece's [`exchange_value`]) and gains by promoting, less
    /// what the opponent then wins by the exchange there ([`TaiGame::exchange_on`]); everything, if
    /// it ends the game. 0 for a move that takes nothing.
    pub fn capture_exchange(&self, mv: crate::TaiMove) -> i32 {
        let (value, royals) = self.capture_gain(mv);
        if value == 0 && royals == 0 {
            return 0;
        }
        let won = self.taken_and_promoted(mv);
        let mut after = self.clone();
        after.play_unchecked(mv);
        if after.outcome().is_some() {
            return won;
        }
        won - after.exchange_on(mv.to(), after.side_to_move())
    }

    /// What `mv` takes (each captured piece's [`exchange_value`]) and gains by promoting
    /// (a promotion into a royal counts nothing).
    fn taken_and_promoted(&self, mv: crate::TaiMove) -> i32 {
        let Some(mover) = self.position().board()[usize::from(mv.from().0)] else {
            return 0;
        };
        let captured = self.captures(mv);
        let pieces: Vec<Piece> = captured.iter().map(|&(_, p)| p).collect();
        let promoted = promoted_piece(mover, &pieces, self.rules());
        let mut won: i32 = pieces.iter().map(|&p| exchange_value(p)).sum();
        if !promoted.kind.is_royal() {
            won += exchange_value(promoted) - exchange_value(mover);
        }
        won
    }

    /// The most the side to move wins by the exchange on one of its opponent's pieces
    /// ([`exchanges`]); 0 when it wins nothing.
    pub fn best_exchange(&self) -> i32 {
        let mut best = 0;
        exchanges(self, Some(self.side_to_move()), |_, _, gain| {
            best = best.max(gain)
        });
        best
    }

    /// What the mover of `mv` (legal here) loses by static exchange one ply later: the
    /// opponent's [`TaiGame::best_exchange`] after `mv`, less what `mv` takes (each
    /// captured piece's [`exchange_value`]) and gains by promoting (a promotion into a
    /// royal counts nothing). Below 0 when the move wins material that cannot be won
    /// back; above 0 when it leaves a piece en prise or ignores one that is attacked; a
    /// move that ends the game loses nothing.
    pub fn static_loss_after(&self, mv: crate::TaiMove) -> i32 {
        let won = self.taken_and_promoted(mv);
        let mut after = self.clone();
        after.play_unchecked(mv);
        if after.outcome().is_some() {
            return -won;
        }
        after.best_exchange() - won
    }

    /// Both sides' plain attacks on every square ([`AttackMap`]).
    pub fn attack_map(&self) -> AttackMap {
        AttackMap::new(self.position().board(), self.rules())
    }

    /// Whether `color` has a legal capture of the piece on `target`: a plain move, a
    /// capture on the way, or its emperor under the emperor's rule (module docs).
    pub fn attacked_by(&self, target: Square, color: Color) -> bool {
        let board = self.position().board();
        attacked_by(board, usize::from(target.0), color, self.rules(), true)
    }
}

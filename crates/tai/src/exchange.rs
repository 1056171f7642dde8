//! Static exchange (SEE) for tai shogi.
//!
//! What a side wins by the plain captures on one square and the plain recaptures that
//! follow, each side taking with its least valuable piece (its value after the
//! capture's promotion) and free to stop: shogi's static exchange, over tai's attackers
//! ([`crate::attacks`]: lion powers, hook movers, the emperor), with the x-rays that a
//! vacated square opens found by walking again. [`TaiGame::exchange_on`] does it for
//! one square, [`exchanges`] for every square of a position at once over an
//! [`AttackMap`]; [`TaiGame::plain_attackers`] and [`TaiGame::attacked_by`] expose the
//! attack queries.
//!
//! A royal counts [`ROYAL_VALUE`] here (its material value is 0: the last one lost ends
//! the game, and an exchange on a royal ends when the last one is taken).

use shogi_game::{Color, Game};

use crate::attacks::{attacked_by, emperor_may_take, plain_attackers};
use crate::game::{TaiGame, promoted_piece};
use crate::material::kind_value;
use crate::movegen::{is_emperor, plain_reach, spec};
use crate::position::{Piece, SQUARES, Square};
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

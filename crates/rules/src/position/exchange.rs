//! Static exchange evaluation (SEE, 駒の取り合い): what a capture wins once both sides
//! have recaptured on its square for as long as it pays them, computed from the attack
//! tables alone (no search). A learning target can read "this piece hangs" from it.

use super::*;

/// The value of a king in an exchange: more than every other piece together, so a king
/// recaptures only when nothing can take it back.
const KING_IN_EXCHANGE: i32 = 1 << 20;

/// Piece values of an exchange, by [`PieceKind`] index (the king's value is ignored).
pub type ExchangeValues = [u32; 14];

/// The impasse count's values (rook and bishop, promoted or not, 5; every other piece 1)
/// as exchange values.
pub const IMPASSE_VALUE: ExchangeValues = [1, 1, 1, 1, 5, 5, 1, 0, 1, 1, 1, 1, 5, 5];

impl Position {
    /// What the mover of `mv` wins by it, in `values`' units, when each side then goes
    /// on recapturing on the destination with its least valuable attacker while that
    /// pays (the swap algorithm). A capture moves the captured piece's value off the
    /// board and its unpromoted value into the capturer's hand, so taking a piece swings
    /// the balance by both; a promotion adds its gain. Pins are not checked after the
    /// first capture (`mv` itself should be legal). 0 for a drop or a non-capture.
    pub fn exchange_gain(&self, mv: Move, values: &ExchangeValues) -> i32 {
        let Some(from) = mv.from() else {
            return 0;
        };
        let to = mv.to().index();
        let Some(victim) = Piece::from_code(self.board[to]) else {
            return 0;
        };
        let Some(mover) = Piece::from_code(self.board[from.index()]) else {
            return 0;
        };
        let value = |k: PieceKind| match k {
            PieceKind::King => KING_IN_EXCHANGE,
            k => values[k.index()] as i32,
        };
        // What taking a piece of kind `k` swings the balance by.
        let swing = |k: PieceKind| match k {
            PieceKind::King => KING_IN_EXCHANGE,
            k => value(k) + value(k.unpromote()),
        };
        let mut on_square = mover.kind;
        let mut gains = [0i32; 40];
        gains[0] = swing(victim.kind);
        if mv.is_promotion() {
            on_square = mover.kind.promote();
            gains[0] += value(on_square) - value(mover.kind);
        }
        let mut occ = self.occ() & !(1u128 << from.index());
        let mut side = mover.color.flip();
        let mut depth = 0;
        while depth + 1 < gains.len() {
            let attackers = self.attackers_raw(side, to, occ) & occ;
            if attackers == 0 {
                break;
            }
            let (sq, kind) = self.least_valuable(attackers, &value);
            depth += 1;
            // The side to capture now wins the piece on the square minus what the
            // exchange so far had won for the other side.
            gains[depth] = swing(on_square) - gains[depth - 1];
            occ &= !(1u128 << sq);
            on_square = kind;
            side = side.flip();
        }
        // Each side may stop instead of recapturing: fold from the end.
        while depth > 0 {
            gains[depth - 1] = -(-gains[depth - 1]).max(gains[depth]);
            depth -= 1;
        }
        gains[0]
    }

    /// The most the side to move wins with one legal capture and the exchange that
    /// follows ([`Position::exchange_gain`]); 0 when no capture wins anything (it may
    /// always decline).
    pub fn best_exchange_gain(&self, values: &ExchangeValues) -> u32 {
        self.legal_moves()
            .iter()
            .filter(|mv| !mv.is_drop() && self.board[mv.to().index()] != 0)
            .map(|&mv| self.exchange_gain(mv, values))
            .max()
            .unwrap_or(0)
            .max(0) as u32
    }

    /// What the mover of `mv` (legal here) loses, in `values`' units, by the static
    /// exchanges one ply later: the opponent's [`Position::best_exchange_gain`] after
    /// `mv`, minus what `mv` itself takes (the captured piece's swing) and gains by
    /// promoting. Negative when the move wins material that cannot be won back; 0 for a
    /// quiet move that leaves nothing en prise (浮き駒). A two-ply static look: a move
    /// that leaves a piece hanging, or ignores one that is attacked, scores above 0.
    pub fn static_loss_after(&self, mv: Move, values: &ExchangeValues) -> i32 {
        let value = |k: PieceKind| values[k.index()] as i32;
        let mut won = 0;
        if let Some(victim) = Piece::from_code(self.board[mv.to().index()])
            && victim.kind != PieceKind::King
        {
            won += value(victim.kind) + value(victim.kind.unpromote());
        }
        if mv.is_promotion()
            && let Some(mover) = mv
                .from()
                .and_then(|f| Piece::from_code(self.board[f.index()]))
        {
            won += value(mover.kind.promote()) - value(mover.kind);
        }
        let mut after = self.clone();
        after.play_unchecked(mv);
        after.best_exchange_gain(values) as i32 - won
    }

    /// What `attacker` would win by taking the piece on `sq` and the exchange that
    /// follows ([`Position::exchange_gain`]), with the best of its pieces that attack
    /// the square, whoever is to move: the threat a side poses to a piece (a hanging
    /// piece gains its full swing). Promotions and pins are not considered; 0 when the
    /// square holds no piece of the other colour or no capture pays (a side may decline).
    pub fn capture_gain(&self, sq: Square, attacker: Color, values: &ExchangeValues) -> u32 {
        match Piece::from_code(self.board[sq.index()]) {
            Some(victim) if victim.color != attacker => {}
            _ => return 0,
        }
        let mut from = self.attackers_raw(attacker, sq.index(), self.occ());
        let mut best = 0;
        while from != 0 {
            let origin = from.trailing_zeros() as usize;
            from &= from - 1;
            let mv = Move::normal(Square::from_index(origin), sq, false);
            best = best.max(self.exchange_gain(mv, values));
        }
        best as u32
    }

    /// The square and kind of the least valuable piece in `attackers`.
    fn least_valuable(
        &self,
        attackers: u128,
        value: &impl Fn(PieceKind) -> i32,
    ) -> (usize, PieceKind) {
        let mut bits = attackers;
        let mut best: Option<(usize, PieceKind, i32)> = None;
        while bits != 0 {
            let sq = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let Some(p) = Piece::from_code(self.board[sq]) {
                let v = value(p.kind);
                if best.is_none_or(|(_, _, bv)| v < bv) {
                    best = Some((sq, p.kind, v));
                }
            }
        }
        let (sq, kind, _) = best.expect("attackers is not empty");
        (sq, kind)
    }
}

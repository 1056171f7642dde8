//! Legal move generation (with 打ち歩詰め, the pawn-drop mate rule).

use super::*;

/// The most answer squares (checker and squares between) for which an evasion is
/// looked for from the squares (one attack test each) rather than from every piece.
const MOVER_SCAN_SQUARES: u32 = 3;

/// Where [`Position::generate_into`] puts the moves it finds: a list, a count, or
/// whether there is one at all. One generator behind every caller, so a count or a
/// yes/no can never disagree with the list.
trait MoveSink {
    /// Stop at the first move found.
    const FIRST_ONLY: bool;
    fn push(&mut self, mv: Move);
}

impl MoveSink for MoveList {
    const FIRST_ONLY: bool = false;
    #[inline(always)]
    fn push(&mut self, mv: Move) {
        MoveList::push(self, mv);
    }
}

/// How many moves (no list written).
struct Count(usize);

impl MoveSink for Count {
    const FIRST_ONLY: bool = false;
    #[inline(always)]
    fn push(&mut self, _: Move) {
        self.0 += 1;
    }
}

/// Whether there is a move: generation stops at the first.
struct Any(bool);

impl MoveSink for Any {
    const FIRST_ONLY: bool = true;
    #[inline(always)]
    fn push(&mut self, _: Move) {
        self.0 = true;
    }
}

/// Gives the move `$m` to `$sink` (under `CHECKS_ONLY`, only if it checks) and, where
/// the sink takes one move only (`S::FIRST_ONLY`), returns from the generator: the one
/// rule of [`Position::generate_into`] and [`Position::drops_into`] for every move found.
macro_rules! push_move {
    ($pos:expr, $sink:expr, $checks:expr, $m:expr) => {{
        let m = $m;
        if !CHECKS_ONLY || $pos.gives_check_with($checks, m) {
            $sink.push(m);
            if S::FIRST_ONLY {
                return;
            }
        }
    }};
}

impl Position {
    /// All legal moves (promotion and non-promotion both where allowed).
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate(&mut list);
        list
    }

    /// Appends all legal moves to `list`.
    pub fn generate(&self, list: &mut MoveList) {
        self.generate_into::<_, false>(list, &CheckInfo::NONE);
    }

    /// The number of legal moves: [`Position::generate`] writing nothing. The mate
    /// search counts the defender's replies after every check it finds.
    pub fn legal_move_count(&self) -> usize {
        let mut count = Count(0);
        self.generate_into::<_, false>(&mut count, &CheckInfo::NONE);
        count.0
    }

    /// The legal moves that give check (the mate search's attacker plays only these),
    /// in [`Position::generate`]'s order: the same generator, each piece's targets cut
    /// to the squares it would check from (all of them for a piece that uncovers a
    /// check), each move then kept by [`Position::gives_check_with`].
    pub fn checking_moves(&self, info: &CheckInfo) -> MoveList {
        let mut list = MoveList::new();
        self.generate_into::<_, true>(&mut list, info);
        list
    }

    /// Whether the side to move has a legal move: [`Position::generate`] stopped at the
    /// first one. King moves come first, so a position that is not mate (詰み) or
    /// stalemate usually answers after a few attack tests; a search asks this of every
    /// child it expands (mate anywhere in the tree), where a full list was most of the
    /// time self-play spent outside the network.
    pub fn has_legal_move(&self) -> bool {
        let mut any = Any(false);
        self.generate_into::<_, false>(&mut any, &CheckInfo::NONE);
        any.0
    }

    /// Gives the legal moves to `sink` (king moves, then the pieces by kind group and
    /// square, then drops); with `CHECKS_ONLY`, only those that give check (`checks` is
    /// then this position's).
    #[inline(always)]
    fn generate_into<S: MoveSink, const CHECKS_ONLY: bool>(
        &self,
        sink: &mut S,
        checks: &CheckInfo,
    ) {
        macro_rules! push {
            ($m:expr) => {
                push_move!(self, sink, checks, $m)
            };
        }
        let us = self.side;
        let them = us.flip();
        let u = us as usize;
        let ksq = self.kings[u] as usize;
        let occ = self.occ();
        let own = self.by_color[u];
        let mask = self.geo.mask;

        // King moves.
        let mut kt = STEPS[0][7][ksq] & !own & mask;
        let occ_nok = occ ^ bit(ksq);
        while kt != 0 {
            let to = kt.trailing_zeros() as usize;
            kt &= kt - 1;
            if self.attackers_raw(them, to, occ_nok) == 0 {
                push!(Move::normal(Square(ksq as u8), Square(to as u8), false));
            }
        }
        if self.checkers & self.checkers.wrapping_sub(1) != 0 {
            return;
        }
        let (target, drop_target) = if self.checkers == 0 {
            (!own & mask, !occ & mask)
        } else {
            let c = self.checkers.trailing_zeros() as usize;
            let b = BETWEEN[ksq][c];
            (b | self.checkers, b)
        };
        // In check, only pieces that attack a square of `target` (the checker's, or one
        // between it and the king) can answer: found from those few squares, rather
        // than from every piece's attacks. Out of check, or against a distant slider
        // (many squares between), every piece is tried.
        let movers = if self.checkers != 0 && target.count_ones() <= MOVER_SCAN_SQUARES {
            let mut movers = 0;
            let mut squares = target;
            while squares != 0 {
                let sq = squares.trailing_zeros() as usize;
                squares &= squares - 1;
                movers |= self.attackers_raw(us, sq, occ);
            }
            movers
        } else {
            own
        };
        let pinned = self.pinned(us);
        let zone = self.geo.zone[u];
        let last1 = self.geo.last1[u];
        let last2 = self.geo.last2[u];

        // Piece by kind group, so that the attack dispatch is predictable; the gold-moving
        // kinds (gold, tokin, promoted lance/knight/silver) share one group.
        let k = &self.by_kind;
        let groups = [
            (k[0], PieceKind::Pawn),
            (k[1], PieceKind::Lance),
            (k[2], PieceKind::Knight),
            (k[3], PieceKind::Silver),
            (k[4], PieceKind::Bishop),
            (k[5], PieceKind::Rook),
            (k[6] | k[8] | k[9] | k[10] | k[11], PieceKind::Gold),
            (k[12], PieceKind::Horse),
            (k[13], PieceKind::Dragon),
        ];
        for (group, kind) in groups {
            let mut pieces = own & group & movers;
            while pieces != 0 {
                let from = pieces.trailing_zeros() as usize;
                pieces &= pieces - 1;
                let mut att = attacks(us, kind, from, occ) & target;
                if CHECKS_ONLY && checks.discoverers & bit(from) == 0 {
                    // Only squares it checks from, as it is or promoted.
                    let promoted = if kind.can_promote() {
                        checks.direct[kind.promote() as usize]
                    } else {
                        0
                    };
                    att &= checks.direct[kind as usize] | promoted;
                }
                if pinned & bit(from) != 0 {
                    att &= LINE[ksq][from];
                }
                if att == 0 {
                    continue;
                }
                let fsq = Square(from as u8);
                if !kind.can_promote() {
                    while att != 0 {
                        let to = att.trailing_zeros() as u8;
                        att &= att - 1;
                        push!(Move::normal(fsq, Square(to), false));
                    }
                    continue;
                }
                let from_zone = zone & bit(from) != 0;
                let forced = match kind {
                    PieceKind::Pawn | PieceKind::Lance => last1,
                    PieceKind::Knight => last2,
                    _ => 0,
                };
                while att != 0 {
                    let to = att.trailing_zeros() as usize;
                    att &= att - 1;
                    let tsq = Square(to as u8);
                    if from_zone || zone & bit(to) != 0 {
                        push!(Move::normal(fsq, tsq, true));
                    }
                    if forced & bit(to) == 0 {
                        push!(Move::normal(fsq, tsq, false));
                    }
                }
            }
        }
        // Drops.
        if drop_target != 0 {
            self.drops_into::<S, CHECKS_ONLY>(sink, drop_target, checks);
        }
    }

    /// The legal drops on `drop_target` given to `sink`, under
    /// [`Position::generate_into`]'s `CHECKS_ONLY`.
    #[inline(always)]
    fn drops_into<S: MoveSink, const CHECKS_ONLY: bool>(
        &self,
        sink: &mut S,
        drop_target: u128,
        checks: &CheckInfo,
    ) {
        let us = self.side;
        let them = us.flip();
        let u = us as usize;
        let own = self.by_color[u];
        let last1 = self.geo.last1[u];
        let last2 = self.geo.last2[u];
        let hand = &self.hands[u];
        if hand[0] > 0 {
            let mut pawn_files = 0u128;
            let mut p = own & self.by_kind[0];
            while p != 0 {
                let s = p.trailing_zeros() as usize;
                p &= p - 1;
                pawn_files |= FILES[s / 9];
            }
            let mut t = drop_target & !last1 & !pawn_files;
            if CHECKS_ONLY {
                t &= checks.direct[PieceKind::Pawn as usize];
            }
            let their_k = self.kings[them as usize] as usize;
            let mate_sq = STEPS[them as usize][0][their_k] & t;
            if mate_sq != 0 && self.is_uchifuzume(mate_sq.trailing_zeros() as usize) {
                t ^= mate_sq;
            }
            while t != 0 {
                let to = t.trailing_zeros() as u8;
                t &= t - 1;
                push_move!(self, sink, checks, Move::drop(PieceKind::Pawn, Square(to)));
            }
        }
        for k in 1..7 {
            if hand[k] == 0 {
                continue;
            }
            let kind = PieceKind::from_index(k);
            let mut t = match kind {
                PieceKind::Lance => drop_target & !last1,
                PieceKind::Knight => drop_target & !last2,
                _ => drop_target,
            };
            if CHECKS_ONLY {
                t &= checks.direct[k];
            }
            while t != 0 {
                let to = t.trailing_zeros() as u8;
                t &= t - 1;
                push_move!(self, sink, checks, Move::drop(kind, Square(to)));
            }
        }
    }

    /// Whether dropping a pawn of the side to move on `to` (directly in front of the
    /// enemy king) would be checkmate: 打ち歩詰め.
    pub(super) fn is_uchifuzume(&self, to: usize) -> bool {
        let us = self.side;
        let them = us.flip();
        let ksq = self.kings[them as usize] as usize;
        let occ2 = self.occ() | bit(to);
        // Capture by a non-king piece that is not pinned.
        let mut caps = self.attackers_raw(them, to, occ2) & !bit(ksq);
        while caps != 0 {
            let c = caps.trailing_zeros() as usize;
            caps &= caps - 1;
            let occ3 = occ2 ^ bit(c);
            if self.slider_attackers(us, ksq, occ3) == 0 {
                return false;
            }
        }
        // King escapes (including capturing the pawn when it is undefended).
        let mut esc = STEPS[0][7][ksq] & !self.by_color[them as usize] & self.geo.mask;
        let occ_nok = occ2 ^ bit(ksq);
        while esc != 0 {
            let e = esc.trailing_zeros() as usize;
            esc &= esc - 1;
            if self.attackers_raw(us, e, occ_nok) == 0 {
                return false;
            }
        }
        true
    }
}

//! Move generation: every piece's moves from its compiled [`MoveSpec`], over a mailbox
//! board of 625 squares.
//!
//! Tai shogi has no check rule, so pseudo-legal moves are legal; the only position-wide
//! conditions are the emperor's royal captures (the target must be undefended), the
//! pass (not right after a pass) and, under the strict repetition rule, repeated
//! positions. [`crate::TaiGame`] applies the last two.

use std::fmt;
use std::sync::LazyLock;

use shogi_game::Color;

use crate::betza::{self, MoveSpec, Offset};
use crate::pieces::{Catalogue, PieceKind};
use crate::position::{Piece, SIZE, SQUARES, Square};
use crate::rules::{LionDog, TaiRules};

const NONE: u16 = u16::MAX;

/// One move: from, up to two captured intermediate squares (lion-type moves), to.
///
/// Pieces jumped over are not listed; a captured intermediate square is. A move whose
/// `to` is its `from` is igui (居喰い, capture without moving) when it has a via, and a
/// pass when it has none. Text: the squares in path order, `13m12l13m` (igui),
/// `13m13k13j` (a lion capturing on 13k, then moving to 13j), `13m13m` (pass).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaiMove {
    from: u16,
    via: [u16; 2],
    to: u16,
}

impl TaiMove {
    /// A plain move or capture.
    pub fn new(from: Square, to: Square) -> TaiMove {
        TaiMove {
            from: from.0,
            via: [NONE; 2],
            to: to.0,
        }
    }

    /// A move capturing on the `via` squares on its way (at most two).
    pub fn with_vias(from: Square, vias: &[Square], to: Square) -> Option<TaiMove> {
        if vias.len() > 2 {
            return None;
        }
        let mut via = [NONE; 2];
        for (slot, v) in via.iter_mut().zip(vias) {
            *slot = v.0;
        }
        Some(TaiMove {
            from: from.0,
            via,
            to: to.0,
        })
    }

    /// The square the piece starts on.
    pub fn from(self) -> Square {
        Square(self.from)
    }

    /// The square the piece ends on.
    pub fn to(self) -> Square {
        Square(self.to)
    }

    /// Intermediate squares captured on the way, in path order.
    pub fn vias(self) -> impl Iterator<Item = Square> {
        self.via.into_iter().take_while(|&v| v != NONE).map(Square)
    }

    /// A pass: out to an empty square and back.
    pub fn is_pass(self) -> bool {
        self.from == self.to && self.via[0] == NONE
    }

    /// A 32-bit code for records: from (10 bits), to (10), then each via as its offset
    /// from `from` in a 7x7 box (6 bits each, 0 = none).
    pub fn to_code(self) -> u32 {
        let via_code = |v: u16| -> u32 {
            if v == NONE {
                return 0;
            }
            let (f, v) = (Square(self.from), Square(v));
            let (dr, dc) = (v.row() - f.row() + 3, v.col() - f.col() + 3);
            (dr * 7 + dc + 1) as u32
        };
        u32::from(self.from)
            | u32::from(self.to) << 10
            | via_code(self.via[0]) << 20
            | via_code(self.via[1]) << 26
    }

    /// The move of a [`TaiMove::to_code`] code; `None` for codes no move has.
    pub fn from_code(code: u32) -> Option<TaiMove> {
        let from = (code & 0x3ff) as u16;
        let to = (code >> 10 & 0x3ff) as u16;
        if usize::from(from) >= SQUARES || usize::from(to) >= SQUARES {
            return None;
        }
        let f = Square(from);
        let via = |c: u32| -> Option<u16> {
            if c == 0 {
                return Some(NONE);
            }
            if c > 49 {
                return None;
            }
            let (dr, dc) = (((c - 1) / 7) as i32 - 3, ((c - 1) % 7) as i32 - 3);
            Square::new(f.row() + dr, f.col() + dc).map(|s| s.0)
        };
        let (v0, v1) = (via(code >> 20 & 0x3f)?, via(code >> 26 & 0x3f)?);
        if v0 == NONE && v1 != NONE {
            return None;
        }
        Some(TaiMove {
            from,
            via: [v0, v1],
            to,
        })
    }

    /// Parses the text form (squares in path order, 2 to 4 of them).
    pub fn parse(text: &str) -> Option<TaiMove> {
        let mut squares = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            let end = digits + rest[digits..].chars().next()?.len_utf8();
            squares.push(Square::parse(&rest[..end])?);
            rest = &rest[end..];
        }
        if !(2..=4).contains(&squares.len()) {
            return None;
        }
        let (from, to) = (squares[0], squares[squares.len() - 1]);
        TaiMove::with_vias(from, &squares[1..squares.len() - 1], to)
    }
}

impl fmt::Display for TaiMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.from())?;
        for v in self.vias() {
            write!(f, "{v}")?;
        }
        write!(f, "{}", self.to())
    }
}

impl fmt::Debug for TaiMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaiMove({self})")
    }
}

struct Specs {
    by_kind: Vec<MoveSpec>,
    lion_dog_q3: MoveSpec,
    lion_dog: PieceKind,
    emperor: PieceKind,
}

static SPECS: LazyLock<Specs> = LazyLock::new(|| {
    let cat = Catalogue::get();
    let by_kind = cat
        .kinds()
        .iter()
        .map(|k| {
            if k.abbr == "GE" {
                betza::great_elephant()
            } else {
                betza::compile(&k.betza)
                    .unwrap_or_else(|e| panic!("{}: bad Betza {:?}: {e}", k.abbr, k.betza))
            }
        })
        .collect();
    Specs {
        by_kind,
        lion_dog_q3: betza::compile("Q3").expect("valid"),
        lion_dog: cat.by_abbr("LD").expect("lion dog"),
        emperor: cat.by_abbr("E").expect("emperor"),
    }
});

/// The compiled moves of `kind` under `rules`.
pub fn spec(kind: PieceKind, rules: &TaiRules) -> &'static MoveSpec {
    let specs = &*SPECS;
    if kind == specs.lion_dog && rules.lion_dog == LionDog::Q3 {
        return &specs.lion_dog_q3;
    }
    &specs.by_kind[usize::from(kind.0)]
}

/// Whether `kind` is the emperor.
pub(crate) fn is_emperor(kind: PieceKind) -> bool {
    kind == SPECS.emperor
}

#[inline]
fn step(sq: usize, (dr, dc): Offset, k: i32) -> Option<usize> {
    let r = (sq / SIZE) as i32 + i32::from(dr) * k;
    let c = (sq % SIZE) as i32 + i32::from(dc) * k;
    ((0..SIZE as i32).contains(&r) && (0..SIZE as i32).contains(&c))
        .then(|| r as usize * SIZE + c as usize)
}

#[inline]
fn orient(color: Color, (dr, dc): Offset) -> Offset {
    match color {
        Color::Black => (dr, dc),
        Color::White => (-dr, -dc),
    }
}

pub(crate) fn mv(from: usize, vias: &[usize], to: usize) -> TaiMove {
    let mut via = [NONE; 2];
    for (slot, &v) in via.iter_mut().zip(vias) {
        *slot = v as u16;
    }
    TaiMove {
        from: from as u16,
        via,
        to: to as u16,
    }
}

/// Appends the moves from `from` along direction `d` starting at `origin` (the piece's
/// own square, or a hook mover's corner), at most `max` steps: every empty square, and
/// the first occupied one where it holds an enemy piece.
#[inline]
fn push_ray(
    board: &[Option<Piece>],
    me: Color,
    from: usize,
    origin: usize,
    d: Offset,
    max: i32,
    out: &mut Vec<TaiMove>,
) {
    for k in 1..=max {
        let Some(t) = step(origin, d, k) else { break };
        match board[t] {
            None => out.push(mv(from, &[], t)),
            Some(p) => {
                if p.color != me {
                    out.push(mv(from, &[], t));
                }
                break;
            }
        }
    }
}

/// The corners a hook move from `from` along `d` may turn on: every square of its first
/// leg, which runs through empty squares only (the turn itself is on an empty square).
#[inline]
fn hook_corners(
    board: &[Option<Piece>],
    from: usize,
    d: Offset,
) -> impl Iterator<Item = usize> + '_ {
    (1..)
        .map_while(move |k| step(from, d, k))
        .take_while(|&corner| board[corner].is_none())
}

/// The two directions a hook move along `d` turns into (90° either way).
#[inline]
fn hook_turns(d: Offset) -> [Offset; 2] {
    [(d.1, -d.0), (-d.1, d.0)]
}

/// Appends the moves of the non-emperor piece on `from` (passes included).
pub(crate) fn piece_moves(
    board: &[Option<Piece>],
    from: usize,
    piece: Piece,
    spec: &MoveSpec,
    out: &mut Vec<TaiMove>,
) {
    let me = piece.color;
    let start = out.len();
    let own = |sq: usize| board[sq].is_some_and(|p| p.color == me);
    let enemy = |sq: usize| board[sq].is_some_and(|p| p.color != me);
    for &d in &spec.leaps {
        if let Some(t) = step(from, orient(me, d), 1)
            && !own(t)
        {
            out.push(mv(from, &[], t));
        }
    }
    for s in &spec.slides {
        push_ray(
            board,
            me,
            from,
            from,
            orient(me, s.dir),
            i32::from(s.max),
            out,
        );
    }
    for &h in &spec.hooks {
        let d = orient(me, h);
        for corner in hook_corners(board, from, d) {
            for turn in hook_turns(d) {
                push_ray(board, me, from, corner, turn, SIZE as i32, out);
            }
        }
    }
    let mut can_pass = false;
    if spec.area_lion {
        for d1 in betza::KING_DIRECTIONS {
            let Some(v) = step(from, d1, 1) else { continue };
            if board[v].is_none() {
                can_pass = true;
                continue;
            }
            if !enemy(v) {
                continue;
            }
            for d2 in betza::KING_DIRECTIONS {
                let Some(t) = step(v, d2, 1) else { continue };
                if t == from || !own(t) {
                    out.push(mv(from, &[v], t));
                }
            }
        }
    }
    for &(d, n) in &spec.lines {
        let d = orient(me, d);
        let line: Vec<usize> = (1..=i32::from(n)).map_while(|k| step(from, d, k)).collect();
        for (k, &end) in line.iter().enumerate() {
            // Straight out to `end`: intermediates are jumped or, if enemies, captured.
            if !own(end) {
                let enemies: Vec<usize> = line[..k].iter().copied().filter(|&s| enemy(s)).collect();
                for mask in 0..1u32 << enemies.len() {
                    let vias: Vec<usize> = enemies
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| mask >> i & 1 == 1)
                        .map(|(_, &s)| s)
                        .collect();
                    out.push(mv(from, &vias, end));
                }
            }
            // Out to `end` and one step back, if a step is left: the turning point is
            // captured (it cannot be jumped where the path bends back) or empty.
            if k + 1 < usize::from(n) {
                let back = if k == 0 { from } else { line[k - 1] };
                if enemy(end) {
                    if k == 0 {
                        out.push(mv(from, &[end], from));
                    } else if !own(back) {
                        out.push(mv(from, &[end], back));
                    }
                } else if board[end].is_none() && k == 0 {
                    can_pass = true;
                }
            }
        }
    }
    if can_pass {
        out.push(mv(from, &[], from));
    }
    if spec.overlapping {
        out[start..].sort_unstable();
        let mut kept = start;
        for i in start..out.len() {
            if i == start || out[i] != out[kept - 1] {
                out[kept] = out[i];
                kept += 1;
            }
        }
        out.truncate(kept);
    }
}

/// Calls `reach` with every square the non-emperor piece on `from` moves to by a plain
/// move, one that ends there and captures nothing on the way, whoever's piece stands
/// there: the squares it attacks, its own side's included (it defends those). The
/// same square may come more than once (two powers reaching it).
pub(crate) fn plain_reach(
    board: &[Option<Piece>],
    from: usize,
    piece: Piece,
    spec: &MoveSpec,
    mut reach: impl FnMut(usize),
) {
    let me = piece.color;
    let ray = |origin: usize, d: Offset, max: i32, reach: &mut dyn FnMut(usize)| {
        for k in 1..=max {
            let Some(t) = step(origin, d, k) else { break };
            reach(t);
            if board[t].is_some() {
                break;
            }
        }
    };
    for &d in &spec.leaps {
        if let Some(t) = step(from, orient(me, d), 1) {
            reach(t);
        }
    }
    for s in &spec.slides {
        ray(from, orient(me, s.dir), i32::from(s.max), &mut reach);
    }
    for &h in &spec.hooks {
        let d = orient(me, h);
        for corner in hook_corners(board, from, d) {
            for turn in hook_turns(d) {
                ray(corner, turn, SIZE as i32, &mut reach);
            }
        }
    }
    for &(d, n) in &spec.lines {
        let d = orient(me, d);
        for k in 1..=i32::from(n) {
            let Some(t) = step(from, d, k) else { break };
            reach(t);
        }
    }
}

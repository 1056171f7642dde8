//! Tiny games implementing [`Game`] for tests and benches. Not shogi.

use std::fmt;

use shogi_game::{Color, EndReason, Game, Outcome};

use crate::{Evaluator, Search, SearchLimits};

/// Plays `game` to its end with `search` (its tree reused from move to move), each move
/// the search's best by `evaluator`; the final position.
pub fn play_out<G: Game, E: Evaluator<G> + ?Sized>(
    search: &mut Search<G>,
    mut game: G,
    evaluator: &E,
) -> G {
    while game.outcome().is_none() {
        let result = search.search(&game, evaluator, &SearchLimits::default());
        let mv = result.unwrap().best_move.unwrap();
        search.advance(mv);
        game.play_unchecked(mv);
    }
    game
}

fn mix(h: u64, x: u64) -> u64 {
    (h ^ x
        .wrapping_add(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(h << 6)
        .wrapping_add(h >> 2))
    .wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// A small move type: an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Idx(pub u8);

impl fmt::Display for Idx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Subtraction Nim: take 1..=`max_take` stones; whoever takes the last stone wins (the
/// side to move with an empty pile has lost). Piles that are multiples of `max_take + 1`
/// are lost for the side to move. Move `Idx(k)` takes `k` stones.
#[derive(Clone, Debug)]
pub struct Nim {
    /// Stones left.
    pub pile: u8,
    /// Largest take.
    pub max_take: u8,
    ply: u32,
}

impl Nim {
    /// A pile of `pile` stones.
    pub fn new(pile: u8, max_take: u8) -> Self {
        Nim {
            pile,
            max_take,
            ply: 0,
        }
    }
}

impl Game for Nim {
    type Move = Idx;
    fn variant_name(&self) -> &'static str {
        "nim"
    }
    fn side_to_move(&self) -> Color {
        mover_at(self.ply)
    }
    fn ply(&self) -> u32 {
        self.ply
    }
    fn legal_moves(&self, out: &mut Vec<Idx>) {
        if self.pile == 0 {
            return;
        }
        for k in 1..=self.max_take.min(self.pile) {
            out.push(Idx(k));
        }
    }
    fn play_unchecked(&mut self, mv: Idx) {
        self.pile -= mv.0;
        self.ply += 1;
    }
    fn outcome(&self) -> Option<Outcome> {
        (self.pile == 0).then(|| Outcome::win(self.side_to_move().flip(), EndReason::NoLegalMoves))
    }
    fn key(&self) -> u64 {
        mix(
            mix(self.pile as u64, self.ply as u64 & 1),
            self.max_take as u64,
        )
    }
}

/// Tic-tac-toe. Move `Idx(i)` marks square `i` (0..9, row-major). Black is X.
#[derive(Clone, Debug, Default)]
pub struct TicTacToe {
    /// 0 empty, 1 Black, 2 White.
    pub board: [u8; 9],
    ply: u32,
}

impl TicTacToe {
    /// The empty board.
    pub fn new() -> Self {
        Self::default()
    }
    /// Plays a sequence of squares.
    pub fn from_moves(moves: &[u8]) -> Self {
        let mut g = Self::new();
        for &m in moves {
            g.play_unchecked(Idx(m));
        }
        g
    }
    fn winner(&self) -> Option<Color> {
        const L: [[usize; 3]; 8] = [
            [0, 1, 2],
            [3, 4, 5],
            [6, 7, 8],
            [0, 3, 6],
            [1, 4, 7],
            [2, 5, 8],
            [0, 4, 8],
            [2, 4, 6],
        ];
        for l in L {
            let a = self.board[l[0]];
            if a != 0 && a == self.board[l[1]] && a == self.board[l[2]] {
                return Some(if a == 1 { Color::Black } else { Color::White });
            }
        }
        None
    }
}

impl Game for TicTacToe {
    type Move = Idx;
    fn variant_name(&self) -> &'static str {
        "tictactoe"
    }
    fn side_to_move(&self) -> Color {
        mover_at(self.ply)
    }
    fn ply(&self) -> u32 {
        self.ply
    }
    fn legal_moves(&self, out: &mut Vec<Idx>) {
        if self.winner().is_some() {
            return;
        }
        for i in 0..9 {
            if self.board[i] == 0 {
                out.push(Idx(i as u8));
            }
        }
    }
    fn play_unchecked(&mut self, mv: Idx) {
        self.board[mv.0 as usize] = if self.ply.is_multiple_of(2) { 1 } else { 2 };
        self.ply += 1;
    }
    fn outcome(&self) -> Option<Outcome> {
        if let Some(w) = self.winner() {
            return Some(Outcome::win(w, EndReason::Checkmate));
        }
        (self.ply >= 9).then(|| Outcome::draw(EndReason::MaxPlies))
    }
    fn key(&self) -> u64 {
        self.board.iter().fold(0u64, |h, &c| h * 3 + c as u64)
    }
}

/// A "mate in N" toy with distractors. Every position has `width` moves. On Black's turns
/// one move (`(ply * 3 + 1) % width`) keeps the attack going; any other Black move
/// defuses it for good. White's moves never matter. When Black has played the attacking
/// move `mate_in` times in a row from the start, Black wins (checkmate): a forced win in
/// `2 * mate_in - 1` plies. A defused game goes on and is drawn at `max_plies`.
#[derive(Clone, Debug)]
pub struct MateIn {
    /// Moves in every position.
    pub width: u8,
    /// Attacking Black moves needed.
    pub mate_in: u8,
    /// Ply at which a defused game is drawn.
    pub max_plies: u32,
    hits: u8,
    defused: bool,
    ply: u32,
    hash: u64,
}

impl MateIn {
    /// A new game.
    pub fn new(width: u8, mate_in: u8, max_plies: u32) -> Self {
        MateIn {
            width,
            mate_in,
            max_plies,
            hits: 0,
            defused: false,
            ply: 0,
            hash: 0,
        }
    }
    /// The winning (attacking) move for Black at the current ply.
    pub fn attacking_move(&self) -> Idx {
        Idx(((self.ply * 3 + 1) % self.width as u32) as u8)
    }
}

impl Game for MateIn {
    type Move = Idx;
    fn variant_name(&self) -> &'static str {
        "mate-in"
    }
    fn side_to_move(&self) -> Color {
        mover_at(self.ply)
    }
    fn ply(&self) -> u32 {
        self.ply
    }
    fn legal_moves(&self, out: &mut Vec<Idx>) {
        if self.outcome().is_none() {
            out.extend((0..self.width).map(Idx));
        }
    }
    fn play_unchecked(&mut self, mv: Idx) {
        if self.side_to_move() == Color::Black && !self.defused {
            if mv == self.attacking_move() {
                self.hits += 1;
            } else {
                self.defused = true;
            }
        }
        self.hash = mix(self.hash, mv.0 as u64 + 1);
        self.ply += 1;
    }
    fn outcome(&self) -> Option<Outcome> {
        if !self.defused && self.hits >= self.mate_in {
            Some(Outcome::win(Color::Black, EndReason::Checkmate))
        } else if self.ply >= self.max_plies {
            Some(Outcome::draw(EndReason::MaxPlies))
        } else {
            None
        }
    }
    fn key(&self) -> u64 {
        mix(self.hash, self.ply as u64)
    }
}

/// Who moves at `ply` of a game Black starts.
fn mover_at(ply: u32) -> Color {
    if ply.is_multiple_of(2) {
        Color::Black
    } else {
        Color::White
    }
}

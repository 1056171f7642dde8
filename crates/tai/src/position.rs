//! Squares, pieces, positions, the setup, and the text form of a position: SFEN with
//! multi-letter piece codes in brackets, as large-variant tools write them.
//!
//! Coordinates follow shogi: files 1..=25 numbered from Black's right, ranks `a`..=`y`
//! from White's side, so Black's back rank is `y` and a square is written `13m` (the
//! centre). Internally a square is `row * 25 + col` with row 0 = rank `a` and col 0 =
//! file 25: the order SFEN lists squares in.

use std::fmt;

use shogi_game::Color;

use crate::pieces::{Catalogue, PieceKind};

/// Files and ranks.
pub const SIZE: usize = 25;
/// Squares on the board.
pub const SQUARES: usize = SIZE * SIZE;

/// A square, `0..625`, row-major from the top-left as Black sees the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub u16);

impl Square {
    /// The square at `row` (0 = rank `a`) and `col` (0 = file 25); `None` off the board.
    pub fn new(row: i32, col: i32) -> Option<Square> {
        ((0..SIZE as i32).contains(&row) && (0..SIZE as i32).contains(&col))
            .then(|| Square((row * SIZE as i32 + col) as u16))
    }

    /// Row, 0 = rank `a` (White's back rank).
    pub fn row(self) -> i32 {
        i32::from(self.0) / SIZE as i32
    }

    /// Column, 0 = file 25 (Black's left).
    pub fn col(self) -> i32 {
        i32::from(self.0) % SIZE as i32
    }

    /// Shogi file number, 1..=25 (1 = Black's right).
    pub fn file(self) -> u32 {
        (SIZE as i32 - self.col()) as u32
    }

    /// Rank letter, `a`..=`y`.
    pub fn rank(self) -> char {
        (b'a' + self.row() as u8) as char
    }

    /// The square seen from the other side (180-degree rotation).
    pub fn rotate(self) -> Square {
        Square((SQUARES - 1) as u16 - self.0)
    }

    /// Parses `13m`-style text (file 1..=25 then rank `a`..=`y`).
    pub fn parse(text: &str) -> Option<Square> {
        let split = text.find(|c: char| !c.is_ascii_digit())?;
        let (file, rank) = text.split_at(split);
        if file.is_empty() || file.len() > 2 || file.starts_with('0') || rank.len() != 1 {
            return None;
        }
        let file: i32 = file.parse().ok()?;
        let rank = rank.as_bytes()[0];
        if !(1..=SIZE as i32).contains(&file) || !(b'a'..b'a' + SIZE as u8).contains(&rank) {
            return None;
        }
        Square::new(i32::from(rank - b'a'), SIZE as i32 - file)
    }

    /// Every square.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..SQUARES as u16).map(Square)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file(), self.rank())
    }
}

/// A piece on the board: its kind, its owner, and whether it reached that kind by
/// promotion (a promoted piece never promotes again, even into a kind that would).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// The kind it moves as.
    pub kind: PieceKind,
    /// The owner.
    pub color: Color,
    /// Reached `kind` by promotion.
    pub promoted: bool,
}

impl Piece {
    /// An unpromoted piece.
    pub fn new(kind: PieceKind, color: Color) -> Piece {
        Piece {
            kind,
            color,
            promoted: false,
        }
    }

    /// The SFEN code: `+` when promoted, then the abbreviation, bare if one letter and in
    /// brackets otherwise; upper case for Black, lower case for White.
    pub fn sfen_code(&self) -> String {
        let abbr = self.kind.abbr();
        let abbr = match self.color {
            Color::Black => abbr.to_ascii_uppercase(),
            Color::White => abbr.to_ascii_lowercase(),
        };
        let plus = if self.promoted { "+" } else { "" };
        if abbr.len() == 1 {
            format!("{plus}{abbr}")
        } else {
            format!("{plus}[{abbr}]")
        }
    }
}

/// Why a text position was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SfenError {
    /// Not the four fields `board side hand move-number`.
    #[error("a tai SFEN has 4 fields (board, side, hand, move number), got {0}")]
    Fields(usize),
    /// The board does not have 25 ranks.
    #[error("the board has {0} ranks, expected 25")]
    Ranks(usize),
    /// A rank does not cover 25 files.
    #[error("rank {rank} covers {files} files, expected 25")]
    Files {
        /// Rank letter.
        rank: char,
        /// Files it covers.
        files: usize,
    },
    /// A piece code is not in the catalogue or malformed.
    #[error("rank {rank}: bad piece code {code:?}")]
    Piece {
        /// Rank letter.
        rank: char,
        /// The offending text.
        code: String,
    },
    /// The side to move is not `b` or `w`.
    #[error("side to move must be b or w, got {0:?}")]
    Side(String),
    /// Tai shogi has no drops: the hand field must be `-`.
    #[error("tai shogi has no pieces in hand: the hand field must be '-', got {0:?}")]
    Hand(String),
    /// The move number is not a positive integer.
    #[error("bad move number {0:?}")]
    MoveNumber(String),
}

/// A tai shogi position: the board, the side to move and the move number.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Position {
    board: Vec<Option<Piece>>,
    side_to_move: Color,
    move_number: u32,
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_sfen())
    }
}

impl Position {
    /// An empty board, Black to move.
    pub fn empty() -> Position {
        Position {
            board: vec![None; SQUARES],
            side_to_move: Color::Black,
            move_number: 1,
        }
    }

    /// The initial setup (`data/setup.txt`), Black to move.
    pub fn startpos() -> Position {
        let cat = Catalogue::get();
        let mut pos = Position::empty();
        let lines = include_str!("../data/setup.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
        for (black_rank, line) in lines.enumerate() {
            // Black's rank k (1 = back rank) is row 25 - k.
            let row = SIZE as i32 - 1 - black_rank as i32;
            for (col, cell) in line.split_whitespace().enumerate() {
                if cell == "." {
                    continue;
                }
                let kind = cat
                    .by_abbr(cell)
                    .unwrap_or_else(|| panic!("data/setup.txt: unknown piece {cell}"));
                let sq = Square::new(row, col as i32).expect("setup square");
                pos.set(sq, Some(Piece::new(kind, Color::Black)));
                pos.set(sq.rotate(), Some(Piece::new(kind, Color::White)));
            }
        }
        pos
    }

    /// The piece on `sq`.
    pub fn piece(&self, sq: Square) -> Option<Piece> {
        self.board[usize::from(sq.0)]
    }

    /// Puts `piece` on `sq` (or clears it).
    pub fn set(&mut self, sq: Square, piece: Option<Piece>) {
        self.board[usize::from(sq.0)] = piece;
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        self.side_to_move
    }

    /// Sets the side to move.
    pub fn set_side_to_move(&mut self, c: Color) {
        self.side_to_move = c;
    }

    /// The move number (1 at the start).
    pub fn move_number(&self) -> u32 {
        self.move_number
    }

    /// The board, indexed by [`Square`].
    pub(crate) fn board(&self) -> &[Option<Piece>] {
        &self.board
    }

    /// The board, mutable.
    pub(crate) fn board_mut(&mut self) -> &mut [Option<Piece>] {
        &mut self.board
    }

    /// Sets the move number.
    pub fn set_move_number(&mut self, n: u32) {
        self.move_number = n.max(1);
    }

    /// Every occupied square with its piece.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.board
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|p| (Square(i as u16), p)))
    }

    /// `c`'s royal pieces (emperor, crown princes) on the board.
    pub fn royals(&self, c: Color) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.pieces()
            .filter(move |(_, p)| p.color == c && p.kind.is_royal())
    }

    /// The text form: 25 ranks from `a` separated by `/`, runs of empty squares as
    /// numbers, then the side (`b`/`w`), `-` (no hands in tai shogi) and the move number.
    pub fn to_sfen(&self) -> String {
        let mut out = String::with_capacity(1200);
        for row in 0..SIZE as i32 {
            if row > 0 {
                out.push('/');
            }
            shogi_game::push_sfen_rank(
                &mut out,
                (0..SIZE as i32).map(|col| {
                    self.piece(Square::new(row, col).expect("on board"))
                        .map(|p| p.sfen_code())
                }),
            );
        }
        let side = match self.side_to_move {
            Color::Black => 'b',
            Color::White => 'w',
        };
        out.push_str(&format!(" {side} - {}", self.move_number));
        out
    }

    /// Parses [`Position::to_sfen`]'s form. Any malformed input is an error naming what
    /// is wrong, never a panic.
    pub fn from_sfen(text: &str) -> Result<Position, SfenError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 4 {
            return Err(SfenError::Fields(fields.len()));
        }
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != SIZE {
            return Err(SfenError::Ranks(ranks.len()));
        }
        let cat = Catalogue::get();
        let mut pos = Position::empty();
        for (row, rank_text) in ranks.iter().enumerate() {
            let rank = (b'a' + row as u8) as char;
            let bad = |code: &str| SfenError::Piece {
                rank,
                code: code.to_string(),
            };
            let mut col = 0usize;
            let mut chars = rank_text.char_indices().peekable();
            while let Some((start, c)) = chars.next() {
                if c.is_ascii_digit() {
                    let mut end = start + 1;
                    while let Some(&(i, d)) = chars.peek() {
                        if !d.is_ascii_digit() {
                            break;
                        }
                        end = i + 1;
                        chars.next();
                    }
                    let run: usize = rank_text[start..end]
                        .parse()
                        .map_err(|_| bad(&rank_text[start..end]))?;
                    if run == 0 || run > SIZE {
                        return Err(bad(&rank_text[start..end]));
                    }
                    col += run;
                    continue;
                }
                let (promoted, c, code_start) = if c == '+' {
                    match chars.next() {
                        Some((i, c)) => (true, c, i),
                        None => return Err(bad("+")),
                    }
                } else {
                    (false, c, start)
                };
                let abbr = if c == '[' {
                    let close = rank_text[code_start..]
                        .find(']')
                        .ok_or_else(|| bad(&rank_text[start..]))?;
                    let inner = &rank_text[code_start + 1..code_start + close];
                    // Skip the bracketed text.
                    while let Some(&(i, _)) = chars.peek() {
                        if i > code_start + close {
                            break;
                        }
                        chars.next();
                    }
                    inner
                } else if c.is_ascii_alphabetic() {
                    &rank_text[code_start..code_start + 1]
                } else {
                    return Err(bad(&c.to_string()));
                };
                // One case per code: `[LGN]` Black, `[lgn]` White; `[LGn]` is refused.
                let color = if abbr.chars().all(|c| c.is_ascii_lowercase()) {
                    Color::White
                } else if abbr.chars().all(|c| c.is_ascii_uppercase()) {
                    Color::Black
                } else {
                    return Err(bad(abbr));
                };
                let kind = cat.by_abbr(abbr).ok_or_else(|| bad(abbr))?;
                if col >= SIZE {
                    return Err(SfenError::Files {
                        rank,
                        files: col + 1,
                    });
                }
                let sq = Square::new(row as i32, col as i32).expect("checked");
                pos.set(
                    sq,
                    Some(Piece {
                        kind,
                        color,
                        promoted,
                    }),
                );
                col += 1;
            }
            if col != SIZE {
                return Err(SfenError::Files { rank, files: col });
            }
        }
        pos.side_to_move = match fields[1] {
            "b" => Color::Black,
            "w" => Color::White,
            other => return Err(SfenError::Side(other.to_string())),
        };
        if fields[2] != "-" {
            return Err(SfenError::Hand(fields[2].to_string()));
        }
        pos.move_number = fields[3]
            .parse()
            .ok()
            .filter(|&n: &u32| n >= 1)
            .ok_or_else(|| SfenError::MoveNumber(fields[3].to_string()))?;
        Ok(pos)
    }
}

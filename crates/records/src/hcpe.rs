//! Reading dlshogi's training files, streamed: `hcpe` (one position per 38-byte
//! record: `HuffmanCodedPos` 32 bytes, `i16` eval, `u16` best move, `u8` game result,
//! `u8` padding) and `hcpe3` (whole games, as [`crate::hcpe3`] writes them). A 10 GB
//! file is read a buffer at a time; a truncated or malformed entry is an error naming
//! its index, and the reader goes on with the next where the format allows it.

use std::io::{self, Read};

use shogi_game::Color;
use shogi_rules::{Move, Piece, PieceKind, Position, Square};

use crate::hcpe3::{board_kind_codes, hand_codes};

/// Bytes of one `hcpe` record.
pub const HCPE_SIZE: usize = 38;

/// Why an entry could not be read. Messages number entries from 1, as the importer
/// numbers games and lines; the `index` fields count from 0.
#[derive(Debug, thiserror::Error)]
pub enum HcpeError {
    /// Reading failed.
    #[error("reading: {0}")]
    Io(#[from] io::Error),
    /// The file ends inside an entry.
    #[error("entry {}: the file ends inside it ({have} of {need} bytes)", index + 1)]
    Truncated {
        /// 0-based entry index.
        index: u64,
        /// Bytes present.
        have: usize,
        /// Bytes the entry needs.
        need: usize,
    },
    /// The position does not decode or is not a legal position.
    #[error("entry {}: bad position: {reason}", index + 1)]
    Position {
        /// 0-based entry index.
        index: u64,
        /// What was wrong.
        reason: String,
    },
    /// A move code does not decode.
    #[error("entry {}: move code {code:#06x} is not a shogi move", index + 1)]
    Move {
        /// 0-based entry index.
        index: u64,
        /// The code.
        code: u16,
    },
}

/// Bits read least significant first, as Apery's bit stream stores them.
struct BitReader<'a> {
    bytes: &'a [u8; 32],
    pos: usize,
}

impl BitReader<'_> {
    fn bit(&mut self) -> Option<bool> {
        if self.pos >= 256 {
            return None;
        }
        let b = self.bytes[self.pos / 8] >> (self.pos % 8) & 1 == 1;
        self.pos += 1;
        Some(b)
    }
    fn bits(&mut self, count: u32) -> Option<u32> {
        let mut v = 0;
        for i in 0..count {
            v |= u32::from(self.bit()?) << i;
        }
        Some(v)
    }
    /// The entry of `codes` whose bit string comes next (the codes are prefix-free).
    fn code<T: Copy>(&mut self, codes: &[(Vec<bool>, T)]) -> Option<T> {
        let mut read: Vec<bool> = Vec::with_capacity(6);
        loop {
            read.push(self.bit()?);
            if let Some((_, v)) = codes.iter().find(|(c, _)| *c == read.as_slice()) {
                return Some(*v);
            }
            if read.len() > 6 {
                return None;
            }
        }
    }
}

/// The position a 32-byte `HuffmanCodedPos` holds (Apery's code, cshogi's `hcp`).
pub fn decode_huffman_coded_pos(bytes: &[u8; 32]) -> Result<Position, String> {
    let mut r = BitReader { bytes, pos: 0 };
    let short = || "the code ends early".to_string();
    let side = if r.bit().ok_or_else(short)? {
        Color::White
    } else {
        Color::Black
    };
    let bk = r.bits(7).ok_or_else(short)? as usize;
    let wk = r.bits(7).ok_or_else(short)? as usize;
    if bk >= 81 || wk >= 81 || bk == wk {
        return Err(format!("king squares {bk} and {wk}"));
    }
    let mut board: [Option<Piece>; 81] = [None; 81];
    board[bk] = Some(Piece::new(Color::Black, PieceKind::King));
    board[wk] = Some(Piece::new(Color::White, PieceKind::King));
    let kinds = board_kind_codes();
    let mut pieces = 2;
    for (i, cell) in board.iter_mut().enumerate() {
        if i == bk || i == wk {
            continue;
        }
        if !r.bit().ok_or_else(short)? {
            continue;
        }
        let kind = r
            .code(&kinds)
            .ok_or_else(|| format!("square {i}: no piece code"))?;
        let color = if r.bit().ok_or_else(short)? {
            Color::White
        } else {
            Color::Black
        };
        let promoted = kind != PieceKind::Gold && r.bit().ok_or_else(short)?;
        *cell = Some(Piece::new(
            color,
            if promoted { kind.promote() } else { kind },
        ));
        pieces += 1;
    }
    let mut hands = [[0u8; 7]; 2];
    let codes = hand_codes();
    while r.pos < 256 {
        let kind: PieceKind = r
            .code(&codes)
            .ok_or_else(|| "a bad hand code".to_string())?;
        let color = if r.bit().ok_or_else(short)? {
            Color::White
        } else {
            Color::Black
        };
        hands[color as usize][kind as usize] += 1;
        pieces += 1;
    }
    if pieces != 40 {
        return Err(format!("{pieces} pieces (a full set is 40)"));
    }
    Position::from_placement(|sq: Square| board[sq.index()], &hands, side)
        .map_err(|e| e.to_string())
}

/// The move a dlshogi/cshogi 16-bit move code stands for: `to | from << 7 | promote <<
/// 14`, a drop's `from` being 81 + piece type - 1 (pawn, lance, knight, silver, bishop,
/// rook, gold = 1..=7). `None` for codes outside the board (0 is cshogi's "no move").
pub fn move_from16(code: u16) -> Option<Move> {
    let to = usize::from(code & 0x7f);
    let from = usize::from(code >> 7 & 0x7f);
    let promote = code >> 14 & 1 == 1;
    if to >= 81 || code == 0 {
        return None;
    }
    let to = Square::from_index(to);
    if from < 81 {
        return Some(Move::normal(Square::from_index(from), to, promote));
    }
    let kind = match from - 81 + 1 {
        1 => PieceKind::Pawn,
        2 => PieceKind::Lance,
        3 => PieceKind::Knight,
        4 => PieceKind::Silver,
        5 => PieceKind::Bishop,
        6 => PieceKind::Rook,
        7 => PieceKind::Gold,
        _ => return None,
    };
    (!promote).then(|| Move::drop(kind, to))
}

/// One `hcpe` position.
#[derive(Clone, Debug, PartialEq)]
pub struct HcpePosition {
    /// The position.
    pub position: Position,
    /// The evaluation in centipawns, for the side to move.
    pub eval: i16,
    /// The move played (or the best move found).
    pub best_move: Move,
    /// The game's winner (`None`: a draw).
    pub winner: Option<Color>,
}

/// The winner a dlshogi result byte names (bits 0-1: 0 draw, 1 Black, 2 White).
pub fn winner_of_result(result: u8) -> Option<Color> {
    match result & 3 {
        1 => Some(Color::Black),
        2 => Some(Color::White),
        _ => None,
    }
}

/// Fills `buf` from `r`, returning how many bytes were read (fewer only at the end).
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut have = 0;
    while have < buf.len() {
        match r.read(&mut buf[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(have)
}

/// Reads an entry's fixed-size head into `buf`: `None` at a clean end of the stream; a
/// read failure or an entry cut short is an error and ends the stream (`done`).
fn read_head(
    r: &mut impl Read,
    buf: &mut [u8],
    index: u64,
    done: &mut bool,
) -> Option<Result<(), HcpeError>> {
    let result = match read_full(r, buf) {
        Err(e) => Err(e.into()),
        Ok(0) => {
            *done = true;
            return None;
        }
        Ok(have) if have < buf.len() => Err(HcpeError::Truncated {
            index,
            have,
            need: buf.len(),
        }),
        Ok(_) => return Some(Ok(())),
    };
    *done = true;
    Some(result)
}

/// The positions of an `hcpe` stream, one at a time. A bad entry is an error in its
/// place and the next entry still reads (entries have a fixed size); a truncated last
/// entry ends the stream with its error.
#[derive(Debug)]
pub struct HcpeReader<R> {
    inner: R,
    index: u64,
    done: bool,
}

impl<R: Read> HcpeReader<R> {
    /// A reader of `inner` (wrap a file in a `BufReader`).
    pub fn new(inner: R) -> Self {
        HcpeReader {
            inner,
            index: 0,
            done: false,
        }
    }
}

impl<R: Read> Iterator for HcpeReader<R> {
    type Item = Result<HcpePosition, HcpeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut buf = [0u8; HCPE_SIZE];
        let index = self.index;
        if let Err(e) = read_head(&mut self.inner, &mut buf, index, &mut self.done)? {
            return Some(Err(e));
        }
        self.index += 1;
        let hcp: &[u8; 32] = buf[..32].try_into().expect("32 bytes");
        let position = match decode_huffman_coded_pos(hcp) {
            Ok(p) => p,
            Err(reason) => return Some(Err(HcpeError::Position { index, reason })),
        };
        let eval = i16::from_le_bytes([buf[32], buf[33]]);
        let code = u16::from_le_bytes([buf[34], buf[35]]);
        let Some(best_move) = move_from16(code) else {
            return Some(Err(HcpeError::Move { index, code }));
        };
        Some(Ok(HcpePosition {
            position,
            eval,
            best_move,
            winner: winner_of_result(buf[36]),
        }))
    }
}

/// One move of an `hcpe3` game.
#[derive(Clone, Debug, PartialEq)]
pub struct Hcpe3Move {
    /// The move played.
    pub mv: Move,
    /// The evaluation in centipawns, for the side to move.
    pub eval: i16,
    /// The searched candidates and their visits (empty: no policy target here).
    pub candidates: Vec<(Move, u16)>,
}

/// One `hcpe3` game.
#[derive(Clone, Debug, PartialEq)]
pub struct Hcpe3Game {
    /// The start position.
    pub start: Position,
    /// The result byte (bits 0-1 the winner, [`winner_of_result`]; bit 2 repetition,
    /// bit 3 declaration, bit 4 the move limit).
    pub result: u8,
    /// The moves.
    pub moves: Vec<Hcpe3Move>,
}

/// The games of an `hcpe3` stream, one at a time. Games have no fixed size, so the
/// first bad game ends the stream with its error.
#[derive(Debug)]
pub struct Hcpe3Reader<R> {
    inner: R,
    index: u64,
    done: bool,
}

impl<R: Read> Hcpe3Reader<R> {
    /// A reader of `inner` (wrap a file in a `BufReader`).
    pub fn new(inner: R) -> Self {
        Hcpe3Reader {
            inner,
            index: 0,
            done: false,
        }
    }

    fn exact(&mut self, buf: &mut [u8], index: u64) -> Result<(), HcpeError> {
        let have = read_full(&mut self.inner, buf)?;
        if have < buf.len() {
            return Err(HcpeError::Truncated {
                index,
                have,
                need: buf.len(),
            });
        }
        Ok(())
    }

    fn game(&mut self, index: u64, header: &[u8; 36]) -> Result<Hcpe3Game, HcpeError> {
        let hcp: &[u8; 32] = header[..32].try_into().expect("32 bytes");
        let start = decode_huffman_coded_pos(hcp)
            .map_err(|reason| HcpeError::Position { index, reason })?;
        let count = u16::from_le_bytes([header[32], header[33]]);
        let result = header[34];
        let mut moves = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            let mut info = [0u8; 6];
            self.exact(&mut info, index)?;
            let code = u16::from_le_bytes([info[0], info[1]]);
            let mv = move_from16(code).ok_or(HcpeError::Move { index, code })?;
            let eval = i16::from_le_bytes([info[2], info[3]]);
            let n = u16::from_le_bytes([info[4], info[5]]);
            let mut raw = vec![0u8; usize::from(n) * 4];
            self.exact(&mut raw, index)?;
            let candidates = raw
                .chunks_exact(4)
                .map(|c| {
                    let code = u16::from_le_bytes([c[0], c[1]]);
                    let visits = u16::from_le_bytes([c[2], c[3]]);
                    move_from16(code)
                        .map(|m| (m, visits))
                        .ok_or(HcpeError::Move { index, code })
                })
                .collect::<Result<_, _>>()?;
            moves.push(Hcpe3Move {
                mv,
                eval,
                candidates,
            });
        }
        Ok(Hcpe3Game {
            start,
            result,
            moves,
        })
    }
}

impl<R: Read> Iterator for Hcpe3Reader<R> {
    type Item = Result<Hcpe3Game, HcpeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let index = self.index;
        let mut header = [0u8; 36];
        if let Err(e) = read_head(&mut self.inner, &mut header, index, &mut self.done)? {
            return Some(Err(e));
        }
        self.index += 1;
        let game = self.game(index, &header);
        if game.is_err() {
            self.done = true;
        }
        Some(game)
    }
}

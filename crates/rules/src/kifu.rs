//! Game records: CSA import (single games and the multi-game files floodgate archives
//! use) and export, KIF (Japanese notation) import and export, the USI `position` line
//! import, and how each records a game's end ([`Ending`]). Standard shogi only (none of
//! the formats defines minishogi).

use shogi_game::Outcome;
use thiserror::Error;

mod ending;
mod ki2;
mod kif;
mod usi;

pub use ending::Ending;
pub use ki2::from_ki2;
pub use kif::from_kif;
pub use usi::from_usi_line;

use crate::position::{HANDICAPS, Position};
use crate::types::{Color, Move, PieceKind, Square, Variant};

/// A game record: start position, moves, and the end marker if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The start position.
    pub start: Position,
    /// The moves from the start position.
    pub moves: Vec<Move>,
    /// The CSA end marker without `%` (`TORYO`, `SENNICHITE`, `KACHI`, ...), if any.
    pub end: Option<String>,
    /// Player names (Black, White) from `N+` / `N-` lines (KIF: 先手 / 後手).
    pub names: [Option<String>; 2],
    /// Player ratings (Black, White) where the record states them (floodgate's
    /// `'black_rate:NAME:RATING` comments).
    pub ratings: [Option<f64>; 2],
}

impl Record {
    /// A record of `moves` from `start` with no end marker, names or ratings.
    pub fn new(start: Position, moves: Vec<Move>) -> Record {
        Record {
            start,
            moves,
            end: None,
            names: [None, None],
            ratings: [None, None],
        }
    }

    /// How the record says the game ended: its end marker, or [`Ending::Unfinished`]
    /// without one. An unknown marker (`%ERROR`, ...) counts as aborted.
    pub fn ending(&self) -> Ending {
        match self.end.as_deref() {
            None => Ending::Unfinished,
            Some(marker) => Ending::from_csa_marker(marker).unwrap_or(Ending::Aborted),
        }
    }

    /// The position after the last move (the moves were checked when the record was read).
    pub fn final_position(&self) -> Position {
        let mut pos = self.start.clone();
        for &mv in &self.moves {
            pos.play_unchecked(mv);
        }
        pos
    }

    /// The game's result: the ending applied to the final position's side to move, a
    /// record that stops at a mate counted as mate. `None` for an abandoned or unfinished
    /// game.
    pub fn outcome(&self) -> Option<Outcome> {
        let last = self.final_position();
        let stuck = !last.has_legal_move();
        self.ending().outcome(last.side_to_move(), stuck)
    }
}

/// Why a record could not be read or written.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// A line could not be parsed.
    #[error("{format} line {line}: {reason}: `{text}`")]
    Syntax {
        /// The format being read (`csa`, `kif`, `usi`).
        format: &'static str,
        /// 1-based line number.
        line: usize,
        /// The offending text.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A move is illegal in its position.
    #[error("{format} line {line}: illegal move `{text}`: {reason}")]
    Illegal {
        /// The format being read or written.
        format: &'static str,
        /// 1-based line number (0 when writing).
        line: usize,
        /// The move text.
        text: String,
        /// The rule it breaks.
        reason: crate::IllegalMove,
    },
    /// The start position is not a legal position.
    #[error("start position: {0}")]
    Position(#[from] crate::SfenError),
    /// A composed problem with one king (詰将棋): a position to solve, not a game.
    /// `sfen` is its position (which the rules, wanting two kings, would not accept).
    #[error("a tsume problem (one king): a position to solve, not a game ({sfen})")]
    Tsume { sfen: String },
    /// The format does not cover this variant.
    #[error("{0} records support standard shogi only")]
    Variant(&'static str),
}

const CSA_NAMES: [&str; 14] = [
    "FU", "KY", "KE", "GI", "KA", "HI", "KI", "OU", "TO", "NY", "NK", "NG", "UM", "RY",
];

fn csa_kind(s: &str) -> Option<PieceKind> {
    CSA_NAMES
        .iter()
        .position(|n| *n == s)
        .map(PieceKind::from_index)
}

fn csa_square(sq: Square) -> String {
    format!("{}{}", sq.file() + 1, sq.rank() + 1)
}

fn parse_csa_square(b: &[u8]) -> Option<Square> {
    let f = b[0].wrapping_sub(b'1');
    let r = b[1].wrapping_sub(b'1');
    (f < 9 && r < 9).then(|| Square::new(f, r))
}

/// Writes a record in CSA format (V2.2). The start is `PI` when it is the even start,
/// otherwise the full board (`P1`..`P9`) and hands (`P+00FU...`).
pub fn to_csa(rec: &Record) -> Result<String, RecordError> {
    let start = &rec.start;
    if start.variant() != Variant::Shogi {
        return Err(RecordError::Variant("CSA"));
    }
    let mut out = String::from("V2.2\n");
    for (i, sign) in ["+", "-"].iter().enumerate() {
        if let Some(n) = &rec.names[i] {
            out.push_str(&format!("N{sign}{n}\n"));
        }
    }
    for (i, side) in ["black", "white"].iter().enumerate() {
        if let Some(r) = rec.ratings[i] {
            let name = rec.names[i].as_deref().unwrap_or("");
            out.push_str(&format!("'{side}_rate:{name}:{r}\n"));
        }
    }
    let even = Position::startpos(Variant::Shogi);
    if start.to_sfen() == even.to_sfen() {
        out.push_str("PI\n");
    } else {
        for rank in 0..9 {
            out.push_str(&format!("P{}", rank + 1));
            for file in (0..9).rev() {
                match start.piece_at(Square::new(file, rank)) {
                    None => out.push_str(" * "),
                    Some(p) => {
                        out.push(if p.color == Color::Black { '+' } else { '-' });
                        out.push_str(CSA_NAMES[p.kind.index()]);
                    }
                }
            }
            out.push('\n');
        }
        for c in Color::ALL {
            let hand = start.hand(c);
            if hand.iter().all(|&n| n == 0) {
                continue;
            }
            out.push_str(if c == Color::Black { "P+" } else { "P-" });
            for k in (0..7).rev() {
                for _ in 0..hand[k] {
                    out.push_str("00");
                    out.push_str(CSA_NAMES[k]);
                }
            }
            out.push('\n');
        }
    }
    out.push_str(if start.side_to_move() == Color::Black {
        "+\n"
    } else {
        "-\n"
    });
    let mut pos = start.clone();
    for &mv in &rec.moves {
        let sign = if pos.side_to_move() == Color::Black {
            '+'
        } else {
            '-'
        };
        let (from, kind) = match mv.from() {
            None => ("00".to_string(), mv.drop_kind().unwrap_or(PieceKind::Pawn)),
            Some(f) => {
                let k = pos.piece_at(f).map_or(PieceKind::Pawn, |p| p.kind);
                (
                    csa_square(f),
                    if mv.is_promotion() { k.promote() } else { k },
                )
            }
        };
        out.push_str(&format!(
            "{sign}{from}{}{}\n",
            csa_square(mv.to()),
            CSA_NAMES[kind.index()]
        ));
        pos.play(mv).map_err(|reason| RecordError::Illegal {
            format: "csa",
            line: 0,
            text: mv.to_string(),
            reason,
        })?;
    }
    if let Some(e) = &rec.end {
        out.push_str(&format!("%{e}\n"));
    }
    Ok(out)
}

/// Reads a CSA record: `V`, `N+`/`N-`, `$` and `'` lines are accepted (names kept,
/// floodgate's `'black_rate:NAME:RATING` / `'white_rate:...` comments read as ratings, the
/// rest ignored); the start is `PI` (optionally with removed pieces such as `PI82HI22KA`),
/// `P1`..`P9` rows, and `P+`/`P-` piece lines; then the side to move (`+`/`-`), moves
/// (`+7776FU`, optionally `,T12`) and an end marker (`%TORYO`, ...). Every move is
/// checked for legality. A file of several games separated by `/` lines is read by
/// [`from_csa_games`].
pub fn from_csa(text: &str) -> Result<Record, RecordError> {
    csa_record(text.lines().enumerate().map(|(i, l)| (i + 1, l)))
}

/// Reads every game of a CSA file whose games are separated by lines holding only `/`
/// (CSA 2.2's multi-game files; a single game reads as one). Each game is read on its
/// own, so a malformed game is an error in its place (with the file's line numbers) and
/// the others still read.
pub fn from_csa_games(text: &str) -> Vec<Result<Record, RecordError>> {
    let mut games = Vec::new();
    let mut current: Vec<(usize, &str)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_end_matches(['\r', ' ']) == "/" {
            if current.iter().any(|(_, l)| !l.trim().is_empty()) {
                games.push(csa_record(current.drain(..)));
            }
            current.clear();
        } else {
            current.push((i + 1, line));
        }
    }
    if current.iter().any(|(_, l)| !l.trim().is_empty()) {
        games.push(csa_record(current.into_iter()));
    }
    games
}

/// A rating comment's value: `'black_rate:NAME:1234.5` (floodgate) for `side`.
fn csa_rating(comment: &str, side: &str) -> Option<f64> {
    let rest = comment.strip_prefix(side)?.strip_prefix("_rate:")?;
    rest.rsplit_once(':')?.1.trim().parse().ok()
}

/// One CSA game from its numbered lines.
fn csa_record<'a>(lines: impl Iterator<Item = (usize, &'a str)>) -> Result<Record, RecordError> {
    let mut setup = CsaSetup::default();
    let mut side = None;
    let mut names: [Option<String>; 2] = [None, None];
    let mut ratings: [Option<f64>; 2] = [None, None];
    let mut pos: Option<Position> = None;
    let mut start: Option<Position> = None;
    let mut moves = Vec::new();
    let mut end = None;
    let mut last_line = 0;
    for (line, raw_line) in lines {
        last_line = line;
        if let Some(comment) = raw_line.strip_prefix('\'') {
            // A comment may hold commas: it is never split into statements.
            for (i, side) in ["black", "white"].iter().enumerate() {
                if let Some(r) = csa_rating(comment.trim_end(), side) {
                    ratings[i] = Some(r);
                }
            }
            continue;
        }
        for stmt in raw_line.split(',') {
            let s = stmt.trim_end_matches(['\r', ' ']);
            let err = |reason: &str| RecordError::Syntax {
                format: "csa",
                line,
                text: s.to_string(),
                reason: reason.to_string(),
            };
            if s.is_empty()
                || s.starts_with('\'')
                || s.starts_with('$')
                || s.starts_with('V')
                || s.starts_with('T')
            {
                continue;
            }
            if end.is_some() {
                // shogi-server logs repeat the marker after a time line (`%KACHI`, `T10`,
                // `%KACHI`): the first ending stands. Anything else after it is a second
                // game without its `/` separator.
                if s.starts_with('%') {
                    continue;
                }
                return Err(err("a statement after the end marker"));
            }
            if let Some(n) = s.strip_prefix("N+") {
                names[0] = Some(n.to_string());
            } else if let Some(n) = s.strip_prefix("N-") {
                names[1] = Some(n.to_string());
            } else if let Some(e) = s.strip_prefix('%') {
                end = Some(e.to_string());
            } else if let Some(rest) = s.strip_prefix("PI") {
                setup.handicap(rest).map_err(err)?;
            } else if let Some(rest) = s.strip_prefix('P') {
                setup.p_line(rest).map_err(err)?;
            } else if (s == "+" || s == "-") && pos.is_none() {
                side = Some(if s == "+" { Color::Black } else { Color::White });
            } else if (s.starts_with('+') || s.starts_with('-')) && s.len() == 7 && s.is_ascii() {
                if pos.is_none() {
                    if !setup.have_board {
                        return Err(err("move before the start position"));
                    }
                    let p = setup.position(side.unwrap_or(Color::Black))?;
                    start = Some(p.clone());
                    pos = Some(p);
                }
                let Some(p) = pos.as_mut() else { continue };
                let mv = csa_move(p, s).map_err(err)?;
                p.play(mv).map_err(|reason| RecordError::Illegal {
                    format: "csa",
                    line,
                    text: s.to_string(),
                    reason,
                })?;
                moves.push(mv);
            } else {
                return Err(err("unrecognised statement"));
            }
        }
    }
    let start = match start {
        Some(s) => s,
        None => {
            if !setup.have_board {
                return Err(RecordError::Syntax {
                    format: "csa",
                    line: last_line,
                    text: String::new(),
                    reason: "no start position".into(),
                });
            }
            setup.position(side.unwrap_or(Color::Black))?
        }
    };
    Ok(Record {
        start,
        moves,
        end,
        names,
        ratings,
    })
}

/// A CSA record's start position as its `PI` and `P` lines build it.
struct CsaSetup {
    board: [Option<(Color, PieceKind)>; 81],
    hands: [[u8; 7]; 2],
    /// Whether any line set up the board (a record without one has no start).
    have_board: bool,
}

impl Default for CsaSetup {
    fn default() -> Self {
        CsaSetup {
            board: [None; 81],
            hands: [[0; 7]; 2],
            have_board: false,
        }
    }
}

impl CsaSetup {
    /// `PI` with removed pieces (`82HI22KA`): the even start less those (駒落ち).
    fn handicap(&mut self, rest: &str) -> Result<(), &'static str> {
        let even = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
        let p = Position::from_sfen(Variant::Shogi, even).expect("the even start parses");
        for sq in 0..81 {
            self.board[sq] = p
                .piece_at(Square::from_index(sq))
                .map(|p| (p.color, p.kind));
        }
        let b = rest.as_bytes();
        if !b.len().is_multiple_of(4) || !rest.is_ascii() {
            return Err("PI expects square+piece pairs like 82HI");
        }
        for chunk in b.chunks(4) {
            let sq = parse_csa_square(&chunk[..2]).ok_or("bad square")?;
            self.board[sq.index()] = None;
        }
        self.have_board = true;
        Ok(())
    }

    /// A `P1`..`P9` board row or a `P+`/`P-` piece line (`rest` follows the `P`).
    fn p_line(&mut self, rest: &str) -> Result<(), &'static str> {
        let bytes = rest.as_bytes();
        match bytes.first() {
            Some(d @ b'1'..=b'9') => self.row(d - b'1', &rest[1..])?,
            Some(b'+') => self.pieces(Color::Black, &rest[1..])?,
            Some(b'-') => self.pieces(Color::White, &rest[1..])?,
            _ => return Err("unknown P line"),
        }
        self.have_board = true;
        Ok(())
    }

    /// Board row `rank` (0 = rank 1): 9 cells of 3 characters, ` * ` or `+FU`.
    fn row(&mut self, rank: u8, cells: &str) -> Result<(), &'static str> {
        // Trailing blanks of ` * ` cells may have been trimmed.
        let row = format!("{cells:<27}");
        if row.len() != 27 || !row.is_ascii() {
            return Err("a board row has 9 cells of 3 characters");
        }
        for c in 0..9 {
            let cell = &row[c * 3..c * 3 + 3];
            let sq = Square::new(8 - c as u8, rank);
            self.board[sq.index()] = match cell {
                " * " => None,
                _ => {
                    let color = match &cell[..1] {
                        "+" => Color::Black,
                        "-" => Color::White,
                        _ => return Err("bad cell"),
                    };
                    Some((color, csa_kind(&cell[1..]).ok_or("bad piece")?))
                }
            };
        }
        Ok(())
    }

    /// `P+`/`P-` pieces of `color`: square+piece pairs, `00` for the hand.
    fn pieces(&mut self, color: Color, pairs: &str) -> Result<(), &'static str> {
        let b = pairs.as_bytes();
        if !b.len().is_multiple_of(4) || !pairs.is_ascii() {
            return Err("P+/P- expects square+piece pairs like 00FU");
        }
        for chunk in b.chunks(4) {
            let name = std::str::from_utf8(&chunk[2..]).unwrap_or("");
            if &chunk[..2] == b"00" {
                if name == "AL" {
                    self.all_remaining_to_hand(color);
                    continue;
                }
                let k = csa_kind(name)
                    .filter(|k| k.index() < 7)
                    .ok_or("bad hand piece")?;
                let n = &mut self.hands[color as usize][k.index()];
                // 256 entries would wrap a u8 (to 0 in release builds).
                *n = n.checked_add(1).ok_or("too many hand pieces of one kind")?;
            } else {
                let sq = parse_csa_square(&chunk[..2]).ok_or("bad square")?;
                let k = csa_kind(name).ok_or("bad piece")?;
                self.board[sq.index()] = Some((color, k));
            }
        }
        Ok(())
    }

    /// `00AL`: every piece not on the board or in a hand goes to `color`'s hand (the
    /// kings aside), as tsume records give the defender the rest.
    fn all_remaining_to_hand(&mut self, color: Color) {
        // The full set of each kind in hand order: pawn, lance, knight, silver, bishop,
        // rook, gold.
        const FULL_SET: [u8; 7] = [18, 4, 4, 4, 2, 2, 4];
        let mut placed = [0u8; 7];
        for (_, kind) in self.board.iter().flatten() {
            let base = kind.unpromote().index();
            if base < 7 {
                placed[base] = placed[base].saturating_add(1);
            }
        }
        for hand in &self.hands {
            for (k, n) in hand.iter().enumerate() {
                placed[k] = placed[k].saturating_add(*n);
            }
        }
        for k in 0..7 {
            self.hands[color as usize][k] += FULL_SET[k].saturating_sub(placed[k]);
        }
    }

    /// The position set up, `side` to move, validated as any SFEN.
    fn position(&self, side: Color) -> Result<Position, RecordError> {
        build(&self.board, &self.hands, side)
    }
}

/// A CSA move (`+7776FU`, `-0055KA`) in `p`, where its mover must be to move; the piece
/// named is the one after the move, so a promotion is a change of piece.
fn csa_move(p: &Position, s: &str) -> Result<Move, &'static str> {
    let sign = if s.starts_with('+') {
        Color::Black
    } else {
        Color::White
    };
    if sign != p.side_to_move() {
        return Err("move by the side not to move");
    }
    let b = s.as_bytes();
    let to = parse_csa_square(&b[3..5]).ok_or("bad square")?;
    let kind = csa_kind(&s[5..7]).ok_or("bad piece")?;
    if &b[1..3] == b"00" {
        if kind.index() >= 7 {
            return Err("cannot drop that piece");
        }
        return Ok(Move::drop(kind, to));
    }
    let from = parse_csa_square(&b[1..3]).ok_or("bad square")?;
    let before = p.piece_at(from).map(|pc| pc.kind);
    let promote = before.is_some_and(|k| !k.is_promoted() && kind.is_promoted());
    if before.is_some_and(|k| k != kind && !(promote && k.promote() == kind)) {
        return Err("the piece does not match the board");
    }
    Ok(Move::normal(from, to, promote))
}

fn build(
    board: &[Option<(Color, PieceKind)>; 81],
    hands: &[[u8; 7]; 2],
    side: Color,
) -> Result<Position, RecordError> {
    let kings = board
        .iter()
        .flatten()
        .filter(|(_, k)| *k == PieceKind::King)
        .count();
    let piece_at = |sq: Square| board[sq.index()].map(|(c, k)| crate::Piece::new(c, k));
    if kings == 1 {
        let sfen = crate::position::write_sfen(9, piece_at, side, hands, 1);
        return Err(RecordError::Tsume { sfen });
    }
    Ok(Position::from_placement(piece_at, hands, side)?)
}

const KANJI_RANK: [&str; 9] = ["一", "二", "三", "四", "五", "六", "七", "八", "九"];
const WIDE_FILE: [&str; 9] = ["１", "２", "３", "４", "５", "６", "７", "８", "９"];
const KIF_NAMES: [&str; 14] = [
    "歩", "香", "桂", "銀", "角", "飛", "金", "玉", "と", "成香", "成桂", "成銀", "馬", "龍",
];

/// The KIF (Japanese) text of one move in `pos`: `７六歩(77)`, `同　角成(88)`, `５五角打`,
/// `２二銀不成(33)`. `prev_to` is the previous move's destination (for 同).
pub fn kif_move(pos: &Position, mv: Move, prev_to: Option<Square>) -> String {
    let to = mv.to();
    let mut s = if prev_to == Some(to) {
        "同　".to_string()
    } else {
        format!(
            "{}{}",
            WIDE_FILE[to.file() as usize],
            KANJI_RANK[to.rank() as usize]
        )
    };
    match mv.from() {
        None => {
            let k = mv.drop_kind().unwrap_or(PieceKind::Pawn);
            s.push_str(KIF_NAMES[k.index()]);
            s.push('打');
        }
        Some(from) => {
            let k = pos.piece_at(from).map_or(PieceKind::Pawn, |p| p.kind);
            s.push_str(KIF_NAMES[k.index()]);
            let us = pos.side_to_move();
            if mv.is_promotion() {
                s.push('成');
            } else if k.can_promote() && (pos.in_zone(us, from) || pos.in_zone(us, to)) {
                s.push_str("不成");
            }
            s.push_str(&format!("({}{})", from.file() + 1, from.rank() + 1));
        }
    }
    s
}

/// Writes a record as KIF: header (手合割 or the start SFEN as a comment), then
/// `手数----指手---------消費時間--` and one numbered move per line, ending with the end
/// marker's word (投了, 千日手, 入玉勝ち, 中断, ...: [`Ending::kif_word`]).
pub fn to_kif(rec: &Record) -> Result<String, RecordError> {
    let start = &rec.start;
    if start.variant() != Variant::Shogi {
        return Err(RecordError::Variant("KIF"));
    }
    let mut out = String::from("# KIF形式棋譜ファイル\n");
    let sfen = start.to_sfen();
    let even = Position::startpos(Variant::Shogi).to_sfen();
    let handicap = HANDICAPS.iter().find(|(n, _)| {
        Position::handicap(n)
            .map(|p| p.to_sfen() == sfen)
            .unwrap_or(false)
    });
    if sfen == even {
        out.push_str("手合割：平手\n");
    } else if let Some((n, _)) = handicap {
        let jp = kif::KIF_HANDICAPS
            .iter()
            .find(|(name, _)| name == n)
            .map_or("", |(_, jp)| *jp);
        out.push_str(&format!("手合割：{jp}\n"));
    } else {
        out.push_str(&format!("#SFEN: {sfen}\n"));
    }
    out.push_str(&format!(
        "先手：{}\n",
        rec.names[0].as_deref().unwrap_or("")
    ));
    out.push_str(&format!(
        "後手：{}\n",
        rec.names[1].as_deref().unwrap_or("")
    ));
    out.push_str("手数----指手---------消費時間--\n");
    let mut pos = start.clone();
    let mut prev = None;
    for (i, &mv) in rec.moves.iter().enumerate() {
        out.push_str(&format!("{:>4} {}\n", i + 1, kif_move(&pos, mv, prev)));
        pos.play(mv).map_err(|reason| RecordError::Illegal {
            format: "kif",
            line: i + 1,
            text: mv.to_string(),
            reason,
        })?;
        prev = Some(mv.to());
    }
    let n = rec.moves.len() + 1;
    if let Some(word) = rec.ending().kif_word(pos.side_to_move()) {
        out.push_str(&format!("{n:>4} {word}\n"));
    }
    Ok(out)
}

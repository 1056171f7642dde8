//! Game records: CSA export and import, KIF (Japanese notation) export. Standard shogi
//! only (neither format defines minishogi).

use thiserror::Error;

use crate::position::{HANDICAPS, Position, write_sfen};
use crate::types::{Color, Move, PieceKind, Square, Variant};

/// A game record: start position, moves, and the end marker if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The start position.
    pub start: Position,
    /// The moves from the start position.
    pub moves: Vec<Move>,
    /// The CSA end marker without `%` (`TORYO`, `SENNICHITE`, `KACHI`, ...), if any.
    pub end: Option<String>,
    /// Player names (Black, White) from `N+` / `N-` lines.
    pub names: [Option<String>; 2],
}

/// Why a record could not be read or written.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RecordError {
    /// A line could not be parsed.
    #[error("csa line {line}: {reason}: `{text}`")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// The offending text.
        text: String,
        /// What is wrong.
        reason: String,
    },
    /// A move is illegal in its position.
    #[error("csa line {line}: illegal move `{text}`: {reason}")]
    Illegal {
        /// 1-based line number.
        line: usize,
        /// The move text.
        text: String,
        /// The rule it breaks.
        reason: crate::IllegalMove,
    },
    /// The start position is not a legal position.
    #[error("csa start position: {0}")]
    Position(#[from] crate::SfenError),
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

/// Reads a CSA record: `V`, `N+`/`N-`, `$` and `'` lines are accepted (names kept, the
/// rest ignored); the start is `PI` (optionally with removed pieces such as `PI82HI22KA`),
/// `P1`..`P9` rows, and `P+`/`P-` piece lines; then the side to move (`+`/`-`), moves
/// (`+7776FU`, optionally `,T12`) and an end marker (`%TORYO`, ...). Every move is
/// checked for legality.
pub fn from_csa(text: &str) -> Result<Record, RecordError> {
    let mut setup = CsaSetup::default();
    let mut side = None;
    let mut names: [Option<String>; 2] = [None, None];
    let mut pos: Option<Position> = None;
    let mut start: Option<Position> = None;
    let mut moves = Vec::new();
    let mut end = None;
    for (i, raw_line) in text.lines().enumerate() {
        let line = i + 1;
        for stmt in raw_line.split(',') {
            let s = stmt.trim_end_matches(['\r', ' ']);
            let err = |reason: &str| RecordError::Syntax {
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
                    line: 0,
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
                    return Err("AL (all remaining pieces) is not supported");
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
    let piece_at = |sq: Square| board[sq.index()].map(|(c, k)| crate::Piece::new(c, k));
    let sfen = write_sfen(9, piece_at, side, hands, 1);
    Ok(Position::from_sfen(Variant::Shogi, &sfen)?)
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
/// `手数----指手---------消費時間--` and one numbered move per line, ending with 投了 /
/// 千日手 / 入玉勝ち / 中断 from the end marker.
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
    let jp = |n: &str| match n {
        "lance" => "香落ち",
        "bishop" => "角落ち",
        "rook" => "飛車落ち",
        "rook-lance" => "飛香落ち",
        "2-piece" => "二枚落ち",
        "4-piece" => "四枚落ち",
        "6-piece" => "六枚落ち",
        "8-piece" => "八枚落ち",
        _ => "十枚落ち",
    };
    if sfen == even {
        out.push_str("手合割：平手\n");
    } else if let Some((n, _)) = handicap {
        out.push_str(&format!("手合割：{}\n", jp(n)));
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
            line: i + 1,
            text: mv.to_string(),
            reason,
        })?;
        prev = Some(mv.to());
    }
    let n = rec.moves.len() + 1;
    match rec.end.as_deref() {
        Some("TORYO") => out.push_str(&format!("{n:>4} 投了\n")),
        Some("SENNICHITE") => out.push_str(&format!("{n:>4} 千日手\n")),
        Some("KACHI") => out.push_str(&format!("{n:>4} 入玉勝ち\n")),
        Some("CHUDAN") => out.push_str(&format!("{n:>4} 中断\n")),
        Some("TSUMI") => out.push_str(&format!("{n:>4} 詰み\n")),
        Some("JISHOGI") => out.push_str(&format!("{n:>4} 持将棋\n")),
        _ => {}
    }
    Ok(out)
}

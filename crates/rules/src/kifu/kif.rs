//! Reading KIF (Japanese notation) records: the header (手合割, 先手/後手, a BOD board
//! diagram, or the `#SFEN:` comment this project writes for composed positions), the
//! numbered main line (`７六歩(77)`, `同　角成(88)`, `５五角打`, `２二銀不成(33)`) with its
//! times, and the ending word (投了, 千日手, ...). Variations (`変化：`) are not read:
//! the main line is the game.

use super::{Ending, KIF_NAMES, Record, RecordError, build};
use crate::position::Position;
use crate::types::{Color, Move, PieceKind, Square, Variant};

/// The handicaps' KIF names (手合割), beside the rules' names for them.
pub(super) const KIF_HANDICAPS: [(&str, &str); 15] = [
    ("lance", "香落ち"),
    ("right-lance", "右香落ち"),
    ("bishop", "角落ち"),
    ("rook", "飛車落ち"),
    ("rook-lance", "飛香落ち"),
    ("2-piece", "二枚落ち"),
    ("3-piece", "三枚落ち"),
    ("4-piece", "四枚落ち"),
    ("5-piece", "五枚落ち"),
    ("left-5-piece", "左五枚落ち"),
    ("6-piece", "六枚落ち"),
    ("left-7-piece", "左七枚落ち"),
    ("right-7-piece", "右七枚落ち"),
    ("8-piece", "八枚落ち"),
    ("10-piece", "十枚落ち"),
];

/// Single-character piece names of moves and board diagrams beyond [`KIF_NAMES`]
/// (王 for the king, 竜 for the dragon; 全, 圭, 杏 for the promoted silver, knight and
/// lance in diagrams).
const KIF_ALIASES: [(&str, PieceKind); 5] = [
    ("王", PieceKind::King),
    ("竜", PieceKind::Dragon),
    ("全", PieceKind::ProSilver),
    ("圭", PieceKind::ProKnight),
    ("杏", PieceKind::ProLance),
];

const KANJI_DIGITS: [char; 10] = ['〇', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
const WIDE_DIGITS: [char; 10] = ['０', '１', '２', '３', '４', '５', '６', '７', '８', '９'];

/// A digit 1..=9 written as ASCII, full width or kanji.
pub(super) fn digit(c: char) -> Option<u8> {
    if let Some(d) = c.to_digit(10) {
        return u8::try_from(d).ok();
    }
    WIDE_DIGITS
        .iter()
        .chain(KANJI_DIGITS.iter())
        .position(|&w| w == c)
        .map(|i| (i % 10) as u8)
}

/// A kanji count (一 .. 十八) of pieces in hand; an empty string is one.
fn kanji_count(s: &str) -> Option<u8> {
    if s.is_empty() {
        return Some(1);
    }
    let mut n = 0u8;
    let mut chars = s.chars().peekable();
    if chars.peek() == Some(&'十') {
        chars.next();
        n = 10;
    }
    match chars.next() {
        None => Some(n),
        Some(c) => {
            let d = digit(c)?;
            if chars.next().is_some() {
                return None;
            }
            if n == 0 && d > 0 {
                Some(d)
            } else if n == 10 {
                Some(10 + d)
            } else {
                None
            }
        }
    }
}

/// The piece a name at the start of `s` stands for and the name's length in bytes
/// (two-character names such as 成香 first).
pub(super) fn piece_prefix(s: &str) -> Option<(PieceKind, usize)> {
    let mut best: Option<(PieceKind, usize)> = None;
    for (i, name) in KIF_NAMES.iter().enumerate() {
        if s.starts_with(name) && best.is_none_or(|(_, len)| name.len() > len) {
            best = Some((PieceKind::from_index(i), name.len()));
        }
    }
    for (name, kind) in KIF_ALIASES {
        if s.starts_with(name) && best.is_none_or(|(_, len)| name.len() > len) {
            best = Some((kind, name.len()));
        }
    }
    best
}

/// A header line's value for `key` (`先手：名前`, with a full- or half-width colon).
fn header_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(key)?;
    rest.strip_prefix('：')
        .or_else(|| rest.strip_prefix(':'))
        .map(str::trim)
}

/// A BOD board diagram being read (`|v香v桂...|一` rows, 持駒 lines, 手番).
#[derive(Default)]
pub(super) struct Diagram {
    board: Vec<Option<(Color, PieceKind)>>,
    rows: usize,
    hands: [[u8; 7]; 2],
    side: Option<Color>,
    seen: bool,
}

impl Diagram {
    pub(super) fn new() -> Self {
        Diagram {
            board: vec![None; 81],
            ..Diagram::default()
        }
    }

    /// A `|...|一` row: nine cells of a side mark (space or `v`) and a piece or `・`.
    fn row(&mut self, line: &str) -> Result<(), &'static str> {
        let inner = line
            .strip_prefix('|')
            .and_then(|l| l.rsplit_once('|'))
            .ok_or("a board row is |...|")?
            .0;
        let cells: Vec<char> = inner.chars().collect();
        if self.rows >= 9 {
            return Err("more than nine board rows");
        }
        let rank = self.rows as u8;
        let mut file = 9u8;
        let mut i = 0;
        while i < cells.len() {
            if file == 0 {
                return Err("more than nine cells in a board row");
            }
            let color = match cells[i] {
                'v' | 'V' => Color::White,
                ' ' | '+' | '^' => Color::Black,
                _ => return Err("a board cell starts with a space or v"),
            };
            let piece = cells.get(i + 1).ok_or("a board cell is cut short")?;
            let sq = Square::new(file - 1, rank);
            if *piece == '・' {
                self.board[sq.index()] = None;
            } else {
                let (kind, _) =
                    piece_prefix(&piece.to_string()).ok_or("an unknown piece in the diagram")?;
                self.board[sq.index()] = Some((color, kind));
            }
            i += 2;
            file -= 1;
        }
        if file != 0 {
            return Err("fewer than nine cells in a board row");
        }
        self.rows += 1;
        self.seen = true;
        Ok(())
    }

    /// The record's start: this diagram if one was read, else `start` (手合割 or
    /// `#SFEN:`), else the even start. `line` is where the moves began, for errors.
    pub(super) fn start_position(
        &self,
        start: Option<&Position>,
        format: &'static str,
        line: usize,
    ) -> Result<Position, RecordError> {
        if !self.seen {
            return Ok(start
                .cloned()
                .unwrap_or_else(|| Position::startpos(Variant::Shogi)));
        }
        let err = |reason: &str| RecordError::Syntax {
            format,
            line,
            text: String::new(),
            reason: reason.to_string(),
        };
        if self.rows != 9 {
            return Err(err("the board diagram has fewer than nine rows"));
        }
        let board: [Option<(Color, PieceKind)>; 81] = self
            .board
            .clone()
            .try_into()
            .map_err(|_| err("board size"))?;
        build(&board, &self.hands, self.side.unwrap_or(Color::Black))
    }

    /// `先手の持駒：歩三　香` or `なし`.
    fn hand(&mut self, color: Color, list: &str) -> Result<(), &'static str> {
        self.seen = true;
        for item in list.split([' ', '　']).filter(|s| !s.is_empty()) {
            if item == "なし" {
                continue;
            }
            let (kind, len) = piece_prefix(item).ok_or("an unknown piece in hand")?;
            if kind.index() >= 7 {
                return Err("a piece that cannot be in hand");
            }
            let n = kanji_count(&item[len..]).ok_or("a bad count in hand")?;
            self.hands[color as usize][kind.index()] = n;
        }
        Ok(())
    }
}

/// What KIF and KI2 (Kakinoki's two formats) read alike: the header (names, 手合割 or
/// `#SFEN:`, a board diagram), then the position the moves are played in, the moves and
/// the ending.
pub(super) struct Reading {
    format: &'static str,
    names: [Option<String>; 2],
    start: Option<Position>,
    diagram: Diagram,
    pos: Option<Position>,
    moves: Vec<Move>,
    pub(super) end: Option<String>,
    /// The previous move's destination, for 同.
    pub(super) prev_to: Option<Square>,
}

impl Reading {
    pub(super) fn new(format: &'static str) -> Self {
        Reading {
            format,
            names: [None, None],
            start: None,
            diagram: Diagram::new(),
            pos: None,
            moves: Vec::new(),
            end: None,
            prev_to: None,
        }
    }

    /// The text's lines as `(number, line without trailing blanks, that line trimmed)`,
    /// a byte order mark left out.
    pub(super) fn lines(text: &str) -> impl Iterator<Item = (usize, &str, &str)> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        text.lines().enumerate().map(|(i, raw)| {
            let l = raw.trim_end_matches(['\r', ' ', '　', '\t']);
            (i + 1, l, l.trim_start_matches([' ', '　', '\t']))
        })
    }

    /// A syntax error at `line` (whose text is `text`).
    pub(super) fn error(&self, line: usize, text: &str, reason: &str) -> RecordError {
        RecordError::Syntax {
            format: self.format,
            line,
            text: text.to_string(),
            reason: reason.to_string(),
        }
    }

    /// Reads a line both formats read alike, anywhere: blank, a comment (`*`), a bookmark
    /// (`&`), `#SFEN:` (the start this project writes for composed positions) and other
    /// `#` lines. `Ok(true)` when it was one of these.
    pub(super) fn common_line(&mut self, trimmed: &str) -> Result<bool, RecordError> {
        if trimmed.is_empty() || trimmed.starts_with(['*', '&']) {
            return Ok(true);
        }
        if let Some(sfen) = trimmed.strip_prefix("#SFEN:") {
            self.start = Some(Position::from_sfen(Variant::Shogi, sfen.trim())?);
            return Ok(true);
        }
        Ok(trimmed.starts_with('#'))
    }

    /// Reads a header line before the moves ([`header`]); `Ok(false)` for a line that is
    /// none of the header's.
    pub(super) fn header_line(&mut self, trimmed: &str) -> Result<bool, &'static str> {
        header(trimmed, &mut self.start, &mut self.names, &mut self.diagram)
    }

    /// Whether the moves have begun.
    pub(super) fn in_moves(&self) -> bool {
        self.pos.is_some()
    }

    /// The position the next move is played in, set up from the header at the first
    /// (`line` is that move's, for errors).
    pub(super) fn position(&mut self, line: usize) -> Result<&mut Position, RecordError> {
        if self.pos.is_none() {
            let p = self
                .diagram
                .start_position(self.start.as_ref(), self.format, line)?;
            self.start = Some(p.clone());
            self.pos = Some(p);
        }
        Ok(self.pos.as_mut().expect("set above"))
    }

    /// The moves read so far.
    pub(super) fn played(&self) -> usize {
        self.moves.len()
    }

    /// Plays `mv` (written `text` at `line`), checked for legality.
    pub(super) fn play(&mut self, mv: Move, line: usize, text: &str) -> Result<(), RecordError> {
        let format = self.format;
        self.position(line)?
            .play(mv)
            .map_err(|reason| RecordError::Illegal {
                format,
                line,
                text: text.to_string(),
                reason,
            })?;
        self.prev_to = Some(mv.to());
        self.moves.push(mv);
        Ok(())
    }

    /// The record read.
    pub(super) fn finish(self) -> Result<Record, RecordError> {
        let start = match self.pos {
            Some(_) => self.start.expect("set with the first move"),
            None => self
                .diagram
                .start_position(self.start.as_ref(), self.format, 0)?,
        };
        Ok(Record {
            start,
            moves: self.moves,
            end: self.end,
            names: self.names,
            ratings: [None, None],
        })
    }
}

/// Reads a KIF record (text already decoded: `shogi_records::text` reads the encodings).
/// The start is 手合割 (平手 or a handicap), a BOD diagram, or `#SFEN:`; without any, the
/// even start. Moves are checked for legality; the ending word (投了, 詰み, 千日手, 持将棋,
/// 切れ負け, 反則勝ち/負け, 入玉勝ち, 中断) becomes the record's CSA end marker. A move the
/// rules refuse followed at once by 反則勝ち or 反則負け (Kifu for Windows writes the
/// illegal move, then the ending), or last with a comment that names the foul
/// (`*反則手にて終局`), ends the game there: its mover loses by an illegal move
/// (`ILLEGAL_MOVE`), the refused move left out.
pub fn from_kif(text: &str) -> Result<Record, RecordError> {
    let mut r = Reading::new("kif");
    let mut refused: Option<RecordError> = None;
    // A comment after a refused last move that says the game ended by a foul
    // (`*反則手にて終局`, as 81Dojo's exports have it).
    let mut foul_noted = false;
    for (line, l, trimmed) in Reading::lines(text) {
        foul_noted |= refused.is_some() && trimmed.starts_with('*') && trimmed.contains("反則");
        if r.common_line(trimmed)? {
            continue;
        }
        if trimmed.starts_with("変化") {
            // The main line is over; variations follow.
            break;
        }
        if !r.in_moves() && r.header_line(trimmed).map_err(|e| r.error(line, l, e))? {
            continue;
        }
        // A move line starts with its number; anything else before the moves is a
        // header we do not need (棋戦, 開始日時, the board's frame, ...).
        let Some((number, rest)) = split_number(trimmed) else {
            if !r.in_moves() {
                continue;
            }
            // The moves end at a refused one: a summary line may still name the foul
            // (`まで64手で後手の反則勝ち`).
            if refused.is_some() {
                foul_noted |= trimmed.contains("反則");
                break;
            }
            return Err(r.error(line, l, "expected a numbered move"));
        };
        let text = rest
            .split([' ', '\t', '\u{3000}'])
            .find(|s| !s.is_empty())
            .unwrap_or("")
            .trim_end_matches('+');
        if let Some(err) = refused.take() {
            if number == r.played() + 2 && matches!(text, "反則勝ち" | "反則負け") {
                r.end = Ending::IllegalMove.csa_marker().map(str::to_string);
                break;
            }
            return Err(err);
        }
        if number != r.played() + 1 {
            return Err(r.error(line, l, "a move number out of sequence"));
        }
        let prev_to = r.prev_to;
        let p = r.position(line)?;
        if let Some(ending) = Ending::from_kif_word(text, p.side_to_move()) {
            r.end = ending.csa_marker().map(str::to_string);
            break;
        }
        // 将棋倶楽部24 names the side of a foul: `2 先手 反則負け` (Black, not to move,
        // lost by a foul).
        if let Some(ending) = named_foul(rest) {
            r.end = ending.csa_marker().map(str::to_string);
            break;
        }
        // A move that cannot be read or played is kept as the reason the record fails,
        // unless the record says next that the game ended by a foul: what the rules
        // refuse is then the foul it names (a piece that cannot get there, a king left
        // in check, a misread square alike).
        let played = match kif_move_of(p, rest.trim_start(), prev_to) {
            Ok(mv) => r.play(mv, line, text),
            Err(e) => Err(r.error(line, l, e)),
        };
        if let Err(err) = played {
            refused = Some(err);
        }
    }
    match refused {
        Some(_) if foul_noted => {
            r.end = Ending::IllegalMove.csa_marker().map(str::to_string);
            r.finish()
        }
        Some(err) => Err(err),
        None => r.finish(),
    }
}

/// A header line before the moves (手合割, names, a diagram's rows, hands and side to
/// move): read into the record being built. `Ok(false)` for a line that is none of these.
pub(super) fn header(
    line: &str,
    start: &mut Option<Position>,
    names: &mut [Option<String>; 2],
    diagram: &mut Diagram,
) -> Result<bool, &'static str> {
    if let Some(v) = header_value(line, "手合割") {
        if v == "平手" {
            *start = Some(Position::startpos(Variant::Shogi));
        } else if v == "その他" {
            // A custom start (what Kifu for Windows writes before a board diagram): the
            // diagram that follows is the position.
        } else {
            let (name, _) = KIF_HANDICAPS
                .iter()
                .find(|(_, jp)| *jp == v)
                .ok_or("an unknown handicap")?;
            *start = Some(Position::handicap(name).map_err(|_| "an unknown handicap")?);
        }
    } else if let Some(v) = header_value(line, "先手").or(header_value(line, "下手")) {
        names[0] = Some(v.to_string()).filter(|v| !v.is_empty());
    } else if let Some(v) = header_value(line, "後手").or(header_value(line, "上手")) {
        names[1] = Some(v.to_string()).filter(|v| !v.is_empty());
    } else if let Some(v) = header_value(line, "先手の持駒").or(header_value(line, "下手の持駒"))
    {
        diagram.hand(Color::Black, v)?;
    } else if let Some(v) = header_value(line, "後手の持駒").or(header_value(line, "上手の持駒"))
    {
        diagram.hand(Color::White, v)?;
    } else if line.starts_with('|') {
        diagram.row(line)?;
    } else if line.starts_with("後手番") || line.starts_with("上手番") {
        diagram.side = Some(Color::White);
    } else if line.starts_with("先手番") || line.starts_with("下手番") {
        diagram.side = Some(Color::Black);
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// A foul with its side named (`先手 反則負け`, `後手 反則勝ち`; 下手 and 上手 too).
fn named_foul(rest: &str) -> Option<Ending> {
    let mut words = rest
        .split([' ', '\t', '\u{3000}'])
        .filter(|w| !w.is_empty());
    let side = match words.next()? {
        "先手" | "下手" => Color::Black,
        "後手" | "上手" => Color::White,
        _ => return None,
    };
    match words.next()? {
        "反則負け" => Some(Ending::IllegalAction(side)),
        "反則勝ち" => Some(Ending::IllegalAction(side.flip())),
        _ => None,
    }
}

/// `   12 ７六歩(77)   ( 0:01/00:00:01)` as its number and the rest.
fn split_number(line: &str) -> Option<(usize, &str)> {
    let digits = line
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(line.len());
    if digits == 0 {
        return None;
    }
    let n = line[..digits].parse().ok()?;
    Some((n, &line[digits..]))
}

/// A KIF or KI2 move's destination and the text after it: `同` (the previous move's
/// destination, `prev_to`) or two digits, ASCII, full width or kanji (`７六`, `7六`);
/// `２四同歩`, a destination that repeats the previous one, is read too.
pub(super) fn destination(
    text: &str,
    prev_to: Option<Square>,
) -> Result<(Square, &str), &'static str> {
    if let Some(rest) = text.strip_prefix(['同', '仝']) {
        let to = prev_to.ok_or("同 without a previous move")?;
        return Ok((to, rest.trim_start_matches(['　', ' '])));
    }
    let mut chars = text.chars();
    let file = chars
        .next()
        .and_then(digit)
        .ok_or("a bad destination file")?;
    let rank = chars
        .next()
        .and_then(digit)
        .ok_or("a bad destination rank")?;
    if !(1..=9).contains(&file) || !(1..=9).contains(&rank) {
        return Err("a destination off the board");
    }
    Ok((
        Square::new(file - 1, rank - 1),
        chars.as_str().trim_start_matches(['同', '　', ' ']),
    ))
}

/// The move a KIF move text stands for in `pos` (`prev_to`: the previous move's
/// destination, for 同).
fn kif_move_of(pos: &Position, text: &str, prev_to: Option<Square>) -> Result<Move, &'static str> {
    let (to, mut s) = destination(text, prev_to)?;
    let (kind, len) = piece_prefix(s).ok_or("an unknown piece")?;
    s = &s[len..];
    let mut promote = false;
    let mut drop = false;
    loop {
        // Full-width spaces stand where half-width ones may (`同銀　(79)`).
        s = s.trim_start_matches([' ', '　']);
        if let Some(rest) = s.strip_prefix("不成").or(s.strip_prefix("生")) {
            s = rest;
        } else if let Some(rest) = s.strip_prefix('成') {
            promote = true;
            s = rest;
        } else if let Some(rest) = s.strip_prefix('打') {
            drop = true;
            s = rest;
        } else if let Some(rest) = s.strip_prefix(['右', '左', '直', '上', '寄', '引', '行', '入'])
        {
            // Relative-position words (右, 上, ...) of hand-written records: the source
            // square in parentheses decides.
            s = rest;
        } else {
            break;
        }
    }
    // The source square, in half- or full-width parentheses and digits.
    let from = s.strip_prefix(['(', '（']).and_then(|r| {
        let mut digits = r.chars().map(digit);
        let (f, r) = (digits.next()??, digits.next()??);
        ((1..=9).contains(&f) && (1..=9).contains(&r)).then(|| Square::new(f - 1, r - 1))
    });
    match from {
        Some(from) if !drop => {
            let on = pos.piece_at(from).map(|p| p.kind);
            if on != Some(kind) {
                return Err("the piece named is not on the source square");
            }
            Ok(Move::normal(from, to, promote))
        }
        _ => {
            if kind.index() >= 7 {
                return Err("cannot drop that piece");
            }
            Ok(Move::drop(kind, to))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kanji_counts() {
        assert_eq!(kanji_count(""), Some(1));
        assert_eq!(kanji_count("三"), Some(3));
        assert_eq!(kanji_count("十"), Some(10));
        assert_eq!(kanji_count("十八"), Some(18));
        assert_eq!(kanji_count("x"), None);
    }
}

//! Reading KI2 records: KIF's header (手合割, names, a board diagram), then moves
//! without source squares, several to a line (`▲７六歩    △３四歩`, `△同　銀`,
//! `▲５八金右`), as newspapers and many sites publish games. Where more than one piece
//! could make a move, the record tells them apart as the Japan Shogi Association's
//! notation does: by where the piece stands (右 right, 左 left, 直 straight behind) and
//! how it moves (上 forward, 引 backward, 寄 sideways). The `まで77手で先手の勝ち`
//! line says how the game ended. Variations (`変化：`) are not read.

use super::kif::{Reading, destination, piece_prefix};
use super::{Ending, Record, RecordError};
use crate::position::Position;
use crate::types::{Color, Move, Square};

/// The marks that open a move: Black's (▲ ☗) and White's (△ ▽ ☖).
const MOVE_MARKS: [char; 5] = ['▲', '☗', '△', '▽', '☖'];

/// Reads a KI2 record (text already decoded). The start is read as in KIF; each move
/// is checked for legality and must name exactly one of the moves the position allows.
pub fn from_ki2(text: &str) -> Result<Record, RecordError> {
    let mut r = Reading::new("ki2");
    for (line, l, trimmed) in Reading::lines(text) {
        if r.common_line(trimmed)? {
            continue;
        }
        if trimmed.starts_with("変化") {
            if r.in_moves() {
                break; // the main line is over; variations follow
            }
            continue; // some writers leave one in the header
        }
        let at_moves = trimmed.starts_with(MOVE_MARKS) || trimmed.starts_with("まで");
        if !at_moves {
            if r.in_moves() {
                return Err(r.error(line, l, "expected moves (▲ or △) or the まで line"));
            }
            // A header line: what is not one of ours (棋戦, 開始日時, ...) is skipped.
            r.header_line(trimmed).map_err(|e| r.error(line, l, e))?;
            continue;
        }
        if let Some(summary) = trimmed.strip_prefix("まで") {
            let played = r.played();
            let to_move = r.position(line)?.side_to_move();
            let ending = ending_of(summary, played, to_move).map_err(|e| r.error(line, l, e))?;
            r.end = ending.csa_marker().map(str::to_string);
            break;
        }
        for written in trimmed.split(MOVE_MARKS).skip(1) {
            let written = written.trim_matches([' ', '　', '\t']);
            let prev_to = r.prev_to;
            let mv = ki2_move_of(r.position(line)?, written, prev_to)
                .map_err(|e| r.error(line, written, e))?;
            r.play(mv, line, written)?;
        }
    }
    r.finish()
}

/// The ending a `まで` line states (`77手で先手の勝ち`, `80手で千日手`, `3手で後手の反則負け`,
/// `時間切れにより先手の勝ち`, `19手詰`), checked against the moves read: `played` moves, `to_move`
/// the side to move after them.
fn ending_of(summary: &str, played: usize, to_move: Color) -> Result<Ending, &'static str> {
    let clean: String = summary
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '　' && *c != '、')
        .collect();
    let mut rest = clean.as_str();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
    if digits > 0 {
        let count: usize = rest[..digits].parse().map_err(|_| "a bad move count")?;
        if count != played {
            return Err("the まで line's move count differs from the moves read");
        }
        // `まで19手詰`: how a mate problem's solution (詰将棋) ends.
        if matches!(&rest[digits..], "手詰" | "手詰み" | "手詰め") {
            return Ok(Ending::Checkmate);
        }
        rest = rest[digits..]
            .strip_prefix("手で")
            .ok_or("expected 手で or 手詰 after the move count")?;
    }
    let side_named = |text: &str| -> Option<Color> {
        if text.starts_with("先手") || text.starts_with("下手") {
            Some(Color::Black)
        } else if text.starts_with("後手") || text.starts_with("上手") {
            Some(Color::White)
        } else {
            None
        }
    };
    let last_mover = to_move.flip();
    if let Some(winner) = rest.strip_prefix("時間切れにより") {
        return match side_named(winner) {
            Some(w) if w == last_mover => Ok(Ending::TimeUp),
            Some(_) => Err("the side to move cannot have won on time"),
            None => Ok(Ending::TimeUp),
        };
    }
    let named = side_named(rest);
    if rest.ends_with("反則勝ち") {
        return Ok(Ending::IllegalAction(named.unwrap_or(to_move).flip()));
    }
    if rest.ends_with("反則負け") {
        return Ok(Ending::IllegalAction(named.unwrap_or(to_move)));
    }
    if rest.ends_with("入玉勝ち") {
        return Ok(Ending::Declaration);
    }
    if rest.ends_with("勝ち") {
        return match named {
            // The side to move resigned.
            Some(w) if w == last_mover => Ok(Ending::Resignation),
            // The side that moved last lost: its move was a foul.
            Some(w) => Ok(Ending::IllegalAction(w.flip())),
            None => Ok(Ending::Resignation),
        };
    }
    Ending::from_kif_word(rest, to_move).ok_or("an unknown ending in the まで line")
}

/// The move a KI2 move text (`７六歩`, `同　銀`, `５八金右`, `２二角成`, `５五角打`)
/// stands for in `pos` (`prev_to`: the previous move's destination, for 同).
fn ki2_move_of(pos: &Position, text: &str, prev_to: Option<Square>) -> Result<Move, &'static str> {
    let (to, mut s) = destination(text, prev_to)?;
    let (kind, len) = piece_prefix(s).ok_or("an unknown piece")?;
    s = &s[len..];
    let mut words = Words::default();
    loop {
        s = s.trim_start_matches([' ', '　']);
        let (word, rest) = match s.chars().next() {
            None => break,
            Some(_) if s.starts_with("不成") => ("不成", &s["不成".len()..]),
            Some(c) => (&s[..c.len_utf8()], &s[c.len_utf8()..]),
        };
        match word {
            "不成" | "生" => words.promote = Some(false),
            "成" => words.promote = Some(true),
            "打" => words.drop = true,
            "右" => words.side = Some(Side::Right),
            "左" => words.side = Some(Side::Left),
            "直" => words.straight = true,
            "上" | "行" | "入" => words.motion = Some(Motion::Forward),
            "引" => words.motion = Some(Motion::Backward),
            "寄" => words.motion = Some(Motion::Sideways),
            _ => return Err("an unknown word after the piece"),
        }
        s = rest;
    }
    let me = pos.side_to_move();
    let drop = (kind.index() < 7).then(|| Move::drop(kind, to));
    if words.drop {
        return drop.ok_or("cannot drop that piece");
    }
    let legal = pos.legal_moves();
    let mut candidates: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|m| {
            m.to() == to
                && m.from()
                    .and_then(|from| pos.piece_at(from))
                    .is_some_and(|p| p.kind == kind)
                && m.is_promotion() == words.promote.unwrap_or(false)
        })
        .collect();
    if candidates.is_empty() {
        // 打 is written only where a piece on the board could also move there.
        if let Some(drop) = drop
            && legal.contains(drop)
            && !words.constrains_a_source()
        {
            return Ok(drop);
        }
        return Err("no piece named can make that move");
    }
    let forward = |from: Square| match me {
        Color::Black => to.rank() < from.rank(),
        Color::White => to.rank() > from.rank(),
    };
    let from_of = |m: &Move| m.from().expect("a board move");
    if let Some(motion) = words.motion {
        candidates.retain(|m| {
            let from = from_of(m);
            match motion {
                Motion::Forward => forward(from),
                Motion::Backward => from.rank() != to.rank() && !forward(from),
                Motion::Sideways => from.rank() == to.rank(),
            }
        });
    }
    if words.straight {
        candidates.retain(|m| {
            let from = from_of(m);
            from.file() == to.file() && forward(from)
        });
    }
    if let Some(side) = words.side {
        // The mover's right is the lower files for Black (file 1 is on its right) and
        // the higher for White.
        let rightness = |m: &Move| -> i32 {
            let file = i32::from(from_of(m).file());
            match me {
                Color::Black => -file,
                Color::White => file,
            }
        };
        let extreme = match side {
            Side::Right => candidates.iter().map(rightness).max(),
            Side::Left => candidates.iter().map(rightness).min(),
        };
        candidates.retain(|m| Some(rightness(m)) == extreme);
    }
    match candidates.as_slice() {
        [only] => Ok(*only),
        [] => Err("no piece named fits the words that tell them apart"),
        _ => Err("more than one piece can make that move"),
    }
}

#[derive(Clone, Copy)]
enum Side {
    Right,
    Left,
}

#[derive(Clone, Copy)]
enum Motion {
    Forward,
    Backward,
    Sideways,
}

/// The words after a KI2 move's piece.
#[derive(Default)]
struct Words {
    /// 成 (`Some(true)`) or 不成 / 生 (`Some(false)`).
    promote: Option<bool>,
    drop: bool,
    side: Option<Side>,
    straight: bool,
    motion: Option<Motion>,
}

impl Words {
    /// Whether the words speak of a piece on the board (so the move is no drop).
    fn constrains_a_source(&self) -> bool {
        self.promote.is_some() || self.side.is_some() || self.straight || self.motion.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usi(record: &Record) -> Vec<String> {
        record.moves.iter().map(|m| m.to_string()).collect()
    }

    fn read(text: &str) -> (Vec<String>, Option<String>) {
        let record = from_ki2(text).unwrap_or_else(|e| panic!("{e}"));
        (usi(&record), record.end)
    }

    #[test]
    fn several_moves_a_line_same_square_promotion_and_a_drop_without_its_word() {
        let (moves, end) = read(
            "手合割：平手\n▲７六歩    △３四歩    ▲２二角成  △同　銀\n▲４五角\nまで5手で先手の勝ち\n",
        );
        assert_eq!(moves, ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]);
        assert_eq!(end.as_deref(), Some("TORYO"));
    }

    #[test]
    fn relative_and_movement_words_pick_the_piece() {
        let (moves, end) = read(
            "▲７六歩 △３四歩 ▲５八金左 △５二金右 ▲４八金寄 △６二銀 ▲５八金上 △４二金寄\n\
             ▲４九金引\nまで9手で中断",
        );
        assert_eq!(
            moves,
            [
                "7g7f", "3c3d", "6i5h", "6a5b", "5h4h", "7a6b", "4i5h", "5b4b", "4h4i"
            ]
        );
        assert_eq!(end.as_deref(), Some("CHUDAN"));
        // 直: the piece that moves straight ahead, where another steps in diagonally.
        let head = "▲４六歩 △３四歩 ▲５八金左 △５二金右 ▲４八金上 △６二銀";
        for (word, mv) in [("直", "4h4g"), ("左", "5h4g")] {
            let (moves, _) = read(&format!("{head} ▲４七金{word}\nまで7手で中断"));
            assert_eq!(
                moves,
                ["4g4f", "3c3d", "6i5h", "6a5b", "4i4h", "7a6b", mv],
                "{word}"
            );
        }
        // Without the word, two golds could go: refused, not guessed.
        let err = from_ki2("▲７六歩 △３四歩 ▲５八金").unwrap_err().to_string();
        assert!(err.contains("more than one piece"), "{err}");
        // A piece that cannot be in hand, written as a drop: an error, never a panic.
        let err = from_ki2("▲５五龍打").unwrap_err().to_string();
        assert!(err.contains("cannot drop"), "{err}");
    }

    #[test]
    fn endings_of_the_made_line() {
        let e = |summary: &str, played, to_move| ending_of(summary, played, to_move);
        assert_eq!(
            e("77手で先手の勝ち", 77, Color::White),
            Ok(Ending::Resignation)
        );
        assert_eq!(e("80手で千日手", 80, Color::Black), Ok(Ending::Repetition));
        assert_eq!(
            e("3手で後手の反則負け", 3, Color::White),
            Ok(Ending::IllegalAction(Color::White))
        );
        assert_eq!(
            e("3手で後手の反則勝ち", 3, Color::White),
            Ok(Ending::IllegalAction(Color::Black))
        );
        assert_eq!(
            e("3手で時間切れにより先手の勝ち", 3, Color::White),
            Ok(Ending::TimeUp)
        );
        assert_eq!(
            e("3手で後手の入玉勝ち", 3, Color::White),
            Ok(Ending::Declaration)
        );
        assert_eq!(e("、3手で詰み", 3, Color::White), Ok(Ending::Checkmate));
        // A mate problem's solution.
        assert_eq!(e("19447手詰", 19447, Color::White), Ok(Ending::Checkmate));
        assert_eq!(e("3手詰み", 3, Color::White), Ok(Ending::Checkmate));
        assert_eq!(e("3手詰め", 3, Color::White), Ok(Ending::Checkmate));
        assert!(e("5手詰", 3, Color::White).is_err());
        assert!(e("78手で先手の勝ち", 77, Color::White).is_err());
        assert!(e("3手で雨天順延", 3, Color::White).is_err());
    }
}

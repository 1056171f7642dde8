//! Reading a game from a USI `position` line, as engines receive it and as this project
//! writes `.usi` files: `position startpos moves 7g7f 3c3d` or `position sfen SFEN moves
//! ...` (the word `position` may be left out).

use super::{Record, RecordError};
use crate::position::Position;
use crate::types::Variant;

/// Reads one USI `position` line of `variant` (`line_no` numbers it in errors). Every
/// move is checked for legality. The record has no ending: a USI line does not say how
/// the game ended.
pub fn from_usi_line(variant: Variant, line: &str, line_no: usize) -> Result<Record, RecordError> {
    let err = |reason: String| RecordError::Syntax {
        format: "usi",
        line: line_no,
        text: line.trim().to_string(),
        reason,
    };
    let body = line.trim();
    let body = body.strip_prefix("position").unwrap_or(body).trim_start();
    let (start_part, moves_part) = match body.split_once(" moves") {
        Some((s, m)) => (s.trim(), m.trim()),
        None if body.ends_with("moves") => (body.trim_end_matches("moves").trim(), ""),
        None => (body, ""),
    };
    let start = if start_part == "startpos" {
        Position::startpos(variant)
    } else if let Some(sfen) = start_part.strip_prefix("sfen ") {
        Position::from_sfen(variant, sfen.trim()).map_err(|e| err(e.to_string()))?
    } else {
        return Err(err("expected `startpos` or `sfen ...`".into()));
    };
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for text in moves_part.split_whitespace() {
        let mv = pos
            .parse_usi_move(text)
            .map_err(|e| err(format!("move {}: {e}", moves.len() + 1)))?;
        pos.play_unchecked(mv);
        moves.push(mv);
    }
    Ok(Record::new(start, moves))
}

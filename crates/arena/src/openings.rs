//! Opening sets: the start position plus random-ply openings, or a file of positions.

use std::collections::HashSet;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_game::Game;
use shogi_rules::{GameRules, Position, ShogiGame, Variant};

use crate::error::{ArenaError, io_err};

/// Where a match's start positions come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Openings {
    /// The variant's start position followed by positions reached by `plies` uniformly
    /// random legal moves (distinct, not finished), as many as the match needs.
    Random {
        /// Random plies per opening.
        plies: u32,
    },
    /// These positions (SFEN), used in order and cycled.
    List(Vec<String>),
}

/// Reads an opening file: one position per line, as an SFEN (optionally after
/// `sfen `), `startpos`, or a handicap name (`handicap:NAME`, standard shogi). Blank lines
/// and lines starting with `#` are skipped.
pub fn read_openings_file(path: &Path, variant: Variant) -> Result<Vec<String>, ArenaError> {
    let text = std::fs::read_to_string(path).map_err(io_err("read", path))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(
            parse_opening(line, variant).map_err(|reason| ArenaError::Opening {
                line: i + 1,
                reason,
            })?,
        );
    }
    if out.is_empty() {
        return Err(ArenaError::Opening {
            line: 0,
            reason: format!("{} holds no positions", path.display()),
        });
    }
    Ok(out)
}

/// One opening line to an SFEN (checked).
pub fn parse_opening(line: &str, variant: Variant) -> Result<String, String> {
    let pos = if line == "startpos" {
        Position::startpos(variant)
    } else if let Some(name) = line.strip_prefix("handicap:") {
        if variant != Variant::Shogi {
            return Err("handicaps are standard shogi only".into());
        }
        Position::handicap(name).map_err(|e| e.to_string())?
    } else {
        let sfen = line.strip_prefix("sfen ").unwrap_or(line);
        Position::from_sfen(variant, sfen).map_err(|e| e.to_string())?
    };
    Ok(pos.to_sfen())
}

/// `count` start positions for a match: see [`Openings`].
pub fn opening_positions(
    openings: &Openings,
    variant: Variant,
    count: usize,
    seed: u64,
) -> Result<Vec<Position>, ArenaError> {
    match openings {
        Openings::List(list) => listed_openings(list, count, |s| {
            Position::from_sfen(variant, s).map_err(|e| e.to_string())
        }),
        Openings::Random { plies } => {
            let start = ShogiGame::new(Position::startpos(variant), GameRules::default());
            Ok(random_openings(&start, *plies, count, seed, |g| {
                g.position().clone()
            }))
        }
    }
}

/// `count` positions parsed from `list`, used in order and cycled.
fn listed_openings<S>(
    list: &[String],
    count: usize,
    parse: impl Fn(&str) -> Result<S, String>,
) -> Result<Vec<S>, ArenaError> {
    let bad = |reason: String| ArenaError::Opening { line: 0, reason };
    if list.is_empty() {
        return Err(bad("empty opening list".into()));
    }
    list.iter()
        .cycle()
        .take(count)
        .map(|s| parse(s).map_err(bad))
        .collect()
}

/// The start position, then positions `plies` uniformly random legal moves deep that
/// are distinct, not finished and have a move, as many as `count` (reused in turn when
/// too few distinct ones exist at that depth).
fn random_openings<G: Game, S: Clone>(
    start: &G,
    plies: u32,
    count: usize,
    seed: u64,
    snapshot: impl Fn(&G) -> S,
) -> Vec<S> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0be1_1195);
    let mut seen = HashSet::from([start.key()]);
    let mut out = vec![snapshot(start)];
    let mut attempts = 0;
    let mut legal = Vec::new();
    while out.len() < count {
        attempts += 1;
        let mut game = start.clone();
        let mut ok = plies > 0;
        for _ in 0..plies {
            legal.clear();
            if game.outcome().is_none() {
                game.legal_moves(&mut legal);
            }
            if legal.is_empty() {
                ok = false;
                break;
            }
            game.play(legal[rng.random_range(0..legal.len())]);
        }
        legal.clear();
        if ok && game.outcome().is_none() {
            game.legal_moves(&mut legal);
        }
        if !legal.is_empty() && seen.insert(game.key()) {
            out.push(snapshot(&game));
        } else if attempts > 100 * count + 1000 {
            // Too few distinct openings at this depth: reuse what we have.
            let have = out.clone();
            out.extend(have.into_iter().cycle().take(count - out.len()));
        }
    }
    out
}

/// Reads a tai shogi opening file: one tai SFEN per line (optionally after `sfen `) or
/// `startpos`; blank lines and `#` comments are skipped.
pub fn read_tai_openings_file(path: &Path) -> Result<Vec<String>, ArenaError> {
    let text = std::fs::read_to_string(path).map_err(io_err("read", path))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let pos = if line == "startpos" {
            shogi_tai::Position::startpos()
        } else {
            let sfen = line.strip_prefix("sfen ").unwrap_or(line);
            shogi_tai::Position::from_sfen(sfen).map_err(|e| ArenaError::Opening {
                line: i + 1,
                reason: e.to_string(),
            })?
        };
        out.push(pos.to_sfen());
    }
    if out.is_empty() {
        return Err(ArenaError::Opening {
            line: 0,
            reason: format!("{} holds no positions", path.display()),
        });
    }
    Ok(out)
}

/// `count` tai shogi start positions: the setup plus distinct random-ply openings, or
/// the listed SFENs (see [`Openings`]).
pub fn tai_opening_positions(
    openings: &Openings,
    count: usize,
    seed: u64,
) -> Result<Vec<shogi_tai::Position>, ArenaError> {
    use shogi_tai::{TaiGame, TaiRules};
    match openings {
        Openings::List(list) => listed_openings(list, count, |s| {
            shogi_tai::Position::from_sfen(s).map_err(|e| e.to_string())
        }),
        Openings::Random { plies } => {
            let start = TaiGame::startpos(TaiRules::default());
            Ok(random_openings(&start, *plies, count, seed, |g| {
                g.position().clone()
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_openings_are_distinct_and_start_with_startpos() {
        let ops =
            opening_positions(&Openings::Random { plies: 4 }, Variant::Minishogi, 10, 1).unwrap();
        assert_eq!(ops.len(), 10);
        assert_eq!(
            ops[0].to_sfen(),
            Position::startpos(Variant::Minishogi).to_sfen()
        );
        let keys: HashSet<u64> = ops.iter().map(|p| p.key()).collect();
        assert_eq!(keys.len(), 10);
        for p in &ops[1..] {
            assert_eq!(p.move_number(), 5, "{}", p.to_sfen());
        }
        // Zero plies: every opening is the start position.
        let ops = opening_positions(&Openings::Random { plies: 0 }, Variant::Shogi, 3, 1).unwrap();
        assert!(ops.iter().all(|p| p.key() == ops[0].key()));
    }

    #[test]
    fn tai_openings_are_distinct() {
        let ops = tai_opening_positions(&Openings::Random { plies: 2 }, 6, 3).unwrap();
        assert_eq!(ops.len(), 6);
        assert_eq!(ops[0], shogi_tai::Position::startpos());
        let sfens: HashSet<String> = ops.iter().map(|p| p.to_sfen()).collect();
        assert_eq!(sfens.len(), 6);
    }

    #[test]
    fn opening_lines_parse() {
        let v = Variant::Shogi;
        assert_eq!(
            parse_opening("startpos", v).unwrap(),
            Position::startpos(v).to_sfen()
        );
        let h = parse_opening("handicap:bishop", v).unwrap();
        assert!(h.starts_with("lnsgkgsnl/1r7/"), "{h}");
        let s = "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2";
        assert_eq!(parse_opening(&format!("sfen {s}"), v).unwrap(), s);
        assert!(parse_opening("nonsense", v).is_err());
        assert!(parse_opening("handicap:bishop", Variant::Minishogi).is_err());
    }
}

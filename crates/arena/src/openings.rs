//! Opening sets: the start position plus random-ply openings, or a file of positions.

use std::collections::HashSet;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shogi_game::{Game, GameKind};
use shogi_registry::{GameSpec, with_game_type};

use crate::error::{ArenaError, io_err};
use shogi_registry::ArenaGame;

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

/// Reads an opening file of `game`: one position per line, checked
/// ([`ArenaGame::parse_start`]: `startpos`, an SFEN with or without `sfen `, for
/// standard shogi also `handicap:NAME`). Blank lines and lines starting with `#` are
/// skipped. Returns the positions as SFEN.
pub fn read_openings_file(path: &Path, game: GameKind) -> Result<Vec<String>, ArenaError> {
    let text = std::fs::read_to_string(path).map_err(io_err("read", path))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let sfen =
            with_game_type!(game, G => G::parse_start(game, line).map(|s| G::start_text(&s)));
        out.push(sfen.map_err(|reason| ArenaError::Opening {
            line: i + 1,
            reason,
        })?);
    }
    if out.is_empty() {
        return Err(ArenaError::Opening {
            line: 0,
            reason: format!("{} holds no positions", path.display()),
        });
    }
    Ok(out)
}

/// `count` start positions of `game` for a match: see [`Openings`].
pub fn opening_positions<G: ArenaGame>(
    openings: &Openings,
    game: GameKind,
    count: usize,
    seed: u64,
) -> Result<Vec<G::Start>, ArenaError> {
    match openings {
        Openings::List(list) => listed_openings(list, count, |s| G::parse_start(game, s)),
        Openings::Random { plies } => {
            let startpos = G::parse_start(game, "startpos")
                .map_err(|reason| ArenaError::Opening { line: 0, reason })?;
            let start = G::from_start(&GameSpec::standard(game, 0), &startpos);
            Ok(random_openings(
                &start,
                *plies,
                count,
                seed,
                G::current_start,
            ))
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
            game.play_unchecked(legal[rng.random_range(0..legal.len())]);
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

#[cfg(test)]
mod tests {
    use shogi_rules::{Position, ShogiGame, Variant};
    use shogi_tai::TaiGame;

    use super::*;

    #[test]
    fn random_openings_are_distinct_and_start_with_startpos() {
        let random = Openings::Random { plies: 4 };
        let ops = opening_positions::<ShogiGame>(&random, GameKind::Minishogi, 10, 1).unwrap();
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
        let none = Openings::Random { plies: 0 };
        let ops = opening_positions::<ShogiGame>(&none, GameKind::Shogi, 3, 1).unwrap();
        assert!(ops.iter().all(|p| p.key() == ops[0].key()));
    }

    #[test]
    fn tai_openings_are_distinct() {
        let random = Openings::Random { plies: 2 };
        let ops = opening_positions::<TaiGame>(&random, GameKind::Tai, 6, 3).unwrap();
        assert_eq!(ops.len(), 6);
        assert_eq!(ops[0], shogi_tai::Position::startpos());
        let sfens: HashSet<String> = ops.iter().map(|p| p.to_sfen()).collect();
        assert_eq!(sfens.len(), 6);
    }

    #[test]
    fn opening_lines_parse() {
        let parse = |line: &str, game| {
            <ShogiGame as ArenaGame>::parse_start(game, line).map(|p| p.to_sfen())
        };
        let v = GameKind::Shogi;
        assert_eq!(
            parse("startpos", v).unwrap(),
            Position::startpos(Variant::Shogi).to_sfen()
        );
        let h = parse("handicap:bishop", v).unwrap();
        assert!(h.starts_with("lnsgkgsnl/1r7/"), "{h}");
        let s = "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2";
        assert_eq!(parse(&format!("sfen {s}"), v).unwrap(), s);
        assert!(parse("nonsense", v).is_err());
        assert!(parse("handicap:bishop", GameKind::Minishogi).is_err());
        assert!(parse("startpos", GameKind::Tai).is_err());
    }
}

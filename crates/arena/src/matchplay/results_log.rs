//! A match's finished games, one JSON line each in `GAMES_DIR/results.jsonl` after a
//! first line that names the match: a match stopped at any point (Ctrl-C, `kill -9`, a
//! lost machine) and started again with the same settings plays only the games it lacks,
//! so an equal-time match of hours can be played in pieces.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::GameResult;
use crate::error::{ArenaError, io_err};

/// The log's file name inside the match's games directory.
pub const RESULTS_FILE: &str = "results.jsonl";

/// The log's first line.
#[derive(Serialize, Deserialize)]
struct Header {
    /// What decides the games ([`super::match_identity`]).
    #[serde(rename = "match")]
    identity: String,
}

/// The open log, appended to as games finish.
pub(super) struct ResultsLog {
    file: File,
    path: PathBuf,
}

impl ResultsLog {
    /// Opens the log in `dir` for the match `identity`, returning the games of that match
    /// it already holds when `resume` (none otherwise: the log starts over). A log of
    /// another match is refused when `resume`: its games are not this match's. A last
    /// line cut short by a kill is dropped (its game is played again).
    pub(super) fn open(
        dir: &Path,
        identity: &str,
        resume: bool,
    ) -> Result<(Self, Vec<GameResult>), ArenaError> {
        let path = dir.join(RESULTS_FILE);
        let mut done = Vec::new();
        if resume {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let mut lines = text.lines();
                    let header = lines
                        .next()
                        .and_then(|line| serde_json::from_str::<Header>(line).ok());
                    match header {
                        Some(header) if header.identity == identity => {
                            // Each game once, should two processes have shared the log.
                            let mut seen = std::collections::HashSet::new();
                            done.extend(
                                lines
                                    .map_while(|line| serde_json::from_str::<GameResult>(line).ok())
                                    .filter(|game| seen.insert(game.index)),
                            );
                        }
                        Some(_) => {
                            return Err(ArenaError::Config(format!(
                                "{} holds the games of another match (players, rules, openings or seed differ; the first line of {} names that match): give another --out, or remove it",
                                dir.display(),
                                path.display()
                            )));
                        }
                        // A header cut short by a kill: no game was logged yet.
                        None if !text.contains('\n') => {}
                        None => {
                            return Err(ArenaError::Config(format!(
                                "{} is not a match's results log (its first line names no match): give another --out, or remove it",
                                path.display()
                            )));
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err("read", &path)(e)),
            }
        }
        // The log whole again (its header and the games kept), then appended to.
        let header = Header {
            identity: identity.to_string(),
        };
        let mut text = serde_json::to_string(&header).expect("a header serialises");
        text.push('\n');
        for game in &done {
            text.push_str(&serde_json::to_string(game).expect("a game serialises"));
            text.push('\n');
        }
        shogi_rundir::write_atomic(&path, text.as_bytes()).map_err(io_err("write", &path))?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        Ok((Self { file, path }, done))
    }

    /// Adds a finished game.
    pub(super) fn append(&mut self, game: &GameResult) -> Result<(), ArenaError> {
        let mut line = serde_json::to_string(game).expect("a game serialises");
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(io_err("append to", &self.path))
    }
}

//! Game records people already have, as training games: CSA (single games and
//! floodgate's multi-game files), KIF, USI `position` lines, dlshogi's `hcpe` positions
//! and `hcpe3` games, read one at a time, filtered (ratings, length, endings,
//! duplicates) and turned into [`GameRecord`]s whose policy target is the move played
//! and whose value target is the game's result.
//!
//! Every record that is not kept is counted under the reason why; a malformed one is
//! also reported with its file and line (or entry index) and skipped, so one bad game
//! never stops a long import.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use shogi_game::{Color, EndReason, Outcome};
use shogi_rules::kifu::{
    Ending, Record, RecordError, from_csa_games, from_ki2, from_kif, from_usi_line,
};
use shogi_rules::{Move, Position, Variant};

use crate::hcpe::{Hcpe3Game, Hcpe3Reader, HcpePosition, HcpeReader, winner_of_result};
use crate::hcpe3::EVAL_SCALE;
use crate::record::{GameRecord, MoveRecord, SearchedMove};

/// Games per chunk an import writes by default: chunks of a few hundred kilobytes, so a
/// resumed import repeats little.
pub const IMPORT_GAMES_PER_CHUNK: usize = 256;

/// A record file's format, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordFormat {
    /// CSA, one game or several separated by `/` lines (`.csa`).
    Csa,
    /// KIF (`.kif`, `.kifu`).
    Kif,
    /// KI2: KIF's moves without their source squares (`.ki2`, `.ki2u`).
    Ki2,
    /// One USI `position` line per game (`.usi`, `.sfen`).
    Usi,
    /// dlshogi's `hcpe`: one position per 38-byte entry (`.hcpe`).
    Hcpe,
    /// dlshogi's `hcpe3`: whole games (`.hcpe3`).
    Hcpe3,
}

impl RecordFormat {
    /// The format a path's extension names, if any.
    pub fn of_path(path: &Path) -> Option<RecordFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "csa" => RecordFormat::Csa,
            "kif" | "kifu" => RecordFormat::Kif,
            "ki2" | "ki2u" => RecordFormat::Ki2,
            "usi" | "sfen" => RecordFormat::Usi,
            "hcpe" => RecordFormat::Hcpe,
            "hcpe3" => RecordFormat::Hcpe3,
            _ => return None,
        })
    }

    /// The extensions read, for messages.
    pub const EXTENSIONS: &'static str =
        ".csa, .kif, .kifu, .ki2, .ki2u, .usi, .sfen, .hcpe, .hcpe3";

    /// The format's name, for messages (`CSA`, `KIF`, `USI`, `hcpe`, `hcpe3`).
    pub fn name(self) -> &'static str {
        match self {
            RecordFormat::Csa => "CSA",
            RecordFormat::Kif => "KIF",
            RecordFormat::Ki2 => "KI2",
            RecordFormat::Usi => "USI",
            RecordFormat::Hcpe => "hcpe",
            RecordFormat::Hcpe3 => "hcpe3",
        }
    }

    /// What one record of the format is: a position for `hcpe` (one an entry), a game
    /// for the rest.
    pub fn unit(self) -> &'static str {
        match self {
            RecordFormat::Hcpe => "position",
            _ => "game",
        }
    }
}

/// Which records are kept.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportFilter {
    /// Both players rated at least this, where the record states ratings (a record
    /// without ratings is kept). `None`: any.
    pub min_rating: Option<f64>,
    /// At least this many moves in the game (hcpe entries, single positions, are not
    /// held to it).
    pub min_moves: usize,
    /// The endings kept ([`Ending::name`]s); a game without a result (abandoned,
    /// unfinished) is never kept, having no value target.
    pub endings: Vec<Ending>,
    /// Drop a game whose start and moves equal an earlier one's.
    pub drop_duplicates: bool,
}

impl ImportFilter {
    /// The endings kept by default: every ending with a result
    /// ([`Ending::WITH_RESULT`]: what the board decided or a player conceded) but a
    /// clock's (time-up) and an organiser's (draw by decision).
    pub fn default_endings() -> Vec<Ending> {
        Ending::WITH_RESULT
            .into_iter()
            .filter(|e| !matches!(e, Ending::TimeUp | Ending::Draw))
            .collect()
    }

    /// [`ImportFilter::default_endings`] as the comma-separated names `--endings` takes.
    pub fn default_endings_list() -> String {
        let mut names: Vec<&str> = Self::default_endings().iter().map(|e| e.name()).collect();
        names.dedup();
        names.join(",")
    }

    /// Parses a comma-separated list of ending names (`resign,mate,time-up`; `all`).
    pub fn parse_endings(list: &str) -> Result<Vec<Ending>, String> {
        let all = Ending::WITH_RESULT;
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if name == "all" {
                out.extend(all);
                continue;
            }
            let matching: Vec<Ending> = all.iter().copied().filter(|e| e.name() == name).collect();
            if matching.is_empty() {
                return Err(format!(
                    "unknown ending {name:?}: expected some of {} (or all)",
                    all.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
                ));
            }
            out.extend(matching);
        }
        out.dedup();
        Ok(out)
    }
}

impl Default for ImportFilter {
    fn default() -> Self {
        ImportFilter {
            min_rating: None,
            min_moves: 0,
            endings: ImportFilter::default_endings(),
            drop_duplicates: true,
        }
    }
}

/// What an import read, kept and left out, and why.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportStats {
    /// Records read (games, or hcpe positions), malformed ones included.
    pub read: u64,
    /// Records kept.
    pub kept: u64,
    /// Positions (moves with a target) in the kept records.
    pub positions: u64,
    /// Records left out, by reason (`ending time-up`, `rating`, `moves`, `duplicate`,
    /// `malformed`, ...).
    pub dropped: BTreeMap<String, u64>,
    /// The first malformed records' messages (file and line or entry), up to
    /// [`ImportStats::MAX_ERRORS`].
    pub errors: Vec<String>,
    /// Every malformed record's message since the last [`ImportStats::take_new_errors`],
    /// so a caller reports each as it happens.
    new_errors: Vec<String>,
}

impl ImportStats {
    /// How many malformed records' messages are kept.
    pub const MAX_ERRORS: usize = 20;

    fn drop(&mut self, why: impl Into<String>) {
        *self.dropped.entry(why.into()).or_insert(0) += 1;
    }

    fn malformed(&mut self, message: String) {
        self.drop("malformed");
        if self.errors.len() < Self::MAX_ERRORS {
            self.errors.push(message.clone());
        }
        self.new_errors.push(message);
    }

    /// The malformed records' messages since the last call, every one of them.
    pub fn take_new_errors(&mut self) -> Vec<String> {
        std::mem::take(&mut self.new_errors)
    }

    /// One line per reason: `kept 9,812 of 10,000 (1,234,567 positions); left out:
    /// ending time-up 120, rating 60, ...`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "kept {} of {} records ({} positions)",
            self.kept, self.read, self.positions
        );
        if !self.dropped.is_empty() {
            let parts: Vec<String> = self
                .dropped
                .iter()
                .map(|(why, n)| format!("{why} {n}"))
                .collect();
            s.push_str(&format!("; left out: {}", parts.join(", ")));
        }
        s
    }
}

/// A game's value target for the side to move at each ply when the record has no
/// evaluation: its result, so a blend of evaluation and result leaves the result.
fn result_value(outcome: &Outcome, to_move: Color) -> f32 {
    match outcome.winner {
        None => 0.5,
        Some(w) if w == to_move => 1.0,
        Some(_) => 0.0,
    }
}

/// dlshogi's evaluation in centipawns as an expected score (the inverse of
/// [`crate::hcpe3::eval_from_score`]).
pub fn score_from_eval(eval: i16) -> f32 {
    (1.0 / (1.0 + (-f64::from(eval) / EVAL_SCALE).exp())) as f32
}

/// The training record of a game: every move a one-hot policy target (the move
/// played), its root value the evaluation where `evals` gives one per move, else the
/// result.
pub fn game_record(
    start: &Position,
    moves: &[Move],
    evals: Option<&[i16]>,
    outcome: Outcome,
) -> GameRecord {
    let mut to_move = start.side_to_move();
    let records = moves
        .iter()
        .enumerate()
        .map(|(i, &mv)| {
            let code = u32::from(mv.to_u16());
            let root_value = evals
                .and_then(|e| e.get(i))
                .map_or_else(|| result_value(&outcome, to_move), |&e| score_from_eval(e));
            to_move = to_move.flip();
            MoveRecord {
                mv: code,
                root_value,
                full_search: true,
                searched: vec![SearchedMove {
                    mv: code,
                    visits: 1,
                    target: 1.0,
                }],
            }
        })
        .collect();
    GameRecord {
        variant: start.variant().name().to_string(),
        start_sfen: start.to_sfen(),
        max_plies: 0,
        impasse: 0,
        outcome,
        resignation_disabled: false,
        moves: records,
    }
}

/// Reads record files and hands the kept games to a sink.
#[derive(Debug)]
pub struct Importer {
    filter: ImportFilter,
    seen: HashSet<u64>,
    /// What was read so far.
    pub stats: ImportStats,
    /// Bytes of the current file read so far (a progress bar polls it).
    pub bytes_read: Arc<AtomicU64>,
    /// The encoding the last file was read in (`UTF-8`, `Shift_JIS`, `EUC-JP`, or
    /// `binary` for hcpe and hcpe3; [`crate::text::DecodedText::describe`]).
    pub last_encoding: String,
}

/// A reader that counts the bytes it hands out into a shared counter.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn game_key(start: &Position, moves: &[Move]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    start
        .to_sfen()
        .rsplit_once(' ')
        .map(|(s, _)| s)
        .hash(&mut h);
    for m in moves {
        m.to_u16().hash(&mut h);
    }
    h.finish()
}

impl Importer {
    /// An importer keeping what `filter` accepts.
    pub fn new(filter: ImportFilter) -> Self {
        Importer {
            filter,
            seen: HashSet::new(),
            stats: ImportStats::default(),
            bytes_read: Arc::new(AtomicU64::new(0)),
            last_encoding: "UTF-8".to_string(),
        }
    }

    /// Marks a game already imported (a resumed import re-reads its chunks so that
    /// duplicates stay dropped).
    pub fn remember(&mut self, game: &GameRecord) {
        let Some(variant) = crate::record::variant_from_name(&game.variant) else {
            return;
        };
        let Ok(start) = Position::from_sfen(variant, &game.start_sfen) else {
            return;
        };
        let moves: Vec<Move> = game
            .moves
            .iter()
            .filter_map(|m| u16::try_from(m.mv).ok().and_then(Move::from_u16))
            .collect();
        self.seen.insert(game_key(&start, &moves));
    }

    /// Applies the filter to one game read from a text record; a kept game goes to
    /// `sink`.
    fn consider(&mut self, rec: &Record, evals: Option<&[i16]>, sink: &mut dyn FnMut(GameRecord)) {
        let ending = rec.ending();
        let outcome = rec.outcome();
        let Some(outcome) = outcome else {
            self.stats
                .drop(format!("ending {} (no result)", ending.name()));
            return;
        };
        // A record that stops at a mate without saying so ended by mate.
        let ending = if ending == Ending::Unfinished || ending == Ending::Aborted {
            Ending::Checkmate
        } else {
            ending
        };
        if !self.filter.endings.contains(&ending) {
            self.stats.drop(format!("ending {}", ending.name()));
            return;
        }
        if let Some(min) = self.filter.min_rating
            && rec.ratings.iter().any(|r| r.is_some_and(|r| r < min))
        {
            self.stats.drop("rating");
            return;
        }
        if rec.moves.len() < self.filter.min_moves {
            self.stats.drop("moves");
            return;
        }
        if self.filter.drop_duplicates && !self.seen.insert(game_key(&rec.start, &rec.moves)) {
            self.stats.drop("duplicate");
            return;
        }
        self.stats.kept += 1;
        self.stats.positions += rec.moves.len() as u64;
        sink(game_record(&rec.start, &rec.moves, evals, outcome));
    }

    /// Reads `path` in `format` (its extension's, by default) from its `skip`-th record
    /// on, handing every kept game to `sink` with the index of the record after it (a
    /// resume point); [`Importer::bytes_read`] follows the reading. Returns the number of
    /// records in the file. An I/O error or a text file that is not UTF-8 is an error;
    /// malformed records are counted, reported and skipped.
    pub fn read_file(
        &mut self,
        path: &Path,
        format: RecordFormat,
        skip: u64,
        sink: &mut dyn FnMut(GameRecord, u64),
    ) -> std::io::Result<u64> {
        let name = path.display().to_string();
        self.bytes_read.store(0, Ordering::Relaxed);
        let (records, encoding) = read_records_in(
            path,
            format,
            &[Variant::Shogi],
            Arc::clone(&self.bytes_read),
        )?;
        self.last_encoding = encoding;
        let mut index = 0u64;
        for record in records {
            index += 1;
            if index <= skip {
                continue;
            }
            self.stats.read += 1;
            match record {
                Err(e) => self.stats.malformed(format!("{name}: {e}")),
                Ok(ReadRecord::Game { record, evals }) => {
                    self.consider(&record, evals.as_deref(), &mut |g| sink(g, index))
                }
                Ok(ReadRecord::Problem { .. }) => {
                    self.stats.drop("tsume problem (a position, not a game)")
                }
                Ok(ReadRecord::Position(p)) => {
                    // A position is not a game: no ending, length or duplicate filter;
                    // its result is the game's.
                    let outcome = match p.winner {
                        Some(w) => Outcome::win(w, EndReason::Adjudication),
                        None => Outcome::draw(EndReason::Adjudication),
                    };
                    self.stats.kept += 1;
                    self.stats.positions += 1;
                    sink(
                        game_record(&p.position, &[p.best_move], Some(&[p.eval]), outcome),
                        index,
                    );
                }
            }
        }
        Ok(index)
    }
}

/// One record of a file, every move legal where it is played.
#[derive(Clone, Debug)]
pub enum ReadRecord {
    /// A game; `evals` holds an evaluation a move where the format keeps one (hcpe3).
    Game {
        /// The game.
        record: Record,
        /// The evaluations in centipawns, for the side to move at each ply.
        evals: Option<Vec<i16>>,
    },
    /// One hcpe position, with the move played there.
    Position(HcpePosition),
    /// A composed problem with one king (詰将棋): its position, as SFEN. Not a game: the
    /// import leaves it out; `view` shows it.
    Problem { sfen: String },
}

/// The records of one file in order, each a [`ReadRecord`] or what is wrong with it
/// (`game 5: csa line 129: ...`, `entry 4: ...`), so a caller can report a bad one and
/// read on: the importer and `view` read files through it. Text files are read whole (a
/// few kilobytes a game); `hcpe` and `hcpe3` stream, counting the bytes read into
/// `bytes_read`. A USI line is read in the first of `usi_variants` whose rules accept it
/// (its SFEN's board tells shogi from minishogi). A file that cannot be opened, or text
/// in no encoding a record file is written in, is an error.
pub fn read_records(
    path: &Path,
    format: RecordFormat,
    usi_variants: &[Variant],
    bytes_read: Arc<AtomicU64>,
) -> std::io::Result<Box<dyn Iterator<Item = Result<ReadRecord, String>>>> {
    read_records_in(path, format, usi_variants, bytes_read).map(|(records, _)| records)
}

/// The records of a file in the iterator [`read_records`] returns, with the encoding
/// its text was read in ([`crate::text::decode_record_text`]; `binary` for hcpe and
/// hcpe3).
#[allow(clippy::type_complexity)]
pub fn read_records_in(
    path: &Path,
    format: RecordFormat,
    usi_variants: &[Variant],
    bytes_read: Arc<AtomicU64>,
) -> std::io::Result<(Box<dyn Iterator<Item = Result<ReadRecord, String>>>, String)> {
    let game = |record| ReadRecord::Game {
        record,
        evals: None,
    };
    let text_record = |read: Result<Record, RecordError>| match read {
        Ok(record) => Ok(game(record)),
        Err(RecordError::Tsume { sfen }) => Ok(ReadRecord::Problem { sfen }),
        Err(e) => Err(e.to_string()),
    };
    let encoding: String;
    let games: Vec<Result<ReadRecord, String>> = match format {
        RecordFormat::Hcpe | RecordFormat::Hcpe3 => {
            let file = BufReader::with_capacity(
                1 << 20,
                Counting {
                    inner: fs::File::open(path)?,
                    count: bytes_read,
                },
            );
            return Ok((
                if format == RecordFormat::Hcpe {
                    Box::new(HcpeReader::new(file).enumerate().map(|(index, entry)| {
                        let p = entry.map_err(|e| e.to_string())?;
                        if !p.position.is_legal(p.best_move) {
                            return Err(format!(
                                "entry {}: move {} is illegal in {}",
                                index + 1,
                                p.best_move,
                                p.position.to_sfen()
                            ));
                        }
                        Ok(ReadRecord::Position(p))
                    }))
                } else {
                    Box::new(
                        Hcpe3Reader::new(file)
                            .enumerate()
                            .map(|(index, g)| hcpe3_game(index, g.map_err(|e| e.to_string())?)),
                    )
                },
                "binary".to_string(),
            ));
        }
        RecordFormat::Csa | RecordFormat::Kif | RecordFormat::Ki2 | RecordFormat::Usi => {
            let bytes = fs::read(path)?;
            bytes_read.store(bytes.len() as u64, Ordering::Relaxed);
            let decoded = crate::text::decode_record_text(&bytes)
                .map_err(|why| std::io::Error::new(std::io::ErrorKind::InvalidData, why))?;
            encoding = decoded.describe();
            let text = decoded.text;
            match format {
                RecordFormat::Csa => from_csa_games(&text).into_iter().map(text_record).collect(),
                RecordFormat::Kif => vec![text_record(from_kif(&text))],
                RecordFormat::Ki2 => vec![text_record(from_ki2(&text))],
                _ => text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                    .map(|(i, line)| usi_game(usi_variants, line, i + 1).map(game))
                    .collect(),
            }
        }
    };
    Ok((
        Box::new(
            games
                .into_iter()
                .enumerate()
                .map(move |(i, r)| r.map_err(|e| format!("game {}: {e}", i + 1))),
        ),
        encoding,
    ))
}

/// A USI line read in the first of `variants` that accepts it; the first one's error
/// where none does.
fn usi_game(variants: &[Variant], line: &str, line_no: usize) -> Result<Record, String> {
    let mut first_error = None;
    for &variant in variants {
        match from_usi_line(variant, line, line_no) {
            Ok(record) => return Ok(record),
            Err(e) => {
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "no variant to read a USI line in".to_string()))
}

/// An hcpe3 game as a record, its moves checked.
fn hcpe3_game(index: usize, game: Hcpe3Game) -> Result<ReadRecord, String> {
    let mut pos = game.start.clone();
    let mut moves = Vec::with_capacity(game.moves.len());
    for (ply, m) in game.moves.iter().enumerate() {
        if !pos.is_legal(m.mv) {
            return Err(format!(
                "game {}: move {} ({}) is illegal in {}",
                index + 1,
                ply + 1,
                m.mv,
                pos.to_sfen()
            ));
        }
        pos.play_unchecked(m.mv);
        moves.push(m.mv);
    }
    let mut record = Record::new(game.start, moves);
    record.end = hcpe3_ending(game.result, pos.side_to_move())
        .csa_marker()
        .map(str::to_string);
    Ok(ReadRecord::Game {
        record,
        evals: Some(game.moves.iter().map(|m| m.eval).collect()),
    })
}

/// The ending an hcpe3 result byte stands for (bit 2 repetition, bit 3 declaration,
/// bit 4 the move limit; otherwise a decisive game is a resignation or mate, which the
/// final position tells apart, and a draw a repetition).
fn hcpe3_ending(result: u8, to_move: Color) -> Ending {
    let winner = winner_of_result(result);
    if result & 4 != 0 {
        Ending::Repetition
    } else if result & 8 != 0 {
        if winner.is_some() {
            Ending::Declaration
        } else {
            Ending::Impasse
        }
    } else if result & 16 != 0 {
        Ending::MaxMoves
    } else {
        match winner {
            // The winner's opponent is to move after a win by mate or resignation; a
            // winner to move had declared.
            Some(w) if w == to_move => Ending::Declaration,
            Some(_) => Ending::Resignation,
            None => Ending::Repetition,
        }
    }
}

/// The record files under `paths` (files as given; directories searched recursively
/// for the extensions [`RecordFormat::of_path`] knows), in a stable order.
pub fn record_files(paths: &[PathBuf]) -> std::io::Result<Vec<(PathBuf, RecordFormat)>> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut stack = vec![path.clone()];
            while let Some(dir) = stack.pop() {
                let mut entries: Vec<PathBuf> = fs::read_dir(&dir)?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<Result<_, _>>()?;
                entries.sort();
                for entry in entries {
                    if entry.is_dir() {
                        stack.push(entry);
                    } else if let Some(format) = RecordFormat::of_path(&entry) {
                        out.push((entry, format));
                    }
                }
            }
        } else {
            let format = RecordFormat::of_path(path).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "{}: unknown record format (expected one of {})",
                        path.display(),
                        RecordFormat::EXTENSIONS
                    ),
                )
            })?;
            out.push((path.clone(), format));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

//! The replay chunk format, version 1.
//!
//! A chunk file holds whole games; actors write one chunk every few games and the
//! learner reads every chunk in the replay directory. All integers are little-endian.
//!
//! ```text
//! chunk   := "SZGR" version:u16 reserved:u16 game_count:u32 game*game_count "SZEN"
//! game    := payload_len:u32 payload crc32(payload):u32
//! payload := variant:str8 start_sfen:str16 max_plies:u32 impasse:u8
//!            winner:u8 (0 Black, 1 White, 2 draw) reason:u8 flags:u8 (bit 0 = resignation disabled)
//!            move_count:u32 move*move_count
//! move    := move:u32 root_value:f32 flags:u8 (bit 0 = full search, a policy target)
//!            searched_count:u16 (move:u32 visits:u32 target:f32)*searched_count
//! str8    := len:u8 bytes      str16 := len:u16 bytes
//! ```
//!
//! `move` is the variant's compact move code (for shogi [`shogi_rules::Move::to_u16`]);
//! `root_value` the search's expected score for the side to move (0 loss .. 1 win);
//! `target` the policy target (visit share, or the Gumbel improved policy).
//!
//! Files are written as `.NAME.tmp-PID` and renamed (`shogi_rundir::write_atomic`), so
//! a reader never sees a partial chunk from a live writer; a chunk cut short some other
//! way (a full disk, a copy) fails its length or trailer check and is reported, never
//! half-read.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use shogi_game::{Color, EndReason, GameKind, Outcome};

/// Version written in every chunk header; readers refuse any other.
pub const FORMAT_VERSION: u16 = 1;
const MAGIC: &[u8; 4] = b"SZGR";
const TRAILER: &[u8; 4] = b"SZEN";
/// Extension of finished chunk files.
pub const CHUNK_EXTENSION: &str = "szgr";

/// One searched root move of a recorded position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchedMove {
    /// Move code.
    pub mv: u32,
    /// Visits the search gave it.
    pub visits: u32,
    /// Policy target probability.
    pub target: f32,
}

/// One move of a recorded game with what the search said about its position.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRecord {
    /// The move played (move code).
    pub mv: u32,
    /// Root expected score for the side to move, 0..=1.
    pub root_value: f32,
    /// Whether this was a full search whose policy is a training target (playout cap
    /// randomization records cheap searches with `false`).
    pub full_search: bool,
    /// The searched moves (empty for moves not searched, e.g. random opening plies).
    pub searched: Vec<SearchedMove>,
}

impl MoveRecord {
    /// A move played without a search (a random opening ply, or a move of a record that
    /// holds moves only): no targets, a neutral root value.
    pub fn unsearched(mv: u32) -> MoveRecord {
        MoveRecord {
            mv,
            root_value: 0.5,
            full_search: false,
            searched: Vec::new(),
        }
    }
}

/// A whole self-play game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Variant name (`shogi`, `minishogi`, `tai`: a [`GameKind`]'s name).
    pub variant: String,
    /// The start position as SFEN.
    pub start_sfen: String,
    /// The max-plies draw rule the game was played under (0 = none).
    pub max_plies: u32,
    /// Rule code: for shogi the impasse rule (0 none, 1 27-point declaration, 2
    /// 24-point); for tai shogi `TaiRules::options_code` (0 = the seed's defaults).
    pub impasse: u8,
    /// How the game ended.
    pub outcome: Outcome,
    /// Resignation was disabled in this game (to measure false resignations).
    pub resignation_disabled: bool,
    /// The moves in order.
    pub moves: Vec<MoveRecord>,
}

/// Why a record cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The variant name is not a game's, or not the replaying game's.
    #[error("unknown variant {0:?}")]
    Variant(String),
    /// The start SFEN does not parse as a position of the record's game (the game's
    /// own parser says why).
    #[error("bad {game} start position: {why}")]
    StartPosition {
        /// The game's name.
        game: &'static str,
        /// The parser's message.
        why: String,
    },
    /// A move code is malformed or illegal where it stands.
    #[error("move {ply} (code {code:#06x}) is not legal in {sfen}")]
    Move {
        /// 1-based ply.
        ply: usize,
        /// The code.
        code: u32,
        /// The position it was played in.
        sfen: String,
    },
    /// The network's input planes are not a set this record's game offers.
    #[error("{0}")]
    Features(String),
    /// A record of another game than the network's.
    #[error("a {found} game, where the network plays {expected}")]
    OtherGame {
        /// The record's game.
        found: &'static str,
        /// The network's.
        expected: &'static str,
    },
}

impl GameRecord {
    /// The game this record is of (its variant name).
    pub fn game(&self) -> Result<GameKind, ReplayError> {
        self.variant
            .parse()
            .map_err(|_| ReplayError::Variant(self.variant.clone()))
    }
}

/// The rules variant (standard shogi or minishogi) a record's variant name stands for;
/// `None` for tai shogi and unknown names.
pub fn variant_from_name(name: &str) -> Option<shogi_rules::Variant> {
    name.parse().ok().and_then(shogi_rules::Variant::of)
}

/// What can go wrong reading or writing records.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An I/O error, with the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Not a chunk file.
    #[error("{path}: not a shogi-zero record chunk (bad magic)")]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// A chunk of another format version.
    #[error("{path}: record format version {found}, this build reads version {FORMAT_VERSION}")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u16,
    },
    /// The file ends early: a truncated chunk.
    #[error("{path}: truncated after {offset} bytes ({what})")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Where it ended.
        offset: usize,
        /// What was being read.
        what: &'static str,
    },
    /// A game's checksum does not match: corrupted data.
    #[error("{path}: game {game} fails its checksum")]
    Checksum {
        /// The file.
        path: PathBuf,
        /// Index of the game in the chunk.
        game: usize,
    },
    /// A field holds a value no writer produces.
    #[error("{path}: game {game}: invalid {field}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Index of the game in the chunk.
        game: usize,
        /// The field.
        field: &'static str,
    },
    /// A game that cannot be written (a field too long for its length prefix).
    #[error("game cannot be recorded: {0}")]
    Unrecordable(&'static str),
}

fn reason_code(reason: EndReason) -> u8 {
    match reason {
        EndReason::Checkmate => 0,
        EndReason::NoLegalMoves => 1,
        EndReason::Repetition => 2,
        EndReason::PerpetualCheck => 3,
        EndReason::ImpasseDeclaration => 4,
        EndReason::Impasse24 => 5,
        EndReason::MaxPlies => 6,
        EndReason::Resignation => 7,
        EndReason::RoyalsCaptured => 8,
        EndReason::Forfeit => 9,
        EndReason::Adjudication => 10,
        EndReason::TimeUp => 11,
    }
}

fn reason_from_code(code: u8) -> Option<EndReason> {
    Some(match code {
        0 => EndReason::Checkmate,
        1 => EndReason::NoLegalMoves,
        2 => EndReason::Repetition,
        3 => EndReason::PerpetualCheck,
        4 => EndReason::ImpasseDeclaration,
        5 => EndReason::Impasse24,
        6 => EndReason::MaxPlies,
        7 => EndReason::Resignation,
        8 => EndReason::RoyalsCaptured,
        9 => EndReason::Forfeit,
        10 => EndReason::Adjudication,
        11 => EndReason::TimeUp,
        _ => return None,
    })
}

fn encode_game(game: &GameRecord, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let variant = game.variant.as_bytes();
    let sfen = game.start_sfen.as_bytes();
    let v_len = u8::try_from(variant.len()).map_err(|_| RecordError::Unrecordable("variant"))?;
    let s_len = u16::try_from(sfen.len()).map_err(|_| RecordError::Unrecordable("sfen"))?;
    let m_len =
        u32::try_from(game.moves.len()).map_err(|_| RecordError::Unrecordable("move count"))?;
    out.push(v_len);
    out.extend_from_slice(variant);
    out.extend_from_slice(&s_len.to_le_bytes());
    out.extend_from_slice(sfen);
    out.extend_from_slice(&game.max_plies.to_le_bytes());
    out.push(game.impasse);
    out.push(match game.outcome.winner {
        Some(Color::Black) => 0,
        Some(Color::White) => 1,
        None => 2,
    });
    out.push(reason_code(game.outcome.reason));
    out.push(u8::from(game.resignation_disabled));
    out.extend_from_slice(&m_len.to_le_bytes());
    for mv in &game.moves {
        out.extend_from_slice(&mv.mv.to_le_bytes());
        out.extend_from_slice(&mv.root_value.to_le_bytes());
        out.push(u8::from(mv.full_search));
        let n = u16::try_from(mv.searched.len())
            .map_err(|_| RecordError::Unrecordable("searched moves"))?;
        out.extend_from_slice(&n.to_le_bytes());
        for s in &mv.searched {
            out.extend_from_slice(&s.mv.to_le_bytes());
            out.extend_from_slice(&s.visits.to_le_bytes());
            out.extend_from_slice(&s.target.to_le_bytes());
        }
    }
    Ok(())
}

/// Serialises games into a complete chunk image.
pub fn encode_chunk(games: &[GameRecord]) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    let count = u32::try_from(games.len()).map_err(|_| RecordError::Unrecordable("games"))?;
    out.extend_from_slice(&count.to_le_bytes());
    let mut payload = Vec::new();
    for game in games {
        payload.clear();
        encode_game(game, &mut payload)?;
        let len = u32::try_from(payload.len()).map_err(|_| RecordError::Unrecordable("size"))?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&payload);
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    }
    out.extend_from_slice(TRAILER);
    Ok(out)
}

/// Writes `games` to `path` atomically ([`shogi_rundir::write_atomic`]: a dot-named
/// temporary beside it, fsync, rename).
///
/// Blocks on file I/O; any thread may call it.
pub fn write_chunk(path: &Path, games: &[GameRecord]) -> Result<(), RecordError> {
    let bytes = encode_chunk(games)?;
    shogi_rundir::write_atomic(path, &bytes).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A little-endian cursor that reports truncation instead of panicking.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], RecordError> {
        if self.bytes.len() - self.pos < n {
            return Err(RecordError::Truncated {
                path: self.path.to_path_buf(),
                offset: self.bytes.len(),
                what,
            });
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, RecordError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, RecordError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, RecordError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, RecordError> {
        Ok(f32::from_bits(self.u32(what)?))
    }
}

fn decode_game(bytes: &[u8], path: &Path, index: usize) -> Result<GameRecord, RecordError> {
    let invalid = |field| RecordError::Invalid {
        path: path.to_path_buf(),
        game: index,
        field,
    };
    let mut c = Cursor {
        bytes,
        pos: 0,
        path,
    };
    let v_len = c.u8("variant length")? as usize;
    let variant = std::str::from_utf8(c.take(v_len, "variant")?)
        .map_err(|_| invalid("variant"))?
        .to_string();
    let s_len = c.u16("sfen length")? as usize;
    let start_sfen = std::str::from_utf8(c.take(s_len, "sfen")?)
        .map_err(|_| invalid("sfen"))?
        .to_string();
    let max_plies = c.u32("max plies")?;
    let impasse = c.u8("impasse")?;
    let winner = match c.u8("winner")? {
        0 => Some(Color::Black),
        1 => Some(Color::White),
        2 => None,
        _ => return Err(invalid("winner")),
    };
    let reason = reason_from_code(c.u8("reason")?).ok_or_else(|| invalid("reason"))?;
    let flags = c.u8("flags")?;
    let move_count = c.u32("move count")? as usize;
    // Each move takes at least 11 bytes: refuse counts the payload cannot hold before
    // allocating for them.
    if move_count > bytes.len() / 11 {
        return Err(invalid("move count"));
    }
    let mut moves = Vec::with_capacity(move_count);
    for _ in 0..move_count {
        let mv = c.u32("move")?;
        let root_value = c.f32("root value")?;
        let full_search = c.u8("move flags")? & 1 == 1;
        let n = c.u16("searched count")? as usize;
        let mut searched = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            searched.push(SearchedMove {
                mv: c.u32("searched move")?,
                visits: c.u32("visits")?,
                target: c.f32("target")?,
            });
        }
        moves.push(MoveRecord {
            mv,
            root_value,
            full_search,
            searched,
        });
    }
    if c.pos != bytes.len() {
        return Err(invalid("payload length"));
    }
    Ok(GameRecord {
        variant,
        start_sfen,
        max_plies,
        impasse,
        outcome: Outcome { winner, reason },
        resignation_disabled: flags & 1 == 1,
        moves,
    })
}

/// Parses a chunk image read from `path` (the path is only used in errors).
pub fn decode_chunk(bytes: &[u8], path: &Path) -> Result<Vec<GameRecord>, RecordError> {
    let mut c = Cursor {
        bytes,
        pos: 0,
        path,
    };
    if c.take(4, "magic")? != MAGIC {
        return Err(RecordError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    let version = c.u16("version")?;
    if version != FORMAT_VERSION {
        return Err(RecordError::Version {
            path: path.to_path_buf(),
            found: version,
        });
    }
    c.u16("reserved")?;
    let count = c.u32("game count")? as usize;
    let mut games = Vec::with_capacity(count.min(4096));
    for index in 0..count {
        let len = c.u32("game length")? as usize;
        let payload = c.take(len, "game")?;
        let crc = c.u32("checksum")?;
        if crc32fast::hash(payload) != crc {
            return Err(RecordError::Checksum {
                path: path.to_path_buf(),
                game: index,
            });
        }
        games.push(decode_game(payload, path, index)?);
    }
    if c.take(4, "trailer")? != TRAILER {
        return Err(RecordError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    Ok(games)
}

/// Reads one chunk file.
pub fn read_chunk(path: &Path) -> Result<Vec<GameRecord>, RecordError> {
    let bytes = fs::read(path).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    decode_chunk(&bytes, path)
}

/// Reads every finished chunk (`*.szgr`) in `dir`, oldest name first. A chunk that
/// cannot be read is skipped with a warning and returned in the second list; the
/// temporaries of a killed writer (`.NAME.tmp-PID`) are ignored.
pub fn read_chunk_dir(dir: &Path) -> Result<(Vec<GameRecord>, Vec<RecordError>), RecordError> {
    let entries = fs::read_dir(dir).map_err(|source| RecordError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == CHUNK_EXTENSION))
        .collect();
    paths.sort();
    let mut games = Vec::new();
    let mut skipped = Vec::new();
    for path in paths {
        match read_chunk(&path) {
            Ok(mut g) => games.append(&mut g),
            Err(err) => {
                tracing::warn!("skipping unreadable record chunk: {err}");
                skipped.push(err);
            }
        }
    }
    Ok((games, skipped))
}

/// Buffers finished games and writes them as numbered chunks of `games_per_chunk`.
///
/// Owned by one actor thread; not shared.
#[derive(Debug)]
pub struct ChunkWriter {
    dir: PathBuf,
    prefix: String,
    games_per_chunk: usize,
    next_index: u64,
    pending: Vec<GameRecord>,
}

impl ChunkWriter {
    /// A writer into `dir` (created if missing) naming chunks `PREFIX-NNNNNNNN.szgr`,
    /// continuing after the highest index already there.
    pub fn new(dir: &Path, prefix: &str, games_per_chunk: usize) -> Result<Self, RecordError> {
        let io_err = |source| RecordError::Io {
            path: dir.to_path_buf(),
            source,
        };
        fs::create_dir_all(dir).map_err(io_err)?;
        let mut next_index = 0;
        for entry in fs::read_dir(dir).map_err(io_err)?.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if let Some(rest) = name.strip_prefix(&format!("{prefix}-"))
                && let Some(num) = rest.strip_suffix(&format!(".{CHUNK_EXTENSION}"))
                && let Ok(n) = num.parse::<u64>()
            {
                next_index = next_index.max(n + 1);
            }
        }
        Ok(ChunkWriter {
            dir: dir.to_path_buf(),
            prefix: prefix.to_string(),
            games_per_chunk: games_per_chunk.max(1),
            next_index,
            pending: Vec::new(),
        })
    }

    /// Adds a finished game; writes a chunk when enough are pending. Returns the path
    /// written, if any.
    pub fn push(&mut self, game: GameRecord) -> Result<Option<PathBuf>, RecordError> {
        self.pending.push(game);
        if self.pending.len() >= self.games_per_chunk {
            self.flush()
        } else {
            Ok(None)
        }
    }

    /// Writes whatever is pending as a chunk (nothing if empty).
    pub fn flush(&mut self) -> Result<Option<PathBuf>, RecordError> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let path = self.dir.join(format!(
            "{}-{:08}.{CHUNK_EXTENSION}",
            self.prefix, self.next_index
        ));
        write_chunk(&path, &self.pending)?;
        self.pending.clear();
        self.next_index += 1;
        Ok(Some(path))
    }
}

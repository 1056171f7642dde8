//! Game records and data I/O, below self-play, the learner and the arena (which all read
//! or write records and need nothing else of each other for it).
//!
//! [`record`] defines the on-disk chunk format (versioned, checksummed, written with
//! tmp + rename) that self-play writes and the learner reads; [`RecordGame`] is what a
//! record needs from a game (its header, move codes, and the way back to the game);
//! [`convert`] turns records into text any shogi tool reads (USI `position` lines, CSA,
//! KIF); [`hcpe3`] writes standard shogi games in dlshogi's training format.

pub mod convert;
mod game;
pub mod hcpe3;
pub mod record;

pub use game::RecordGame;
pub use record::{
    ChunkWriter, FORMAT_VERSION, GameRecord, MoveRecord, RecordError, ReplayError, SearchedMove,
    read_chunk, read_chunk_dir, write_chunk,
};

//! Self-play game records.
//!
//! [`record`] defines the on-disk chunk format (versioned, checksummed, written with
//! tmp + rename) that actors write and the learner reads; [`convert`] turns records into
//! text any shogi tool reads (USI `position` lines, CSA, KIF); [`play`] plays one
//! self-play game with a shared evaluator; [`actors`] runs many games on actor threads
//! into a replay directory.

pub mod actors;
pub mod convert;
pub mod hcpe3;
pub mod play;
pub mod record;

pub use record::{
    ChunkWriter, FORMAT_VERSION, GameRecord, MoveRecord, RecordError, ReplayError, SearchedMove,
    read_chunk, read_chunk_dir, write_chunk,
};

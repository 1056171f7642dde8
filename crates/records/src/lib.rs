//! Game records and data I/O, below self-play, the learner and the arena (which all read
//! or write records and need nothing else of each other for it).
//!
//! [`record`] defines the on-disk chunk format (versioned, checksummed, written with
//! tmp + rename) that self-play writes and the learner reads; [`hcpe3`] writes standard
//! shogi games in dlshogi's training format and [`hcpe`] reads its `hcpe` and `hcpe3`
//! files; [`import`] turns the records people have (CSA, KIF, USI, hcpe, hcpe3) into
//! training games, and [`import_run`] runs an import into replay chunks that resumes
//! where it was stopped. What a record needs from a game (its
//! header, move codes, the way back to the game: `RecordGame`) and the text exports
//! (USI `position` lines, CSA, KIF) are each game's, in `shogi-registry`.

pub mod hcpe;
pub mod hcpe3;
pub mod import;
pub mod import_run;
pub mod record;
pub mod text;

pub use record::{
    ChunkWriter, FORMAT_VERSION, GameRecord, MoveRecord, RecordError, ReplayError, SearchedMove,
    read_chunk, read_chunk_dir, variant_from_name, write_chunk,
};

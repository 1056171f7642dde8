//! USI engine (`shogi-zero usi`): see docs/USI.md and docs/ARCHITECTURE.md.
//!
//! [`Engine`] speaks USI over any `BufRead` / `Write` pair (stdin/stdout in the binary,
//! in-memory pipes in tests). Searches run on a worker thread, so `stop`, `ponderhit`,
//! `isready` and `quit` are answered while one is in progress.

pub mod engine;
pub mod game;
pub mod options;
pub mod protocol;
mod search;
mod shared;
pub mod time;

pub use engine::{Engine, GUMBEL_FIRST_SIMULATIONS, RunSearchLookup, SearchSource};
pub use options::{ENGINE_TREE_BATCH, Options, SetOptionError};
pub use protocol::{Command, GoRequest, score_to_cp};

//! The arena's error type.

use std::path::PathBuf;

/// Why a match or a gate could not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// A filesystem operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The path concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A checkpoint could not be loaded.
    #[error("checkpoint {path}: {source}")]
    Checkpoint {
        /// The checkpoint directory.
        path: PathBuf,
        /// The loader's error.
        source: shogi_model::CheckpointError,
    },
    /// The network does not fit the variant.
    #[error(transparent)]
    Net(#[from] shogi_model::evaluator::NetEvaluatorError),
    /// A checkpoint could not be served (not loadable, or not this game's shape).
    #[error(transparent)]
    Service(#[from] shogi_model::NetServiceError),
    /// Bad device string.
    #[error(transparent)]
    Device(#[from] shogi_model::DeviceError),
    /// The two players or checkpoints disagree (variant), or a setting is invalid.
    #[error("{0}")]
    Config(String),
    /// An opening could not be read.
    #[error("opening {line}: {reason}")]
    Opening {
        /// 1-based line (0 for generated openings).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A game record could not be written.
    #[error("saving game: {0}")]
    Export(#[from] shogi_registry::export::ExportError),
    /// JSON (de)serialisation failed.
    #[error("json {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The error.
        source: serde_json::Error,
    },
    /// The rating history could not be read, written or drawn.
    #[error(transparent)]
    Ratings(#[from] shogi_ratings::RatingsError),
    /// The run has no accepted network to gate against.
    #[error("run {0} has no accepted network (accepted/ is empty)")]
    NoBest(PathBuf),
    /// No accepted network of the run loads (each damaged on disk, say).
    #[error("run {run}: no accepted network loads: {tried}")]
    NoLoadableBest { run: PathBuf, tried: String },
    /// The stop flag was raised before the match finished; nothing was promoted or
    /// rejected.
    #[error("interrupted after {games} of {planned} games")]
    Interrupted {
        /// Games finished.
        games: u32,
        /// Games planned.
        planned: u32,
    },
}

/// `map_err` helper for I/O errors with their path.
pub(crate) fn io_err(
    op: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> ArenaError + use<> {
    let path = path.to_path_buf();
    move |source| ArenaError::Io { op, path, source }
}

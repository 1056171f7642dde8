//! The ratings' error type.

use std::path::PathBuf;

/// Why a rating history, a curve or a plot could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RatingsError {
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
    /// JSON (de)serialisation failed.
    #[error("json {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The error.
        source: serde_json::Error,
    },
    /// A plot could not be drawn.
    #[error("plot {path}: {reason}")]
    Plot {
        /// The image file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// `map_err` helper for I/O errors with their path.
pub(crate) fn io_err(
    op: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> RatingsError + use<> {
    let path = path.to_path_buf();
    move |source| RatingsError::Io { op, path, source }
}

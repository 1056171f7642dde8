//! Training runs from config files: the config, the run loop, resume.

pub mod config;

pub use config::{ConfigError, RunConfig};

//! A training run from its config file: the config ([`RunConfig`]), the run loop that puts
//! self-play, the learner and the gate side by side in one process ([`run()`]), and
//! resume from the run directory.

pub mod config;
pub mod run;

pub use config::{ConfigError, RunConfig};
pub use run::{Roles, RunSummary, StopCause, game_spec, plain_root, play_root, run};

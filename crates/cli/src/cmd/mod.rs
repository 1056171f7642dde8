//! One module per subcommand: arguments, validation, run.

pub mod curve;
pub mod export;
pub mod gate;
pub mod info;
pub mod learn;
pub mod match_cmd;
pub mod perft;
pub mod selfplay;
pub mod train;
pub mod usi;

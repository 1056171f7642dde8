//! One module per subcommand: arguments, validation, run.

pub mod info;
pub mod perft;

//! One module per subcommand: arguments, validation, run.

pub mod perft;

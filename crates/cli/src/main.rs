//! `shogi-zero <subcommand>`: one binary, one file per subcommand under `cmd/`.
//!
//! Raw arguments (clap) become validated settings in each subcommand's `run`, which
//! returns `anyhow::Result`; `main` turns that into an exit code and treats a closed
//! pipe (a GUI or `head` that stopped reading) as a normal exit.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "shogi-zero",
    version,
    about = "AlphaZero-style self-play trainer for shogi"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count the legal-move tree below a position (rules-core check and speed figure).
    Perft(cmd::perft::PerftArgs),
    /// Play self-play games into a replay directory.
    Selfplay(cmd::selfplay::SelfplayArgs),
    /// Train on a replay directory and export candidate checkpoints.
    Learn(cmd::learn::LearnArgs),
    /// Print versions, libtorch's view of the machine, and the device a run would use.
    Info(cmd::info::InfoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => cmd::perft::run(&args),
        Command::Info(args) => cmd::info::run(&args),
        Command::Selfplay(args) => cmd::selfplay::run(&args),
        Command::Learn(args) => cmd::learn::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("shogi-zero: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

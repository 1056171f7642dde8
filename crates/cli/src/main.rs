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
    /// With no subcommand the binary speaks USI on stdin/stdout, so a GUI can launch
    /// it directly.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a training run from a TOML config (self-play, learner and gate in one process).
    Train(cmd::train::TrainArgs),
    /// Speak USI on stdin/stdout (what a shogi GUI launches).
    Usi(cmd::usi::UsiArgs),
    /// Play a match between two players (checkpoints or external USI engines).
    Match(cmd::match_cmd::MatchArgs),
    /// Measure a run's accepted networks against one fixed opponent (learning curve).
    Curve(cmd::curve::CurveArgs),
    /// Gate candidate checkpoints of a run directory against its best network.
    Gate(cmd::gate::GateArgs),
    /// Count the legal-move tree below a position (rules-core check and speed figure).
    Perft(cmd::perft::PerftArgs),
    /// Play self-play games into a replay directory.
    Selfplay(cmd::selfplay::SelfplayArgs),
    /// Train on a replay directory and export candidate checkpoints.
    Learn(cmd::learn::LearnArgs),
    /// Write self-play games from replay chunks as USI, CSA and KIF files.
    Export(cmd::export::ExportArgs),
    /// Print versions, libtorch's view of the machine, and the device a run would use.
    Info(cmd::info::InfoArgs),
    /// Write one game (self-play chunk, match or gate games) as a self-contained HTML page.
    View(cmd::view::ViewArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => cmd::usi::run(&cmd::usi::UsiArgs::default()),
        Some(Command::Train(args)) => cmd::train::run(&args),
        Some(Command::Usi(args)) => cmd::usi::run(&args),
        Some(Command::Match(args)) => cmd::match_cmd::run(&args),
        Some(Command::Gate(args)) => cmd::gate::run(&args),
        Some(Command::Curve(args)) => cmd::curve::run(&args),
        Some(Command::Perft(args)) => cmd::perft::run(&args),
        Some(Command::Info(args)) => cmd::info::run(&args),
        Some(Command::Selfplay(args)) => cmd::selfplay::run(&args),
        Some(Command::Learn(args)) => cmd::learn::run(&args),
        Some(Command::Export(args)) => cmd::export::run(&args),
        Some(Command::View(args)) => cmd::view::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("shogi-zero: error: {}", error_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, `: `-separated, leaving out a cause whose text the message
/// already holds (library errors often print their source inside their own message).
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn causes_already_in_the_message_are_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = anyhow::Error::new(io).context("read X/manifest.json: no such file");
        let err = err.context("checkpoint X");
        assert_eq!(
            error_text(&err),
            "checkpoint X: read X/manifest.json: no such file"
        );
    }
}

//! `shogi-zero info`: versions, libtorch, and the device a run would use and why.

use anyhow::{Context, Result};
use clap::Args;
use shogi_game::GameKind;
use shogi_model::{DeviceReport, tch};

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Device to resolve: auto (CUDA if available, else CPU), cpu, cuda, cuda:N.
    #[arg(long, default_value = shogi_model::DEFAULT_DEVICE)]
    device: String,
}

/// The on-disk and network formats this binary reads and writes: checkpoints, each
/// game's input planes and policy index (as its network layout states them) and replay
/// chunks.
pub fn formats_line() -> String {
    let games: Vec<String> = GameKind::ALL
        .iter()
        .map(|&kind| {
            let layout = shogi_registry::layout(kind);
            format!(
                "{kind} {}/{}",
                layout.feature_version, layout.policy_version
            )
        })
        .collect();
    format!(
        "formats: checkpoint {}, features/policy {}, replay chunk {}",
        shogi_model::FORMAT_VERSION,
        games.join(", "),
        shogi_records::record::FORMAT_VERSION,
    )
}

/// The build's identity: the SHA-256 of the running binary, so two builds of the same
/// version (every build says 0.1.0) are told apart byte for byte. Read from the file
/// the process runs, not recorded at build time, so it cannot go stale.
pub fn build_line() -> Result<String> {
    use sha2::{Digest, Sha256};
    let exe = std::env::current_exe().context("where the running binary is")?;
    let bytes = std::fs::read(&exe).with_context(|| format!("read {}", exe.display()))?;
    let digest = Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("build: sha256 {hex}"))
}

pub fn run(args: &InfoArgs) -> Result<()> {
    println!("shogi-zero {}", env!("CARGO_PKG_VERSION"));
    // What two machines of one run must agree on (the Ray launcher compares these lines).
    println!("{}", formats_line());
    println!("{}", build_line()?);
    println!("libtorch threads: {}", tch::get_num_threads());
    let report = DeviceReport::resolve(&args.device)?;
    println!("cuda backend: {}", report.backend);
    println!(
        "cuda available: {} ({} devices)",
        tch::Cuda::is_available(),
        report.cuda_devices
    );
    if report.cuda_devices > 0 {
        println!("cudnn available: {}", tch::Cuda::cudnn_is_available());
    }
    println!("{report}");
    if report.fell_back_to_cpu() {
        eprintln!("warning: --device auto runs on the CPU here (no CUDA device)");
    }
    Ok(())
}

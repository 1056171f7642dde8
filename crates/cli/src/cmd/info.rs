//! `shogi-zero info`: versions, libtorch, and the device a run would use and why.

use anyhow::Result;
use clap::Args;
use shogi_model::{DeviceReport, tch};

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Device to resolve: auto (CUDA if available, else CPU), cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
}

pub fn run(args: &InfoArgs) -> Result<()> {
    println!("shogi-zero {}", env!("CARGO_PKG_VERSION"));
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

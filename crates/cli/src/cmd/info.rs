//! `shogi-zero info`: versions, libtorch, and the device a run would use.

use anyhow::Result;
use clap::Args;
use shogi_model::{parse_device, tch};

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Device to resolve: auto (CUDA if available, else CPU), cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
}

pub fn run(args: &InfoArgs) -> Result<()> {
    println!("shogi-zero {}", env!("CARGO_PKG_VERSION"));
    println!("libtorch threads: {}", tch::get_num_threads());
    println!(
        "cuda available: {} ({} devices)",
        tch::Cuda::is_available(),
        tch::Cuda::device_count()
    );
    let device = parse_device(&args.device)?;
    println!("device {:?} -> {device:?}", args.device);
    Ok(())
}

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
pub mod view;

/// Where networks run: `--device` and `--torch-threads`, shared by every command that
/// loads one.
#[derive(Debug, clap::Args)]
pub struct DeviceArgs {
    /// Device of the networks: auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = shogi_model::DEFAULT_DEVICE)]
    pub device: String,
    /// libtorch CPU threads (0 = libtorch's default).
    #[arg(long, default_value_t = 1)]
    pub torch_threads: usize,
}

impl DeviceArgs {
    /// Sets libtorch's CPU threads when asked for a number.
    pub fn apply_threads(&self) {
        if self.torch_threads > 0 {
            shogi_model::set_num_threads(self.torch_threads);
        }
    }
}

/// Parses a number that must be finite and above zero (a scale): `--gumbel-c-scale 0`
/// or `nan` is refused with the value named, not searched with.
pub(crate) fn positive_scale(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        Ok(_) => Err(format!("{text:?} is not a finite number above 0")),
        Err(e) => Err(format!("{text:?} is not a number: {e}")),
    }
}

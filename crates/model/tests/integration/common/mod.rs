//! What the model's test files share.

use shogi_model::tch::{Cuda, Device};

/// The device of an ignored CUDA test: `scripts/test.sh` runs those where `nvidia-smi`
/// sees a GPU, and a run without one fails here rather than pass having checked nothing.
pub fn cuda_device() -> Device {
    assert!(
        Cuda::is_available(),
        "no CUDA device visible to libtorch: this test checks the GPU path"
    );
    Device::Cuda(0)
}

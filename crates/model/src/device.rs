//! Device selection from user-facing strings.

use tch::{Cuda, Device};

/// Why a device string was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DeviceError {
    /// Not one of `auto`, `cpu`, `cuda`, `cuda:N`.
    #[error("invalid device {0:?}: expected \"auto\", \"cpu\", \"cuda\" or \"cuda:N\"")]
    Invalid(String),
    /// CUDA was asked for but libtorch sees no CUDA device.
    #[error("device {0:?} requested but CUDA is not available (libtorch sees no GPU)")]
    CudaUnavailable(String),
    /// `cuda:N` with N out of range.
    #[error("device {requested:?} requested but only {count} CUDA device(s) are available")]
    CudaIndexOutOfRange {
        /// The string as given.
        requested: String,
        /// Number of CUDA devices libtorch sees.
        count: i64,
    },
}

/// What a device string asks for, before looking at the hardware.
enum DeviceRequest {
    Auto,
    Cpu,
    Cuda(usize),
}

fn parse_request(s: &str) -> Result<DeviceRequest, DeviceError> {
    let t = s.trim().to_ascii_lowercase();
    Ok(match t.as_str() {
        "auto" => DeviceRequest::Auto,
        "cpu" => DeviceRequest::Cpu,
        "cuda" | "gpu" => DeviceRequest::Cuda(0),
        _ => {
            let n = t
                .strip_prefix("cuda:")
                .ok_or_else(|| DeviceError::Invalid(s.to_string()))?;
            DeviceRequest::Cuda(
                n.parse::<usize>()
                    .map_err(|_| DeviceError::Invalid(s.to_string()))?,
            )
        }
    })
}

/// Checks that `s` is a well-formed device string without asking for the device, so a
/// config written for a GPU machine validates on a CPU-only one.
pub fn check_device_syntax(s: &str) -> Result<(), DeviceError> {
    parse_request(s).map(|_| ())
}

/// Parses `"auto"` (CUDA 0 if available, else CPU), `"cpu"`, `"cuda"` (= `cuda:0`) or
/// `"cuda:N"`. Case-insensitive, surrounding whitespace ignored.
pub fn parse_device(s: &str) -> Result<Device, DeviceError> {
    let index = match parse_request(s)? {
        DeviceRequest::Auto => return Ok(Device::cuda_if_available()),
        DeviceRequest::Cpu => return Ok(Device::Cpu),
        DeviceRequest::Cuda(index) => index,
    };
    if !Cuda::is_available() {
        return Err(DeviceError::CudaUnavailable(s.to_string()));
    }
    let count = Cuda::device_count();
    if index as i64 >= count {
        return Err(DeviceError::CudaIndexOutOfRange {
            requested: s.to_string(),
            count,
        });
    }
    Ok(Device::Cuda(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_and_auto() {
        assert_eq!(parse_device("cpu"), Ok(Device::Cpu));
        assert_eq!(parse_device(" CPU "), Ok(Device::Cpu));
        let auto = parse_device("auto").unwrap();
        assert_eq!(auto, Device::cuda_if_available());
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "tpu", "cuda:", "cuda:x", "cuda:-1", "cpu:0", "cuda0"] {
            let err = parse_device(bad).unwrap_err();
            assert_eq!(err, DeviceError::Invalid(bad.to_string()), "{bad}");
            assert!(err.to_string().contains("invalid device"));
        }
    }

    #[test]
    fn cuda_matches_availability() {
        match parse_device("cuda") {
            Ok(d) => assert_eq!(d, Device::Cuda(0)),
            Err(e) => {
                assert!(!Cuda::is_available());
                assert!(e.to_string().contains("CUDA is not available"), "{e}");
            }
        }
        let err = parse_device("cuda:999").unwrap_err();
        assert!(matches!(
            err,
            DeviceError::CudaUnavailable(_) | DeviceError::CudaIndexOutOfRange { .. }
        ));
    }
}

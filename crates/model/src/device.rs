//! Device selection from user-facing strings, and what this process's libtorch can use.

use std::fmt;
use std::path::{Path, PathBuf};

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

/// The device every front end uses unless told otherwise: CUDA 0 if there is one.
pub const DEFAULT_DEVICE: &str = "auto";

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

/// Whether libtorch's CUDA backend is in this process. libtorch registers CUDA from
/// static initialisers of `libtorch_cuda.so`, so the library being mapped is what makes
/// `cuda` usable at all; a binary linked without it sees no GPU even on a GPU machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaBackend {
    /// `libtorch_cuda.so` is mapped into the process (the path it was loaded from).
    Loaded(PathBuf),
    /// libtorch ships `libtorch_cuda.so` beside `libtorch_cpu.so`, but this process did not
    /// load it: the binary was linked without it, so CUDA cannot register.
    NotLinked {
        /// libtorch's library directory.
        libtorch_dir: PathBuf,
    },
    /// The libtorch in use is a CPU-only build (no `libtorch_cuda.so` beside
    /// `libtorch_cpu.so`).
    CpuOnlyBuild {
        /// libtorch's library directory.
        libtorch_dir: PathBuf,
    },
    /// The process's mappings cannot be read (not Linux): only `Cuda::is_available` tells.
    Unknown,
}

impl CudaBackend {
    /// Looks at this process's mapped libraries (`/proc/self/maps`).
    pub fn of_this_process() -> CudaBackend {
        match std::fs::read_to_string("/proc/self/maps") {
            Ok(maps) => CudaBackend::from_maps(&maps),
            Err(_) => CudaBackend::Unknown,
        }
    }

    /// Classifies a `/proc/PID/maps` listing (the path is the sixth field of a line).
    pub fn from_maps(maps: &str) -> CudaBackend {
        let mapped = |name: &str| -> Option<PathBuf> {
            maps.lines()
                .filter_map(|line| line.split_whitespace().nth(5))
                .find(|path| Path::new(path).file_name().is_some_and(|f| f == name))
                .map(PathBuf::from)
        };
        if let Some(path) = mapped("libtorch_cuda.so") {
            return CudaBackend::Loaded(path);
        }
        match mapped("libtorch_cpu.so").and_then(|p| p.parent().map(Path::to_path_buf)) {
            Some(dir) if dir.join("libtorch_cuda.so").exists() => {
                CudaBackend::NotLinked { libtorch_dir: dir }
            }
            Some(dir) => CudaBackend::CpuOnlyBuild { libtorch_dir: dir },
            None => CudaBackend::Unknown,
        }
    }
}

impl fmt::Display for CudaBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CudaBackend::Loaded(path) => write!(f, "CUDA backend linked ({})", path.display()),
            CudaBackend::NotLinked { libtorch_dir } => write!(
                f,
                "CUDA backend NOT linked although {} ships libtorch_cuda.so (this binary was built without it; rebuild)",
                libtorch_dir.display()
            ),
            CudaBackend::CpuOnlyBuild { libtorch_dir } => write!(
                f,
                "libtorch at {} is a CPU-only build (no libtorch_cuda.so)",
                libtorch_dir.display()
            ),
            CudaBackend::Unknown => f.write_str("CUDA backend state unknown on this platform"),
        }
    }
}

/// The device a device string resolved to, and why: what `shogi-zero info` and the first
/// line of a run's log print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceReport {
    /// The string as given (`auto`, `cpu`, `cuda:1`).
    pub requested: String,
    /// The device chosen.
    pub chosen: Device,
    /// libtorch's CUDA backend in this process.
    pub backend: CudaBackend,
    /// CUDA devices libtorch sees.
    pub cuda_devices: i64,
}

impl DeviceReport {
    /// Resolves `requested` as [`parse_device`] does and records the reasons.
    pub fn resolve(requested: &str) -> Result<DeviceReport, DeviceError> {
        let chosen = parse_device(requested)?;
        Ok(DeviceReport {
            requested: requested.trim().to_string(),
            chosen,
            backend: CudaBackend::of_this_process(),
            cuda_devices: if Cuda::is_available() {
                Cuda::device_count()
            } else {
                0
            },
        })
    }

    /// `auto` chose the CPU: worth a warning, since a config meant for a GPU then runs
    /// (slowly) on the CPU.
    pub fn fell_back_to_cpu(&self) -> bool {
        self.chosen == Device::Cpu
            && matches!(parse_request(&self.requested), Ok(DeviceRequest::Auto))
    }
}

impl fmt::Display for DeviceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chosen = match self.chosen {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(i) => format!("cuda:{i}"),
            other => format!("{other:?}"),
        };
        let why = match (self.chosen, self.fell_back_to_cpu()) {
            (Device::Cpu, true) => "auto fell back to the CPU: no CUDA device",
            (Device::Cpu, false) => "the CPU was asked for",
            _ => "CUDA device found",
        };
        write!(
            f,
            "device {chosen} (requested {:?}; {why}); {} CUDA device(s) visible; {}",
            self.requested, self.cuda_devices, self.backend
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_from_maps() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path();
        std::fs::write(lib.join("libtorch_cpu.so"), b"").unwrap();
        let line = |name: &str| {
            format!(
                "7f0000000000-7f0000001000 r-xp 00000000 fd:01 42   {}\n",
                lib.join(name).display()
            )
        };
        let cpu_only = line("libtorch_cpu.so") + &line("libc10.so");
        assert_eq!(
            CudaBackend::from_maps(&cpu_only),
            CudaBackend::CpuOnlyBuild {
                libtorch_dir: lib.to_path_buf()
            }
        );
        std::fs::write(lib.join("libtorch_cuda.so"), b"").unwrap();
        assert_eq!(
            CudaBackend::from_maps(&cpu_only),
            CudaBackend::NotLinked {
                libtorch_dir: lib.to_path_buf()
            }
        );
        let both = cpu_only + &line("libtorch_cuda.so");
        assert_eq!(
            CudaBackend::from_maps(&both),
            CudaBackend::Loaded(lib.join("libtorch_cuda.so"))
        );
        assert_eq!(
            CudaBackend::from_maps("7f00-7f01 r-xp 0 0 0 [vdso]\n"),
            CudaBackend::Unknown
        );
    }

    #[test]
    fn report_says_why() {
        let cpu = DeviceReport::resolve("cpu").unwrap();
        assert_eq!(cpu.chosen, Device::Cpu);
        assert!(!cpu.fell_back_to_cpu());
        assert!(cpu.to_string().contains("the CPU was asked for"), "{cpu}");
        let auto = DeviceReport::resolve("auto").unwrap();
        assert_eq!(auto.fell_back_to_cpu(), !Cuda::is_available());
        assert!(DeviceReport::resolve("tpu").is_err());
    }

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

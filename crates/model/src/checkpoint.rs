//! Checkpoints: a directory holding `weights.safetensors` and `manifest.json`.
//!
//! Both files are written to a temporary name, fsynced and renamed into place, weights
//! first, so a reader that finds a manifest also finds the complete weights it describes
//! (the manifest carries their sha256).

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use shogi_features::FeatureSet;
use tch::{Device, Kind, Tensor, nn};

use crate::net::{Model, ModelConfig};

/// Version of the checkpoint layout (manifest schema + weight naming).
pub const FORMAT_VERSION: u32 = 1;
/// Weights file name inside a checkpoint directory.
pub const WEIGHTS_FILE: &str = "weights.safetensors";
/// Manifest file name inside a checkpoint directory (the run-directory contract's: its
/// presence marks a complete checkpoint).
pub const MANIFEST_FILE: &str = shogi_rundir::MANIFEST_FILE;

/// What the caller knows about the weights being saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// The network architecture.
    pub architecture: ModelConfig,
    /// Game variant, e.g. `"shogi"` or `"minishogi"`.
    pub variant: String,
    /// Version of the input-plane encoding.
    pub feature_version: u32,
    /// Which input planes the network reads (absent in manifests written before there was
    /// a choice: those networks read [`FeatureSet::Pieces`]).
    #[serde(default)]
    pub features: FeatureSet,
    /// Version of the move <-> policy-index mapping.
    pub policy_version: u32,
    /// Optimiser steps taken so far.
    pub training_step: u64,
    /// Training samples consumed so far.
    pub samples_seen: u64,
    /// Name of the checkpoint this one was trained from, if any.
    pub parent: Option<String>,
    /// How the run that wrote this network measures its networks (its self-play root
    /// and `[play]` options, `shogi_run::play_root`), so that a copy taken out of its
    /// run plays as the run measured it: the USI engine's `RunSearch` reads it when the
    /// network has no run. Absent for networks of no run and in older manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub play: Option<shogi_mcts::RootSettings>,
    /// Seconds the run that wrote this network had run when it wrote it, its
    /// invocations' time summed ([`shogi_rundir::RunClock`]): the machine time the
    /// network took, whatever the pauses between invocations. Absent for networks of no
    /// run and in older manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_seconds: Option<f64>,
}

/// The manifest as stored in `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`] at save time.
    pub format_version: u32,
    /// Checkpoint name (the directory's file name).
    pub name: String,
    /// Everything the caller supplied.
    #[serde(flatten)]
    pub meta: CheckpointMeta,
    /// Weights file name, relative to the checkpoint directory.
    pub weights_file: String,
    /// Lower-case hex sha256 of the weights file.
    pub weights_sha256: String,
}

/// What a loader requires of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Required architecture; `None` accepts the manifest's.
    pub architecture: Option<ModelConfig>,
    /// Required variant name.
    pub variant: String,
    /// Required feature (input encoding) version.
    pub feature_version: u32,
    /// Required input planes; `None` accepts the manifest's (the loader then encodes
    /// positions with them).
    pub features: Option<FeatureSet>,
    /// Required policy (move indexing) version.
    pub policy_version: u32,
}

/// Errors saving or loading checkpoints.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Filesystem failure.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Renaming a checkpoint directory into place failed (the message names the path).
    #[error("publishing a checkpoint: {0}")]
    Publish(#[from] std::io::Error),
    /// The manifest is not valid JSON for [`Manifest`].
    #[error("bad manifest {path}: {source}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// Unsupported manifest format version.
    #[error("checkpoint format version is {found}, expected {expected}")]
    FormatVersion {
        /// In the manifest.
        found: u32,
        /// Supported by this build.
        expected: u32,
    },
    /// The weights file does not hash to the manifest's sha256.
    #[error("sha256 mismatch for {path}: manifest says {expected}, file hashes to {actual}")]
    Sha256Mismatch {
        /// The weights file.
        path: PathBuf,
        /// From the manifest.
        expected: String,
        /// Computed.
        actual: String,
    },
    /// Wrong game variant.
    #[error("checkpoint variant is {found}, expected {expected}")]
    Variant {
        /// In the manifest.
        found: String,
        /// Required by the caller.
        expected: String,
    },
    /// Wrong feature version.
    #[error("checkpoint feature version is {found}, expected {expected}")]
    FeatureVersion {
        /// In the manifest.
        found: u32,
        /// Required by the caller.
        expected: u32,
    },
    /// Another set of input planes.
    #[error("the checkpoint's network reads the {found} input planes, expected {expected}")]
    Features {
        /// In the manifest.
        found: FeatureSet,
        /// Required by the caller.
        expected: FeatureSet,
    },
    /// Wrong policy version.
    #[error("checkpoint policy version is {found}, expected {expected}")]
    PolicyVersion {
        /// In the manifest.
        found: u32,
        /// Required by the caller.
        expected: u32,
    },
    /// Wrong architecture.
    #[error("checkpoint architecture differs from the expected one ({}) (checkpoint vs expected)", .differences.join(", "))]
    Architecture {
        /// `field: checkpoint vs expected`, one per differing field.
        differences: Vec<String>,
    },
    /// The weights file lacks a parameter of the model.
    #[error("weights {path} lack tensor {name}")]
    MissingTensor {
        /// The weights file.
        path: PathBuf,
        /// Parameter name.
        name: String,
    },
    /// The weights file has a tensor the model does not.
    #[error("weights {path} have unexpected tensor {name}")]
    UnexpectedTensor {
        /// The weights file.
        path: PathBuf,
        /// Tensor name.
        name: String,
    },
    /// A tensor's shape or dtype disagrees with the model.
    #[error("tensor {name}: file has {found}, model has {expected}")]
    TensorMismatch {
        /// Parameter name.
        name: String,
        /// `dtype[shape]` in the file.
        found: String,
        /// `dtype[shape]` in the model.
        expected: String,
    },
    /// Malformed safetensors data.
    #[error("safetensors {path}: {message}")]
    Safetensors {
        /// The weights file.
        path: PathBuf,
        /// The error text.
        message: String,
    },
    /// A weight is not a finite number: such a network is never written and never
    /// loaded (everything it would play or train on would be nonsense).
    #[error(
        "tensor {name} holds a NaN or an infinity: a network with non-finite weights is refused"
    )]
    NonFinite {
        /// The first such tensor, by name.
        name: String,
    },
    /// libtorch error.
    #[error("torch: {0}")]
    Torch(#[from] tch::TchError),
}

/// Refuses a set of weights with a tensor that is not all finite, naming the first.
fn check_finite<'a>(
    tensors: impl IntoIterator<Item = (&'a String, &'a Tensor)>,
) -> Result<(), CheckpointError> {
    for (name, t) in tensors {
        if !matches!(
            t.kind(),
            tch::Kind::Float | tch::Kind::Double | tch::Kind::Half | tch::Kind::BFloat16
        ) {
            continue;
        }
        let finite = tch::no_grad(|| t.isfinite().all());
        if !bool::try_from(&finite)? {
            return Err(CheckpointError::NonFinite { name: name.clone() });
        }
    }
    Ok(())
}

fn io(op: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + use<> {
    let path = path.to_path_buf();
    move |source| CheckpointError::Io { op, path, source }
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn dtype_of(kind: Kind) -> Result<Dtype, CheckpointError> {
    Ok(match kind {
        Kind::Float => Dtype::F32,
        Kind::Half => Dtype::F16,
        Kind::BFloat16 => Dtype::BF16,
        Kind::Double => Dtype::F64,
        Kind::Int64 => Dtype::I64,
        Kind::Int => Dtype::I32,
        other => {
            return Err(tch::TchError::Convert(format!("unsupported kind {other:?}")).into());
        }
    })
}

fn kind_of(dtype: Dtype) -> Option<Kind> {
    Some(match dtype {
        Dtype::F32 => Kind::Float,
        Dtype::F16 => Kind::Half,
        Dtype::BF16 => Kind::BFloat16,
        Dtype::F64 => Kind::Double,
        Dtype::I64 => Kind::Int64,
        Dtype::I32 => Kind::Int,
        _ => return None,
    })
}

/// Serialises every variable of `vs` to safetensors bytes (CPU copies, original dtypes),
/// tensors sorted by name.
pub(crate) fn weights_to_bytes(vs: &nn::VarStore) -> Result<Vec<u8>, CheckpointError> {
    let vars: BTreeMap<String, Tensor> = vs.variables().into_iter().collect();
    check_finite(&vars)?;
    let mut host: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::with_capacity(vars.len());
    for (name, t) in vars {
        let t = tch::no_grad(|| t.detach().to_device(Device::Cpu).contiguous());
        let dtype = dtype_of(t.kind())?;
        let shape: Vec<usize> = t.size().iter().map(|&d| d as usize).collect();
        let numel = t.numel();
        let mut data = vec![0u8; numel * t.kind().elt_size_in_bytes()];
        t.f_copy_data_u8(&mut data, numel)?;
        host.push((name, dtype, shape, data));
    }
    let views = host
        .iter()
        .map(|(name, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(|e| CheckpointError::Safetensors {
                    path: PathBuf::new(),
                    message: e.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| CheckpointError::Safetensors {
        path: PathBuf::new(),
        message: e.to_string(),
    })
}

/// Saves the variables of `vs` as a safetensors file at `path` (atomically) and returns
/// the sha256 of what was written.
pub fn save_weights(path: impl AsRef<Path>, vs: &nn::VarStore) -> Result<String, CheckpointError> {
    let bytes = weights_to_bytes(vs)?;
    let path = path.as_ref();
    shogi_rundir::write_atomic(path, &bytes).map_err(io("write", path))?;
    Ok(sha256_hex(&bytes))
}

/// Copies the tensors of a safetensors file into the variables of `vs` (converted to each
/// variable's dtype and device). Every variable must be present with the same shape, and
/// the file must hold nothing else. If `sha256` is given the file must hash to it.
pub fn load_weights(
    path: impl AsRef<Path>,
    vs: &nn::VarStore,
    sha256: Option<&str>,
) -> Result<(), CheckpointError> {
    let path = path.as_ref();
    let bytes = read_verified(path, sha256)?;
    let st = parse_safetensors(path, &bytes)?;
    let shapes: BTreeMap<String, Vec<i64>> = vs
        .variables()
        .into_iter()
        .map(|(n, t)| (n, t.size()))
        .collect();
    check_tensors(path, &st, &shapes)?;
    copy_into(&st, vs)?;
    check_finite(&vs.variables())
}

/// Reads `path` and, if `sha256` is given, checks that the bytes hash to it.
fn read_verified(path: &Path, sha256: Option<&str>) -> Result<Vec<u8>, CheckpointError> {
    let bytes = fs::read(path).map_err(io("read", path))?;
    if let Some(expected) = sha256 {
        let actual = sha256_hex(&bytes);
        if !actual.eq_ignore_ascii_case(expected) {
            return Err(CheckpointError::Sha256Mismatch {
                path: path.to_path_buf(),
                expected: expected.to_string(),
                actual,
            });
        }
    }
    Ok(bytes)
}

fn parse_safetensors<'a>(path: &Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, CheckpointError> {
    SafeTensors::deserialize(bytes).map_err(|e| CheckpointError::Safetensors {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Checks that the file holds exactly the tensors of `shapes` (name -> shape), each with
/// its shape and a supported dtype. Allocates nothing.
fn check_tensors(
    path: &Path,
    st: &SafeTensors<'_>,
    shapes: &BTreeMap<String, Vec<i64>>,
) -> Result<(), CheckpointError> {
    let mut names: Vec<&str> = st.names();
    names.sort();
    for name in names {
        if !shapes.contains_key(name) {
            return Err(CheckpointError::UnexpectedTensor {
                path: path.to_path_buf(),
                name: name.to_string(),
            });
        }
    }
    for (name, expected) in shapes {
        let view = st
            .tensor(name)
            .map_err(|_| CheckpointError::MissingTensor {
                path: path.to_path_buf(),
                name: name.clone(),
            })?;
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        if &shape != expected || kind_of(view.dtype()).is_none() {
            return Err(CheckpointError::TensorMismatch {
                name: name.clone(),
                found: format!("{:?}{:?}", view.dtype(), shape),
                expected: format!("{expected:?}"),
            });
        }
    }
    Ok(())
}

/// Copies the (checked) tensors of `st` into the variables of `vs`.
fn copy_into(st: &SafeTensors<'_>, vs: &nn::VarStore) -> Result<(), CheckpointError> {
    let vars: HashMap<String, Tensor> = vs.variables();
    let mut sorted: Vec<(&String, &Tensor)> = vars.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    for (name, var) in sorted {
        let view = st.tensor(name).map_err(|e| CheckpointError::Safetensors {
            path: PathBuf::new(),
            message: e.to_string(),
        })?;
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        let kind = kind_of(view.dtype()).unwrap_or(Kind::Float);
        let src = Tensor::f_from_data_size(view.data(), &shape, kind)?;
        let mut dst = var.shallow_clone();
        tch::no_grad(|| dst.f_copy_(&src))?;
    }
    Ok(())
}

/// Saves a checkpoint into directory `dir` (created if needed): weights first, then the
/// manifest, each via temp file + rename. Returns the manifest written. The checkpoint
/// name is the directory's file name.
pub fn save_checkpoint(
    dir: impl AsRef<Path>,
    vs: &nn::VarStore,
    meta: &CheckpointMeta,
) -> Result<Manifest, CheckpointError> {
    let dir = dir.as_ref();
    let name = dir
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    save_checkpoint_named(dir, name, vs, meta)
}

/// Publishes a whole checkpoint directory at `dir` at once: it is saved under the
/// run directory's temporary name ([`shogi_rundir::publish`]), `extra` adds files beside
/// the weights (the optimiser's state), and one rename puts it in place, replacing a
/// checkpoint of the same name. A reader (the gate, self-play, another machine) sees
/// the complete checkpoint or none; a killed writer leaves only a temporary. The
/// manifest names the checkpoint after `dir`.
pub fn publish_checkpoint(
    dir: &Path,
    vs: &nn::VarStore,
    meta: &CheckpointMeta,
    extra: impl FnOnce(&Path) -> Result<(), CheckpointError>,
) -> Result<Manifest, CheckpointError> {
    let name = dir
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    shogi_rundir::publish(dir, |tmp| {
        let manifest = save_checkpoint_named(tmp, name, vs, meta)?;
        extra(tmp)?;
        Ok(manifest)
    })
}

fn save_checkpoint_named(
    dir: &Path,
    name: String,
    vs: &nn::VarStore,
    meta: &CheckpointMeta,
) -> Result<Manifest, CheckpointError> {
    fs::create_dir_all(dir).map_err(io("create directory", dir))?;
    let sha = save_weights(dir.join(WEIGHTS_FILE), vs)?;
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        name,
        meta: meta.clone(),
        weights_file: WEIGHTS_FILE.to_string(),
        weights_sha256: sha,
    };
    let mut json = serde_json::to_vec_pretty(&manifest).map_err(|e| CheckpointError::Manifest {
        path: dir.join(MANIFEST_FILE),
        source: e,
    })?;
    json.push(b'\n');
    let path = dir.join(MANIFEST_FILE);
    shogi_rundir::write_atomic(&path, &json).map_err(io("write", &path))?;
    Ok(manifest)
}

/// Reads and parses `dir/manifest.json` (no verification beyond the format version).
pub fn read_manifest(dir: impl AsRef<Path>) -> Result<Manifest, CheckpointError> {
    let path = dir.as_ref().join(MANIFEST_FILE);
    let bytes = fs::read(&path).map_err(io("read", &path))?;
    let manifest: Manifest = serde_json::from_slice(&bytes)
        .map_err(|e| CheckpointError::Manifest { path, source: e })?;
    if manifest.format_version != FORMAT_VERSION {
        return Err(CheckpointError::FormatVersion {
            found: manifest.format_version,
            expected: FORMAT_VERSION,
        });
    }
    Ok(manifest)
}

impl Manifest {
    /// Checks variant, feature/policy versions and (if required) architecture.
    pub fn check(&self, expected: &Expected) -> Result<(), CheckpointError> {
        let m = &self.meta;
        if m.variant != expected.variant {
            return Err(CheckpointError::Variant {
                found: m.variant.clone(),
                expected: expected.variant.clone(),
            });
        }
        if m.feature_version != expected.feature_version {
            return Err(CheckpointError::FeatureVersion {
                found: m.feature_version,
                expected: expected.feature_version,
            });
        }
        if let Some(features) = expected.features
            && m.features != features
        {
            return Err(CheckpointError::Features {
                found: m.features,
                expected: features,
            });
        }
        if m.policy_version != expected.policy_version {
            return Err(CheckpointError::PolicyVersion {
                found: m.policy_version,
                expected: expected.policy_version,
            });
        }
        if let Some(arch) = &expected.architecture {
            let differences = m.architecture.diff(arch);
            if !differences.is_empty() {
                return Err(CheckpointError::Architecture { differences });
            }
        }
        Ok(())
    }
}

/// Loads checkpoint directory `dir` onto `device`: reads the manifest, checks it against
/// `expected`, builds a [`Model`] of the manifest's architecture and fills it from the
/// weights after verifying their sha256.
pub fn load_checkpoint(
    dir: impl AsRef<Path>,
    expected: &Expected,
    device: Device,
) -> Result<(Model, Manifest), CheckpointError> {
    let dir = dir.as_ref();
    let manifest = read_manifest(dir)?;
    manifest.check(expected)?;
    if let Err(message) = manifest.meta.architecture.validate() {
        return Err(CheckpointError::Manifest {
            path: dir.join(MANIFEST_FILE),
            source: serde::de::Error::custom(message),
        });
    }
    let name = &manifest.weights_file;
    let plain_name = !name.is_empty()
        && !name.contains(['/', '\\'])
        && !name.contains("..")
        && Path::new(name)
            .file_name()
            .is_some_and(|n| n == name.as_str());
    if !plain_name {
        return Err(CheckpointError::Manifest {
            path: dir.join(MANIFEST_FILE),
            source: serde::de::Error::custom(format!(
                "weights_file {:?} must be a plain file name inside the checkpoint directory",
                manifest.weights_file
            )),
        });
    }
    // Everything about the weights is checked before the model is allocated: the hash,
    // the safetensors header, and every tensor's name, shape and dtype against the
    // (bounded) architecture.
    let path = dir.join(name);
    let bytes = read_verified(&path, Some(&manifest.weights_sha256))?;
    let st = parse_safetensors(&path, &bytes)?;
    check_tensors(&path, &st, &manifest.meta.architecture.parameter_shapes())?;
    let model = Model::new(&manifest.meta.architecture, device);
    copy_into(&st, &model.vs)?;
    check_finite(&model.vs.variables())?;
    Ok((model, manifest))
}

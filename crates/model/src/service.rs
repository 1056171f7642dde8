//! The one place a network becomes the batched service that many search threads share:
//! checkpoint -> [`Inference`] -> [`NetBatchModel`] -> [`BatchService`] (a thread that
//! merges the threads' requests into batches) -> one [`BatchEvaluator`] per caller.
//! Self-play in a run, `shogi-zero selfplay` and the arena's checkpoint players all
//! start their network here.

use std::path::{Path, PathBuf};

use shogi_features::NetLayout;

use shogi_mcts::batch::{BatchConfig, BatchEvaluator, BatchService, BatchStats, EvalOutput};
use shogi_registry::NetGame;
use tch::Device;

use crate::checkpoint::{CheckpointError, Expected, Manifest};
use crate::evaluator::{NetBatchModel, NetEvaluatorError, NetInput, encode_input};
use crate::inference::{Inference, InferenceOptions};

impl Expected {
    /// What a network for `layout` must be: its variant and input planes, the feature
    /// and policy versions the layout states (each game's own), any architecture (the
    /// manifest's is used).
    pub fn for_layout(layout: &NetLayout) -> Expected {
        Expected {
            architecture: None,
            variant: layout.variant.to_string(),
            feature_version: layout.feature_version,
            features: Some(layout.features),
            policy_version: layout.policy_version,
        }
    }

    /// The same, accepting any input planes (the caller then reads the manifest's).
    pub fn any_features(self) -> Expected {
        Expected {
            features: None,
            ..self
        }
    }
}

/// The layout of the network in a loaded checkpoint: `layout`'s game, the input planes
/// the manifest names.
pub fn checkpoint_layout(
    layout: &NetLayout,
    manifest: &Manifest,
) -> Result<NetLayout, NetEvaluatorError> {
    shogi_registry::relayout(layout, manifest.meta.features).map_err(|detail| {
        NetEvaluatorError::Shape {
            variant: layout.variant,
            detail,
        }
    })
}

/// Why a checkpoint cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum NetServiceError {
    /// The checkpoint cannot be loaded (missing, damaged, another variant or version).
    #[error("loading checkpoint {}: {source}", path.display())]
    Checkpoint {
        /// The checkpoint directory.
        path: PathBuf,
        /// Why.
        source: CheckpointError,
    },
    /// The network's shape does not fit the game.
    #[error(transparent)]
    Shape(#[from] NetEvaluatorError),
    /// A replacement network reads other input planes than the one being served (the
    /// callers encode positions for the served planes).
    #[error("{}: reads {new} input planes, the network it would replace reads {served}", path.display())]
    OtherPlanes {
        /// The replacement's checkpoint.
        path: PathBuf,
        /// The served network's planes.
        served: String,
        /// The replacement's.
        new: String,
    },
    /// The service thread has stopped.
    #[error("the inference service has stopped")]
    Stopped,
}

/// A network served on its own thread to any number of searching threads.
#[derive(Debug)]
pub struct NetService {
    service: BatchService<NetInput, EvalOutput>,
    layout: NetLayout,
    /// Where and how the network runs: a replacement is loaded the same way.
    device: Device,
    options: InferenceOptions,
    // Boxed: a manifest is large beside the service handle.
    manifest: Option<Box<Manifest>>,
}

impl NetService {
    /// Loads checkpoint `dir` as a network for `layout`'s game (with whichever input
    /// planes its manifest names: positions are encoded the way it was trained) on
    /// `device` and starts serving it in batches of up to `batch.max_batch`; in the
    /// device's half precision when `half` ([`crate::half_kind`]: f16 on CUDA, bf16 on a
    /// CPU with AVX-512 BF16).
    pub fn from_checkpoint(
        dir: &Path,
        layout: NetLayout,
        device: Device,
        batch: BatchConfig,
        half: bool,
    ) -> Result<NetService, NetServiceError> {
        let options = InferenceOptions {
            half,
            ..inference_options(&batch)
        };
        let (inference, layout, manifest) = load_served(dir, &layout, device, &options)?;
        let mut service = NetService::from_inference(inference, layout, batch)?;
        service.manifest = Some(Box::new(manifest));
        Ok(service)
    }

    /// Loads checkpoint `dir` the way the served network was loaded (device, precision)
    /// and serves it from the next batch on ([`BatchService::replace_model`]): requests
    /// in flight are answered, none is refused, and the callers' evaluators go on
    /// unchanged. The loading happens on the calling thread, so the service keeps
    /// answering with the old network meanwhile. Refused, with the old network kept,
    /// when the checkpoint cannot be loaded or reads other input planes.
    pub fn replace_checkpoint(&mut self, dir: &Path) -> Result<(), NetServiceError> {
        let (inference, layout, manifest) =
            load_served(dir, &self.layout, self.device, &self.options)?;
        if layout != self.layout {
            return Err(NetServiceError::OtherPlanes {
                path: dir.to_path_buf(),
                served: self.layout.features.to_string(),
                new: layout.features.to_string(),
            });
        }
        let model = NetBatchModel::for_layout(inference, layout)?;
        self.service
            .replace_model(model)
            .map_err(|_| NetServiceError::Stopped)?;
        self.manifest = Some(Box::new(manifest));
        Ok(())
    }

    /// Serves a network already in memory (a fresh one, say), after checking its shape
    /// fits `layout`. Build its [`Inference`] with [`NetService::inference_options`].
    pub fn from_inference(
        inference: Inference,
        layout: NetLayout,
        batch: BatchConfig,
    ) -> Result<NetService, NetEvaluatorError> {
        let (device, options) = (
            inference.device(),
            InferenceOptions {
                half: inference.is_half(),
                ..inference_options(&batch)
            },
        );
        let model = NetBatchModel::for_layout(inference, layout)?;
        Ok(NetService {
            service: BatchService::start(batch, model),
            layout,
            device,
            options,
            manifest: None,
        })
    }

    /// The inference settings that go with `batch` (its largest batch).
    pub fn inference_options(batch: &BatchConfig) -> InferenceOptions {
        inference_options(batch)
    }

    /// The loaded checkpoint's manifest (`None` for a network served from memory).
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_deref()
    }

    /// The layout served (its input planes are the network's).
    pub fn layout(&self) -> NetLayout {
        self.layout
    }

    /// An evaluator for game `G` (the service's game): positions are encoded on the
    /// calling thread with the network's input planes, evaluated in the service's
    /// batches.
    pub fn evaluator<G: NetGame>(&self) -> BatchEvaluator<G, NetInput> {
        let layout = self.layout;
        BatchEvaluator::with_encoder(self.service.handle(), move |game: &G, moves: &[G::Move]| {
            encode_input(game, &layout, moves)
        })
    }

    /// The service's counters so far.
    pub fn stats(&self) -> BatchStats {
        self.service.stats()
    }

    /// Stops the service thread (after the requests in flight) and returns its counters.
    pub fn shutdown(self) -> BatchStats {
        self.service.shutdown()
    }
}

/// Checkpoint `dir` loaded as a network for `layout`'s game with `options` on `device`:
/// the inference, the layout it reads (the manifest's input planes) and its manifest.
fn load_served(
    dir: &Path,
    layout: &NetLayout,
    device: Device,
    options: &InferenceOptions,
) -> Result<(Inference, NetLayout, Manifest), NetServiceError> {
    let expected = Expected::for_layout(layout).any_features();
    let (inference, manifest) = Inference::from_checkpoint(dir, &expected, device, options)
        .map_err(|source| NetServiceError::Checkpoint {
            path: dir.to_path_buf(),
            source,
        })?;
    let layout = checkpoint_layout(layout, &manifest)?;
    Ok((inference, layout, manifest))
}

fn inference_options(batch: &BatchConfig) -> InferenceOptions {
    InferenceOptions {
        max_batch: batch.max_batch,
        ..InferenceOptions::default()
    }
}

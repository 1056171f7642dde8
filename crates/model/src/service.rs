//! The one place a network becomes the batched service that many search threads share:
//! checkpoint -> [`Inference`] (one copy per inference thread) -> [`NetBatchModel`] ->
//! [`BatchService`] (a thread that merges its callers' requests into batches) -> one
//! [`BatchEvaluator`] per caller.
//! Self-play in a run, `shogi-zero selfplay` and the arena's checkpoint players all
//! start their network here.

use std::path::{Path, PathBuf};

use shogi_features::NetLayout;

use shogi_mcts::batch::{BatchConfig, BatchEvaluator, BatchService, BatchStats, EvalOutput};
use shogi_registry::NetGame;
use tch::Device;

use crate::checkpoint::{CheckpointError, Expected, Manifest, load_checkpoint};
use crate::evaluator::{NetBatchModel, NetEvaluatorError, NetInput, encode_input};
use crate::inference::{Inference, InferenceOptions};
use crate::net::Model;

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
    /// A copy of the network for another inference thread could not be made.
    #[error("copying the network for another inference thread: {0}")]
    Copy(String),
}

/// On how many inference threads a network is served, to how many searching threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Serving {
    /// Inference threads, each with its own copy of the network, its own queue and its
    /// own batches: on a CPU one thread runs one batch at a time on one core, so a
    /// network that does most of the work needs as many as the cores it should use.
    pub inference_threads: usize,
    /// Threads that will search with it, each taking its evaluator with
    /// [`NetService::evaluator_for`] and waiting for each answer before asking again; 0
    /// when not known. Caller `i` is served by inference thread `i % inference_threads`,
    /// and a batch that holds a request from each of its thread's callers runs at once
    /// ([`BatchConfig::callers`]).
    pub callers: usize,
    /// The inference threads run in the background of a learner in the same process
    /// ([`crate::BACKGROUND_NICE`] nice levels below it on Linux): when both want the cores, the learner
    /// gets one first. Self-play beside its learner on a CPU sets it: the learner trains
    /// at most `learner.replay_ratio` samples a position and sleeps when it is ahead, so
    /// given the cores it needs it keeps that pace, and self-play takes the rest.
    pub background: bool,
}

impl Serving {
    /// One inference thread for callers not counted: every caller shares its batches.
    pub const ONE: Serving = Serving {
        inference_threads: 1,
        callers: 0,
        background: false,
    };

    /// How many of the callers inference thread `thread` serves (0: not known).
    fn callers_of(&self, thread: usize) -> usize {
        let threads = self.inference_threads.max(1);
        if self.callers == 0 {
            return 0;
        }
        self.callers / threads + usize::from(thread < self.callers % threads)
    }
}

/// A network served on its own threads to any number of searching threads.
#[derive(Debug)]
pub struct NetService {
    services: Vec<BatchService<NetInput, EvalOutput>>,
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
    /// `device` and starts serving it on `serving.inference_threads` threads, in batches
    /// of up to `batch.max_batch`; in the device's half precision when `half`
    /// ([`crate::half_kind`]: f16 on CUDA, bf16 on a CPU with AVX-512 BF16).
    pub fn from_checkpoint(
        dir: &Path,
        layout: NetLayout,
        device: Device,
        batch: BatchConfig,
        half: bool,
        serving: Serving,
    ) -> Result<NetService, NetServiceError> {
        let options = InferenceOptions {
            half,
            ..inference_options(&batch)
        };
        let (copies, layout, manifest) =
            load_served(dir, &layout, device, &options, serving.inference_threads)?;
        let mut service = NetService::from_copies(copies, layout, batch, serving)?;
        service.manifest = Some(Box::new(manifest));
        Ok(service)
    }

    /// Loads checkpoint `dir` the way the served network was loaded (device, precision,
    /// one copy per inference thread) and serves it from each thread's next batch on
    /// ([`BatchService::replace_model`]): requests in flight are answered, none is
    /// refused, and the callers' evaluators go on unchanged. The loading happens on the
    /// calling thread, so the service keeps answering with the old network meanwhile.
    /// Refused, with the old network kept on every thread, when the checkpoint cannot be
    /// loaded or reads other input planes.
    pub fn replace_checkpoint(&mut self, dir: &Path) -> Result<(), NetServiceError> {
        let (copies, layout, manifest) = load_served(
            dir,
            &self.layout,
            self.device,
            &self.options,
            self.services.len(),
        )?;
        if layout != self.layout {
            return Err(NetServiceError::OtherPlanes {
                path: dir.to_path_buf(),
                served: self.layout.features.to_string(),
                new: layout.features.to_string(),
            });
        }
        let models = copies
            .into_iter()
            .map(|inference| NetBatchModel::for_layout(inference, layout))
            .collect::<Result<Vec<_>, _>>()?;
        for (service, model) in self.services.iter().zip(models) {
            service
                .replace_model(model)
                .map_err(|_| NetServiceError::Stopped)?;
        }
        self.manifest = Some(Box::new(manifest));
        Ok(())
    }

    /// Serves a network already in memory (a fresh one, say) on one inference thread,
    /// after checking its shape fits `layout`. Build its [`Inference`] with
    /// [`NetService::inference_options`].
    pub fn from_inference(
        inference: Inference,
        layout: NetLayout,
        batch: BatchConfig,
    ) -> Result<NetService, NetEvaluatorError> {
        NetService::from_copies(vec![inference], layout, batch, Serving::ONE)
    }

    /// Serves a network in memory on `serving.inference_threads` threads, each with its
    /// own copy of `model`'s weights on `device`.
    pub fn from_model(
        model: Model,
        device: Device,
        options: &InferenceOptions,
        layout: NetLayout,
        batch: BatchConfig,
        serving: Serving,
    ) -> Result<NetService, NetServiceError> {
        let copies = inference_copies(model, device, options, serving.inference_threads)?;
        Ok(NetService::from_copies(copies, layout, batch, serving)?)
    }

    /// One inference thread per copy of the network.
    fn from_copies(
        copies: Vec<Inference>,
        layout: NetLayout,
        batch: BatchConfig,
        serving: Serving,
    ) -> Result<NetService, NetEvaluatorError> {
        let first = copies.first().expect("at least one copy of the network");
        let (device, options) = (
            first.device(),
            InferenceOptions {
                half: first.is_half(),
                ..inference_options(&batch)
            },
        );
        let serving = Serving {
            inference_threads: copies.len(),
            ..serving
        };
        let mut services = Vec::with_capacity(copies.len());
        for (thread, inference) in copies.into_iter().enumerate() {
            let model = NetBatchModel::for_layout(inference, layout)?;
            let batch = BatchConfig {
                callers: serving.callers_of(thread),
                ..batch.clone()
            };
            let background = serving.background;
            services.push(BatchService::start_with(batch, move || {
                if background {
                    crate::threads::lower_thread_priority(crate::threads::BACKGROUND_NICE);
                }
                model
            }));
        }
        Ok(NetService {
            services,
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

    /// Inference threads serving the network.
    pub fn inference_threads(&self) -> usize {
        self.services.len()
    }

    /// An evaluator for game `G` on the first inference thread, for callers that share
    /// one evaluator: positions are encoded on the calling thread with the network's
    /// input planes, evaluated in that thread's batches.
    pub fn evaluator<G: NetGame>(&self) -> BatchEvaluator<G, NetInput> {
        self.evaluator_for(0)
    }

    /// The evaluator of caller `caller` (of [`Serving::callers`]): served by inference
    /// thread `caller % inference_threads`.
    pub fn evaluator_for<G: NetGame>(&self, caller: usize) -> BatchEvaluator<G, NetInput> {
        let layout = self.layout;
        let service = &self.services[caller % self.services.len()];
        BatchEvaluator::with_encoder(service.handle(), move |game: &G, moves: &[G::Move]| {
            encode_input(game, &layout, moves)
        })
    }

    /// One evaluator per caller, `0..callers` ([`NetService::evaluator_for`]).
    pub fn evaluators<G: NetGame>(&self, callers: usize) -> Vec<BatchEvaluator<G, NetInput>> {
        (0..callers.max(1)).map(|i| self.evaluator_for(i)).collect()
    }

    /// The counters so far, over every inference thread (`model_time` adds up each
    /// thread's, so it may exceed the wall time).
    pub fn stats(&self) -> BatchStats {
        BatchStats::combined(self.services.iter().map(BatchService::stats))
    }

    /// Stops the inference threads (after the requests in flight) and returns their
    /// counters.
    pub fn shutdown(self) -> BatchStats {
        BatchStats::combined(self.services.into_iter().map(BatchService::shutdown))
    }
}

/// Checkpoint `dir` loaded as a network for `layout`'s game with `options` on `device`:
/// `copies` inferences of it (one per inference thread), the layout it reads (the
/// manifest's input planes) and its manifest.
fn load_served(
    dir: &Path,
    layout: &NetLayout,
    device: Device,
    options: &InferenceOptions,
    copies: usize,
) -> Result<(Vec<Inference>, NetLayout, Manifest), NetServiceError> {
    let expected = Expected::for_layout(layout).any_features();
    let (model, manifest) =
        load_checkpoint(dir, &expected, device).map_err(|source| NetServiceError::Checkpoint {
            path: dir.to_path_buf(),
            source,
        })?;
    let layout = checkpoint_layout(layout, &manifest)?;
    let inferences = inference_copies(model, device, options, copies)?;
    Ok((inferences, layout, manifest))
}

/// `copies` inferences of `model` on `device` (at least one): a checkpoint is read and
/// checked once, and every other inference thread gets a copy of its weights.
fn inference_copies(
    model: Model,
    device: Device,
    options: &InferenceOptions,
    copies: usize,
) -> Result<Vec<Inference>, NetServiceError> {
    let mut inferences = Vec::with_capacity(copies.max(1));
    for _ in 1..copies.max(1) {
        let copy = model
            .copy_to(device)
            .map_err(|e| NetServiceError::Copy(e.to_string()))?;
        inferences.push(Inference::new(copy, device, options));
    }
    inferences.insert(0, Inference::new(model, device, options));
    Ok(inferences)
}

fn inference_options(batch: &BatchConfig) -> InferenceOptions {
    InferenceOptions {
        max_batch: batch.max_batch,
        ..InferenceOptions::default()
    }
}

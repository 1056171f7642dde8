//! The optimiser step ([`NetOptimizer`], [`OptimizerSettings`]): policy cross-entropy +
//! value (WDL) cross-entropy, one step per minibatch. (A run is `shogi-run`; the
//! learner's loop that calls this is `shogi-learner`.)

use serde::{Deserialize, Serialize};
use std::path::Path;

use tch::nn;
use tch::{Device, Kind, Tensor};

use crate::net::Model;

mod average;
mod running_stats;
mod sparse_policy;
use average::{WeightAverage, take_trained};
use running_stats::RunningStats;
pub use sparse_policy::SparsePolicy;
use sparse_policy::cross_entropy;

/// File name of the optimiser state a learner saves beside a candidate's weights.
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";

/// Which optimiser.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OptimizerKind {
    /// SGD with (optionally Nesterov) momentum; weight decay is L2 added to the gradient.
    Sgd {
        /// Momentum, e.g. 0.9.
        momentum: f64,
        /// Nesterov momentum.
        nesterov: bool,
    },
    /// AdamW (decoupled weight decay).
    AdamW {
        /// Beta1, e.g. 0.9.
        beta1: f64,
        /// Beta2, e.g. 0.999.
        beta2: f64,
    },
}

/// Training hyper-parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizerSettings {
    /// The optimiser.
    pub optimizer: OptimizerKind,
    /// Learning rate.
    pub lr: f64,
    /// Weight decay (applied by the optimiser to every trainable parameter).
    pub weight_decay: f64,
    /// Clip the global gradient L2 norm to this (`None`: no clipping).
    pub grad_clip: Option<f64>,
    /// Weight of the value loss in the total.
    pub value_weight: f64,
    /// Weight of the material head's squared error in the total (used only by a network
    /// with the head, [`crate::ModelConfig::material_head`]).
    #[serde(default = "default_material_weight")]
    pub material_weight: f64,
    /// Weight of the opponent-policy head's cross-entropy in the total (used only by a
    /// network with the head, [`crate::ModelConfig::opponent_policy`]).
    #[serde(default = "default_opponent_policy_weight")]
    pub opponent_policy_weight: f64,
    /// Train in mixed precision where the device computes a half type natively: on CUDA
    /// f16 autocast of the forward pass with dynamic loss scaling; on a CPU with AVX-512
    /// BF16 the convolutions' products in bf16 (bf16 has f32's range: no loss scaling);
    /// f32 parameters, batch norms, losses and optimiser either way, and f32 on any
    /// other CPU (see [`NetOptimizer::mixed_precision`], [`NetOptimizer::conv_kind`]).
    pub mixed_precision: bool,
    /// Decay of an exponential moving average of the weights, updated after every step
    /// (0: none). With one, candidates carry the average instead of the last step's
    /// weights (a constant learning rate's noise averaged out, as KataGo exports
    /// stochastic weight averages) and the learner trains on from its own weights, which
    /// travel in the optimiser's file. About `1 / (1 - decay)` steps are averaged.
    #[serde(default)]
    pub ema_decay: f64,
}

/// SGD's momentum unless a config says otherwise (AlphaZero's).
pub const SGD_MOMENTUM: f64 = 0.9;

impl Default for OptimizerSettings {
    fn default() -> Self {
        Self {
            optimizer: OptimizerKind::Sgd {
                momentum: SGD_MOMENTUM,
                nesterov: true,
            },
            lr: 0.02,
            weight_decay: 1e-4,
            grad_clip: Some(10.0),
            value_weight: 1.0,
            material_weight: default_material_weight(),
            opponent_policy_weight: default_opponent_policy_weight(),
            mixed_precision: true,
            ema_decay: 0.0,
        }
    }
}

fn default_material_weight() -> f64 {
    1.0
}

/// KataGo's weight of its opponent-policy target.
pub const OPPONENT_POLICY_WEIGHT: f64 = 0.15;

fn default_opponent_policy_weight() -> f64 {
    OPPONENT_POLICY_WEIGHT
}

/// Losses of one step (means over the batch, before the update).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    /// Policy cross-entropy `-sum(target * log_softmax(logits))`.
    pub policy: f64,
    /// Value cross-entropy over win/draw/loss.
    pub value: f64,
    /// Mean squared error of the material head (0 without one).
    pub material: f64,
    /// Cross-entropy of the opponent-policy head against the reply's targets (0 without
    /// the head; rows without a reply add nothing).
    pub opponent_policy: f64,
    /// `policy + value_weight * value + material_weight * material +
    /// opponent_policy_weight * opponent_policy`.
    pub total: f64,
    /// Global gradient L2 norm before clipping (unscaled under mixed precision; not finite
    /// when the step was skipped for an f16 overflow, see [`NetOptimizer::skipped_steps`]).
    pub grad_norm: f64,
    /// Share of the batch where the most likely predicted outcome (argmax of the WDL
    /// logits) is the target's most likely outcome (argmax of the WDL target; the first
    /// of tied maxima).
    pub value_accuracy: f64,
    /// Mean over the batch of the entropy (nats) of the predicted policy, the softmax over
    /// all `policy_size` logits (the net is not told which moves are legal, so this counts
    /// the mass it puts on illegal indices too).
    pub policy_entropy: f64,
    /// The step was not applied because its gradient was not finite, for a reason
    /// loss scaling does not explain (in f32; under mixed precision, with the scale
    /// already at its floor). A learner stops when this keeps happening.
    pub non_finite: bool,
}

/// The network's figures on positions it was not trained on (one batch).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Policy cross-entropy.
    pub policy: f64,
    /// Value cross-entropy over win/draw/loss.
    pub value: f64,
    /// Share of positions whose most likely move is the target's most likely move.
    pub policy_top1: f64,
    /// Share of positions whose most likely outcome is the target's.
    pub value_accuracy: f64,
}

/// Graph outputs of one forward pass and loss computation.
struct Forward {
    /// The policy logits `[batch, policy_size]`.
    policy_logits: Tensor,
    policy_loss: Tensor,
    value_loss: Tensor,
    /// `None` without a material head.
    material_loss: Option<Tensor>,
    /// `None` without an opponent-policy head.
    opponent_policy_loss: Option<Tensor>,
    total: Tensor,
    /// Scalar: share of correct WDL argmax (no gradient).
    value_accuracy: Tensor,
    /// Scalar: mean predicted-policy entropy (no gradient).
    policy_entropy: Tensor,
}

impl Forward {
    fn losses(&self, grad_norm: f64) -> Losses {
        let f = |t: &Tensor| f64::try_from(t).unwrap_or(f64::NAN);
        Losses {
            policy: f(&self.policy_loss),
            value: f(&self.value_loss),
            material: self.material_loss.as_ref().map_or(0.0, f),
            opponent_policy: self.opponent_policy_loss.as_ref().map_or(0.0, f),
            total: f(&self.total),
            grad_norm,
            value_accuracy: f(&self.value_accuracy),
            policy_entropy: f(&self.policy_entropy),
            non_finite: false,
        }
    }
}

/// A model plus its optimiser.
pub struct NetOptimizer {
    /// The model being trained (save it with [`crate::save_checkpoint`]`(dir, &t.model.vs, ..)`).
    pub model: Model,
    opt: Optimizer,
    config: OptimizerSettings,
    scaler: LossScaler,
    /// The average of the weights candidates carry, where [`OptimizerSettings::ema_decay`]
    /// asks for one.
    average: Option<WeightAverage>,
    /// Put back when a step is not applied.
    running_stats: RunningStats,
}

/// Dynamic loss scaling for f16 autocast, as PyTorch's `GradScaler`: the loss is multiplied
/// by `scale` before backward and the gradients divided by it; a step whose gradients
/// overflow (non-finite norm) is skipped and halves the scale, and `GROWTH_INTERVAL`
/// good steps in a row double it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LossScaler {
    scale: f64,
    good_steps: u32,
    skipped: u64,
}

impl LossScaler {
    const INIT: f64 = 65536.0;
    const GROWTH_INTERVAL: u32 = 2000;
    /// Names of the scaler's state inside the optimiser file.
    const SCALE_KEY: &str = "amp.loss_scale";
    const GOOD_STEPS_KEY: &str = "amp.good_steps";

    /// The state saved beside the optimiser's, so a resumed mixed-precision run keeps
    /// its scale instead of re-learning it through skipped steps.
    fn state(&self) -> Vec<(String, Tensor)> {
        vec![
            (
                Self::SCALE_KEY.to_string(),
                Tensor::from_slice(&[self.scale]),
            ),
            (
                Self::GOOD_STEPS_KEY.to_string(),
                Tensor::from_slice(&[i64::from(self.good_steps)]),
            ),
        ]
    }

    /// Takes the scaler's tensors out of `tensors`; a file without them (written before
    /// they were saved) leaves the scaler as it is.
    fn restore(
        &mut self,
        tensors: &mut std::collections::HashMap<String, Tensor>,
    ) -> Result<(), String> {
        let scale = tensors.remove(Self::SCALE_KEY);
        let good = tensors.remove(Self::GOOD_STEPS_KEY);
        let (Some(scale), Some(good)) = (scale, good) else {
            return Ok(());
        };
        let scale = f64::try_from(&scale).map_err(|e| format!("{}: {e}", Self::SCALE_KEY))?;
        let good = i64::try_from(&good).map_err(|e| format!("{}: {e}", Self::GOOD_STEPS_KEY))?;
        let in_range =
            scale.is_finite() && scale >= 1.0 && (0..i64::from(u32::MAX)).contains(&good);
        if !in_range {
            return Err(format!(
                "{} = {scale} / {} = {good} out of range",
                Self::SCALE_KEY,
                Self::GOOD_STEPS_KEY
            ));
        }
        self.scale = scale;
        self.good_steps = good as u32;
        Ok(())
    }

    fn new() -> Self {
        Self {
            scale: Self::INIT,
            good_steps: 0,
            skipped: 0,
        }
    }

    /// Records a step's unscaled gradient norm; returns whether to apply the update.
    fn update(&mut self, grad_norm: f64) -> bool {
        if grad_norm.is_finite() {
            self.good_steps += 1;
            if self.good_steps >= Self::GROWTH_INTERVAL {
                self.scale *= 2.0;
                self.good_steps = 0;
            }
            true
        } else {
            self.scale = (self.scale / 2.0).max(1.0);
            self.good_steps = 0;
            self.skipped += 1;
            false
        }
    }
}

impl std::fmt::Debug for NetOptimizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetOptimizer")
            .field("model", &self.model)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl NetOptimizer {
    /// Builds the optimiser over `model`'s trainable variables.
    pub fn new(model: Model, config: OptimizerSettings) -> Result<Self, tch::TchError> {
        if !model.device().is_cuda() {
            crate::memory::keep_freed_memory();
        }
        let opt = Optimizer::new(&model.vs, config.optimizer);
        let decay = config.ema_decay;
        if !(0.0..1.0).contains(&decay) {
            return Err(tch::TchError::Convert(format!(
                "ema_decay {decay} is not in [0, 1)"
            )));
        }
        let average = if decay > 0.0 {
            Some(WeightAverage::new(&model, decay)?)
        } else {
            None
        };
        Ok(Self {
            running_stats: RunningStats::of(&model.vs),
            model,
            opt,
            config,
            scaler: LossScaler::new(),
            average,
        })
    }

    /// The optimiser's state (SGD momentum buffers, or AdamW's moments and step count,
    /// and the mixed-precision loss scale) as named CPU tensors, for
    /// [`NetOptimizer::save_optimizer`].
    pub fn optimizer_state(&self) -> Vec<(String, Tensor)> {
        let mut state = self.opt.state();
        state.extend(self.scaler.state());
        if let Some(average) = &self.average {
            state.extend(average.state(&self.model.vs));
        }
        state
    }

    /// Writes the optimiser's state as a safetensors file at `path` (not atomically: write
    /// it inside a directory that is renamed into place, as candidate exports do).
    pub fn save_optimizer(&self, path: impl AsRef<Path>) -> Result<(), tch::TchError> {
        Tensor::write_safetensors(&self.optimizer_state(), path)
    }

    /// Restores the optimiser's state from a file written by [`NetOptimizer::save_optimizer`].
    /// On any error (missing file, other optimiser kind, other architecture) the state is
    /// left as it was and the error says why.
    pub fn load_optimizer(&mut self, path: impl AsRef<Path>) -> Result<(), String> {
        let path = path.as_ref();
        let tensors = Tensor::read_safetensors(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let mut by_name: std::collections::HashMap<String, Tensor> = tensors.into_iter().collect();
        let mut scaler = self.scaler;
        scaler
            .restore(&mut by_name)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let (trained, updates) = take_trained(&mut by_name, &self.model.vs)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        self.opt
            .restore(by_name)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        self.scaler = scaler;
        // A file from a run with an average holds the learner's own weights: training
        // goes on from them (whether or not this run averages), and the average, loaded
        // as the checkpoint's weights, from its update count.
        let variables = self.model.vs.variables();
        tch::no_grad(|| {
            for (name, t) in &trained {
                let mut variable = variables[name].shallow_clone();
                variable.copy_(t);
            }
        });
        if let (Some(average), Some(updates)) = (&mut self.average, updates) {
            average.updates = updates;
        }
        Ok(())
    }

    /// The variables a candidate carries: the weight average where the settings keep one
    /// ([`OptimizerSettings::ema_decay`]), else the model's own.
    pub fn published(&self) -> &nn::VarStore {
        self.average
            .as_ref()
            .map_or(&self.model.vs, |a| &a.model.vs)
    }

    /// The hyper-parameters.
    pub fn config(&self) -> &OptimizerSettings {
        &self.config
    }

    /// Requests mixed precision for [`NetOptimizer::step`] ([`OptimizerSettings::mixed_precision`]):
    /// on CUDA the forward pass runs under autocast (f16 convolutions and matmuls, f32
    /// parameters, losses and optimiser) with dynamic loss scaling; on a CPU with native
    /// bf16 the convolutions compute in bf16 ([`NetOptimizer::conv_kind`]).
    pub fn set_mixed_precision(&mut self, on: bool) {
        self.config.mixed_precision = on;
    }

    /// Whether steps run under CUDA's f16 autocast with loss scaling: requested and the
    /// model is on CUDA.
    pub fn mixed_precision(&self) -> bool {
        self.config.mixed_precision && self.model.device().is_cuda()
    }

    /// The precision of the convolutions' products in a step: bf16 when mixed precision
    /// is requested and the model is on a CPU, where [`crate::half_kind`] says whether
    /// the CPU computes bf16 natively, else f32 (on CUDA autocast decides per
    /// operation).
    pub fn conv_kind(&self) -> Kind {
        let device = self.model.device();
        if self.config.mixed_precision && !device.is_cuda() {
            crate::half_kind(device)
        } else {
            Kind::Float
        }
    }

    /// The current loss scale when steps run in mixed precision.
    pub fn loss_scale(&self) -> Option<f64> {
        self.mixed_precision().then_some(self.scaler.scale)
    }

    /// Steps skipped because their f16 gradients overflowed (mixed precision only).
    pub fn skipped_steps(&self) -> u64 {
        self.scaler.skipped
    }

    /// Changes the learning rate (for schedules).
    pub fn set_lr(&mut self, lr: f64) {
        self.config.lr = lr;
    }

    /// Computes the losses on a batch without updating anything (eval-mode BN), with the
    /// learner's sparse policy targets ([`SparsePolicy::from_dense`] reads a dense matrix).
    pub fn evaluate_sparse(
        &self,
        inputs: &[f32],
        policy_targets: &SparsePolicy,
        value_targets: &[f32],
        batch: usize,
    ) -> Losses {
        let none = SparsePolicy::new();
        tch::no_grad(|| {
            self.forward(inputs, (policy_targets, &none), value_targets, batch, false)
                .losses(0.0)
        })
    }

    fn sparse_of(&self, dense: &[f32], batch: usize) -> SparsePolicy {
        let policy_size = self.model.config().policy_size();
        assert_eq!(dense.len(), batch * policy_size, "policy target size");
        SparsePolicy::from_dense(dense, policy_size)
    }

    /// `policy_targets`: the move's and the opponent's reply's.
    fn forward(
        &self,
        inputs: &[f32],
        (policy_targets, opponent_targets): (&SparsePolicy, &SparsePolicy),
        value_targets: &[f32],
        batch: usize,
        train: bool,
    ) -> Forward {
        let cfg = self.model.config();
        let b = batch as i64;
        assert_eq!(inputs.len(), batch * cfg.input_size(), "input buffer size");
        let width = cfg.value_target_width();
        assert_eq!(value_targets.len(), batch * width, "value target size");
        let device = self.model.device();
        let to = |s: &[f32], cols: usize| {
            Tensor::from_slice(s)
                .view([b, cols as i64])
                .to_device(device)
        };
        let xs = to(inputs, cfg.input_size());
        let targets = to(value_targets, width);
        let vt = targets.narrow(1, 0, 3);
        let heads = self.model.forward_heads_in(&xs, train, self.conv_kind());
        let (pl, vl) = (heads.policy, heads.value);
        let log_p = pl.log_softmax(1, Kind::Float);
        let policy_loss = cross_entropy(&log_p, policy_targets, batch);
        let opponent_policy_loss = heads.opponent_policy.map(|logits| {
            cross_entropy(&logits.log_softmax(1, Kind::Float), opponent_targets, batch)
        });
        let value_loss = -(&vt * vl.log_softmax(1, Kind::Float))
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let material_loss = heads.material.map(|m| {
            (m.to_kind(Kind::Float) - targets.select(1, 3))
                .square()
                .mean(Kind::Float)
        });
        let total = &policy_loss + &value_loss * self.config.value_weight;
        let total = match &material_loss {
            Some(loss) => total + loss * self.config.material_weight,
            None => total,
        };
        let total = match &opponent_policy_loss {
            Some(loss) => total + loss * self.config.opponent_policy_weight,
            None => total,
        };
        let (value_accuracy, policy_entropy) = tch::no_grad(|| {
            let hit = vl
                .argmax(1, false)
                .eq_tensor(&vt.argmax(1, false))
                .to_kind(Kind::Float)
                .mean(Kind::Float);
            let entropy = -(log_p.exp() * &log_p)
                .sum_dim_intlist(1, false, Kind::Float)
                .mean(Kind::Float);
            (hit, entropy)
        });
        Forward {
            policy_logits: pl,
            policy_loss,
            value_loss,
            material_loss,
            opponent_policy_loss,
            total,
            value_accuracy,
            policy_entropy,
        }
    }

    /// One training step (train-mode BN): forward, loss, backward, optional clipping of the
    /// global gradient norm, optimiser update. Buffers: `inputs` `[batch, input_size]`,
    /// `policy_targets` `[batch, policy_size]` probability vectors (plane-major, zeros on
    /// illegal moves), `value_targets` `[batch, 3]` win/draw/loss probabilities (`[batch,
    /// 4]` for a network with a material head: the fourth column its target in -1..1,
    /// [`crate::ModelConfig::value_target_width`]). The
    /// learner sends sparse targets instead ([`NetOptimizer::step_sparse`]); this takes the
    /// same step.
    pub fn step(
        &mut self,
        inputs: &[f32],
        policy_targets: &[f32],
        value_targets: &[f32],
        batch: usize,
    ) -> Losses {
        let sparse = self.sparse_of(policy_targets, batch);
        self.step_sparse(
            inputs,
            (&sparse, &SparsePolicy::new()),
            value_targets,
            batch,
        )
    }

    /// [`NetOptimizer::step`] with sparse policy targets (each row's entries summing to 1):
    /// the move's, and the opponent's reply's for a network with the opponent-policy head
    /// (rows without a reply, such as a game's last position, hold none).
    pub fn step_sparse(
        &mut self,
        inputs: &[f32],
        policy_targets: (&SparsePolicy, &SparsePolicy),
        value_targets: &[f32],
        batch: usize,
    ) -> Losses {
        let amp = self.mixed_precision();
        self.running_stats.save();
        // Autocast only when it is on: tch's wrapper sets libtorch's (deprecated, warning)
        // autocast state on every call, even to switch it off.
        let forward = || self.forward(inputs, policy_targets, value_targets, batch, true);
        let fwd = if amp {
            tch::autocast(true, forward)
        } else {
            forward()
        };
        self.opt.zero_grad();
        let scale = if amp { self.scaler.scale } else { 1.0 };
        if amp {
            (&fwd.total * scale).backward();
        } else {
            fwd.total.backward();
        }
        let grad_norm = tch::no_grad(|| {
            let grads: Vec<Tensor> = self
                .model
                .vs
                .trainable_variables()
                .iter()
                .map(|t| t.grad())
                .filter(|g| g.defined())
                .collect();
            if grads.is_empty() {
                return 0.0;
            }
            if scale != 1.0 {
                for g in &grads {
                    let _ = g.shallow_clone().g_mul_scalar_(1.0 / scale);
                }
            }
            let norms: Vec<Tensor> = grads.iter().map(|g| g.norm()).collect();
            let norm = f64::try_from(Tensor::stack(&norms, 0).norm()).unwrap_or(f64::NAN);
            if !norm.is_finite() {
                return norm;
            }
            if let Some(max) = self.config.grad_clip {
                let coef = max / (norm + 1e-6);
                if coef < 1.0 {
                    for mut g in grads {
                        let _ = g.g_mul_scalar_(coef);
                    }
                }
            }
            norm
        });
        // A non-finite gradient is never applied: in f32 it is a fault (counted, for the
        // learner to stop on), under mixed precision an overflow the scaler answers,
        // and a fault once the scale is already at its floor.
        let floor = amp && self.scaler.scale <= 1.0;
        let apply = if amp {
            self.scaler.update(grad_norm)
        } else {
            grad_norm.is_finite()
        };
        if apply {
            self.opt.step(self.config.lr, self.config.weight_decay);
            if let Some(average) = &mut self.average {
                average.update(&self.model.vs);
            }
        } else {
            self.running_stats.restore();
        }
        let mut losses = fwd.losses(grad_norm);
        losses.non_finite = !apply && (!amp || floor);
        losses
    }

    /// The network on held-out positions, without a step (eval-mode batch norms, no
    /// gradient): the losses as [`NetOptimizer::evaluate_sparse`] computes them, and the
    /// share of rows whose most likely move (argmax of the logits) is `best`, the
    /// target's most likely move.
    pub fn evaluate_held_out(
        &self,
        inputs: &[f32],
        policy_targets: &SparsePolicy,
        value_targets: &[f32],
        best: &[i64],
        batch: usize,
    ) -> Evaluation {
        let none = SparsePolicy::new();
        tch::no_grad(|| {
            let fwd = self.forward(inputs, (policy_targets, &none), value_targets, batch, false);
            let predicted =
                Vec::<i64>::try_from(fwd.policy_logits.argmax(1, false).to_device(Device::Cpu))
                    .unwrap_or_default();
            let hits = predicted.iter().zip(best).filter(|(p, b)| p == b).count();
            Evaluation {
                policy: f64::try_from(&fwd.policy_loss).unwrap_or(f64::NAN),
                value: f64::try_from(&fwd.value_loss).unwrap_or(f64::NAN),
                policy_top1: hits as f64 / batch.max(1) as f64,
                value_accuracy: f64::try_from(&fwd.value_accuracy).unwrap_or(f64::NAN),
            }
        })
    }

    /// Device of the model.
    pub fn device(&self) -> Device {
        self.model.device()
    }
}

/// A saved copy of `t`: detached, on the CPU, contiguous.
fn to_cpu(t: &Tensor) -> Tensor {
    t.detach().to_device(Device::Cpu).contiguous()
}

/// Takes tensor `key` out of an optimiser file's tensors, checked to have `like`'s shape
/// and kind; `missing` says why a file may lack it.
fn take_like(
    by_name: &mut std::collections::HashMap<String, Tensor>,
    key: &str,
    like: &Tensor,
    missing: &str,
) -> Result<Tensor, String> {
    let t = by_name
        .remove(key)
        .ok_or_else(|| format!("no {key} tensor ({missing})"))?;
    if t.size() != like.size() || t.kind() != like.kind() {
        return Err(format!(
            "{key} is {:?}{:?}, the variable is {:?}{:?}",
            t.kind(),
            t.size(),
            like.kind(),
            like.size()
        ));
    }
    Ok(t)
}

/// SGD (momentum, optionally Nesterov; L2 weight decay added to the gradient) and AdamW
/// (decoupled weight decay), written out so their state can be saved: tch's
/// `nn::Optimizer` offers no access to its momentum buffers. The updates are PyTorch's
/// (`torch.optim.SGD` with dampening 0, `torch.optim.AdamW` without amsgrad, eps 1e-8).
struct Optimizer {
    kind: OptimizerKind,
    /// Trainable variables, sorted by name.
    params: Vec<(String, Tensor)>,
    /// SGD: momentum buffers; AdamW: first moments. Zeros at the start (for SGD with
    /// dampening 0 that equals PyTorch's first-step `buf = grad`).
    first: Vec<Tensor>,
    /// AdamW: second moments (empty for SGD).
    second: Vec<Tensor>,
    /// Updates applied (AdamW's bias correction).
    steps: u64,
}

const STEP_KEY: &str = "optimizer.steps";

impl Optimizer {
    fn new(vs: &nn::VarStore, kind: OptimizerKind) -> Self {
        let mut params: Vec<(String, Tensor)> = vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let zeros = || -> Vec<Tensor> { params.iter().map(|(_, p)| p.zeros_like()).collect() };
        let first = zeros();
        let second = match kind {
            OptimizerKind::AdamW { .. } => zeros(),
            OptimizerKind::Sgd { .. } => Vec::new(),
        };
        Optimizer {
            kind,
            params,
            first,
            second,
            steps: 0,
        }
    }

    fn prefixes(&self) -> (&'static str, &'static str) {
        match self.kind {
            OptimizerKind::Sgd { .. } => ("sgd.momentum.", ""),
            OptimizerKind::AdamW { .. } => ("adamw.exp_avg.", "adamw.exp_avg_sq."),
        }
    }

    fn zero_grad(&mut self) {
        for (_, p) in &self.params {
            let mut g = p.grad();
            if g.defined() {
                let _ = g.detach_();
                let _ = g.zero_();
            }
        }
    }

    fn step(&mut self, lr: f64, wd: f64) {
        self.steps += 1;
        let t = self.steps as f64;
        tch::no_grad(|| {
            for (i, (_, p)) in self.params.iter().enumerate() {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let mut p = p.shallow_clone();
                match self.kind {
                    OptimizerKind::Sgd { momentum, nesterov } => {
                        let d = if wd != 0.0 { &g + &p * wd } else { g };
                        let buf = &mut self.first[i];
                        let _ = buf.g_mul_scalar_(momentum);
                        let _ = buf.g_add_(&d);
                        let d = if nesterov {
                            d + &*buf * momentum
                        } else {
                            buf.shallow_clone()
                        };
                        let _ = p.g_sub_(&(d * lr));
                    }
                    OptimizerKind::AdamW { beta1, beta2 } => {
                        let _ = p.g_mul_scalar_(1.0 - lr * wd);
                        let m = &mut self.first[i];
                        let _ = m.g_mul_scalar_(beta1);
                        let _ = m.g_add_(&(&g * (1.0 - beta1)));
                        let v = &mut self.second[i];
                        let _ = v.g_mul_scalar_(beta2);
                        let _ = v.g_add_(&(&g * &g * (1.0 - beta2)));
                        let bc1 = 1.0 - beta1.powf(t);
                        let bc2 = 1.0 - beta2.powf(t);
                        let denom = v.sqrt() / bc2.sqrt() + 1e-8;
                        let _ = p.g_sub_(&(&*m / denom * (lr / bc1)));
                    }
                }
            }
        });
    }

    fn state(&self) -> Vec<(String, Tensor)> {
        let (a, b) = self.prefixes();
        let mut out: Vec<(String, Tensor)> = self
            .params
            .iter()
            .zip(&self.first)
            .map(|((name, _), t)| (format!("{a}{name}"), to_cpu(t)))
            .collect();
        out.extend(
            self.params
                .iter()
                .zip(&self.second)
                .map(|((name, _), t)| (format!("{b}{name}"), to_cpu(t))),
        );
        out.push((
            STEP_KEY.to_string(),
            Tensor::from_slice(&[self.steps as i64]),
        ));
        out
    }

    /// Replaces the state with `tensors` (as [`Optimizer::state`] writes them) after
    /// checking that every buffer is there with its variable's shape and nothing else is.
    fn restore(
        &mut self,
        mut by_name: std::collections::HashMap<String, Tensor>,
    ) -> Result<(), String> {
        let steps = by_name
            .remove(STEP_KEY)
            .ok_or_else(|| format!("no {STEP_KEY} tensor"))?;
        if steps.numel() != 1 || steps.kind() != Kind::Int64 {
            return Err(format!("{STEP_KEY} is not one int64"));
        }
        let steps = i64::try_from(&steps).map_err(|e| e.to_string())?;
        let (a, b) = self.prefixes();
        let kind = match self.kind {
            OptimizerKind::Sgd { .. } => "sgd",
            OptimizerKind::AdamW { .. } => "adamw",
        };
        let missing = format!("saved by another optimiser than {kind}, or another architecture");
        let mut fetch = |prefix: &str, name: &str, like: &Tensor| -> Result<Tensor, String> {
            let t = take_like(&mut by_name, &format!("{prefix}{name}"), like, &missing)?;
            Ok(t.to_device(like.device()))
        };
        let mut first = Vec::with_capacity(self.params.len());
        let mut second = Vec::with_capacity(self.second.len());
        for (i, (name, p)) in self.params.iter().enumerate() {
            first.push(fetch(a, name, p)?);
            if i < self.second.len() {
                second.push(fetch(b, name, p)?);
            }
        }
        if let Some(extra) = by_name.keys().min() {
            return Err(format!(
                "unexpected tensor {extra} (saved by another optimiser than {kind}, or another architecture)"
            ));
        }
        self.first = first;
        self.second = second;
        self.steps = steps as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{LossScaler, NetOptimizer, OptimizerKind, OptimizerSettings};
    use crate::net::{Model, ModelConfig};
    use tch::nn::{self, OptimizerConfig};
    use tch::{Device, Kind, Tensor};

    const SGD: OptimizerKind = OptimizerKind::Sgd {
        momentum: 0.9,
        nesterov: true,
    };
    const ADAMW: OptimizerKind = OptimizerKind::AdamW {
        beta1: 0.9,
        beta2: 0.999,
    };

    fn tiny() -> ModelConfig {
        ModelConfig::small(1, 8, 3, (3, 3), 2)
    }

    fn trainer(kind: OptimizerKind, seed: i64) -> NetOptimizer {
        tch::manual_seed(seed);
        let config = OptimizerSettings {
            optimizer: kind,
            lr: 0.01,
            weight_decay: 1e-3,
            grad_clip: None,
            value_weight: 1.0,
            material_weight: 1.0,
            opponent_policy_weight: 0.0,
            mixed_precision: false,
            ema_decay: 0.0,
        };
        NetOptimizer::new(Model::new(&tiny(), Device::Cpu), config).unwrap()
    }

    /// A trainer over `model` that averages its weights with `decay`.
    fn averaging(kind: OptimizerKind, model: Model, decay: f64) -> NetOptimizer {
        let config = OptimizerSettings {
            ema_decay: decay,
            ..trainer(kind, 0).config
        };
        NetOptimizer::new(model, config).unwrap()
    }

    fn batch(seed: i64, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let c = tiny();
        tch::manual_seed(seed);
        let v = |t: Tensor| -> Vec<f32> { Vec::<f32>::try_from(t.flatten(0, -1)).unwrap() };
        let xs = v(Tensor::rand(
            [(n * c.input_size()) as i64],
            (Kind::Float, Device::Cpu),
        ));
        let pt = v(Tensor::rand(
            [n as i64, c.policy_size() as i64],
            (Kind::Float, Device::Cpu),
        )
        .softmax(1, Kind::Float));
        let vt = v(Tensor::rand([n as i64, 3], (Kind::Float, Device::Cpu)).softmax(1, Kind::Float));
        (xs, pt, vt)
    }

    fn max_diff(a: &nn::VarStore, b: &nn::VarStore) -> f64 {
        let bv = b.variables();
        a.variables()
            .iter()
            .map(|(name, t)| f64::try_from((t - &bv[name]).abs().max()).unwrap())
            .fold(0.0, f64::max)
    }

    /// The written-out SGD and AdamW take the same steps as libtorch's optimisers.
    #[test]
    fn optimisers_match_libtorch() {
        for kind in [SGD, ADAMW] {
            let mut ours = trainer(kind, 5);
            // The same start by copy: libtorch's generator is global, so another test
            // thread can draw from it between the two seeded constructions.
            let mut theirs = trainer(kind, 5);
            theirs.model.vs.copy(&ours.model.vs).unwrap();
            assert_eq!(max_diff(&ours.model.vs, &theirs.model.vs), 0.0);
            let mut opt = match kind {
                OptimizerKind::Sgd { momentum, nesterov } => nn::Sgd {
                    momentum,
                    dampening: 0.0,
                    wd: 1e-3,
                    nesterov,
                }
                .build(&theirs.model.vs, 0.01),
                OptimizerKind::AdamW { beta1, beta2 } => nn::AdamW {
                    beta1,
                    beta2,
                    wd: 1e-3,
                    eps: 1e-8,
                    amsgrad: false,
                }
                .build(&theirs.model.vs, 0.01),
            }
            .unwrap();
            for k in 0..6 {
                let (xs, pt, vt) = batch(100 + k, 4);
                ours.step(&xs, &pt, &vt, 4);
                opt.zero_grad();
                let sparse = theirs.sparse_of(&pt, 4);
                theirs
                    .forward(&xs, (&sparse, &super::SparsePolicy::new()), &vt, 4, true)
                    .total
                    .backward();
                opt.step();
            }
            let d = max_diff(&ours.model.vs, &theirs.model.vs);
            assert!(d < 1e-5, "{kind:?}: parameters differ by {d}");
            assert!(ours.opt.steps == 6);
        }
    }

    /// Save the optimiser after some steps, restore it into a fresh trainer with the same
    /// weights: the state is equal, and the next steps equal those of the uninterrupted
    /// trainer (a fresh optimiser's do not).
    #[test]
    fn optimiser_state_survives_save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        for kind in [SGD, ADAMW] {
            let mut a = trainer(kind, 7);
            for k in 0..4 {
                let (xs, pt, vt) = batch(k, 4);
                a.step(&xs, &pt, &vt, 4);
            }
            let path = dir.path().join("opt.safetensors");
            a.save_optimizer(&path).unwrap();
            let mut b = trainer(kind, 99);
            let mut fresh = trainer(kind, 99);
            b.model.vs.copy(&a.model.vs).unwrap();
            fresh.model.vs.copy(&a.model.vs).unwrap();
            b.load_optimizer(&path).unwrap();
            let saved = a.optimizer_state();
            let restored = b.optimizer_state();
            assert_eq!(saved.len(), restored.len());
            for ((n1, t1), (n2, t2)) in saved.iter().zip(&restored) {
                assert_eq!(n1, n2);
                assert!(t1.equal(t2), "{n1} differs after restore");
            }
            // Momentum is not zero after four steps (the check above means something).
            assert!(saved.iter().any(
                |(n, t)| n != "optimizer.steps" && f64::try_from(t.abs().max()).unwrap() > 0.0
            ));
            for k in 10..13 {
                let (xs, pt, vt) = batch(k, 4);
                a.step(&xs, &pt, &vt, 4);
                b.step(&xs, &pt, &vt, 4);
                fresh.step(&xs, &pt, &vt, 4);
            }
            assert_eq!(max_diff(&a.model.vs, &b.model.vs), 0.0, "{kind:?}");
            assert!(max_diff(&a.model.vs, &fresh.model.vs) > 1e-6, "{kind:?}");
            // Another optimiser's state, or another architecture's, is refused and the
            // state stays as it was.
            let other = if kind == SGD { ADAMW } else { SGD };
            let mut c = trainer(other, 7);
            let before = c.optimizer_state();
            let err = c.load_optimizer(&path).unwrap_err();
            assert!(err.contains("no "), "{err}");
            assert!(
                c.optimizer_state()
                    .iter()
                    .zip(&before)
                    .all(|(x, y)| x.1.equal(&y.1))
            );
            let err = trainer(kind, 7)
                .load_optimizer(dir.path().join("none"))
                .unwrap_err();
            assert!(err.contains("reading"), "{err}");
        }
    }

    /// Candidates carry the moving average: each step moves it toward the trained weights
    /// by `1 - min(decay, (1 + n) / (10 + n))`, recomputed here from copies of the
    /// weights (batch-norm statistics included) after every step.
    #[test]
    fn published_weights_are_the_moving_average_of_the_trained_ones() {
        let decay = 0.5;
        for kind in [SGD, ADAMW] {
            tch::manual_seed(11);
            let mut t = averaging(kind, Model::new(&tiny(), Device::Cpu), decay);
            let expected = t.model.copy_to(Device::Cpu).unwrap();
            assert_eq!(max_diff(t.published(), &t.model.vs), 0.0);
            for k in 0..12u32 {
                let (xs, pt, vt) = batch(200 + i64::from(k), 4);
                t.step(&xs, &pt, &vt, 4);
                let n = f64::from(k + 1);
                let d = decay.min((1.0 + n) / (10.0 + n));
                let trained = t.model.vs.variables();
                tch::no_grad(|| {
                    for (name, mut e) in expected.vs.variables() {
                        let next = &e * d + &trained[&name] * (1.0 - d);
                        e.copy_(&next);
                    }
                });
            }
            let d = max_diff(t.published(), &expected.vs);
            assert!(d < 1e-6, "{kind:?}: the average is off by {d}");
            assert!(max_diff(t.published(), &t.model.vs) > 1e-4, "{kind:?}");
        }
        // Without a decay the candidates are the trained weights; a decay of 1 or more
        // would never move and is refused.
        let plain = trainer(SGD, 1);
        assert!(std::ptr::eq(plain.published(), &plain.model.vs));
        for bad in [1.0, 1.5, -0.1] {
            let config = OptimizerSettings {
                ema_decay: bad,
                ..trainer(SGD, 0).config
            };
            let err = NetOptimizer::new(Model::new(&tiny(), Device::Cpu), config).unwrap_err();
            assert!(err.to_string().contains("ema_decay"), "{err}");
        }
    }

    /// An averaging run resumed from a candidate (whose weights are the average) gets its
    /// trained weights and the average's count back from the optimiser's file and takes
    /// the uninterrupted run's steps; a file whose trained weights do not fit is refused
    /// and changes nothing.
    #[test]
    fn an_averaging_run_resumes_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opt.safetensors");
        tch::manual_seed(13);
        let mut a = averaging(SGD, Model::new(&tiny(), Device::Cpu), 0.9);
        for k in 0..5 {
            let (xs, pt, vt) = batch(300 + k, 4);
            a.step(&xs, &pt, &vt, 4);
        }
        a.save_optimizer(&path).unwrap();
        // What a resume loads: the candidate's weights, the average.
        let mut candidate = Model::new(&tiny(), Device::Cpu);
        candidate.vs.copy(a.published()).unwrap();
        let mut b = averaging(SGD, candidate, 0.9);
        assert!(max_diff(&b.model.vs, &a.model.vs) > 1e-6);
        b.load_optimizer(&path).unwrap();
        assert_eq!(max_diff(&b.model.vs, &a.model.vs), 0.0);
        assert_eq!(max_diff(b.published(), a.published()), 0.0);
        assert_eq!(b.average.as_ref().unwrap().updates, 5);
        for k in 10..13 {
            let (xs, pt, vt) = batch(k, 4);
            a.step(&xs, &pt, &vt, 4);
            b.step(&xs, &pt, &vt, 4);
        }
        assert_eq!(max_diff(&b.model.vs, &a.model.vs), 0.0);
        assert_eq!(max_diff(b.published(), a.published()), 0.0);
        // A run that stopped averaging trains on from the trained weights too.
        let mut candidate = Model::new(&tiny(), Device::Cpu);
        candidate.vs.copy(a.published()).unwrap();
        let mut plain = NetOptimizer::new(candidate, trainer(SGD, 0).config).unwrap();
        a.save_optimizer(&path).unwrap();
        plain.load_optimizer(&path).unwrap();
        assert_eq!(max_diff(&plain.model.vs, &a.model.vs), 0.0);
        // A trained weight of another shape: refused, naming it; nothing changes.
        let mut state = a.optimizer_state();
        let (name, t) = state
            .iter_mut()
            .find(|(n, _)| n.starts_with("trained."))
            .unwrap();
        *t = Tensor::zeros([3], (Kind::Float, Device::Cpu));
        let name = name.clone();
        Tensor::write_safetensors(&state, &path).unwrap();
        let mut c = averaging(SGD, a.model.copy_to(Device::Cpu).unwrap(), 0.9);
        let before = c.model.copy_to(Device::Cpu).unwrap();
        let err = c.load_optimizer(&path).unwrap_err();
        assert!(err.contains(&name), "{err}");
        assert_eq!(max_diff(&c.model.vs, &before.vs), 0.0);
        assert_eq!(c.average.as_ref().unwrap().updates, 0);
    }

    /// A resumed mixed-precision run continues the loss scale it had learned.
    #[test]
    fn loss_scale_survives_save_and_restore() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opt.safetensors");
        let mut a = trainer(SGD, 3);
        a.scaler.scale = 1024.0;
        a.scaler.good_steps = 17;
        a.save_optimizer(&path).unwrap();
        let mut b = trainer(SGD, 3);
        assert_eq!(b.scaler.scale, LossScaler::INIT);
        b.load_optimizer(&path).unwrap();
        assert_eq!((b.scaler.scale, b.scaler.good_steps), (1024.0, 17));
    }

    #[test]
    fn loss_scaler_halves_on_overflow_and_grows_after_good_steps() {
        let mut s = LossScaler::new();
        assert!(!s.update(f64::INFINITY));
        assert!(!s.update(f64::NAN));
        assert_eq!((s.scale, s.skipped), (LossScaler::INIT / 4.0, 2));
        for _ in 0..LossScaler::GROWTH_INTERVAL - 1 {
            assert!(s.update(1.5));
        }
        assert_eq!(s.scale, LossScaler::INIT / 4.0);
        assert!(s.update(0.0));
        assert_eq!((s.scale, s.good_steps), (LossScaler::INIT / 2.0, 0));
        for _ in 0..40 {
            s.update(f64::INFINITY);
        }
        assert_eq!(s.scale, 1.0, "the scale never drops below 1");
    }
}

//! One optimisation step: policy cross-entropy + value (WDL) cross-entropy.

use serde::{Deserialize, Serialize};
use tch::nn::{self, OptimizerConfig};
use tch::{Device, Kind, Tensor};

use crate::net::Model;

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
pub struct TrainConfig {
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
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            optimizer: OptimizerKind::Sgd {
                momentum: 0.9,
                nesterov: true,
            },
            lr: 0.02,
            weight_decay: 1e-4,
            grad_clip: Some(10.0),
            value_weight: 1.0,
        }
    }
}

/// Losses of one step (means over the batch, before the update).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    /// Policy cross-entropy `-sum(target * log_softmax(logits))`.
    pub policy: f64,
    /// Value cross-entropy over win/draw/loss.
    pub value: f64,
    /// `policy + value_weight * value`.
    pub total: f64,
    /// Global gradient L2 norm before clipping (unscaled under mixed precision; not finite
    /// when the step was skipped for an f16 overflow, see [`Trainer::skipped_steps`]).
    pub grad_norm: f64,
    /// Share of the batch where the most likely predicted outcome (argmax of the WDL
    /// logits) is the target's most likely outcome (argmax of the WDL target; the first
    /// of tied maxima).
    pub value_accuracy: f64,
    /// Mean over the batch of the entropy (nats) of the predicted policy, the softmax over
    /// all `policy_size` logits (the net is not told which moves are legal, so this counts
    /// the mass it puts on illegal indices too).
    pub policy_entropy: f64,
}

/// Graph outputs of one forward pass and loss computation.
struct Forward {
    policy_loss: Tensor,
    value_loss: Tensor,
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
            total: f(&self.total),
            grad_norm,
            value_accuracy: f(&self.value_accuracy),
            policy_entropy: f(&self.policy_entropy),
        }
    }
}

/// A model plus its optimiser.
pub struct Trainer {
    /// The model being trained (save it with [`crate::save_checkpoint`]`(dir, &t.model.vs, ..)`).
    pub model: Model,
    opt: nn::Optimizer,
    config: TrainConfig,
    /// Mixed precision requested (see [`Trainer::set_mixed_precision`]).
    mixed_precision: bool,
    scaler: LossScaler,
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

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("model", &self.model)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Trainer {
    /// Builds the optimiser over `model`'s trainable variables.
    pub fn new(model: Model, config: TrainConfig) -> Result<Self, tch::TchError> {
        let opt = match config.optimizer {
            OptimizerKind::Sgd { momentum, nesterov } => nn::Sgd {
                momentum,
                dampening: 0.0,
                wd: config.weight_decay,
                nesterov,
            }
            .build(&model.vs, config.lr)?,
            OptimizerKind::AdamW { beta1, beta2 } => nn::AdamW {
                beta1,
                beta2,
                wd: config.weight_decay,
                eps: 1e-8,
                amsgrad: false,
            }
            .build(&model.vs, config.lr)?,
        };
        Ok(Self {
            model,
            opt,
            config,
            mixed_precision: false,
            scaler: LossScaler::new(),
        })
    }

    /// The hyper-parameters.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// Requests mixed precision for [`Trainer::step`]: the forward pass runs under CUDA
    /// autocast (f16 convolutions and matmuls, f32 parameters, losses and optimiser) with
    /// dynamic loss scaling. Ignored on CPU (see [`Trainer::mixed_precision`]).
    pub fn set_mixed_precision(&mut self, on: bool) {
        self.mixed_precision = on;
    }

    /// Whether steps actually run in mixed precision: requested and the model is on CUDA.
    pub fn mixed_precision(&self) -> bool {
        self.mixed_precision && self.model.device().is_cuda()
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
        self.opt.set_lr(lr);
    }

    /// Computes the losses on a batch without updating anything (eval-mode BN).
    pub fn evaluate(
        &self,
        inputs: &[f32],
        policy_targets: &[f32],
        value_targets: &[f32],
        batch: usize,
    ) -> Losses {
        tch::no_grad(|| {
            self.forward(inputs, policy_targets, value_targets, batch, false)
                .losses(0.0)
        })
    }

    fn forward(
        &self,
        inputs: &[f32],
        policy_targets: &[f32],
        value_targets: &[f32],
        batch: usize,
        train: bool,
    ) -> Forward {
        let cfg = self.model.config();
        let b = batch as i64;
        assert_eq!(inputs.len(), batch * cfg.input_size(), "input buffer size");
        assert_eq!(
            policy_targets.len(),
            batch * cfg.policy_size(),
            "policy target size"
        );
        assert_eq!(value_targets.len(), batch * 3, "value target size");
        let device = self.model.device();
        let to = |s: &[f32], cols: usize| {
            Tensor::from_slice(s)
                .view([b, cols as i64])
                .to_device(device)
        };
        let xs = to(inputs, cfg.input_size());
        let pt = to(policy_targets, cfg.policy_size());
        let vt = to(value_targets, 3);
        let (pl, vl) = self.model.forward_t(&xs, train);
        let log_p = pl.log_softmax(1, Kind::Float);
        let policy_loss = -(pt * &log_p)
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let value_loss = -(&vt * vl.log_softmax(1, Kind::Float))
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let total = &policy_loss + &value_loss * self.config.value_weight;
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
            policy_loss,
            value_loss,
            total,
            value_accuracy,
            policy_entropy,
        }
    }

    /// One training step (train-mode BN): forward, loss, backward, optional clipping of the
    /// global gradient norm, optimiser update. Buffers: `inputs` `[batch, input_size]`,
    /// `policy_targets` `[batch, policy_size]` probability vectors (plane-major, zeros on
    /// illegal moves), `value_targets` `[batch, 3]` win/draw/loss probabilities.
    pub fn step(
        &mut self,
        inputs: &[f32],
        policy_targets: &[f32],
        value_targets: &[f32],
        batch: usize,
    ) -> Losses {
        let amp = self.mixed_precision();
        let fwd = tch::autocast(amp, || {
            self.forward(inputs, policy_targets, value_targets, batch, true)
        });
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
        if !amp || self.scaler.update(grad_norm) {
            self.opt.step();
        }
        fwd.losses(grad_norm)
    }

    /// Device of the model.
    pub fn device(&self) -> Device {
        self.model.device()
    }
}

#[cfg(test)]
mod tests {
    use super::LossScaler;

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

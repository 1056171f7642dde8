//! The moving average of the weights that candidates carry
//! ([`super::OptimizerSettings::ema_decay`]), and how the learner's own weights come back
//! from the optimiser's file.

use tch::{Tensor, nn};

use super::{take_like, to_cpu};
use crate::net::Model;

/// An exponential moving average of a model's variables (weights and batch-norm
/// statistics), kept as a second model of the same architecture.
pub(super) struct WeightAverage {
    pub(super) model: Model,
    decay: f64,
    /// Updates so far: the first ones weigh the new weights more, so the average does not
    /// hold the initial network for `1 / (1 - decay)` steps.
    pub(super) updates: u64,
}

impl WeightAverage {
    /// Key of the update count in the optimiser's file.
    const UPDATES_KEY: &str = "average.updates";
    /// Prefix of the trained (not averaged) weights in the optimiser's file.
    const TRAINED_PREFIX: &str = "trained.";

    pub(super) fn new(model: &Model, decay: f64) -> Result<Self, tch::TchError> {
        Ok(Self {
            model: model.copy_to(model.device())?,
            decay,
            updates: 0,
        })
    }

    /// What the optimiser's file holds of the average: the learner's own weights
    /// `trained` (the checkpoint's weights being the average), sorted by name, and the
    /// update count; [`take_trained`] reads them back.
    pub(super) fn state(&self, trained: &nn::VarStore) -> Vec<(String, Tensor)> {
        let mut state: Vec<(String, Tensor)> = trained
            .variables()
            .into_iter()
            .map(|(name, t)| (format!("{}{name}", Self::TRAINED_PREFIX), to_cpu(&t)))
            .collect();
        state.sort_by(|a, b| a.0.cmp(&b.0));
        state.push((
            Self::UPDATES_KEY.to_string(),
            Tensor::from_slice(&[self.updates as i64]),
        ));
        state
    }

    /// The decay of update number `updates` (from 1): `min(decay, (1 + n) / (10 + n))`,
    /// TensorFlow's warm-up of `ExponentialMovingAverage`.
    fn decay_at(&self, updates: u64) -> f64 {
        let n = updates as f64;
        self.decay.min((1.0 + n) / (10.0 + n))
    }

    pub(super) fn update(&mut self, trained: &nn::VarStore) {
        self.updates += 1;
        let weight_of_new = 1.0 - self.decay_at(self.updates);
        let trained = trained.variables();
        tch::no_grad(|| {
            for (name, mut average) in self.model.vs.variables() {
                let Some(new) = trained.get(&name) else {
                    continue;
                };
                if average.is_floating_point() {
                    let _ = average.lerp_(new, weight_of_new);
                } else {
                    average.copy_(new);
                }
            }
        });
    }
}

/// Takes the trained weights and the average's update count (written where a run averages
/// its weights) out of an optimiser file's tensors, checked against `vs`'s variables:
/// none, or every variable with its shape and kind.
#[allow(clippy::type_complexity)]
pub(super) fn take_trained(
    by_name: &mut std::collections::HashMap<String, Tensor>,
    vs: &nn::VarStore,
) -> Result<(Vec<(String, Tensor)>, Option<u64>), String> {
    let updates = match by_name.remove(WeightAverage::UPDATES_KEY) {
        None => None,
        Some(t) => {
            let n = i64::try_from(&t)
                .ok()
                .filter(|&n| t.numel() == 1 && n >= 0)
                .ok_or_else(|| format!("{} is not one count", WeightAverage::UPDATES_KEY))?;
            Some(n as u64)
        }
    };
    let is_trained = |k: &String| k.starts_with(WeightAverage::TRAINED_PREFIX);
    if !by_name.keys().any(is_trained) {
        return Ok((Vec::new(), updates));
    }
    let mut trained = Vec::new();
    for (name, like) in vs.variables() {
        let key = format!("{}{name}", WeightAverage::TRAINED_PREFIX);
        let t = take_like(by_name, &key, &like, "another architecture")?;
        trained.push((name, t));
    }
    if let Some(extra) = by_name.keys().find(|k| is_trained(k)) {
        return Err(format!("{extra}: no such variable"));
    }
    Ok((trained, updates))
}

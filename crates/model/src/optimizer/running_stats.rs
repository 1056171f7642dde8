//! The batch norms' running statistics of a step that is not applied. A train-mode
//! forward pass updates them before the gradient is known, so a step skipped for a
//! non-finite gradient (a NaN input, an f16 overflow) would otherwise leave its
//! statistics behind, NaN included, in every later network.

use tch::{Tensor, nn};

/// The variables of a model that take no gradient (the batch norms' running means and
/// variances), and a copy of them from before the step in progress.
pub(super) struct RunningStats {
    live: Vec<Tensor>,
    saved: Vec<Tensor>,
}

impl RunningStats {
    pub(super) fn of(vs: &nn::VarStore) -> Self {
        let mut named: Vec<(String, Tensor)> = vs
            .variables()
            .into_iter()
            .filter(|(_, t)| !t.requires_grad())
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let live: Vec<Tensor> = named.into_iter().map(|(_, t)| t).collect();
        let saved = tch::no_grad(|| live.iter().map(Tensor::copy).collect());
        Self { live, saved }
    }

    /// Keeps the statistics as they are now (before a step's forward pass).
    pub(super) fn save(&mut self) {
        tch::no_grad(|| {
            for (saved, live) in self.saved.iter_mut().zip(&self.live) {
                saved.copy_(live);
            }
        });
    }

    /// Puts back the statistics [`RunningStats::save`] kept.
    pub(super) fn restore(&mut self) {
        tch::no_grad(|| {
            for (live, saved) in self.live.iter_mut().zip(&self.saved) {
                live.copy_(saved);
            }
        });
    }
}

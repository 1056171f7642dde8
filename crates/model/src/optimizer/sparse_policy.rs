//! A batch's policy targets as sparse entries, and the cross-entropy of logits against
//! them (the policy loss and the opponent-policy head's).

use tch::{Kind, Tensor};

/// A batch's policy targets, stored sparsely: a shogi target has about as many non-zero
/// entries as legal moves (tens) out of 11,259 policy indices, so the learner sends these
/// instead of a dense `[batch, policy_size]` matrix (184 MB at batch 4,096) and the loss
/// gathers the log-probabilities at them on the device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparsePolicy {
    /// Batch row of each entry.
    rows: Vec<i64>,
    /// Policy index of each entry.
    indices: Vec<i64>,
    /// Target probability of each entry.
    probs: Vec<f32>,
}

impl SparsePolicy {
    /// An empty set of targets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends row `row`'s target entries `(policy index, probability)`.
    pub fn push_row(&mut self, row: usize, entries: &[(u32, f32)]) {
        for &(index, prob) in entries {
            self.rows.push(row as i64);
            self.indices.push(i64::from(index));
            self.probs.push(prob);
        }
    }

    /// The non-zero entries of a dense `[batch, policy_size]` matrix.
    pub fn from_dense(dense: &[f32], policy_size: usize) -> Self {
        let mut out = Self::new();
        for (row, chunk) in dense.chunks(policy_size.max(1)).enumerate() {
            for (index, &p) in chunk.iter().enumerate() {
                if p != 0.0 {
                    out.rows.push(row as i64);
                    out.indices.push(index as i64);
                    out.probs.push(p);
                }
            }
        }
        out
    }

    /// Entries stored.
    pub fn len(&self) -> usize {
        self.probs.len()
    }

    /// Whether no entry is stored.
    pub fn is_empty(&self) -> bool {
        self.probs.is_empty()
    }

    /// Flat indices `row * policy_size + index` into a `[batch * policy_size]` view.
    ///
    /// # Panics
    /// If an entry lies outside `[batch, policy_size]`.
    fn flat(&self, batch: usize, policy_size: usize) -> Vec<i64> {
        let (b, p) = (batch as i64, policy_size as i64);
        self.rows
            .iter()
            .zip(&self.indices)
            .map(|(&r, &i)| {
                assert!(
                    (0..b).contains(&r) && (0..p).contains(&i),
                    "policy target ({r}, {i}) outside the batch [{b}, {p}]"
                );
                r * p + i
            })
            .collect()
    }
}

/// `-sum_b sum_i t[b,i] log_p[b,i] / batch`, summed over `targets`' entries only (a row
/// without entries adds nothing). `log_p`: log-probabilities `[batch, policy_size]`.
pub(super) fn cross_entropy(log_p: &Tensor, targets: &SparsePolicy, batch: usize) -> Tensor {
    let (device, policy_size) = (log_p.device(), log_p.size()[1] as usize);
    let flat = Tensor::from_slice(&targets.flat(batch, policy_size)).to_device(device);
    let probs = Tensor::from_slice(&targets.probs).to_device(device);
    -(log_p.view([-1]).index_select(0, &flat) * probs).sum(Kind::Float) / batch as f64
}

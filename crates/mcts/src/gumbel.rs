//! Gumbel AlphaZero helpers (Danihelka et al., ICLR 2022), written after the paper and
//! DeepMind's mctx conventions. Pure functions so they can be checked by hand.

/// The sequence of root visit counts sequential halving asks for: entry k is the number of
/// visits (this search) the action chosen at root simulation k must already have.
/// `considered` actions (m), `simulations` budget (n). Mirrors mctx
/// `get_sequence_of_considered_visits`.
pub fn considered_visit_sequence(considered: usize, simulations: usize) -> Vec<u32> {
    if considered <= 1 {
        return (0..simulations as u32).collect();
    }
    let log2max = (considered as f64).log2().ceil() as usize;
    let mut seq = Vec::with_capacity(simulations);
    let mut visits = vec![0u32; considered];
    let mut num_considered = considered;
    while seq.len() < simulations {
        let extra = (simulations / (log2max * num_considered)).max(1);
        for _ in 0..extra {
            seq.extend_from_slice(&visits[..num_considered]);
            for v in visits.iter_mut().take(num_considered) {
                *v += 1;
            }
        }
        num_considered = (num_considered / 2).max(2);
    }
    seq.truncate(simulations);
    seq
}

/// Completed Q values: the child's Q where visited, else the mixed value estimate
/// v_mix = (v_pi + sum_b N(b) * sum_{b visited} pi(b) q(b) / sum_{b visited} pi(b)) / (1 + sum_b N(b)).
/// `q[i]` is `None` for unvisited children; all values are from the chooser's view.
pub fn completed_q(priors: &[f32], q: &[Option<f32>], visits: &[u32], v_pi: f32) -> Vec<f32> {
    let sum_n: f32 = visits.iter().map(|&n| n as f32).sum();
    let (mut sum_p, mut sum_pq) = (0.0f32, 0.0f32);
    for (p, q) in priors.iter().zip(q) {
        if let Some(q) = q {
            sum_p += p;
            sum_pq += p * q;
        }
    }
    let v_mix = if sum_p > 0.0 {
        (v_pi + sum_n * sum_pq / sum_p) / (1.0 + sum_n)
    } else {
        v_pi
    };
    q.iter().map(|q| q.unwrap_or(v_mix)).collect()
}

/// sigma(q) = (c_visit + max_b N(b)) * c_scale * q, applied to every entry of `q`
/// (optionally after min-max rescaling to [0, 1]).
pub fn sigma(q: &[f32], max_visits: u32, c_visit: f32, c_scale: f32, rescale: bool) -> Vec<f32> {
    let scale = (c_visit + max_visits as f32) * c_scale;
    if rescale {
        let lo = q.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = q.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let span = (hi - lo).max(1e-8);
        q.iter().map(|&x| scale * (x - lo) / span).collect()
    } else {
        q.iter().map(|&x| scale * x).collect()
    }
}

/// The smallest prior the formulas use: a zero prior's logit stays finite.
pub const MIN_PRIOR: f32 = 1e-30;

/// log(prior), floored so a zero prior stays finite.
#[inline]
pub fn logit(prior: f32) -> f32 {
    prior.max(MIN_PRIOR).ln()
}

/// Softmax of `x` (numerically stable).
pub fn softmax(x: &[f32]) -> Vec<f32> {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = x.iter().map(|&v| (v - m).exp()).collect();
    let s: f32 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

/// The improved policy pi' = softmax(logits + sigma(completed Q)).
pub fn improved_policy(
    priors: &[f32],
    q: &[Option<f32>],
    visits: &[u32],
    v_pi: f32,
    c_visit: f32,
    c_scale: f32,
    rescale: bool,
) -> Vec<f32> {
    let cq = completed_q(priors, q, visits, v_pi);
    let max_n = visits.iter().copied().max().unwrap_or(0);
    let s = sigma(&cq, max_n, c_visit, c_scale, rescale);
    let x: Vec<f32> = priors.iter().zip(&s).map(|(&p, &s)| logit(p) + s).collect();
    softmax(&x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_matches_mctx_shape() {
        // m = 4, n = 8: log2max = 2, extra = 1 -> [0,0,0,0], then 2 considered: extra = 2
        assert_eq!(
            considered_visit_sequence(4, 8),
            vec![0, 0, 0, 0, 1, 1, 2, 2]
        );
        assert_eq!(considered_visit_sequence(2, 2), vec![0, 0]);
        assert_eq!(considered_visit_sequence(1, 3), vec![0, 1, 2]);
    }
}

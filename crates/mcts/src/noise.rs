//! Root noise.

use rand::Rng;
use rand_distr::{Distribution, Gamma, Gumbel};

/// Mixes Dirichlet(alpha) noise into `priors`: P = (1 - weight) P + weight * eta.
/// Weight 0 leaves the priors bit-for-bit unchanged. The Dirichlet sample is drawn as
/// normalised Gamma(alpha, 1) variates; if they all underflow the sample is uniform.
/// An alpha or weight that is not a positive finite number (NaN included) adds no noise:
/// the config refuses them, this keeps any other caller from a panic or NaN priors.
pub fn apply_dirichlet<R: Rng + ?Sized>(priors: &mut [f32], alpha: f32, weight: f32, rng: &mut R) {
    let positive = |x: f32| x.is_finite() && x > 0.0;
    if !positive(weight) || priors.is_empty() || !positive(alpha) {
        return;
    }
    let eta = dirichlet(priors.len(), alpha, rng);
    for (p, e) in priors.iter_mut().zip(eta) {
        *p = (1.0 - weight) * *p + weight * e;
    }
}

/// A symmetric Dirichlet(alpha) sample of dimension `k`; uniform when alpha is not a
/// positive finite number (no Gamma(alpha) exists).
pub fn dirichlet<R: Rng + ?Sized>(k: usize, alpha: f32, rng: &mut R) -> Vec<f32> {
    let uniform = || vec![1.0 / k as f32; k];
    if !(alpha.is_finite() && alpha > 0.0) {
        return uniform();
    }
    let Ok(gamma) = Gamma::new(alpha as f64, 1.0) else {
        return uniform();
    };
    let mut x: Vec<f64> = (0..k).map(|_| gamma.sample(rng)).collect();
    let s: f64 = x.iter().sum();
    if s > 0.0 && s.is_finite() {
        x.iter_mut().for_each(|v| *v /= s);
    } else {
        x.iter_mut().for_each(|v| *v = 1.0 / k as f64);
    }
    x.into_iter().map(|v| v as f32).collect()
}

/// `k` independent Gumbel(0, 1) samples.
pub fn gumbel_samples<R: Rng + ?Sized>(k: usize, rng: &mut R) -> Vec<f32> {
    let g = Gumbel::new(0.0f64, 1.0).expect("valid");
    (0..k).map(|_| g.sample(rng) as f32).collect()
}

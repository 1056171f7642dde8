//! Root noise.

use rand::Rng;
use rand_distr::{Distribution, Gamma, Gumbel};

/// Mixes Dirichlet(alpha) noise into `priors`: P = (1 - weight) P + weight * eta.
/// Weight 0 leaves the priors bit-for-bit unchanged. The Dirichlet sample is drawn as
/// normalised Gamma(alpha, 1) variates; if they all underflow the sample is uniform.
pub fn apply_dirichlet<R: Rng + ?Sized>(priors: &mut [f32], alpha: f32, weight: f32, rng: &mut R) {
    if weight <= 0.0 || priors.is_empty() || alpha <= 0.0 {
        return;
    }
    let eta = dirichlet(priors.len(), alpha, rng);
    for (p, e) in priors.iter_mut().zip(eta) {
        *p = (1.0 - weight) * *p + weight * e;
    }
}

/// A symmetric Dirichlet(alpha) sample of dimension `k`.
pub fn dirichlet<R: Rng + ?Sized>(k: usize, alpha: f32, rng: &mut R) -> Vec<f32> {
    let gamma = Gamma::new(alpha as f64, 1.0).expect("alpha > 0");
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

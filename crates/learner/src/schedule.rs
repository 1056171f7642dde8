//! Learning-rate schedules as pure functions of the optimiser step.

/// A learning-rate schedule; [`LrSchedule::lr_at`] is a pure function of the step.
#[derive(Debug, Clone, PartialEq)]
pub enum LrSchedule {
    /// The same rate at every step.
    Constant(f64),
    /// `initial` until the first boundary, then multiplied by `factor` at each boundary
    /// passed (AlphaZero: 0.2 with factor 0.1 at three boundaries).
    Steps {
        initial: f64,
        factor: f64,
        boundaries: Vec<u64>,
    },
    /// Linear warmup from 0 to `peak` over `warmup` steps, then cosine decay to `min`
    /// at `total` steps (held at `min` afterwards).
    Cosine {
        peak: f64,
        min: f64,
        warmup: u64,
        total: u64,
    },
}

impl LrSchedule {
    /// AlphaZero's step schedule: 0.2 → 0.02 → 0.002 → 0.0002 at the given steps.
    pub fn alphazero(boundaries: [u64; 3]) -> Self {
        LrSchedule::Steps {
            initial: 0.2,
            factor: 0.1,
            boundaries: boundaries.to_vec(),
        }
    }

    /// The learning rate at optimiser step `step` (0-based).
    pub fn lr_at(&self, step: u64) -> f64 {
        match self {
            LrSchedule::Constant(lr) => *lr,
            LrSchedule::Steps {
                initial,
                factor,
                boundaries,
            } => {
                let passed = boundaries.iter().filter(|&&b| step >= b).count();
                initial * factor.powi(passed as i32)
            }
            LrSchedule::Cosine {
                peak,
                min,
                warmup,
                total,
            } => {
                if step < *warmup {
                    return peak * (step + 1) as f64 / *warmup as f64;
                }
                if step >= *total || total <= warmup {
                    return *min;
                }
                let t = (step - warmup) as f64 / (total - warmup) as f64;
                min + 0.5 * (peak - min) * (1.0 + (std::f64::consts::PI * t).cos())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn constant() {
        let s = LrSchedule::Constant(0.01);
        assert_eq!(s.lr_at(0), 0.01);
        assert_eq!(s.lr_at(1_000_000), 0.01);
    }

    #[test]
    fn alphazero_steps() {
        let s = LrSchedule::alphazero([100, 200, 300]);
        assert!(close(s.lr_at(0), 0.2));
        assert!(close(s.lr_at(99), 0.2));
        assert!(close(s.lr_at(100), 0.02));
        assert!(close(s.lr_at(199), 0.02));
        assert!(close(s.lr_at(200), 0.002));
        assert!(close(s.lr_at(300), 0.0002));
        assert!(close(s.lr_at(10_000), 0.0002));
    }

    #[test]
    fn cosine_with_warmup() {
        let s = LrSchedule::Cosine {
            peak: 1.0,
            min: 0.0,
            warmup: 10,
            total: 110,
        };
        assert!(close(s.lr_at(0), 0.1));
        assert!(close(s.lr_at(9), 1.0));
        assert!(close(s.lr_at(10), 1.0));
        assert!(close(s.lr_at(60), 0.5));
        assert!(s.lr_at(109) < 0.001);
        assert_eq!(s.lr_at(110), 0.0);
        assert_eq!(s.lr_at(5000), 0.0);
        // Monotone after warmup.
        for k in 10..110 {
            assert!(s.lr_at(k + 1) <= s.lr_at(k));
        }
    }
}

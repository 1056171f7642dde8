//! The training step can overfit a fixed tiny batch.

use shogi_model::tch::{self, Device};
use shogi_model::{Model, ModelConfig, OptimizerKind, TrainConfig, Trainer};

fn cfg() -> ModelConfig {
    ModelConfig {
        blocks: 1,
        channels: 16,
        input_planes: 4,
        board_h: 3,
        board_w: 3,
        policy_planes: 2,
        value_channels: 2,
        value_hidden: 16,
        se: true,
    }
}

/// A fixed batch with one-hot policy and value targets (so the optimum loss is 0).
fn batch(cfg: &ModelConfig, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut xs = Vec::new();
    let mut pt = vec![0.0; n * cfg.policy_size()];
    let mut vt = vec![0.0; n * 3];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for b in 0..n {
        for _ in 0..cfg.input_size() {
            // xorshift: distinct random binary planes per sample.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            xs.push(if state.is_multiple_of(3) { 1.0 } else { 0.0 });
        }
        pt[b * cfg.policy_size() + (b * 5) % cfg.policy_size()] = 1.0;
        vt[b * 3 + b % 3] = 1.0;
    }
    (xs, pt, vt)
}

fn overfit(opt: OptimizerKind, lr: f64, steps: usize) -> (f64, f64) {
    tch::manual_seed(1);
    let cfg = cfg();
    let model = Model::new(&cfg, Device::Cpu);
    let mut trainer = Trainer::new(
        model,
        TrainConfig {
            optimizer: opt,
            lr,
            weight_decay: 1e-5,
            grad_clip: Some(5.0),
            value_weight: 1.0,
        },
    )
    .unwrap();
    let n = 8;
    let (xs, pt, vt) = batch(&cfg, n);
    let first = trainer.step(&xs, &pt, &vt, n);
    assert!(first.total.is_finite() && first.grad_norm > 0.0);
    let mut last = first;
    for _ in 0..steps {
        last = trainer.step(&xs, &pt, &vt, n);
    }
    let eval = trainer.evaluate(&xs, &pt, &vt, n);
    eprintln!("{opt:?}: first {first:?}\nlast {last:?}\neval {eval:?}");
    assert!((last.total - (last.policy + last.value)).abs() < 1e-6);
    (first.total, last.total)
}

#[test]
fn adamw_overfits_tiny_batch() {
    let (first, last) = overfit(
        OptimizerKind::AdamW {
            beta1: 0.9,
            beta2: 0.999,
        },
        3e-3,
        300,
    );
    assert!(first > 2.0, "initial loss {first}");
    assert!(last < 0.05, "loss after 300 AdamW steps {last}");
}

#[test]
fn sgd_momentum_overfits_tiny_batch() {
    let (first, last) = overfit(
        OptimizerKind::Sgd {
            momentum: 0.9,
            nesterov: true,
        },
        0.05,
        300,
    );
    assert!(last < 0.05, "SGD loss {first} -> {last}");
}

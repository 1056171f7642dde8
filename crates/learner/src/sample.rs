//! Training samples from self-play records: input planes, a dense policy target and a
//! win/draw/loss value target, with optional left-right mirror augmentation.

use rand::Rng;
use shogi_game::{Color, Game};
use shogi_rules::{Move, Variant};
use shogi_selfplay::convert::{ReplayError, replay_each, variant_from_name};
use shogi_selfplay::record::GameRecord;

/// One training position.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The variant (fixes the plane and policy sizes).
    pub variant: Variant,
    /// Input planes, `input_planes * n * n` floats.
    pub planes: Vec<f32>,
    /// Dense policy target over `policy_size`, sums to 1.
    pub policy: Vec<f32>,
    /// Win/draw/loss target from the side to move's view.
    pub wdl: [f32; 3],
}

/// How samples are built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleConfig {
    /// Blend of the search's root value into the value target, 0..=1.
    pub q_blend: f32,
}

impl Default for SampleConfig {
    fn default() -> Self {
        Self { q_blend: 0.0 }
    }
}

/// The WDL of an outcome for `side`: (win, draw, loss).
fn outcome_wdl(winner: Option<Color>, side: Color) -> [f32; 3] {
    match winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}

/// Replays `record` and returns one sample per fully searched move with a non-empty
/// searched list.
pub fn samples_from_record(
    record: &GameRecord,
    config: &SampleConfig,
) -> Result<Vec<Sample>, ReplayError> {
    let variant = variant_from_name(&record.variant)
        .ok_or_else(|| ReplayError::Variant(record.variant.clone()))?;
    let n_in = shogi_features::input_planes(variant) * shogi_features::board_size(variant).pow(2);
    let n_pol = shogi_features::policy_size(variant);
    let q = config.q_blend.clamp(0.0, 1.0);
    let mut out = Vec::new();
    replay_each(record, |game, m| {
        if !m.full_search || m.searched.is_empty() {
            return;
        }
        let pos = game.position();
        let side = pos.side_to_move();
        let mut planes = vec![0.0f32; n_in];
        shogi_features::encode(pos, game.repetitions(), game.ply(), &mut planes);
        let mut policy = vec![0.0f32; n_pol];
        let mut sum = 0.0f32;
        for s in &m.searched {
            let Some(mv) = u16::try_from(s.mv).ok().and_then(Move::from_u16) else {
                continue;
            };
            if let Some(idx) = shogi_features::policy_index(variant, side, mv) {
                let t = s.target.max(0.0);
                policy[idx] += t;
                sum += t;
            }
        }
        if sum > 0.0 {
            policy.iter_mut().for_each(|p| *p /= sum);
            let o = outcome_wdl(record.outcome.winner, side);
            let s = m.root_value.clamp(0.0, 1.0);
            let qv = [s, 0.0, 1.0 - s];
            let wdl = [
                (1.0 - q) * o[0] + q * qv[0],
                (1.0 - q) * o[1] + q * qv[1],
                (1.0 - q) * o[2] + q * qv[2],
            ];
            out.push(Sample {
                variant,
                planes,
                policy,
                wdl,
            });
        }
    })?;
    Ok(out)
}

impl Sample {
    /// The left-right mirrored sample (files 1 <-> n): planes mirrored column-wise,
    /// policy through [`shogi_features::mirror_policy_index`].
    pub fn mirrored(&self) -> Sample {
        let n = shogi_features::board_size(self.variant);
        let area = n * n;
        let mut planes = vec![0.0f32; self.planes.len()];
        for (p, chunk) in self.planes.chunks(area).enumerate() {
            for row in 0..n {
                for col in 0..n {
                    planes[p * area + row * n + (n - 1 - col)] = chunk[row * n + col];
                }
            }
        }
        let mut policy = vec![0.0f32; self.policy.len()];
        for (i, &v) in self.policy.iter().enumerate() {
            if v != 0.0 {
                policy[shogi_features::mirror_policy_index(self.variant, i)] = v;
            }
        }
        Sample {
            variant: self.variant,
            planes,
            policy,
            wdl: self.wdl,
        }
    }

    /// Mirrors with probability 0.5.
    pub fn augmented(&self, rng: &mut impl Rng) -> Sample {
        if rng.random_bool(0.5) {
            self.mirrored()
        } else {
            self.clone()
        }
    }
}

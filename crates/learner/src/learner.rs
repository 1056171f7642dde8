//! The training loop: minibatches from a [`ReplayWindow`], [`NetOptimizer`] steps, TensorBoard
//! scalars and candidate checkpoints.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shogi_features::NetLayout;
use shogi_model::{
    CheckpointMeta, Evaluation, Losses, Model, ModelConfig, NetOptimizer, OptimizerSettings,
    SparsePolicy,
};
use tensorboard_rs::summary_writer::SummaryWriter;

use crate::sample::Sample;
use crate::schedule::LrSchedule;
use crate::window::{ReplayAccount, ReplayWindow};

/// Steps in a row whose gradient is not finite that stop the learner (KataGo's rule).
pub const NON_FINITE_IN_A_ROW: usize = 8;
/// Of the last [`NON_FINITE_WINDOW`] steps, this many non-finite stop the learner.
pub const NON_FINITE_OF_WINDOW: usize = 25;
/// The steps [`NON_FINITE_OF_WINDOW`] counts over.
pub const NON_FINITE_WINDOW: usize = 100;

/// The learner's record of steps skipped for a non-finite gradient: a few are survived
/// (the step is not applied), many stop the learner before it trains on nonsense.
#[derive(Debug, Default)]
struct NonFiniteGuard {
    recent: std::collections::VecDeque<bool>,
    in_a_row: usize,
    skipped: u64,
}

impl NonFiniteGuard {
    /// Records a step; an error once too many were not finite.
    fn record(&mut self, non_finite: bool, step: u64) -> anyhow::Result<()> {
        if self.recent.len() == NON_FINITE_WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(non_finite);
        if !non_finite {
            self.in_a_row = 0;
            return Ok(());
        }
        self.skipped += 1;
        self.in_a_row += 1;
        let of_window = self.recent.iter().filter(|&&bad| bad).count();
        tracing::warn!(
            "learner: step {} skipped: its gradient is not finite ({} in a row, {of_window} of the last {})",
            step + 1,
            self.in_a_row,
            self.recent.len()
        );
        anyhow::ensure!(
            self.in_a_row < NON_FINITE_IN_A_ROW && of_window < NON_FINITE_OF_WINDOW,
            "the gradient was not finite in {} steps in a row and {of_window} of the last {} \
             (the replay data or the network holds a NaN or an infinity): the learner stops \
             at step {} rather than train on it",
            self.in_a_row,
            self.recent.len(),
            step
        );
        Ok(())
    }
}

/// The file in a candidate that holds the learner's [`ReplayAccount`] when it was
/// exported.
pub const REPLAY_ACCOUNT_FILE: &str = "replay-account.json";

/// The [`ReplayAccount`] saved in checkpoint `dir`: `None` where there is none (the
/// initial network, a candidate exported before accounts were saved), an error naming
/// the file where it cannot be read.
pub fn read_replay_account(dir: &Path) -> anyhow::Result<Option<ReplayAccount>> {
    let path = dir.join(REPLAY_ACCOUNT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow::anyhow!("reading {}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("{} is not a replay account: {e}", path.display()))
}

/// Learner settings.
#[derive(Debug, Clone)]
pub struct LearnerConfig {
    /// The network's game and input planes, written into candidates.
    pub layout: NetLayout,
    /// Minibatch size.
    pub batch: usize,
    /// Learning-rate schedule.
    pub schedule: LrSchedule,
    /// Export a candidate every this many steps (0: never).
    pub export_every: u64,
    /// Run directory (TensorBoard logs in `<run>/tensorboard`, candidates in
    /// `<run>/candidates`).
    pub run_dir: PathBuf,
    /// Parent checkpoint name, if training continues one.
    pub parent: Option<String>,
    /// RNG seed for sampling.
    pub seed: u64,
    /// Steps already taken by the network being trained (a resumed run continues the
    /// step count of the checkpoint it loaded, so names and schedules carry on).
    pub start_step: u64,
    /// Samples already consumed by the network being trained.
    pub start_samples: u64,
    /// The run's play search, written into every candidate's manifest
    /// ([`CheckpointMeta::play`]); `None` outside a run.
    pub play: Option<shogi_mcts::RootSettings>,
    /// The run's clock, read into every candidate's manifest
    /// ([`CheckpointMeta::run_seconds`]); `None` outside a run.
    pub clock: Option<shogi_rundir::RunClock>,
}

impl LearnerConfig {
    /// Minibatch size unless a config says otherwise.
    pub const DEFAULT_BATCH: usize = 256;
    /// Steps between candidate exports unless a config says otherwise.
    pub const DEFAULT_EXPORT_EVERY: u64 = 200;
}

/// What a run of steps did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Steps taken in total.
    pub steps: u64,
    /// Samples consumed in total.
    pub samples_seen: u64,
    /// Last step's losses.
    pub last: Option<Losses>,
    /// Samples per second of wall time over the run.
    pub samples_per_sec: f64,
    /// Share of wall time outside forward/backward/update (sampling, encoding, copies,
    /// logging, export).
    pub outside_share: f64,
    /// Candidates written.
    pub candidates: Vec<PathBuf>,
}

/// The learner's loop: owns the network's optimiser and the logging.
pub struct Learner {
    /// The network and its optimiser (one step per minibatch).
    pub optimizer: NetOptimizer,
    config: LearnerConfig,
    architecture: ModelConfig,
    writer: SummaryWriter,
    rng: ChaCha8Rng,
    step: u64,
    samples_seen: u64,
    /// The window's account as of the last [`Learner::run`], exported with each candidate.
    replay_account: Option<ReplayAccount>,
    non_finite: NonFiniteGuard,
}

impl std::fmt::Debug for Learner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learner")
            .field("step", &self.step)
            .field("samples_seen", &self.samples_seen)
            .finish()
    }
}

/// A minibatch as the optimiser takes it: the dense input planes, the policy targets
/// sparse (tens of entries a row, not 11,259 floats), the opponent's replies likewise
/// (empty without that head) and the value targets (the win/draw/loss row, then the
/// material target where the network has that head).
struct BatchTargets {
    inputs: Vec<f32>,
    policy: SparsePolicy,
    opponent_policy: SparsePolicy,
    value: Vec<f32>,
}

impl BatchTargets {
    fn of(samples: &[Sample], heads: &ModelConfig) -> BatchTargets {
        let n_in = samples.first().map_or(0, |s| s.layout.input_size());
        let mut inputs = vec![0.0f32; samples.len() * n_in];
        let mut policy = SparsePolicy::new();
        let mut opponent_policy = SparsePolicy::new();
        let mut value = Vec::with_capacity(samples.len() * 4);
        for (k, s) in samples.iter().enumerate() {
            s.write_planes(&mut inputs[k * n_in..(k + 1) * n_in]);
            policy.push_row(k, &s.policy);
            if heads.opponent_policy {
                opponent_policy.push_row(k, &s.opponent_policy);
            }
            value.extend_from_slice(&s.wdl);
            if heads.material_head {
                value.push(s.material);
            }
        }
        BatchTargets {
            inputs,
            policy,
            opponent_policy,
            value,
        }
    }
}

fn entropy(p: impl Iterator<Item = f32>) -> f64 {
    p.filter(|&x| x > 0.0)
        .map(|x| -(x as f64) * (x as f64).ln())
        .sum()
}

impl Learner {
    /// A learner for `model` (fresh or loaded) with `train` hyper-parameters.
    pub fn new(
        model: Model,
        train: OptimizerSettings,
        config: LearnerConfig,
    ) -> anyhow::Result<Self> {
        let architecture = model.config().clone();
        let optimizer = NetOptimizer::new(model, train)?;
        std::fs::create_dir_all(config.run_dir.join("candidates"))?;
        let writer = SummaryWriter::new(config.run_dir.join("tensorboard"));
        let rng = ChaCha8Rng::seed_from_u64(config.seed);
        Ok(Self {
            optimizer,
            architecture,
            writer,
            rng,
            step: config.start_step,
            samples_seen: config.start_samples,
            replay_account: None,
            non_finite: NonFiniteGuard::default(),
            config,
        })
    }

    /// Steps taken so far (the step the next export is named after).
    pub fn step_count(&self) -> u64 {
        self.step
    }

    /// Runs `steps` steps on minibatches of `window`, exporting candidates as configured.
    pub fn run(&mut self, window: &ReplayWindow, steps: u64) -> anyhow::Result<Summary> {
        anyhow::ensure!(!window.is_empty(), "the replay window holds no positions");
        self.replay_account = Some(window.account());
        let start = Instant::now();
        let mut inside = Duration::ZERO;
        let mut summary = Summary::default();
        let b = self.config.batch;
        for _ in 0..steps {
            let lr = self.config.schedule.lr_at(self.step);
            self.optimizer.set_lr(lr);
            let batch = window.sample_batch(b, &mut self.rng);
            let heads = self.optimizer.model.config();
            let (material_head, opponent_head) = (heads.material_head, heads.opponent_policy);
            let tensors = BatchTargets::of(&batch, heads);
            let ent: f64 = batch
                .iter()
                .map(|s| entropy(s.policy.iter().map(|&(_, p)| p)))
                .sum();
            let t0 = Instant::now();
            let losses = self.optimizer.step_sparse(
                &tensors.inputs,
                (&tensors.policy, &tensors.opponent_policy),
                &tensors.value,
                b,
            );
            inside += t0.elapsed();
            // Not applied: no step taken, nothing exported.
            self.non_finite.record(losses.non_finite, self.step)?;
            if losses.non_finite {
                continue;
            }
            self.step += 1;
            self.samples_seen += b as u64;
            let st = self.step as usize;
            let elapsed = start.elapsed().as_secs_f64().max(1e-9);
            let w = &mut self.writer;
            w.add_scalar("loss/policy", losses.policy as f32, st);
            w.add_scalar("loss/value", losses.value as f32, st);
            w.add_scalar("loss/total", losses.total as f32, st);
            if material_head {
                w.add_scalar("loss/material", losses.material as f32, st);
            }
            if opponent_head {
                w.add_scalar("loss/opponent_policy", losses.opponent_policy as f32, st);
            }
            w.add_scalar("lr", lr as f32, st);
            w.add_scalar("policy_target_entropy", (ent / b as f64) as f32, st);
            w.add_scalar("grad_norm", losses.grad_norm as f32, st);
            w.add_scalar("value_accuracy", losses.value_accuracy as f32, st);
            w.add_scalar("policy_entropy", losses.policy_entropy as f32, st);
            w.add_scalar(
                "samples_per_sec",
                (summary.samples_seen as f64 + b as f64) as f32 / elapsed as f32,
                st,
            );
            summary.samples_seen += b as u64;
            summary.last = Some(losses);
            if self.config.export_every > 0 && self.step.is_multiple_of(self.config.export_every) {
                summary.candidates.push(self.export()?);
            }
        }
        self.writer.flush();
        let wall = start.elapsed().as_secs_f64().max(1e-9);
        summary.steps = self.step;
        summary.samples_per_sec = summary.samples_seen as f64 / wall;
        summary.outside_share = 1.0 - inside.as_secs_f64() / wall;
        Ok(summary)
    }

    /// The network on `samples` (held-out positions: no step, no mirroring), in
    /// minibatches of the learner's size: mean policy and value losses, policy top-1
    /// (the most likely move is the target's) and value accuracy, weighted by rows.
    /// Written to TensorBoard as `heldout/*` at the current step.
    pub fn evaluate(&mut self, samples: &[Sample]) -> Evaluation {
        let mut sum = Evaluation::default();
        let mut rows = 0usize;
        for chunk in samples.chunks(self.config.batch.max(1)) {
            let b = chunk.len();
            let tensors = BatchTargets::of(chunk, self.optimizer.model.config());
            let best: Vec<i64> = chunk
                .iter()
                .map(|s| {
                    s.policy
                        .iter()
                        .max_by(|a, b| a.1.total_cmp(&b.1))
                        .map_or(-1, |&(i, _)| i64::from(i))
                })
                .collect();
            let e = self.optimizer.evaluate_held_out(
                &tensors.inputs,
                &tensors.policy,
                &tensors.value,
                &best,
                b,
            );
            let w = b as f64;
            sum.policy += e.policy * w;
            sum.value += e.value * w;
            sum.policy_top1 += e.policy_top1 * w;
            sum.value_accuracy += e.value_accuracy * w;
            rows += b;
        }
        let n = rows.max(1) as f64;
        let mean = Evaluation {
            policy: sum.policy / n,
            value: sum.value / n,
            policy_top1: sum.policy_top1 / n,
            value_accuracy: sum.value_accuracy / n,
        };
        let st = self.step as usize;
        let w = &mut self.writer;
        w.add_scalar("heldout/policy_loss", mean.policy as f32, st);
        w.add_scalar("heldout/value_loss", mean.value as f32, st);
        w.add_scalar("heldout/policy_top1", mean.policy_top1 as f32, st);
        w.add_scalar("heldout/value_accuracy", mean.value_accuracy as f32, st);
        w.flush();
        mean
    }

    /// Writes a candidate `<run>/candidates/step-NNNNNNNN` and returns its directory. The
    /// checkpoint, with the optimiser's state, is published whole by one rename
    /// ([`shogi_model::publish_checkpoint`]), so readers (the gate, other machines) only
    /// ever see complete candidates; a re-export of the same step (a resumed run)
    /// replaces it.
    pub fn export(&mut self) -> anyhow::Result<PathBuf> {
        let dir = self
            .config
            .run_dir
            .join("candidates")
            .join(shogi_rundir::checkpoint_name(self.step));
        let meta = CheckpointMeta {
            architecture: self.architecture.clone(),
            variant: self.config.layout.variant.to_string(),
            feature_version: self.config.layout.feature_version,
            features: self.config.layout.features,
            policy_version: self.config.layout.policy_version,
            training_step: self.step,
            samples_seen: self.samples_seen,
            parent: self.config.parent.clone(),
            play: self.config.play.clone(),
            run_seconds: self.config.clock.map(|c| c.seconds()),
        };
        let optimizer = &self.optimizer;
        let account = &self.replay_account;
        shogi_model::publish_checkpoint(&dir, optimizer.published(), &meta, |tmp| {
            // The optimiser's state (momentum, moments) and the replay account travel
            // with the weights, inside the same rename, so a resume continues both (see
            // `restore_optimizer`, `read_replay_account`).
            let path = tmp.join(shogi_model::OPTIMIZER_FILE);
            optimizer.save_optimizer(&path).map_err(|e| {
                shogi_model::CheckpointError::Safetensors {
                    path,
                    message: e.to_string(),
                }
            })?;
            if let Some(account) = account {
                let path = tmp.join(REPLAY_ACCOUNT_FILE);
                let json = serde_json::to_vec_pretty(account).expect("an account serialises");
                std::fs::write(&path, json).map_err(|source| shogi_model::CheckpointError::Io {
                    op: "writing",
                    path,
                    source,
                })?;
            }
            Ok(())
        })?;
        Ok(dir)
    }

    /// Restores the optimiser's state saved by [`Learner::export`] in checkpoint `dir`
    /// (the one the learner's model was loaded from). An error (a checkpoint without the
    /// file, such as the initial network or one exported before optimiser states were
    /// saved, or one of another optimiser) leaves the optimiser fresh and says why.
    pub fn restore_optimizer(&mut self, dir: &Path) -> Result<(), String> {
        let path = dir.join(shogi_model::OPTIMIZER_FILE);
        if !path.exists() {
            return Err(format!("{} does not exist", path.display()));
        }
        self.optimizer.load_optimizer(&path)
    }

    /// Steps skipped for a non-finite gradient in this learner's life.
    pub fn non_finite_steps(&self) -> u64 {
        self.non_finite.skipped
    }

    /// Training samples consumed so far, over the run's life.
    pub fn samples_seen(&self) -> u64 {
        self.samples_seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_non_finite_steps_are_survived_many_stop_the_learner() {
        // 7 in a row pass, the 8th stops it.
        let mut guard = NonFiniteGuard::default();
        for step in 0..NON_FINITE_IN_A_ROW as u64 - 1 {
            guard.record(true, step).unwrap();
        }
        guard.record(false, 7).unwrap();
        assert_eq!(guard.in_a_row, 0);
        // Scattered: one in four passes until 25 of the last 100.
        let mut guard = NonFiniteGuard::default();
        let mut stopped_at = None;
        for step in 0..200u64 {
            if guard.record(step % 4 == 0, step).is_err() {
                stopped_at = Some(step);
                break;
            }
        }
        assert_eq!(stopped_at, Some(96), "the 25th non-finite step of 100");
        let mut guard = NonFiniteGuard::default();
        let err = (0..NON_FINITE_IN_A_ROW as u64)
            .map(|step| guard.record(true, step))
            .last()
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains("8 steps in a row"), "{err}");
        assert_eq!(guard.skipped, NON_FINITE_IN_A_ROW as u64);
    }
}

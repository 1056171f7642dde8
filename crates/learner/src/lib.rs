//! Learner for shogi-zero: training samples from game records, the replay window and its
//! account, learning-rate schedules, the training loop with its TensorBoard scalars, and
//! candidate export.

pub mod learner;
pub mod sample;
pub mod schedule;
pub mod window;

pub use learner::{Learner, LearnerConfig, REPLAY_ACCOUNT_FILE, Summary, read_replay_account};
pub use sample::{Sample, SampleConfig, samples_from_record};
pub use schedule::LrSchedule;
pub use window::{ReplayAccount, ReplayWindow, UNREADABLE_GRACE, grown_window};

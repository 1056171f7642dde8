//! Learner for shogi-zero: learning-rate schedules (more to come: samples, replay
//! window, trainer loop, TensorBoard logging, candidate export).

pub mod learner;
pub mod sample;
pub mod schedule;
pub mod window;

pub use learner::{Learner, LearnerConfig, Summary};
pub use sample::{Sample, SampleConfig, samples_from_record};
pub use schedule::LrSchedule;
pub use window::ReplayWindow;

//! Learner for shogi-zero: learning-rate schedules (more to come: samples, replay
//! window, trainer loop, TensorBoard logging, candidate export).

pub mod schedule;

pub use schedule::LrSchedule;

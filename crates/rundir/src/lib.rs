//! The run-directory contract, shared by everything that reads or writes a run: the
//! learner exports into it, self-play appends replay chunks, the gate promotes, the
//! arena and the USI engine load its best network.
//!
//! * [`layout`]: the layout ([`RunDir`]), checkpoint names (`step-NNNNNNNN`), `BEST`, the
//!   one-per-run role locks, and [`network_dir`] (a run stands for its best network).
//! * [`clock`]: the run's own clock ([`RunClock`]), its invocations' time summed.
//! * [`atomic`]: publication by rename under one temporary scheme, `.NAME.tmp-PID`
//!   ([`publish`], [`write_atomic`]), and the clean-up of a killed writer's temporaries.
//!
//! It depends on nothing else in the workspace, so every crate above it can share it.

pub mod atomic;
pub mod clock;
pub mod layout;

pub use atomic::{is_temporary_name, publish, remove_temporaries, temporary_path, write_atomic};
pub use clock::{RUN_SECONDS_FILE, RunClock};
pub use layout::{
    MANIFEST_FILE, NewestLoaded, RoleLock, RunDir, RunDirError, STEP_PREFIX, checkpoint_name,
    network_dir, newest_that_loads, run_of_network, step_of,
};

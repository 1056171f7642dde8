//! The run's own clock: how long a run has run, its invocations' wall time summed, so a
//! run made of several invocations days apart says how much machine time a network took,
//! not how long ago the run began. The learner's process keeps it in `RUN/run-seconds`
//! (rewritten with every status line and at the end), and each network it writes
//! records the clock's reading in its manifest.

use std::io;
use std::path::PathBuf;
use std::time::Instant;

use crate::atomic::write_atomic;
use crate::layout::RunDir;

/// The file in a run directory that holds the seconds the run has run.
pub const RUN_SECONDS_FILE: &str = "run-seconds";

/// Seconds a run has run: those its earlier invocations recorded, plus this one's.
#[derive(Clone, Copy, Debug)]
pub struct RunClock {
    base: f64,
    began: Instant,
}

impl RunClock {
    /// A clock that reads `base` seconds now.
    pub fn starting_at(base: f64) -> RunClock {
        RunClock {
            base: base.max(0.0),
            began: Instant::now(),
        }
    }

    /// `run`'s clock, going on from the seconds its earlier invocations recorded (0 for
    /// a run that recorded none). A file that does not hold a finite, non-negative
    /// number is an error naming it: the caller decides whether to start from 0.
    pub fn resume(run: &RunDir) -> io::Result<RunClock> {
        let path = run.run_seconds_file();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(RunClock::starting_at(0.0)),
            Err(e) => return Err(e),
        };
        match text.trim().parse::<f64>() {
            Ok(secs) if secs.is_finite() && secs >= 0.0 => Ok(RunClock::starting_at(secs)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} does not hold a number of seconds: {:?}",
                    path.display(),
                    text.chars().take(40).collect::<String>()
                ),
            )),
        }
    }

    /// The seconds the run has run, this invocation included.
    pub fn seconds(&self) -> f64 {
        self.base + self.began.elapsed().as_secs_f64()
    }

    /// Records the clock's reading in `run` (atomically), for the next invocation.
    pub fn record(&self, run: &RunDir) -> io::Result<()> {
        write_atomic(
            &run.run_seconds_file(),
            format!("{:.1}\n", self.seconds()).as_bytes(),
        )
    }
}

impl RunDir {
    /// `RUN/run-seconds`: the seconds the run has run ([`RunClock`]).
    pub fn run_seconds_file(&self) -> PathBuf {
        self.root().join(RUN_SECONDS_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_goes_on_from_what_the_last_invocation_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let run = RunDir::new(tmp.path());
        let fresh = RunClock::resume(&run).unwrap();
        assert!(fresh.seconds() < 1.0);
        RunClock::starting_at(3600.0).record(&run).unwrap();
        let resumed = RunClock::resume(&run).unwrap();
        assert!((3600.0..3601.0).contains(&resumed.seconds()));
        for bad in ["", "soon", "-5", "NaN", "inf"] {
            std::fs::write(run.run_seconds_file(), bad).unwrap();
            let err = RunClock::resume(&run).unwrap_err();
            assert!(err.to_string().contains(RUN_SECONDS_FILE), "{bad}: {err}");
        }
    }
}

//! Faults injected into the network on purpose, for the soak bench and the tests that
//! prove a run survives them (`scripts/bench/soak.py`): set
//! `SHOGI_ZERO_INJECT_FAULTS="fail_every=N,nan_every=M"` and every N-th batch of each
//! inference thread fails (as a model that panics does) and every M-th answers a NaN
//! value for its first position. Unset (always, outside those tests), nothing changes.

use std::sync::OnceLock;

/// The environment variable that asks for faults.
pub const INJECT_FAULTS_VAR: &str = "SHOGI_ZERO_INJECT_FAULTS";

/// Which batches fail or answer a NaN (0: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InjectedFaults {
    /// Every this many batches fails.
    pub fail_every: u64,
    /// Every this many batches answers a NaN.
    pub nan_every: u64,
}

impl InjectedFaults {
    /// Reads `fail_every=N,nan_every=M` (either may be left out).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut faults = InjectedFaults::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("{part:?} is not key=value"))?;
            let n: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("{part:?}: not a count"))?;
            match key.trim() {
                "fail_every" => faults.fail_every = n,
                "nan_every" => faults.nan_every = n,
                other => return Err(format!("unknown fault {other:?} (fail_every, nan_every)")),
            }
        }
        Ok(faults)
    }

    /// The faults the environment asks for, read once per process; a malformed value
    /// is said on stderr and injects nothing.
    pub fn from_env() -> InjectedFaults {
        static FAULTS: OnceLock<InjectedFaults> = OnceLock::new();
        *FAULTS.get_or_init(|| match std::env::var(INJECT_FAULTS_VAR) {
            Ok(text) => InjectedFaults::parse(&text).unwrap_or_else(|why| {
                eprintln!("shogi-zero: {INJECT_FAULTS_VAR} ignored: {why}");
                InjectedFaults::default()
            }),
            Err(_) => InjectedFaults::default(),
        })
    }

    /// Whether any fault is asked for.
    pub fn any(self) -> bool {
        self.fail_every > 0 || self.nan_every > 0
    }

    /// The fault for batch number `n` (1-based) of an inference thread.
    pub fn for_batch(self, n: u64) -> Option<Fault> {
        if self.fail_every > 0 && n.is_multiple_of(self.fail_every) {
            Some(Fault::Fail)
        } else if self.nan_every > 0 && n.is_multiple_of(self.nan_every) {
            Some(Fault::Nan)
        } else {
            None
        }
    }
}

/// What an injected fault does to a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The batch fails.
    Fail,
    /// The first position's value is a NaN.
    Nan,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_read_and_fall_on_their_batches() {
        let f = InjectedFaults::parse("fail_every=3, nan_every=5").unwrap();
        assert_eq!(
            f,
            InjectedFaults {
                fail_every: 3,
                nan_every: 5
            }
        );
        let at: Vec<_> = (1..=6).map(|n| f.for_batch(n)).collect();
        assert_eq!(
            at,
            [
                None,
                None,
                Some(Fault::Fail),
                None,
                Some(Fault::Nan),
                Some(Fault::Fail)
            ]
        );
        assert!(!InjectedFaults::parse("").unwrap().any());
        assert!(InjectedFaults::parse("fail_every").is_err());
        assert!(InjectedFaults::parse("explode_every=2").is_err());
    }
}

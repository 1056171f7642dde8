//! What the protocol loop (`engine.rs`) and a move's search on the worker thread
//! (`search.rs`) share: the output, the stop flags, the clock of the move and the
//! search constants both read. Both depend on this module; neither on the other's
//! internals.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Simulations per move when `go` gives no clock, no `nodes` and the `Simulations`
/// option is 0: AlphaZero's budget, deliberately above the training search's
/// ([`shogi_mcts::SearchConfig::default`]), since a GUI that sends a bare `go` wants the
/// engine's strength, not a self-play move.
pub const DEFAULT_SIMULATIONS: u32 = 800;
/// How often `info` lines are sent during a search.
pub const INFO_INTERVAL: Duration = Duration::from_millis(250);
/// Simulations of a Gumbel root's first search in a move whose speed the engine does not
/// know yet, and of the first search of an open-ended one (`go infinite`, `go ponder`),
/// whose later searches double it.
pub const GUMBEL_FIRST_SIMULATIONS: u32 = 64;

/// The engine's output: one line at a time, flushed.
pub(crate) type Out = Arc<Mutex<Box<dyn Write + Send>>>;

pub(crate) fn send(out: &Out, line: &str) {
    if let Ok(mut w) = out.lock() {
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }
}

/// The clock of the move being searched.
#[derive(Debug, Default)]
pub(crate) struct Timing {
    pub(crate) pondering: bool,
    pub(crate) infinite: bool,
    pub(crate) budget: Option<Duration>,
    pub(crate) deadline: Option<Instant>,
}

pub(crate) struct Shared {
    pub(crate) stop: Arc<AtomicBool>,
    /// Ends the running search call but not the move: raised by `ponderhit` (an
    /// open-ended Gumbel search gives way to one planned for the clock) and by `stop`.
    pub(crate) interrupt: Arc<AtomicBool>,
    pub(crate) timing: Mutex<Timing>,
}

pub(crate) fn stopped(shared: &Shared) -> bool {
    shared.stop.load(Ordering::SeqCst)
}

/// Waits (polling every millisecond) until `stop`, or `ponderhit` when pondering; the
/// USI rule is that `go infinite` / `go ponder` answer only after those.
pub(crate) fn wait_for_release(shared: &Shared) {
    loop {
        if stopped(shared) {
            return;
        }
        {
            let t = shared.timing.lock().expect("timing lock");
            if !t.pondering && !t.infinite {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

pub(crate) fn current_deadline(shared: &Shared) -> (Option<Instant>, bool) {
    let t = shared.timing.lock().expect("timing lock");
    let open = t.pondering || t.infinite;
    (if open { None } else { t.deadline }, open)
}

/// The clock before a search's next chunk: `None` once `stop` has come or the deadline
/// has passed; else the deadline, whether the search is open-ended (pondering, `go
/// infinite`) and the time now.
pub(crate) fn clock_before_chunk(shared: &Shared) -> Option<(Option<Instant>, bool, Instant)> {
    if stopped(shared) {
        return None;
    }
    let (deadline, open) = current_deadline(shared);
    let now = Instant::now();
    if deadline.is_some_and(|d| now >= d) {
        return None;
    }
    Some((deadline, open, now))
}

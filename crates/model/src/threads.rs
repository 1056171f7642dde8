//! libtorch's intra-op CPU thread count, applied in every thread that runs a network.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The intra-op thread count [`set_num_threads`] asked for; 0 until it is called.
static TORCH_THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The count [`apply_num_threads`] last applied in this thread (0: none).
    static APPLIED_THREADS: Cell<usize> = const { Cell::new(0) };
}

/// Sets libtorch's intra-op CPU thread count for every thread that runs a network.
///
/// OpenMP keeps the count per thread, and a thread started later (the USI engine's
/// search thread for each `go`, an inference service, the learner) began with one
/// thread per core: its convolutions then ran in teams whose spinning barriers wait a
/// whole scheduler slice for a descheduled member whenever the cores are busy: beside two
/// busy processes on 2 cores, the USI engine took up to 2.5 times a move's budget. So the
/// count is kept here and each network forward applies it in its own thread first
/// ([`apply_num_threads`]).
pub fn set_num_threads(n: usize) {
    TORCH_THREADS.store(n.max(1), Ordering::Relaxed);
    apply_num_threads();
}

/// Applies the count of [`set_num_threads`] in the calling thread, once per thread and
/// count; nothing before it was called (libtorch's default stays).
pub(crate) fn apply_num_threads() {
    let n = TORCH_THREADS.load(Ordering::Relaxed);
    if n == 0 {
        return;
    }
    APPLIED_THREADS.with(|applied| {
        if applied.get() != n {
            tch::set_num_threads(n as i32);
            applied.set(n);
        }
    });
}

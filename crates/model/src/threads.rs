//! Thread counts: the cores the process may use, `auto` counts sized from them, the CPU
//! time it uses, and libtorch's intra-op CPU thread count, applied in every thread that
//! runs a network.

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

/// The cores this process may run on: the CPUs of its affinity mask (`taskset`,
/// `sched_setaffinity`) and its container's CPU quota, whichever is fewer (Rust's
/// `available_parallelism`); 1 when the system does not say.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// CPU time this process has used so far, user and system, over all its threads; `None`
/// where the system does not say. Over a wall-clock span it is the cores kept busy.
pub fn process_cpu_time() -> Option<std::time::Duration> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a whole `rusage` into the pointer on success.
    let usage = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) != 0 {
            return None;
        }
        usage.assume_init()
    };
    let time = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec.max(0) as u64)
            + std::time::Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

/// How much lower than the learner's the priority of threads that work in its background
/// in the same process is ([`crate::Serving::background`]): enough that a runnable
/// learner gets a core of its own beside them (CFS weighs a thread 5 nice levels down at
/// a third), not so much that they starve when something else on the machine runs.
pub const BACKGROUND_NICE: i32 = 5;

/// Lowers the calling thread's scheduling priority by `levels` nice levels from where
/// it stands (Linux, where each thread has its own nice value; elsewhere nothing
/// changes), so a process started under `nice -n 10` keeps the same order among its
/// threads. Whether it was applied.
pub fn lower_thread_priority(levels: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions; getpriority/setpriority on a thread id
        // of this process read and change only that thread's nice value. getpriority
        // may return -1 as a value, so errno is cleared first and read after.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let current = libc::getpriority(libc::PRIO_PROCESS as _, tid);
            if current == -1 && *libc::__errno_location() != 0 {
                return false;
            }
            let target = (current + levels.max(0)).min(19);
            libc::setpriority(libc::PRIO_PROCESS as _, tid, target) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = levels;
        false
    }
}

/// A thread count a user may leave to the machine: `auto` (the default), sized from
/// [`available_cores`] by whoever reads it, or a number from 1 to [`MAX_THREADS`], which wins.
/// Written `"auto"` or a bare number in configs and on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ThreadCount {
    /// Sized from the cores the process may use.
    #[default]
    Auto,
    /// Exactly this many (at least 1).
    Fixed(usize),
}

impl ThreadCount {
    /// The count: the fixed one, or `auto()`'s (at least 1 either way).
    pub fn resolve(self, auto: impl FnOnce() -> usize) -> usize {
        match self {
            ThreadCount::Auto => auto().max(1),
            ThreadCount::Fixed(n) => n.max(1),
        }
    }

    /// The fixed count, `None` for `auto`.
    pub fn fixed(self) -> Option<usize> {
        match self {
            ThreadCount::Auto => None,
            ThreadCount::Fixed(n) => Some(n),
        }
    }
}

/// The most threads a count may ask for: more than any machine's cores, few enough that
/// a typo (100000) is refused by name instead of exhausting the system's threads.
pub const MAX_THREADS: usize = 1024;

/// Why a thread count was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a thread count: a number from 1 to 1024, or auto")]
pub struct ThreadCountError(pub String);

impl std::str::FromStr for ThreadCount {
    type Err = ThreadCountError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(ThreadCount::Auto);
        }
        match t.parse::<usize>() {
            Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(ThreadCount::Fixed(n)),
            _ => Err(ThreadCountError(s.to_string())),
        }
    }
}

impl std::fmt::Display for ThreadCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThreadCount::Auto => f.write_str("auto"),
            ThreadCount::Fixed(n) => write!(f, "{n}"),
        }
    }
}

impl serde::Serialize for ThreadCount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ThreadCount::Auto => s.serialize_str("auto"),
            ThreadCount::Fixed(n) => s.serialize_u64(*n as u64),
        }
    }
}

impl<'de> serde::Deserialize<'de> for ThreadCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = ThreadCount;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a thread count: a number from 1 to 1024, or \"auto\"")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ThreadCount, E> {
                n.to_string().parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ThreadCount, E> {
                n.to_string().parse().map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ThreadCount, E> {
                s.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// How self-play spreads over the machine: the one place that sizes its `auto` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelfplayThreads {
    /// Threads advancing games.
    pub actor_threads: usize,
    /// Inference threads serving them ([`crate::Serving`]).
    pub inference_threads: usize,
    /// libtorch's intra-op threads in each thread that runs a network.
    pub torch_threads: usize,
}

/// Self-play's thread counts on `cores` cores with `games` games in flight, the network
/// on a GPU when `cuda`; each count `auto` or fixed (a fixed one wins).
///
/// On a CPU the network's work is most of self-play's, and one inference thread runs one
/// batch at a time on one core: so one actor thread per core (no more than games), each
/// with an inference thread of its own (the pair alternates between search and network,
/// never both, and a batch never waits for another caller), and one intra-op thread (every
/// core already has a pair; intra-op teams on busy cores wait on each other). On a GPU
/// one inference thread keeps two batches in flight, the actors search on the cores
/// but two (the learner's and the inference thread's), and libtorch's host-side work
/// gets a quarter of the cores, at most 4.
pub fn selfplay_threads(
    cores: usize,
    cuda: bool,
    games: usize,
    actor: ThreadCount,
    inference: ThreadCount,
    torch: ThreadCount,
) -> SelfplayThreads {
    let cores = cores.max(1);
    let games = games.max(1);
    let actor_threads = actor.resolve(|| {
        if cuda {
            cores.saturating_sub(2).clamp(1, games)
        } else {
            cores.min(games)
        }
    });
    let inference_threads = inference.resolve(|| if cuda { 1 } else { actor_threads.min(cores) });
    let torch_threads = torch.resolve(|| if cuda { (cores / 4).clamp(1, 4) } else { 1 });
    SelfplayThreads {
        actor_threads,
        inference_threads,
        torch_threads,
    }
}

/// A match's games at once and each network player's inference threads on `cores`
/// cores, each `auto` or fixed: `auto` games are two a core (a network player's batches
/// hold several games' leaves, and a classical player's searches fill every core), `auto`
/// inference threads one a core, no more than the games at once (each game thread
/// keeps to one). Returns (games at once, inference threads).
pub fn match_threads(cores: usize, games: ThreadCount, inference: ThreadCount) -> (usize, usize) {
    let cores = cores.max(1);
    let games = games.resolve(|| 2 * cores);
    (games, inference.resolve(|| cores.min(games)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_count_is_auto_or_a_positive_number() {
        assert_eq!("auto".parse(), Ok(ThreadCount::Auto));
        assert_eq!(" 3 ".parse(), Ok(ThreadCount::Fixed(3)));
        for bad in ["0", "-1", "two", "", "1.5", "1025", "100000"] {
            assert!(bad.parse::<ThreadCount>().is_err(), "{bad}");
        }
        assert_eq!(ThreadCount::Auto.resolve(|| 0), 1);
        assert_eq!(ThreadCount::Auto.resolve(|| 6), 6);
        assert_eq!(ThreadCount::Fixed(2).resolve(|| 6), 2);
        assert_eq!(ThreadCount::Fixed(4).to_string(), "4");
    }

    #[test]
    fn a_thread_count_reads_and_writes_toml() {
        #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
        struct Keys {
            a: ThreadCount,
            b: ThreadCount,
        }
        let keys: Keys = toml::from_str("a = \"auto\"\nb = 3").unwrap();
        assert_eq!(
            keys,
            Keys {
                a: ThreadCount::Auto,
                b: ThreadCount::Fixed(3)
            }
        );
        assert_eq!(
            toml::from_str::<Keys>(&toml::to_string(&keys).unwrap()).unwrap(),
            keys
        );
        let zero = toml::from_str::<Keys>("a = 0\nb = 1")
            .unwrap_err()
            .to_string();
        assert!(zero.contains("not a thread count"), "{zero}");
    }

    #[test]
    fn auto_threads_follow_the_cores_and_the_device() {
        let auto = ThreadCount::Auto;
        let cpu = |cores, games| selfplay_threads(cores, false, games, auto, auto, auto);
        // A CPU: an actor and an inference thread per core, one intra-op thread.
        assert_eq!(
            cpu(2, 24),
            SelfplayThreads {
                actor_threads: 2,
                inference_threads: 2,
                torch_threads: 1
            }
        );
        assert_eq!(cpu(32, 24).actor_threads, 24, "no thread without a game");
        assert_eq!(cpu(1, 24).inference_threads, 1);
        // A GPU: one inference thread, the actors on the cores but two.
        let gpu = selfplay_threads(16, true, 512, auto, auto, auto);
        assert_eq!(
            gpu,
            SelfplayThreads {
                actor_threads: 14,
                inference_threads: 1,
                torch_threads: 4
            }
        );
        assert_eq!(
            selfplay_threads(2, true, 512, auto, auto, auto).actor_threads,
            1
        );
        // A fixed count wins, and the inference threads follow fixed actors.
        let fixed = selfplay_threads(8, false, 24, ThreadCount::Fixed(3), auto, auto);
        assert_eq!((fixed.actor_threads, fixed.inference_threads), (3, 3));
        let fixed = selfplay_threads(
            2,
            false,
            24,
            ThreadCount::Fixed(6),
            auto,
            ThreadCount::Fixed(2),
        );
        assert_eq!(
            (
                fixed.actor_threads,
                fixed.inference_threads,
                fixed.torch_threads
            ),
            (6, 2, 2)
        );
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_thread_lowers_its_own_priority_from_where_it_stands() {
        let nice_of = |tid: libc::pid_t| {
            let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
            // Fields after the command's closing parenthesis; nice is the 19th field.
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            after.split(' ').nth(16).unwrap().parse::<i32>().unwrap()
        };
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        let before = nice_of(me);
        let background = std::thread::spawn(move || {
            // SAFETY: as above.
            let tid = unsafe { libc::gettid() };
            // As under `nice -n 2`: the background goes lower still, relative to it.
            assert!(lower_thread_priority(2));
            let niced = nice_of(tid);
            assert!(lower_thread_priority(BACKGROUND_NICE));
            (niced, nice_of(tid))
        })
        .join()
        .unwrap();
        assert_eq!(background.0, (before + 2).min(19));
        assert_eq!(background.1, (before + 2 + BACKGROUND_NICE).min(19));
        assert_eq!(nice_of(me), before, "the other threads keep theirs");
    }

    #[test]
    fn a_match_plays_two_games_a_core_with_an_inference_thread_a_core() {
        let auto = ThreadCount::Auto;
        assert_eq!(match_threads(2, auto, auto), (4, 2));
        assert_eq!(match_threads(16, auto, auto), (32, 16));
        assert_eq!(match_threads(8, ThreadCount::Fixed(1), auto), (1, 1));
        assert_eq!(
            match_threads(8, ThreadCount::Fixed(3), ThreadCount::Fixed(2)),
            (3, 2)
        );
    }

    #[test]
    fn the_process_reports_cores_and_cpu_time() {
        assert!(available_cores() >= 1);
        let before = process_cpu_time().unwrap();
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        assert!(process_cpu_time().unwrap() > before);
    }
}

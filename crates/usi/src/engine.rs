//! The USI protocol loop.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shogi_game::{Color, Game};
use shogi_mcts::batch::BatchConfig;
use shogi_mcts::{Evaluator, RootSettings, Search, SearchConfig, SearchSpeed, UniformEvaluator};
use shogi_model::{
    Expected, Inference, InferenceOptions, NetEvaluator, NetService, Serving, checkpoint_layout,
    half_kind, parse_device, set_num_threads,
    tch::{Device, Kind},
};
use shogi_rules::ShogiGame;

use crate::game::UsiGame;
use crate::game::sanitize;
use crate::options::{Options, SetOptionError};
use crate::protocol::{Command, GoRequest, side_to_move_has_no_king};
use crate::search::MoveSearch;
pub use crate::shared::{DEFAULT_SIMULATIONS, GUMBEL_FIRST_SIMULATIONS, INFO_INTERVAL};
use crate::shared::{Out, Shared, Timing, send, wait_for_release};
use crate::time::budget;
use shogi_rules::mate::MateLimits;

/// Engine name sent in `id name`.
pub const ENGINE_NAME: &str = concat!("shogi-zero ", env!("CARGO_PKG_VERSION"));
/// Sent in `id author`.
pub const ENGINE_AUTHOR: &str = "the shogi-zero authors";

/// Finds the search a network's run measures its networks with (the binary passes
/// `shogi_run::play_root` of the run's config, or the search the network's manifest
/// recorded when it is not in its run: this crate does not read run configs), and where
/// it came from. `Ok(None)`: the network has no run and its manifest records none.
pub type RunSearchLookup = fn(&Path) -> Result<Option<(SearchSource, RootSettings)>, String>;

/// Where the search `RunSearch` adopts comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchSource {
    /// The config of the run directory the network sits in.
    Run(PathBuf),
    /// The network's manifest (`play`): a network copied out of its run.
    Manifest(PathBuf),
}

impl SearchSource {
    /// "as ... ": how the engine says whose search it adopts.
    fn as_measured(&self) -> String {
        match self {
            SearchSource::Run(run) => format!("as run {} measures its networks", run.display()),
            SearchSource::Manifest(dir) => format!(
                "as its run measured it (recorded in {}, the network is not in its run)",
                dir.join(shogi_model::MANIFEST_FILE).display()
            ),
        }
    }

    /// Whose search it is, for "not X's".
    fn owner(&self) -> String {
        match self {
            SearchSource::Run(run) => format!("run {}", run.display()),
            SearchSource::Manifest(_) => "its manifest".to_string(),
        }
    }
}

type Eval<G> = Arc<dyn Evaluator<G>>;
/// One evaluator per search thread (`Threads`): its own copy of the network, or its
/// handle on the one copy that batches every thread's leaves (`NetBatching`).
type Evals<G> = Arc<[Eval<G>]>;

/// What a loaded network is for ([`Engine::ensure_evaluator`] reloads when it changes).
type LoadedKey = (String, String, &'static str, u64, bool, u64, bool);

/// What a finished search job hands back to the engine: the tree, the resign counter and
/// the speed it measured (none from a `go mate` job).
type JobOutcome<G> = (Search<G>, u32, Option<SearchSpeed>);

struct Worker<G: Game> {
    handle: JoinHandle<JobOutcome<G>>,
    shared: Arc<Shared>,
}

enum JobKind {
    Search {
        simulations: Option<u32>,
        multipv: usize,
        ponder_out: bool,
        resign_percent: u64,
        hopeless: u32,
        speed: SearchSpeed,
    },
    Mate,
}

struct Job<G> {
    game: G,
    kind: JobKind,
    max_nodes: usize,
}

impl<G: UsiGame> std::fmt::Debug for Engine<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("options", &self.options)
            .field("searching", &self.worker.is_some())
            .finish_non_exhaustive()
    }
}

/// A USI engine: reads commands with [`Engine::run`], answers on its output. `G` is
/// `ShogiGame` for shogi and minishogi (switched by `UCI_Variant`) or `TaiGame`.
pub struct Engine<G: UsiGame = ShogiGame> {
    out: Out,
    options: Options,
    evaluators: Option<Evals<G>>,
    /// The network the evaluators send their leaves to under `NetBatching` shared (its
    /// inference thread lives as long as it does).
    service: Option<NetService>,
    /// What the evaluators were made for: model path, device, variant, search threads,
    /// half precision, leaves a call and whether they share one batching network.
    loaded_key: Option<LoadedKey>,
    /// The position, its start key and the moves played since.
    game: Option<(G, u64, Vec<G::Move>)>,
    /// The last `position` was refused because the side to move has no king (a tsume
    /// problem as GUIs send them): `go mate` then answers `checkmate notimplemented`.
    kingless: bool,
    search: Option<Search<G>>,
    search_config: SearchConfig,
    /// Start key and moves of the position the tree was last searched from.
    tree_root: Option<(u64, Vec<G::Move>)>,
    worker: Option<Worker<G>>,
    hopeless: u32,
    /// Finds a network's run ([`Engine::with_run_search`]).
    run_lookup: Option<RunSearchLookup>,
    /// The run of the loaded network and the search it measures its networks with.
    run_root: Option<(SearchSource, RootSettings)>,
    /// The speed of the last timed searches (a Gumbel root plans its simulations for the
    /// time left with it).
    speed: SearchSpeed,
}

impl<G: UsiGame> Engine<G> {
    /// An engine that writes its replies to `out`, starting from `options`.
    pub fn new(out: impl Write + Send + 'static, mut options: Options) -> Engine<G> {
        if !G::KINDS.contains(&options.game) {
            options.game = G::KINDS[0];
        }
        let search_config = options.search_config();
        Engine {
            out: Arc::new(Mutex::new(Box::new(out))),
            options,
            evaluators: None,
            service: None,
            loaded_key: None,
            game: None,
            kingless: false,
            search: Some(Search::new(search_config.clone(), 0)),
            search_config,
            tree_root: None,
            worker: None,
            hopeless: 0,
            run_lookup: None,
            run_root: None,
            speed: SearchSpeed::default(),
        }
    }

    /// Lets the engine search as a network's run measures its networks (`RunSearch`):
    /// `lookup` finds the run of a `ModelPath` and its search.
    pub fn with_run_search(mut self, lookup: RunSearchLookup) -> Engine<G> {
        self.run_lookup = Some(lookup);
        self
    }

    /// The search the options ask for, with the run's root under `RunSearch`.
    fn wanted_search_config(&self) -> SearchConfig {
        match &self.run_root {
            Some((_, root)) if self.options.run_search => self.options.search_config_with(root),
            _ => self.options.search_config(),
        }
    }

    /// Starts a new tree when the wanted search differs from the tree's.
    fn refresh_search_config(&mut self) {
        let cfg = self.wanted_search_config();
        if cfg != self.search_config {
            self.search_config = cfg.clone();
            self.search = Some(Search::new(cfg, 0));
            self.tree_root = None;
            self.speed = SearchSpeed::default();
        }
    }

    fn say(&self, line: &str) {
        send(&self.out, line);
    }

    /// Reads commands until `quit` or end of input. Only an input error ends it early;
    /// every malformed command is answered with `info string` and otherwise ignored.
    pub fn run(&mut self, mut input: impl BufRead) -> io::Result<()> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = input.read_until(b'\n', &mut buf)?;
            if n == 0 {
                self.finish_worker(true);
                return Ok(());
            }
            let line = String::from_utf8_lossy(&buf).into_owned();
            if !self.handle(&line) {
                self.finish_worker(true);
                return Ok(());
            }
        }
    }

    /// Handles one command line; returns `false` on `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        match Command::parse(line) {
            Command::Empty => {}
            Command::Usi => self.cmd_usi(),
            Command::IsReady => {
                if self.worker.is_none() {
                    self.ensure_evaluator();
                }
                self.say("readyok");
            }
            Command::SetOption(setting) => {
                self.finish_worker(true);
                match setting {
                    Ok((name, value)) => self.cmd_setoption(&name, &value),
                    Err(e) => self.say(&format!("info string {e}")),
                }
            }
            Command::UsiNewGame | Command::GameOver => {
                self.finish_worker(true);
                self.new_game();
            }
            Command::Position { head, moves } => {
                self.finish_worker(true);
                self.cmd_position(&head, &moves);
            }
            Command::Go(go) => {
                self.finish_worker(true);
                self.cmd_go(go);
            }
            Command::Stop => self.finish_worker(true),
            Command::PonderHit => self.ponderhit(),
            Command::Quit => return false,
            Command::Unknown(cmd) => {
                self.say(&format!("info string unknown command: {}", sanitize(cmd)))
            }
        }
        true
    }

    fn new_game(&mut self) {
        if let Some(s) = self.search.as_mut() {
            s.clear();
        }
        self.tree_root = None;
        self.hopeless = 0;
    }

    fn cmd_usi(&self) {
        self.say(&format!("id name {ENGINE_NAME}"));
        self.say(&format!("id author {ENGINE_AUTHOR}"));
        for line in self.options.usi_lines(G::KINDS) {
            self.say(&line);
        }
        self.say("usiok");
    }

    fn cmd_setoption(&mut self, name: &str, value: &str) {
        match self.options.set(name, value, G::KINDS) {
            Ok(()) => {}
            Err(SetOptionError::Unknown) => {
                self.say(&format!("info string unknown option: {}", sanitize(name)));
                return;
            }
            Err(SetOptionError::BadValue) => {
                self.say(&format!(
                    "info string bad value for option {}: {}",
                    sanitize(name),
                    sanitize(value)
                ));
                return;
            }
        }
        self.refresh_search_config();
        // Threads, TreeBatch or the network may have changed its speed.
        self.speed = SearchSpeed::default();
        if self
            .game
            .as_ref()
            .is_some_and(|(g, _, _)| g.variant_name() != self.options.game.name())
        {
            self.game = None;
            self.new_game();
        }
    }

    fn ensure_evaluator(&mut self) {
        let shared = parse_device(&self.options.device)
            .is_ok_and(|device| self.options.net_batching.shared_on(device));
        let key = (
            self.options.model_path.clone(),
            self.options.device.clone(),
            shogi_registry::layout(self.options.game).variant,
            self.options.threads,
            self.options.half_precision,
            // A shared network's batches are sized from the leaves a call.
            if shared { self.options.tree_batch } else { 0 },
            shared,
        );
        if self.evaluators.is_some() && self.loaded_key.as_ref() == Some(&key) {
            return;
        }
        self.loaded_key = Some(key);
        self.speed = SearchSpeed::default();
        // The old network's inference thread ends before another is loaded.
        self.evaluators = None;
        if let Some(service) = self.service.take() {
            service.shutdown();
        }
        self.adopt_run_search();
        let threads = self.options.threads.max(1) as usize;
        let uniform = || -> Evals<G> {
            (0..threads)
                .map(|_| Arc::new(UniformEvaluator::default()) as Eval<G>)
                .collect()
        };
        if self.options.model_path.is_empty() {
            self.evaluators = Some(uniform());
            return;
        }
        self.say(&format!(
            "info string loading {} on {} for {threads} search thread{}",
            self.options.model_path,
            self.options.device,
            if threads == 1 { "" } else { "s" }
        ));
        let loaded = if shared {
            self.load_shared_net(threads)
        } else {
            self.load_nets(threads)
        };
        match loaded {
            Ok((e, precision)) => {
                self.evaluators = Some(e);
                let batching = match &self.service {
                    Some(_) => format!(
                        ", one copy batching the {threads} search threads' leaves (up to {} a call)",
                        threads * self.options.tree_batch as usize
                    ),
                    None => String::new(),
                };
                self.say(&format!("info string model loaded ({precision}){batching}"));
            }
            Err(e) => {
                self.say(&format!(
                    "info string error: cannot load model: {}; playing with the uniform evaluator",
                    sanitize(&e).replace('\n', " ")
                ));
                self.evaluators = Some(uniform());
            }
        }
    }

    /// Looks up the run of `ModelPath` (if any) and, under `RunSearch`, says which search
    /// the engine takes from it.
    fn adopt_run_search(&mut self) {
        self.run_root = None;
        let path = self.options.model_path.clone();
        if let (Some(lookup), false) = (self.run_lookup, path.is_empty()) {
            match lookup(Path::new(&path)) {
                Ok(found) => self.run_root = found,
                Err(e) => self.say(&format!(
                    "info string error: the run's search: {}; searching as the options say",
                    e.replace(|c: char| c.is_control(), " ")
                )),
            }
        }
        if let Some((source, root)) = &self.run_root {
            let line = if self.options.run_search {
                format!(
                    "info string search: {}: {}",
                    source.as_measured(),
                    root.describe()
                )
            } else {
                format!(
                    "info string search: the options' ({}), not {}'s ({}): RunSearch is off",
                    self.options.root().describe(),
                    source.owner(),
                    root.describe()
                )
            };
            self.say(&line.replace(|c: char| c.is_control(), " "));
        }
        self.refresh_search_config();
    }

    /// Where the network of `ModelPath` is loaded: its device and checkpoint directory
    /// (a run directory stands for its best network, its BEST pointer). Sets libtorch's
    /// threads for it.
    fn network_source(&self) -> Result<(Device, PathBuf), String> {
        let device = parse_device(&self.options.device).map_err(|e| e.to_string())?;
        let dir = shogi_rundir::network_dir(Path::new(&self.options.model_path))
            .map_err(|e| e.to_string())?;
        set_num_threads(self.options.torch_threads as usize);
        Ok((device, dir))
    }

    /// The network of `ModelPath`, one copy on its own inference thread, serving one
    /// evaluator per search thread: each thread's `TreeBatch` leaves go into the
    /// batches of all of them. Kept in `self.service`.
    fn load_shared_net(&mut self, threads: usize) -> Result<(Evals<G>, &'static str), String> {
        let (device, dir) = self.network_source()?;
        let batch = BatchConfig {
            max_batch: threads * self.options.tree_batch as usize,
            // A batch runs once every thread has sent its leaves (or after this wait,
            // when a thread is selecting or its search has ended).
            callers: threads,
            ..BatchConfig::default()
        };
        let serving = Serving {
            inference_threads: 1,
            callers: threads,
            background: false,
        };
        let game = shogi_registry::layout(self.options.game);
        let half = self.options.half_precision;
        let service = NetService::from_checkpoint(&dir, game, device, batch, half, serving)
            .map_err(|e| e.to_string())?;
        let evaluators: Vec<Eval<G>> = service
            .evaluators::<G>(threads)
            .into_iter()
            .map(|e| Arc::new(e) as Eval<G>)
            .collect();
        self.service = Some(service);
        Ok((evaluators.into(), precision_name(half, device)))
    }

    /// The network of `ModelPath`, one copy per search thread, and the precision it
    /// computes in (what `HalfPrecision` gives on this device).
    fn load_nets(&self, threads: usize) -> Result<(Evals<G>, &'static str), String> {
        let (device, dir) = self.network_source()?;
        // The network reads the input planes it was trained on (its manifest says which).
        let game = shogi_registry::layout(self.options.game);
        let expected = Expected::for_layout(&game).any_features();
        let options = InferenceOptions {
            half: self.options.half_precision,
            max_batch: self.options.tree_batch as usize,
            ..InferenceOptions::default()
        };
        let mut nets: Vec<Eval<G>> = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (inference, manifest) =
                Inference::from_checkpoint(&dir, &expected, device, &options)
                    .map_err(|e| e.to_string())?;
            let layout = checkpoint_layout(&game, &manifest).map_err(|e| e.to_string())?;
            let net = NetEvaluator::for_layout(inference, layout).map_err(|e| e.to_string())?;
            nets.push(Arc::new(net));
        }
        Ok((nets.into(), precision_name(options.half, device)))
    }

    fn cmd_position(&mut self, head: &[&str], moves: &[&str]) {
        // Keep no broken position: any error leaves no position at all.
        self.game = None;
        self.kingless = false;
        match G::parse_position(&self.options.spec(), head, moves) {
            Ok(mut g) => {
                if self.options.twofold_draws {
                    g.0.twofold_in_search();
                }
                self.game = Some(g);
            }
            Err(e) => {
                self.say(&format!("info string error: position: {e}"));
                self.kingless = side_to_move_has_no_king(head);
            }
        }
    }

    fn cmd_go(&mut self, go: GoRequest) {
        for note in &go.notes {
            self.say(&format!("info string {note}"));
        }
        if let Some(e) = &go.refused {
            self.say(&format!("info string error: {e}"));
            return;
        }
        let GoRequest {
            clock,
            infinite,
            ponder,
            nodes,
            mate,
            ..
        } = go;
        let Some((game, start_key, moves)) = self.game.clone() else {
            self.say("info string error: go without a valid position");
            if mate.is_some() && self.kingless {
                // A tsume problem without the attacker's king: the rules core needs both
                // kings, so this engine does not solve it; say so rather than `nomate`.
                self.say(
                    "info string error: go mate: positions without the side to move's king (tsume problems) are not supported",
                );
                self.say("checkmate notimplemented");
            } else if mate.is_some() {
                // Not `nomate`: nothing was searched, so nothing is known (a GUI shows
                // `nomate` as "this problem has no mate").
                self.say("checkmate timeout");
            } else {
                self.say("bestmove resign");
            }
            return;
        };
        self.ensure_evaluator();
        let evaluators = self.evaluators.clone().expect("evaluators loaded");
        let mut search = self
            .search
            .take()
            .unwrap_or_else(|| Search::new(self.search_config.clone(), 0));

        let start = Instant::now();
        let shared = Arc::new(Shared {
            stop: Arc::new(AtomicBool::new(false)),
            interrupt: Arc::new(AtomicBool::new(false)),
            timing: Mutex::new(Timing::default()),
        });
        let kind;
        {
            let mut t = shared.timing.lock().expect("fresh mutex");
            if let Some(m) = mate {
                t.budget = m.map(Duration::from_millis);
                t.infinite = m.is_none();
                kind = JobKind::Mate;
            } else {
                let black = game.side_to_move() == Color::Black;
                let ply = game.move_number();
                t.budget = budget(&clock, black, ply, self.options.byoyomi_margin);
                t.infinite = infinite;
                t.pondering = ponder;
                let sims =
                    nodes
                        .map(|n| n.min(u64::from(u32::MAX)) as u32)
                        .or((self.options.simulations > 0)
                            .then_some(self.options.simulations as u32))
                        .or((t.budget.is_none() && !infinite && !ponder)
                            .then_some(DEFAULT_SIMULATIONS));
                kind = JobKind::Search {
                    simulations: sims,
                    multipv: self.options.multipv as usize,
                    ponder_out: self.options.ponder,
                    resign_percent: self.options.resign_percent,
                    hopeless: self.hopeless,
                    speed: self.speed,
                };
                // Tree reuse: advance the tree over the moves played since the last search.
                self.reuse_tree(&mut search, start_key, &moves);
            }
            t.deadline = if t.pondering || t.infinite {
                None
            } else {
                t.budget.and_then(|b| start.checked_add(b))
            };
        }
        let job = Job {
            game,
            kind,
            max_nodes: self.options.max_nodes(),
        };
        let out = self.out.clone();
        let sh = shared.clone();
        let handle = std::thread::Builder::new()
            .name("usi-search".into())
            .spawn(move || run_job(job, search, evaluators, sh, out, start))
            .expect("spawn search thread");
        self.worker = Some(Worker { handle, shared });
    }

    fn reuse_tree(&mut self, search: &mut Search<G>, start_key: u64, moves: &[G::Move]) {
        match &self.tree_root {
            Some((k, prev))
                if *k == start_key
                    && moves.len() >= prev.len()
                    && moves.len() - prev.len() <= 2
                    && moves[..prev.len()] == prev[..] =>
            {
                for &mv in &moves[prev.len()..] {
                    search.advance(mv);
                }
            }
            _ => search.clear(),
        }
        self.tree_root = Some((start_key, moves.to_vec()));
    }

    fn ponderhit(&mut self) {
        let Some(w) = &self.worker else {
            return;
        };
        let mut t = w.shared.timing.lock().expect("timing lock");
        if t.pondering {
            t.pondering = false;
            t.deadline = t.budget.and_then(|b| Instant::now().checked_add(b));
            w.shared.interrupt.store(true, Ordering::SeqCst);
        }
    }

    /// Ends the running search (raising the stop flag if `stop`) and waits for its
    /// `bestmove`.
    fn finish_worker(&mut self, stop: bool) {
        if let Some(w) = self.worker.take() {
            if stop {
                w.shared.stop.store(true, Ordering::SeqCst);
                w.shared.interrupt.store(true, Ordering::SeqCst);
            }
            match w.handle.join() {
                Ok((search, hopeless, speed)) => {
                    self.search = Some(search);
                    self.hopeless = hopeless;
                    self.speed = speed.unwrap_or(self.speed);
                }
                Err(_) => {
                    self.say("info string error: search thread panicked");
                    self.search = Some(Search::new(self.search_config.clone(), 0));
                    self.tree_root = None;
                }
            }
        }
    }
}

/// The precision a network computes in on `device`, as the `model loaded` line says it:
/// the device's half type ([`half_kind`]) when `half`, else f32.
fn precision_name(half: bool, device: Device) -> &'static str {
    match if half { half_kind(device) } else { Kind::Float } {
        Kind::Half => "f16",
        Kind::BFloat16 => "bf16",
        _ => "f32",
    }
}

fn run_job<G: UsiGame>(
    job: Job<G>,
    mut search: Search<G>,
    evaluators: Evals<G>,
    shared: Arc<Shared>,
    out: Out,
    start: Instant,
) -> JobOutcome<G> {
    match job.kind {
        JobKind::Mate => {
            let deadline = {
                let t = shared.timing.lock().expect("timing lock");
                t.budget.and_then(|b| start.checked_add(b))
            };
            let limits = MateLimits {
                deadline,
                stop: Some(shared.stop.clone()),
                max_nodes: job.max_nodes.max(10_000),
                ..MateLimits::default()
            };
            send(&out, &job.game.mate_answer(&limits));
            (search, 0, None)
        }
        JobKind::Search {
            simulations,
            multipv,
            ponder_out,
            resign_percent,
            hopeless,
            mut speed,
        } => {
            let end = MoveSearch {
                game: &job.game,
                search: &mut search,
                evaluators: &evaluators,
                shared: &shared,
                out: &out,
                start,
                simulations,
                multipv,
                total_sims: 0,
            }
            .play(ponder_out, resign_percent, hopeless, &mut speed);
            wait_for_release(&shared);
            send(&out, &end.line);
            (search, end.hopeless, Some(speed))
        }
    }
}

//! The USI protocol loop.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use shogi_game::{Color, Game};
use shogi_mcts::{
    Evaluator, Proven, Search, SearchConfig, SearchLimits, StopReason, UniformEvaluator,
};
use shogi_model::{
    Expected, Inference, InferenceOptions, NetEvaluator, parse_device, set_num_threads,
};
use shogi_rules::{ShogiGame, Variant};

use crate::game::UsiGame;
use crate::time::{Clock, budget};
use shogi_rules::mate::MateLimits;

/// Engine name sent in `id name`.
pub const ENGINE_NAME: &str = concat!("shogi-zero ", env!("CARGO_PKG_VERSION"));
/// Sent in `id author`.
pub const ENGINE_AUTHOR: &str = "the shogi-zero authors";
/// Bytes of tree memory assumed per search node when `USI_Hash` is turned into a node
/// limit.
pub const BYTES_PER_NODE: usize = 64;
/// Simulations per move when `go` gives no clock, no `nodes` and the `Simulations`
/// option is 0.
pub const DEFAULT_SIMULATIONS: u32 = 800;
/// How often `info` lines are sent during a search.
pub const INFO_INTERVAL: Duration = Duration::from_millis(250);

/// The engine's options (the USI `option`s; see `docs/USI.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `USI_Hash`: MB for the search tree (turned into a node limit).
    pub hash_mb: u64,
    /// `USI_Ponder`.
    pub ponder: bool,
    /// `Threads`: libtorch intra-op threads for the network (the tree search itself is
    /// one thread).
    pub threads: u64,
    /// `MultiPV`.
    pub multipv: u64,
    /// `ModelPath`: a checkpoint directory (or a file inside it); empty = uniform
    /// evaluator (uniform priors, draw value).
    pub model_path: String,
    /// `Device`: auto, cpu, cuda, cuda:N.
    pub device: String,
    /// `BatchSize`: leaves per network call.
    pub batch_size: u64,
    /// `Simulations`: per-move simulation limit (0 = none).
    pub simulations: u64,
    /// `ByoyomiMargin` in ms.
    pub byoyomi_margin: u64,
    /// `ResignValue`: resign when the expected score stays below this many percent for
    /// two searches in a row, or the loss is proven (0 = never resign).
    pub resign_percent: u64,
    /// `UCI_Variant`.
    pub variant: Variant,
    /// `MaxMovesToDraw` (YaneuraOu's name; `Draw_Ply` is an alias): the game is drawn
    /// once this many plies were played, counted from move 1 of the SFEN's move number,
    /// and the search scores positions at the limit as draws. 0 = no limit.
    pub max_moves_to_draw: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hash_mb: 256,
            ponder: false,
            threads: 1,
            multipv: 1,
            model_path: String::new(),
            device: "auto".into(),
            batch_size: 16,
            simulations: 0,
            byoyomi_margin: 100,
            resign_percent: 2,
            variant: Variant::Shogi,
            max_moves_to_draw: 0,
        }
    }
}

impl Options {
    fn max_nodes(&self) -> usize {
        ((self.hash_mb.clamp(1, 1 << 20) as usize) << 20) / BYTES_PER_NODE
    }

    fn search_config(&self) -> SearchConfig {
        SearchConfig {
            batch_size: self.batch_size.clamp(1, 1024) as usize,
            max_nodes: self.max_nodes(),
            // The engine probes for mate itself first, with the clock's budget, and
            // reports the line (`score mate`): the search need not probe again.
            root_mate_nodes: 0,
            ..SearchConfig::for_play()
        }
    }
}

/// `score cp` from an expected score `s` (win 1, draw 0.5, loss 0) for the side to move:
/// `cp = 600 * ln(s / (1 - s))`, with `s` clamped to `[0.0001, 0.9999]` (so |cp| <= 5526).
pub fn score_to_cp(s: f32) -> i32 {
    let s = f64::from(s).clamp(1e-4, 1.0 - 1e-4);
    (600.0 * (s / (1.0 - s)).ln()).round() as i32
}

type Out = Arc<Mutex<Box<dyn Write + Send>>>;
type Eval<G> = Arc<dyn Evaluator<G>>;

fn send(out: &Out, line: &str) {
    if let Ok(mut w) = out.lock() {
        let _ = writeln!(w, "{line}");
        let _ = w.flush();
    }
}

#[derive(Debug, Default)]
struct Timing {
    pondering: bool,
    infinite: bool,
    budget: Option<Duration>,
    deadline: Option<Instant>,
}

struct Shared {
    stop: Arc<AtomicBool>,
    timing: Mutex<Timing>,
}

struct Worker<G: Game> {
    handle: JoinHandle<(Search<G>, u32)>,
    shared: Arc<Shared>,
}

enum JobKind {
    Search {
        simulations: Option<u32>,
        multipv: usize,
        ponder_out: bool,
        resign_percent: u64,
        hopeless: u32,
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
    evaluator: Option<Eval<G>>,
    loaded_key: Option<(String, String, &'static str)>,
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
}

/// Whether `position` arguments are an SFEN whose side to move has no king on the board
/// (`K` for black, `k` for white): how GUIs send tsume problems.
fn side_to_move_has_no_king(args: &[&str]) -> bool {
    match args {
        ["sfen", board, side, ..] => match *side {
            "b" => !board.contains('K'),
            "w" => !board.contains('k'),
            _ => false,
        },
        _ => false,
    }
}

/// Control characters replaced, cut at 80 characters: safe to echo in `info string`.
pub(crate) fn sanitize(s: &str) -> String {
    let mut t: String = s
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .take(80)
        .collect();
    if s.chars().count() > 80 {
        t.push_str("...");
    }
    t
}

impl<G: UsiGame> Engine<G> {
    /// An engine that writes its replies to `out`, starting from `options`.
    pub fn new(out: impl Write + Send + 'static, options: Options) -> Engine<G> {
        let search_config = options.search_config();
        Engine {
            out: Arc::new(Mutex::new(Box::new(out))),
            options,
            evaluator: None,
            loaded_key: None,
            game: None,
            kingless: false,
            search: Some(Search::new(search_config.clone(), 0)),
            search_config,
            tree_root: None,
            worker: None,
            hopeless: 0,
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
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(&cmd) = tokens.first() else {
            return true;
        };
        let args = &tokens[1..];
        match cmd {
            "usi" => self.cmd_usi(),
            "isready" => {
                if self.worker.is_none() {
                    self.ensure_evaluator();
                }
                self.say("readyok");
            }
            "setoption" => {
                self.finish_worker(true);
                self.cmd_setoption(args);
            }
            "usinewgame" => {
                self.finish_worker(true);
                self.new_game();
            }
            "position" => {
                self.finish_worker(true);
                self.cmd_position(args);
            }
            "go" => {
                self.finish_worker(true);
                self.cmd_go(args);
            }
            "stop" => self.finish_worker(true),
            "ponderhit" => self.ponderhit(),
            "gameover" => {
                self.finish_worker(true);
                self.new_game();
            }
            "quit" => return false,
            _ => self.say(&format!("info string unknown command: {}", sanitize(cmd))),
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
        // Defaults are the current values, so flags given to `shogi-zero usi` (e.g.
        // --model) survive a GUI that sends every option back at start-up.
        let o = &self.options;
        let model = if o.model_path.is_empty() {
            "<empty>"
        } else {
            o.model_path.as_str()
        };
        let lines = [
            format!("id name {ENGINE_NAME}"),
            format!("id author {ENGINE_AUTHOR}"),
            format!(
                "option name USI_Hash type spin default {} min 1 max 65536",
                o.hash_mb
            ),
            format!("option name USI_Ponder type check default {}", o.ponder),
            format!(
                "option name Threads type spin default {} min 1 max 256",
                o.threads
            ),
            format!(
                "option name MultiPV type spin default {} min 1 max 32",
                o.multipv
            ),
            format!("option name ModelPath type filename default {model}"),
            format!("option name Device type string default {}", o.device),
            format!(
                "option name BatchSize type spin default {} min 1 max 1024",
                o.batch_size
            ),
            format!(
                "option name Simulations type spin default {} min 0 max 1000000000",
                o.simulations
            ),
            format!(
                "option name ByoyomiMargin type spin default {} min 0 max 60000",
                o.byoyomi_margin
            ),
            format!(
                "option name ResignValue type spin default {} min 0 max 50",
                o.resign_percent
            ),
            format!("option name UCI_Variant type combo {}", G::variant_combo(o)),
            format!(
                "option name MaxMovesToDraw type spin default {} min 0 max 100000",
                o.max_moves_to_draw
            ),
            format!(
                "option name Draw_Ply type spin default {} min 0 max 100000",
                o.max_moves_to_draw
            ),
            "usiok".to_string(),
        ];
        for l in lines {
            self.say(&l);
        }
    }

    fn cmd_setoption(&mut self, args: &[&str]) {
        // setoption name <id> [value <x>]
        if args.first() != Some(&"name") || args.len() < 2 {
            self.say("info string setoption: expected 'setoption name <id> [value <x>]'");
            return;
        }
        let vpos = args.iter().position(|&t| t == "value");
        let name = args[1..vpos.unwrap_or(args.len())].join(" ");
        let value = vpos.map(|i| args[i + 1..].join(" ")).unwrap_or_default();
        let value = if value == "<empty>" {
            String::new()
        } else {
            value
        };
        let spin = |min: u64, max: u64| -> Option<u64> {
            value.parse::<u64>().ok().map(|v| v.clamp(min, max))
        };
        let o = &mut self.options;
        let ok = match name.to_ascii_lowercase().as_str() {
            "usi_hash" => spin(1, 65536).map(|v| o.hash_mb = v).is_some(),
            "usi_ponder" => match value.as_str() {
                "true" => {
                    o.ponder = true;
                    true
                }
                "false" => {
                    o.ponder = false;
                    true
                }
                _ => false,
            },
            "threads" => spin(1, 256).map(|v| o.threads = v).is_some(),
            "multipv" => spin(1, 32).map(|v| o.multipv = v).is_some(),
            "modelpath" => {
                o.model_path = value.clone();
                true
            }
            "device" => {
                if value.is_empty() || parse_device(&value).is_ok() {
                    o.device = if value.is_empty() {
                        "auto".into()
                    } else {
                        value.clone()
                    };
                    true
                } else {
                    false
                }
            }
            "batchsize" => spin(1, 1024).map(|v| o.batch_size = v).is_some(),
            "simulations" | "nodes" => spin(0, 1_000_000_000).map(|v| o.simulations = v).is_some(),
            "byoyomimargin" => spin(0, 60_000).map(|v| o.byoyomi_margin = v).is_some(),
            "resignvalue" => spin(0, 50).map(|v| o.resign_percent = v).is_some(),
            "uci_variant" => G::set_variant(o, &value.to_ascii_lowercase()),
            "maxmovestodraw" | "draw_ply" => {
                spin(0, 100_000).map(|v| o.max_moves_to_draw = v).is_some()
            }
            _ => {
                self.say(&format!("info string unknown option: {}", sanitize(&name)));
                return;
            }
        };
        if !ok {
            self.say(&format!(
                "info string bad value for option {}: {}",
                sanitize(&name),
                sanitize(&value)
            ));
            return;
        }
        let cfg = self.options.search_config();
        if cfg.batch_size != self.search_config.batch_size
            || cfg.max_nodes != self.search_config.max_nodes
        {
            self.search_config = cfg.clone();
            self.search = Some(Search::new(cfg, 0));
            self.tree_root = None;
        }
        if self
            .game
            .as_ref()
            .is_some_and(|(g, _, _)| !g.fits(&self.options))
        {
            self.game = None;
            self.new_game();
        }
    }

    fn ensure_evaluator(&mut self) {
        let key = (
            self.options.model_path.clone(),
            self.options.device.clone(),
            G::layout_for(&self.options).variant,
        );
        if self.evaluator.is_some() && self.loaded_key.as_ref() == Some(&key) {
            return;
        }
        self.loaded_key = Some(key);
        if self.options.model_path.is_empty() {
            self.evaluator = Some(Arc::new(UniformEvaluator::default()));
            return;
        }
        self.say(&format!(
            "info string loading {} on {}",
            self.options.model_path, self.options.device
        ));
        match self.load_net() {
            Ok(e) => {
                self.evaluator = Some(e);
                self.say("info string model loaded");
            }
            Err(e) => {
                self.say(&format!(
                    "info string error: cannot load model: {}; playing with the uniform evaluator",
                    sanitize(&e).replace('\n', " ")
                ));
                self.evaluator = Some(Arc::new(UniformEvaluator::default()));
            }
        }
    }

    fn load_net(&self) -> Result<Eval<G>, String> {
        let device = parse_device(&self.options.device).map_err(|e| e.to_string())?;
        // A run directory stands for its best network (its BEST pointer).
        let dir = shogi_rundir::network_dir(Path::new(&self.options.model_path))
            .map_err(|e| e.to_string())?;
        set_num_threads(self.options.threads as usize);
        let layout = G::layout_for(&self.options);
        let expected = Expected::for_layout(&layout);
        let options = InferenceOptions {
            max_batch: self.options.batch_size as usize,
            ..InferenceOptions::default()
        };
        let (inference, _manifest) = Inference::from_checkpoint(&dir, &expected, device, &options)
            .map_err(|e| e.to_string())?;
        let net = NetEvaluator::for_layout(inference, layout).map_err(|e| e.to_string())?;
        Ok(Arc::new(net))
    }

    fn cmd_position(&mut self, args: &[&str]) {
        // Keep no broken position: any error leaves no position at all.
        self.game = None;
        self.kingless = false;
        match self.parse_position(args) {
            Ok(g) => self.game = Some(g),
            Err(e) => {
                self.say(&format!("info string error: position: {e}"));
                self.kingless = side_to_move_has_no_king(args);
            }
        }
    }

    fn parse_position(&self, args: &[&str]) -> Result<(G, u64, Vec<G::Move>), String> {
        let moves_at = args.iter().position(|&t| t == "moves");
        let head = &args[..moves_at.unwrap_or(args.len())];
        let moves = moves_at.map_or(&[][..], |i| &args[i + 1..]);
        G::parse_position(&self.options, head, moves)
    }

    fn cmd_go(&mut self, args: &[&str]) {
        let mut clock = Clock::default();
        let mut infinite = false;
        let mut ponder = false;
        let mut nodes: Option<u64> = None;
        let mut mate: Option<Option<u64>> = None;
        let mut i = 0;
        let num = |s: Option<&&str>| -> Option<u64> {
            let s = s?;
            // Huge numbers saturate; negative clocks count as 0.
            if let Ok(v) = s.parse::<u64>() {
                Some(v)
            } else if let Ok(v) = s.parse::<i128>() {
                Some(if v < 0 { 0 } else { u64::MAX })
            } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                Some(u64::MAX)
            } else {
                None
            }
        };
        while i < args.len() {
            let key = args[i];
            let takes_value = matches!(
                key,
                "btime" | "wtime" | "binc" | "winc" | "byoyomi" | "movetime" | "nodes" | "depth"
            );
            if takes_value {
                let v = num(args.get(i + 1));
                if v.is_none() {
                    self.say(&format!("info string go: bad value for {key}"));
                }
                match key {
                    "btime" => clock.btime = v,
                    "wtime" => clock.wtime = v,
                    "binc" => clock.binc = v,
                    "winc" => clock.winc = v,
                    "byoyomi" => clock.byoyomi = v,
                    "movetime" => clock.movetime = v,
                    "nodes" => nodes = v,
                    _ => self.say(
                        "info string go depth is not supported (ignored); MCTS has no fixed depth",
                    ),
                }
                i += 2;
                continue;
            }
            match key {
                "infinite" => infinite = true,
                "ponder" => ponder = true,
                "mate" => {
                    // `go mate` alone (or followed by another keyword) is `infinite`; a
                    // value that is neither a number nor `infinite` is refused, no search.
                    match args.get(i + 1).copied() {
                        None => mate = Some(None),
                        Some("infinite") => mate = Some(None),
                        Some(v) => match num(Some(&v)) {
                            Some(ms) => mate = Some(Some(ms)),
                            None => {
                                self.say(&format!(
                                    "info string error: go mate: bad value {} (expected milliseconds or infinite); no search",
                                    sanitize(v)
                                ));
                                return;
                            }
                        },
                    }
                    i += 2;
                    continue;
                }
                "searchmoves" => {
                    self.say("info string go searchmoves is not supported (ignored)");
                    // Skip the move list.
                    i += 1;
                    while i < args.len() && !is_go_keyword(args[i]) {
                        i += 1;
                    }
                    continue;
                }
                other => self.say(&format!(
                    "info string go: unknown token {}",
                    sanitize(other)
                )),
            }
            i += 1;
        }

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
        let evaluator = self.evaluator.clone().expect("evaluator loaded");
        let mut search = self
            .search
            .take()
            .unwrap_or_else(|| Search::new(self.search_config.clone(), 0));

        let start = Instant::now();
        let shared = Arc::new(Shared {
            stop: Arc::new(AtomicBool::new(false)),
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
            .spawn(move || run_job(job, search, evaluator, sh, out, start))
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
        }
    }

    /// Ends the running search (raising the stop flag if `stop`) and waits for its
    /// `bestmove`.
    fn finish_worker(&mut self, stop: bool) {
        if let Some(w) = self.worker.take() {
            if stop {
                w.shared.stop.store(true, Ordering::SeqCst);
            }
            match w.handle.join() {
                Ok((search, hopeless)) => {
                    self.search = Some(search);
                    self.hopeless = hopeless;
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

fn is_go_keyword(t: &str) -> bool {
    matches!(
        t,
        "btime"
            | "wtime"
            | "binc"
            | "winc"
            | "byoyomi"
            | "movetime"
            | "nodes"
            | "depth"
            | "infinite"
            | "ponder"
            | "mate"
            | "searchmoves"
    )
}

fn stopped(shared: &Shared) -> bool {
    shared.stop.load(Ordering::SeqCst)
}

/// Waits (polling every millisecond) until `stop`, or `ponderhit` when pondering; the
/// USI rule is that `go infinite` / `go ponder` answer only after those.
fn wait_for_release(shared: &Shared) {
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

fn current_deadline(shared: &Shared) -> (Option<Instant>, bool) {
    let t = shared.timing.lock().expect("timing lock");
    let open = t.pondering || t.infinite;
    (if open { None } else { t.deadline }, open)
}

fn run_job<G: UsiGame>(
    job: Job<G>,
    mut search: Search<G>,
    evaluator: Eval<G>,
    shared: Arc<Shared>,
    out: Out,
    start: Instant,
) -> (Search<G>, u32) {
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
            (search, 0)
        }
        JobKind::Search {
            simulations,
            multipv,
            ponder_out,
            resign_percent,
            hopeless,
        } => {
            let (line, hopeless) = search_move(
                &job.game,
                &mut search,
                &*evaluator,
                &shared,
                &out,
                start,
                simulations,
                multipv,
                ponder_out,
                resign_percent,
                hopeless,
            );
            wait_for_release(&shared);
            send(&out, &line);
            (search, hopeless)
        }
    }
}

/// Moves separated by spaces, as USI writes a line of moves.
pub(crate) fn join_moves<M: std::fmt::Display>(moves: &[M]) -> String {
    moves
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[allow(clippy::too_many_arguments)]
fn search_move<G: UsiGame>(
    game: &G,
    search: &mut Search<G>,
    evaluator: &dyn Evaluator<G>,
    shared: &Shared,
    out: &Out,
    start: Instant,
    simulations: Option<u32>,
    multipv: usize,
    ponder_out: bool,
    resign_percent: u64,
    hopeless: u32,
) -> (String, u32) {
    let mut legal = Vec::new();
    game.legal_moves(&mut legal);
    if legal.is_empty() {
        send(out, "info string no legal move (checkmated)");
        return ("bestmove resign".into(), hopeless);
    }
    if game.can_declare_win() {
        send(out, "info string 27-point declaration holds");
        return ("bestmove win".into(), hopeless);
    }

    // A short mate probe first: a forced mate found here is played at once.
    let (deadline, open) = current_deadline(shared);
    let probe = match deadline {
        Some(d) => d.saturating_duration_since(Instant::now()) / 8,
        None => Duration::from_millis(if open { 300 } else { 100 }),
    }
    .min(Duration::from_millis(300));
    let mate_limits = MateLimits {
        deadline: Instant::now().checked_add(probe),
        stop: Some(shared.stop.clone()),
        max_nodes: 200_000,
        max_plies: 31,
    };
    if let Some((line, mate_nodes)) = game.mate_probe(&mate_limits) {
        let ms = start.elapsed().as_millis().max(1);
        send(
            out,
            &format!(
                "info depth {} seldepth {} nodes {} nps {} time {} score mate {} pv {}",
                line.len(),
                line.len(),
                mate_nodes,
                mate_nodes as u128 * 1000 / ms,
                ms,
                line.len(),
                join_moves(&line)
            ),
        );
        let mut s = format!("bestmove {}", line[0]);
        if ponder_out && line.len() > 1 {
            s.push_str(&format!(" ponder {}", line[1]));
        }
        return (s, 0);
    }

    let mut total_sims: u64 = 0;
    let mut last = None;
    let mut reported = false;
    let mut last_info = Instant::now();
    let stm = game.side_to_move();
    loop {
        if stopped(shared) {
            break;
        }
        let (deadline, open) = current_deadline(shared);
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break;
        }
        let left = simulations.map(|s| u64::from(s).saturating_sub(total_sims) as u32);
        if left == Some(0) {
            if open {
                wait_for_release(shared);
                continue;
            }
            break;
        }
        // Short chunks while pondering / infinite so a ponderhit deadline is noticed at
        // once; info lines go out every INFO_INTERVAL.
        let chunk_end = now
            + if open {
                Duration::from_millis(10)
            } else {
                INFO_INTERVAL
            };
        let limits = SearchLimits {
            simulations: Some(left.unwrap_or(u32::MAX)),
            max_nodes: None,
            deadline: Some(deadline.map_or(chunk_end, |d| d.min(chunk_end))),
            stop: Some(shared.stop.clone()),
        };
        let r = match search.search(game, evaluator, &limits) {
            Ok(r) => r,
            Err(e) => {
                send(out, &format!("info string error: search failed: {e}"));
                break;
            }
        };
        total_sims += u64::from(r.simulations);
        let done = matches!(
            r.stop_reason,
            StopReason::Proven | StopReason::Terminal | StopReason::Nodes
        );
        reported = false;
        if last_info.elapsed() >= INFO_INTERVAL {
            send_info(out, &r, start, total_sims, search, multipv, stm);
            last_info = Instant::now();
            reported = true;
        }
        if r.stop_reason == StopReason::Nodes {
            // Say why the move comes before the clock asks for it.
            send(
                out,
                &format!(
                    "info string the tree is full ({} nodes): raise USI_Hash to search longer",
                    search.config().max_nodes
                ),
            );
        }
        last = Some(r);
        if done {
            // `go infinite` / `go ponder` answer only after stop or ponderhit.
            wait_for_release(shared);
            break;
        }
    }
    if let Some(r) = last.as_ref().filter(|_| !reported) {
        send_info(out, r, start, total_sims, search, multipv, stm);
    }

    let Some(r) = last else {
        // Stopped before any search: play the first legal move rather than nothing.
        return (format!("bestmove {}", legal[0]), hopeless);
    };
    let Some(best) = r.best_move else {
        return ("bestmove resign".into(), hopeless);
    };
    let proven_loss = matches!(r.proven, Proven::Win { winner, .. } if winner != stm);
    let low = resign_percent > 0 && f64::from(r.root_value()) * 100.0 < resign_percent as f64;
    let hopeless = if low || proven_loss { hopeless + 1 } else { 0 };
    if resign_percent > 0 && (proven_loss || hopeless >= 2) {
        send(
            out,
            &format!(
                "info string resigning (expected score {:.3})",
                r.root_value()
            ),
        );
        return ("bestmove resign".into(), hopeless);
    }
    let mut s = format!("bestmove {best}");
    if ponder_out && r.pv.len() > 1 && r.pv[0] == best {
        s.push_str(&format!(" ponder {}", r.pv[1]));
    }
    (s, hopeless)
}

fn score_text<M>(r: &shogi_mcts::SearchResult<M>, stm: Color) -> String {
    match r.proven {
        Proven::Win { winner, plies } if winner == stm => format!("mate {}", plies.max(1)),
        Proven::Win { plies, .. } => format!("mate -{}", plies.max(1)),
        Proven::Draw { .. } => "cp 0".into(),
        Proven::Unknown => format!("cp {}", score_to_cp(r.root_value())),
    }
}

fn send_info<G: Game>(
    out: &Out,
    r: &shogi_mcts::SearchResult<G::Move>,
    start: Instant,
    total_sims: u64,
    search: &Search<G>,
    multipv: usize,
    stm: Color,
) {
    let ms = start.elapsed().as_millis().max(1);
    let nps = total_sims as u128 * 1000 / ms;
    let tree = search.tree_size() as u128;
    let hashfull = (tree * 1000 / search.config().max_nodes.max(1) as u128).min(1000);
    let depth = (r.avg_depth.round() as u32).max(1);
    let seldepth = r.max_depth.max(depth);
    let head = format!(
        "info depth {depth} seldepth {seldepth} nodes {} nps {nps} time {ms} hashfull {hashfull}",
        r.root_visits
    );
    if multipv <= 1 {
        let pv = join_moves(&r.pv);
        let score = score_text(r, stm);
        send(out, &format!("{head} score {score} pv {pv}"));
        return;
    }
    let mut order: Vec<usize> = (0..r.moves.len()).filter(|&i| r.visits[i] > 0).collect();
    order.sort_by(|&a, &b| r.visits[b].cmp(&r.visits[a]));
    for (k, &i) in order.iter().take(multipv).enumerate() {
        let score = if k == 0 {
            score_text(r, stm)
        } else {
            format!("cp {}", score_to_cp(r.q[i].unwrap_or(0.5)))
        };
        let pv = if k == 0 && r.pv.first() == Some(&r.moves[i]) {
            join_moves(&r.pv)
        } else {
            r.moves[i].to_string()
        };
        send(
            out,
            &format!("{head} multipv {} score {score} pv {pv}", k + 1),
        );
    }
}

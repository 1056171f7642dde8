//! Matches: paired games (each opening twice, colours swapped) between two players on
//! parallel worker threads, with an optional SPRT that stops the match early, every game
//! saved (USI line always, CSA/KIF for standard shogi) and a summary.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use shogi_game::GameKind;
use shogi_game::{Color, EndReason, Game, Outcome, adjudicate_points};
use shogi_records::record::{GameRecord, MoveRecord};
use shogi_registry::{GameSpec, TOURNAMENT_MAX_PLIES, with_game_type};
use shogi_rules::Position;

use crate::error::{ArenaError, io_err};

mod results_log;
use crate::openings::{Openings, opening_positions};
use crate::player::{
    MatchGame, Mover, PlayerSettings, PlayerSpec, PreparedPlayer, baseline_version,
};
use crate::usi_client::UsiAnswer;
pub use results_log::RESULTS_FILE;
use results_log::ResultsLog;
use shogi_ratings::stats::{EloEstimate, SprtConfig, SprtDecision, SprtState, Tally};

/// Random plies of a match's generated openings unless told otherwise (the gate uses
/// fewer, [`crate::GateConfig`]'s `opening_plies`).
pub const MATCH_OPENING_PLIES: u32 = 6;

/// How a match is played.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Games to play (an odd count plays one opening once).
    pub games: u32,
    /// The game played and its rules: the kind ([`run_match`] plays it with its game
    /// type), the ply cap (a draw there; 0 = no cap), the impasse rule and tai shogi's
    /// rule options.
    pub game: GameSpec,
    /// Adjudicate a game that reaches the ply cap: the side ahead by at least this many
    /// material points ([`Game::material_points`]: rook and bishop 5, other pieces 1, board
    /// plus hand; tai shogi: mobility values) wins; 0 = off (the game is a draw, as the
    /// rules say).
    pub adjudicate_margin: u32,
    /// Start positions.
    pub openings: Openings,
    /// Games played at once (worker threads).
    pub parallel: usize,
    /// Stop early when the SPRT decides.
    pub sprt: Option<SprtConfig>,
    /// Player settings (simulations, device, engine clock).
    pub players: PlayerSettings,
    /// Seed of openings and per-game search seeds.
    pub seed: u64,
    /// Directory the games are written into (`game-NNNN.usi|csa|kif`, and each result as
    /// it comes in [`RESULTS_FILE`]); none = not saved.
    pub games_dir: Option<PathBuf>,
    /// Play only the games `games_dir` lacks when it holds a log of the same match (a
    /// match stopped and started again); a log of another match is then refused. Off:
    /// every game is played and the log starts over.
    pub resume: bool,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            games: 20,
            game: GameSpec::standard(GameKind::Shogi, TOURNAMENT_MAX_PLIES),
            adjudicate_margin: 0,
            openings: Openings::Random {
                plies: MATCH_OPENING_PLIES,
            },
            parallel: 4,
            sprt: None,
            players: PlayerSettings::default(),
            seed: 1,
            games_dir: None,
            resume: false,
        }
    }
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Game number (0-based; games `2k` and `2k + 1` share opening `k`). Its files are
    /// `game-NNNN.*` with NNNN = index + 1, the number `view --game` takes.
    pub index: u32,
    /// Opening number.
    pub opening: u32,
    /// Player A had Black (moved first from the standard side).
    pub a_black: bool,
    /// A's score: 1, 0.5 or 0.
    pub score_a: f64,
    /// `black`, `white` or `draw`.
    pub winner: String,
    /// How it ended (`Checkmate`, `MaxPlies`, `Forfeit`, ...).
    pub reason: String,
    /// For a forfeit: who and why.
    pub forfeit: Option<String>,
    /// Plies played.
    pub plies: u32,
    /// Start position.
    pub start_sfen: String,
    /// Moves in USI notation.
    pub moves: Vec<String>,
    /// Wall time A spent choosing its moves, milliseconds (with the match's parallel
    /// games sharing the machine).
    #[serde(default)]
    pub a_think_ms: f64,
    /// Moves A chose.
    #[serde(default)]
    pub a_moves: u32,
    /// Wall time B spent choosing its moves, milliseconds.
    #[serde(default)]
    pub b_think_ms: f64,
    /// Moves B chose.
    #[serde(default)]
    pub b_moves: u32,
    /// Nodes A searched over the game, as it said ([`crate::Mover::searched`]: a
    /// network player's simulations, a USI engine's `info` lines); 0 where it says none.
    #[serde(default)]
    pub a_nodes: u64,
    /// Nodes B searched over the game.
    #[serde(default)]
    pub b_nodes: u64,
}

/// The outcome of a match, from player A's point of view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchSummary {
    /// Player A (spec).
    pub a: String,
    /// Player B (spec).
    pub b: String,
    /// Variant name.
    pub variant: String,
    /// Games planned.
    pub planned: u32,
    /// All games.
    pub total: Tally,
    /// A's games with Black.
    pub a_black: Tally,
    /// A's games with White.
    pub a_white: Tally,
    /// A's score.
    pub score: f64,
    /// A's Elo over B with its 95% interval and LOS.
    pub elo: EloEstimate,
    /// The SPRT at the end, if one ran.
    pub sprt: Option<SprtState>,
    /// The SPRT decided before all planned games were played.
    pub stopped_early: bool,
    /// The stop flag ended the match.
    pub interrupted: bool,
    /// Games ended by a forfeit.
    pub forfeits: u32,
    /// The game's baseline version ([`crate::player::baseline_version`]: shogi's
    /// [`crate::BASELINE_VERSION`], tai's [`crate::TAI_BASELINE_VERSION`]) when a player
    /// is the `alphabeta` baseline (games cached by rung are reused only while it
    /// matches), else `None`.
    #[serde(default)]
    pub baseline_version: Option<u32>,
    /// Wall time, seconds.
    pub seconds: f64,
    /// A's mean wall time per move, milliseconds (`--parallel` games share the cores, so
    /// compare figures taken at one parallelism).
    #[serde(default)]
    pub a_move_ms: f64,
    /// B's mean wall time per move, milliseconds.
    #[serde(default)]
    pub b_move_ms: f64,
    /// A's nodes searched per second of its thinking, over the games where it said
    /// ([`GameResult::a_nodes`]); 0 where it never did. Beside the time per move, what an
    /// equal-time match gave each player on this machine.
    #[serde(default)]
    pub a_nps: f64,
    /// B's nodes searched per second of its thinking.
    #[serde(default)]
    pub b_nps: f64,
    /// Games read back from an earlier start of the same match ([`MatchConfig::resume`]).
    #[serde(default)]
    pub resumed: u32,
    /// Every game, in order.
    pub games: Vec<GameResult>,
}

impl MatchSummary {
    /// Writes the summary as pretty JSON (temporary file + rename).
    pub fn save_json(&self, path: &std::path::Path) -> Result<(), ArenaError> {
        let mut json = serde_json::to_vec_pretty(self).map_err(|source| ArenaError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        json.push(b'\n');
        shogi_rundir::write_atomic(path, &json).map_err(io_err("write", path))
    }

    /// How the games ended, by A's result: `A won: Checkmate 38, Adjudication 2; drawn:
    /// MaxPlies 1; A lost: Resignation 1` (reasons most frequent first, empty groups left
    /// out). Tells a win by the rules from one by adjudication at the ply cap.
    pub fn endings(&self) -> String {
        let mut groups = Vec::new();
        for (label, score) in [("A won", 1.0), ("drawn", 0.5), ("A lost", 0.0)] {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for g in self.games.iter().filter(|g| g.score_a == score) {
                match counts.iter_mut().find(|(r, _)| *r == g.reason) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((g.reason.as_str(), 1)),
                }
            }
            if counts.is_empty() {
                continue;
            }
            counts.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
            let list: Vec<String> = counts.iter().map(|(r, n)| format!("{r} {n}")).collect();
            groups.push(format!("{label}: {}", list.join(", ")));
        }
        groups.join("; ")
    }

    /// The results table: W/D/L per colour, score, Elo with interval, LOS, SPRT.
    pub fn table(&self) -> String {
        let row = |name: &str, r: &Tally| {
            format!(
                "{name:<12} {:>6} {:>5} {:>5} {:>5} {:>7.1}%\n",
                r.games(),
                r.wins,
                r.draws,
                r.losses,
                100.0 * r.score()
            )
        };
        let mut s = format!("A: {}\nB: {}\n", self.a, self.b);
        s.push_str(&format!(
            "{:<12} {:>6} {:>5} {:>5} {:>5} {:>8}\n",
            "A as", "games", "W", "D", "L", "score"
        ));
        s.push_str(&row("black", &self.a_black));
        s.push_str(&row("white", &self.a_white));
        s.push_str(&row("total", &self.total));
        let e = &self.elo;
        s.push_str(&format!(
            "Elo(A - B) {:+.1} [{:+.1}, {:+.1}] (95%), LOS {:.1}%\n",
            e.elo,
            e.low,
            e.high,
            100.0 * e.los
        ));
        if let Some(st) = &self.sprt {
            s.push_str(&format!(
                "SPRT LLR {:.2} [{:.2}, {:.2}]: {:?}{}\n",
                st.llr,
                st.lower,
                st.upper,
                st.decision,
                if self.stopped_early {
                    " (stopped early)"
                } else {
                    ""
                }
            ));
        }
        s.push_str(&format!(
            "time per move: A {:.1} ms, B {:.1} ms\n",
            self.a_move_ms, self.b_move_ms
        ));
        if self.a_nps > 0.0 || self.b_nps > 0.0 {
            let said = |nps: f64| match nps {
                0.0 => "not said".to_string(),
                nps => format!("{nps:.0}"),
            };
            s.push_str(&format!(
                "nodes per second of thinking: A {}, B {}\n",
                said(self.a_nps),
                said(self.b_nps)
            ));
        }
        if !self.games.is_empty() {
            s.push_str(&format!("endings: {}\n", self.endings()));
        }
        if self.forfeits > 0 {
            s.push_str(&format!("forfeits: {}\n", self.forfeits));
        }
        if let Some(v) = self.baseline_version {
            s.push_str(&format!("alphabeta baseline version {v}\n"));
        }
        if self.interrupted {
            s.push_str(&format!(
                "interrupted after {} of {} games\n",
                self.total.games(),
                self.planned
            ));
        }
        s
    }
}

/// The outcome of a game stopped at the ply limit when the match adjudicates by
/// material: a win for the side at least `margin` points ahead, else the draw.
pub fn adjudicate(position: &Position, outcome: Outcome, margin: u32) -> Outcome {
    adjudicate_points(
        position.material_points(Color::Black),
        position.material_points(Color::White),
        outcome,
        margin,
    )
}

/// Wall time, moves and nodes searched of one side's choices in a game.
#[derive(Clone, Copy, Debug, Default)]
struct Thinking {
    millis: f64,
    moves: u32,
    nodes: u64,
}

/// A finished game: the game, its moves, the outcome, any forfeit reason and each
/// colour's thinking (Black, White).
type Played<G> = (
    G,
    Vec<<G as Game>::Move>,
    Outcome,
    Option<String>,
    [Thinking; 2],
);

/// Plays one game; `None` if `stop` was raised first.
fn play_game<G: MatchGame>(
    spec: &GameSpec,
    start: &G::Start,
    black: &mut dyn Mover<G>,
    white: &mut dyn Mover<G>,
    seed: u64,
    adjudicate_margin: u32,
    stop: &AtomicBool,
) -> Option<Played<G>> {
    let mut game = G::from_start(spec, start);
    let mut moves = Vec::new();
    let mut forfeit = None;
    let mut end = None;
    let mut thinking = [Thinking::default(); 2];
    for color in Color::ALL {
        let mover: &mut dyn Mover<G> = if color == Color::Black {
            &mut *black
        } else {
            &mut *white
        };
        if end.is_none()
            && let Err(e) = mover.new_game(&game, seed.wrapping_add(color.index() as u64 * 7919))
        {
            forfeit = Some(format!("{color:?} forfeits: {e}"));
            end = Some(Outcome::win(color.flip(), EndReason::Forfeit));
        }
    }
    let outcome = loop {
        if let Some(o) = end {
            break o;
        }
        if let Some(o) = game.outcome() {
            break shogi_game::adjudicate(&game, o, adjudicate_margin);
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let side = game.side_to_move();
        let mover: &mut dyn Mover<G> = if side == Color::Black {
            &mut *black
        } else {
            &mut *white
        };
        let asked = Instant::now();
        let answer = mover.choose(&game);
        let spent = &mut thinking[side.index()];
        spent.millis += asked.elapsed().as_secs_f64() * 1000.0;
        spent.moves += 1;
        spent.nodes += mover.searched().unwrap_or(0);
        match answer {
            UsiAnswer::Move(mv) => {
                if let Err(e) = game.play(mv) {
                    forfeit = Some(format!("{side:?} forfeits: illegal move {mv}: {e}"));
                    end = Some(Outcome::win(side.flip(), EndReason::Forfeit));
                    continue;
                }
                moves.push(mv);
                black.observe(mv);
                white.observe(mv);
            }
            UsiAnswer::Resign => end = Some(Outcome::win(side.flip(), EndReason::Resignation)),
            UsiAnswer::DeclareWin => {
                end = Some(if game.can_declare_win() {
                    Outcome::win(side, EndReason::ImpasseDeclaration)
                } else {
                    forfeit = Some(format!("{side:?} forfeits: unjustified win declaration"));
                    Outcome::win(side.flip(), EndReason::Forfeit)
                });
            }
            UsiAnswer::Forfeit(reason) => {
                forfeit = Some(format!("{side:?} forfeits: {reason}"));
                end = Some(Outcome::win(side.flip(), EndReason::Forfeit));
            }
        }
    };
    black.game_over(f64::from(outcome.score_for(Color::Black)));
    white.game_over(f64::from(outcome.score_for(Color::White)));
    Some((game, moves, outcome, forfeit, thinking))
}

fn record_of<G: MatchGame>(
    spec: &GameSpec,
    start: &G::Start,
    moves: &[G::Move],
    outcome: Outcome,
) -> GameRecord {
    GameRecord {
        outcome,
        moves: moves
            .iter()
            .map(|&mv| MoveRecord {
                mv: G::move_code(mv),
                root_value: 0.5,
                full_search: false,
                searched: Vec::new(),
            })
            .collect(),
        ..G::from_start(spec, start).record_start()
    }
}

/// Nodes a second of thinking over games' `(nodes, thinking ms)`, counting only the
/// games where the player said how many nodes it searched; 0 where it never did.
fn nodes_per_second(games: impl Iterator<Item = (u64, f64)>) -> f64 {
    let (nodes, ms) = games
        .filter(|&(nodes, _)| nodes > 0)
        .fold((0u64, 0.0f64), |(n, t), (nodes, ms)| (n + nodes, t + ms));
    if ms > 0.0 {
        nodes as f64 * 1000.0 / ms
    } else {
        0.0
    }
}

/// Mean milliseconds per move over games' `(total ms, moves)`; 0 without moves.
fn mean_move_ms(games: impl Iterator<Item = (f64, u32)>) -> f64 {
    let (ms, moves) = games.fold((0.0, 0u64), |(t, n), (ms, m)| (t + ms, n + u64::from(m)));
    if moves == 0 { 0.0 } else { ms / moves as f64 }
}

/// Tallies per colour and overall from A's point of view.
fn tally(games: &[GameResult]) -> (Tally, Tally, Tally) {
    let (mut total, mut black, mut white) = (Tally::default(), Tally::default(), Tally::default());
    for g in games {
        total.add(g.score_a);
        if g.a_black {
            black.add(g.score_a);
        } else {
            white.add(g.score_a);
        }
    }
    (total, black, white)
}

/// The SPRT's decision after the first of `games` (in the order they finished) at which
/// it stopped the match, or [`SprtDecision::Continue`] when no prefix decides.
fn first_decision(sprt: &SprtConfig, games: &[GameResult]) -> SprtDecision {
    let mut total = Tally::default();
    for g in games {
        total.add(g.score_a);
        let decision = sprt.state(&total).decision;
        if decision != SprtDecision::Continue {
            return decision;
        }
    }
    SprtDecision::Continue
}

/// Game `index` of a match (opening `index / 2`, A playing Black when `a_black`) as the
/// summary lists it: from A's side, with who forfeited and each player's thinking time.
fn game_result<G: MatchGame>(
    index: u32,
    a_black: bool,
    start: &G::Start,
    (_, moves, outcome, forfeit, thinking): &Played<G>,
) -> GameResult {
    let a_color = if a_black { Color::Black } else { Color::White };
    let (a_think, b_think) = (thinking[a_color.index()], thinking[a_color.flip().index()]);
    let forfeit = forfeit.as_ref().map(|f| {
        let who = if f.starts_with(&format!("{a_color:?}")) {
            "A"
        } else {
            "B"
        };
        format!("{who} ({f})")
    });
    GameResult {
        index,
        opening: index / 2,
        a_black,
        score_a: f64::from(outcome.score_for(a_color)),
        winner: match outcome.winner {
            Some(Color::Black) => "black".into(),
            Some(Color::White) => "white".into(),
            None => "draw".into(),
        },
        reason: format!("{:?}", outcome.reason),
        forfeit,
        plies: moves.len() as u32,
        start_sfen: G::start_text(start),
        moves: moves.iter().map(|m| m.to_string()).collect(),
        a_think_ms: a_think.millis,
        a_moves: a_think.moves,
        a_nodes: a_think.nodes,
        b_nodes: b_think.nodes,
        b_think_ms: b_think.millis,
        b_moves: b_think.moves,
    }
}

/// Plays a match between prepared players `a` and `b`. Returns the summary; if `stop`
/// is raised the games in progress are abandoned and the summary says `interrupted`.
pub fn play_match<G: MatchGame>(
    a: &PreparedPlayer<G>,
    b: &PreparedPlayer<G>,
    config: &MatchConfig,
    stop: &AtomicBool,
    report: &Report<'_>,
) -> Result<MatchSummary, ArenaError> {
    let began = Instant::now();
    if let Some(sprt) = &config.sprt {
        sprt.validate().map_err(ArenaError::Config)?;
    }
    let planned = config.games;
    let n_openings = planned.div_ceil(2).max(1) as usize;
    let openings =
        opening_positions::<G>(&config.openings, config.game.kind, n_openings, config.seed)?;
    let (log, done) = games_played_before(&a.spec, &b.spec, config)?;
    let resumed = done.len() as u32;
    let todo: Vec<u32> = (0..planned)
        .filter(|i| !done.iter().any(|g| g.index == *i))
        .collect();
    let books = MatchBooks {
        config,
        report,
        began,
        planned,
        resumed,
        todo,
        next: AtomicU32::new(0),
        halt: AtomicBool::new(false),
        interrupted: AtomicBool::new(false),
        sprt_stop: Mutex::new(None),
        results: Mutex::new(Vec::new()),
        log: Mutex::new(log),
        failure: Mutex::new(None),
    };
    // A resumed match the SPRT had already decided plays nothing more: decided when any
    // prefix of its log was, as the live match decided after each game (the games that
    // were in flight then are logged after the decision and may move the total back).
    if let Some(sprt) = &config.sprt {
        let decision = first_decision(sprt, &done);
        if decision != SprtDecision::Continue {
            *lock(&books.sprt_stop) = Some(decision);
            books.halt.store(true, Ordering::Relaxed);
        }
    }
    books.progress(&done);
    *lock(&books.results) = done;
    // No worker (and no engine started) for games that will not be played.
    let workers = if books.halt.load(Ordering::Relaxed) {
        0
    } else {
        config.parallel.max(1).min(books.todo.len())
    };
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| match_worker(&books, a, b, &openings, stop));
        }
    });
    let MatchBooks {
        failure,
        results,
        sprt_stop,
        interrupted,
        ..
    } = books;
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let games = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let decided = sprt_stop.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut summary = summary_of::<G>(&a.spec, &b.spec, config, games, decided);
    summary.interrupted = interrupted.load(Ordering::Relaxed) && summary.total.games() < planned;
    summary.resumed = resumed;
    summary.seconds = began.elapsed().as_secs_f64();
    Ok(summary)
}

/// A mutex's value, also after a thread panicked holding it (the books stay readable).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the worker threads of one match share: the games still to play, what was
/// played, and why to stop.
struct MatchBooks<'a> {
    config: &'a MatchConfig,
    report: &'a Report<'a>,
    began: Instant,
    planned: u32,
    resumed: u32,
    /// The indices of the games to play, handed out in order through `next`.
    todo: Vec<u32>,
    next: AtomicU32,
    /// Set when no further game may start: a failure or the SPRT's decision.
    halt: AtomicBool,
    /// Set when `stop` was seen.
    interrupted: AtomicBool,
    sprt_stop: Mutex<Option<SprtDecision>>,
    results: Mutex<Vec<GameResult>>,
    log: Mutex<Option<ResultsLog>>,
    failure: Mutex<Option<ArenaError>>,
}

impl MatchBooks<'_> {
    /// The next game's index, or `None` when the match is over, halted or stopped.
    fn next_game(&self, stop: &AtomicBool) -> Option<u32> {
        if stop.load(Ordering::Relaxed) {
            self.interrupted.store(true, Ordering::Relaxed);
            return None;
        }
        if self.halt.load(Ordering::Relaxed) {
            return None;
        }
        self.todo
            .get(self.next.fetch_add(1, Ordering::Relaxed) as usize)
            .copied()
    }

    /// The match cannot go on: `e` is its error.
    fn fail(&self, e: ArenaError) {
        *lock(&self.failure) = Some(e);
        self.halt.store(true, Ordering::Relaxed);
    }

    /// Keeps a played game: its files, its line in the results log, its result, a
    /// progress report, and the SPRT's decision on the games so far. `false` when the
    /// match cannot go on.
    fn keep<G: MatchGame>(
        &self,
        index: u32,
        a_black: bool,
        start: &G::Start,
        played: Played<G>,
    ) -> bool {
        let config = self.config;
        let result = game_result::<G>(index, a_black, start, &played);
        let (_, moves, outcome, _, _) = played;
        if let Some(dir) = &config.games_dir
            && let Err(e) = G::write_game(
                &record_of::<G>(&config.game, start, &moves, outcome),
                dir,
                &format!("game-{:04}", index + 1),
            )
        {
            self.fail(e.into());
            return false;
        }
        let mut all = lock(&self.results);
        if let Some(log) = lock(&self.log).as_mut()
            && let Err(e) = log.append(&result)
        {
            self.fail(e);
            return false;
        }
        all.push(result);
        self.progress(&all);
        if let Some(sprt) = &config.sprt {
            let state = sprt.state(&tally(&all).0);
            if state.decision != SprtDecision::Continue {
                lock(&self.sprt_stop).get_or_insert(state.decision);
                self.halt.store(true, Ordering::Relaxed);
            }
        }
        true
    }

    /// Reports the match's progress after `games`.
    fn progress(&self, games: &[GameResult]) {
        (self.report)(&MatchProgress {
            games: games.len() as u32,
            planned: self.planned,
            resumed: self.resumed,
            total: tally(games).0,
            elapsed: self.began.elapsed(),
        });
    }
}

/// One worker thread of a match: a mover for each player, playing the next game to
/// play until there is none.
fn match_worker<G: MatchGame>(
    books: &MatchBooks<'_>,
    a: &PreparedPlayer<G>,
    b: &PreparedPlayer<G>,
    openings: &[G::Start],
    stop: &AtomicBool,
) {
    let config = books.config;
    let mut ma = a.mover();
    let mut mb = b.mover();
    while let Some(index) = books.next_game(stop) {
        let a_black = index.is_multiple_of(2);
        let start = &openings[(index / 2) as usize % openings.len()];
        let seed = config
            .seed
            .wrapping_mul(0x9e37_79b9)
            .wrapping_add(u64::from(index));
        let (black, white): (&mut dyn Mover<G>, &mut dyn Mover<G>) = if a_black {
            (&mut *ma, &mut *mb)
        } else {
            (&mut *mb, &mut *ma)
        };
        let played = play_game(
            &config.game,
            start,
            black,
            white,
            seed,
            config.adjudicate_margin,
            stop,
        );
        let Some(played) = played else {
            books.interrupted.store(true, Ordering::Relaxed);
            return;
        };
        if !books.keep::<G>(index, a_black, start, played) {
            return;
        }
    }
}

/// A match's summary from its games (in any order): `decided`, the SPRT stopped it.
fn summary_of<G: MatchGame>(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    mut games: Vec<GameResult>,
    decided: Option<SprtDecision>,
) -> MatchSummary {
    games.sort_by_key(|g| g.index);
    let (total, a_black, a_white) = tally(&games);
    MatchSummary {
        a: a.to_string(),
        b: b.to_string(),
        variant: config.game.kind.name().to_string(),
        planned: config.games,
        score: total.score(),
        elo: total.elo(),
        // The decision that stopped the match, though the games still in flight then
        // may move the final count back between the bounds.
        sprt: config.sprt.map(|s| SprtState {
            decision: decided.unwrap_or(s.state(&total).decision),
            ..s.state(&total)
        }),
        stopped_early: decided.is_some() && total.games() < config.games,
        interrupted: false,
        forfeits: games.iter().filter(|g| g.forfeit.is_some()).count() as u32,
        baseline_version: [a, b]
            .iter()
            .any(|s| matches!(s, PlayerSpec::AlphaBeta(_)))
            .then(baseline_version::<G>),
        seconds: 0.0,
        a_move_ms: mean_move_ms(games.iter().map(|g| (g.a_think_ms, g.a_moves))),
        b_move_ms: mean_move_ms(games.iter().map(|g| (g.b_think_ms, g.b_moves))),
        a_nps: nodes_per_second(games.iter().map(|g| (g.a_nodes, g.a_think_ms))),
        b_nps: nodes_per_second(games.iter().map(|g| (g.b_nodes, g.b_think_ms))),
        total,
        a_black,
        a_white,
        resumed: 0,
        games,
    }
}

/// The match's results log (when its games are saved) and the games of this match it
/// already holds ([`MatchConfig::resume`]), those of the games planned only.
fn games_played_before(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
) -> Result<(Option<ResultsLog>, Vec<GameResult>), ArenaError> {
    let Some(dir) = &config.games_dir else {
        return Ok((None, Vec::new()));
    };
    std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    let identity = match_identity(a, b, config);
    let (log, mut done) = ResultsLog::open(dir, &identity, config.resume)?;
    done.retain(|g| g.index < config.games);
    Ok((Some(log), done))
}

/// What decides a match's games, as [`MatchConfig::resume`] compares it: the players,
/// the rules, the openings and the seed; not how many games, how many at once, nor the
/// inference threads and batches that serve a network.
fn match_identity(a: &PlayerSpec, b: &PlayerSpec, config: &MatchConfig) -> String {
    let players = PlayerSettings {
        inference_threads: 0,
        max_batch: 0,
        ..config.players.clone()
    };
    format!(
        "a {a}; b {b}; game {:?}; adjudicate {}; openings {:?}; seed {}; players {players:?}",
        config.game, config.adjudicate_margin, config.openings, config.seed
    )
}

/// A match's standing, reported as it begins (with the games read back from an earlier
/// start) and after each game.
#[derive(Clone, Copy, Debug)]
pub struct MatchProgress {
    /// Games finished, read back ones included.
    pub games: u32,
    /// Games the match plays in all.
    pub planned: u32,
    /// Of `games`, those read back from an earlier start of the match.
    pub resumed: u32,
    /// A's wins, draws and losses so far.
    pub total: Tally,
    /// Time since this start of the match.
    pub elapsed: std::time::Duration,
}

impl MatchProgress {
    /// Time left at this start's pace (none before its first game).
    pub fn time_left(&self) -> Option<std::time::Duration> {
        let played = self.games.saturating_sub(self.resumed);
        (played > 0).then(|| {
            self.elapsed
                .mul_f64(f64::from(self.planned.saturating_sub(self.games)) / f64::from(played))
        })
    }
}

/// What a match calls with its standing ([`MatchProgress`]); it must return quickly
/// (the games' workers wait for it).
pub type Report<'a> = dyn Fn(&MatchProgress) + Sync + 'a;

/// Prepares both players (one batched inference service per network) and plays a match
/// of `config.game` with that game's type. A checkpoint must be for that game.
pub fn run_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    stop: &AtomicBool,
) -> Result<MatchSummary, ArenaError> {
    run_match_reporting(a, b, config, stop, &|_| {})
}

/// [`run_match`], calling `report` as the match begins and after every game.
pub fn run_match_reporting(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    stop: &AtomicBool,
    report: &Report<'_>,
) -> Result<MatchSummary, ArenaError> {
    with_game_type!(config.game.kind, G => run_game_match::<G>(a, b, config, stop, report))
}

/// [`run_match`] with `G`, the type of `config.game`.
fn run_game_match<G: MatchGame>(
    a: &PlayerSpec,
    b: &PlayerSpec,
    config: &MatchConfig,
    stop: &AtomicBool,
    report: &Report<'_>,
) -> Result<MatchSummary, ArenaError> {
    let layout = shogi_registry::layout(config.game.kind);
    let pa = PreparedPlayer::<G>::prepare(a, layout, &config.players)?;
    let mut b_settings = config.players.clone();
    b_settings.usi.options = config.players.usi_options_b.clone();
    let pb = PreparedPlayer::<G>::prepare(b, layout, &b_settings)?;
    play_match(&pa, &pb, config, stop, report)
}

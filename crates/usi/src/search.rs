//! One move's search on the engine's worker thread: the mate probe, then a PUCT root
//! searched in chunks or a Gumbel root searched as whole planned searches, the `info`
//! lines, and the `bestmove` (or resignation) that ends it.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::game::UsiGame;
use shogi_game::{Color, Game};
use shogi_mcts::{
    Evaluator, Proven, RootSelection, Search, SearchLimits, SearchResult, SearchSpeed, StopReason,
};
use shogi_registry::export::join_moves;
use shogi_rules::mate::MateLimits;

use crate::protocol::score_to_cp;
use crate::shared::{
    DEFAULT_SIMULATIONS, GUMBEL_FIRST_SIMULATIONS, INFO_INTERVAL, Out, Shared, clock_before_chunk,
    current_deadline, send, wait_for_release,
};

/// A mate search of at most an eighth of the move's time (300 ms at most): a forced
/// mate it proves is reported (`score mate`) and its `bestmove` line returned.
fn play_probed_mate<G: UsiGame>(
    game: &G,
    shared: &Shared,
    out: &Out,
    start: Instant,
    ponder_out: bool,
) -> Option<String> {
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
    let (line, root_mate_nodes) = game.mate_probe(&mate_limits)?;
    let ms = start.elapsed().as_millis().max(1);
    send(
        out,
        &format!(
            "info depth {} seldepth {} nodes {} nps {} time {} score mate {} pv {}",
            line.len(),
            line.len(),
            root_mate_nodes,
            root_mate_nodes as u128 * 1000 / ms,
            ms,
            line.len(),
            join_moves(&line)
        ),
    );
    let mut s = format!("bestmove {}", line[0]);
    if ponder_out && line.len() > 1 {
        s.push_str(&format!(" ponder {}", line[1]));
    }
    Some(s)
}

/// One move's search: the position, its tree and network, the engine's flags and output,
/// when `go` arrived, its simulation limit and `MultiPV`, and the simulations done so far.
pub(crate) struct MoveSearch<'a, G: UsiGame> {
    pub(crate) game: &'a G,
    pub(crate) search: &'a mut Search<G>,
    /// One per search thread (`Threads`).
    pub(crate) evaluators: &'a [std::sync::Arc<dyn Evaluator<G>>],
    pub(crate) shared: &'a Shared,
    pub(crate) out: &'a Out,
    pub(crate) start: Instant,
    pub(crate) simulations: Option<u32>,
    pub(crate) multipv: usize,
    /// Simulations of this `go` so far.
    pub(crate) total_sims: u64,
}

/// How the move ends: the `bestmove` line, and the resign counter after it.
pub(crate) struct MoveEnd {
    pub(crate) line: String,
    pub(crate) hopeless: u32,
}

impl<G: UsiGame> MoveSearch<'_, G> {
    /// Searches the move: the `bestmove` line and the resign counter (`hopeless`: searches
    /// in a row below `resign_percent`). `speed` is the engine's measured speed, which a
    /// Gumbel root plans with and updates.
    pub(crate) fn play(
        &mut self,
        ponder_out: bool,
        resign_percent: u64,
        hopeless: u32,
        speed: &mut SearchSpeed,
    ) -> MoveEnd {
        let end = |line: String, hopeless: u32| MoveEnd { line, hopeless };
        let game = self.game;
        let mut legal = Vec::new();
        game.legal_moves(&mut legal);
        if legal.is_empty() {
            send(self.out, "info string no legal move (checkmated)");
            return end("bestmove resign".into(), hopeless);
        }
        if game.can_declare_win() {
            send(self.out, "info string 27-point declaration holds");
            return end("bestmove win".into(), hopeless);
        }
        // A short mate probe first: a forced mate found here is played at once.
        if let Some(bestmove) =
            play_probed_mate(game, self.shared, self.out, self.start, ponder_out)
        {
            return end(bestmove, 0);
        }

        let last = if self.search.config().root_selection == RootSelection::Gumbel {
            self.gumbel_searches(speed)
        } else {
            self.puct_searches()
        };

        let Some(r) = last else {
            // Stopped before any search: play the first legal move rather than nothing.
            return end(format!("bestmove {}", legal[0]), hopeless);
        };
        let Some(best) = r.best_move else {
            return end("bestmove resign".into(), hopeless);
        };
        let stm = game.side_to_move();
        let proven_loss = matches!(r.proven, Proven::Win { winner, .. } if winner != stm);
        let low = resign_percent > 0 && f64::from(r.root_value()) * 100.0 < resign_percent as f64;
        let hopeless = if low || proven_loss { hopeless + 1 } else { 0 };
        if resign_percent > 0 && (proven_loss || hopeless >= 2) {
            send(
                self.out,
                &format!(
                    "info string resigning (expected score {:.3})",
                    r.root_value()
                ),
            );
            return end("bestmove resign".into(), hopeless);
        }
        let mut line = format!("bestmove {best}");
        if ponder_out && r.pv.len() > 1 && r.pv[0] == best {
            line.push_str(&format!(" ponder {}", r.pv[1]));
        }
        end(line, hopeless)
    }

    /// Simulations left under `cap` (none: no limit).
    fn left(&self, cap: Option<u32>) -> Option<u32> {
        cap.map(|s| {
            u64::from(s)
                .saturating_sub(self.total_sims)
                .min(u64::from(u32::MAX)) as u32
        })
    }

    /// One search call under `limits`; `None` after an error, which it reports. Says
    /// why when the tree is full (the move then comes before the clock asks for it).
    fn run(&mut self, limits: &SearchLimits) -> Option<SearchResult<G::Move>> {
        let r = match self
            .search
            .search_parallel(self.game, self.evaluators, limits)
        {
            Ok(r) => r,
            Err(e) => {
                send(self.out, &format!("info string error: search failed: {e}"));
                return None;
            }
        };
        self.total_sims += u64::from(r.simulations);
        if r.stop_reason == StopReason::Nodes {
            send(
                self.out,
                &format!(
                    "info string the tree is full ({} nodes): raise USI_Hash to search longer",
                    self.search.config().max_nodes
                ),
            );
        }
        Some(r)
    }

    /// The `info` line(s) of `r`.
    fn info(&self, r: &SearchResult<G::Move>) {
        send_info(
            self.out,
            r,
            self.start,
            self.total_sims,
            self.search,
            self.multipv,
            self.game.side_to_move(),
        );
    }

    /// A PUCT root's move: one tree searched in chunks (short ones while the search is
    /// open-ended, so that `ponderhit` is noticed at once), an `info` line every
    /// [`INFO_INTERVAL`]; the last chunk's result.
    fn puct_searches(&mut self) -> Option<SearchResult<G::Move>> {
        let shared = self.shared;
        let mut last = None;
        let mut reported = false;
        let mut last_info = Instant::now();
        while let Some((deadline, open, now)) = clock_before_chunk(shared) {
            let left = self.left(self.simulations);
            if left == Some(0) {
                if open {
                    wait_for_release(shared);
                    continue;
                }
                break;
            }
            // Short chunks while pondering / infinite so a ponderhit deadline is noticed
            // at once; info lines go out every INFO_INTERVAL.
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
            let Some(r) = self.run(&limits) else {
                break;
            };
            let done = matches!(
                r.stop_reason,
                StopReason::Proven | StopReason::Terminal | StopReason::Nodes
            );
            reported = false;
            if last_info.elapsed() >= INFO_INTERVAL {
                self.info(&r);
                last_info = Instant::now();
                reported = true;
            }
            last = Some(r);
            if done {
                // `go infinite` / `go ponder` answer only after stop or ponderhit.
                wait_for_release(shared);
                break;
            }
        }
        if let Some(r) = last.as_ref().filter(|_| !reported) {
            self.info(r);
        }
        last
    }

    /// A Gumbel root's move. Sequential halving needs its simulations before it starts,
    /// so the move is one or more complete searches of the one tree, each planned for
    /// what is left: the simulation limit; under a clock, the simulations the measured
    /// speed fits into the time left (before the engine has measured its speed,
    /// [`GUMBEL_FIRST_SIMULATIONS`] first); open-ended (`go infinite`, `go ponder` until
    /// `ponderhit`), searches of 64, 128, 256, ... simulations. An `info` line follows
    /// each search. The answer is the last search that ran its plan (one cut by the clock
    /// or by `stop` only when none did).
    fn gumbel_searches(&mut self, speed: &mut SearchSpeed) -> Option<SearchResult<G::Move>> {
        let shared = self.shared;
        let mut open_budget = GUMBEL_FIRST_SIMULATIONS;
        let (mut completed, mut cut) = (None, None);
        loop {
            // Cleared before `stop` is read and the clock looked at: `stop` and
            // `ponderhit` raise the interrupt after their own change, so neither can be
            // missed.
            shared.interrupt.store(false, Ordering::SeqCst);
            let Some((deadline, open, now)) = clock_before_chunk(shared) else {
                break;
            };
            // No limit, no clock and not open-ended (a `go ponder` without a clock, after
            // `ponderhit`): a bare `go`'s budget.
            let cap = self
                .simulations
                .or((!open && deadline.is_none()).then_some(DEFAULT_SIMULATIONS));
            let left = self.left(cap);
            if left == Some(0) {
                if open {
                    wait_for_release(shared);
                    continue;
                }
                break;
            }
            let limit = left.unwrap_or(u32::MAX);
            // `planned`: the search is meant to use up what is left (its time span, if
            // timed); once it has, the move is played.
            let (budget, planned) = match deadline {
                _ if open => {
                    let b = open_budget.min(limit);
                    open_budget = open_budget.saturating_mul(2);
                    (b, None)
                }
                Some(d) => {
                    let span = d.saturating_duration_since(now);
                    match speed.budget(span, limit) {
                        Some(budget) => (budget, Some(span)),
                        None => (GUMBEL_FIRST_SIMULATIONS.min(limit), None),
                    }
                }
                None => (limit, Some(Duration::ZERO)),
            };
            let limits = SearchLimits {
                simulations: Some(budget),
                max_nodes: None,
                deadline,
                stop: Some(shared.interrupt.clone()),
            };
            let Some(r) = self.run(&limits) else {
                break;
            };
            speed.observe(&r);
            self.info(&r);
            let done = matches!(
                r.stop_reason,
                StopReason::Proven | StopReason::Terminal | StopReason::Nodes
            );
            let ran_its_plan = !matches!(r.stop_reason, StopReason::Deadline | StopReason::Stopped);
            if ran_its_plan {
                completed = Some(r);
            } else {
                cut = Some(r);
            }
            // A planned search that ended with over a quarter of its time left (the speed
            // was underestimated) is followed by one planned with the new measurement.
            let time_left = deadline.map_or(Duration::ZERO, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if ran_its_plan && !done && planned.is_some_and(|span| time_left * 4 <= span) {
                break;
            }
            if done {
                // `go infinite` / `go ponder` answer only after stop or ponderhit.
                wait_for_release(shared);
                break;
            }
        }
        completed.or(cut)
    }
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

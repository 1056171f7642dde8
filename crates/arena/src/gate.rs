//! The gate of the training loop: a candidate checkpoint plays the current best; it is
//! promoted (atomic rename into `accepted/`) if it scores at least the threshold or the
//! SPRT accepts H1, otherwise moved to `rejected/`; either way with its `gate.json`, its
//! games under `games/gate-<candidate>/` and a line in the rating history.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use shogi_game::GameKind;
use shogi_registry::{GameSpec, TOURNAMENT_MAX_PLIES};

use crate::error::{ArenaError, io_err};
use crate::matchplay::{MatchConfig, MatchSummary, Report, run_match, run_match_reporting};
use crate::openings::Openings;
use crate::player::{PlayerSettings, PlayerSpec, check_player, checkpoint_game};
use shogi_mcts::RootSettings;
use shogi_ratings::ratings::{FixedRating, RatingEntry, append_rating, load_ratings, rating_of};
use shogi_ratings::stats::{Rating, SprtConfig, SprtDecision, SprtState, Tally};
use shogi_rundir::{RunDir, newest_that_loads, step_of};

/// The SPRT of a gate unless told otherwise: H1 is +35 Elo, not the +10 of
/// [`SprtConfig::default`], because a gate wants clear progress, and 40 games cannot
/// tell 10 Elo from 0.
pub const GATE_SPRT: SprtConfig = SprtConfig {
    elo0: 0.0,
    elo1: 35.0,
    alpha: 0.05,
    beta: 0.05,
};

/// Gate settings. Its games are strength play ([`PlayerSettings::default`]: the
/// simulations of [`shogi_mcts::SearchConfig::for_play`]) at the tournament ply cap,
/// with the root search of `root` (a run's own play search).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GateConfig {
    /// Games per gate (paired: each opening twice, colours swapped). Default 40.
    pub games: u32,
    /// Score the candidate needs to be promoted. Default 0.55 (AlphaGo Zero).
    pub threshold: f64,
    /// Optional SPRT: stops early; H1 promotes, H0 rejects, undecided falls back to the
    /// threshold. Default none.
    pub sprt: Option<SprtConfig>,
    /// MCTS simulations per move. Default: [`PlayerSettings::default`]'s.
    pub simulations: u32,
    /// How both networks' roots search: a run gates with its own play search
    /// (`shogi_run::play_root`), so that the gate and the fixed opponent measure what
    /// `match --root-of RUN` measures. Default: [`RootSettings::default`] (PUCT).
    pub root: RootSettings,
    /// Draw after this many plies. Default [`TOURNAMENT_MAX_PLIES`].
    pub max_plies: u32,
    /// Material lead (points: rook and bishop 5, others 1; tai shogi: mobility values)
    /// that wins a game stopped at `max_plies`; 0 = such games are draws. Default 0.
    pub adjudicate_margin: u32,
    /// Games played at once. Default 8.
    pub parallel_games: usize,
    /// Device of both networks. Default `auto`.
    pub device: String,
    /// libtorch intra-op threads (0 = leave as is). Default 0.
    pub torch_threads: usize,
    /// Random plies of the generated openings (the first opening is the start position).
    /// Default 4.
    pub opening_plies: u32,
    /// Seed of the openings and searches. Default 0.
    pub seed: u64,
    /// A fixed opponent (a player spec such as `alphabeta:depth=2`, `random` or
    /// `usi:...`) that every accepted network also plays, so that the rating history has
    /// a line on a scale that does not move with the run. Default none (off).
    pub fixed_opponent: Option<String>,
    /// Games against the fixed opponent (paired). Default 20.
    pub fixed_games: u32,
    /// The run's game and rule options (its impasse rule, tai shogi's options) as its
    /// config declares them; the gate plays them with its own `max_plies`. `None`: the
    /// checkpoints' game as tournaments play it ([`GameSpec::standard`]). Not part of the
    /// serialized settings: it comes from the run's config.
    #[serde(skip)]
    pub rules: Option<GameSpec>,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            games: 40,
            threshold: 0.55,
            sprt: None,
            simulations: PlayerSettings::default().simulations,
            root: RootSettings::default(),
            max_plies: TOURNAMENT_MAX_PLIES,
            adjudicate_margin: 0,
            parallel_games: 8,
            device: PlayerSettings::default().device,
            torch_threads: 0,
            opening_plies: 4,
            seed: 0,
            fixed_opponent: None,
            fixed_games: 20,
            rules: None,
        }
    }
}

/// The result of gating one candidate (also its `gate.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// Candidate checkpoint name.
    pub candidate: String,
    /// The best network it played.
    pub best: String,
    /// Candidate's training step.
    pub step: u64,
    /// Best's training step.
    pub best_step: u64,
    /// Variant.
    pub variant: String,
    /// Games played (fewer than planned when the SPRT stopped early).
    pub games: u32,
    /// Games planned.
    pub planned: u32,
    /// The candidate's wins, draws and losses.
    #[serde(flatten)]
    pub result: Tally,
    /// The candidate's score and Elo over the best.
    #[serde(flatten)]
    pub rating: Rating,
    /// Likelihood of superiority.
    pub los: f64,
    /// The threshold applied.
    pub threshold: f64,
    /// The SPRT at the end, if configured.
    pub sprt: Option<SprtState>,
    /// Promoted?
    pub accepted: bool,
    /// Elo relative to the first network (the best's plus `elo`).
    pub elo_vs_first: f64,
    /// Lower end (interval half-widths added in quadrature along the chain).
    pub elo_vs_first_low: f64,
    /// Upper end.
    pub elo_vs_first_high: f64,
    /// Games lost by forfeit (should be 0 between networks).
    pub forfeits: u32,
    /// Simulations per move.
    pub simulations: u32,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Where the games were saved.
    pub games_dir: PathBuf,
    /// Where the checkpoint is now (`accepted/...` or `rejected/...`).
    pub moved_to: PathBuf,
    /// An accepted candidate's match against `fixed_opponent`, if configured.
    pub fixed: Option<FixedRating>,
    /// Why the candidate was set aside in `rejected/` without a game: it does not load
    /// ([`set_aside`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Accepted networks newer than `best` that do not load (damaged on disk), each with
    /// why: the candidate played the newest accepted network that loads instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub best_passed_over: Vec<String>,
    /// The newer candidate gated instead: this one was pending beside it and moved to
    /// `rejected/` without a game ([`pass_over`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_over_for: Option<String>,
}

/// Why `candidate` cannot be gated, promoted or served, if so: it does not load (its
/// manifest, its weights or their hash, a non-finite weight) or is not a network of the
/// best network's game. `None` also when the best's own manifest cannot be read: that is
/// not the candidate's fault, and gating it says so.
pub fn unloadable(candidate: &Path, best: &Path) -> Option<String> {
    let best = shogi_model::read_manifest(best).ok()?.meta;
    let expected = shogi_model::Expected {
        architecture: None,
        variant: best.variant,
        feature_version: best.feature_version,
        features: None,
        policy_version: best.policy_version,
    };
    shogi_model::load_checkpoint(candidate, &expected, shogi_model::tch::Device::Cpu)
        .err()
        .map(|e| e.to_string())
}

/// The run's best network for a gate match: the newest accepted network that loads, and
/// the newer ones passed over (`dir: why`). One damaged on disk after it was accepted
/// must not stop the gate for good while an older one can play.
fn best_that_loads(run: &RunDir) -> Result<(u64, PathBuf, Vec<String>), ArenaError> {
    let mut accepted = run
        .accepted_checkpoints()
        .map_err(io_err("list", &run.accepted()))?;
    if accepted.is_empty() {
        return Err(ArenaError::NoBest(run.root().to_path_buf()));
    }
    accepted.reverse();
    let loads = |dir: &Path| -> Result<(), String> {
        let meta = shogi_model::read_manifest(dir)
            .map_err(|e| e.to_string())?
            .meta;
        let expected = shogi_model::Expected {
            architecture: None,
            variant: meta.variant,
            feature_version: meta.feature_version,
            features: None,
            policy_version: meta.policy_version,
        };
        shogi_model::load_checkpoint(dir, &expected, shogi_model::tch::Device::Cpu)
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let describe = |tried: &[(PathBuf, String)]| -> Vec<String> {
        tried
            .iter()
            .map(|(dir, why)| format!("{}: {why}", dir.display()))
            .collect()
    };
    match newest_that_loads(accepted, loads) {
        Ok(found) => Ok((found.step, found.dir, describe(&found.passed_over))),
        Err(tried) => Err(ArenaError::NoLoadableBest {
            run: run.root().to_path_buf(),
            tried: describe(&tried).join("; "),
        }),
    }
}

/// Moves a candidate that does not load into `rejected/` with a `gate.json` that says
/// why ([`GateReport::refused`]): the gate goes on with the next one, and neither a
/// resumed run nor self-play tries it again.
pub fn set_aside(run: &RunDir, candidate: &Path, why: &str) -> Result<GateReport, ArenaError> {
    reject_unplayed(run, candidate, "set aside", |report| {
        report.refused = Some(why.to_string())
    })
}

/// Moves `candidate` into `rejected/` without a game, with a `gate.json` that `mark`
/// says why of; `action` names the move in an I/O error.
fn reject_unplayed(
    run: &RunDir,
    candidate: &Path,
    action: &'static str,
    mark: impl FnOnce(&mut GateReport),
) -> Result<GateReport, ArenaError> {
    let name = name_of(candidate);
    let mut report = GateReport {
        step: step_of(&name).unwrap_or(0),
        candidate: name.clone(),
        moved_to: run.rejected().join(&name),
        ..GateReport::default()
    };
    mark(&mut report);
    if let Ok(Some((best_step, best))) = run.best() {
        report.best = name_of(&best);
        report.best_step = best_step;
    }
    let json = serde_json::to_vec_pretty(&report).expect("a report serialises");
    run.reject(candidate, &json)
        .map_err(io_err(action, candidate))?;
    Ok(report)
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn step_from(path: &Path) -> Result<u64, ArenaError> {
    if let Some(step) = step_of(&name_of(path)) {
        return Ok(step);
    }
    shogi_model::read_manifest(path)
        .map(|m| m.meta.training_step)
        .map_err(|source| ArenaError::Checkpoint {
            path: path.to_path_buf(),
            source,
        })
}

/// Whether a finished gate match promotes the candidate.
pub fn gate_decision(summary: &MatchSummary, config: &GateConfig) -> bool {
    match summary.sprt.map(|s| s.decision) {
        Some(SprtDecision::AcceptH1) => true,
        Some(SprtDecision::AcceptH0) => false,
        _ => summary.score >= config.threshold,
    }
}

/// Gates `candidate` (a checkpoint directory in `run.candidates()`) against the run's
/// best network that loads ([`best_that_loads`]). Promotes or rejects it through the run
/// directory, saves the games under `games/gate-<name>/`, appends to the rating history
/// and redraws `ratings.png`. If `stop` is raised mid-match, returns
/// [`ArenaError::Interrupted`] and leaves the candidate where it is, so a resumed run
/// gates it again.
pub fn gate_candidate(
    run: &RunDir,
    candidate: &Path,
    config: &GateConfig,
    stop: &AtomicBool,
) -> Result<GateReport, ArenaError> {
    gate_against(run, candidate, best_that_loads(run)?, config, stop, &|_| {})
}

fn gate_against(
    run: &RunDir,
    candidate: &Path,
    (best_step, best, best_passed_over): (u64, PathBuf, Vec<String>),
    config: &GateConfig,
    stop: &AtomicBool,
    report: &Report<'_>,
) -> Result<GateReport, ArenaError> {
    let spec = gate_game(config, candidate, &best)?;
    let game = spec.kind;
    // Checked before the gate match, so a bad spec costs no games.
    let fixed_opponent = fixed_opponent(config, game)?;
    let cand_name = name_of(candidate);
    let best_name = name_of(&best);
    let step = step_from(candidate)?;
    let games_dir = run.games().join(format!("gate-{cand_name}"));
    if games_dir.exists() {
        // Left by an interrupted gate of the same candidate.
        std::fs::remove_dir_all(&games_dir).map_err(io_err("remove", &games_dir))?;
    }
    if config.torch_threads > 0 {
        shogi_model::set_num_threads(config.torch_threads);
    }
    let match_config = gate_match(config, spec, &games_dir);
    let (a, b) = (
        PlayerSpec::Checkpoint(candidate.to_path_buf()),
        PlayerSpec::Checkpoint(best.clone()),
    );
    let summary = run_match_reporting(&a, &b, &match_config, stop, report)?;
    if summary.interrupted {
        return Err(ArenaError::Interrupted {
            games: summary.total.games(),
            planned: summary.planned,
        });
    }
    let accepted = gate_decision(&summary, config);
    // An accepted network also plays the fixed opponent (the rating on a fixed scale).
    let fixed = match (&fixed_opponent, accepted) {
        (Some(opponent), true) => Some(play_fixed_opponent(
            run,
            candidate,
            opponent,
            &match_config,
            config,
            stop,
        )?),
        _ => None,
    };
    let ratings = load_ratings(run)?;
    let (base, base_lo, base_hi) = rating_of(&ratings, &best_name);
    let e = summary.elo;
    let elo_vs_first = base + e.elo;
    let lo = (base_lo.powi(2) + (e.elo - e.low).powi(2)).sqrt();
    let hi = (base_hi.powi(2) + (e.high - e.elo).powi(2)).sqrt();
    let dest_dir = if accepted {
        run.accepted()
    } else {
        run.rejected()
    };
    let mut report = GateReport {
        candidate: cand_name.clone(),
        best: best_name.clone(),
        step,
        best_step,
        variant: game.name().to_string(),
        games: summary.total.games(),
        planned: summary.planned,
        result: summary.total,
        rating: Rating::new(summary.score, &e),
        los: e.los,
        threshold: config.threshold,
        sprt: summary.sprt,
        accepted,
        elo_vs_first,
        elo_vs_first_low: elo_vs_first - lo,
        elo_vs_first_high: elo_vs_first + hi,
        forfeits: summary.forfeits,
        simulations: config.simulations,
        seconds: summary.seconds,
        games_dir: games_dir.clone(),
        moved_to: dest_dir.join(&cand_name),
        fixed,
        refused: None,
        best_passed_over,
        passed_over_for: None,
    };
    summary.save_json(&games_dir.join("summary.json"))?;
    report.moved_to = file_verdict(run, candidate, &report)?;
    Ok(report)
}

/// The gate's match between a candidate and the best network: `config`'s games, search
/// and openings, the games kept in `games_dir`.
fn gate_match(config: &GateConfig, game: GameSpec, games_dir: &Path) -> MatchConfig {
    MatchConfig {
        games: config.games.max(1),
        game,
        adjudicate_margin: config.adjudicate_margin,
        openings: Openings::Random {
            plies: config.opening_plies,
        },
        parallel: config.parallel_games.max(1),
        sprt: config.sprt,
        players: PlayerSettings {
            simulations: config.simulations,
            root: config.root.clone(),
            device: config.device.clone(),
            ..PlayerSettings::default()
        },
        seed: config.seed,
        games_dir: Some(games_dir.to_path_buf()),
        // A gate match stopped with its run is played again whole: its best may differ.
        resume: false,
    }
}

/// Writes the gate's verdict into the run: the rating line, then the candidate moved to
/// `accepted/` or `rejected/` with its `gate.json`; returns where it went. The rating
/// line goes first: a kill before the rename leaves the candidate pending, and the
/// re-gate replaces its line (ratings are keyed by candidate), so the history never
/// misses a network the gate moved.
fn file_verdict(
    run: &RunDir,
    candidate: &Path,
    report: &GateReport,
) -> Result<PathBuf, ArenaError> {
    let json = serde_json::to_vec_pretty(report).map_err(|source| ArenaError::Json {
        path: candidate.join("gate.json"),
        source,
    })?;
    append_rating(
        run,
        RatingEntry {
            candidate: report.candidate.clone(),
            step: report.step,
            best: report.best.clone(),
            accepted: report.accepted,
            games: report.games,
            rating: report.rating,
            elo_vs_first: report.elo_vs_first,
            elo_vs_first_low: report.elo_vs_first_low,
            elo_vs_first_high: report.elo_vs_first_high,
            fixed: report.fixed.clone(),
        },
    )?;
    if report.accepted {
        run.promote(candidate, &json)
    } else {
        run.reject(candidate, &json)
    }
    .map_err(io_err("move", candidate))
}

/// The game a gate plays: the candidate's, which must be the best network's and the
/// run's, under the run's rules (`config.rules`) with the gate's ply cap.
fn gate_game(config: &GateConfig, candidate: &Path, best: &Path) -> Result<GameSpec, ArenaError> {
    let game = checkpoint_game(candidate)?;
    let best_game = checkpoint_game(best)?;
    if game != best_game {
        return Err(ArenaError::Config(format!(
            "candidate {} is for {} but the best {} is for {}",
            candidate.display(),
            game,
            best.display(),
            best_game
        )));
    }
    match config.rules {
        Some(rules) if rules.kind != game => Err(ArenaError::Config(format!(
            "the run plays {} but candidate {} is for {game}",
            rules.kind,
            candidate.display()
        ))),
        Some(rules) => Ok(GameSpec {
            max_plies: config.max_plies,
            ..rules
        }),
        None => Ok(GameSpec::standard(game, config.max_plies)),
    }
}

/// The configured fixed opponent, parsed and checked against `game`; `None` when off.
fn fixed_opponent(config: &GateConfig, game: GameKind) -> Result<Option<PlayerSpec>, ArenaError> {
    match &config.fixed_opponent {
        Some(text) if !text.trim().is_empty() => {
            let spec: PlayerSpec = text
                .trim()
                .parse()
                .map_err(|e| ArenaError::Config(format!("gate fixed opponent: {e}")))?;
            check_player(game, &spec)
                .map_err(|e| ArenaError::Config(format!("gate fixed opponent {spec}: {e}")))?;
            Ok(Some(spec))
        }
        _ => Ok(None),
    }
}

/// Plays an accepted candidate against the fixed opponent with the gate's settings
/// (`config.fixed_games` games, no SPRT), saving the games under `games/fixed-NAME/`.
fn play_fixed_opponent(
    run: &RunDir,
    candidate: &Path,
    opponent: &PlayerSpec,
    gate_match: &MatchConfig,
    config: &GateConfig,
    stop: &AtomicBool,
) -> Result<FixedRating, ArenaError> {
    let dir = run.games().join(format!("fixed-{}", name_of(candidate)));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io_err("remove", &dir))?;
    }
    let fixed_config = MatchConfig {
        games: config.fixed_games.max(2),
        sprt: None,
        games_dir: Some(dir.clone()),
        ..gate_match.clone()
    };
    let a = PlayerSpec::Checkpoint(candidate.to_path_buf());
    let s = run_match(&a, opponent, &fixed_config, stop)?;
    if s.interrupted {
        return Err(ArenaError::Interrupted {
            games: s.total.games(),
            planned: s.planned,
        });
    }
    s.save_json(&dir.join("summary.json"))?;
    Ok(FixedRating {
        opponent: opponent.to_string(),
        games: s.total.games(),
        rating: Rating::new(s.score, &s.elo),
    })
}

/// Gates the newest pending candidate that loads against the best. The older pending
/// ones are passed over ([`pass_over`]): the newest holds all their training, and a gate
/// that has fallen behind the learner would otherwise fall further behind, gating
/// older and older networks while self-play waits for a newer best. Candidates newer
/// than the one gated that do not load are set aside ([`set_aside`]) without a game.
/// Stops at the first error (an interruption included), leaving the candidates it had
/// not reached pending.
pub fn gate_pending(
    run: &RunDir,
    config: &GateConfig,
    stop: &AtomicBool,
) -> Result<Vec<GateReport>, ArenaError> {
    gate_pending_reporting(run, config, stop, &|_| {})
}

/// [`gate_pending`], calling `report` with the gate match's standing as it begins and
/// after every game (the fixed opponent's games, if any, are not reported).
pub fn gate_pending_reporting(
    run: &RunDir,
    config: &GateConfig,
    stop: &AtomicBool,
    report: &Report<'_>,
) -> Result<Vec<GateReport>, ArenaError> {
    let pending = run
        .pending_candidates()
        .map_err(io_err("list", &run.candidates()))?;
    let mut reports = Vec::new();
    // The candidate gated, and the network it played.
    let mut gated: Option<(String, PathBuf)> = None;
    for (_, candidate) in pending.into_iter().rev() {
        if let Some((newer, best)) = &gated {
            // One that does not load is set aside as such (and counted), not passed over.
            reports.push(match unloadable(&candidate, best) {
                Some(why) => set_aside(run, &candidate, &why)?,
                None => pass_over(run, &candidate, newer)?,
            });
            continue;
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let best = best_that_loads(run)?;
        if let Some(why) = unloadable(&candidate, &best.1) {
            reports.push(set_aside(run, &candidate, &why)?);
            continue;
        }
        let played = best.1.clone();
        let gate = gate_against(run, &candidate, best, config, stop, report)?;
        gated = Some((gate.candidate.clone(), played));
        reports.push(gate);
    }
    // Oldest first, as the candidates were written.
    reports.reverse();
    Ok(reports)
}

/// Moves a pending candidate older than the one gated (`newer`) into `rejected/` without
/// a game, with a `gate.json` that names the newer one ([`GateReport::passed_over_for`]).
pub fn pass_over(run: &RunDir, candidate: &Path, newer: &str) -> Result<GateReport, ArenaError> {
    reject_unplayed(run, candidate, "pass over", |report| {
        report.passed_over_for = Some(newer.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `gate.json` as the gate wrote it before results and ratings became structs
    /// (flat `wins` .. `elo_high` keys): it must read back, and write the same keys.
    #[test]
    fn gate_json_keeps_its_flat_keys() {
        let text = r#"{"candidate": "step-00016800", "best": "step-00016000", "step": 16800,
            "best_step": 16000, "variant": "minishogi", "games": 40, "planned": 40,
            "wins": 24, "draws": 1, "losses": 15, "score": 0.6125, "elo": 79.5,
            "elo_low": -25.4, "elo_high": 201.6, "los": 0.925, "threshold": 0.55,
            "sprt": null, "accepted": true, "elo_vs_first": 1402.0,
            "elo_vs_first_low": 912.7, "elo_vs_first_high": 1956.9, "forfeits": 0,
            "simulations": 32, "seconds": 2.1, "games_dir": "g", "moved_to": "m",
            "fixed": {"opponent": "alphabeta:depth=2", "games": 20, "score": 0.25,
                      "elo": -190.8, "elo_low": -400.0, "elo_high": -20.0}}"#;
        let report: GateReport = serde_json::from_str(text).unwrap();
        let expected_result = Tally {
            wins: 24,
            draws: 1,
            losses: 15,
        };
        assert_eq!(report.result, expected_result);
        assert_eq!(
            report.rating,
            Rating {
                score: 0.6125,
                elo: 79.5,
                low: -25.4,
                high: 201.6
            }
        );
        assert_eq!(report.fixed.as_ref().unwrap().rating.low, -400.0);
        let again: serde_json::Value = serde_json::to_value(&report).unwrap();
        let original: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(again, original);
    }
}

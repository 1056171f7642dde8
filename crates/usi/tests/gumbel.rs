//! The engine's Gumbel root (`GumbelRoot`) under every kind of `go`, and `RunSearch`: a
//! network of a run searched as that run measures its networks.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Harness;
use shogi_mcts::RootSettings;
use shogi_rules::ShogiGame;
use shogi_usi::{GUMBEL_FIRST_SIMULATIONS, Options, SearchSource};

const T: Duration = Duration::from_secs(60);

/// `nodes N` (root visits) of every search `info` line (not `info string`) in `lines`.
fn visits_of<'a>(lines: impl IntoIterator<Item = &'a String>) -> Vec<u64> {
    lines
        .into_iter()
        .filter(|l| l.starts_with("info depth"))
        .filter_map(|l| l.split(" nodes ").nth(1))
        .filter_map(|t| t.split_whitespace().next()?.parse().ok())
        .collect()
}

fn root_visits(lines: &[(std::time::Instant, String)]) -> Vec<u64> {
    visits_of(lines.iter().map(|(_, l)| l))
}

fn gumbel_engine(extra: &[&str]) -> Harness {
    let mut h = Harness::start(Options::default());
    h.send("setoption name GumbelRoot value 8");
    for line in extra {
        h.send(line);
    }
    h.ready();
    h
}

/// The move the last line names (`bestmove MOVE ...`).
fn best(lines: &[(std::time::Instant, String)]) -> String {
    let last = &lines.last().unwrap().1;
    assert!(last.starts_with("bestmove "), "{last}");
    last.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn a_node_limit_is_one_search_of_that_many_simulations() {
    // One search thread: the deterministic search (checked below).
    let mut h = gumbel_engine(&[
        "setoption name MultiPV value 100",
        "setoption name Threads value 1",
    ]);
    h.send("position startpos");
    h.send("go nodes 200");
    let lines = h.bestmove(T);
    // One sequential halving over the whole budget, reported once: not chunks.
    let visits = root_visits(&lines);
    let rounds = visits.iter().collect::<std::collections::BTreeSet<_>>();
    assert_eq!(rounds.len(), 1, "{lines:?}");
    assert!((200..=202).contains(&visits[0]), "{visits:?}");
    // Only the 8 considered moves of the 30 get visits (a PUCT root with uniform
    // priors spreads 200 simulations over all of them).
    let pv_lines = lines
        .iter()
        .filter(|(_, l)| l.contains(" multipv "))
        .count();
    assert!((2..=8).contains(&pv_lines), "{lines:?}");
    let mv = best(&lines);
    assert_ne!(mv, "resign");
    // The same search twice from a cleared tree chooses the same move: no root noise.
    h.send("usinewgame");
    h.send("position startpos");
    h.send("go nodes 200");
    assert_eq!(best(&h.bestmove(T)), mv);
    h.quit();
}

#[test]
fn the_clock_plans_the_searches_and_is_kept() {
    let mut h = gumbel_engine(&["setoption name ByoyomiMargin value 250"]);
    let mut moves: Vec<String> = Vec::new();
    for ply in 0..4 {
        h.send(&format!("position startpos moves {}", moves.join(" ")));
        let (lines, took) = h.timed_bestmove("go btime 0 wtime 0 byoyomi 700", T);
        assert!(took < Duration::from_millis(700), "took {took:?}");
        let visits = root_visits(&lines);
        if ply == 0 {
            // Speed unknown: a first search of 64 simulations measures it, then one
            // planned for the time left.
            assert!(visits.len() >= 2, "{lines:?}");
            assert!(
                visits[0] <= u64::from(GUMBEL_FIRST_SIMULATIONS) + 2,
                "{visits:?}"
            );
        } else {
            // Speed known: a search planned for the whole budget (and another only if
            // it ended with over a quarter of its time left).
            assert!((1..=3).contains(&visits.len()), "{lines:?}");
            assert!(
                visits[0] > 4 * u64::from(GUMBEL_FIRST_SIMULATIONS),
                "{visits:?}"
            );
        }
        // The planned search is far beyond the first one's 64 at the uniform
        // evaluator's speed.
        assert!(
            *visits.last().unwrap() > 4 * u64::from(GUMBEL_FIRST_SIMULATIONS),
            "{visits:?}"
        );
        moves.push(best(&lines));
    }
    h.quit();
}

#[test]
fn infinite_widens_until_stop_and_answers_with_a_whole_search() {
    let mut h = gumbel_engine(&[]);
    h.send("position startpos moves 7g7f 3c3d");
    h.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    assert!(h.drain().iter().all(|l| !l.starts_with("bestmove")));
    h.ready();
    let (lines, latency) = h.timed_bestmove("stop", T);
    assert!(
        latency < Duration::from_millis(250),
        "stop took {latency:?}"
    );
    // Searches of 64, 128, 256, ... simulations on one tree: its visits keep growing.
    let mut all = visits_of(&h.log);
    all.dedup();
    assert!(all.len() >= 3, "{all:?}");
    assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    assert_ne!(best(&lines), "resign");
    h.quit();
}

#[test]
fn ponderhit_turns_the_open_search_into_one_for_the_clock() {
    let mut h = gumbel_engine(&[
        "setoption name USI_Ponder value true",
        "setoption name USI_Hash value 1024",
        "setoption name ByoyomiMargin value 250",
    ]);
    h.send("position startpos moves 7g7f 3c3d");
    h.send("go ponder btime 0 wtime 0 byoyomi 1000");
    std::thread::sleep(Duration::from_millis(300));
    let pondered = h.drain();
    assert!(pondered.iter().all(|l| !l.starts_with("bestmove")));
    let before = visits_of(&pondered).into_iter().max().unwrap_or(0);
    let (lines, took) = h.timed_bestmove("ponderhit", T);
    assert!(
        took < Duration::from_millis(1000),
        "took {took:?} after ponderhit"
    );
    // The budget is 1000 - 250 = 750 ms from ponderhit, planned at the speed measured
    // while pondering: the engine searches on (at least until a quarter of a planned
    // search's time is left) rather than answering with the open search.
    assert!(
        took >= Duration::from_millis(500),
        "answered {took:?} after ponderhit"
    );
    let after = root_visits(&lines).into_iter().max().unwrap_or(0);
    assert!(
        after > before,
        "{before} visits before ponderhit, {after} after"
    );
    assert_ne!(best(&lines), "resign");
    h.quit();
}

/// A stand-in for the binary's lookup: `.../in-a-run` is a network of run `runs/r`
/// that searches with a Gumbel root of 8 and the safety prior; `.../broken` has an
/// unreadable config; anything else is in no run.
fn lookup(path: &Path) -> Result<Option<(SearchSource, RootSettings)>, String> {
    if path.ends_with("in-a-run") {
        let root = RootSettings {
            gumbel: 8,
            gumbel_captures: true,
            gumbel_safety: 2.0,
            ..RootSettings::default()
        };
        Ok(Some((SearchSource::Run(PathBuf::from("runs/r")), root)))
    } else if path.ends_with("broken") {
        Err("runs/b/config.toml: selfplay.simulations = 0 is out of range".into())
    } else {
        Ok(None)
    }
}

/// Points the engine at the network `path` and returns its lines up to `readyok`.
fn lines_for_model(h: &mut Harness, path: &str) -> Vec<String> {
    h.send(&format!("setoption name ModelPath value {path}"));
    h.ready_lines().into_iter().map(|(_, l)| l).collect()
}

#[test]
fn a_run_network_searches_as_its_run_measures_it() {
    let mut h = Harness::start_with::<ShogiGame>(Options::default(), Some(lookup));
    let lines = lines_for_model(&mut h, "/nowhere/in-a-run");
    assert!(
        lines.iter().any(|l| l
            == "info string search: as run runs/r measures its networks: Gumbel root of 8 moves, winning captures always considered, safety 2 logits a point"),
        "{lines:?}"
    );
    // (The directory holds no network, so the engine says so and plays uniformly.)
    h.send("position startpos");
    h.send("go nodes 100");
    assert_eq!(
        root_visits(&h.bestmove(T)).len(),
        1,
        "a Gumbel root searches once"
    );

    // RunSearch off: the options' PUCT root, and the engine says whose search it is.
    h.send("setoption name RunSearch value false");
    let lines = lines_for_model(&mut h, "/nowhere/else/in-a-run");
    let whose =
        "info string search: the options' (PUCT root), not run runs/r's (Gumbel root of 8 moves";
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(whose) && l.ends_with("RunSearch is off")),
        "{lines:?}"
    );

    // An unreadable run config is reported, and the options' search is used.
    h.send("setoption name RunSearch value true");
    let lines = lines_for_model(&mut h, "/nowhere/broken");
    let error = "info string error: the run's search: runs/b/config.toml: selfplay.simulations = 0";
    assert!(lines.iter().any(|l| l.starts_with(error)), "{lines:?}");
    // A network in no run says nothing about its search.
    let lines = lines_for_model(&mut h, "/nowhere/loose");
    assert!(
        lines.iter().all(|l| !l.starts_with("info string search:")),
        "{lines:?}"
    );
    h.quit();
}

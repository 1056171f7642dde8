//! Matches between the built-in players, external USI test doubles, and the gate on a
//! run directory with tiny fresh networks.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use shogi_arena::{
    ArenaError, GateConfig, GateReport, MatchConfig, Openings, PlayerSettings, PlayerSpec,
    PreparedPlayer, UsiTimeControl, gate_candidate, gate_pending, run_match,
};
use shogi_features::{FEATURE_VERSION, POLICY_VERSION};
use shogi_game::{Game, GameKind};
use shogi_mcts::RootSettings;
use shogi_model::{CheckpointMeta, Model, model_config_for, save_checkpoint, tch};
use shogi_ratings::{SprtConfig, SprtDecision};
use shogi_registry::GameSpec;
use shogi_rules::Variant;
use shogi_rundir::{RunDir, checkpoint_name};

use crate::common::minishogi;

#[test]
fn a_player_against_itself_scores_about_half() {
    let stop = AtomicBool::new(false);
    let config = minishogi(300, 1);
    let s = run_match(&PlayerSpec::Random, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(s.total.games(), 300);
    assert_eq!(s.a_black.games(), 150);
    assert_eq!(s.a_white.games(), 150);
    // 300 games: standard error of the score <= 0.029; allow 3.5 of them.
    assert!((s.score - 0.5).abs() < 0.1, "{}", s.table());
    assert!(s.elo.low < 0.0 && s.elo.high > 0.0, "{}", s.table());
    // Paired games: each opening twice, colours swapped.
    for pair in s.games.chunks(2) {
        assert_eq!(pair[0].start_sfen, pair[1].start_sfen);
        assert!(pair[0].a_black && !pair[1].a_black);
    }
    assert_ne!(s.games[0].start_sfen, s.games[2].start_sfen);
    assert_eq!(s.forfeits, 0);
}

#[test]
fn a_searching_player_beats_the_random_mover() {
    let stop = AtomicBool::new(false);
    let tmp = tempfile::tempdir().unwrap();
    let mut config = minishogi(20, 64);
    config.games_dir = Some(tmp.path().join("games"));
    let s = run_match(&PlayerSpec::Rollout, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(s.total.games(), 20);
    assert!(s.score >= 0.95, "{}", s.table());
    assert!(s.elo.los > 0.99, "{}", s.table());
    // Every game saved (minishogi: the USI line only).
    for i in 0..20 {
        let usi = std::fs::read_to_string(tmp.path().join(format!("games/game-{:04}.usi", i + 1)))
            .unwrap();
        assert!(usi.starts_with("position sfen "), "{usi}");
    }
}

/// The searching players with a noise-free Gumbel root (`--gumbel`, the search self-play
/// trains with) instead of PUCT: whole games, and still far above the random mover.
#[test]
fn a_gumbel_root_searcher_beats_the_random_mover() {
    let stop = AtomicBool::new(false);
    let mut config = minishogi(20, 32);
    config.players.root.gumbel = 4;
    let s = run_match(&PlayerSpec::Rollout, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(s.total.games(), 20);
    assert_eq!(s.forfeits, 0);
    assert!(s.score >= 0.9, "{}", s.table());
}

#[test]
fn a_time_per_move_bounds_the_searching_players() {
    // A PUCT root with no simulation limit searches until the deadline, never stopping
    // before it; a Gumbel root plans its simulations for the speed it measured. Both
    // return a legal move within the 40 ms and a margin for a loaded machine (a thread
    // may wait 100 ms and more for a core while the rest of the suite runs), far below
    // what a search without a deadline would take.
    use shogi_arena::usi_client::UsiAnswer;
    use shogi_game::Game;
    use std::time::{Duration, Instant};
    let game = shogi_rules::ShogiGame::startpos(Variant::Minishogi);
    for gumbel in [0, 4] {
        let settings = PlayerSettings {
            simulations: u32::MAX,
            movetime_ms: Some(40),
            root: RootSettings {
                gumbel,
                ..RootSettings::default()
            },
            device: "cpu".into(),
            ..PlayerSettings::default()
        };
        let player = PreparedPlayer::<shogi_rules::ShogiGame>::prepare(
            &PlayerSpec::Uniform,
            shogi_registry::layout(GameKind::Minishogi),
            &settings,
        )
        .unwrap();
        let mut mover = player.mover();
        mover.new_game(&game, 1).unwrap();
        for i in 0..3 {
            let t = Instant::now();
            let UsiAnswer::Move(mv) = mover.choose(&game) else {
                panic!("no move")
            };
            let took = t.elapsed();
            let mut legal = Vec::new();
            game.legal_moves(&mut legal);
            assert!(legal.contains(&mv), "{mv}");
            assert!(
                took < Duration::from_millis(500),
                "gumbel {gumbel} #{i}: {took:?}"
            );
            if gumbel == 0 {
                assert!(took >= Duration::from_millis(40), "#{i}: {took:?}");
            }
        }
    }
    // Whole games at a time per move: every move is a legal one in time.
    let stop = AtomicBool::new(false);
    let mut config = minishogi(2, 1);
    config.parallel = 1;
    config.players.simulations = u32::MAX;
    config.players.movetime_ms = Some(5);
    let s = run_match(&PlayerSpec::Uniform, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!((s.total.games(), s.forfeits), (2, 0), "{}", s.table());
    // The summary says how long each side thought: every ply is one side's move, the
    // timed searcher thinks about its 5 ms (a proven mate is played at once), the random
    // mover next to nothing.
    for g in &s.games {
        assert_eq!(g.a_moves + g.b_moves, g.plies, "{g:?}");
    }
    assert!(s.a_move_ms >= 3.0, "{}", s.table());
    assert!(s.b_move_ms < s.a_move_ms, "{}", s.table());
    assert!(s.table().contains("time per move: A "), "{}", s.table());
    // And how many nodes: the searcher its simulations, the random mover nothing.
    assert!(
        s.games.iter().all(|g| g.a_nodes > 0 && g.b_nodes == 0),
        "{}",
        s.table()
    );
    assert!(s.a_nps > 0.0 && s.b_nps == 0.0, "{}", s.table());
    assert!(
        s.table().contains("nodes per second of thinking: A ") && s.table().contains("B not said"),
        "{}",
        s.table()
    );
}

#[test]
fn sprt_stops_a_lopsided_match_early() {
    let stop = AtomicBool::new(false);
    let mut config = minishogi(400, 64);
    config.sprt = Some(SprtConfig {
        elo0: 0.0,
        elo1: 50.0,
        alpha: 0.05,
        beta: 0.05,
    });
    let s = run_match(&PlayerSpec::Rollout, &PlayerSpec::Random, &config, &stop).unwrap();
    assert!(s.stopped_early, "{}", s.table());
    assert!(s.total.games() < 100, "{}", s.table());
    assert_eq!(s.sprt.unwrap().decision, SprtDecision::AcceptH1);
}

/// A match the SPRT stopped stays stopped when resumed, even where the games that were
/// still in flight at the decision (logged after it) move the total back between the
/// bounds: the decision is the first prefix of the log that decides, as it was live.
#[test]
fn a_match_the_sprt_stopped_stays_stopped_when_resumed() {
    use shogi_ratings::Tally;
    let stop = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let sprt = SprtConfig {
        elo0: 0.0,
        elo1: 50.0,
        alpha: 0.05,
        beta: 0.05,
    };
    let config = MatchConfig {
        games_dir: Some(dir.path().join("m")),
        resume: true,
        sprt: Some(sprt),
        parallel: 1,
        ..minishogi(400, 64)
    };
    let first = run_match(&PlayerSpec::Rollout, &PlayerSpec::Random, &config, &stop).unwrap();
    assert!(first.stopped_early, "{}", first.table());
    // Losses for A logged after the decision, as many as keep the total undecided.
    let log = dir
        .path()
        .join("m")
        .join(shogi_arena::matchplay::RESULTS_FILE);
    let text = std::fs::read_to_string(&log).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let mut total = first.total;
    let mut extra = String::new();
    let mut index = 1000;
    while sprt.state(&total).decision != SprtDecision::Continue {
        let mut lost = last.clone();
        lost["index"] = serde_json::json!(index);
        lost["score_a"] = serde_json::json!(0.0);
        extra.push_str(&format!("{lost}\n"));
        total = Tally::new(total.wins, total.draws, total.losses + 1);
        index += 1;
    }
    std::fs::write(&log, format!("{}\n{extra}", text.trim_end())).unwrap();
    let config = MatchConfig {
        games: 2000,
        ..config
    };
    let resumed = run_match(&PlayerSpec::Rollout, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(
        resumed.total.games(),
        resumed.resumed,
        "{}",
        resumed.table()
    );
    assert_eq!(resumed.total.games(), first.total.games() + index - 1000);
    assert!(resumed.stopped_early, "{}", resumed.table());
}

#[test]
fn adjudication_gives_a_game_stopped_at_the_ply_limit_to_the_side_ahead_in_material() {
    use shogi_game::{Color, EndReason, Outcome};
    use shogi_rules::Position;
    let at_limit = Outcome::draw(EndReason::MaxPlies);
    // Black took White's rook (5 points each way) and White one pawn: Black +8.
    let p = Position::from_sfen(
        Variant::Shogi,
        "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPP1/1B5R1/LNSGKGSNL b Rp 1",
    )
    .unwrap();
    assert_eq!(
        p.material_points(Color::Black),
        p.material_points(Color::White) + 8
    );
    let adjudicate = shogi_arena::adjudicate;
    assert_eq!(
        adjudicate(&p, at_limit, 8),
        Outcome::win(Color::Black, EndReason::Adjudication)
    );
    assert_eq!(
        adjudicate(&p, at_limit, 9),
        at_limit,
        "lead below the margin"
    );
    assert_eq!(adjudicate(&p, at_limit, 0), at_limit, "0 = off");
    // Only games stopped at the limit are adjudicated.
    let rep = Outcome::draw(EndReason::Repetition);
    assert_eq!(adjudicate(&p, rep, 1), rep);
    // The mirror: White ahead.
    let q = Position::from_sfen(
        Variant::Shogi,
        "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/7R1/LNSGKGSNL w b 1",
    )
    .unwrap();
    assert_eq!(
        adjudicate(&q, at_limit, 5),
        Outcome::win(Color::White, EndReason::Adjudication)
    );

    // In a match: short random games, every one stopped at the limit is decided by the
    // material on its final position, and the result counts in the score.
    let stop = AtomicBool::new(false);
    let mut config = minishogi(40, 1);
    config.game.max_plies = 12;
    config.adjudicate_margin = 1;
    let s = run_match(&PlayerSpec::Random, &PlayerSpec::Random, &config, &stop).unwrap();
    let mut adjudicated = 0;
    for g in &s.games {
        let mut game = shogi_rules::ShogiGame::new(
            Position::from_sfen(Variant::Minishogi, &g.start_sfen).unwrap(),
            shogi_rules::GameRules::default(),
        );
        for m in &g.moves {
            let mv = game.position().parse_usi_move(m).unwrap();
            game.play(mv).unwrap();
        }
        let (b, w) = (
            game.position().material_points(Color::Black),
            game.position().material_points(Color::White),
        );
        match g.reason.as_str() {
            "Adjudication" => {
                adjudicated += 1;
                assert_eq!(g.plies, 12);
                let expected = if b > w { "black" } else { "white" };
                assert_eq!(g.winner, expected, "{g:?}");
                assert_ne!(g.score_a, 0.5);
            }
            "MaxPlies" => assert_eq!(b, w, "{g:?}"),
            _ => {}
        }
    }
    assert!(adjudicated > 0, "{}", s.table());
    // The report says how the games ended, by A's result: read back, it is the games'
    // own count of (result, reason).
    let endings = s.endings();
    assert!(s.table().contains(&format!("endings: {endings}\n")));
    let mut reported = std::collections::BTreeMap::new();
    for group in endings.split("; ") {
        let (label, list) = group.split_once(": ").unwrap();
        for item in list.split(", ") {
            let (reason, n) = item.rsplit_once(' ').unwrap();
            reported.insert((label.to_string(), reason.to_string()), n.parse().unwrap());
        }
    }
    let mut counted = std::collections::BTreeMap::<(String, String), usize>::new();
    for g in &s.games {
        let label = if g.score_a > 0.5 {
            "A won"
        } else if g.score_a < 0.5 {
            "A lost"
        } else {
            "drawn"
        };
        *counted
            .entry((label.to_string(), g.reason.clone()))
            .or_default() += 1;
    }
    assert_eq!(reported, counted, "{endings}");
    assert_eq!(
        counted
            .iter()
            .filter(|((_, r), _)| r == "Adjudication")
            .map(|(_, n)| n)
            .sum::<usize>(),
        adjudicated
    );
}

#[test]
fn a_raised_stop_flag_interrupts_a_match() {
    let stop = AtomicBool::new(true);
    let s = run_match(
        &PlayerSpec::Random,
        &PlayerSpec::Random,
        &minishogi(10, 1),
        &stop,
    )
    .unwrap();
    assert!(s.interrupted);
    assert_eq!(s.total.games(), 0);
}

fn double(mode: &str) -> PlayerSpec {
    // The venv's interpreter, never a system `python3`: with a missing or broken one the
    // crash and mute doubles would "forfeit" without the script having run.
    let python = shogi_testkit::python().display().to_string();
    let script = shogi_testkit::repo_root().join("scripts/usi_doubles/engine.py");
    PlayerSpec::Usi(format!("{python} {} {mode}", script.display()))
}

fn usi_match(a: PlayerSpec, games: u32) -> shogi_arena::MatchSummary {
    let stop = AtomicBool::new(false);
    let tmp = tempfile::tempdir().unwrap();
    let config = MatchConfig {
        games,
        game: GameSpec::standard(GameKind::Shogi, 40),
        adjudicate_margin: 0,
        openings: Openings::Random { plies: 2 },
        parallel: 2,
        sprt: None,
        players: PlayerSettings {
            usi: UsiTimeControl {
                byoyomi_ms: 100,
                margin_ms: 1500,
                handshake_ms: 5000,
                ..UsiTimeControl::default()
            },
            ..PlayerSettings::default()
        },
        seed: 3,
        games_dir: Some(tmp.path().join("g")),
        resume: false,
    };
    let s = run_match(&a, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(s.total.games(), games, "{}", s.table());
    // Standard shogi: CSA and KIF next to the USI line.
    assert!(tmp.path().join("g/game-0001.csa").is_file());
    assert!(tmp.path().join("g/game-0001.kif").is_file());
    s
}

#[test]
fn a_usi_engine_plays_whole_games() {
    let s = usi_match(double("normal"), 4);
    assert_eq!(s.forfeits, 0, "{:?}", s.games);
    assert!(s.games.iter().all(|g| g.plies > 0));
    // The nodes each `go` searched, from the engine's last `info` line: 12 a move (its
    // last move may be a resignation without one).
    for g in &s.games {
        assert!(
            g.a_nodes + 12 >= 12 * u64::from(g.a_moves) && g.a_nodes <= 12 * u64::from(g.a_moves),
            "{g:?}"
        );
    }
    assert!(s.a_nps > 0.0, "{}", s.table());
}

fn assert_all_forfeited_by_a(s: &shogi_arena::MatchSummary, needle: &str) {
    assert_eq!(s.forfeits, s.total.games(), "{:?}", s.games);
    assert_eq!(s.total.losses, s.total.games(), "{}", s.table());
    for g in &s.games {
        assert_eq!(g.reason, "Forfeit");
        let why = g.forfeit.as_deref().unwrap();
        assert!(why.starts_with("A (") && why.contains(needle), "{why}");
    }
}

#[test]
fn a_crashing_usi_engine_forfeits() {
    let s = usi_match(double("crash"), 4);
    // Status 3 is the double's own exit at `go`: the script ran and finished its handshake.
    assert_all_forfeited_by_a(&s, "crashed (exited: exit status: 3)");
}

#[test]
fn an_illegal_move_forfeits() {
    let s = usi_match(double("illegal"), 2);
    assert_all_forfeited_by_a(&s, "illegal move `5i5a`");
}

#[test]
fn a_hanging_usi_engine_forfeits_on_time() {
    let began = std::time::Instant::now();
    let s = usi_match(double("hang"), 2);
    assert_all_forfeited_by_a(&s, "timeout");
    assert!(began.elapsed().as_secs() < 30);
}

#[test]
fn a_mute_engine_or_a_missing_program_forfeits() {
    let s = usi_match(double("mute"), 2);
    assert_all_forfeited_by_a(&s, "timeout");
    let s = usi_match(PlayerSpec::Usi("/nonexistent/engine --flag".into()), 2);
    assert_all_forfeited_by_a(&s, "crashed");
}

fn logged_double(mode: &str, log: &Path) -> PlayerSpec {
    let PlayerSpec::Usi(cmd) = double(mode) else {
        unreachable!()
    };
    PlayerSpec::Usi(format!("{cmd} 0 {}", log.display()))
}

/// [`logged_double`] advertising `variant_option` as its variant option (`none`: no
/// such option).
fn logged_double_offering(mode: &str, log: &Path, variant_option: &str) -> PlayerSpec {
    let PlayerSpec::Usi(cmd) = logged_double(mode, log) else {
        unreachable!()
    };
    PlayerSpec::Usi(format!("{cmd} {variant_option}"))
}

/// The commands the double received, in order, without `position` lines.
/// `config`'s two games of `double` against a random mover, both played (the double
/// forfeits each with an illegal move after the handshake); the lines `double` received,
/// from its `log`.
fn both_games_received(
    double: &PlayerSpec,
    log: &Path,
    config: &MatchConfig,
    stop: &AtomicBool,
) -> Vec<String> {
    let s = run_match(double, &PlayerSpec::Random, config, stop).unwrap();
    assert_eq!(s.total.games(), 2);
    received(log)
}

fn received(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("position"))
        .map(str::to_string)
        .collect()
}

#[test]
fn options_reach_the_engine_between_usiok_and_isready_and_fixed_nodes_go_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (log_a, log_b) = (tmp.path().join("a.log"), tmp.path().join("b.log"));
    let stop = AtomicBool::new(false);
    let config = MatchConfig {
        games: 2,
        game: GameSpec::standard(GameKind::Shogi, 6),
        adjudicate_margin: 0,
        openings: Openings::Random { plies: 2 },
        parallel: 1,
        sprt: None,
        players: PlayerSettings {
            usi: UsiTimeControl {
                byoyomi_ms: 2000,
                margin_ms: 3000,
                handshake_ms: 5000,
                nodes: Some(1234),
                options: vec![
                    ("USI_Hash".into(), "64".into()),
                    ("Threads".into(), "1".into()),
                ],
                ..UsiTimeControl::default()
            },
            usi_options_b: vec![("MultiPV".into(), "1".into())],
            ..PlayerSettings::default()
        },
        seed: 3,
        games_dir: None,
        resume: false,
    };
    let s = run_match(
        &logged_double("normal", &log_a),
        &logged_double("normal", &log_b),
        &config,
        &stop,
    )
    .unwrap();
    assert_eq!(s.forfeits, 0, "{:?}", s.games);
    let a = received(&log_a);
    assert_eq!(
        a[..4],
        [
            "usi",
            "setoption name USI_Hash value 64",
            "setoption name Threads value 1",
            "isready"
        ],
        "{a:?}"
    );
    // Standard shogi: no UCI_Variant although the double advertises it.
    assert!(!a.iter().any(|l| l.contains("UCI_Variant")), "{a:?}");
    let gos: Vec<_> = a.iter().filter(|l| l.starts_with("go")).collect();
    assert!(!gos.is_empty());
    assert!(gos.iter().all(|l| *l == "go nodes 1234"), "{gos:?}");
    let b = received(&log_b);
    assert_eq!(
        b[..3],
        ["usi", "setoption name MultiPV value 1", "isready"],
        "{b:?}"
    );
}

/// Two minishogi games against an engine double, one engine process at a time (the
/// doubles write one log), on a fast clock; `usi`'s depth and options as given.
fn minishogi_one_engine_at_a_time(usi: UsiTimeControl) -> MatchConfig {
    let mut config = minishogi(2, 1);
    config.parallel = 1;
    config.players.usi = UsiTimeControl {
        byoyomi_ms: 100,
        margin_ms: 2000,
        handshake_ms: 5000,
        ..usi
    };
    config
}

#[test]
fn a_minishogi_match_selects_the_variant_where_the_engine_offers_it() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("a.log");
    let stop = AtomicBool::new(false);
    let config = minishogi_one_engine_at_a_time(UsiTimeControl {
        depth: Some(3),
        options: vec![("USI_Hash".into(), "8".into())],
        ..UsiTimeControl::default()
    });
    // The double plays standard shogi only: it forfeits with an illegal move, after
    // the handshake this test is about.
    let a = both_games_received(&logged_double("illegal", &log), &log, &config, &stop);
    // The match reads the engine's options once before its first game.
    assert_eq!(
        a[..6],
        [
            "usi",
            "quit",
            "usi",
            "setoption name UCI_Variant value minishogi",
            "setoption name USI_Hash value 8",
            "isready"
        ],
        "{a:?}"
    );
    assert!(a.iter().any(|l| l == "go depth 3"), "{a:?}");
}

/// Fairy-Stockfish (a largeboards build, the one that also plays standard shogi) names
/// its variant option `USI_Variant` in USI mode; an engine with neither name is refused
/// before the first game, naming the options, rather than forfeiting every game.
#[test]
fn a_minishogi_match_finds_usi_variant_and_refuses_an_engine_without_a_variant_option() {
    let tmp = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let mut config = minishogi_one_engine_at_a_time(UsiTimeControl::default());
    let log = tmp.path().join("fairy.log");
    let double = logged_double_offering("illegal", &log, "USI_Variant");
    let a = both_games_received(&double, &log, &config, &stop);
    assert!(
        a.iter()
            .any(|l| l == "setoption name USI_Variant value minishogi"),
        "{a:?}"
    );
    assert!(!a.iter().any(|l| l.contains("UCI_Variant")), "{a:?}");

    let log = tmp.path().join("none.log");
    let err = run_match(
        &logged_double_offering("illegal", &log, "none"),
        &PlayerSpec::Random,
        &config,
        &stop,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("cannot be told to play minishogi")
            && err.contains("USI_Variant")
            && err.contains("UCI_Variant")
            && err.contains("USI_Hash"),
        "{err}"
    );
    // Refused at the handshake: no game was started.
    assert!(!received(&log).iter().any(|l| l.starts_with("go")));
    // Set by hand, any option name is the user's choice.
    config.players.usi.options = vec![("UCI_Variant".into(), "minishogi".into())];
    assert!(
        run_match(
            &logged_double_offering("illegal", &log, "none"),
            &PlayerSpec::Random,
            &config,
            &stop,
        )
        .is_ok()
    );
}

#[test]
fn usi_option_text_is_checked() {
    use shogi_arena::parse_usi_option;
    assert_eq!(
        parse_usi_option("USI_Hash=256").unwrap(),
        ("USI_Hash".to_string(), "256".to_string())
    );
    assert_eq!(parse_usi_option("EvalDir=").unwrap().1, "");
    for bad in ["USI_Hash", "=3", "two words=1"] {
        assert!(parse_usi_option(bad).is_err(), "{bad}");
    }
}

/// A run directory with an initial network accepted and two pending candidates (steps
/// 100 and 200); the temporary directory lives as long as the first value.
fn run_with_two_candidates() -> (tempfile::TempDir, RunDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let run = RunDir::new(tmp.path().join("run"));
    run.create().unwrap();
    tiny_net(&run.accepted(), 0, 1);
    let c1 = tiny_net(&run.candidates(), 100, 2);
    let c2 = tiny_net(&run.candidates(), 200, 3);
    (tmp, run, c1, c2)
}

fn tiny_net(dir: &Path, step: u64, seed: i64) -> PathBuf {
    tch::manual_seed(seed);
    let cfg = model_config_for(Variant::Minishogi, 1, 8);
    let model = Model::new(&cfg, tch::Device::Cpu);
    let path = dir.join(checkpoint_name(step));
    let meta = CheckpointMeta {
        architecture: cfg,
        variant: "minishogi".into(),
        feature_version: FEATURE_VERSION,
        features: Default::default(),
        policy_version: POLICY_VERSION,
        training_step: step,
        samples_seen: 0,
        parent: None,
        play: None,
        run_seconds: None,
    };
    save_checkpoint(&path, &model.vs, &meta).unwrap();
    path
}

fn gate_config(threshold: f64) -> GateConfig {
    GateConfig {
        games: 4,
        threshold,
        simulations: 8,
        max_plies: 60,
        parallel_games: 2,
        device: "cpu".into(),
        torch_threads: 1,
        ..GateConfig::default()
    }
}

#[test]
fn the_gate_promotes_rejects_and_rates() {
    let (_tmp, run, c1, c2) = run_with_two_candidates();
    let stop = AtomicBool::new(false);

    // A raised stop flag: an error, and the candidate stays pending.
    let raised = AtomicBool::new(true);
    let err = gate_candidate(&run, &c1, &gate_config(0.0), &raised).unwrap_err();
    assert!(matches!(err, ArenaError::Interrupted { .. }), "{err}");
    assert!(c1.join("manifest.json").is_file());
    assert!(!c1.join("gate.json").exists());
    assert!(!run.ratings_csv().exists());

    // Threshold 0: promoted.
    let r1 = gate_candidate(&run, &c1, &gate_config(0.0), &stop).unwrap();
    assert!(r1.accepted);
    assert_eq!(
        (r1.candidate.as_str(), r1.best.as_str()),
        ("step-00000100", "step-00000000")
    );
    assert_eq!(r1.step, 100);
    assert_eq!(r1.result.wins + r1.result.draws + r1.result.losses, 4);
    assert_eq!(r1.forfeits, 0);
    assert_eq!(r1.elo_vs_first, r1.rating.elo);
    assert_eq!(run.best().unwrap().unwrap().0, 100);
    assert_eq!(
        std::fs::read_to_string(run.best_pointer()).unwrap(),
        "accepted/step-00000100\n"
    );
    let on_disk: GateReport = serde_json::from_slice(
        &std::fs::read(run.accepted().join("step-00000100/gate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk.candidate, r1.candidate);
    assert!(on_disk.accepted);
    assert!(
        run.games()
            .join("gate-step-00000100/game-0003.usi")
            .is_file()
    );
    assert!(
        run.games()
            .join("gate-step-00000100/summary.json")
            .is_file()
    );

    // Threshold above 1: rejected, kept with its result; plays the new best.
    let r2 = gate_candidate(&run, &c2, &gate_config(1.01), &stop).unwrap();
    assert!(!r2.accepted);
    assert_eq!(r2.best, "step-00000100");
    assert!(run.rejected().join("step-00000200/gate.json").is_file());
    assert!(run.pending_candidates().unwrap().is_empty());
    assert_eq!(run.best().unwrap().unwrap().0, 100);
    // The chain: Elo vs first = the best's + this match's.
    assert!((r2.elo_vs_first - (r1.elo_vs_first + r2.rating.elo)).abs() < 1e-9);
    assert!(r2.elo_vs_first_low < r2.elo_vs_first && r2.elo_vs_first_high > r2.elo_vs_first);

    let csv = std::fs::read_to_string(run.ratings_csv()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[1].starts_with("step-00000100,100,step-00000000,true,4,"));
    assert!(lines[2].starts_with("step-00000200,200,step-00000100,false,4,"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.ratings_json()).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    let png = std::fs::read(run.ratings_png()).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

/// A gate that falls behind gates the newest candidate that loads and passes over the
/// older ones, so its backlog never grows; a newer one that does not load is set aside.
#[test]
fn gate_pending_gates_the_newest_and_passes_over_the_older() {
    let tmp = tempfile::tempdir().unwrap();
    let run = RunDir::new(tmp.path().join("run"));
    run.create().unwrap();
    let stop = AtomicBool::new(false);
    // No best yet: an error, nothing moves.
    tiny_net(&run.candidates(), 300, 5);
    let err = gate_pending(&run, &gate_config(0.0), &stop).unwrap_err();
    assert!(matches!(err, ArenaError::NoBest(_)), "{err}");
    tiny_net(&run.accepted(), 0, 4);
    tiny_net(&run.candidates(), 200, 6);
    // The newest and the oldest are damaged on disk: every weight file cut to half.
    for (step, seed) in [(100, 7), (400, 8)] {
        let damaged = tiny_net(&run.candidates(), step, seed);
        for entry in std::fs::read_dir(&damaged).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "safetensors") {
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
            }
        }
    }
    let reports = gate_pending(&run, &gate_config(0.0), &stop).unwrap();
    let what: Vec<(&str, u32, Option<&str>, bool)> = reports
        .iter()
        .map(|r| {
            (
                r.candidate.as_str(),
                r.games,
                r.passed_over_for.as_deref(),
                r.refused.is_some(),
            )
        })
        .collect();
    assert_eq!(
        what,
        [
            ("step-00000100", 0, None, true),
            ("step-00000200", 0, Some("step-00000300"), false),
            ("step-00000300", 4, None, false),
            ("step-00000400", 0, None, true),
        ]
    );
    assert_eq!(reports[2].best, "step-00000000");
    assert_eq!(run.best().unwrap().unwrap().0, 300);
    for name in ["step-00000100", "step-00000200", "step-00000400"] {
        let json = std::fs::read_to_string(run.rejected().join(name).join("gate.json")).unwrap();
        assert!(
            json.contains(if name == "step-00000200" {
                "passed_over_for"
            } else {
                "refused"
            }),
            "{json}"
        );
    }
    assert!(
        gate_pending(&run, &gate_config(0.0), &stop)
            .unwrap()
            .is_empty()
    );
    // With the gate keeping up, each candidate is gated against the best before it.
    tiny_net(&run.candidates(), 500, 9);
    let reports = gate_pending(&run, &gate_config(0.0), &stop).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(
        (reports[0].candidate.as_str(), reports[0].best.as_str()),
        ("step-00000500", "step-00000300")
    );
}

#[test]
fn tai_shogi_matches_play_through_the_same_arena() {
    use shogi_tai::TaiGame;
    let stop = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let config = MatchConfig {
        games_dir: Some(dir.path().to_path_buf()),
        openings: Openings::Random { plies: 2 },
        game: GameSpec::standard(GameKind::Tai, 16),
        ..minishogi(4, 8)
    };
    let s = run_match(&PlayerSpec::Uniform, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(s.variant, "tai");
    assert_eq!(s.total.games(), 4);
    assert_eq!(s.forfeits, 0, "{}", s.table());
    for g in &s.games {
        // Every game replays from its start under the same rules.
        let mut game = TaiGame::new(
            shogi_tai::Position::from_sfen(&g.start_sfen).unwrap(),
            shogi_tai::TaiRules {
                max_plies: 16,
                ..shogi_tai::TaiRules::default()
            },
        );
        for m in &g.moves {
            let mv = shogi_game::Game::parse_move(&game, m).expect("a legal move");
            shogi_game::Game::play_unchecked(&mut game, mv);
        }
        assert!(shogi_game::Game::outcome(&game).is_some());
        assert!(
            dir.path()
                .join(format!("game-{:04}.txt", g.index + 1))
                .exists()
        );
    }
    // The arena's USI client speaks shogi and minishogi only.
    let err = run_match(
        &PlayerSpec::Usi("true".into()),
        &PlayerSpec::Random,
        &config,
        &stop,
    )
    .unwrap_err();
    assert!(err.to_string().contains("USI client speaks shogi"), "{err}");
    // The same check, before anything is loaded (the gate's fixed opponent).
    let usi = PlayerSpec::Usi("true".into());
    let err = shogi_arena::check_player(GameKind::Tai, &usi).unwrap_err();
    assert!(
        err.to_string()
            .contains("USI client speaks shogi and minishogi only, not tai"),
        "{err}"
    );
    let alphabeta: PlayerSpec = "alphabeta:depth=1".parse().unwrap();
    for game in [GameKind::Shogi, GameKind::Minishogi, GameKind::Tai] {
        shogi_arena::check_player(game, &alphabeta).unwrap();
        shogi_arena::check_player(game, &PlayerSpec::Random).unwrap();
    }
    shogi_arena::check_player(GameKind::Shogi, &usi).unwrap();
    shogi_arena::check_player(GameKind::Minishogi, &usi).unwrap();

    // Tai's own baseline plays through the same arena and records its version.
    let s = run_match(&alphabeta, &PlayerSpec::Random, &config, &stop).unwrap();
    assert_eq!(s.total.games(), 4);
    assert_eq!(s.forfeits, 0, "{}", s.table());
    assert_eq!(
        s.baseline_version,
        Some(shogi_baseline::TAI_BASELINE_VERSION),
        "{}",
        s.table()
    );
    assert!(s.games.iter().all(|g| g.moves.len() <= 16));
}

#[test]
fn an_accepted_network_is_also_rated_against_the_fixed_opponent() {
    let (_tmp, run, c1, c2) = run_with_two_candidates();
    let stop = AtomicBool::new(false);
    let config = GateConfig {
        fixed_opponent: Some("alphabeta:depth=1".into()),
        fixed_games: 2,
        ..gate_config(0.0)
    };
    // A bad spec is refused before any game.
    let bad = GateConfig {
        fixed_opponent: Some("alphabeta:depth=zero".into()),
        ..config.clone()
    };
    let err = gate_candidate(&run, &c1, &bad, &stop).unwrap_err();
    assert!(err.to_string().contains("not a number"), "{err}");
    assert!(c1.join("manifest.json").is_file());
    // So is a run whose config declares another game than its checkpoints'.
    let other = GateConfig {
        rules: Some(GameSpec::standard(GameKind::Shogi, 0)),
        ..config.clone()
    };
    let err = gate_candidate(&run, &c1, &other, &stop).unwrap_err();
    assert!(err.to_string().contains("the run plays shogi"), "{err}");
    assert!(c1.join("manifest.json").is_file());

    let r1 = gate_candidate(&run, &c1, &config, &stop).unwrap();
    assert!(r1.accepted);
    let f = r1
        .fixed
        .clone()
        .expect("an accepted network plays the fixed opponent");
    assert_eq!((f.opponent.as_str(), f.games), ("alphabeta:depth=1", 2));
    assert!(
        f.rating.low <= f.rating.elo && f.rating.elo <= f.rating.high,
        "{f:?}"
    );
    assert!(
        run.games()
            .join("fixed-step-00000100/summary.json")
            .is_file()
    );
    // A rejected one does not.
    let r2 = gate_candidate(
        &run,
        &c2,
        &GateConfig {
            threshold: 1.01,
            ..config
        },
        &stop,
    )
    .unwrap();
    assert!(!r2.accepted && r2.fixed.is_none());
    let csv = std::fs::read_to_string(run.ratings_csv()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].ends_with(
        ",fixed_opponent,fixed_games,fixed_score,fixed_elo,fixed_elo_low,fixed_elo_high"
    ));
    assert!(lines[1].contains(",alphabeta:depth=1,2,"), "{csv}");
    assert!(lines[2].ends_with(",,,,,"), "{csv}");
    assert!(run.ratings_png().is_file());
}

/// A match stopped at any point and started again with the same settings plays only
/// the games it lacks, and ends with the games an uninterrupted match has; a log of
/// another match is refused; without `resume` every game is played again.
#[test]
fn a_stopped_match_resumes_where_its_log_ends() {
    let stop = AtomicBool::new(false);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (PlayerSpec::Uniform, PlayerSpec::Random);
    let config = |games, seed| MatchConfig {
        games_dir: Some(dir.path().join("m")),
        resume: true,
        seed,
        ..minishogi(games, 4)
    };
    let whole = run_match(&a, &b, &config(6, 5), &stop).unwrap();
    assert_eq!((whole.total.games(), whole.resumed), (6, 0));
    // Killed after its first three games, the fourth's line cut short.
    let log = dir
        .path()
        .join("m")
        .join(shogi_arena::matchplay::RESULTS_FILE);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_by_key(|line| {
        serde_json::from_str::<serde_json::Value>(line).unwrap()["index"].as_u64()
    });
    let cut = &lines[4][..lines[4].len() / 2];
    std::fs::write(&log, format!("{}\n{cut}", lines[..4].join("\n"))).unwrap();
    // The games themselves (not the time each move took).
    let games = |s: &shogi_arena::MatchSummary| -> Vec<(u32, String, Vec<String>)> {
        s.games
            .iter()
            .map(|g| (g.index, g.winner.clone(), g.moves.clone()))
            .collect()
    };
    let resumed = run_match(&a, &b, &config(6, 5), &stop).unwrap();
    assert_eq!((resumed.total.games(), resumed.resumed), (6, 3));
    assert_eq!(games(&resumed), games(&whole), "the same games, in order");
    // More games asked: only the new ones are played.
    let more = run_match(&a, &b, &config(8, 5), &stop).unwrap();
    assert_eq!((more.total.games(), more.resumed), (8, 6));
    assert_eq!(games(&more)[..6], games(&whole)[..]);
    // Another match into the same directory is refused; without resume it starts over.
    let err = run_match(&a, &b, &config(8, 6), &stop).unwrap_err();
    assert!(err.to_string().contains("another match"), "{err}");
    let again = MatchConfig {
        resume: false,
        ..config(2, 6)
    };
    let fresh = run_match(&a, &b, &again, &stop).unwrap();
    assert_eq!((fresh.total.games(), fresh.resumed), (2, 0));
}

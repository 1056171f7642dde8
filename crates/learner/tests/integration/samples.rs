//! Sample construction from records: policy targets, value targets, mirroring.

use crate::common;

use shogi_features::FeatureSet;
use shogi_game::Game;
use shogi_learner::{SampleConfig, samples_from_record};
use shogi_mcts::{SearchConfig, UniformEvaluator};
use shogi_records::record::GameRecord;
use shogi_records::variant_from_name;
use shogi_registry::RecordGame;
use shogi_rules::{Position, ShogiGame};
use shogi_selfplay::play::{PlayConfig, play_game};
use shogi_testkit::mirror_sfen;

fn game(seed: u64) -> GameRecord {
    common::minishogi_game(seed, 60, 16)
}

#[test]
fn policy_and_value_targets() {
    let record = game(1);
    let samples = samples_from_record(&record, &SampleConfig::default()).unwrap();
    let variant = variant_from_name(&record.variant).unwrap();
    // Replay alongside to check each sample against its position.
    let mut next = samples.iter();
    let mut k = 0;
    ShogiGame::replay_each(&record, |g, m| {
        if m.full_search && !m.searched.is_empty() {
            let s = next.next().expect("a sample for every full search");
            k += 1;
            let pos = g.position();
            let side = pos.side_to_move();
            let sum: f32 = s.policy.iter().map(|&(_, p)| p).sum();
            assert!((sum - 1.0).abs() < 1e-4, "policy sums to {sum}");
            let legal: std::collections::HashSet<usize> = pos
                .legal_moves()
                .iter()
                .filter_map(|&mv| shogi_features::policy_index(variant, side, mv))
                .collect();
            for (i, &p) in s.dense_policy().iter().enumerate() {
                if p != 0.0 {
                    assert!(legal.contains(&i), "target at non-legal index {i}");
                }
            }
            let expect = match record.outcome.winner {
                None => [0.0, 1.0, 0.0],
                Some(w) if w == side => [1.0, 0.0, 0.0],
                Some(_) => [0.0, 0.0, 1.0],
            };
            assert_eq!(s.wdl, expect);
            let mut planes = vec![0.0; s.layout.input_size()];
            shogi_features::encode(
                pos,
                FeatureSet::Pieces,
                g.repetitions(),
                g.ply(),
                &mut planes,
            );
            assert_eq!(s.dense_planes(), planes);
        }
    })
    .unwrap();
    assert!(next.next().is_none(), "samples without a full search");
    assert!(k > 0);
}

#[test]
fn q_blend_mixes_root_value() {
    let record = game(2);
    let blend = |q_blend| SampleConfig {
        q_blend,
        ..SampleConfig::default()
    };
    let a = samples_from_record(&record, &blend(0.0)).unwrap();
    let b = samples_from_record(&record, &blend(1.0)).unwrap();
    let roots: Vec<f32> = record
        .moves
        .iter()
        .filter(|m| m.full_search && !m.searched.is_empty())
        .map(|m| m.root_value)
        .collect();
    for ((x, y), r) in a.iter().zip(&b).zip(roots) {
        assert_eq!(x.policy, y.policy);
        assert!((y.wdl[0] - r).abs() < 1e-6 && y.wdl[1] == 0.0);
    }
}

/// Mirroring a sample's planes is mirroring its position, for every feature set (the
/// attack planes of a mirrored position are the mirrored attack planes).
#[test]
fn mirrored_sample_equals_mirrored_position() {
    for features in FeatureSet::ALL {
        mirrored_sample_equals_mirrored_position_with(features);
    }
}

fn mirrored_sample_equals_mirrored_position_with(features: FeatureSet) {
    let record = game(3);
    let variant = variant_from_name(&record.variant).unwrap();
    let config = SampleConfig {
        features,
        ..SampleConfig::default()
    };
    let samples = samples_from_record(&record, &config).unwrap();
    // Walk the game; for each sampled position encode the mirrored position directly.
    let mut next = samples.iter();
    ShogiGame::replay_each(&record, |g, m| {
        if m.full_search && !m.searched.is_empty() {
            let s = next.next().expect("a sample for every full search");
            let mirrored = s.mirrored();
            let mpos = Position::from_sfen(variant, &mirror_sfen(&g.position().to_sfen())).unwrap();
            let mut planes = vec![0.0; s.layout.input_size()];
            shogi_features::encode(&mpos, features, g.repetitions(), g.ply(), &mut planes);
            assert_eq!(
                mirrored.dense_planes(),
                planes,
                "{features} ply {}",
                g.ply()
            );
            assert_eq!(mirrored.mirrored(), *s);
            let sum: f32 = mirrored.policy.iter().map(|&(_, p)| p).sum();
            assert!((sum - 1.0).abs() < 1e-4);
        }
    })
    .unwrap();
}

#[test]
fn tai_shogi_records_give_sparse_samples() {
    use shogi_registry::NetGame;
    use shogi_tai::{TaiGame, TaiMove, TaiRules};
    let rules = TaiRules {
        max_plies: 6,
        ..TaiRules::default()
    };
    let search = SearchConfig {
        simulations: 16,
        tree_batch: 4,
        ..SearchConfig::alphazero()
    };
    let record = play_game(
        TaiGame::startpos(rules),
        &search,
        &PlayConfig::default(),
        &UniformEvaluator::default(),
        5,
    )
    .unwrap()
    .record;
    let samples = samples_from_record(&record, &SampleConfig::default()).unwrap();
    assert_eq!(samples.len(), 6);
    let mut g = TaiGame::startpos(rules);
    for (s, m) in samples.iter().zip(&record.moves) {
        let mut planes = vec![0.0; s.layout.input_size()];
        g.encode_planes(&s.layout, &mut planes);
        assert_eq!(s.dense_planes(), planes);
        let sum: f32 = s.policy.iter().map(|&(_, p)| p).sum();
        assert!((sum - 1.0).abs() < 1e-4);
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        let indices: Vec<u32> = legal
            .iter()
            .map(|&mv| g.move_index(mv).unwrap() as u32)
            .collect();
        assert!(s.policy.iter().all(|(i, _)| indices.contains(i)));
        // Tai shogi is not mirror-symmetric: no mirroring.
        assert_eq!(s.mirrored(), *s);
        g.play_unchecked(TaiMove::from_code(m.mv).unwrap());
    }
    // Tai shogi offers no attack planes: its records refuse them by name.
    let attacks = SampleConfig {
        features: FeatureSet::Attacks,
        ..SampleConfig::default()
    };
    let err = samples_from_record(&record, &attacks)
        .unwrap_err()
        .to_string();
    assert!(err.contains("tai has no attacks feature set"), "{err}");
}

/// The material target on a hand-made minishogi game: Black's rook takes the lone pawn
/// (5 + 1 points against 1, then 6 against 0), and each sample's target is the side to
/// move's (own - opponent's) / (own + opponent's) `material_plies` later, clamped to the
/// game's end.
#[test]
fn material_targets_on_a_hand_made_game() {
    use shogi_game::{Color, EndReason, Outcome};
    use shogi_records::record::{MoveRecord, SearchedMove};
    let mut record = GameRecord {
        variant: "minishogi".into(),
        start_sfen: "4k/5/2p2/2R2/K4 b - 1".into(),
        max_plies: 0,
        impasse: 0,
        outcome: Outcome::win(Color::Black, EndReason::Resignation),
        resignation_disabled: false,
        moves: Vec::new(),
    };
    let mut game = ShogiGame::replay_start(&record).unwrap();
    for text in ["3d3c", "1a1b", "5e4e"] {
        let mv = game
            .parse_move(text)
            .unwrap_or_else(|| panic!("{text} is legal"));
        let code = ShogiGame::move_code(mv);
        record.moves.push(MoveRecord {
            mv: code,
            root_value: 0.5,
            full_search: true,
            searched: vec![SearchedMove {
                mv: code,
                visits: 1,
                target: 1.0,
            }],
        });
        game.play_unchecked(mv);
    }
    let targets = |material_plies| -> Vec<f32> {
        let config = SampleConfig {
            material_plies,
            ..SampleConfig::default()
        };
        samples_from_record(&record, &config)
            .unwrap()
            .iter()
            .map(|s| s.material)
            .collect()
    };
    let close = |a: Vec<f32>, b: [f32; 3]| {
        assert!(
            a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6),
            "{a:?} vs {b:?}"
        );
    };
    // Before the capture Black has 5 against 1: (5 - 1) / 6. After it, 6 against 0.
    close(targets(0), [4.0 / 6.0, -1.0, 1.0]);
    close(targets(1), [1.0, -1.0, 1.0]);
    close(targets(8), [1.0, -1.0, 1.0]);
    // Valued by mobility the rook is 16 and the pawn 1 (1 in hand too): (16 - 1) / 17.
    let mobility: Vec<f32> = samples_from_record(
        &record,
        &SampleConfig {
            material_plies: 0,
            material_scale: shogi_game::MaterialScale::Mobility,
            ..SampleConfig::default()
        },
    )
    .unwrap()
    .iter()
    .map(|s| s.material)
    .collect();
    close(mobility, [15.0 / 17.0, -1.0, 1.0]);
    // learner.material_exchange: before the capture Black's rook can take the hanging
    // pawn (a 2-point swing: off White's board, into Black's hand), so the balance
    // already counts it, (5 - 1 + 2) / 6; the later positions have nothing to take.
    let exchange = |material_plies| -> Vec<f32> {
        samples_from_record(
            &record,
            &SampleConfig {
                material_plies,
                material_exchange: true,
                ..SampleConfig::default()
            },
        )
        .unwrap()
        .iter()
        .map(|s| s.material)
        .collect()
    };
    close(exchange(0), [1.0, -1.0, 1.0]);
    close(exchange(8), [1.0, -1.0, 1.0]);
    // The mirrored sample keeps its target.
    let samples = samples_from_record(&record, &SampleConfig::default()).unwrap();
    assert_eq!(samples[0].mirrored().material, samples[0].material);

    // learner.material_value blends the material outcome into the value target: Black
    // (who wins) is 4/6 ahead before the capture, White is -1 after it.
    let blended = samples_from_record(
        &record,
        &SampleConfig {
            material_plies: 0,
            material_value: 0.5,
            ..SampleConfig::default()
        },
    )
    .unwrap();
    let expect = |result: [f32; 3], material: f32| -> [f32; 3] {
        let m = (shogi_learner::sample::MATERIAL_VALUE_GAIN * material).tanh();
        let target = [(1.0 + m) / 2.0, 0.0, (1.0 - m) / 2.0];
        [0, 1, 2].map(|k| 0.5 * result[k] + 0.5 * target[k])
    };
    let want = [
        expect([1.0, 0.0, 0.0], 4.0 / 6.0),
        expect([0.0, 0.0, 1.0], -1.0),
        expect([1.0, 0.0, 0.0], 1.0),
    ];
    for (sample, want) in blended.iter().zip(want) {
        assert!(
            sample
                .wdl
                .iter()
                .zip(want)
                .all(|(x, y)| (x - y).abs() < 1e-6),
            "{:?} vs {want:?}",
            sample.wdl
        );
        assert!((sample.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    // The first sample's target moved toward the material, away from the bare result.
    assert!(blended[0].wdl[0] < 1.0 && blended[0].wdl[0] > 0.99);
    // Without the blend the value target is the game result alone.
    assert_eq!(samples[0].wdl, [1.0, 0.0, 0.0]);

    // learner.material_gain scales the balance inside the tanh: White's sample (a
    // loss, one point behind) reads 0.5 * 0 + 0.5 * (1 - tanh(g * 1)) / 2 as its win.
    for gain in [0.5f32, 2.0] {
        let scaled = samples_from_record(
            &record,
            &SampleConfig {
                material_plies: 0,
                material_value: 0.5,
                material_gain: gain,
                ..SampleConfig::default()
            },
        )
        .unwrap();
        let m = (-gain).tanh();
        let want_win = 0.25 * (1.0 + m);
        assert!(
            (scaled[1].wdl[0] - want_win).abs() < 1e-6,
            "gain {gain}: {:?}, want a win share of {want_win}",
            scaled[1].wdl
        );
    }
}

/// The opponent-policy target of each sample is what the next ply's mover chose: that
/// position's search targets where it was searched in full, else the move played there;
/// none after the game's last move, and none unless asked for. Mirroring carries it.
#[test]
fn the_opponent_policy_target_is_the_next_plys_choice() {
    let mut record = game(4);
    // Some plies searched cheaply: their reply target is the move played.
    for m in record.moves.iter_mut().skip(3).step_by(4) {
        m.full_search = false;
    }
    let variant = variant_from_name(&record.variant).unwrap();
    let plain = samples_from_record(&record, &SampleConfig::default()).unwrap();
    assert!(plain.iter().all(|s| s.opponent_policy.is_empty()));
    let config = SampleConfig {
        opponent_policy: true,
        ..SampleConfig::default()
    };
    let samples = samples_from_record(&record, &config).unwrap();
    assert_eq!(samples.len(), plain.len());
    // Each ply's expected choice, and the ply of each sample.
    let mut own = plain.iter();
    let (mut chosen, mut sampled_plies) = (Vec::new(), Vec::new());
    ShogiGame::replay_each(&record, |g, m| {
        if m.full_search && !m.searched.is_empty() {
            sampled_plies.push(chosen.len());
            chosen.push(own.next().unwrap().policy.clone());
        } else {
            let mv = ShogiGame::move_from_code(m.mv).unwrap();
            let side = g.position().side_to_move();
            let index = shogi_features::policy_index(variant, side, mv).unwrap();
            chosen.push(vec![(index as u32, 1.0)]);
        }
    })
    .unwrap();
    let mut cheap_replies = 0;
    for ((s, p), &ply) in samples.iter().zip(&plain).zip(&sampled_plies) {
        assert_eq!((&s.policy, s.wdl), (&p.policy, p.wdl), "ply {ply}");
        match chosen.get(ply + 1) {
            Some(reply) => {
                assert_eq!(&s.opponent_policy, reply, "ply {ply}");
                cheap_replies += usize::from(!record.moves[ply + 1].full_search);
            }
            None => assert!(s.opponent_policy.is_empty(), "the last ply has no reply"),
        }
        let mirrored = s.mirrored();
        assert_eq!(mirrored.mirrored(), *s);
        let sum: f32 = mirrored.opponent_policy.iter().map(|&(_, p)| p).sum();
        assert!(s.opponent_policy.is_empty() || (sum - 1.0).abs() < 1e-4);
        assert!(mirrored.opponent_policy.windows(2).all(|w| w[0].0 < w[1].0));
    }
    assert!(
        cheap_replies > 0,
        "the test covers replies that were not searched"
    );
}

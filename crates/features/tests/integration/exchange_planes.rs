//! The exchange planes of [`FeatureSet::Exchanges`]: after exactly the
//! [`FeatureSet::Attacks`] planes, each piece carries what the other side wins by taking
//! it. Checked on hand-worked positions, and on random playouts (shogi, every handicap
//! start, minishogi) against the rules' reverse attack query: a piece nothing attacks
//! reads 0, every other piece the best static exchange over the attackers that query
//! finds, never more than its swing (its value off the board plus its unpromoted value
//! into the hand), for both sides, whoever is to move; the planes are 0 off the pieces.

use crate::common;

use crate::common::cell;
use shogi_features::{EXCHANGE_SCALE, FeatureSet, encode, input_planes};
use shogi_rules::{HANDICAPS, MOBILITY_VALUE, Move, PieceKind, Position, Square, Variant};

fn planes(pos: &Position, features: FeatureSet) -> Vec<f32> {
    let area = (pos.variant().size() as usize).pow(2);
    let mut out = vec![0.0; input_planes(pos.variant(), features) * area];
    encode(pos, features, 1, 40, &mut out);
    out
}

/// The two exchange planes' values at `sq` (side to move's gain, opponent's gain) in
/// `pos`'s [`FeatureSet::Exchanges`] encoding `all`.
fn exchange_in(all: &[f32], pos: &Position, sq: Square) -> (f32, f32) {
    let v = pos.variant();
    let area = (v.size() as usize).pow(2);
    let first = input_planes(v, FeatureSet::Attacks);
    let c = cell(pos, sq);
    (all[first * area + c], all[(first + 1) * area + c])
}

/// The same, encoding `pos` first.
fn exchange_at(pos: &Position, sq: Square) -> (f32, f32) {
    exchange_in(&planes(pos, FeatureSet::Exchanges), pos, sq)
}

fn swing(kind: PieceKind) -> u32 {
    MOBILITY_VALUE[kind.index()] + MOBILITY_VALUE[kind.unpromote().index()]
}

fn scaled(gain: u32) -> f32 {
    (gain as f32 / EXCHANGE_SCALE).min(1.0)
}

#[test]
fn plane_counts_and_name() {
    assert_eq!(input_planes(Variant::Shogi, FeatureSet::Exchanges), 84);
    assert_eq!(input_planes(Variant::Minishogi, FeatureSet::Exchanges), 64);
    assert_eq!("exchanges".parse(), Ok(FeatureSet::Exchanges));
    // The scale is the largest swing: a promoted rook or bishop taken.
    let largest = PieceKind::ALL
        .into_iter()
        .filter(|&k| k != PieceKind::King)
        .map(swing)
        .max()
        .unwrap();
    assert_eq!(largest as f32, EXCHANGE_SCALE);
}

/// Black to move; White's gold on 5e hangs to the rook on 5h (12 of 36), and Black's
/// rook on 5f hangs to that gold (32 of 36). White to move in the same position sees the
/// same two threats from its side, on the turned board.
#[test]
fn a_hanging_piece_reads_its_swing_from_either_side() {
    let sq = |s: &str| Square::from_usi(s, Variant::Shogi).unwrap();
    let black = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4g4/4R4/9/9/4K4 b - 1").unwrap();
    assert_eq!(exchange_at(&black, sq("5e")), (scaled(12), 0.0));
    assert_eq!(exchange_at(&black, sq("5f")), (0.0, scaled(32)));
    assert_eq!(exchange_at(&black, sq("5a")), (0.0, 0.0));
    let white = Position::from_sfen(Variant::Shogi, "4k4/9/9/9/4g4/4R4/9/9/4K4 w - 1").unwrap();
    assert_eq!(exchange_at(&white, sq("5f")), (scaled(32), 0.0));
    assert_eq!(exchange_at(&white, sq("5e")), (0.0, scaled(12)));
    // A defended gold: only the silver's capture pays (gold 12 - silver 10 + pawn 2).
    let defended =
        Position::from_sfen(Variant::Shogi, "4k4/9/9/4p4/4g4/5S3/9/4R4/4K4 b - 1").unwrap();
    assert_eq!(exchange_at(&defended, sq("5e")), (scaled(4), 0.0));
    // The start position has nothing to take: both planes are empty.
    let start = Position::startpos(Variant::Shogi);
    let all = planes(&start, FeatureSet::Exchanges);
    let first = input_planes(Variant::Shogi, FeatureSet::Attacks) * 81;
    assert!(all[first..].iter().all(|&x| x == 0.0));
}

#[test]
fn exchange_planes_agree_with_the_attack_query_on_playouts() {
    let mut starts = vec![Position::startpos(Variant::Shogi)];
    starts.extend(
        HANDICAPS
            .iter()
            .map(|(name, _)| Position::handicap(name).unwrap()),
    );
    let mut positions = common::capture_biased_playouts(&starts, 3, 120, 0.5, 11);
    positions.extend(common::capture_biased_playouts(
        &[Position::startpos(Variant::Minishogi)],
        3,
        80,
        0.5,
        12,
    ));
    let (mut hanging, mut defended) = (0, 0);
    for pos in &positions {
        let v = pos.variant();
        let area = (v.size() as usize).pow(2);
        let attacks = planes(pos, FeatureSet::Attacks);
        let exchanges = planes(pos, FeatureSet::Exchanges);
        assert_eq!(
            &exchanges[..attacks.len()],
            &attacks[..],
            "{}",
            pos.to_sfen()
        );
        let us = pos.side_to_move();
        let mut nonzero = 0;
        let n = v.size();
        for sq in (0..n).flat_map(|file| (0..n).map(move |rank| Square::new(file, rank))) {
            let Some(piece) = pos.piece_at(sq) else {
                continue;
            };
            let taker = piece.color.flip();
            let attackers = pos.attackers_to(sq, taker);
            let defenders = pos.attackers_to(sq, piece.color);
            let want = if attackers.is_empty() {
                0.0
            } else {
                let best = attackers
                    .into_iter()
                    .map(|from| pos.exchange_gain(Move::normal(from, sq, false), &MOBILITY_VALUE))
                    .max()
                    .unwrap()
                    .max(0) as u32;
                // Nothing defends and nothing of the owner's stands behind an attacker
                // (an x-ray would defend once the attacker leaves): won whole.
                if defenders.is_empty() && best == swing(piece.kind) {
                    hanging += 1;
                } else if !defenders.is_empty() {
                    defended += 1;
                }
                assert!(best <= swing(piece.kind) || piece.kind == PieceKind::King);
                scaled(best)
            };
            let (ours, theirs) = exchange_in(&exchanges, pos, sq);
            let (got, other) = if taker == us {
                (ours, theirs)
            } else {
                (theirs, ours)
            };
            assert_eq!(got, want, "{} at {sq:?} ({piece:?})", pos.to_sfen());
            assert_eq!(
                other,
                0.0,
                "{} at {sq:?}: the owner's own plane",
                pos.to_sfen()
            );
            if got != 0.0 {
                nonzero += 1;
            }
        }
        // Nothing off the pieces: every non-zero exchange cell is a piece's square.
        let first = input_planes(v, FeatureSet::Attacks) * area;
        let cells = exchanges[first..].iter().filter(|&&x| x != 0.0).count();
        assert_eq!(cells, nonzero, "{}", pos.to_sfen());
    }
    assert!(
        hanging > 200 && defended > 200,
        "{hanging} hanging, {defended} defended"
    );
}

//! The attack planes of [`FeatureSet::Attacks`] against two independent computations:
//!
//! - standard shogi, plane for plane, against dlshogi's feature builder in cshogi
//!   (`scripts/oracle/cshogi_attacks.py`, run in the project's venv), on positions from
//!   biased random playouts from the start and every handicap start;
//! - shogi and minishogi against the rules' reverse attack query
//!   (`Position::attackers_to`, which looks from the target square back to its
//!   attackers, not from each piece forward as the encoder does).
//!
//! Both also check that the first planes are exactly the [`FeatureSet::Pieces`] planes.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common;

use crate::common::cell;
use shogi_features::{
    ATTACK_COUNT_PLANES, FeatureSet, MOVE_NUMBER_SCALE, encode, input_planes, piece_kinds,
};
use shogi_rules::{HANDICAPS, Position, Variant};

/// Positions from random playouts that prefer captures (so hands fill and pieces
/// promote), `plies` plies from each start, every position kept.
fn playout_positions(
    variant: Variant,
    starts: &[Position],
    plies: usize,
    seed: u64,
) -> Vec<Position> {
    let out = common::capture_biased_playouts(starts, 4, plies, 0.6, seed);
    assert_eq!(out[0].variant(), variant);
    out
}

fn shogi_positions() -> Vec<Position> {
    let mut starts = vec![Position::startpos(Variant::Shogi)];
    starts.extend(
        HANDICAPS
            .iter()
            .map(|(name, _)| Position::handicap(name).unwrap()),
    );
    playout_positions(Variant::Shogi, &starts, 160, 7)
}

fn encode_both(pos: &Position) -> (Vec<f32>, Vec<f32>) {
    let v = pos.variant();
    let area = (v.size() as usize).pow(2);
    let mut pieces = vec![0.0; input_planes(v, FeatureSet::Pieces) * area];
    let mut attacks = vec![0.0; input_planes(v, FeatureSet::Attacks) * area];
    encode(pos, FeatureSet::Pieces, 1, 100, &mut pieces);
    encode(pos, FeatureSet::Attacks, 1, 100, &mut attacks);
    (pieces, attacks)
}

/// The attack planes (after the pieces planes) as squares-per-plane sets of cells.
fn attack_cells(pos: &Position, attacks: &[f32]) -> Vec<Vec<usize>> {
    let v = pos.variant();
    let area = (v.size() as usize).pow(2);
    let first = input_planes(v, FeatureSet::Pieces);
    (first..input_planes(v, FeatureSet::Attacks))
        .map(|p| {
            (0..area)
                .filter(|&c| {
                    let x = attacks[p * area + c];
                    assert!(x == 0.0 || x == 1.0, "plane {p} cell {c}: {x}");
                    x == 1.0
                })
                .collect()
        })
        .collect()
}

#[test]
fn plane_counts() {
    assert_eq!(input_planes(Variant::Shogi, FeatureSet::Attacks), 82);
    assert_eq!(input_planes(Variant::Minishogi, FeatureSet::Attacks), 62);
    assert_eq!("attacks".parse(), Ok(FeatureSet::Attacks));
    assert!(
        "planes"
            .parse::<FeatureSet>()
            .unwrap_err()
            .contains("pieces | attacks")
    );
}

/// The encoder's forward attacks (each piece's attack set) equal the rules' reverse
/// query (the attackers of each square), kind by kind and in the counts, and the planes
/// before them are the pieces planes.
#[test]
fn attack_planes_agree_with_the_reverse_attack_query() {
    let mini_starts = [Position::startpos(Variant::Minishogi)];
    let mut positions = playout_positions(Variant::Minishogi, &mini_starts, 120, 3);
    positions.extend(shogi_positions().into_iter().step_by(7));
    let mut checks = 0;
    for pos in &positions {
        let v = pos.variant();
        let kinds = piece_kinds(v);
        let (pieces, attacks) = encode_both(pos);
        assert_eq!(attacks[..pieces.len()], pieces[..], "{}", pos.to_sfen());
        assert_eq!(pieces[pieces.len() - 1], 100.0 / MOVE_NUMBER_SCALE);
        let got = attack_cells(pos, &attacks);
        let mut want = vec![Vec::new(); got.len()];
        let us = pos.side_to_move();
        let per_side = kinds.len() + ATTACK_COUNT_PLANES;
        for (s, side) in [us, us.flip()].into_iter().enumerate() {
            for sq in pos.board_mask() {
                let attackers = pos.attackers_to(sq, side);
                for from in attackers {
                    let kind = pos.piece_at(from).unwrap().kind;
                    let k = kinds.iter().position(|&x| x == kind).unwrap();
                    want[s * per_side + k].push(cell(pos, sq));
                }
                for t in 0..ATTACK_COUNT_PLANES {
                    if attackers.count() as usize > t {
                        want[s * per_side + kinds.len() + t].push(cell(pos, sq));
                    }
                }
            }
        }
        if pos.in_check() {
            want[2 * per_side] = (0..(v.size() as usize).pow(2)).collect();
            checks += 1;
        }
        for w in &mut want {
            w.sort_unstable();
            w.dedup();
        }
        assert_eq!(got, want, "{}", pos.to_sfen());
    }
    assert!(
        positions.len() > 1000 && checks > 20,
        "{} positions, {checks} checks",
        positions.len()
    );
}

/// Plane for plane against dlshogi's features (cshogi), standard shogi.
#[test]
fn attack_planes_agree_with_dlshogi_features() {
    let positions = shogi_positions();
    let python = shogi_testkit::python();
    let script = shogi_testkit::repo_root().join("scripts/oracle/cshogi_attacks.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    let sfens: String = positions.iter().map(|p| p.to_sfen() + "\n").collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(sfens.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "{} failed", script.display());
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), positions.len());
    let (mut attacked, mut checks) = (0usize, 0usize);
    for (pos, line) in positions.iter().zip(lines) {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields[0], pos.to_sfen());
        let (_, attacks) = encode_both(pos);
        let got = attack_cells(pos, &attacks);
        let masks: Vec<u128> = fields[2].split(' ').map(|m| m.parse().unwrap()).collect();
        assert_eq!(masks.len(), 34);
        // cshogi's square (file * 9 + rank) is our grid cell (row = rank, col = file).
        for (plane, &mask) in masks.iter().enumerate() {
            let want: Vec<usize> = (0..81)
                .filter(|&sq| mask >> sq & 1 == 1)
                .map(|sq| (sq % 9) * 9 + sq / 9)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            attacked += want.len();
            assert_eq!(got[plane], want, "plane {plane} of {}", pos.to_sfen());
        }
        let check = fields[1] == "1";
        assert_eq!(
            got[34].len() == 81,
            check,
            "check plane of {}",
            pos.to_sfen()
        );
        checks += usize::from(check);
    }
    assert!(
        positions.len() > 5000 && attacked > 0 && checks > 50,
        "{} positions, {checks} checks",
        positions.len()
    );
}

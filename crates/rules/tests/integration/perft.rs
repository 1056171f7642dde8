//! Perft against the table in `tests/data/perft.txt`.

use shogi_rules::perft::{divide, perft};
use shogi_rules::{Position, Variant};

struct Case {
    variant: Variant,
    name: String,
    sfen: String,
    counts: Vec<u64>,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../data/perft.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(f.len(), 4, "bad line {l}");
            let variant = match f[0] {
                "shogi" => Variant::Shogi,
                "minishogi" => Variant::Minishogi,
                v => panic!("bad variant {v}"),
            };
            let counts = f[3]
                .split_whitespace()
                .map(|n| n.parse().unwrap())
                .collect();
            Case {
                variant,
                name: f[1].into(),
                sfen: f[2].into(),
                counts,
            }
        })
        .collect()
}

/// Runs every case up to the deepest depth whose count is at most `max_nodes`.
fn run(max_nodes: u64, min_nodes: u64) {
    for c in cases() {
        let pos = Position::from_sfen(c.variant, &c.sfen).unwrap();
        assert_eq!(pos.to_sfen(), c.sfen, "round trip {}", c.name);
        for (i, &want) in c.counts.iter().enumerate() {
            if want > max_nodes || want < min_nodes {
                continue;
            }
            let depth = i as u32 + 1;
            let got = perft(&pos, depth, true);
            assert_eq!(got, want, "{} depth {depth}", c.name);
        }
    }
}

#[test]
fn perft_table_fast() {
    run(60_000_000, 0);
}

#[test]
#[ignore = "slow: the deepest rows (startpos 6, matsuri 4, minishogi 6)"]
fn perft_table_deep() {
    run(u64::MAX, 60_000_001);
}

#[test]
fn non_bulk_matches_bulk() {
    let pos = Position::startpos(Variant::Shogi);
    assert_eq!(perft(&pos, 3, false), 25_470);
    let mini = Position::startpos(Variant::Minishogi);
    assert_eq!(perft(&mini, 4, false), 35_401);
}

#[test]
fn divide_sums_to_perft() {
    let pos = Position::startpos(Variant::Shogi);
    let d = divide(&pos, 3);
    assert_eq!(d.len(), 30);
    assert_eq!(d.iter().map(|(_, n)| n).sum::<u64>(), 25_470);
}

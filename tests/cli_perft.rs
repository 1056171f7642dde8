//! End-to-end: the `shogi-zero perft` subcommand as a user runs it.

use std::process::Command;

fn shogi_zero() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shogi-zero"))
}

fn nodes_line(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("nodes "))
        .and_then(|n| n.trim().parse().ok())
}

#[test]
fn perft_start_position_depth_3() {
    let out = shogi_zero()
        .args(["perft", "--depth", "3"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        nodes_line(&String::from_utf8_lossy(&out.stdout)),
        Some(25_470)
    );
}

#[test]
fn perft_minishogi_divide_sums_to_total() {
    let out = shogi_zero()
        .args([
            "perft",
            "--variant",
            "minishogi",
            "--depth",
            "3",
            "--divide",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let per_move: Vec<u64> = stdout
        .lines()
        .filter(|l| !l.starts_with("nodes") && !l.starts_with("time"))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(per_move.len(), 14);
    assert_eq!(per_move.iter().sum::<u64>(), 2_512);
    assert_eq!(nodes_line(&stdout), Some(2_512));
}

#[test]
fn perft_no_bulk_matches_bulk() {
    let out = shogi_zero()
        .args(["perft", "--depth", "3", "--no-bulk"])
        .output()
        .unwrap();
    assert_eq!(
        nodes_line(&String::from_utf8_lossy(&out.stdout)),
        Some(25_470)
    );
}

#[test]
fn perft_rejects_a_malformed_sfen_with_a_clear_error() {
    let out = shogi_zero()
        .args(["perft", "--depth", "1", "--sfen", "lnsgkgsnl/9/9 b - 1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--sfen"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn perft_rejects_depth_zero() {
    let out = shogi_zero()
        .args(["perft", "--depth", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

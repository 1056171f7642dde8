//! Runs the mate search on SFENs given as arguments and prints the shortest ply limit
//! under which it proves a mate (debugging aid).
use std::time::{Duration, Instant};

use shogi_rules::mate::{MateLimits, MateResult, search_mate};
use shogi_rules::{Position, Variant};

fn main() {
    for sfen in std::env::args().skip(1) {
        let pos = Position::from_sfen(Variant::Shogi, &sfen).expect("valid sfen");
        for max_plies in (1..=15).step_by(2) {
            let t = Instant::now();
            let limits = MateLimits {
                deadline: Some(t + Duration::from_secs(5)),
                max_plies,
                ..MateLimits::default()
            };
            let (r, st) = search_mate(&pos, &limits);
            let text = match &r {
                MateResult::Mate(l) => l
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                other => format!("{other:?}"),
            };
            println!(
                "{sfen} [{max_plies}]: {text} ({} nodes, {:?})",
                st.nodes,
                t.elapsed()
            );
            if matches!(r, MateResult::Mate(_)) {
                break;
            }
        }
    }
}

//! `cargo run --release -p shogi-rules --example perft -- [depth] [bulk|full] [sfen...]`
//! Runs our perft from the start position (or the SFEN), then the `haitaka` crate's on
//! the start position in the same process, and prints both speeds and the ratio.
use shogi_rules::{Position, Variant, perft::perft};
use std::time::Instant;

#[path = "../benches/common/haitaka.rs"]
mod anchor;
use anchor::haitaka_perft;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: u32 = args.get(1).and_then(|d| d.parse().ok()).unwrap_or(5);
    let bulk = args.get(2).map(|s| s != "full").unwrap_or(true);
    let custom = args.len() > 3;
    let pos = if custom {
        Position::from_sfen(Variant::Shogi, &args[3..].join(" ")).expect("sfen")
    } else {
        Position::startpos(Variant::Shogi)
    };
    let t = Instant::now();
    let n = perft(&pos, depth, bulk);
    let s = t.elapsed().as_secs_f64();
    let ours = n as f64 / s / 1e6;
    println!("shogi-rules perft({depth}, bulk={bulk}) = {n} in {s:.3}s: {ours:.1}M nodes/s");
    if !custom {
        let b = haitaka::Board::startpos();
        let t = Instant::now();
        let h = haitaka_perft(&b, depth as u8, bulk);
        let s = t.elapsed().as_secs_f64();
        let theirs = h as f64 / s / 1e6;
        println!("haitaka     perft({depth}, bulk={bulk}) = {h} in {s:.3}s: {theirs:.1}M nodes/s");
        println!("ratio shogi-rules / haitaka = {:.2}", ours / theirs);
    }
}

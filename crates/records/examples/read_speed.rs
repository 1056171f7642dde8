//! How fast the import reads record files: every record of each file through
//! [`read_records`] (parsed or decoded, every move checked legal), ROUNDS times; prints
//! records/s and positions/s a file. `scripts/bench/read_speed.sh` runs it beside
//! cshogi's readers on the same files.
//!
//! `cargo run --release -p shogi-records --example read_speed -- [--rounds N] FILE...`

use std::path::PathBuf;
use std::time::Instant;

use shogi_records::import::{ReadRecord, RecordFormat, read_records};
use shogi_rules::Variant;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1).peekable();
    let mut rounds = 3;
    if args.peek().map(String::as_str) == Some("--rounds") {
        args.next();
        let n = args.next().ok_or("--rounds needs a number")?;
        rounds = n.parse().map_err(|e| format!("--rounds {n}: {e}"))?;
    }
    let files: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if files.is_empty() {
        return Err("usage: read_speed [--rounds N] FILE...".into());
    }
    for path in &files {
        let format = RecordFormat::of_path(path).ok_or_else(|| {
            format!(
                "{}: not a record file ({})",
                path.display(),
                RecordFormat::EXTENSIONS
            )
        })?;
        for round in 1..=rounds {
            let began = Instant::now();
            let (mut records, mut positions, mut malformed) = (0u64, 0u64, 0u64);
            let reader = read_records(path, format, &[Variant::Shogi], Default::default())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            for record in reader {
                records += 1;
                match record {
                    Ok(ReadRecord::Game { record, .. }) => positions += record.moves.len() as u64,
                    Ok(ReadRecord::Position(_) | ReadRecord::Problem { .. }) => positions += 1,
                    Err(_) => malformed += 1,
                }
            }
            let secs = began.elapsed().as_secs_f64();
            println!(
                "shogi-zero {} round {round}: {records} records ({malformed} malformed), {positions} positions in {secs:.3} s: {:.0} records/s, {:.0} positions/s",
                path.display(),
                records as f64 / secs,
                positions as f64 / secs
            );
        }
    }
    Ok(())
}

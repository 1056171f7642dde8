#!/usr/bin/env bash
# Reading speed of the import against cshogi's readers on the same files, alternated in
# one run (this machine's speed drifts between hours: only the ratio within a run
# counts). shogi-zero: every record through `read_records` (parsed or decoded, every
# move checked legal; crates/records/examples/read_speed.rs); cshogi: its CSA parser,
# and for hcpe numpy's fromfile plus `set_hcp` and `is_legal` a position
# (scripts/bench/read_speed_cshogi.py).
#
#   cargo build --release -p shogi-records --example read_speed
#   bash scripts/bench/read_speed.sh ROUNDS FILE...   (e.g. a teacher set's teacher.csa and teacher.hcpe)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
rounds="${1:?usage: read_speed.sh ROUNDS FILE...}"
shift
for round in $(seq 1 "$rounds"); do
  for file in "$@"; do
    target/release/examples/read_speed --rounds 1 "$file" | sed "s/round 1/round $round/"
    .venv/bin/python scripts/bench/read_speed_cshogi.py 1 "$file" | sed "s/round 1/round $round/"
  done
done

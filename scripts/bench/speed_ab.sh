#!/usr/bin/env bash
# Speed of two builds on the rules and the search, alternated on this machine alone
# (the check a refactor owes: nothing it moves may cost time). Each round runs, for
# binary A then binary B, `perft --depth 6` (standard shogi: move generation and play)
# and a minishogi self-play of 48 games at 64 simulations on one thread (search, the
# batching service and the network); prints the seconds of each run, the medians and
# the B/A ratio of the medians.
#
#   bash scripts/bench/speed_ab.sh OLD_BIN NEW_BIN [ROUNDS]     # ROUNDS default 5
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin_a="${1:?usage: speed_ab.sh BIN_A BIN_B [ROUNDS]}"
bin_b="${2:?usage: speed_ab.sh BIN_A BIN_B [ROUNDS]}"
rounds="${3:-5}"
. scripts/env.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Seconds one command takes, its output discarded (a failure stops the script).
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" > "$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}
declare -A times
for round in $(seq 1 "$rounds"); do
  for side in a b; do
    bin="bin_$side"
    perft=$(seconds "${!bin}" perft --depth 6)
    rm -rf "$work/sp"
    selfplay=$(seconds "${!bin}" selfplay --variant minishogi --games 48 --simulations 64 \
      --seed 7 --device cpu --threads 1 --out "$work/sp")
    times[$side.perft]+="$perft "
    times[$side.selfplay]+="$selfplay "
    echo "round $round $side: perft ${perft}s selfplay ${selfplay}s"
  done
done
for what in perft selfplay; do
  python3 - "$what" "${times[a.$what]}" "${times[b.$what]}" <<'PY'
import statistics, sys
what, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"{what}: median A {ma:.2f}s, B {mb:.2f}s, B/A {mb / ma:.3f}")
PY
done

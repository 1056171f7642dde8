#!/usr/bin/env bash
# Self-play's search alone under a run config's search settings, two builds alternated
# on this machine alone: each build's `config_search_speed` example (one thread advancing one
# actor thread's share of the config's games with the uniform evaluator, no network;
# crates/run/examples/config_search_speed.rs) for SECONDS, ROUNDS times, A then B. Prints
# each round's simulations/s and the B/A ratio.
#
#   cargo build --release -p shogi-run --example config_search_speed   # in each checkout
#   bash scripts/bench/search_ab.sh OLD/config_search_speed NEW/config_search_speed configs/shogi-gpu-small.toml 30 3
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
usage="usage: search_ab.sh BIN_A BIN_B CONFIG [SECONDS] [ROUNDS] [GAMES]"
bin_a="${1:?$usage}"
bin_b="${2:?$usage}"
config="${3:?$usage}"
seconds="${4:-30}"
rounds="${5:-3}"
games="${6:-}"
rate() {
  "$1" "$config" "$seconds" $games | tee /dev/stderr | sed -E 's/.*simulations \(([0-9]+)\/s\).*/\1/'
}
for round in $(seq 1 "$rounds"); do
  a=$(rate "$bin_a")
  b=$(rate "$bin_b")
  echo "round $round: A $a, B $b simulations/s; B/A $(python3 -c "print(f'{$b / $a:.2f}')")"
done

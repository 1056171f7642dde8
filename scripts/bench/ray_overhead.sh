#!/usr/bin/env bash
# Ray's overhead on self-play: plies/s of `train CONFIG` (one process) against the Ray
# launcher with one self-play actor of the same actors and threads, MINUTES each,
# alternated ROUNDS times (default 2) on this machine alone. The figure is the plies/s
# of the last status line (train.log of the one process; the actor's selfplay.log).
#
#   bash scripts/bench/ray_overhead.sh [CONFIG] [MINUTES] [ROUNDS]
#   bash scripts/bench/ray_overhead.sh configs/shogi-cpu.toml 10 2
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
config="${1:-configs/shogi-cpu.toml}"
minutes="${2:-10}"
rounds="${3:-2}"
bin="${SHOGI_ZERO_BIN:-./target/release/shogi-zero}"
py="${SHOGI_ZERO_PYTHON:-.venv/bin/python}"
out="${RAY_BENCH_OUT:-runs/ray-overhead}"
mkdir -p "$out"
plies_per_s() { grep -o 'plies [0-9]* ([0-9.]*/s' "$1" | tail -n 1 | sed 's/.*(\([0-9.]*\)\/s/\1/'; }
for round in $(seq 1 "$rounds"); do
  one="$out/one-$round"
  rm -rf "$one"
  "$bin" train "$config" --set "run.dir=\"$one\"" --set "run.minutes=$minutes" --set "run.max_steps=0" \
    >/dev/null 2>&1
  a="$(plies_per_s "$one/train.log")"
  ray_run="$out/ray-$round"
  local_root="$out/ray-$round-local"
  rm -rf "$ray_run" "$local_root"
  "$py" scripts/ray/shogi_zero_ray.py "$config" --selfplay-actors 1 --selfplay-cpus 1 \
    --run-dir "$ray_run" --local-root "$local_root" --set "run.minutes=$minutes" --set "run.max_steps=0" \
    --status-every 600 >"$out/ray-$round.out" 2>&1
  b="$(plies_per_s "$local_root/actor-000/selfplay.log")"
  echo "round $round: one process $a plies/s, Ray $b plies/s, ratio $(python3 -c "print(f'{$b / $a:.3f}')")"
done

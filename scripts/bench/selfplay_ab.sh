#!/usr/bin/env bash
# Self-play speed of two builds on one config, alternated on this machine alone:
# simulations/s (network evaluations, the figure a cheaper search cannot inflate) of
# `train CONFIG` for MINUTES each, ROUNDS times (default 2), binary A then binary B.
# Two figures a run, from its status lines (cumulative rates, so a window's rate is
# the difference of rate x seconds): before the learner's first step, and from its
# first step to the end (self-play and learner sharing the cores, as in a real run).
# Prints each round and the B/A ratios; extra arguments go to `train` (e.g. --set).
#
#   bash scripts/bench/selfplay_ab.sh OLD_BIN NEW_BIN configs/tai.toml 4 2
#   bash scripts/bench/selfplay_ab.sh OLD_BIN NEW_BIN configs/tai.toml 4 2 --set network.stem_kernel=1
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin_a="${1:?usage: selfplay_ab.sh BIN_A BIN_B CONFIG [MINUTES] [ROUNDS] [--set ...]}"
bin_b="${2:?usage: selfplay_ab.sh BIN_A BIN_B CONFIG [MINUTES] [ROUNDS] [--set ...]}"
config="${3:?usage: selfplay_ab.sh BIN_A BIN_B CONFIG [MINUTES] [ROUNDS] [--set ...]}"
minutes="${4:-4}"
rounds="${5:-2}"
shift $(($# < 5 ? $# : 5))
out="${SELFPLAY_AB_OUT:-runs/selfplay-ab}"
mkdir -p "$out"
# "before after" simulations/s of one train.log.
rates() {
  python3 - "$1" <<'PY'
import re, sys
lines = []
for line in open(sys.argv[1]):
    m = re.search(r"\[\s*(\d+)s\].*?, ([0-9.]+) simulations/s\).*?\| step (\d+) ", line)
    if m:
        lines.append((float(m.group(1)), float(m.group(2)), int(m.group(3))))
before = [l for l in lines if l[2] == 0]
after = [l for l in lines if l[2] > 0]
pre = before[-1][1] if before else float("nan")
if len(after) >= 2:
    (t1, r1, _), (t2, r2, _) = after[0], after[-1]
    post = (r2 * t2 - r1 * t1) / (t2 - t1)
else:
    post = float("nan")
print(f"{pre:.1f} {post:.1f}")
PY
}
for round in $(seq 1 "$rounds"); do
  for side in a b; do
    bin="bin_$side"
    dir="$out/$side-$round"
    rm -rf "$dir"
    "${!bin}" train "$config" --set "run.dir=\"$dir\"" --set "run.minutes=$minutes" "$@" >/dev/null 2>&1
    read -r pre post < <(rates "$dir/train.log")
    eval "pre_$side=$pre post_$side=$post"
  done
  echo "round $round: A $pre_a / $post_a, B $pre_b / $post_b simulations/s (before / with the learner);" \
    "B/A $(python3 -c "a, b, c, d = map(float, '$pre_a $pre_b $post_a $post_b'.split()); print(f'{b / a:.2f} / {d / c:.2f}')")"
done

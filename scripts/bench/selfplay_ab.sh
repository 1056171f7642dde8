#!/usr/bin/env bash
# Self-play speed of two or more builds on one config, alternated on this machine alone:
# simulations/s (network evaluations, the figure a cheaper search cannot inflate) of
# `train CONFIG` for MINUTES each, ROUNDS times (default 2), the builds in the order given.
# Two figures a run, from its status lines (cumulative rates, so a window's rate is
# the difference of rate x seconds): before the learner's first step, and from its
# first step to the end (self-play and learner sharing the cores, as in a real run);
# and two more: the cores the whole process kept busy (CPU time over wall time, read by
# the shell, so a build without the status line's figure is measured the same way) and
# the learner steps it made.
# A run whose learner steps before its first status line has no "before" figure: it
# prints "-" there (a config with a small `learner.min_positions`, such as shogi-cpu's;
# `--set learner.min_positions=N` delays the learner to measure it).
# Prints each round and every build's ratios to the first; extra arguments go to
# `train` (e.g. --set). A build given as BIN:OLD_CONFIG runs that config instead (an old
# build that cannot read today's keys runs the config of its own time).
#
#   bash scripts/bench/selfplay_ab.sh OLD_BIN NEW_BIN configs/tai.toml 4 2
#   bash scripts/bench/selfplay_ab.sh OLD_BIN NEW_BIN configs/tai.toml 4 2 --set network.stem_kernel=1
#   bash scripts/bench/selfplay_ab.sh BASE_BIN:/tmp/base.toml OLD_BIN NEW_BIN configs/shogi-cpu.toml 4 2
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
usage="usage: selfplay_ab.sh BIN_A[:CONFIG] BIN_B[:CONFIG] [BIN_C...] CONFIG [MINUTES] [ROUNDS] [--set ...]"
builds=()
while (($#)) && [[ "$1" != *.toml || "$1" == *:* ]]; do
  builds+=("$1")
  shift
done
((${#builds[@]} >= 2)) || { echo "$usage" >&2; exit 2; }
config="${1:?$usage}"
shift
minutes="4"
rounds="2"
if (($#)) && [[ "$1" != --* ]]; then minutes="$1"; shift; fi
if (($#)) && [[ "$1" != --* ]]; then rounds="$1"; shift; fi
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
steps = lines[-1][2] if lines else 0
print(f"{pre:.1f} {post:.1f} {steps}")
PY
}
names=(A B C D E F G H)
for round in $(seq 1 "$rounds"); do
  figures=()
  for i in "${!builds[@]}"; do
    build="${builds[$i]}"
    bin="${build%%:*}"
    side_config="$config"
    [[ "$build" == *:* ]] && side_config="${build#*:}"
    dir="$out/${names[$i],,}-$round"
    rm -rf "$dir"
    TIMEFORMAT="%R %U %S"
    times=$( { time "$bin" train "$side_config" --set "run.dir=\"$dir\"" --set "run.minutes=$minutes" "$@" >/dev/null 2>&1; } 2>&1 )
    read -r wall user sys <<<"$times"
    busy=$(python3 -c "print(f'{($user + $sys) / $wall:.2f}')")
    figures+=("$(rates "$dir/train.log") $busy")
  done
  python3 - "$round" "${figures[@]}" <<'PY'
import sys
names = "ABCDEFGH"
rows = [tuple(map(float, f.split())) for f in sys.argv[2:]]
def shown(x):
    return "-" if x != x else f"{x:.1f}"
def ratio(x, y):
    return "-" if x != x or y != y else f"{x / y:.2f}"
parts = [f"{names[i]} {shown(pre)} / {shown(post)}" for i, (pre, post, _, _) in enumerate(rows)]
(pre_a, post_a, steps_a, _) = rows[0]
ratios = [f"{names[i]}/A {ratio(pre, pre_a)} / {ratio(post, post_a)}" for i, (pre, post, _, _) in enumerate(rows) if i]
busy = [f"{names[i]} {b:.2f} cores, {s:.0f} steps" for i, (_, _, s, b) in enumerate(rows)]
print(f"round {sys.argv[1]}: {', '.join(parts)} simulations/s (before / with the learner); {', '.join(ratios)}; {', '.join(busy)}")
PY
done

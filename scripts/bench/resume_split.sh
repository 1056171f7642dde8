#!/usr/bin/env bash
# Whether a run's figures depend on where its stops fell: CONFIG run as one invocation
# of MINUTES, and again (same seed) as PARTS invocations of MINUTES/PARTS each, resumed
# with `train RUN_DIR`. Prints, for each, the learner steps, the positions its replay
# account counted, the samples trained a position (the replay ratio the learner kept
# over the whole run, however many invocations) and the run's clock; then the split
# run's samples a position over the whole run's. A resume that trained old data again,
# or lost the account, moves that ratio off 1. Needs the machine alone: both runs are
# timed. Extra arguments go to `train` (e.g. --set).
#
#   bash scripts/bench/resume_split.sh configs/shogi-cpu.toml 2 60 3
#   bash scripts/bench/resume_split.sh configs/minishogi.toml 1 6 3 --set learner.min_positions=1000
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
usage="usage: resume_split.sh CONFIG SEED MINUTES PARTS [--set ...]"
config="${1:?$usage}"
seed="${2:?$usage}"
minutes="${3:?$usage}"
parts="${4:?$usage}"
shift 4
bin="${SHOGI_ZERO:-target/release/shogi-zero}"
[[ -x "$bin" ]] || { echo "no $bin: cargo build --release first (or set SHOGI_ZERO)" >&2; exit 2; }
out="${RESUME_SPLIT_OUT:-runs/resume-split}"
mkdir -p "$out"
name="$(basename "$config" .toml)-s$seed"
whole="$out/$name-whole"
split="$out/$name-split$parts"
for dir in "$whole" "$split"; do
  [[ ! -e "$dir" ]] || { echo "$dir exists: remove it or set RESUME_SPLIT_OUT" >&2; exit 2; }
done

part=$(python3 -c "print($minutes / $parts)")
echo "whole: $minutes minutes -> $whole"
"$bin" train "$config" --set "run.dir=\"$whole\"" --set "run.seed=$seed" \
  --set "run.minutes=$minutes" "$@" >"$out/$name-whole.out" 2>&1
echo "split: $parts x $part minutes -> $split"
"$bin" train "$config" --set "run.dir=\"$split\"" --set "run.seed=$seed" \
  --set "run.minutes=$part" "$@" >"$out/$name-split.out" 2>&1
for ((i = 2; i <= parts; i++)); do
  "$bin" train "$split" --set "run.minutes=$part" "$@" >>"$out/$name-split.out" 2>&1
done

python3 - "$whole" "$split" <<'PY'
import glob, json, os, sys

def figures(run):
    nets = sorted(glob.glob(os.path.join(run, "accepted", "step-*")))
    newest = nets[-1]
    meta = json.load(open(os.path.join(newest, "manifest.json")))
    account = json.load(open(os.path.join(newest, "replay-account.json")))
    samples = meta["samples_seen"] - account.get("samples_before", 0)
    seconds = float(open(os.path.join(run, "run-seconds")).read())
    return meta["training_step"], account["positions"], samples / max(account["positions"], 1), seconds

rows = {label: figures(run) for label, run in zip(["whole", "split"], sys.argv[1:])}
for label, (steps, positions, per_position, seconds) in rows.items():
    print(f"{label}: {steps} steps, {positions} positions, {per_position:.2f} samples a position, {seconds / 60:.1f} minutes on the run's clock")
ratio = rows["split"][2] / rows["whole"][2]
print(f"split / whole, samples a position: {ratio:.3f} ({(ratio - 1) * 100:+.1f}%)")
PY

#!/usr/bin/env bash
# Checks a GPU machine (DEVELOPERS.md, "Checking a GPU machine"), run in the repository
# root there with the binaries scripts/gpu/stage.sh put in .gpu/ beside it. It builds
# nothing. Everything it measures goes to stdout and to OUT_DIR (a few files: the logs,
# the phases' times, nvidia-smi sampled every second the whole time, and each GPU
# config's newest network as a .tgz to measure on a CPU machine). It stops at the first
# step that shows CUDA is not usable.
#
#   bash scripts/gpu/check.sh OUT_DIR [SECONDS_PER_CONFIG]      # default 180
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: bash scripts/gpu/check.sh OUT_DIR [SECONDS_PER_CONFIG]" >&2
  exit 2
fi
out="$(mkdir -p "$1" && cd "$1" && pwd)" || { echo "check.sh: cannot create $1" >&2; exit 2; }
seconds="${2:-180}"
case "$seconds" in
  ''|*[!0-9]*) echo "check.sh: SECONDS_PER_CONFIG must be a whole number of seconds, not '$seconds'" >&2; exit 2 ;;
esac
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin=.gpu/shogi-zero
[ -x "$bin" ] || { echo "check.sh: no $bin: build it with scripts/gpu/stage.sh on a machine with Rust and copy .gpu/ here" >&2; exit 2; }
# The binaries' rpath points at the build machine's venv: use this machine's libtorch.
torch_lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH="${torch_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
phase() { echo "== $(date +%T) $*" | tee -a "$out/phases.txt"; }

phase "info"
"$bin" info 2>&1 | tee "$out/info.txt"
if ! grep -q "cuda available: true" "$out/info.txt"; then
  echo "check.sh: libtorch sees no CUDA device here: nothing below would measure a GPU"
  exit 1
fi

smi=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 1 > "$out/smi.csv" 2>/dev/null &
  smi=$!
fi
trap '[ -n "$smi" ] && kill "$smi" 2>/dev/null' EXIT

phase "CUDA tests"
for t in .gpu/integration; do
  [ -x "$t" ] && "$t" --ignored cuda 2>&1 | tail -n 4
done

phase "net_bench 20x256, f32 then f16"
for half in "" --f16; do
  timeout 90 .gpu/net_bench --variant shogi --blocks 20 --channels 256 --device cuda \
    --batches 256,1024 --modes infer-legal,train $half 2>&1 | tail -n 8
done

# Self-play with its learner, a few minutes of each GPU config: the status lines say the
# games in flight, batch fill and simulations/s; the samples of nvidia-smi in each
# phase's time window say how busy the GPU was.
# shogi-gpu's learner waits for 100,000 positions, more than a few minutes make: it
# starts at 20,000 here so its rate beside self-play shows.
for config in shogi-gpu-small shogi-gpu; do
  phase "$config for $seconds s"
  dir="/tmp/gpu-runs/$config"
  rm -rf "$dir"
  extra=()
  [ "$config" = shogi-gpu ] && extra=(--set learner.min_positions=20000)
  timeout $((seconds + 60)) "$bin" train "configs/$config.toml" \
    --set "run.minutes=$(python3 -c "print($seconds / 60)")" --set "run.dir=\"$dir\"" \
    "${extra[@]}" > "$out/$config.log" 2>&1
  grep -E "batch fill" "$out/$config.log" | tail -n 3
  # The newest network, one file, to be measured on the CPU machine (learns.sh).
  newest=$(ls -d "$dir"/accepted/step-* 2>/dev/null | sort | tail -n 1)
  [ -n "$newest" ] && tar czf "$out/$config-newest.tgz" -C "$dir" config.toml "accepted/$(basename "$newest")"
done

# The USI engine's nodes per second with the 20x256 network (the newest of the shogi-gpu
# run above), by search threads, from positions of that run's games: each thread with its
# own copy at 32 leaves a call, and every thread's 8 leaves in one shared batch (the
# engine's default on CUDA, `NetBatching`).
phase "USI nodes/s, 20x256, by search threads"
"$bin" export /tmp/gpu-runs/shogi-gpu/replay --out /tmp/gpu-runs/games --limit 20 >/dev/null 2>&1
if python3 scripts/bench/usi_threads.py --from-games /tmp/gpu-runs/games --out /tmp/gpu-runs/positions.txt \
    --every 20 --positions 10; then
  timeout 300 python3 scripts/bench/usi_threads.py --engine "$bin:Device=cuda,TreeBatch=32,NetBatching=per-thread" \
    --engine "$bin:Device=cuda" \
    --model /tmp/gpu-runs/shogi-gpu --positions-file /tmp/gpu-runs/positions.txt \
    --threads 1,4,8,16 --rounds 1 2>&1 | tee "$out/usi-threads.txt" | tail -n 8
fi
phase "done"

# GPU busy per phase: the mean of nvidia-smi's utilisation between one phase line and
# the next.
if [ -n "$smi" ]; then
  kill "$smi" 2>/dev/null
  python3 - "$out/phases.txt" "$out/smi.csv" <<'PY'
import sys, datetime
phases = [l.split(" ", 2) for l in open(sys.argv[1]) if l.startswith("== ")]
t = lambda s: datetime.datetime.strptime(s, "%H:%M:%S").time()
samples = []
for line in open(sys.argv[2]):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) < 3:
        continue
    when = datetime.datetime.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S").time()
    samples.append((when, float(parts[1].split()[0]), float(parts[2].split()[0])))
for (_, start, name), nxt in zip(phases, phases[1:] + [None]):
    end = t(nxt[1]) if nxt else datetime.time(23, 59, 59)
    inside = [s for s in samples if t(start) <= s[0] < end]
    if inside:
        util = sum(s[1] for s in inside) / len(inside)
        mem = max(s[2] for s in inside)
        print(f"{name.strip():45s} GPU busy {util:5.1f}% (mean of {len(inside)} samples), memory up to {mem:.0f} MiB")
PY
fi

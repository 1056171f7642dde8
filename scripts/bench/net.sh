#!/usr/bin/env bash
# Network speed: shogi-model (tch) beside the same architecture in PyTorch (the venv's
# torch, same libtorch build, same thread count), inference positions/s and training
# samples/s at batch 1, 16, 64, 256. Prints a markdown table with the ratio tch/PyTorch.
#
#   scripts/bench/net.sh                        # defaults below
#   CONFIGS="shogi:10:128" THREADS="2" ROUNDS=3 SECS=2 scripts/bench/net.sh
#
# CONFIGS: variant:blocks:channels, space separated. The CPU defaults of the CLI are
# 6x64 (`learn`) and 4x32 (`selfplay`); 10x128 is the larger reference model.
# ROUNDS: tch and PyTorch are run alternately ROUNDS times per config and thread count
# and the best rate of each is kept (the host is shared; best-of filters out the rounds
# where other processes took the cores).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh

CONFIGS=${CONFIGS:-"minishogi:4:32 minishogi:6:64 shogi:6:64 shogi:10:128"}
THREADS=${THREADS:-"2 1"}
BATCHES=${BATCHES:-"1,16,64,256"}
ROUNDS=${ROUNDS:-2}
SECS=${SECS:-1}
PY=${PYTHON:-.venv/bin/python}

cargo build --release -q -p shogi-model --example net_bench
BIN=target/release/examples/net_bench
RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT

echo "# $(date -u +%FT%TZ) $(nproc) cores, torch $("$PY" -c 'import torch; print(torch.__version__)'), rounds=$ROUNDS secs=$SECS" >&2
for cfg in $CONFIGS; do
    IFS=: read -r variant blocks channels <<<"$cfg"
    arch=$("$BIN" --variant "$variant" --print-config)
    for t in $THREADS; do
        for r in $(seq "$ROUNDS"); do
            echo "# $variant ${blocks}x${channels} threads=$t round $r" >&2
            "$BIN" --variant "$variant" --blocks "$blocks" --channels "$channels" \
                --threads "$t" --batches "$BATCHES" --secs "$SECS" | grep '^RESULT' >>"$RAW"
            # shellcheck disable=SC2086
            "$PY" -W ignore scripts/bench/torch_net.py --variant "$variant" --blocks "$blocks" \
                --channels "$channels" --threads "$t" --batches "$BATCHES" --secs "$SECS" \
                $arch | grep '^RESULT' >>"$RAW"
        done
    done
done

# Best of the rounds per (impl, variant, size, threads, mode, batch), then the ratio.
awk '
{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["variant"] " | " f["blocks"] "x" f["channels"] " | " f["threads"] " | " f["mode"] " | " f["batch"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    if (f["rate"] + 0 > best[f["impl"], key] + 0) best[f["impl"], key] = f["rate"]
}
END {
    print "| variant | net | threads | mode | batch | tch /s | PyTorch /s | tch/PyTorch |"
    print "|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
        k = order[i]; a = best["tch", k]; b = best["torch", k]
        printf "| %s | %.0f | %.0f | %.2f |\n", k, a, b, (b > 0 ? a / b : 0)
    }
}' "$RAW"

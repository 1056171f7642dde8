#!/usr/bin/env bash
# Builds here what a GPU machine runs for scripts/gpu/check.sh (it needs torch there, not
# Rust) and stages it in .gpu/ (git-ignored through .git/info/exclude): the release
# binary, the network benchmark and the CUDA tests' binary. Then copy the repository with
# .gpu/ to the GPU machine and run bash scripts/gpu/check.sh OUT_DIR there
# (DEVELOPERS.md, "Checking a GPU machine").
#
#   bash scripts/gpu/stage.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=scripts/env.sh
source scripts/env.sh
cargo build --release -p shogi-zero
cargo build --release -p shogi-model --example net_bench
tests=$(cargo test --release -p shogi-model --test integration --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["test"] and m.get("executable"):
        print(m["executable"])')
mkdir -p .gpu
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
rm -f .gpu/*
cp target/release/shogi-zero target/release/examples/net_bench .gpu/
for t in $tests; do
  name=$(basename "$t")
  cp "$t" ".gpu/${name%%-*}"
done
ls -la .gpu/
du -sh .gpu/
echo "stage.sh: copy .gpu/ with the repository to the GPU machine and run there: bash scripts/gpu/check.sh OUT_DIR"

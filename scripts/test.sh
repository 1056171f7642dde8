#!/usr/bin/env bash
# The whole test suite, as CI runs it: bootstrap the venv (no-op when present), then
# build and run every crate's tests, including the cross-checks against cshogi/pyffish
# and the libtorch <-> Python safetensors round trip. Longer checks are `--ignored`; so
# are the CUDA tests, the browser test and the tsshogi cross-check, which run by name
# below where the machine has a GPU / Chromium / Node.js. In CI (CI set), where the
# bootstrap installs them, a missing Chromium or tsshogi fails the suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
# Chromium for the browser test of `shogi-zero view` (Debian's package, where root or
# sudo can install it; elsewhere that test is listed as ignored, not passed).
bash scripts/install_chromium.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh
# A CI clone builds once: incremental state would only add gigabytes of disk.
if [[ -n "${CI:-}" ]]; then export CARGO_INCREMENTAL=0; fi
missing=()
start=$(date +%s)
cargo test --workspace --no-run
echo "test.sh: build finished after $(( $(date +%s) - start )) s"
cargo test --workspace --no-fail-fast "$@"
# The CUDA tests are ignored in the run above (a CPU machine must not report them as
# passed); where a GPU is present they run here, and fail if libtorch cannot use it.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  cargo test -p shogi-model --no-fail-fast --test integration -- --ignored cuda
else
  echo "test.sh: no GPU (nvidia-smi): the CUDA tests were not run (listed as ignored)"
fi
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
  || command -v google-chrome >/dev/null 2>&1; then
  cargo test --workspace --test cli_view -- --ignored headless_browser
else
  echo "test.sh: no Chromium: the browser test of view was not run (listed as ignored)"
  missing+=(Chromium)
fi
if [[ -d .venv/node/node_modules/tsshogi ]] && command -v node >/dev/null 2>&1; then
  cargo test -p shogi-rules --test integration -- --ignored tsshogi
else
  echo "test.sh: no Node.js/tsshogi: the KI2 cross-check against tsshogi was not run (listed as ignored)"
  missing+=(tsshogi)
fi
if [[ -n "${CI:-}" && ${#missing[@]} -gt 0 ]]; then
  echo "test.sh: in CI the bootstrap installs every oracle, but ${missing[*]} is missing: failing" >&2
  exit 1
fi
echo "test.sh: all tests finished after $(( $(date +%s) - start )) s"
# The lint gate, so `make lint` keeps working on a fresh clone.
bash scripts/lint.sh
echo "test.sh: lint passed after $(( $(date +%s) - start )) s"

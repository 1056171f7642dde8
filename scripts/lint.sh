#!/usr/bin/env bash
# The lint gate (`make lint`, and the last step of scripts/test.sh so CI keeps it
# working): rustfmt's check, clippy over every target with warnings as errors, and no
# two files of a crate importing each other in a circle.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
.venv/bin/python scripts/module_cycles.py crates

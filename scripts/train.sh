#!/usr/bin/env bash
# `make train`: bootstrap the venv, build the release binary, run a config (default:
# configs/minishogi.toml). Extra arguments go to `shogi-zero train`, e.g.
#   bash scripts/train.sh configs/shogi-cpu.toml --set run.minutes=60
# Re-running resumes the run in the config's run.dir.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/bootstrap.sh
. scripts/env.sh
cargo build --release -p shogi-zero
config="${1:-configs/minishogi.toml}"
shift || true
exec ./target/release/shogi-zero train "$config" --resume "$@"

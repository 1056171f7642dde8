#!/usr/bin/env bash
# A shogiarena (PyPI: shogiarena, a USI tournament runner) match between two instances of
# this project's USI engine, with the runner's default rules (max_plies 320 synced to the
# engines through MaxMovesToDraw/Draw_Ply). Checks that the engine starts under a
# third-party runner and plays games to the end.
#
#   bash scripts/usi/shogiarena.sh [GAMES] [MODEL_DIR] [MODEL_DIR_B]
#
# Engine a plays MODEL_DIR, engine b MODEL_DIR_B (default: the same). Environment:
# SHOGIARENA (default .venv/bin/shogiarena; `pip install shogiarena`), SHOGI_ZERO_BIN
# (default ./target/release/shogi-zero), SIMULATIONS (default 16), BYOYOMI_MS (default
# 300), A_OPTIONS / B_OPTIONS (USI options the runner sets on engine a / b, as
# "NAME=VALUE ...", e.g. "TwoFoldDraws=false"), OPENINGS (a file of start positions,
# one SFEN or `startpos moves ...` line each, every one played with both colours;
# default: the start position), OUT (default a temporary directory).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
games="${1:-2}"
model="${2:-}"
model_b="${3:-$model}"
arena="${SHOGIARENA:-.venv/bin/shogiarena}"
bin="$(realpath "${SHOGI_ZERO_BIN:-./target/release/shogi-zero}")"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
if [ ! -x "$arena" ]; then
  echo "shogiarena.sh: $arena not found (pip install shogiarena into the venv)" >&2
  exit 2
fi
# One wrapper per engine: the runner starts a program without arguments.
wrapper() {
  {
    echo '#!/bin/sh'
    printf 'exec %q usi --device cpu --simulations %q' "$bin" "${SIMULATIONS:-16}"
    if [ -n "$2" ]; then printf ' --model %q' "$(realpath "$2")"; fi
    echo
  } > "$1"
  chmod +x "$1"
}
wrapper "$out/engine-a.sh" "$model"
wrapper "$out/engine-b.sh" "$model_b"
engine_a=(name=a path="$out/engine-a.sh")
engine_b=(name=b path="$out/engine-b.sh")
for o in ${A_OPTIONS:-}; do engine_a+=("options.$o"); done
for o in ${B_OPTIONS:-}; do engine_b+=("options.$o"); done
rules=(time_control.time_ms=0 time_control.byoyomi_ms="${BYOYOMI_MS:-300}")
if [ -n "${OPENINGS:-}" ]; then
  rules+=(initial_positions.type=file initial_positions.source="$(realpath "$OPENINGS")"
    initial_positions.selection_policy=without_replacement)
fi
"$arena" --output-dir "$out/arena" run sprt --games "$games" \
  --engine "${engine_a[@]}" --engine "${engine_b[@]}" \
  --rules "${rules[@]}" \
  > "$out/shogiarena.log" 2>&1 || { tail -n 40 "$out/shogiarena.log" >&2; exit 1; }
status="$(ls "$out"/arena/tournament/runs/*/*/completion_status.json | head -n 1)"
results="$(dirname "$status")/results/tournament_results.json"
"${SHOGI_ZERO_PYTHON:-python3}" - "$status" "$results" "$(dirname "$status")/game.db" <<'PY'
import json, sqlite3, sys
status = json.load(open(sys.argv[1]))
results = json.load(open(sys.argv[2]))
print(f"shogiarena: {status['status']}, {status['completed']}/{status['scheduled']} games, "
      f"{status['error_games']} errors")
tally = {}
for row in sqlite3.connect(sys.argv[3]).execute("select game_name, game_result, num_moves from game"):
    print(f"  {row[0]}: {row[1]} after {row[2]} moves")
    tally[row[1]] = tally.get(row[1], 0) + 1
print("  results: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
print("  " + json.dumps(results["pair_results"]))
sys.exit(0 if status["completed"] == status["scheduled"] and status["error_games"] == 0 else 1)
PY

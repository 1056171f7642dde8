#!/usr/bin/env bash
# Proof that a run learned: the run's best accepted network, with search, against
#   1. a uniform-random mover, and
#   2. the run's initial network at equal search settings,
# GAMES games each (paired openings, colours swapped), plus the Elo history the gate
# wrote (ratings.json / ratings.png). Results go to RUN/proof/ and are printed.
# Every figure comes twice: with the run's play search (`--root-of RUN`: its root and
# the [play] rules written by hand) and with the plain search (`--root-of RUN --plain`:
# the same root and simulations without those rules), the network's own strength;
# the plain figures go to RUN/proof/*-plain.
# It also measures CURVE_POINTS accepted networks (default 6; 0 skips), first to last,
# against CURVE_OPPONENT (default alphabeta:depth=1, the fixed scale's anchor), CURVE_GAMES
# games each (default 20): the run's strength against the yardstick over wall time,
# RUN/proof/curve-alphabeta-depth-1/curve.{png,csv,json}, plotted against wall minutes
# and against learner steps. CURVE_STEPS (e.g. 2000,3700,9500) measures instead the
# networks the run had at those learner steps, to compare runs step for step whatever
# the machine's speed. BASELINE_GAMES (default 0) adds
# the untrained network against random, the baseline of the first score.
#
#   bash scripts/bench/learns.sh runs/minishogi [GAMES] [SIMULATIONS]
#   CURVE_OPPONENT=random CURVE_POINTS=4 bash scripts/bench/learns.sh runs/shogi-cpu 100 32
# and then the fixed-scale ladder (scripts/bench/ladder.sh; LADDER_GAMES per pairing,
# default 100; 0 skips it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
run="${1:?usage: learns.sh RUN_DIR [GAMES] [SIMULATIONS]}"
games="${2:-100}"
sims="${3:-32}"   # shogi_arena::curve::CURVE_SIMULATIONS, the fixed scale's budget
bin="${SHOGI_ZERO_BIN:-./target/release/shogi-zero}"
if [ ! -x "$bin" ]; then
  . scripts/env.sh
  cargo build --release -p shogi-zero
fi
# The networks play with the search the run measures them with (`--root-of RUN`,
# shogi_run::play_root: its self-play root without noise, a Gumbel root with its
# considered moves or PUCT, its leaf mate search, and the run's [play] options over
# self-play's).
# Tai shogi games are also played to the run's own ply cap and adjudicated by its own
# material margin (its games rarely end by the rules inside a CPU budget); shogi and
# minishogi keep the match defaults, the fixed scale's.
read -r tai_cap tai_margin < <("${SHOGI_ZERO_PYTHON:-python3}" - "$run/config.toml" <<'PY'
import sys
# The resolved config writes every key as `key = value`; Python 3.10 has no tomllib.
sections, section = {}, None
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line.startswith("["):
        section = line.strip("[]").strip()
    elif section and "=" in line:
        key, value = (x.strip() for x in line.split("=", 1))
        sections.setdefault(section, {})[key] = value.strip('"')
selfplay, game = sections.get("selfplay", {}), sections.get("game", {})
tai = game.get("variant") == "tai"
print(int(game.get("max_plies", 0)) if tai else 0, int(selfplay.get("adjudicate_margin", 0)) if tai else 0)
PY
)
rules=(--root-of "$run")
plain=(--plain)
if [ "$tai_cap" != 0 ]; then
  rules+=(--max-plies "$tai_cap" --adjudicate "$tai_margin")
  echo "tai shogi: games capped at $tai_cap plies, adjudicated at a $tai_margin-point material lead (the run's own rules)"
fi
best="$(ls -d "$run"/accepted/step-* | sort | tail -n 1)"
initial="$(ls -d "$run"/accepted/step-* | sort | head -n 1)"
echo "best: $best   initial: $initial   games: $games   simulations: $sims   search: the run's play search (--root-of $run)"
mkdir -p "$run/proof"
for how in play plain; do
  extra=()
  suffix=""
  if [ "$how" = plain ]; then extra=("${plain[@]}"); suffix="-plain"; fi
  echo "== the $how search"
  # Measured afresh each time (a match into a directory of its own games would resume).
  rm -rf "$run/proof/vs-random$suffix" "$run/proof/vs-initial$suffix"
  "$bin" match --a "checkpoint:$best" --b random --games "$games" --simulations "$sims" \
    "${rules[@]}" "${extra[@]}" --parallel 8 --out "$run/proof/vs-random$suffix" | tee "$run/proof/vs-random$suffix.txt"
  "$bin" match --a "checkpoint:$best" --b "checkpoint:$initial" --games "$games" \
    --simulations "$sims" "${rules[@]}" "${extra[@]}" --parallel 8 --out "$run/proof/vs-initial$suffix" \
    | tee "$run/proof/vs-initial$suffix.txt"
done
# The untrained network against random, the baseline the trained network's score is read
# against: BASELINE_GAMES games (default 0: skipped).
if [ "${BASELINE_GAMES:-0}" != 0 ]; then
  rm -rf "$run/proof/initial-vs-random"
  "$bin" match --a "checkpoint:$initial" --b random --games "$BASELINE_GAMES" --simulations "$sims" \
    "${rules[@]}" --parallel 8 --out "$run/proof/initial-vs-random" | tee "$run/proof/initial-vs-random.txt"
fi
if [ "${CURVE_POINTS:-6}" -ge 2 ] || [ -n "${CURVE_STEPS:-}" ]; then
  which=(--points "${CURVE_POINTS:-6}")
  [ -z "${CURVE_STEPS:-}" ] || which=(--at-steps "$CURVE_STEPS")
  for extra in "" "--plain"; do
    "$bin" curve "$run" --opponent "${CURVE_OPPONENT:-alphabeta:depth=1}" "${which[@]}" \
      --games "${CURVE_GAMES:-20}" --simulations "$sims" "${rules[@]}" $extra --parallel 8
  done
fi
echo "Elo history (ratings.json, plot ratings.png):"
"${SHOGI_ZERO_PYTHON:-python3}" - "$run" <<'PY'
import json, sys, os
run = sys.argv[1]
path = os.path.join(run, "ratings.json")
rows = json.load(open(path)) if os.path.exists(path) else []
if isinstance(rows, dict):
    rows = rows.get("entries", rows.get("ratings", []))
for r in rows:
    print(f"  step {r.get('step'):>8}  {('accepted' if r.get('accepted') else 'rejected'):8}  "
          f"score {r.get('score', 0):.3f}  Elo vs first {r.get('elo_vs_first', 0):+.0f}")
acc = [r for r in rows if r.get("accepted")]
if acc:
    print(f"  accepted networks: {len(acc)}; Elo vs first of the last: {acc[-1].get('elo_vs_first', 0):+.0f}")
PY
"${SHOGI_ZERO_PYTHON:-python3}" - "$run" <<'PY'
import json, sys, os
for name in ("vs-random", "vs-initial", "vs-random-plain", "vs-initial-plain", "initial-vs-random"):
    path = os.path.join(sys.argv[1], "proof", name, "summary.json")
    if name == "initial-vs-random" and not os.path.exists(path):
        continue
    s = json.load(open(path))
    t = s["total"]
    n = t["wins"] + t["draws"] + t["losses"]
    print(f"{name}: {t['wins']}-{t['draws']}-{t['losses']} over {n} games, "
          f"score {(t['wins'] + 0.5 * t['draws']) / max(n, 1):.1%}")
PY
# The fixed scale (anchor alphabeta:depth=1 = 0 Elo): LADDER_GAMES per pairing, 0 to skip.
if [ "${LADDER_GAMES:-100}" != 0 ]; then
  SHOGI_ZERO_BIN="$bin" LADDER_ROOT_OF="$run" bash scripts/bench/ladder.sh "$run" "${LADDER_GAMES:-100}" "$sims"
fi

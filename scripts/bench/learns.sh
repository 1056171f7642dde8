#!/usr/bin/env bash
# Proof that a run learned: the run's best accepted network, with search, against
#   1. a uniform-random mover, and
#   2. the run's initial network at equal search settings,
# GAMES games each (paired openings, colours swapped), plus the Elo history the gate
# wrote (ratings.json / ratings.png). Results go to RUN/proof/ and are printed.
# It also measures CURVE_POINTS accepted networks (default 6; 0 skips), first to last,
# against CURVE_OPPONENT (default alphabeta:depth=1, the fixed scale's anchor), CURVE_GAMES
# games each (default 20): the run's strength against the yardstick over wall time,
# RUN/proof/curve-alphabeta-depth-1/curve.{png,csv,json}.
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
# The networks play with the search their run's self-play used (noise off): a Gumbel
# root with its considered moves, or PUCT (EVAL_ROOT=puct forces PUCT), and its leaf
# mate search.
# Tai shogi games are also played to the run's own ply cap and adjudicated by its own
# material margin (its games rarely end by the rules inside a CPU budget); shogi and
# minishogi keep the match defaults, the fixed scale's.
read -r gumbel leaf_mate tai_cap tai_margin captures safe c_scale safety < <("${SHOGI_ZERO_PYTHON:-python3}" - "$run/config.toml" "${EVAL_ROOT:-run}" <<'PY'
import re, sys
# The resolved config writes every key as `key = value`; Python 3.10 has no tomllib.
# (A snapshot holds every key; the fallbacks below are SearchConfig::default()'s.)
sections, section = {}, None
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line.startswith("["):
        section = line.strip("[]").strip()
    elif section and "=" in line:
        key, value = (x.strip() for x in line.split("=", 1))
        sections.setdefault(section, {})[key] = value.strip('"')
selfplay, game = sections.get("selfplay", {}), sections.get("game", {})
gumbel = selfplay.get("root", "gumbel") == "gumbel" and sys.argv[2] != "puct"
tai = game.get("variant") == "tai"
print(int(selfplay.get("gumbel_considered", 16)) if gumbel else 0, int(selfplay.get("leaf_mate_nodes", 0)),
      int(game.get("max_plies", 0)) if tai else 0, int(selfplay.get("adjudicate_margin", 0)) if tai else 0,
      int(gumbel and selfplay.get("gumbel_captures", "false") == "true"),
      int(gumbel and selfplay.get("gumbel_safe", "false") == "true"),
      # Runs from before the key existed searched at the default: no flag then.
      selfplay.get("gumbel_c_scale", "-") if gumbel else "-",
      selfplay.get("gumbel_safety", "0") if gumbel else "0")
PY
)
rules=()
if [ "$captures" = 1 ]; then
  # The root always considers the moves that win material, as in the run's self-play.
  rules=(--gumbel-captures)
fi
if [ "$safe" = 1 ]; then
  # Half the root's moves lose nothing by static exchange, as in the run's self-play.
  rules+=(--gumbel-safe)
fi
if [ "$safety" != 0 ] && [ "$safety" != 0.0 ]; then
  # The root's logits lose the run's penalty per point a move leaves en prise.
  rules+=(--gumbel-safety "$safety")
fi
if [ "$c_scale" != - ]; then
  rules+=(--gumbel-c-scale "$c_scale")
fi
if [ "$tai_cap" != 0 ]; then
  rules+=(--max-plies "$tai_cap" --adjudicate "$tai_margin")
  echo "tai shogi: games capped at $tai_cap plies, adjudicated at a $tai_margin-point material lead (the run's own rules)"
fi
best="$(ls -d "$run"/accepted/step-* | sort | tail -n 1)"
initial="$(ls -d "$run"/accepted/step-* | sort | head -n 1)"
echo "best: $best   initial: $initial   games: $games   simulations: $sims   gumbel root: $gumbel moves (0 = PUCT)   leaf mate search: $leaf_mate nodes"
mkdir -p "$run/proof"
"$bin" match --a "checkpoint:$best" --b random --games "$games" --simulations "$sims" \
  --gumbel "$gumbel" --leaf-mate-nodes "$leaf_mate" "${rules[@]}" --parallel 8 --out "$run/proof/vs-random" | tee "$run/proof/vs-random.txt"
"$bin" match --a "checkpoint:$best" --b "checkpoint:$initial" --games "$games" \
  --simulations "$sims" --gumbel "$gumbel" --leaf-mate-nodes "$leaf_mate" "${rules[@]}" --parallel 8 --out "$run/proof/vs-initial" | tee "$run/proof/vs-initial.txt"
if [ "${CURVE_POINTS:-6}" -ge 2 ]; then
  "$bin" curve "$run" --opponent "${CURVE_OPPONENT:-alphabeta:depth=1}" --points "${CURVE_POINTS:-6}" \
    --games "${CURVE_GAMES:-20}" --simulations "$sims" --gumbel "$gumbel" --leaf-mate-nodes "$leaf_mate" "${rules[@]}" --parallel 8
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
for name in ("vs-random", "vs-initial"):
    s = json.load(open(os.path.join(sys.argv[1], "proof", name, "summary.json")))
    t = s["total"]
    n = t["wins"] + t["draws"] + t["losses"]
    print(f"{name}: {t['wins']}-{t['draws']}-{t['losses']} over {n} games, "
          f"score {(t['wins'] + 0.5 * t['draws']) / max(n, 1):.1%}")
PY
# The fixed scale (anchor alphabeta:depth=1 = 0 Elo): LADDER_GAMES per pairing, 0 to skip.
if [ "${LADDER_GAMES:-100}" != 0 ]; then
  SHOGI_ZERO_BIN="$bin" LADDER_GUMBEL="$gumbel" LADDER_LEAF_MATE="$leaf_mate" LADDER_GUMBEL_CAPTURES="$captures" LADDER_GUMBEL_SAFE="$safe" LADDER_GUMBEL_C_SCALE="$c_scale" LADDER_GUMBEL_SAFETY="$safety" bash scripts/bench/ladder.sh "$run" "${LADDER_GAMES:-100}" "$sims"
fi

#!/usr/bin/env bash
# The fixed strength scale: a network (a run's best, or a checkpoint) with MCTS against a
# ladder of fixed, network-free opponents (random and the classical alpha-beta baseline
# at several depths), plus the ladder's own rungs against each other, then one joint
# Bradley-Terry (Elo) fit over all those games. The scale's anchor is
# `alphabeta:depth=1` = 0 Elo; its rungs depend only on the depth (never on the machine),
# and with the same GAMES, seed and ply limit the rung-vs-rung games are the same games
# on every run, so ratings from different runs and configs are on one scale.
#
#   bash scripts/bench/ladder.sh RUN_DIR|CHECKPOINT_DIR [GAMES] [SIMULATIONS]
#
# GAMES per pairing (default 40; paired openings, colours swapped), SIMULATIONS per
# move of the network (default 32). Environment:
#   LADDER            the opponents, space separated (default: random and
#                     alphabeta:depth=1..4 for minishogi, ..3 for shogi)
#   LADDER_OUT        where the matches go (default RUN_DIR/ladder, or
#                     CHECKPOINT_DIR/../ladder-NAME)
#   LADDER_PARALLEL   games at once (default 4)
#   LADDER_MAX_PLIES  ply limit of every game (default 200 for minishogi, 320 for shogi)
#   LADDER_DEVICE     the network's device (default auto)
#   LADDER_GUMBEL     the network searches with a noise-free Gumbel root considering
#                     this many moves (default 0: PUCT)
#   SHOGI_ZERO_BIN    the binary (default ./target/release/shogi-zero, built if missing)
# The table (also LADDER_OUT/ladder.txt and ladder.json) gives each player's Elo with a
# 95% interval; a result of 0% or 100% is softened by one virtual draw per pairing so
# that every rating stays finite (random sits far below the anchor: treat it as "below").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
target="${1:?usage: ladder.sh RUN_DIR|CHECKPOINT_DIR [GAMES] [SIMULATIONS]}"
games="${2:-40}"
sims="${3:-32}"
bin="${SHOGI_ZERO_BIN:-./target/release/shogi-zero}"
py="${SHOGI_ZERO_PYTHON:-python3}"
if [ ! -x "$bin" ]; then
  . scripts/env.sh
  cargo build --release -p shogi-zero
fi

if [ -f "$target/manifest.json" ]; then
  net="$target"
  out="${LADDER_OUT:-$(dirname "$target")/ladder-$(basename "$target")}"
elif [ -d "$target/accepted" ]; then
  if [ -f "$target/BEST" ]; then
    net="$target/$(tr -d '[:space:]' < "$target/BEST")"
  else
    net="$(ls -d "$target"/accepted/step-* | sort | tail -n 1)"
  fi
  out="${LADDER_OUT:-$target/ladder}"
else
  echo "ladder.sh: $target is neither a checkpoint (no manifest.json) nor a run (no accepted/)" >&2
  exit 2
fi
variant="$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["variant"])' "$net/manifest.json")"
case "$variant" in
  minishogi) default_ladder="random alphabeta:depth=1 alphabeta:depth=2 alphabeta:depth=3 alphabeta:depth=4"
             default_plies=200 ;;
  shogi) default_ladder="random alphabeta:depth=1 alphabeta:depth=2 alphabeta:depth=3"
         default_plies=320 ;;
  *) echo "ladder.sh: the ladder has rungs for shogi and minishogi, not $variant" >&2; exit 2 ;;
esac
read -r -a rungs <<< "${LADDER:-$default_ladder}"
parallel="${LADDER_PARALLEL:-4}"
plies="${LADDER_MAX_PLIES:-$default_plies}"
device="${LADDER_DEVICE:-auto}"
mkdir -p "$out"
echo "ladder: $net ($variant, $sims simulations) against ${rungs[*]}; $games games per pairing, max $plies plies -> $out"

# One match into $out/$name unless it is a rung-vs-rung match whose summary is there
# already (those are the same games every time, so they are kept and reused;
# LADDER_REPLAY=1 plays them again).
play() {
  local name="$1" a="$2" b="$3"
  if [ -f "$out/$name/summary.json" ] && [ "${LADDER_REPLAY:-0}" = 0 ] && [[ "$name" == rung-* ]]; then
    return
  fi
  rm -rf "${out:?}/$name"
  "$bin" match --a "$a" --b "$b" --variant "$variant" --games "$games" \
    --simulations "$sims" --gumbel "${LADDER_GUMBEL:-0}" --parallel "$parallel" --max-plies "$plies" --device "$device" \
    --seed 1 --out "$out/$name" > "$out/$name.txt" 2>&1 || { cat "$out/$name.txt" >&2; exit 1; }
  grep -E '^(total|Elo)' "$out/$name.txt" | sed "s|^|  $name: |"
}
slug() { echo "$1" | tr ':=,/' '____'; }

rm -f "$out"/pairs.tsv
for ((i = 0; i + 1 < ${#rungs[@]}; i++)); do
  a="${rungs[i + 1]}" b="${rungs[i]}"
  # Keyed by games and ply limit: a cached rung match is reused only for the same games.
  name="rung-$(slug "$a")-vs-$(slug "$b")-g$games-p$plies"
  play "$name" "$a" "$b"
  printf '%s\t%s\t%s\n' "$a" "$b" "$name" >> "$out/pairs.tsv"
done
for r in "${rungs[@]}"; do
  name="net-vs-$(slug "$r")"
  play "$name" "checkpoint:$net" "$r"
  printf '%s\t%s\t%s\n' "net" "$r" "$name" >> "$out/pairs.tsv"
done

"$py" - "$out" "$net" "$sims" "${rungs[@]}" <<'PY' | tee "$out/ladder.txt"
import json, math, os, sys

out, net, sims, rungs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
anchor = "alphabeta:depth=1" if "alphabeta:depth=1" in rungs else rungs[0]
pairs = []
for line in open(os.path.join(out, "pairs.tsv")):
    a, b, name = line.rstrip("\n").split("\t")
    t = json.load(open(os.path.join(out, name, "summary.json")))["total"]
    pairs.append((a, b, t["wins"], t["draws"], t["losses"]))
players = ["net"] + rungs
free = [p for p in players if p != anchor]
k = math.log(10) / 400
r = {p: 0.0 for p in players}

def expected(d):
    return 1 / (1 + math.exp(-k * d))

# Newton steps on the log-likelihood; one virtual draw per pairing keeps it finite.
for _ in range(200):
    grad = {p: 0.0 for p in free}
    hess = {p: {q: 0.0 for q in free} for p in free}
    for a, b, w, d, l in pairs:
        n = w + d + l + 1
        s = w + 0.5 * d + 0.5
        e = expected(r[a] - r[b])
        g = k * (s - n * e)
        h = k * k * n * e * (1 - e)
        for p, sign in ((a, 1), (b, -1)):
            if p in grad:
                grad[p] += sign * g
        for p, sp in ((a, 1), (b, -1)):
            for q, sq in ((a, 1), (b, -1)):
                if p in hess and q in hess[p]:
                    hess[p][q] += sp * sq * h
    # Solve hess * step = grad (small dense system, Gauss-Jordan).
    m = [[hess[p][q] for q in free] + [grad[p]] for p in free]
    size = len(free)
    for c in range(size):
        piv = max(range(c, size), key=lambda i: abs(m[i][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for i in range(size):
            if i != c:
                f = m[i][c] / m[c][c]
                m[i] = [x - f * y for x, y in zip(m[i], m[c])]
    step = [m[i][size] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(size)]
    for p, s in zip(free, step):
        r[p] += max(-400.0, min(400.0, s))
    if max(abs(s) for s in step) < 1e-6:
        break
# Intervals: the inverse information matrix (anchor fixed).
size = len(free)
inv = [[hess[p][q] for q in free] + [1.0 if i == j else 0.0 for j in range(size)]
       for i, p in enumerate(free)]
for c in range(size):
    piv = max(range(c, size), key=lambda i: abs(inv[i][c]))
    inv[c], inv[piv] = inv[piv], inv[c]
    d = inv[c][c]
    inv[c] = [x / d for x in inv[c]]
    for i in range(size):
        if i != c:
            f = inv[i][c]
            inv[i] = [x - f * y for x, y in zip(inv[i], inv[c])]
sd = {p: math.sqrt(max(inv[i][size + i], 0.0)) for i, p in enumerate(free)}
sd[anchor] = 0.0

print(f"Ladder (anchor {anchor} = 0 Elo; joint Bradley-Terry fit, 95% intervals)")
print(f"net: {net} with {sims} simulations per move")
print(f"{'player':<24} {'Elo':>7} {'95% interval':>18}")
for p in sorted(players, key=lambda p: r[p], reverse=True):
    lo, hi = r[p] - 1.96 * sd[p], r[p] + 1.96 * sd[p]
    print(f"{p:<24} {r[p]:>+7.0f} {f'[{lo:+.0f}, {hi:+.0f}]':>18}")
print(f"{'pairing':<46} {'W':>4} {'D':>4} {'L':>4} {'score':>7}")
for a, b, w, d, l in pairs:
    n = max(w + d + l, 1)
    print(f"{a + ' vs ' + b:<46} {w:>4} {d:>4} {l:>4} {100 * (w + 0.5 * d) / n:>6.1f}%")
beaten = [p for p in rungs if p.startswith("alphabeta:")
          and any(a == "net" and b == p and (w + 0.5 * d) / max(w + d + l, 1) >= 0.5
                  for a, b, w, d, l in pairs)]
print("strongest rung the net scores >= 50% against: " + (beaten[-1] if beaten else "none"))
json.dump({"anchor": anchor, "net": net, "simulations": int(sims),
           "ratings": {p: {"elo": r[p], "low": r[p] - 1.96 * sd[p], "high": r[p] + 1.96 * sd[p]}
                       for p in players},
           "pairs": [{"a": a, "b": b, "wins": w, "draws": d, "losses": l} for a, b, w, d, l in pairs],
           "strongest_rung_beaten": beaten[-1] if beaten else None},
          open(os.path.join(out, "ladder.json"), "w"), indent=2)
PY

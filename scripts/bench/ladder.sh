#!/usr/bin/env bash
# The fixed strength scale: a network (a run's best, or a checkpoint) with MCTS against a
# ladder of fixed, network-free opponents (random and the classical alpha-beta baseline
# at several depths), plus the ladder's own rungs against each other, then one joint
# Bradley-Terry (Elo) fit over all those games (scripts/bench/ladder_fit.py). The scale's
# anchor is `alphabeta:depth=1` = 0 Elo; its rungs depend only on the depth (never on the
# machine), and with the same GAMES, seed and ply limit the rung-vs-rung games are the
# same games on every run, so ratings from different runs and configs are on one scale.
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

"$py" scripts/bench/ladder_fit.py "$out" "$net" "$sims" "${rungs[@]}" | tee "$out/ladder.txt"

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
#                     alphabeta:depth=1..4 for minishogi, ..3 for shogi, ..2 for tai)
#   LADDER_OUT        where the matches go (default RUN_DIR/ladder, or
#                     CHECKPOINT_DIR/../ladder-NAME)
#   LADDER_PARALLEL   games at once (default 4)
#   LADDER_MAX_PLIES  ply limit of every game (default 200 for minishogi and tai, 320
#                     for shogi)
#   LADDER_ADJUDICATE material lead that wins a game at the ply limit (default 30 for
#                     tai, as configs/tai.toml; 0, a draw, for the others)
#   LADDER_DEVICE     the network's device (default auto)
#   LADDER_ROOT_OF    a run directory: the network searches as that run measures its
#                     networks (`match --root-of RUN`: its self-play root and [play]
#                     options; learns.sh passes the run), and is rated a second time
#                     with the plain search (`--root-of RUN --plain`: the same root
#                     without the rules written by hand) as `net-plain`: two numbers,
#                     the whole player's and the network's own. Replaces the
#                     LADDER_GUMBEL*, LADDER_LEAF_* settings below, which give a search
#                     by hand:
#   LADDER_GUMBEL     the network searches with a noise-free Gumbel root considering
#                     this many moves (default 0: PUCT)
#   LADDER_GUMBEL_CAPTURES  1: that root always considers the moves that win material
#   LADDER_GUMBEL_SAFETY  that root's penalty per point left en prise (default 0: off)
#   LADDER_GUMBEL_C_SCALE  that root's c_scale (default -: the binary's default)
#   LADDER_LEAF_EXCHANGE  weight of the side to move's static exchange gain in every
#                     network leaf's value (default 0: off)
#   LADDER_LEAF_MATE  nodes of the network's mate search at every new leaf (default 0:
#                     off)
#   LADDER_REPLAY     1: play the cached rung-vs-rung matches again
#   SHOGI_ZERO_BIN    the binary (default ./target/release/shogi-zero, built if missing)
# The table (also LADDER_OUT/ladder.txt and ladder.json) gives each player's Elo with a
# 95% interval; a result of 0% or 100% is softened by one virtual draw per pairing so
# that every rating stays finite (random sits far below the anchor: treat it as "below").
# Rung-vs-rung matches between deterministic rungs (random, alphabeta by depth or nodes)
# are cached under a name that holds the variant, both rungs, the games and the ply
# limit, and are reused only while the baseline's version (summary.json's
# baseline_version, which the network's matches played now report) is the same.
# Forfeits are counted as losses; the table warns about every match that had any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
target="${1:?usage: ladder.sh RUN_DIR|CHECKPOINT_DIR [GAMES] [SIMULATIONS]}"
games="${2:-40}"
sims="${3:-32}"   # shogi_arena::curve::CURVE_SIMULATIONS, the fixed scale's budget
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
  # Tai games rarely end by the rules within a CPU budget's cap: the side 30 material
  # points ahead at the cap wins, as configs/tai.toml's self-play adjudicates them.
  tai) default_ladder="random alphabeta:depth=1 alphabeta:depth=2"
       default_plies=200 default_adjudicate=30 ;;
  *) echo "ladder.sh: the ladder has rungs for shogi, minishogi and tai, not $variant" >&2; exit 2 ;;
esac
adjudicate="${LADDER_ADJUDICATE:-${default_adjudicate:-0}}"
read -r -a rungs <<< "${LADDER:-$default_ladder}"
parallel="${LADDER_PARALLEL:-4}"
plies="${LADDER_MAX_PLIES:-$default_plies}"
device="${LADDER_DEVICE:-auto}"
mkdir -p "$out"
echo "ladder: $net ($variant, $sims simulations) against ${rungs[*]}; $games games per pairing, max $plies plies (adjudicated at $adjudicate) -> $out"

# The network's search: a run's (LADDER_ROOT_OF) or the one the settings give.
plain_search=()
if [ -n "${LADDER_ROOT_OF:-}" ]; then
  search=(--root-of "$LADDER_ROOT_OF")
  plain_search=(--root-of "$LADDER_ROOT_OF" --plain)
else
  search=(--leaf-mate-nodes "${LADDER_LEAF_MATE:-0}")
  # A Gumbel root (LADDER_GUMBEL moves) and its options; PUCT without it.
  if [ "${LADDER_GUMBEL:-0}" != 0 ]; then
    search+=(--gumbel "$LADDER_GUMBEL")
    if [ "${LADDER_GUMBEL_CAPTURES:-0}" = 1 ]; then search+=(--gumbel-captures); fi
    if [ "${LADDER_GUMBEL_SAFETY:-0}" != 0 ] && [ "${LADDER_GUMBEL_SAFETY:-0}" != 0.0 ]; then
      search+=(--gumbel-safety "$LADDER_GUMBEL_SAFETY")
    fi
    if [ "${LADDER_GUMBEL_C_SCALE:--}" != - ]; then search+=(--gumbel-c-scale "$LADDER_GUMBEL_C_SCALE"); fi
  fi
  if [ "${LADDER_LEAF_EXCHANGE:-0}" != 0 ] && [ "${LADDER_LEAF_EXCHANGE:-0}" != 0.0 ]; then
    search+=(--leaf-exchange "$LADDER_LEAF_EXCHANGE")
  fi
fi

# One match into $out/$name; the network searches with the flags after the players
# (default: $search).
play() {
  local name="$1" a="$2" b="$3"
  shift 3
  local how=("$@")
  [ ${#how[@]} -gt 0 ] || how=("${search[@]}")
  rm -rf "${out:?}/$name"
  "$bin" match --a "$a" --b "$b" --variant "$variant" --games "$games" \
    --simulations "$sims" "${how[@]}" --parallel "$parallel" --max-plies "$plies" --device "$device" \
    --adjudicate "$adjudicate" --seed 1 --out "$out/$name" > "$out/$name.txt" 2>&1 || { cat "$out/$name.txt" >&2; exit 1; }
  grep -E '^(total|Elo|forfeits)' "$out/$name.txt" | sed "s|^|  $name: |"
}
slug() { echo "$1" | tr ':=,/' '____'; }
# A match's baseline version from its summary.json ("null" when no alphabeta played).
baseline_version() {
  "$py" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("baseline_version")))' "$1"
}
# Rungs whose games are the same on every run: random and alphabeta without a clock.
deterministic() { [[ "$1" == random || ( "$1" == alphabeta:* && "$1" != *movetime* ) ]]; }

rm -f "$out"/pairs.tsv
# The network's matches first: they are always played, with this binary, so their
# summaries tell which baseline version the cached rung matches must have.
version=null
for r in "${rungs[@]}"; do
  name="net-vs-$(slug "$r")"
  play "$name" "checkpoint:$net" "$r"
  printf '%s\t%s\t%s\n' "net" "$r" "$name" >> "$out/pairs.tsv"
  v="$(baseline_version "$out/$name/summary.json")"
  [ "$v" = null ] || version="$v"
  if [ ${#plain_search[@]} -gt 0 ]; then
    name="net-plain-vs-$(slug "$r")"
    play "$name" "checkpoint:$net" "$r" "${plain_search[@]}"
    printf '%s\t%s\t%s\n' "net-plain" "$r" "$name" >> "$out/pairs.tsv"
  fi
done
for ((i = 0; i + 1 < ${#rungs[@]}; i++)); do
  a="${rungs[i + 1]}" b="${rungs[i]}"
  # Keyed by variant, rungs, games and ply limit; reused only for the same baseline.
  name="rung-$variant-$(slug "$a")-vs-$(slug "$b")-g$games-p$plies"
  [ "$adjudicate" = 0 ] || name="$name-a$adjudicate"
  cached="$out/$name/summary.json"
  if [ -f "$cached" ] && [ "${LADDER_REPLAY:-0}" = 0 ] && deterministic "$a" && deterministic "$b"; then
    was="$(baseline_version "$cached")"
    if [ "$was" = "$version" ]; then
      echo "  $name: cached (baseline version $was)"
    else
      echo "  $name: cached games are of baseline version $was, now $version: playing them again"
      play "$name" "$a" "$b"
    fi
  else
    play "$name" "$a" "$b"
  fi
  printf '%s\t%s\t%s\n' "$a" "$b" "$name" >> "$out/pairs.tsv"
done

"$py" scripts/bench/ladder_fit.py "$out" "$net" "$sims" "${rungs[@]}" | tee "$out/ladder.txt"

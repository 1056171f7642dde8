#!/usr/bin/env bash
# A teacher set for learning from game records when no public records are at hand: the
# classical baseline `alphabeta:depth=DEPTH` playing itself from random openings (8
# random legal plies from the start, made by cshogi and given as start positions, so no
# random move is in the records; each opening is played twice, colours swapped, and the
# baseline's seeded tie-break noise makes every game its own), written as CSA
# (the match's game files, gathered into one floodgate-style archive, games split by
# `/` lines) and as dlshogi's hcpe by cshogi (scripts/bench/csa_to_hcpe.py), the
# independent writer. Prints how long the games took.
#
#   bash scripts/bench/teacher_set.sh OUT GAMES [DEPTH] [SEED] [BIN]
#   -> OUT/teacher.csa, OUT/teacher.hcpe, OUT/openings.sfen, OUT/match/ (the match's files)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
usage="usage: teacher_set.sh OUT GAMES [DEPTH] [SEED] [BIN]"
out="${1:?$usage}"
games="${2:?$usage}"
depth="${3:-3}"
seed="${4:-1}"
bin="${5:-target/release/shogi-zero}"
mkdir -p "$out"
.venv/bin/python - "$out/openings.sfen" "$(( (games + 1) / 2 ))" "$seed" <<'PY'
import random, sys
import cshogi
path, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng, seen = random.Random(seed), set()
while len(seen) < count:
    board = cshogi.Board()
    for _ in range(8):
        board.push(rng.choice(list(board.legal_moves)))
    seen.add(board.sfen())
with open(path, "w") as f:
    f.write("\n".join(sorted(seen)) + "\n")
PY
began=$(date +%s)
rm -rf "$out/match"
"$bin" match --a "alphabeta:depth=$depth" --b "alphabeta:depth=$depth" --games "$games" \
  --openings "$out/openings.sfen" --max-plies 320 --parallel "$(nproc)" --seed "$seed" \
  --out "$out/match" > "$out/match.txt"
took=$(( $(date +%s) - began ))
tail -n 3 "$out/match.txt"
# One archive, as floodgate publishes them: games joined by `/` lines.
first=1
for f in "$out"/match/game-*.csa; do
  if [[ $first == 0 ]]; then echo "/"; fi
  first=0
  cat "$f"
done > "$out/teacher.csa"
.venv/bin/python scripts/bench/csa_to_hcpe.py "$out/teacher.hcpe" "$out/teacher.csa"
echo "teacher_set.sh: $games games of alphabeta:depth=$depth in $took s on $(nproc) cores"

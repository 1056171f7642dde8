#!/usr/bin/env bash
# One game of a record as a page and a picture: `shogi-zero view` writes OUT.html, then
# headless Chromium opens it at the last move (`#ply=end`) and saves OUT.png.
#
#   bash scripts/view_shot.sh runs/tai/proof/vs-initial 3 docs/examples/tai-vs-initial
#   SIZE=1100,800 bash scripts/view_shot.sh runs/minishogi/proof/vs-random 1 /tmp/game
#
# RECORD is anything `view` reads (a self-play chunk, a match or gate games directory);
# SIZE is the browser window, width,height (default 1400,1300: a 25x25 tai board whole).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
record="${1:?usage: view_shot.sh RECORD GAME OUT (OUT.html and OUT.png are written)}"
game="${2:?usage: view_shot.sh RECORD GAME OUT}"
out="${3:?usage: view_shot.sh RECORD GAME OUT}"
size="${SIZE:-1400,1300}"
bin="${SHOGI_ZERO_BIN:-./target/release/shogi-zero}"
browser=""
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null; then browser="$(command -v "$name")"; break; fi
done
[ -n "$browser" ] || { echo "view_shot.sh: no chromium on PATH (bash scripts/install_chromium.sh)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
"$bin" view "$record" --game "$game" --out "$out.html"
abs="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="$size" --virtual-time-budget=5000 \
  --screenshot="$abs.png" "file://$abs.html#ply=end" 2>/dev/null
[ -s "$out.png" ] || { echo "view_shot.sh: chromium wrote no screenshot" >&2; exit 1; }
echo "$out.html  $out.png"

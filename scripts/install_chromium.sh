#!/usr/bin/env bash
# Installs Chromium (Debian's package) for the headless browser test of `shogi-zero
# view` when it is missing (scripts/test.sh runs it). Needs root or sudo; where neither
# works it says so, and the test stays listed as ignored.
set -euo pipefail
for name in chromium chromium-browser google-chrome; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "install_chromium.sh: not root and no sudo: the browser test will not run" >&2
    exit 0
  fi
fi
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 \
  || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends chromium >/dev/null; }
echo "install_chromium.sh: chromium installed in $(( $(date +%s) - start )) s" >&2

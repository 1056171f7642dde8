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
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium.sh: no apt-get here: install Chromium by hand to run the browser test" >&2
  exit 0
fi
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
# A failed install (no network, no package) leaves the test listed as ignored rather
# than stopping the suite before any test runs.
if $sudo apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 \
  || { $sudo apt-get update -q >/dev/null 2>&1 \
    && $sudo apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1; }; then
  echo "install_chromium.sh: chromium installed in $(( $(date +%s) - start )) s" >&2
else
  echo "install_chromium.sh: apt-get could not install chromium: the browser test will not run" >&2
fi

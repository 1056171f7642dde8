#!/usr/bin/env bash
# Idempotent bootstrap: a git-ignored .venv with PyTorch 2.11.0 (the libtorch tch 0.24
# links against) and the Python packages the tests use as oracles.
#
# Quick when everything is present: it compares a stamp of the requirements with the
# one written after the last successful install and touches the network only when they
# differ. Source scripts/env.sh afterwards (or use the Makefile) to build against it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
req="$root/scripts/requirements.txt"
stamp="$venv/.bootstrap-stamp"

python_bin="${PYTHON:-python3}"
if ! command -v "$python_bin" >/dev/null 2>&1; then
    echo "bootstrap: '$python_bin' not found; install Python 3.10+ or set PYTHON=" >&2
    exit 1
fi
if ! "$python_bin" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
    echo "bootstrap: Python 3.10+ required, found $("$python_bin" --version 2>&1)" >&2
    exit 1
fi

# tsshogi (npm; ShogiHome's record library): the KIF/KI2/CSA oracle of the record tests
# (scripts/oracle/tsshogi_records.cjs), installed where Node.js is; scripts/test.sh runs
# those tests where it is installed and says so where not.
tsshogi_version="2.2.0"
install_tsshogi() {
    local dir="$venv/node"
    if [[ "$(cat "$dir/.stamp" 2>/dev/null)" == "$tsshogi_version" ]]; then
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "bootstrap: no npm (Node.js): the tsshogi record oracle is not installed" >&2
        return 0
    fi
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --silent "tsshogi@$tsshogi_version" >&2
    echo "$tsshogi_version" > "$dir/.stamp"
}

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/python" ]]; then
    install_tsshogi
    exit 0
fi

# PyTorch's Linux wheels bring its CUDA libraries: the installed venv holds about 5.2 GB,
# and pip keeps every downloaded wheel (about 3 GB) in TMPDIR until all are installed.
# Say so before pip fails halfway with "No space left on device" (a CI clone with 7.8 GB
# free did). --no-cache-dir: a second copy of every wheel in ~/.cache/pip would need 3 GB more.
venv_gb=6
wheels_gb=4
tmp="${TMPDIR:-/tmp}"
free_gb() { df -Pk "$1" 2>/dev/null | awk 'NR == 2 { printf "%d", $4 / 1048576 }'; }
device_of() { df -Pk "$1" 2>/dev/null | awk 'NR == 2 { print $1 }'; }
check_free() {
    local dir="$1" need="$2" have
    have="$(free_gb "$dir")"
    if [[ -n "$have" && "$have" -lt "$need" ]]; then
        echo "bootstrap: $dir has ${have} GB free; installing the venv (PyTorch 2.11.0 with its CUDA libraries) needs about ${need} GB there. Free some space (old run directories, target/, clones under /tmp) and run it again." >&2
        exit 1
    fi
}
if [[ "$(device_of "$root")" == "$(device_of "$tmp")" ]]; then
    check_free "$root" $((venv_gb + wheels_gb))
else
    check_free "$root" "$venv_gb"
    check_free "$tmp" "$wheels_gb"
fi

start=$(date +%s)
echo "bootstrap: creating $venv (PyTorch 2.11.0 and the test oracles; about 75 s)" >&2
[[ -x "$venv/bin/python" ]] || "$python_bin" -m venv "$venv"
pip_install=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir)
"${pip_install[@]}" --upgrade pip
"${pip_install[@]}" -r "$req"
echo "$want" > "$stamp"
install_tsshogi
echo "bootstrap: done in $(( $(date +%s) - start )) s" >&2

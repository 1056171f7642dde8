# Source this (bash): puts the project's .venv first on PATH and tells torch-sys to use
# the PyTorch installed there (tch 0.24 <-> torch 2.11.0). Run scripts/bootstrap.sh first.
_sz_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$_sz_root/.venv/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
export VIRTUAL_ENV="$_sz_root/.venv"
# The oracle tests run the venv's python; tell them where it is.
export SHOGI_ZERO_PYTHON="$_sz_root/.venv/bin/python"
# Without it torch-sys's build fails with "No module named 'torch'", which names no cure.
if [[ ! -x "$_sz_root/.venv/bin/python" ]]; then
  echo "env.sh: $_sz_root/.venv is missing: run 'bash scripts/bootstrap.sh' first (cargo cannot build torch-sys without its PyTorch)" >&2
fi
unset _sz_root

#!/usr/bin/env bash
# Install the pinned CUDA 13.0 compiler wheels from PyPI into a local venv and print nvcc's path.
#
#   scripts/install-cuda-toolkit.sh [VENV_DIR]      (default: .cuda-venv in the checkout)
#
# CUDA 13.0 is pinned so the PTX we emit loads on 13.0 drivers (driver 580); nvvm must be pinned
# too, or a newer PTX ISA comes out. Idempotent: a venv that already has nvcc is reused.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.cuda-venv}"
nvcc_path() { ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | awk 'NR == 1' || true; }
if [ -z "$(nvcc_path)" ]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 \
    nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 >&2
fi
nvcc="$(nvcc_path)"
[ -x "$nvcc" ] || { echo "nvcc not found under $venv after install" >&2; exit 1; }
echo "$nvcc"

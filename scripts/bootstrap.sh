#!/usr/bin/env bash
# Create .venv (once) and install tabmoe with every extra. torch==2.13.0 is installed only
# where .venv has no torch, from the configured package index (PyPI's Linux x86-64 wheel is
# the CUDA build): install the CPU or CUDA build you want into .venv first
# (docs/installation.md, step 1).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  .venv/bin/python -m pip install -q "torch==2.13.0"
fi
.venv/bin/python -m pip install -q -e ".[dev]"

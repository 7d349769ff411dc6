#!/usr/bin/env bash
# Run every docs example, offline, each under a time limit (EXAMPLE_TIMEOUT seconds, default
# 120). An example's stdout goes to docs/examples/output/<name>.txt, which the pages embed
# next to its code; its plots go to docs/img/. A failing or overlong example fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=${EXAMPLE_TIMEOUT:-120}
export MPLBACKEND=Agg
mkdir -p docs/examples/output
# The CPU kind the outputs come from: tests/test_doc_snippets.py compares them exactly only
# on the same kind (another may round float32 sums differently and move a figure).
# ood_shift.py's simulation rows also depend on numpy's OpenBLAS kernels: they are compared
# only where numpy draws the authors' basis (tests/authors_data.py), so record them there.
python -c "from tabmoe.bench._environment import cpu_model; print(cpu_model())" > docs/examples/output/cpu.txt
for f in docs/examples/*.py; do
  name=$(basename "$f" .py)
  start=$(date +%s.%N)
  if ! timeout "$LIMIT" python "$f" > "docs/examples/output/$name.txt"; then
    echo "example $f failed or ran over ${LIMIT} s" >&2
    exit 1
  fi
  awk -v f="$f" -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "example %-36s %6.1f s\n", f, b - a }'
done

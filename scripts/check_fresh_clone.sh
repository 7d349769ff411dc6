#!/usr/bin/env bash
# What a newcomer gets: clone this repository into an empty temporary folder (no ../shared
# beside it, no TABMOE_* variables), run README's two Quick start commands exactly as README
# writes them, and fail if
#   - the main job (first command) ran zero runs (e.g. it only skipped committed results),
#   - either command fails,
#   - `git status` of the clone is not clean afterwards (tracked files rewritten, litter),
#   - the fresh smoke report's accuracy tables differ from the committed reference
#     (benchmarks/results/smoke/report.md; scripts/compare_reports.py).
# Usage: bash scripts/check_fresh_clone.sh [REPOSITORY]   (default: this checkout's HEAD)
# Costs one bootstrap (pip reuses its cache, torch included), one smoke run and one run of
# the default test suite.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="${1:-$here}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tabmoe-fresh.XXXXXX")"
trap 'rm -rf "$work"' EXIT
clone="$work/tabmoe"
git clone --quiet "$repo" "$clone"
for dir in "$work" "$(dirname "$work")" /; do
  if [ -e "$dir/shared" ]; then
    echo "check_fresh_clone: $dir/shared exists next to the clone; set TMPDIR to a folder without one" >&2
    exit 1
  fi
done
cd "$clone"

# README's Quick start: the first ```bash block after the heading, its two lines as written.
mapfile -t commands < <(awk '/^## Quick start/{q=1} q&&/^```bash/{b=1; next} b&&/^```/{exit} b&&NF{print}' README.md)
if [ "${#commands[@]}" -ne 2 ]; then
  echo "check_fresh_clone: README's Quick start should hold two commands, found ${#commands[@]}:" >&2
  printf '  %s\n' "${commands[@]}" >&2
  exit 1
fi

run_readme() {  # a newcomer's environment: no shared data, no overrides
  env -u TABMOE_SHARED -u TABMOE_AUTO_MPG -u TABMOE_OPENML_CACHE -u TABMOE_SUITES_DIR \
    -u VIRTUAL_ENV PATH="$(echo "$PATH" | tr ':' '\n' | grep -v '/\.venv/bin$' | paste -sd:)" \
    bash -c "$1"
}

echo "== fresh clone in $clone"
echo "== README command 1: ${commands[0]}"
log="$work/main-job.log"
run_readme "${commands[0]}" 2>&1 | tee "$log"
summary=$(grep -E '^[a-z0-9_-]+: [0-9]+ planned, [0-9]+ already finished, [0-9]+ run now' "$log" | tail -n 1 || true)
if [ -z "$summary" ]; then
  echo "check_fresh_clone: the main job printed no run summary" >&2
  exit 1
fi
ran=$(sed -E 's/.* ([0-9]+) run now.*/\1/' <<<"$summary")
if [ "$ran" -eq 0 ]; then
  echo "check_fresh_clone: the main job ran zero runs on a fresh clone: $summary" >&2
  exit 1
fi
report=$(sed -nE 's/.*; report: (.*)$/\1/p' <<<"$summary")
if [ -z "$report" ] || [ ! -f "$report" ]; then
  echo "check_fresh_clone: the main job wrote no report: $summary" >&2
  exit 1
fi

echo "== README command 2: ${commands[1]}"
run_readme "${commands[1]}"

echo "== git status of the clone"
dirty=$(git status --porcelain)
if [ -n "$dirty" ]; then
  echo "check_fresh_clone: README's commands left the clone dirty:" >&2
  echo "$dirty" >&2
  exit 1
fi

echo "== accuracy tables: committed reference vs fresh run"
.venv/bin/python scripts/compare_reports.py benchmarks/results/smoke/report.md "$report"
echo "check_fresh_clone: OK ($summary)"

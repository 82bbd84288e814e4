#!/usr/bin/env bash
# Reproduce the paper's Figure 2 (section 4.2): suboptimality and value gap against N_min on the hard instance.
# Paper settings: K = 4, A = 7, H = 40, N_min in {50,...,8000}, lambda = 1, xi = 0.05, c = 5e-4,
# R = 50 trials.
#
# Usage: scripts/reproduce-convergence.sh [DIR] [extra flags, e.g. --workers 2 --seed 7]
# Writes DIR/summary.json, table.md, table.csv and the plots (default DIR: results/convergence).
# Results depend only on --seed and --reps, never on --workers.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="results/convergence"
if [[ $# -gt 0 && $1 != -* ]]; then
	dir="$1"
	shift
fi
exec go run ./cmd/grmdp experiment convergence --reps 50 --seed 1 --n-min 50,100,500,1000,2000,5000,8000 --lambda 1 --xi 0.05 --c 5e-4 -o "$dir" "$@"

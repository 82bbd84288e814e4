#!/usr/bin/env bash
# Reproduce the paper's Figure 3 (section 4.3): suboptimality with and without the pessimism penalty on the trap instance.
# Paper settings: A = 2, K = 3, H = 7, lambda = 1e-5, xi = 0.05, c in {0, 5e-4, 1e-3},
# N_min in {20, 200, ..., 2e6}, R = 50 trials, 200 uniform initial states per trial.
#
# Usage: scripts/reproduce-pessimism.sh [DIR] [extra flags, e.g. --workers 2 --seed 7]
# Writes DIR/summary.json, table.md, table.csv and the plots (default DIR: results/pessimism).
# Results depend only on --seed and --reps, never on --workers.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="results/pessimism"
if [[ $# -gt 0 && $1 != -* ]]; then
	dir="$1"
	shift
fi
exec go run ./cmd/grmdp experiment pessimism --reps 50 --seed 1 --n-min 20,200,2000,20000,200000,2000000 --lambda 1e-5 --xi 0.05 --c 0,5e-4,1e-3 --states 200 -o "$dir" "$@"

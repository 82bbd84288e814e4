#!/usr/bin/env bash
# Reproduce the paper's Figure 1 (section 4.1): Algorithm 1 against the PEVI baselines on the linear-Beta model.
# Paper settings: K = 3, p = 3, |A| = 10, H = 7, N = 3000, 2000, 5000, lambda = 1, xi = 0.05,
# c = 5e-4, R = 50 trials, 200 uniform initial states per trial.
#
# Usage: scripts/reproduce-benchmark.sh [DIR] [extra flags, e.g. --workers 2 --seed 7]
# Writes DIR/summary.json, table.md, table.csv and the plots (default DIR: results/benchmark).
# Results depend only on --seed and --reps, never on --workers.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="results/benchmark"
if [[ $# -gt 0 && $1 != -* ]]; then
	dir="$1"
	shift
fi
exec go run ./cmd/grmdp experiment benchmark --reps 50 --seed 1 --trajectories 3000,2000,5000 --lambda 1 --xi 0.05 --c 5e-4 --states 200 -o "$dir" "$@"

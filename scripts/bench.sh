#!/usr/bin/env bash
# Whole-run benchmarks of docs/PERFORMANCE.md. Generates its datasets once
# (in $BENCH_DIR, default /tmp/grmdp-bench), then times each command RUNS
# times (default 3) with /usr/bin/time -v and prints the median wall time
# and peak RSS, and the ratios the performance issue asks for, all
# measured in this one run.
#
#   scripts/bench.sh                 # (a)-(d) (needs ~8 GB of disk, ~15 min)
#   ONLY=a RUNS=5 scripts/bench.sh   # dataset (a) only
#   ONLY=ae RUNS=1 scripts/bench.sh  # (e): 100M transitions, ~7 GB more disk, ~5 GiB of memory
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${BENCH_DIR:-/tmp/grmdp-bench}
RUNS=${RUNS:-3}
ONLY=${ONLY:-abcd}
mkdir -p "$DIR"
command -v /usr/bin/time >/dev/null || { echo "bench.sh needs /usr/bin/time (apt-get install time)"; exit 1; }
go build -o "$DIR/grmdp" ./cmd/grmdp
G="$DIR/grmdp"

# Datasets.
if [[ $ONLY == *a* || $ONLY == *b* ]] && [ ! -f "$DIR/a.parquet" ]; then
  # (a) action-block, 8 sites, H = 20, A = 10, p = 3, 10M transitions, rows in (site, traj, step) order
  "$G" simulate --scenario benchmark --sites 8 --horizon 20 \
    --trajectories 62500,62500,62500,62500,62500,62500,62500,62500 -o "$DIR/a.parquet"
fi
if [[ $ONLY == *b* ]] && [ ! -d "$DIR/b" ]; then
  # (b) the same rows shuffled across 16 files
  go run scripts/gendata.go shuffle "$DIR/a.parquet" "$DIR/b" 16 1
fi
if [[ $ONLY == *c* ]] && [ ! -f "$DIR/c.parquet" ]; then
  # (c) tabular, S = 10,000, A = 10 (d = 100,000), 10M transitions
  go run scripts/gendata.go tabular "$DIR/c.parquet" 10000000 10000 10 8 20 1
fi
if [[ $ONLY == *d* ]] && [ ! -f "$DIR/d.parquet" ]; then
  # (d) precomputed dense phi, d = 64 (A = 2, so 128 floats per row), 2M transitions
  go run scripts/gendata.go precomputed "$DIR/d.parquet" 2000000 64 2 8 20 1
fi

if [[ $ONLY == *e* ]] && [ ! -d "$DIR/e" ]; then
  # (e) 100M transitions of (a)'s shape on disk: ten copies of (a) with
  # shifted trajectory ids, in (site, traj, step) order ...
  go run scripts/gendata.go replicate "$DIR/a.parquet" "$DIR/e" 10
fi
if [[ $ONLY == *e* ]] && [ ! -d "$DIR/e-steps" ]; then
  # ... and in the layout grmdp prepare writes: sorted by step, row groups
  # aligned to steps.
  go run scripts/gendata.go replicate "$DIR/a.parquet" "$DIR/e-steps" 10 by-step
fi

# measure NAME ROWS CMD...: median wall seconds and median peak RSS (KiB)
declare -A WALL RSS NROWS
measure() {
  local name=$1 rows=$2; shift 2
  local walls=() rsss=()
  for _ in $(seq "$RUNS"); do
    local out
    out=$( /usr/bin/time -v "$@" 2>&1 >/dev/null | tail -30 )
    local w r
    w=$(echo "$out" | awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}')
    r=$(echo "$out" | awk -F': ' '/Maximum resident set size/ {print $2}')
    walls+=("$w"); rsss+=("$r")
  done
  WALL[$name]=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  RSS[$name]=$(printf '%s\n' "${rsss[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  NROWS[$name]=$rows
  printf '%-28s wall %8.3f s   peak %8.1f MiB   %6.1f bytes/transition\n' "$name" "${WALL[$name]}" \
    "$(echo "${RSS[$name]} / 1024" | bc -l)" "$(echo "${RSS[$name]} * 1024 / $rows" | bc -l)"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(go version | cut -d' ' -f3); median of $RUNS runs"
N=10000000
if [[ $ONLY == *a* ]]; then
  measure "scan (a)" $N "$G" scan --features action-block "$DIR/a.parquet"
  measure "solve (a)" $N "$G" solve --features action-block -o "$DIR/pa.parquet" "$DIR/a.parquet"
  measure "solve (a) --workers 1" $N "$G" solve --features action-block --workers 1 -o "$DIR/pa1.parquet" "$DIR/a.parquet"
  measure "compare (a)" $N "$G" compare --features action-block -o "$DIR/cmp" "$DIR/a.parquet"
  # (a) as grmdp prepare writes it (sorted by step, row groups aligned to
  # steps), solved in memory and out of core.
  [ -f "$DIR/a-steps.parquet" ] || "$G" prepare --features action-block -o "$DIR/a-steps.parquet" "$DIR/a.parquet" >/dev/null
  measure "solve (a) prepared" $N "$G" solve --features action-block -o "$DIR/pas.parquet" "$DIR/a-steps.parquet"
  measure "solve (a) prepared, out of core" $N "$G" solve --features action-block --out-of-core -o "$DIR/pao.parquet" "$DIR/a-steps.parquet"
fi
if [[ $ONLY == *b* ]]; then
  measure "solve (b)" $N "$G" solve --features action-block -o "$DIR/pb.parquet" "$DIR/b"
fi
if [[ $ONLY == *c* ]]; then
  measure "scan (c)" $N "$G" scan --features tabular "$DIR/c.parquet"
  measure "solve (c)" $N "$G" solve --features tabular -o "$DIR/pc.parquet" "$DIR/c.parquet"
fi
if [[ $ONLY == *d* ]]; then
  measure "scan (d)" 2000000 "$G" scan --features precomputed "$DIR/d.parquet"
  measure "solve (d)" 2000000 "$G" solve --features precomputed -o "$DIR/pd.parquet" "$DIR/d.parquet"
fi

if [[ $ONLY == *e* ]]; then
  E=100000000
  measure "scan (e)" $E "$G" scan --features action-block "$DIR/e"
  measure "solve (e) in memory" $E "$G" solve --features action-block -o "$DIR/pe.parquet" "$DIR/e"
  measure "solve (e) out of core, by step" $E "$G" solve --features action-block --out-of-core -o "$DIR/pe-ooc.parquet" "$DIR/e-steps"
  measure "solve (e) --max-memory 4GiB" $E "$G" solve --features action-block --max-memory 4GiB -o "$DIR/pe-auto.parquet" "$DIR/e-steps"
fi

# Where the time goes: one run each with --timings (phases on stderr).
if [[ $ONLY == *a* ]]; then
  echo
  echo "phases of one solve (a) and one compare (a) (grmdp --timings):"
  "$G" --timings solve --features action-block -o "$DIR/pa.parquet" "$DIR/a.parquet" 2>&1 >/dev/null | sed 's/^grmdp: timing: /  solve    /'
  "$G" --timings compare --features action-block -o "$DIR/cmp" "$DIR/a.parquet" 2>&1 >/dev/null | sed 's/^grmdp: timing: /  compare  /'
fi

ratio() { echo "${WALL[$1]} / ${WALL[$2]}" | bc -l; }
echo
echo "ratios (same run):"
if [[ $ONLY == *a* ]]; then
  printf '  solve (a) / scan (a)                 %.2f   (target <= 1.5)\n' "$(ratio 'solve (a)' 'scan (a)')"
  printf '  compare (a) / solve (a)              %.2f   (target <= 1.5)\n' "$(ratio 'compare (a)' 'solve (a)')"
  printf '  speed-up 1 -> %d workers on (a)       %.2f   (target >= 1.8)\n' "$(nproc)" "$(ratio 'solve (a) --workers 1' 'solve (a)')"
fi
if [[ $ONLY == *a* && $ONLY == *b* ]]; then
  printf '  solve (b) / solve (a)                %.2f   (target <= 1.2)\n' "$(ratio 'solve (b)' 'solve (a)')"
fi
if [[ $ONLY == *a* && $ONLY == *c* ]]; then
  printf '  solve (c) / solve (a) per transition %.2f   (target <= 2)\n' "$(ratio 'solve (c)' 'solve (a)')"
fi
if [[ $ONLY == *e* ]]; then
  printf '  solve (e) out of core / in memory    %.2f   (peak %.0f vs %.0f MiB)\n' "$(ratio 'solve (e) out of core, by step' 'solve (e) in memory')" \
    "$(echo "${RSS['solve (e) out of core, by step']} / 1024" | bc -l)" "$(echo "${RSS['solve (e) in memory']} / 1024" | bc -l)"
fi

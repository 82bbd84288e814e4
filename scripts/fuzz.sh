#!/bin/sh
# Runs every fuzz target of grmdp for a set time each and prints how many
# inputs each executed. A failing input is written by go test to the
# package's testdata/fuzz/<Target>/ directory: commit it (it becomes a
# regression test that plain `go test` runs) and fix the code.
#
#   scripts/fuzz.sh                      # 10 minutes per target
#   FUZZTIME=30s scripts/fuzz.sh         # 30 seconds per target
#   FUZZTIME=2m scripts/fuzz.sh FuzzPolicy FuzzBuild   # only these targets
#
# FUZZMINIMIZETIME (default 10x: ten executions) bounds how long the fuzzer
# minimises each new interesting input; Go's default of 60s per input
# spends most of a short run minimising, because these targets read files.
# FUZZPARALLEL sets the number of fuzzing workers (default: GOMAXPROCS).
#
# Targets:
#   ./io/parquetio FuzzRead        the contract reader on corrupted Parquet bytes
#   ./io/parquetio FuzzBuild       the contract validator on arbitrary rows and chunkings
#   ./io/parquetio FuzzReadPolicy  the policy reader on corrupted policy files
#   ./cluster      FuzzParse       the similarity and cluster file parser
#   ./solve        FuzzPolicy      policy metadata and vectors: FromRows and Qhat
set -eu
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-10m}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-10x}
PARALLEL=""
if [ -n "${FUZZPARALLEL:-}" ]; then
	PARALLEL="-parallel $FUZZPARALLEL"
fi

targets="./io/parquetio:FuzzRead ./io/parquetio:FuzzBuild ./io/parquetio:FuzzReadPolicy ./cluster:FuzzParse ./solve:FuzzPolicy"
if [ $# -gt 0 ]; then
	want=" $* "
	selected=""
	for t in $targets; do
		case "$want" in *" ${t#*:} "*) selected="$selected $t" ;; esac
	done
	targets=$selected
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
summary=""
status=0
for t in $targets; do
	pkg=${t%%:*}
	name=${t#*:}
	echo "== $name ($pkg) for $FUZZTIME"
	# shellcheck disable=SC2086 # PARALLEL is empty or two words
	if go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" $PARALLEL >"$log" 2>&1; then
		result=ok
	else
		result=FAIL
		status=1
	fi
	tail -n 3 "$log"
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
	summary="$summary$(printf '%-16s %-15s %-5s %s execs' "$name" "$pkg" "$result" "${execs:-?}")
"
	if [ "$result" = FAIL ]; then
		cat "$log"
	fi
done
echo
echo "== summary (FUZZTIME=$FUZZTIME per target)"
printf '%s' "$summary"
exit $status

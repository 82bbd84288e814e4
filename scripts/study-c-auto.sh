#!/usr/bin/env bash
# The --c auto study (docs/RESULTS.md): exact values of the paper's default c, of --c auto and of
# the behaviour fallback on simulated data with a known model, seed by seed.
#
#   formulary: the exact robust value (eval --model's robust_value; larger is better)
#   benchmark: the exact suboptimality (eval --model's suboptimality; smaller is better), and the
#              best candidate on --c auto's path (each c of the path solved on every row)
#   clinical:  the worst site's value under the model (the smallest of eval --model's
#              sites[].exact_value, Monte Carlo over 50,000 episodes per hospital: standard error
#              at most 0.0023; larger is better)
#
# Usage: scripts/study-c-auto.sh [DIR] [SEEDS] [SCENARIOS]
#   DIR        working directory and output (default: results/c-auto); the table is DIR/table.md
#   SEEDS      seeds, space separated (default: "1 2 3 4 5 6 7 8 9 10")
#   SCENARIOS  scenarios (default: "formulary benchmark clinical")
# GRMDP names the binary (default: built from this checkout into DIR/grmdp).
# The benchmark is simulated with --min-trajectories 200 (1000 trajectories, H = 7) so that the
# study runs in minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-results/c-auto}"
seeds="${2:-1 2 3 4 5 6 7 8 9 10}"
scenarios="${3:-formulary benchmark clinical}"
mkdir -p "$dir"
if [[ -z "${GRMDP:-}" ]]; then
	go build -o "$dir/grmdp" ./cmd/grmdp
	GRMDP="$dir/grmdp"
fi
g="$GRMDP"
# The default path of --c auto below the paper's default c = 5e-4.
path="5e-4 5e-5 5e-6 5e-7 5e-8 5e-9 5e-10 0"

# exact FIELD POLICY DATA MODEL prints eval --model's FIELD (worst_site_exact: the smallest
# sites[].exact_value).
exact() {
	"$g" eval --policy "$2" --model "$4" "${ev[@]}" --json "$3" 2>/dev/null |
		python3 -c "import json,sys
d=json.load(sys.stdin)
print('%.4f' % (min(s['exact_value'] for s in d['sites']) if '$1' == 'worst_site_exact' else d['$1']))"
}
# chosen POLICY prints the c chosen by --c auto ("fallback" for the behaviour fallback).
chosen() {
	"$g" show --json "$1" 2>/dev/null |
		python3 -c "import json,sys
d=json.load(sys.stdin); c=(d.get('selection') or {}).get('chosen', {}).get('c')
print('fallback' if c is None else '%g' % c)"
}

table="$dir/table.md"
for sc in $scenarios; do
	case $sc in
	formulary)
		sim=(--scenario formulary)
		fe=(--features tabular)
		ev=()
		field=robust_value
		;;
	benchmark)
		sim=(--scenario benchmark --min-trajectories 200)
		fe=()
		ev=()
		field=suboptimality
		;;
	clinical)
		sim=(--scenario clinical)
		fe=(--features soft-binned --state lactate,sofa --bins lactate:1,2,4,8 --bins sofa:2,6,10,14 --nulls truncate)
		ev=(--nulls truncate)
		field=worst_site_exact
		;;
	*)
		echo "unknown scenario $sc" >&2
		exit 2
		;;
	esac
	out="$dir/$sc.md"
	if [[ $sc == benchmark ]]; then
		echo "| seed | default c | --c auto (chosen c) | behaviour fallback | best on the path (c) |" >"$out"
		echo "|---:|---:|---:|---:|---:|" >>"$out"
	else
		echo "| seed | default c | --c auto (chosen c) | behaviour fallback |" >"$out"
		echo "|---:|---:|---:|---:|" >>"$out"
	fi
	for s in $seeds; do
		w="$dir/$sc-$s"
		mkdir -p "$w"
		"$g" simulate "${sim[@]}" --seed "$s" -o "$w/data.parquet" --model-out "$w/model.json" >/dev/null
		"$g" solve "${fe[@]}" -o "$w/default.parquet" "$w/data.parquet" >/dev/null 2>&1
		"$g" solve "${fe[@]}" --c auto --seed "$s" -o "$w/auto.parquet" "$w/data.parquet" >"$w/auto.txt" 2>&1
		"$g" solve "${fe[@]}" --method behaviour -o "$w/fallback.parquet" "$w/data.parquet" >/dev/null 2>&1
		vd=$(exact $field "$w/default.parquet" "$w/data.parquet" "$w/model.json")
		va=$(exact $field "$w/auto.parquet" "$w/data.parquet" "$w/model.json")
		vf=$(exact $field "$w/fallback.parquet" "$w/data.parquet" "$w/model.json")
		ca=$(chosen "$w/auto.parquet")
		if [[ $sc == benchmark ]]; then
			best="" bestc=""
			for c in $path; do
				"$g" solve "${fe[@]}" --c "$c" -o "$w/c$c.parquet" "$w/data.parquet" >/dev/null 2>&1
				v=$(exact $field "$w/c$c.parquet" "$w/data.parquet" "$w/model.json")
				if [[ -z $best ]] || python3 -c "import sys; sys.exit(0 if $v < $best else 1)"; then
					best=$v bestc=$c
				fi
			done
			echo "| $s | $vd | $va ($ca) | $vf | $best ($bestc) |" >>"$out"
		else
			echo "| $s | $vd | $va ($ca) | $vf |" >>"$out"
		fi
	done
done
: >"$table"
for sc in $scenarios; do
	{
		echo "$sc:"
		echo
		cat "$dir/$sc.md"
		echo
	} >>"$table"
done
cat "$table"

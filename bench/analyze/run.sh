#!/usr/bin/env bash
# Times `paraply analyze` against `mariadb-binlog --verbose` on the same
# MariaDB binlog (sysbench oltp_write_only, about 50 MB), best of 3 runs
# each, and prints the MB/s of each and their ratio. See README.md.
#
#   bench/analyze/run.sh              generate the binlog in a sandbox, then time
#   BINLOG="f1 f2" bench/analyze/run.sh   time existing binlog files instead
#   KEEP=1 bench/analyze/run.sh       keep the generated binlog (path printed)
set -euo pipefail

cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}

echo "building bin/paraply" >&2
go build -o bin/paraply ./cmd/paraply

if [[ -z "${BINLOG:-}" ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/paraply-bench-analyze.XXXXXX")
	if [[ -z "${KEEP:-}" ]]; then
		trap 'rm -rf "$work"' EXIT
	fi
	echo "generating the binlog with a sandboxed MariaDB and sysbench (about a minute)" >&2
	BINLOG=$(go run ./bench/analyze/genbinlog -out "$work" | tr '\n' ' ')
	[[ -n "${KEEP:-}" ]] && echo "binlog kept: $BINLOG" >&2
fi
read -r -a files <<<"$BINLOG"

bytes=0
for f in "${files[@]}"; do
	bytes=$((bytes + $(stat -c %s "$f")))
done

# best_of CMD...: runs CMD $RUNS times with stdout to /dev/null and prints
# the shortest wall-clock time in seconds.
best_of() {
	local best="" start end t
	for ((i = 0; i < RUNS; i++)); do
		start=$(date +%s.%N)
		"$@" >/dev/null
		end=$(date +%s.%N)
		t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
		if [[ -z "$best" ]] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
			best=$t
		fi
	done
	echo "$best"
}

echo "timing ${#files[@]} file(s), $bytes bytes, best of $RUNS" >&2
t_paraply=$(best_of bin/paraply analyze "${files[@]}")
t_mariadb=$(best_of mariadb-binlog --no-defaults --verbose "${files[@]}")

awk -v n="$bytes" -v p="$t_paraply" -v m="$t_mariadb" 'BEGIN {
	mb = n / 1e6
	printf "binlog:                  %.1f MB\n", mb
	printf "paraply analyze:         %6.2f s  %7.1f MB/s\n", p, mb / p
	printf "mariadb-binlog -v:       %6.2f s  %7.1f MB/s\n", m, mb / m
	printf "ratio (paraply/mariadb): %.2f\n", m / p
}'

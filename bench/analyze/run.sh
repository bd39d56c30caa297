#!/usr/bin/env bash
# Times `paraply analyze` against `mariadb-binlog --verbose` on the same
# MariaDB binlog files in paired runs (one of each, in turn), and prints
# the medians: seconds, MB/s, paraply's peak RSS, and the ratio of each
# pair's times (above 1: paraply is faster). See README.md.
#
#   bench/analyze/run.sh                  generate the binlog in a sandbox, then time
#   BINLOG="f1 f2" bench/analyze/run.sh   time existing binlog files instead
#   SCHEMA=schema.sql                     give analyze --schema-file (genbinlog writes one)
#   KEEP=1 bench/analyze/run.sh           keep the generated binlog (path printed)
#   RUNS=n                                pairs to run (default 5)
set -euo pipefail

cd "$(dirname "$0")/../.."
RUNS=${RUNS:-5}

echo "building bin/paraply" >&2
go build -o bin/paraply ./cmd/paraply

if [[ -z "${BINLOG:-}" ]]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/paraply-bench-analyze.XXXXXX")
	if [[ -z "${KEEP:-}" ]]; then
		trap 'rm -rf "$work"' EXIT
	fi
	echo "generating the binlog with a sandboxed MariaDB and sysbench (about a minute)" >&2
	BINLOG=$(go run ./bench/analyze/genbinlog -out "$work" | tr '\n' ' ')
	SCHEMA=${SCHEMA:-$work/schema.sql}
	[[ -n "${KEEP:-}" ]] && echo "binlog kept: $BINLOG" >&2
fi
read -r -a files <<<"$BINLOG"
analyze=(bin/paraply analyze)
[[ -n "${SCHEMA:-}" ]] && analyze+=(--schema-file "$SCHEMA")

bytes=0
for f in "${files[@]}"; do
	bytes=$((bytes + $(stat -c %s "$f")))
done

# timed CMD...: runs CMD with stdout to /dev/null and prints its
# wall-clock seconds and peak RSS in KiB.
timed() {
	local out
	out=$(mktemp)
	/usr/bin/time -o "$out" -f "%e %M" "$@" >/dev/null
	cat "$out"
	rm -f "$out"
}

echo "timing ${#files[@]} file(s), $bytes bytes, $RUNS pairs" >&2
rows=""
for ((i = 0; i < RUNS; i++)); do
	read -r tp rss < <(timed "${analyze[@]}" "${files[@]}")
	read -r tm _ < <(timed mariadb-binlog --no-defaults --verbose "${files[@]}")
	echo "pair $((i + 1)): paraply ${tp}s (${rss} KiB), mariadb-binlog ${tm}s" >&2
	rows+="$tp $rss $tm"$'\n'
done

printf '%s' "$rows" | awk -v n="$bytes" '
function median(a, k,   i, j, t) {
	for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2
}
{ k++; p[k] = $1; r[k] = $2; m[k] = $3; q[k] = $3 / $1 }
END {
	mb = n / 1e6
	tp = median(p, k); tm = median(m, k)
	printf "binlog:                   %.1f MB\n", mb
	printf "paraply analyze:          %6.2f s  %7.1f MB/s  peak RSS %.0f MiB (median of %d)\n", tp, mb / tp, median(r, k) / 1024, k
	printf "mariadb-binlog -v:        %6.2f s  %7.1f MB/s\n", tm, mb / tm
	printf "ratio (mariadb/paraply):  %.2f (median of the pairs)\n", median(q, k)
}'

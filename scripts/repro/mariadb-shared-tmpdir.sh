#!/usr/bin/env bash
# Reproduces, on MariaDB alone (no paraply), the crash of issue 41: signal
# 11 in ha_maria::drop_table <- free_tmp_table <- close_thread_tables under
# an information_schema query (docs/known-gaps.md).
#
# MariaDB names an internal temporary table after the server's PID, the
# connection's thread id and a per-connection counter
# (#sql-temptable-PID-THREAD-N.MAI/.MAD in --tmpdir). Two servers with the
# same PID (each the first process of its own PID namespace, as in two
# containers) that share a --tmpdir create, and drop, each other's files:
# "Error on delete of '#sql-temptable-1-16-8.MAI' (Errcode: 2)", then the
# crash. The script starts two such servers on one tmpdir and runs the same
# information_schema query on both at once from fresh connections, so that
# the thread ids match; it stops when a server dies, or after ROUNDS.
#
#   scripts/repro/mariadb-shared-tmpdir.sh           reproduce (ROUNDS=300)
#   NS_CMD= scripts/repro/mariadb-shared-tmpdir.sh   control: one PID namespace, distinct PIDs
#
# Exit status: 0 if a server died, 1 if none did. Needs root (unshare,
# mariadbd --user=root). Stops exactly the servers it started.
set -uo pipefail

ROUNDS=${ROUNDS:-300}
NS_CMD=${NS_CMD-unshare --pid --fork}
Q="SELECT EVENT_OBJECT_TABLE, ACTION_STATEMENT FROM information_schema.TRIGGERS ORDER BY 1"
R=$(mktemp -d "${TMPDIR:-/tmp}/paraply-repro-tmpdir.XXXXXX")
mkdir -p "$R/tmp"
declare -A launcher

# stop kills each server by the PID it was started with: the unshare
# launcher's only child when NS_CMD is set, else the server itself.
stop() {
	for n in a b; do
		[[ -n ${launcher[$n]:-} ]] || continue
		local child
		child=$(pgrep -P "${launcher[$n]}" | head -1)
		kill "${child:-${launcher[$n]}}" 2>/dev/null
	done
	wait 2>/dev/null
}
trap 'stop; rm -rf "$R"' EXIT

mariadbd --version
for n in a b; do
	mkdir -p "$R/$n"
	mariadb-install-db --no-defaults --user=root --auth-root-authentication-method=normal --datadir="$R/$n/data" >/dev/null
	# shellcheck disable=SC2086 # NS_CMD is a command and its arguments
	$NS_CMD mariadbd --no-defaults --user=root --datadir="$R/$n/data" --socket="$R/$n/sock" --skip-networking \
		--tmpdir="$R/tmp" --log-error="$R/$n/err.log" --innodb-buffer-pool-size=64M &
	launcher[$n]=$!
done
for n in a b; do
	for _ in $(seq 150); do mariadb -S "$R/$n/sock" -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
	mariadb -S "$R/$n/sock" -uroot test -e "CREATE TABLE t (a INT); CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = NEW.a + 1" || exit 1
done

died=""
for ((i = 1; i <= ROUNDS; i++)); do
	timeout 60 mariadb -S "$R/a/sock" -uroot -e "$Q" >/dev/null 2>>"$R/a/client.err" &
	a=$!
	timeout 60 mariadb -S "$R/b/sock" -uroot -e "$Q" >/dev/null 2>>"$R/b/client.err" &
	wait "$a" "$!"
	for n in a b; do
		timeout 10 mariadb -S "$R/$n/sock" -uroot -e 'select 1' >/dev/null 2>&1 || died="$died $n"
	done
	[[ -n $died ]] && break
done
echo "rounds: $((i > ROUNDS ? ROUNDS : i)), server died:${died:- none}"
grep -h "ERROR" "$R/a/client.err" "$R/b/client.err" | sed 's/^/client: /' | head -5
for n in $died; do
	echo "server $n's log:"
	grep -E "got signal|^Query \(" "$R/$n/err.log"
	grep -E "drop_table|free_tmp_table|close_thread_tables" "$R/$n/err.log"
done
[[ -n $died ]]

#!/usr/bin/env bash
# Installs what paraply's demo, tests and benchmarks need from Debian's
# packages, if it is missing: MariaDB (server, client, mariadb-binlog,
# mariadb-dump), MariaDB's own test suite (mariadb-test, for
# TestMariaDBSuite), Percona Toolkit (TestPerconaToolkit), sysbench,
# Chromium for the status page's browser test, systemd-analyze (Debian's
# systemd package: TestSystemdUnit) and promtool (Debian's prometheus
# package: TestAlertRules).
# Go must already be installed.
set -euo pipefail

missing=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v mariadb-binlog >/dev/null 2>&1 || missing+=(mariadb-client)
command -v mariadb-test >/dev/null 2>&1 || missing+=(mariadb-test)
command -v pt-table-checksum >/dev/null 2>&1 || missing+=(percona-toolkit)
command -v sysbench >/dev/null 2>&1 || missing+=(sysbench)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing ${missing[*]} from Debian's packages" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y mariadb-server mariadb-test percona-toolkit sysbench chromium systemd prometheus
# The packaged service is not used: paraply starts its own sandboxed servers.
# Only promtool is wanted from prometheus: a Prometheus server that this
# script installed and systemd started is stopped and disabled again.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  $sudo systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi

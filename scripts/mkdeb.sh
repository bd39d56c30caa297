#!/usr/bin/env bash
# mkdeb.sh BINARY ARCH OUTDIR [VERSION]
#
# Builds OUTDIR/paraply_VERSION_ARCH.deb from a paraply binary built for
# ARCH (a Debian architecture: amd64, arm64): /usr/bin/paraply, the
# systemd template unit /lib/systemd/system/paraply@.service, the example
# settings and passwords /etc/paraply/example.conf and example.env (both
# conffiles: an upgrade keeps the administrator's edits), and the alert
# rules and Grafana dashboard in /usr/share/paraply. Files are root's
# (dpkg-deb --root-owner-group), so no fakeroot is needed. `make release`
# runs it for each architecture; TestDebPackage runs it on a stand-in
# binary.
#
# VERSION is a `git describe --tags --always --dirty` string (make
# release passes the one it stamps into the binary, which `paraply
# version` prints; by default the checkout's), made a Debian version: a
# tag's leading v dropped, "-" (not allowed without a Debian revision)
# turned into "+", and a checkout with no tag numbered 0.0.0+g<commit>,
# so that the first tag sorts after it.
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 BINARY ARCH OUTDIR [VERSION]" >&2
  exit 2
fi
bin=$1 arch=$2 out=$3
root=$(cd "$(dirname "$0")/.." && pwd)
raw=${4:-$(git -C "$root" describe --tags --always --dirty)}

version=${raw#v}
if ! [[ $version =~ ^[0-9]+\.[0-9] ]]; then
  version=0.0.0+g$version
fi
version=$(printf '%s' "$version" | tr -c 'A-Za-z0-9.+~' '+')

[ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 1; }
mkdir -p "$out"
stage=$(mktemp -d)
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT

install -D -m 0755 "$bin" "$stage/usr/bin/paraply"
install -D -m 0644 "$root/packaging/systemd/paraply@.service" "$stage/lib/systemd/system/paraply@.service"
install -D -m 0644 "$root/packaging/paraply.conf.example" "$stage/etc/paraply/example.conf"
install -D -m 0600 "$root/packaging/paraply.env.example" "$stage/etc/paraply/example.env"
install -D -m 0644 "$root/packaging/prometheus/paraply-alerts.yml" "$stage/usr/share/paraply/paraply-alerts.yml"
install -D -m 0644 "$root/dashboards/paraply.json" "$stage/usr/share/paraply/grafana-dashboard.json"
install -D -m 0644 "$root/LICENSE" "$stage/usr/share/doc/paraply/copyright"

mkdir -p "$stage/DEBIAN"
cat > "$stage/DEBIAN/control" <<EOF
Package: paraply
Version: $version
Architecture: $arch
Maintainer: The paraply authors <maintainers@users.noreply.github.com>
Section: database
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Homepage: https://github.com/paraply/paraply
Description: parallel replication applier for MySQL and MariaDB
 paraply connects to a source as a replica, works out from the rows which
 transactions are independent, and applies them to a target with many
 workers, exactly once. One systemd service per stream: paraply@NAME reads
 /etc/paraply/NAME.conf and NAME.env (start from example.conf and
 example.env). Alert rules and a Grafana dashboard are in /usr/share/paraply.
EOF
printf '%s\n' /etc/paraply/example.conf /etc/paraply/example.env > "$stage/DEBIAN/conffiles"
# The maintainer scripts, as debhelper's for a service (but for every
# instance of the template, which dh_installsystemd does not handle):
# systemd learns of the new, changed or removed unit; removing the package
# stops every running stream first (systemctl stop: SIGTERM, paraply's
# clean stop, the checkpoint saved), so that no paraply runs on from a
# deleted binary; an upgrade restarts the running ones on the new binary
# (each resumes from its checkpoint). No instance is enabled or started
# on install: each stream needs its settings first. TestDebPackage runs
# them.
maintscript() {
  { printf '#!/bin/sh\nset -e\n'; cat; } > "$stage/DEBIAN/$1"
  chmod 0755 "$stage/DEBIAN/$1"
}
maintscript prerm <<'EOF'
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
  systemctl --system stop 'paraply@*.service' >/dev/null || true
fi
EOF
maintscript postinst <<'EOF'
if [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
  if [ "$1" = configure ] && [ -n "$2" ]; then
    systemctl --system try-restart 'paraply@*.service' >/dev/null || true
  fi
fi
EOF
maintscript postrm <<'EOF'
if [ -d /run/systemd/system ]; then
  systemctl --system daemon-reload >/dev/null || true
fi
EOF

deb=$out/paraply_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$stage" "$deb" >/dev/null
echo "$deb"

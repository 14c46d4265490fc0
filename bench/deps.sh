#!/bin/sh
# Debian packages `make bench` needs beyond scripts/deps.sh: bpftrace and
# perf (the tracers memprobe is compared with) and python3 (the driver).
# Idempotent: installs only what is missing.
set -eu
pkgs="bpftrace linux-perf python3"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "bench deps: missing packages:$missing; run as root: sudo $0" >&2
	exit 1
fi
echo "bench deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null

#!/bin/sh
# Install the Debian packages memprobe's build and tests need, or the
# packages named as arguments (bench/deps.sh). Idempotent: installs only
# what is missing, so it is cheap to call from make.
set -eu
# python3-jsonschema: the tests check every document against
# docs/report.schema.json (its jsonschema command, draft 2020-12)
# dpkg-dev: scripts/cjson.sh unpacks Debian's cjson source (dpkg-source) for
# the static build, so libcjson-dev is not needed; mandoc: the man page's lint
pkgs="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
      stress-ng jq busybox-static qemu-system-x86 cpio xz-utils python3-jsonschema
      dpkg-dev mandoc"
# bsdutils: script(1), the pseudo-terminal of test_progress (Essential, named anyway)
pkgs="$pkgs bsdutils"
# test_openmetrics: a real Prometheus (promtool too) and node_exporter; the
# test starts its own on 127.0.0.1, so the packages' services must not run
pkgs="$pkgs prometheus prometheus-node-exporter curl"
# chromium: test_renderers loads the html reports in a headless browser
pkgs="$pkgs chromium"
# libclang-rt-14-dev: clang 14's libFuzzer runtime (libclang_rt.fuzzer), for make fuzz
pkgs="$pkgs libclang-rt-14-dev"
[ $# -eq 0 ] || pkgs="$*"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing; run as root: sudo $0" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Nothing installed starts a service (prometheus, prometheus-node-exporter
# would listen on 9090 and 9100): a policy-rc.d that says no (101) while
# installing, unless the host has its own; then, where systemd runs, the
# units are stopped and disabled should they have started anyway.
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod 755 "$policy" && own_policy=1
	trap '[ -z "$own_policy" ] || rm -f "$policy"' EXIT
fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
if [ -d /run/systemd/system ]; then
	for unit in prometheus prometheus-node-exporter; do
		case " $missing " in
		*" $unit "*) systemctl disable --now "$unit" >/dev/null 2>&1 || true ;;
		esac
	done
fi

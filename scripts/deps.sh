#!/bin/sh
# Install the Debian packages memprobe needs, or the packages named as
# arguments (bench/deps.sh). Idempotent: installs only what is missing, so
# it is cheap to call from make.
#   scripts/deps.sh           what building memprobe needs (make, make demo)
#   scripts/deps.sh --tests   that and what only the tests use (make check,
#                             make vmtest, make fuzz; .ci/run)
set -eu
# dpkg-dev: scripts/cjson.sh unpacks Debian's cjson source (dpkg-source)
# for the static build, so libcjson-dev is not needed; xz-utils: its
# debian.tar.xz
build="make gcc clang libbpf-dev bpftool libelf-dev zlib1g-dev dpkg-dev xz-utils"
# python3-jsonschema: the tests check every document against
# docs/report.schema.json (its jsonschema command, draft 2020-12); mandoc:
# the man page's lint; stress-ng and jq: workloads and reading documents
tests="stress-ng jq python3-jsonschema mandoc"
# make vmtest: QEMU and a busybox initramfs (cpio)
tests="$tests busybox-static qemu-system-x86 cpio"
# bsdutils: script(1), the pseudo-terminal of test_progress (Essential, named anyway)
tests="$tests bsdutils"
# test_openmetrics: a real Prometheus (promtool too) and node_exporter; the
# test starts its own on 127.0.0.1, so the packages' services must not run
tests="$tests prometheus prometheus-node-exporter curl"
# chromium: test_renderers loads the html reports in a headless browser
tests="$tests chromium"
# libclang-rt-14-dev: clang 14's libFuzzer runtime (libclang_rt.fuzzer), for
# make fuzz; llvm: llvm-symbolizer, the sanitizers' stack traces
tests="$tests libclang-rt-14-dev llvm"
# systemd: systemd-analyze verify of deploy/memprobe-record@.service
tests="$tests systemd"
# test_postgres (initdb, postgres, pg_isready; pgbench from
# postgresql-contrib) and test_redis (redis-server; redis-cli and
# redis-benchmark from redis-tools) run their own on 127.0.0.1 in a test
# cgroup, so the packages' services must not run
tests="$tests postgresql postgresql-contrib redis-server"
case "${1:-}" in
"") pkgs=$build ;;
--tests) pkgs="$build $tests" ;;
*) pkgs="$*" ;;
esac
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
	for unit in prometheus prometheus-node-exporter postgresql redis-server; do
		case " $missing " in
		*" $unit "*) systemctl disable --now "$unit" >/dev/null 2>&1 || true ;;
		esac
	done
fi

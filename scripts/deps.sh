#!/bin/sh
# Install the Debian packages memprobe's build and tests need, or the
# packages named as arguments (bench/deps.sh). Idempotent: installs only
# what is missing, so it is cheap to call from make.
set -eu
# python3-jsonschema: the tests check every document against
# docs/report.schema.json (its jsonschema command, draft 2020-12)
pkgs="make gcc clang llvm libbpf-dev bpftool libcjson-dev libelf-dev zlib1g-dev
      stress-ng jq busybox-static qemu-system-x86 cpio xz-utils python3-jsonschema"
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
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null

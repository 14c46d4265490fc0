#!/bin/sh
# Regenerate vmlinux/vmlinux.h from a BTF file.
# Usage: scripts/gen-vmlinux.sh BTF_FILE [OUT]
# The header is checked in: CO-RE relocates field offsets at load time, so one
# header built from one kernel's BTF serves every kernel. The build never reads
# the build machine's /sys/kernel/btf/vmlinux implicitly; pass it here on purpose.
set -eu
btf=${1:?usage: $0 BTF_FILE [OUT]}
out=${2:-"$(dirname "$0")/../vmlinux/vmlinux.h"}
[ -r "$btf" ] || { echo "gen-vmlinux: cannot read BTF file $btf" >&2; exit 2; }
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
bpftool btf dump file "$btf" format c > "$tmp"
mv "$tmp" "$out"
echo "wrote $out from $btf ($(wc -l < "$out") lines)"

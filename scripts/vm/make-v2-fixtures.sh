#!/bin/sh
# make-v2-fixtures.sh [FIXTURES_DIR]
#
# Re-capture the cgroup-v2 fixtures v2-vm, v2-vm-nested, v2-vm-namespaced and
# derive missing-files (v2-vm without memory.peak, memory.high,
# memory.swap.max) by booting a Debian cloud kernel under QEMU (TCG) with a
# busybox initramfs running v2-fixtures-init.sh. FIXTURES_DIR defaults to
# tests/fixtures. Only each fixture's proc/ and sys/ are replaced:
# expected.txt is hand-checked, so compare it against the new capture
# (usage/peak change from run to run). Needs root (cache in
# /var/cache/memprobe-vm), busybox-static, qemu-system-x86.
# Environment: KERNEL_GLOB (default linux-image-6.1.0-*-cloud-amd64).
set -eu

vm=$(cd "$(dirname "$0")" && pwd)
fx=${1:-$vm/../../tests/fixtures}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

kernel=$("$vm/fetch-kernel.sh" "${KERNEL_GLOB:-linux-image-6.1.0-*-cloud-amd64}")
"$vm/mkinitramfs.sh" -o "$work/initrd.gz" -i "$vm/v2-fixtures-init.sh" \
	-f "$vm/../capture-fixture.sh:/usr/local/bin/capture-fixture.sh" \
	-b /usr/bin/unshare
"$vm/boot.sh" -k "$kernel" -i "$work/initrd.gz" -d "$work/out" -m 1G -t 600 || {
	rc=$?; tail -n 40 "$work/out/console.log" >&2; exit "$rc"; }

mkdir "$work/x"
tar --no-same-owner --no-same-permissions -xf "$work/out/fixtures.tar" -C "$work/x"
for n in v2-vm v2-vm-nested v2-vm-namespaced; do
	[ -f "$work/x/$n/proc/self/cgroup" ] || { echo "no $n in the guest's output" >&2; exit 1; }
	mkdir -p "$fx/$n"
	rm -rf "${fx:?}/$n/proc" "${fx:?}/$n/sys"
	cp -R "$work/x/$n/proc" "$work/x/$n/sys" "$fx/$n/"
done

rm -rf "${fx:?}/missing-files/proc" "${fx:?}/missing-files/sys"
mkdir -p "$fx/missing-files"
cp -R "$fx/v2-vm/proc" "$fx/v2-vm/sys" "$fx/missing-files/"
find "$fx/missing-files/sys" -type f \
	\( -name memory.peak -o -name memory.high -o -name memory.swap.max \) -exec rm -f {} +

tr -d '\r' < "$work/out/console.log" | grep -v '^\[' >&2 || :
echo "updated $fx/{v2-vm,v2-vm-nested,v2-vm-namespaced,missing-files}"

#!/bin/sh
# boot.sh -k VMLINUZ -i INITRD -d OUTDIR [-m MEM] [-c CPUS] [-t SECONDS] [-a APPEND]
#
# Boot a kernel + initramfs (see mkinitramfs.sh) under QEMU, headless, with
# two serial ports written to files, wait for the guest to power off, and
# decode what the guest sent with vm-send.
#
#   -k VMLINUZ  kernel image (e.g. from fetch-kernel.sh)
#   -i INITRD   initramfs (e.g. from mkinitramfs.sh)
#   -d OUTDIR   where to put console.log (ttyS0: kernel log + init output),
#               serial1.log (ttyS1, raw) and one file per vm-send block
#   -m MEM      guest memory, default 1G
#   -c CPUS     guest CPUs, default 1
#   -t SECONDS  give up (kill QEMU) after this long, default 600
#   -a APPEND   extra kernel command line (after console=ttyS0 panic=-1)
#
# Accelerator: $MEMPROBE_VM_ACCEL, default "tcg" (with -cpu max); set it to
# "kvm" (with -cpu host) where /dev/kvm works. QEMU: $QEMU, default
# qemu-system-x86_64 (Debian: apt-get install qemu-system-x86).
#
# Exit status: the guest init.user's exit status as /init reports it on the
# console; 124 if the time ran out; 125 if the guest never reported one (e.g.
# kernel panic); 126 if a vm-send block was cut short.
# Prints "boot.sh: guest ran N s" to stderr (wall clock, QEMU start to exit).
set -eu

say() { echo "boot.sh: $*" >&2; }
usage() { echo "usage: $0 -k VMLINUZ -i INITRD -d OUTDIR [-m MEM] [-c CPUS] [-t SECONDS] [-a APPEND]" >&2; exit 2; }

kernel='' initrd='' outdir='' mem=1G cpus=1 tmo=600 append=''
while getopts k:i:d:m:c:t:a: opt; do
	case $opt in
		k) kernel=$OPTARG ;;
		i) initrd=$OPTARG ;;
		d) outdir=$OPTARG ;;
		m) mem=$OPTARG ;;
		c) cpus=$OPTARG ;;
		t) tmo=$OPTARG ;;
		a) append=$OPTARG ;;
		*) usage ;;
	esac
done
if [ -z "$kernel" ] || [ -z "$initrd" ] || [ -z "$outdir" ]; then usage; fi
[ -r "$kernel" ] || { say "cannot read $kernel"; exit 2; }
[ -r "$initrd" ] || { say "cannot read $initrd"; exit 2; }

qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null 2>&1 || { say "no $qemu: apt-get install qemu-system-x86"; exit 2; }
case ${MEMPROBE_VM_ACCEL:-tcg} in
	kvm) accel="-accel kvm -cpu host" ;;
	tcg) accel="-accel tcg -cpu max" ;;
	*) say "MEMPROBE_VM_ACCEL must be tcg or kvm"; exit 2 ;;
esac

mkdir -p "$outdir"
con=$outdir/console.log
ser=$outdir/serial1.log
rm -f "$con" "$ser"

start=$(date +%s)
rc=0
# shellcheck disable=SC2086
timeout --foreground -k 10 "$tmo" "$qemu" $accel -m "$mem" -smp "$cpus" \
	-nodefaults -no-user-config -display none -monitor none -no-reboot \
	-serial "file:$con" -serial "file:$ser" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 $append" </dev/null || rc=$?
end=$(date +%s)
say "guest ran $((end - start)) s"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	say "timed out after $tmo s; see $con"
	exit 124
elif [ "$rc" -ne 0 ]; then
	say "$qemu exited $rc; see $con"
	exit "$rc"
fi

# Decode the vm-send blocks (the guest tty turns \n into \r\n).
bad=0
names=$(tr -d '\r' < "$ser" | sed -n 's/^==> memprobe-vm begin \([^/]*\)$/\1/p')
for n in $names; do
	if ! tr -d '\r' < "$ser" | grep -qx "==> memprobe-vm end $n"; then
		say "block $n is cut short"; bad=1; continue
	fi
	tr -d '\r' < "$ser" |
		sed -n "/^==> memprobe-vm begin $n\$/,/^==> memprobe-vm end $n\$/p" |
		sed '1d;$d' | base64 -d > "$outdir/$n"
	say "received $outdir/$n ($(wc -c < "$outdir/$n") bytes)"
done

grc=$(tr -d '\r' < "$con" | sed -n 's/^memprobe-vm: init.user exited rc=\([0-9]*\).*/\1/p' | tail -n 1)
if [ -z "$grc" ]; then
	say "the guest did not report an exit status; see $con"
	exit 125
fi
[ "$bad" -eq 0 ] || exit 126
exit "$grc"

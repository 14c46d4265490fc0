#!/bin/sh
# mkinitramfs.sh -o OUT.cpio.gz -i SCRIPT [-f SRC:DEST]... [-b BINARY]...
#
# Build a gzip'd newc initramfs around Debian's busybox-static
# (apt-get install busybox-static) for QEMU boots of stock kernels.
#
#   -o OUT.cpio.gz  the image to write
#   -i SCRIPT       the guest's job, installed as /etc/init.user and run by
#                   /init under busybox sh after /proc, /sys, /dev (devtmpfs),
#                   /tmp (tmpfs) are mounted and stdio is on /dev/console.
#                   When it returns, /init prints
#                   "memprobe-vm: init.user exited rc=N" and powers off.
#   -f SRC:DEST     also copy file SRC to DEST (an absolute path) in the image
#   -b BINARY       also copy a host binary at its own path plus the shared
#                   libraries ldd lists for it (e.g. -b /usr/bin/unshare to get
#                   util-linux's unshare, which unlike busybox's has -C)
#
# Guest helper: /bin/vm-send NAME copies its stdin to the host through the
# second serial port (/dev/ttyS1) as a base64 block that scripts/vm/boot.sh
# decodes into OUTDIR/NAME:
#     tar -C /tmp/out -cf - . | vm-send out.tar
# Busybox applets are linked in /bin; PATH puts /usr/sbin:/usr/bin (where -b
# binaries usually live) before /sbin:/bin.
set -eu

say() { echo "mkinitramfs: $*" >&2; }
usage() { echo "usage: $0 -o OUT.cpio.gz -i SCRIPT [-f SRC:DEST]... [-b BINARY]..." >&2; exit 2; }

out='' script='' files='' bins=''
nl='
'
while getopts o:i:f:b: opt; do
	case $opt in
		o) out=$OPTARG ;;
		i) script=$OPTARG ;;
		f) files="$files$OPTARG$nl" ;;
		b) bins="$bins$OPTARG$nl" ;;
		*) usage ;;
	esac
done
if [ -z "$out" ] || [ -z "$script" ]; then usage; fi
[ -r "$script" ] || { say "cannot read $script"; exit 1; }

bb=${BUSYBOX:-/bin/busybox}
[ -x "$bb" ] || { say "no $bb: apt-get install busybox-static"; exit 1; }
if ldd "$bb" >/dev/null 2>&1; then
	say "$bb is dynamically linked; install busybox-static"; exit 1
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
case $out in /*) ;; *) out=$PWD/$out ;; esac
(cd "$stage" && mkdir -p bin sbin usr/bin usr/sbin etc proc sys dev tmp run root mnt var/tmp)
cp "$bb" "$stage/bin/busybox"
for a in $("$bb" --list); do
	[ "$a" = busybox ] || ln -s busybox "$stage/bin/$a"
done

# copy_in SRC DEST: copy (dereferenced) SRC to DEST inside the image.
copy_in() {
	mkdir -p "$stage$(dirname "$2")"
	rm -f "$stage$2"
	cp -L "$1" "$stage$2"
}

printf '%s' "$files" | while IFS= read -r spec; do
	[ -n "$spec" ] || continue
	src=${spec%%:*} dst=${spec#*:}
	case $dst in /*) ;; *) say "-f $spec: DEST must be absolute"; exit 1 ;; esac
	copy_in "$src" "$dst"
done

printf '%s' "$bins" | while IFS= read -r b; do
	[ -n "$b" ] || continue
	copy_in "$b" "$b"
	# ldd lines: "libc.so.6 => /lib/.../libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
	ldd "$b" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
		while IFS= read -r lib; do
			[ -e "$stage$lib" ] || copy_in "$lib" "$lib"
		done
done

cp "$script" "$stage/etc/init.user"
chmod 755 "$stage/etc/init.user"

cat > "$stage/bin/vm-send" <<'SEND'
#!/bin/sh
# vm-send NAME: send stdin to the host via /dev/ttyS1 (decoded by boot.sh).
[ $# -eq 1 ] || { echo "usage: vm-send NAME" >&2; exit 2; }
case $1 in */*|.*|'') echo "vm-send: bad name $1" >&2; exit 2 ;; esac
{
	echo "==> memprobe-vm begin $1"
	base64
	echo "==> memprobe-vm end $1"
} > /dev/ttyS1
SEND
chmod 755 "$stage/bin/vm-send"

cat > "$stage/init" <<'INIT'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# what udev and systemd make on every Debian host: -o /dev/stdout is tested
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
echo "memprobe-vm: init.user starting ($(uname -r), uptime $(cut -d' ' -f1 /proc/uptime)s)"
/bin/sh /etc/init.user
rc=$?
echo "memprobe-vm: init.user exited rc=$rc (uptime $(cut -d' ' -f1 /proc/uptime)s)"
sync
poweroff -f
sleep 5
echo o > /proc/sysrq-trigger
INIT
chmod 755 "$stage/init"

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | LC_ALL=C sort | "$bb" cpio -o -H newc 2>/dev/null) | gzip -9 > "$out.tmp"
mv "$out.tmp" "$out"
say "wrote $out ($(wc -c < "$out") bytes)"

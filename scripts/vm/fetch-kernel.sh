#!/bin/sh
# fetch-kernel.sh [PACKAGE_GLOB]
#
# Make a Debian kernel image available for QEMU boots, without installing it,
# and print the path of its vmlinuz on stdout (progress goes to stderr).
#
#   PACKAGE_GLOB  shell glob of binary package names, default
#                 'linux-image-6.1.0-*-cloud-amd64'; the newest match (by
#                 version sort of the name) is taken. A literal name works too.
#
# The package is fetched with `apt-get download` and unpacked with `dpkg -x`
# into $MEMPROBE_VM_CACHE/kernels/PACKAGE_VERSION/ (default cache
# /var/cache/memprobe-vm); nothing is fetched when that tree is already there.
# Package lists: the system's apt lists are only read. If they do not know any
# matching package, a PRIVATE apt state under $MEMPROBE_VM_CACHE/apt/ is
# updated from the system's sources (read-only), so /var/lib/apt and /etc/apt
# are never written. Set MEMPROBE_VM_PRIVATE_APT=1 to always use (and refresh)
# the private state. Offline, the newest cached tree matching the glob is used.
# Needs root only for the default cache path; needs apt-get, apt-cache, dpkg.
set -eu

glob=${1:-'linux-image-6.1.0-*-cloud-amd64'}
cache=${MEMPROBE_VM_CACHE:-/var/cache/memprobe-vm}
kdir=$cache/kernels
say() { echo "fetch-kernel: $*" >&2; }

mkdir -p "$kdir"

# Private apt state (lists and archive cache under $cache/apt).
papt="$cache/apt"
private_opts() {
	printf '%s\n' \
		-o "Dir::State=$papt/state" \
		-o "Dir::State::Lists=$papt/state/lists" \
		-o "Dir::State::status=/var/lib/dpkg/status" \
		-o "Dir::Cache=$papt/cache" \
		-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
}
private_update() {
	mkdir -p "$papt/state/lists/partial" "$papt/cache/archives/partial"
	if id _apt >/dev/null 2>&1; then
		chown _apt "$papt/state/lists/partial" "$papt/cache/archives/partial" 2>/dev/null || :
	fi
	say "updating private apt lists in $papt"
	# shellcheck disable=SC2046
	apt-get -q $(private_opts) update >&2
}

# newest OPTS...: newest package name matching $glob that apt knows about.
newest() {
	apt-cache "$@" pkgnames 'linux-image-' 2>/dev/null |
		while IFS= read -r n; do
			# shellcheck disable=SC2254
			case $n in $glob) echo "$n" ;; esac
		done | sort -V | tail -n 1
}

use_private=${MEMPROBE_VM_PRIVATE_APT:-0}
pkg=
if [ "$use_private" != 1 ]; then
	pkg=$(newest)
	[ -n "$pkg" ] || { say "system apt lists know no $glob"; use_private=1; }
fi
if [ "$use_private" = 1 ]; then
	if private_update; then
		# shellcheck disable=SC2046
		pkg=$(newest $(private_opts))
	else
		say "apt-get update failed"
	fi
fi

if [ -z "$pkg" ]; then
	# Offline fallback: newest cached tree.
	best=
	for d in "$kdir"/*/; do
		[ -f "$d.complete" ] || continue
		n=$(basename "$d"); n=${n%%_*}
		# shellcheck disable=SC2254
		case $n in $glob) best="$best$(basename "$d")
" ;; esac
	done
	best=$(printf '%s' "$best" | sort -V | tail -n 1)
	[ -n "$best" ] || { say "no package matches $glob and none is cached"; exit 1; }
	say "using cached $best"
	tree=$kdir/$best
else
	opts=
	[ "$use_private" = 1 ] && opts=$(private_opts)
	# shellcheck disable=SC2086
	ver=$(apt-cache $opts policy "$pkg" | awk '/Candidate:/ { print $2; exit }')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then say "no candidate version for $pkg"; exit 1; fi
	tree=$kdir/${pkg}_$ver
	if [ -f "$tree/.complete" ]; then
		say "cached: $pkg $ver"
	else
		say "fetching $pkg $ver"
		tmp=$(mktemp -d "$kdir/.fetch.XXXXXX")
		trap 'rm -rf "$tmp"' EXIT
		chmod 755 "$tmp"
		# apt-get download drops to the _apt user; let it write here.
		if id _apt >/dev/null 2>&1; then chown _apt "$tmp" 2>/dev/null || :; fi
		# shellcheck disable=SC2086
		(cd "$tmp" && apt-get -q $opts download "$pkg=$ver" >&2)
		deb=$(ls "$tmp"/*.deb)
		mkdir "$tmp/tree"
		dpkg -x "$deb" "$tmp/tree"
		rm -rf "$tree"
		mv "$tmp/tree" "$tree"
		: > "$tree/.complete"
	fi
fi

vmlinuz=''
for f in "$tree"/boot/vmlinuz-*; do
	if [ -f "$f" ]; then vmlinuz=$f; break; fi
done
[ -n "$vmlinuz" ] || { say "no boot/vmlinuz-* in $tree"; exit 1; }
echo "$vmlinuz"

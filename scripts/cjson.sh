#!/bin/sh
# cjson.sh DIR
#
# Fetch Debian's cjson source package into DIR, for a static memprobe:
# Debian ships cJSON only as a shared library (libcjson1), so the Makefile
# compiles cJSON.c from this tree into build/ and links it in. No cJSON code
# is kept in the repository.
#
# `apt-get source cjson` runs through a PRIVATE apt state in DIR/apt whose
# sources list has deb-src lines for the suites and mirrors the system's own
# sources name (deb lines; /etc/apt and /var/lib/apt are only read), so the
# host needs no deb-src line. apt-get verifies the files against the signed
# Release file, and dpkg-source -x (dpkg-dev) unpacks them with Debian's
# patches applied. Afterwards DIR holds:
#   src/cJSON.c, src/cJSON.h      the patched source
#   include/cjson/cJSON.h         the header, where memprobe's #include finds it
#   VERSION                       the Debian version built (1.7.15-1+deb12u4, say)
#   .complete                     DIR is whole: later runs do nothing
# The package lists are removed once the source is in (tens of MiB).
# CJSON_VERSION=V fetches that version rather than the newest candidate.
# Exit status: 0 done (or already there); 1 the fetch failed (a message
# says why and what to do).
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
say() { echo "cjson: $*" >&2; }
die() {
	[ ! -s "${log:-}" ] || sed 's/^/  /' "$log" >&2
	say "$*"
	say "memprobe links cJSON statically from Debian's cjson source package;" \
		"it needs the Debian mirror once (then $dir is the cache):" \
		"check the network and /etc/apt, then run make again"
	exit 1
}

[ -f "$dir/.complete" ] && exit 0
for t in apt-get dpkg-source; do
	command -v "$t" >/dev/null 2>&1 || die "no $t: run scripts/deps.sh as root (dpkg-dev)"
done

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
papt=$dir/apt
rm -rf "$papt" "$dir/fetch"
log=$dir/fetch.log
: > "$log"
mkdir -p "$papt/sources.list.d" "$papt/state/lists/partial" "$papt/cache/archives/partial" \
	"$dir/fetch"
# apt-get drops to the _apt user to download: let it write there.
if id _apt >/dev/null 2>&1; then
	chown _apt "$papt/state/lists/partial" "$papt/cache/archives/partial" "$dir/fetch" \
		2>/dev/null || :
fi

# deb-src for every "URI SUITE..." the system's deb lines name (one-line
# sources.list and deb822 .sources), main only.
{
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		sed -n 's/\[[^]]*\]//; s/^[[:space:]]*deb[[:space:]]\+//p' | awk '{ print $1, $2 }'
	cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk 'BEGIN { RS = ""; FS = "\n" }
			{ types = uris = suites = ""
			  for (i = 1; i <= NF; i++) {
				split($i, kv, ":[ \t]*"); k = tolower(kv[1]); v = substr($i, length(kv[1]) + 2)
				sub(/^[ \t]+/, "", v)
				if (k == "types") types = v; else if (k == "uris") uris = v
				else if (k == "suites") suites = v; else if (k == "enabled" && v == "no") types = ""
			  }
			  if (types !~ /(^| )deb( |$)/) next
			  n = split(uris, u, " "); m = split(suites, s, " ")
			  for (a = 1; a <= n; a++) for (b = 1; b <= m; b++) print u[a], s[b] }'
} | sort -u | while read -r uri suite; do
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main"
done > "$papt/sources.list"
[ -s "$papt/sources.list" ] || die "no deb line in /etc/apt/sources.list{,.d} to take a mirror from"

opts="-o Dir::Etc::SourceList=$papt/sources.list -o Dir::Etc::SourceParts=$papt/sources.list.d
      -o Dir::State=$papt/state -o Dir::State::Lists=$papt/state/lists
      -o Dir::State::status=/var/lib/dpkg/status -o Dir::Cache=$papt/cache
      -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache="
say "updating a private apt state in $papt (deb-src: $(awk '{print $4}' "$papt/sources.list" | tr '\n' ' ' | sed 's/ $//'))"
# shellcheck disable=SC2086
apt-get -q $opts update >>"$log" 2>&1 || die "apt-get update of the deb-src lists failed"
want=cjson
[ -z "${CJSON_VERSION:-}" ] || want=cjson=$CJSON_VERSION
# apt-get and dpkg-source talk into fetch.log, shown when a step fails.
# --download-only then dpkg-source -x ourselves: the unpacked tree's name
# is then known, and a failed unpack says so.
# shellcheck disable=SC2086
(cd "$dir/fetch" && apt-get -q $opts source --download-only "$want" >>"$log" 2>&1) ||
	die "apt-get source $want failed"
dsc=
for f in "$dir"/fetch/cjson_*.dsc; do [ -f "$f" ] && dsc=$f; done
[ -n "$dsc" ] || die "apt-get source left no cjson_*.dsc in $dir/fetch"
ver=${dsc##*/cjson_}; ver=${ver%.dsc}
rm -rf "$dir/fetch/tree"
# dpkg-source checks the files' hashes against the .dsc; it warns that it
# cannot check the .dsc's signature (no debian-keyring): apt-get already
# checked the .dsc's hash against the signed Release file.
(cd "$dir/fetch" && dpkg-source -x "$dsc" tree >>"$log" 2>&1) ||
	die "dpkg-source -x $dsc failed"
if [ ! -f "$dir/fetch/tree/cJSON.c" ] || [ ! -f "$dir/fetch/tree/cJSON.h" ]; then
	die "$dsc has no cJSON.c and cJSON.h at its top"
fi

rm -rf "$dir/src" "$dir/include"
mkdir -p "$dir/src" "$dir/include/cjson"
cp "$dir/fetch/tree/cJSON.c" "$dir/fetch/tree/cJSON.h" "$dir/src/"
[ ! -f "$dir/fetch/tree/LICENSE" ] || cp "$dir/fetch/tree/LICENSE" "$dir/src/"
cp "$dir/src/cJSON.h" "$dir/include/cjson/cJSON.h"
echo "$ver" > "$dir/VERSION"
rm -rf "$papt" "$dir/fetch"
: > "$dir/.complete"
say "cjson $ver unpacked with Debian's patches in $dir/src"

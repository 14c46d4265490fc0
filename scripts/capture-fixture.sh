#!/bin/sh
# capture-fixture.sh OUTDIR [PID]
#
# Copy, read-only, what a cgroup memory-limit reader looks at on this machine
# into OUTDIR, mirroring absolute paths (OUTDIR/proc/..., OUTDIR/sys/...), so
# that unit tests can point the reader at OUTDIR instead of "/".
#
#   /proc/PID/cgroup     -> OUTDIR/proc/self/cgroup      (PID defaults to self)
#   /proc/PID/mountinfo  -> OUTDIR/proc/self/mountinfo
#   /proc/meminfo, /proc/sys/kernel/osrelease,
#   /sys/kernel/mm/transparent_hugepage/{enabled,defrag,hpage_pmd_size}
#   /sys/kernel/btf/vmlinux -> an EMPTY file, only to record that it exists
#   for the v1 "memory" hierarchy and the v2 "0::" hierarchy: every directory
#   from the process's cgroup up to the mount point of that hierarchy (as
#   mountinfo says; every matching mount), with its small readable
#   memory.* files and cgroup.controllers, cgroup.subtree_control, cgroup.type.
#
# Files that fail to read (write-only ones such as memory.force_empty,
# memory.reclaim, memory.pressure_level) are skipped, as are files over
# MAXSIZE bytes (default 65536) and memory.kmem.slabinfo.
# Only reads: every file is copied with cat, never cp -a.
#
# /proc/PID/cgroup shows paths relative to the cgroup namespace of the process
# READING it, so to capture what a namespaced process sees, run this script
# inside that process's namespaces (PID self). For another PID the cgroup
# files are reached through /proc/PID/root, i.e. through that process's
# mount namespace and root, when that is accessible.
#
# Portable POSIX sh: runs under dash, bash and busybox ash (needs cat, mkdir,
# mv, rm, wc, awk).
set -u

maxsize=${MAXSIZE:-65536}

usage() { echo "usage: $0 OUTDIR [PID]" >&2; exit 2; }
warn() { echo "capture-fixture: $*" >&2; }

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
out=$1
pid=${2:-self}
case $pid in
	self) ;;
	''|*[!0-9]*) usage ;;
esac
[ -n "$out" ] || usage
case $out in /) warn "refusing OUTDIR /"; exit 2 ;; esac
out=${out%/}

procdir=/proc/$pid
[ -r "$procdir/cgroup" ] || { warn "cannot read $procdir/cgroup"; exit 1; }

# Root directory through which the target's mount points are reached.
root=
if [ "$pid" != self ] && [ "$pid" != "$$" ]; then
	if ( cd "/proc/$pid/root/" ) 2>/dev/null; then
		root=/proc/$pid/root
	else
		warn "cannot enter /proc/$pid/root; reading cgroup files through /"
	fi
fi

# put SRC DEST [LIMIT]: cat SRC into OUTDIR/DEST. Returns 1 (and leaves
# nothing behind) if SRC cannot be read or is larger than LIMIT bytes.
put() {
	p_src=$1
	p_dst=$out$2
	p_lim=${3:-}
	mkdir -p "${p_dst%/*}" || exit 1
	if cat "$p_src" > "$p_dst.tmp" 2>/dev/null; then
		p_size=$(wc -c < "$p_dst.tmp")
		p_size=$((p_size))
		if [ -z "$p_lim" ] || [ "$p_size" -le "$p_lim" ]; then
			mv -f "$p_dst.tmp" "$p_dst" || exit 1
			return 0
		fi
		warn "skipping $p_src ($p_size bytes > $p_lim)"
	fi
	rm -f "$p_dst.tmp"
	return 1
}

# A global file as the target process sees it (through its root if we have
# one, e.g. an LXCFS-style /proc/meminfo), else from our own root.
put_global() {
	if [ -n "$root" ] && [ -r "$root$1" ]; then
		put "$root$1" "$1"
	elif [ -r "$1" ]; then
		put "$1" "$1"
	else
		return 1
	fi
}

put "$procdir/cgroup" /proc/self/cgroup || { warn "cannot read $procdir/cgroup"; exit 1; }
put "$procdir/mountinfo" /proc/self/mountinfo || { warn "cannot read $procdir/mountinfo"; exit 1; }
put_global /proc/meminfo || warn "no /proc/meminfo"
put_global /proc/sys/kernel/osrelease || warn "no /proc/sys/kernel/osrelease"
for f in enabled defrag hpage_pmd_size; do
	put_global "/sys/kernel/mm/transparent_hugepage/$f" 2>/dev/null
done
if [ -e "$root/sys/kernel/btf/vmlinux" ]; then
	mkdir -p "$out/sys/kernel/btf" && : > "$out/sys/kernel/btf/vmlinux"
fi

# copy_dir DIR: the cgroup files of one cgroup directory.
copy_dir() {
	c_dir=$1
	if [ ! -d "$root$c_dir" ]; then
		warn "no directory $root$c_dir"
		return 1
	fi
	mkdir -p "$out$c_dir" || exit 1
	for c_f in "$root$c_dir"/memory.* "$root$c_dir"/cgroup.controllers \
		"$root$c_dir"/cgroup.subtree_control "$root$c_dir"/cgroup.type; do
		[ -f "$c_f" ] || continue
		c_name=${c_f##*/}
		case $c_name in
			memory.kmem.slabinfo|memory.force_empty|memory.reclaim) continue ;;
		esac
		[ -r "$c_f" ] || continue
		put "$c_f" "$c_dir/$c_name" "$maxsize"
	done
	return 0
}

# mounts KIND CGPATH: for every mount of the hierarchy (KIND v1: fstype
# cgroup with the memory option; v2: cgroup2) whose root contains CGPATH,
# print two lines: the mount point and the cgroup directory under it.
mounts() {
	awk -v kind="$1" -v cg="$2" '
	function unesc(s,   r, i, c) {
		r = ""
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "\\" && substr(s, i + 1, 3) ~ /^[0-7][0-7][0-7]$/) {
				r = r sprintf("%c", (substr(s, i + 1, 1) * 64) + (substr(s, i + 2, 1) * 8) + substr(s, i + 3, 1))
				i += 3
			} else
				r = r c
		}
		return r
	}
	{
		sep = 0
		for (i = 7; i <= NF; i++) if ($i == "-") { sep = i; break }
		if (!sep) next
		fstype = $(sep + 1); sopts = $(sep + 3)
		if (kind == "v1") {
			if (fstype != "cgroup" || ("," sopts ",") !~ /,memory,/) next
		} else if (fstype != "cgroup2") next
		mroot = unesc($4); mpoint = unesc($5)
		if (mroot == "/") rel = cg
		else if (cg == mroot) rel = "/"
		else if (index(cg, mroot "/") == 1) rel = substr(cg, length(mroot) + 1)
		else next
		if (rel == "/") dir = mpoint
		else if (mpoint == "/") dir = rel
		else dir = mpoint rel
		print mpoint; print dir
	}' "$out/proc/self/mountinfo"
}

# walk KIND CGPATH: copy every directory from the cgroup up to the mount point.
walk() {
	case "$2/" in
		*/../*|*/./*) warn "$1 cgroup path $2 is outside this namespace's view; not walking it"; return 1 ;;
	esac
	w_found=0
	w_list=$(mounts "$1" "$2")
	while IFS= read -r w_mp && IFS= read -r w_dir; do
		w_found=1
		while :; do
			copy_dir "$w_dir"
			[ "$w_dir" = "$w_mp" ] && break
			w_dir=${w_dir%/*}
			[ -n "$w_dir" ] || w_dir=/
			[ "$w_dir" = / ] && [ "$w_mp" != / ] && break
		done
	done <<W_EOF
$w_list
W_EOF
	[ "$w_found" = 1 ] || warn "no mount of the $1 hierarchy contains $2"
}

v1path='' v2path='' have_v1='' have_v2=''
while IFS= read -r line; do
	[ -n "$line" ] || continue
	hier=${line%%:*}
	rest=${line#*:}
	ctrls=${rest%%:*}
	path=${rest#*:}
	case ",$ctrls," in
		*,memory,*) v1path=$path; have_v1=1 ;;
	esac
	if [ "$hier" = 0 ] && [ -z "$ctrls" ]; then
		v2path=$path; have_v2=1
	fi
done < "$out/proc/self/cgroup"

[ -n "$have_v1" ] && walk v1 "$v1path"
[ -n "$have_v2" ] && walk v2 "$v2path"
[ -n "$have_v1$have_v2" ] || warn "no memory or 0:: line in /proc/$pid/cgroup"
exit 0

#!/bin/sh
# tests/vm/payload.sh: the guest side of scripts/vm/vmtest.sh, run as
# /etc/init.user (busybox sh) in the initramfs that vmtest.sh builds with
# scripts/vm/mkinitramfs.sh. The image holds /memprobe/build/memprobe (static:
# no library of its own), /memprobe/tests/{run-integration.sh,lib.sh,integration/*.sh}, and
# bash, jq, stress-ng, procps's pgrep and util-linux's setpriv for the
# integration tests.
#
# Kernel command line: memprobe_vmtest=v2 (default) mounts cgroup2 at
# /sys/fs/cgroup and enables +memory in the root's subtree_control;
# memprobe_vmtest=v1 mounts the v1 memory controller alone at
# /sys/fs/cgroup/memory (on a tmpfs at /sys/fs/cgroup), with
# memory.use_hierarchy=1 at the root as systemd sets it.
#
# Then, from the root cgroup (where memprobe may make its children):
#   1. limits: a test cgroup "vmtest" with a 1 GiB limit holding a sleep;
#      `memprobe limits --format json` (memprobe's own cgroup, the root),
#      `--cgroup vmtest`, `--pid <sleep> --format env`; `limits --features`;
#   2. `memprobe probe --limit 512M --thp never --format json`; if it fails or
#      a hook is missing, once more with MEMPROBE_DEBUG=2 for libbpf's log;
#   3. tests/run-integration.sh under bash, unchanged (memprobe_tests=a,b on
#      the kernel command line, vmtest.sh's MEMPROBE_VMTEST_TESTS: only those).
# Every file is sent to the host with vm-send (boot.sh decodes them):
# info.txt, limits.json, limits-cgroup.json, limits-pid.env, features.json,
# features.txt, probe.json,
# probe.stderr, [probe-debug.stderr], integration.log, summary.txt.
# Exit status 0 when every step passed.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
M=/memprobe/build/memprobe
out=/tmp/vmtest
cg=/sys/fs/cgroup
mkdir -p "$out"
mode=v2
case " $(cat /proc/cmdline) " in *" memprobe_vmtest=v1 "*) mode=v1 ;; esac
failed=0
note() { echo "vmtest: $*"; echo "$*" >> "$out/summary.txt"; }
bad() { note "FAIL $*"; failed=$((failed + 1)); }
good() { note "ok $*"; }
send() { [ -f "$out/$1" ] && vm-send "$1" < "$out/$1"; }
secs() { cut -d' ' -f1 /proc/uptime; }
# incomplete RC REPORT STDERR: the probe failed, warned, or lacks a hook
incomplete() {
	[ "$1" -ne 0 ] || [ -s "$3" ] || ! grep -q '"hooks"' "$2" 2>/dev/null ||
		grep -q '"hook":[[:space:]]*null' "$2"
}

# ---- what this kernel is --------------------------------------------------
{
	echo "uname: $(uname -r)"
	echo "mode: $mode"
	echo "cpus: $(nproc)"
	echo "mem_total: $(awk '/^MemTotal:/ {print $2 " kB"}' /proc/meminfo)"
	echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
	echo "btf: $([ -r /sys/kernel/btf/vmlinux ] && echo yes || echo no)"
	echo "cgroups:"; cat /proc/cgroups
	mkdir -p /sys/kernel/tracing
	if mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null; then
		printf 'memcg tracepoints:'
		for d in /sys/kernel/tracing/events/memcg/*/; do [ -d "$d" ] && printf ' %s' "$(basename "$d")"; done
		echo
		echo "page_fault_user: $([ -d /sys/kernel/tracing/events/exceptions/page_fault_user ] && echo yes || echo no)"
		umount /sys/kernel/tracing
	fi
	echo "kallsyms:"
	grep -E ' (__)?mod_memcg(_lruvec)?_state(\.|$)|  *handle_mm_fault$| (__)?mod_lruvec_state$' /proc/kallsyms |
		awk '{print "  " $2 " " $3}'
} > "$out/info.txt" 2>&1

# loopback, for the TCP workload (an initramfs brings no interface up)
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null || note "could not bring lo up"

# ---- cgroups --------------------------------------------------------------
# Shared mounts, as systemd makes them: mountinfo lines then carry an
# optional "shared:N" field, which tests/lib.sh's own_memcg_dir (fstype as
# field 9) relies on.
mount --make-rshared / 2>/dev/null || mount -o rshared / 2>/dev/null ||
	note "could not make / shared"
if [ "$mode" = v2 ]; then
	mount -t cgroup2 none "$cg" || bad "mount cgroup2"
	echo +memory > "$cg/cgroup.subtree_control" || bad "enable +memory"
	mem=$cg
	limit_file=memory.max
else
	mount -t tmpfs -o mode=755 cgroup "$cg" || bad "mount tmpfs on $cg"
	mkdir -p "$cg/memory"
	mount -t cgroup -o memory memory "$cg/memory" || bad "mount the v1 memory controller"
	mem=$cg/memory
	echo "v1 root memory.use_hierarchy was $(cat "$mem/memory.use_hierarchy" 2>/dev/null)" >> "$out/info.txt"
	echo 1 > "$mem/memory.use_hierarchy" 2>/dev/null
	limit_file=memory.limit_in_bytes
fi

if [ "$failed" -eq 0 ]; then
	# ---- 1. limits -----------------------------------------------------
	t0=$(secs)
	if ! mkdir "$mem/vmtest" || ! echo 1073741824 > "$mem/vmtest/$limit_file"; then
		bad "make the test cgroup"
	fi
	sh -c 'echo $$ > "$0/cgroup.procs" && exec sleep 600' "$mem/vmtest" &
	sleeper=$!
	sleep 0.3
	"$M" limits --format json > "$out/limits.json" 2> "$out/limits.stderr" ||
		bad "memprobe limits --format json: exit $?: $(cat "$out/limits.stderr")"
	"$M" limits --cgroup "$mem/vmtest" --format json > "$out/limits-cgroup.json" 2>> "$out/limits.stderr" ||
		bad "memprobe limits --cgroup: exit $?"
	"$M" limits --pid "$sleeper" --format env > "$out/limits-pid.env" 2>> "$out/limits.stderr" ||
		bad "memprobe limits --pid: exit $?"
	if grep -q '"effective_limit_bytes":[[:space:]]*1073741824,' "$out/limits-cgroup.json" &&
	   grep -qx 'MEMPROBE_EFFECTIVE_LIMIT_BYTES=1073741824' "$out/limits-pid.env"; then
		good "limits: the test cgroup's 1 GiB found by --cgroup and --pid"
	else
		bad "limits: the test cgroup's 1 GiB limit not reported"
	fi
	kill -9 "$sleeper"; wait "$sleeper" 2>/dev/null
	rmdir "$mem/vmtest" || bad "remove the test cgroup"
	# the hook plan, every rung judged
	"$M" limits --features --format json > "$out/features.json" 2>> "$out/limits.stderr" ||
		bad "memprobe limits --features: exit $?"
	"$M" limits --features > "$out/features.txt" 2>> "$out/limits.stderr"
	note "time limits $(awk -v a="$t0" -v b="$(secs)" 'BEGIN {printf "%.1f", b - a}') s"

	# ---- 2. probe --limit 512M -----------------------------------------
	t0=$(secs)
	"$M" probe --limit 512M --thp never --format json -o "$out/probe.json" 2> "$out/probe.stderr"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		bad "memprobe probe --limit 512M: exit $rc: $(head -c 600 "$out/probe.stderr")"
	elif incomplete "$rc" "$out/probe.json" "$out/probe.stderr"; then
		note "probe: exit 0, attribution incomplete: $(head -c 300 "$out/probe.stderr")"
	else
		good "probe: exit 0, every hook attached"
	fi
	note "time probe $(awk -v a="$t0" -v b="$(secs)" 'BEGIN {printf "%.1f", b - a}') s"
	if incomplete "$rc" "$out/probe.json" "$out/probe.stderr"; then
		MEMPROBE_DEBUG=2 "$M" probe --limit 512M --thp never --format json -o /tmp/probe-debug.json \
			> /dev/null 2> "$out/probe-debug.stderr"
		note "probe with MEMPROBE_DEBUG=2: exit $?"
	fi
	# cgroup v2's root has no memory.current, and a cgroup with processes
	# cannot delegate memory to its children: if --limit failed there, probe
	# a prepared cgroup (512M, +memory delegated, no processes) instead, to
	# get the figures and exercise the hooks all the same.
	if [ "$mode" = v2 ] && [ ! -s "$out/probe.json" ]; then
		d=$mem/vmtest-probe
		if mkdir "$d" && echo 536870912 > "$d/memory.max" &&
		   echo +memory > "$d/cgroup.subtree_control"; then
			t0=$(secs)
			"$M" probe --cgroup "$d" --thp never --format json -o "$out/probe-cgroup.json" \
				2> "$out/probe-cgroup.stderr"
			rc=$?
			note "probe --cgroup (512M, +memory delegated): exit $rc$([ -s "$out/probe-cgroup.stderr" ] && echo ": $(head -c 600 "$out/probe-cgroup.stderr")")"
			note "time probe-cgroup $(awk -v a="$t0" -v b="$(secs)" 'BEGIN {printf "%.1f", b - a}') s"
			if incomplete "$rc" "$out/probe-cgroup.json" "$out/probe-cgroup.stderr"; then
				MEMPROBE_DEBUG=2 "$M" probe --cgroup "$d" --thp never --format json \
					-o /tmp/probe-debug.json > /dev/null 2> "$out/probe-cgroup-debug.stderr"
			fi
		fi
		rmdir "$d" 2>/dev/null
	fi
	# And --limit from a leaf cgroup, where a systemd host's shell runs: the
	# leaf holds processes, so v2 gives its children no memory controller.
	if [ "$mode" = v2 ] && mkdir "$mem/vmtest-leaf"; then
		sh -c 'echo $$ > "$0/cgroup.procs" && exec "$1" probe --limit 64M --chunk 8M --thp never --format json -o /tmp/leaf.json' \
			"$mem/vmtest-leaf" "$M" > /dev/null 2> "$out/probe-leaf.stderr"
		note "probe --limit 64M from a leaf cgroup: exit $?: $(head -c 300 "$out/probe-leaf.stderr")"
		rmdir "$mem/vmtest-leaf"
	fi
	left=$(find "$mem" -type d -name 'memprobe-*')
	[ -z "$left" ] || bad "probe left cgroups behind: $left"

	# ---- 3. the integration tests ---------------------------------------
	t0=$(secs)
	# memprobe_tests=a,b on the command line: those tests only
	tests=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^memprobe_tests=//p' | tr , ' ')
	# shellcheck disable=SC2086 # the test names, one word each
	( cd /memprobe && bash tests/run-integration.sh $tests ) > "$out/integration.log" 2>&1
	rc=$?
	res=$(grep -E '^integration: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$out/integration.log")
	if [ "$rc" -eq 0 ] && [ -n "$res" ]; then
		good "$res"
	else
		bad "${res:-integration: no summary} (exit $rc)"
		grep '^not ok' "$out/integration.log" | sed 's/^/vmtest:   /'
	fi
	note "time integration $(awk -v a="$t0" -v b="$(secs)" 'BEGIN {printf "%.1f", b - a}') s"
fi

note "failed steps: $failed"
for f in info.txt limits.json limits-cgroup.json limits-pid.env limits.stderr features.json \
	features.txt probe.json \
	probe.stderr probe-debug.stderr probe-cgroup.json probe-cgroup.stderr \
	probe-cgroup-debug.stderr integration.log summary.txt; do
	send "$f"
done
[ "$failed" -eq 0 ]

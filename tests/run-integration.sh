#!/usr/bin/env bash
# Integration tests: real BPF on the running kernel, real cgroups, real
# workloads. Needs root. Every test works in memprobe-test-* cgroups that are
# children of this shell's own memory cgroup, and checks that nothing named
# memprobe-* is left behind.
set -u
. "$(dirname "$0")/lib.sh"

GIB=1073741824
MIB=1048576

if [ "$(id -u)" -ne 0 ]; then
	echo "integration tests need root (BPF, cgroups)"; echo "integration: 0 passed, 1 failed, 0 skipped"; exit 1
fi
[ -x "$MEMPROBE" ] || { echo "no $MEMPROBE: run make"; echo "integration: 0 passed, 1 failed, 0 skipped"; exit 1; }

# the tests, one file per area; each defines test_* functions (and their helpers)
for f in "$(dirname "$0")"/integration/*.sh; do
	. "$f"
done

tests=${*:-"rules checks checks_seen limits probe_real probe_threads probe_workload signals probe_safety probe_kills probe_paths record_stress record_oom record_limit record_pagetables record_threads record_slab live_pages_size record_probe_at record_follows_children record_faults record_churn record_ends record_daemon deploy_unit fleet_rules truth slab_churn driver hooks targets record_opts bad_input cli output report text progress openmetrics renderers html_fixtures overhead static man install headroom_soft headroom_cache headroom_high headroom_root budget budget_cache budget_from_files pinned moved_out compare loader fills_host write_failed cow postgres redis no_bpf self_no_bpf record_bounded record_saved container stacked_mount privileged_container in_place_permission anon_unmapped record_swarm pinned_moment unmapped_shmem thp oom_explained utf8 memcg_counters probe_pid1 lock_pidns"}
# A test that hangs fails alone, not the whole run: after its time a
# watchdog stops what the test started (this runner's descendants, by pid:
# SIGTERM, so a memprobe still cleans up, then SIGKILL) and the test counts
# a failure. Each test's time is printed, for CI's log.
TEST_TIMEOUT_S=${MEMPROBE_TEST_TIMEOUT_S:-600}

# descendants PID: the pids below PID, parents before children, from
# /proc/PID/stat's ppid (the guests' busybox images have no full ps)
descendants() {
	local f line rest pid queue kids
	local -A below=()
	for f in /proc/[0-9]*/stat; do
		read -r line 2> /dev/null < "$f" || continue
		pid=${line%% *}
		rest=${line##*) }   # "STATE PPID ...": the comm may hold spaces
		rest=${rest#* }
		below[${rest%% *}]+=" $pid"
	done
	queue=$1
	while [ -n "$queue" ]; do
		set -- $queue
		queue=
		for pid in "$@"; do
			kids=${below[$pid]:-}
			[ -n "$kids" ] && echo $kids && queue="$queue $kids"
		done
	done | tr ' ' '\n'
}

# any_alive PID...: 0 when one of them still runs
any_alive() {
	local p
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# (started from a subshell that exits at once, so that it is no child of
# this shell: a test's bare `wait` waits for its own jobs, not for this)
# Armed by the file $TMP/watchdog-armed.N for test N: the runner removes it
# before stopping the watchdog, so a watchdog whose sleep dies first (its
# stop came as two signals, the sleep's and its own) does not fire.
watchdog() {
	local p victims
	sleep "$1"
	[ -e "$TMP/watchdog-armed.$3" ] || return 0
	echo "$2" > "$TMP/watchdog-fired.$3"
	victims=$(descendants $$)
	echo "# watchdog: test_$2 still running after $1 s; stopping its processes $(echo $victims)"
	# shellcheck disable=SC2086
	kill -TERM $victims 2>/dev/null
	for p in $(seq 100); do
		any_alive $victims || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $victims 2>/dev/null
}

n=0
for t in $tests; do
	echo "# test_$t"
	t0=${EPOCHREALTIME//[.,]/}
	n=$((n + 1))
	touch "$TMP/watchdog-armed.$n"
	( watchdog "$TEST_TIMEOUT_S" "$t" "$n" & echo $! > "$TMP/watchdog-pid" )
	wd=$(cat "$TMP/watchdog-pid")
	"test_$t"
	rm -f "$TMP/watchdog-armed.$n"
	kill "$wd" $(descendants "$wd") 2>/dev/null
	[ -e "$TMP/watchdog-fired.$n" ] && fail "test_$t: finished within ${TEST_TIMEOUT_S} s (MEMPROBE_TEST_TIMEOUT_S)"
	check_docs "test_$t"
	echo "# test_$t took $(((${EPOCHREALTIME//[.,]/} - t0) / 1000)) ms"
done
summary integration

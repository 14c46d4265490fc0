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
	echo "integration tests need root (BPF, cgroups)"; echo "integration: 0 passed, 1 failed"; exit 1
fi
[ -x "$MEMPROBE" ] || { echo "no $MEMPROBE: run make"; echo "integration: 0 passed, 1 failed"; exit 1; }

# ---------------------------------------------------------------------------
test_limits() {
	local cg out
	cg=$(make_cgroup limits $GIB) || { fail "limits: make cgroup"; return; }
	out=$TMP/limits.json
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$out"
	check "limits: own limit is 1 GiB" [ "$(jqv "$out" .cgroup.limit_bytes)" = "$GIB" ]
	check "limits: effective limit is 1 GiB" [ "$(jqv "$out" .cgroup.effective_limit_bytes)" = "$GIB" ]
	check "limits: headroom = effective - usage" [ "$(jqv "$out" '.cgroup.effective_limit_bytes - .cgroup.usage_bytes')" = "$(jqv "$out" .cgroup.headroom_bytes)" ]
	check "limits: MemTotal from /proc/meminfo" [ "$(jqv "$out" .host.mem_total_bytes)" = "$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024))" ]

	# env format evals in a shell; a process inside the cgroup is found by --pid
	local pid
	pid=$(run_in_cgroup "$cg" sleep 30)
	sleep 0.2
	eval "$("$MEMPROBE" limits --pid "$pid" --format env)"
	check "limits --pid: env names the cgroup" [ "${MEMPROBE_CGROUP_DIR:-}" = "$cg" ]
	check "limits --pid: env effective limit" [ "${MEMPROBE_EFFECTIVE_LIMIT_BYTES:-}" = "$GIB" ]
	kill -9 "$pid"; wait "$pid" 2>/dev/null

	# a nested unlimited child gets its parent's limit
	mkdir "$cg/inner"
	"$MEMPROBE" limits --cgroup "$cg/inner" --format json > "$out"
	check "limits: unlimited child reports null limit" [ "$(jqv "$out" .cgroup.limit_bytes)" = null ]
	check "limits: nested effective limit from the parent" [ "$(jqv "$out" .cgroup.effective_limit_bytes)" = "$GIB" ]
	rmdir "$cg/inner"
	remove_cgroup "$cg"
	check "limits: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
test_probe_real() {
	local cg out lim margin chunk before alloc faults pt growth attr unattr tol
	cg=$(make_cgroup probe $GIB) || { fail "probe: make cgroup"; return; }
	out=$TMP/probe.json
	if ! "$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/probe.err"; then
		fail "probe: exit status 0 ($(cat "$TMP/probe.err"))"; remove_cgroup "$cg"; return
	fi
	lim=$(jqv "$out" .cgroup_limit_bytes)
	margin=$(jqv "$out" .probe.margin_bytes)
	chunk=$(jqv "$out" .probe.chunk_bytes)
	before=$(jqv "$out" .usage_before_bytes)
	alloc=$(jqv "$out" .allocated_bytes)
	echo "# limit $lim chunk $chunk margin $margin before $before allocated $alloc chunks $(jqv "$out" .probe_chunks)"
	check "probe: limit is the cgroup's 1 GiB" [ "$lim" = "$GIB" ]
	check "probe: chunk = limit/32, margin = limit/16" [ "$chunk" = $((GIB / 32)) -a "$margin" = $((GIB / 16)) ]
	check "probe: before + allocated >= limit - margin - chunk" [ $((before + alloc)) -ge $((lim - margin - chunk)) ]
	check "probe: before + allocated <= limit - margin" [ $((before + alloc)) -le $((lim - margin)) ]
	check "probe: the nine fields, named as in the brief" [ "$(jq -c '[keys_unsorted[0:9][]]' "$out")" = '["cgroup_limit_bytes","usage_before_bytes","allocated_bytes","allocated_gib","usage_peak_bytes","usage_after_bytes","overhead_bytes","overhead_gib","probe_chunks"]' ]
	check "probe: overhead = peak - before - allocated" [ "$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')" = "$(jqv "$out" .overhead_bytes)" ]
	check "probe: not interrupted, not OOM-killed" [ "$(jqv "$out" '.interrupted or .probe_oom_killed')" = false ]

	faults=$(jqv "$out" '[.attribution.page_faults.by_task[] | select(.comm == "memprobe-probe") | .faults] | add // 0')
	echo "# probe faults $faults, expected $((alloc / 4096))"
	check "probe: page faults = allocated / 4 KiB within 10%" within "$faults" $((alloc / 4096)) 0.10
	pt=$(jqv "$out" '.attribution.categories[] | select(.name == "pagetables") | .growth_bytes')
	echo "# pagetables $pt, expected $((alloc / 512))"
	check "probe: pagetables = allocated / 512 within 25%" within "$pt" $((alloc / 512)) 0.25
	growth=$(jqv "$out" .attribution.reconciliation.measured_growth_bytes)
	attr=$(jqv "$out" .attribution.reconciliation.attributed_bytes)
	unattr=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
	tol=$(( growth / 50 > 4 * MIB ? growth / 50 : 4 * MIB ))
	echo "# growth $growth attributed $attr unattributed $unattr tolerance $tol"
	check "probe: categories reconcile within max(2%, 4 MiB)" [ "${unattr#-}" -le "$tol" ]
	check "probe: unattributed = growth - attributed" [ $((growth - attr)) = "$unattr" ]
	check "probe: anon growth is the probe's" within "$(jqv "$out" '.attribution.categories[] | select(.name == "anon") | .tasks[0] | select(.comm == "memprobe-probe") | .bytes')" "$alloc" 0.05
	check "probe: page-table stacks explain pagetables" [ "$(jqv "$out" '[.attribution.kernel_paths[] | select(.path == "pagetables") | .top_stacks[0].frames[] | select(startswith("__pte_alloc"))] | length')" -ge 1 ]
	check "probe: every hook attached on this kernel" [ "$(jqv "$out" '[.attribution.hooks[] | select(.hook == null)] | length')" = 0 ]
	echo "# events lost $(jq -c .attribution.events_lost "$out")"
	check "probe: no map overflowed" [ "$(jqv "$out" '.attribution.events_lost | .total - .recursion_misses')" = 0 ]
	check "probe: events lost to recursion under 1% of memcg updates" [ "$(jqv "$out" '.attribution.events_lost.recursion_misses * 100 <= .attribution.events.memcg_stat_updates')" = true ]
	check "probe: its child cgroup is gone" [ -z "$(find "$cg" -mindepth 1 -type d)" ]
	remove_cgroup "$cg"
	check "probe: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
test_probe_workload() {
	local cg out pid usage lim margin before alloc i
	cg=$(make_cgroup workload $GIB) || { fail "workload: make cgroup"; return; }
	pid=$(run_in_cgroup "$cg" stress-ng --vm 1 --vm-bytes $((GIB * 4 / 10)) --vm-keep --vm-method write64 --timeout 120s)
	for i in $(seq 100); do
		usage=$(cg_usage "$cg")
		[ "$usage" -ge $((GIB * 4 / 10 - 8 * MIB)) ] && break
		sleep 0.1
	done
	echo "# stress-ng holds $usage bytes"
	check "workload: stress-ng holds 40% of the cgroup" [ "$usage" -ge $((GIB * 4 / 10 - 8 * MIB)) ]
	out=$TMP/workload.json
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/workload.err"
	check "workload: probe exits 0" [ $? = 0 ]
	lim=$(jqv "$out" .cgroup_limit_bytes); margin=$(jqv "$out" .probe.margin_bytes)
	before=$(jqv "$out" .usage_before_bytes); alloc=$(jqv "$out" .allocated_bytes)
	echo "# before $before allocated $alloc peak $(jqv "$out" .usage_peak_bytes)"
	check "workload: usage before counts stress-ng" [ "$before" -ge $((GIB * 4 / 10 - 8 * MIB)) ]
	check "workload: the probe stops at the margin" [ $((before + alloc)) -le $((lim - margin)) -a "$(jqv "$out" .usage_peak_bytes)" -le $((lim - margin + 8 * MIB)) ]
	check "workload: stress-ng is alive (not OOM-killed)" kill -0 "$pid"
	check "workload: no OOM kill in the cgroup" [ "$(awk '/oom_kill / {print $2}' "$cg/memory.oom_control" 2>/dev/null || echo 0)" = 0 ]
	check "workload: the probe's growth is attributed to the probe" within "$(jqv "$out" '[.attribution.categories[] | select(.name == "anon") | .tasks[] | select(.comm == "memprobe-probe") | .bytes] | add // 0')" "$alloc" 0.05
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
	check "workload: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
test_signals() {
	local out pid rc
	out=$TMP/sigint.json
	"$MEMPROBE" probe --limit 4G --chunk 16M --thp never --format json -o "$out" 2>/dev/null &
	pid=$!
	sleep 1.5
	kill -INT "$pid"
	wait "$pid"; rc=$?
	check "SIGINT: exit 0 with a report" [ "$rc" = 0 ]
	check "SIGINT: report marked interrupted" [ "$(jqv "$out" .interrupted)" = true ]
	check "SIGINT: partial figures kept" [ "$(jqv "$out" .allocated_bytes)" -gt 0 ]
	check "SIGINT: nothing left behind" no_leftovers
	check "SIGINT: no memprobe process left" [ -z "$(pgrep -x memprobe-probe)" ]
	"$MEMPROBE" probe --limit 4G --chunk 16M --format json -o "$out" 2>/dev/null &
	pid=$!
	sleep 1.5
	kill -TERM "$pid"
	wait "$pid"; rc=$?
	check "SIGTERM: exit 0, report marked interrupted" [ "$rc" = 0 -a "$(jqv "$out" .interrupted)" = true ]
	check "SIGTERM: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# expect_bad DESCRIPTION ARGS...: exit 2, exactly one line on stderr naming
# the problem, nothing on stdout, nothing left behind.
expect_bad() {
	local what=$1 rc lines; shift
	"$@" > "$TMP/bad.out" 2> "$TMP/bad.err"; rc=$?
	lines=$(wc -l < "$TMP/bad.err")
	if [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ ! -s "$TMP/bad.out" ] && no_leftovers >/dev/null; then
		pass "bad input: $what ($(cat "$TMP/bad.err"))"
	else
		fail "bad input: $what: exit $rc, $lines stderr lines: $(cat "$TMP/bad.err")"
	fi
}

test_bad_input() {
	local missing_pid=4194000
	while kill -0 $missing_pid 2>/dev/null; do missing_pid=$((missing_pid + 1)); done
	expect_bad "not root" setpriv --reuid=65534 --regid=65534 --clear-groups "$MEMPROBE" probe --limit 1G
	expect_bad "no such cgroup" "$MEMPROBE" probe --cgroup /sys/fs/cgroup/memory/memprobe-no-such-cgroup
	expect_bad "no such cgroup (limits)" "$MEMPROBE" limits --cgroup /no/such/cgroup
	expect_bad "no such pid" "$MEMPROBE" probe --pid $missing_pid
	expect_bad "no such pid (limits)" "$MEMPROBE" limits --pid $missing_pid
	expect_bad "pid not a number" "$MEMPROBE" limits --pid 12x
	expect_bad "size 12Q" "$MEMPROBE" probe --limit 12Q
	expect_bad "size -1G" "$MEMPROBE" probe --limit -1G
	expect_bad "chunk 0" "$MEMPROBE" probe --chunk 0
	expect_bad "limit below one chunk" "$MEMPROBE" probe --limit 16M --chunk 32M
	expect_bad "unknown thp mode" "$MEMPROBE" probe --thp sometimes
	expect_bad "unknown format" "$MEMPROBE" limits --format yaml
	expect_bad "unknown option" "$MEMPROBE" probe --frobnicate
	expect_bad "output in a missing directory" "$MEMPROBE" probe -o /no/such/dir/report.json
	expect_bad "unknown command" "$MEMPROBE" frobnicate
	check "bad input: no report file created" [ ! -e /no/such/dir/report.json ]
}

# ---------------------------------------------------------------------------
tests=${*:-"limits probe_real probe_workload signals bad_input"}
for t in $tests; do
	echo "# test_$t"
	"test_$t"
done
summary integration

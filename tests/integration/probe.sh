# shellcheck shell=bash
# tests/integration/probe.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# ---------------------------------------------------------------------------
test_probe_real() {
	local cg out lim margin chunk before alloc faults pt growth attr unattr tol ch rc left bound
	cg=$(make_cgroup probe $GIB) || { fail "probe: make cgroup"; return; }
	out=$TMP/probe.json
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/probe.err"
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "probe: exit status 0 (got $rc: $(shown "$(cat "$TMP/probe.err")"))"; remove_cgroup "$cg"; return
	fi
	lim=$(jqv "$out" .cgroup_limit_bytes)
	margin=$(jqv "$out" .probe.margin_bytes)
	chunk=$(jqv "$out" .probe.chunk_bytes)
	before=$(jqv "$out" .usage_before_bytes)
	alloc=$(jqv "$out" .allocated_bytes)
	echo "# limit $lim chunk $chunk margin $margin before $before allocated $alloc chunks $(jqv "$out" .probe_chunks)"
	check_eq "probe: limit is the cgroup's 1 GiB" "$lim" "$GIB"
	check_eq "probe: chunk = limit/32, margin = limit/16" "$chunk" "$((GIB / 32))"
	check_eq "probe: chunk = limit/32, margin = limit/16" "$margin" "$((GIB / 16))"
	check_ge "probe: before + allocated >= limit - margin - chunk" "$((before + alloc))" "$((lim - margin - chunk))"
	check_le "probe: before + allocated <= limit - margin" "$((before + alloc))" "$((lim - margin))"
	check_eq "probe: the header first" "$(jq -c '[keys_unsorted[0:5][]]' "$out")" '["format_version","kind","generator","created","host"]'
	check_eq "probe: then the nine fields, named as in the brief" "$(jq -c '[keys_unsorted[5:14][]]' "$out")" '["cgroup_limit_bytes","usage_before_bytes","allocated_bytes","allocated_gib","usage_peak_bytes","usage_after_bytes","overhead_bytes","overhead_gib","probe_chunks"]'
	check_eq "probe: overhead = peak - before - allocated" "$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')" "$(jqv "$out" .overhead_bytes)"
	check_eq "probe: not interrupted, not OOM-killed" "$(jqv "$out" '.interrupted or .probe_oom_killed')" false

	faults=$(jqv "$out" '[.attribution.page_faults.by_task[] | select(.comm == "memprobe-probe") | .faults] | add // 0')
	echo "# probe faults $faults, expected $((alloc / 4096))"
	check_within "probe: page faults = allocated / 4 KiB within 10%" "$faults" $((alloc / 4096)) 0.10
	pt=$(cat_field "$out" pagetables growth_bytes)
	echo "# pagetables $pt, expected $((alloc / 512))"
	if [ "$(cat_field "$out" pagetables available)" = false ]; then
		check "probe: this kernel keeps no per-memcg pagetables, and the report says so" \
			says_missing "$out" --category pagetables
	else
		check_within "probe: pagetables = allocated / 512 within 25%" "$pt" $((alloc / 512)) 0.25
	fi
	# the fill's page tables (one page per 2 MiB) are uncharged a grace
	# period after the probe's exit on a kernel that frees them by RCU:
	# usage_after read at once held them all (1.3-1.9 MiB); what may stay
	# is the per-CPU charge stock, 64 pages a CPU, until its cgroup goes
	left=$(jqv "$out" '.usage_after_bytes - .usage_before_bytes')
	bound=$(( alloc / 1024 > (64 * 4096 * $(nproc)) + 262144 ? alloc / 1024 : (64 * 4096 * $(nproc)) + 262144 ))
	echo "# left after $left: $(jq -c '[.overhead.left_after.parts[]? | select((.bytes | fabs) >= 65536) | [.comm, .category, .bytes]]' "$out") unexplained $(jqv "$out" .overhead.left_after.unexplained_bytes)"
	check_le "probe: usage_after holds none of the fill's page tables (half of them: $((alloc / 1024)); the charge stock: $((64 * 4096 * $(nproc))))" "$left" "$bound"
	growth=$(jqv "$out" .attribution.reconciliation.measured_growth_bytes)
	attr=$(jqv "$out" .attribution.reconciliation.attributed_bytes)
	unattr=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
	tol=$(( growth / 50 > 4 * MIB ? growth / 50 : 4 * MIB ))
	echo "# growth $growth attributed $attr unattributed $unattr tolerance $tol"
	check_le "probe: categories reconcile within max(2%, 4 MiB)" "${unattr#-}" "$tol"
	check_eq "probe: unattributed = growth - attributed - anon unmapped" \
		$((growth - attr - $(jqv "$out" '.attribution.reconciliation.anon_unmapped_bytes // 0'))) "$unattr"
	check_eq "probe: anon's largest share is the probe's" "$(top_task "$out" anon comm)" memprobe-probe
	check_within "probe: anon growth is the probe's" "$(top_task "$out" anon bytes)" "$alloc" 0.05
	check_ge "probe: page-table stacks explain pagetables" "$(jqv "$out" '[.attribution.kernel_paths[] | select(.path == "pagetables") | .top_stacks[0].frames[] | select(startswith("__pte_alloc"))] | length')" 1
	check_eq "probe: every hook attached on this kernel" "$(jqv "$out" '[.attribution.hooks[] | select(.kind == null) | .concern] | join(",")')" ""
	if [ "$(jqv "$out" .attribution.memcg_charges.source)" != null ]; then
		ch=$(jqv "$out" '[.attribution.memcg_charges.by_task[] | select(.comm == "memprobe-probe") | .bytes] | add // 0')
		echo "# memcg charges asked by the probe (gross) $ch via $(jqv "$out" .attribution.memcg_charges.source)"
		check_within "probe: the charges the probe asked of its memcg = allocated within 5%" "$ch" "$alloc" 0.05
	else
		check "probe: no charge hook, and the report says the usage is polled" \
			says_missing "$out" --concern charge --reason polled
	fi
	echo "# events lost $(jq -c .attribution.events_lost "$out")"
	# The maps memprobe sizes never overflow in a probe. Stack walks the
	# kernel refused are no map's (508 in a 6.1 TCG guest over a whole
	# probe, with the map far from full), and stack_map_full is mostly a
	# bucket collision: the stack map keeps one stack per hash bucket, and
	# two of a probe's ~30 stacks share one of its 2048 buckets in about
	# one boot in six (the hash is of the stack's addresses), refusing the
	# second's samples, however empty the map.
	check_eq "probe: no map overflowed" "$(jqv "$out" '.attribution.events_lost | .task_map_full + .stack_stat_map_full + .live_page_map_full')" 0
	check_eq "probe: events_lost.total sums every loss named" \
		"$(jqv "$out" '.attribution.events_lost | .total - ([to_entries[] | select(.key != "total" and (.key | test("bound") | not)) | .value | numbers] | add)')" 0
	# what the kernel's recursion guard skipped may have held (a missed
	# allocation's order, a missed free's tracked page) against the growth:
	# with the counters no memcg update is counted, so the bound, not a
	# count of updates, is the measure (issue 24: < 0.1% in the bench)
	check_le "probe: what runs lost to recursion may hold, under 1% of the growth" \
		"$(( $(jqv "$out" '.attribution.events_lost.recursion_miss_bound_bytes // 0') * 100 ))" "$growth"
	# the misses' bound: each program's misses times its largest event,
	# summed; programs whose events carry no bytes bound nothing (null)
	check_eq "probe: the misses' bound is the sum of the programs' bounds" \
		"$(jqv "$out" '.attribution.events_lost | .recursion_miss_bound_bytes == ([.recursion_miss_bound_bytes_by_program[] | select(. != null)] | add)')" true
	check_eq "probe: ... null for the programs that count no bytes" \
		"$(jqv "$out" '[.attribution.events_lost.recursion_miss_bound_bytes_by_program | to_entries[] | select(.key | test("exec|exit|attach|victim")) | .value] | all(. == null)')" true
	check_eq "probe: ... at least a page per missed memcg update or free" \
		"$(jqv "$out" '.attribution.events_lost | ([.recursion_misses_by_program | to_entries[] | select(.key | test("memcg|page_free")) | .value] | add) as $m | .recursion_miss_bound_bytes >= $m * 4096')" true
	echo "# misses' bound $(jqv "$out" .attribution.events_lost.recursion_miss_bound_bytes) bytes of a growth of $(jqv "$out" .attribution.reconciliation.measured_growth_bytes)"
	check_empty "probe: its child cgroup is gone" "$(find "$cg" -mindepth 1 -type d)"
	remove_cgroup "$cg"
	check "probe: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# probe --threads 2 on one allowed CPU (issue 24): the report says what CPU
# the fill got and why no more, from the threads' own scheduling figures.
# Two threads on one CPU must wait for it in turn, on any machine, loaded
# or not: each waits at least while the other runs a timeslice. No timing
# is asserted beyond what one CPU allows.
test_probe_threads() {
	local cg out rc fill cpu wait
	cg=$(make_cgroup threads $((256 * MIB))) || { fail "threads: make cgroup"; return; }
	out=$TMP/threads.json
	taskset -c 0 "$MEMPROBE" probe --cgroup "$cg" --threads 2 --format json -o "$out" 2> "$TMP/threads.err"
	rc=$?
	check_eq "threads: probe --threads 2 exits 0" "$rc" 0
	fill=$(jqv "$out" .probe.fill_ns)
	cpu=$(jqv "$out" .probe.fill_cpu_ns)
	wait=$(jqv "$out" .probe.fill_runqueue_wait_ns)
	echo "# fill $fill ns, threads on a CPU $cpu ns, waiting for one $wait ns, $(jqv "$out" .probe.fill_gib_per_sec) GiB/s"
	check_eq "threads: taskset -c 0: the fill may use 1 CPU" "$(jqv "$out" .probe.fill_cpus_allowed)" 1
	check_gt "threads: the threads' time on a CPU is measured" "$cpu" 0
	# one CPU: their time on it no more than the fill's own (10 ms for the
	# clocks' reads around it)
	check_le "threads: ... and no more than one CPU's for the fill" "$cpu" "$((fill + 10000000))"
	check_gt "threads: their wait for the CPU is measured" "$wait" 0
	# (null, from a memprobe without the figures, must fail the check, not the shell)
	check_ge "threads: two threads on one CPU wait at least a tenth of their time on it" \
		"$wait" "$(is_int "$cpu" && echo $((cpu / 10)))"
	check_match "threads: the text report names the one allowed CPU" \
		"$("$MEMPROBE" report "$out" --format text 2>&1)" -E '^fill +2 threads on 1 allowed CPU ran '
	remove_cgroup "$cg"
	check "threads: nothing left behind" no_leftovers
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
	check_ge "workload: stress-ng holds 40% of the cgroup" "$usage" "$((GIB * 4 / 10 - 8 * MIB))"
	out=$TMP/workload.json
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/workload.err"
	check_eq "workload: probe exits 0" "$?" 0
	lim=$(jqv "$out" .cgroup_limit_bytes); margin=$(jqv "$out" .probe.margin_bytes)
	before=$(jqv "$out" .usage_before_bytes); alloc=$(jqv "$out" .allocated_bytes)
	echo "# before $before allocated $alloc peak $(jqv "$out" .usage_peak_bytes)"
	check_ge "workload: usage before counts stress-ng" "$before" "$((GIB * 4 / 10 - 8 * MIB))"
	check_le "workload: the probe stops at the margin" "$((before + alloc))" "$((lim - margin))"
	check_le "workload: the probe stops at the margin" "$(jqv "$out" .usage_peak_bytes)" "$((lim - margin + 8 * MIB))"
	check "workload: stress-ng is alive (not OOM-killed)" kill -0 "$pid"
	check_eq "workload: no OOM kill in the cgroup" "$(awk '/oom_kill / {print $2}' "$cg/memory.oom_control" 2>/dev/null || echo 0)" 0
	check_within "workload: the probe's growth is attributed to the probe" "$(task_bytes "$out" anon memprobe-probe)" "$alloc" 0.05
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
	check "workload: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
test_signals() {
	local out pid rc alloc over
	out=$TMP/sigint.json
	"$MEMPROBE" probe --limit 2G --chunk 256M --thp never --format json -o "$out" 2>/dev/null &
	pid=$!
	wait_filling $pid > /dev/null
	kill -INT "$pid"
	wait "$pid"; rc=$?
	check_eq "SIGINT: exit 0 with a report" "$rc" 0
	check_eq "SIGINT: report marked interrupted" "$(jqv "$out" .interrupted)" true
	check_ge "SIGINT: partial figures kept" "$(jqv "$out" .allocated_bytes)" 1
	# the chunk being filled counts as allocated as far as it got: the
	# overhead is page tables and change, not up to a 256 MiB chunk
	alloc=$(jqv "$out" .allocated_bytes); over=$(jqv "$out" .overhead_bytes)
	echo "# SIGINT mid-chunk: allocated $alloc ($(jqv "$out" .probe_chunks) chunks), overhead $over"
	check_le "SIGINT: the half-filled chunk is not overhead" "${over#-}" $((alloc / 256 + 8 * MIB))
	check "SIGINT: nothing left behind" no_leftovers
	check_eq "SIGINT: no probe process left" "$(probe_child $pid)" ""
	"$MEMPROBE" probe --limit 2G --chunk 16M --format json -o "$out" 2>/dev/null &
	pid=$!
	wait_filling $pid > /dev/null
	kill -TERM "$pid"
	wait "$pid"; rc=$?
	check_eq "SIGTERM: exit 0, report marked interrupted" "$rc" 0
	check_eq "SIGTERM: exit 0, report marked interrupted" "$(jqv "$out" .interrupted)" true
	check "SIGTERM: nothing left behind" no_leftovers
}


# ---------------------------------------------------------------------------
# Faults found by review, each a test.
test_probe_safety() {
	local parent tgt sib sibpid out=$TMP/safety.json head pid rc i other
	# a sibling's usage counts against the shared parent's limit
	parent=$(make_cgroup safety $GIB) || { fail "safety: make cgroup"; return; }
	# v2: children have memory files only once the parent hands the controller down
	[ "$(cg_version "$parent")" = 2 ] && echo +memory > "$parent/cgroup.subtree_control"
	mkdir "$parent/sib" "$parent/tgt"; sib=$parent/sib; tgt=$parent/tgt
	sibpid=$(run_in_cgroup "$sib" "$BIN/alloc" 600)
	for i in $(seq 50); do [ "$(cg_usage "$sib")" -ge $((590 * MIB)) ] && break; sleep 0.1; done
	"$MEMPROBE" limits --cgroup "$tgt" --format json > "$out"
	head=$(jqv "$out" .cgroup.headroom_bytes)
	echo "# headroom of an unlimited child beside a 600 MiB sibling under 1 GiB: $head"
	check_le "safety: headroom counts the sibling's usage" "$head" "$((GIB - 590 * MIB))"
	check_eq "safety: headroom names the shared parent" "$(jqv "$out" .cgroup.headroom_from)" "$parent"
	"$MEMPROBE" probe --cgroup "$tgt" --thp never --format json -o "$out" 2>/dev/null
	check "safety: the sibling survives a probe of its neighbour" kill -0 "$sibpid"
	check_le "safety: the probe stayed under the parent's margin" "$(( $(jqv "$out" .allocated_bytes) + 600 * MIB ))" "$((GIB - $(jqv "$out" .probe.margin_bytes)))"
	check_eq "safety: no workload OOM kill reported" "$(jqv "$out" '.workload_oom_kills | length')" 0
	kill -9 "$sibpid"; wait "$sibpid" 2>/dev/null
	rmdir "$sib" "$tgt"
	remove_cgroup "$parent"

	# a workload that grows while the probe runs: the OOM killer takes the probe
	tgt=$(make_cgroup grow $GIB)
	pid=$(run_in_cgroup "$tgt" "$BIN/alloc" 450 300 1200)
	sleep 0.8
	"$MEMPROBE" probe --cgroup "$tgt" --thp never --format json -o "$out" 2>/dev/null
	echo "# grow: completed $(jqv "$out" '.interrupted | not') oom_killed $(jqv "$out" .probe_oom_killed) allocated $(jqv "$out" .allocated_bytes)"
	check "safety: a workload growing during the probe is not OOM-killed" kill -0 "$pid"
	check_eq "safety: ... and the report says none was" "$(jqv "$out" '.workload_oom_kills | length')" 0
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$tgt"

	# a probe already running on a target: the second one refuses
	tgt=$(make_cgroup twice $GIB)
	"$MEMPROBE" probe --cgroup "$tgt" --chunk 8M --thp never -o /dev/null 2>/dev/null &
	other=$!
	wait_filling $other > /dev/null
	"$MEMPROBE" probe --cgroup "$tgt" -o /dev/null 2> "$TMP/err"; rc=$?
	check_eq "safety: a second probe of the same cgroup exits 1" "$rc" 1
	check "safety: ... naming the first by pid" grep -q "a memprobe (pid $other) is probing" "$TMP/err"
	wait "$other"
	# ten started at once: the lock is taken before anything is made, so
	# exactly one runs and nine refuse, naming the one that runs
	local pids=() rcs=() ran=0 refused=0 named=0 k
	for k in $(seq 10); do
		"$MEMPROBE" probe --cgroup "$tgt" --thp never --format json -o "$TMP/ten-$k.json" 2> "$TMP/ten-$k.err" &
		pids+=($!)
	done
	for k in $(seq 10); do wait "${pids[k - 1]}"; rcs+=($?); done
	for k in $(seq 10); do
		if [ "${rcs[k - 1]}" = 0 ]; then ran=$((ran + 1)); other=${pids[k - 1]}; fi
	done
	for k in $(seq 10); do
		[ "${rcs[k - 1]}" = 1 ] && refused=$((refused + 1)) &&
			grep -q "a memprobe (pid $other) is probing $tgt already" "$TMP/ten-$k.err" && named=$((named + 1))
	done
	echo "# ten at once: exit statuses ${rcs[*]}"
	check_eq "safety: ten probes at once on one cgroup: one runs" "$ran" 1
	check_eq "safety: ... nine refuse with exit 1" "$refused" 9
	check_eq "safety: ... each naming the pid of the one that runs" "$named" 9
	# this cgroup's lock only (another run may hold one of its own)
	check "safety: ... and its lock file is not left" [ ! -e "/run/memprobe/$(printf 'probe-%x-%x.lock' $(stat -c '%d %i' "$tgt"))" ]
	# record --probe-at takes the same lock
	"$MEMPROBE" probe --cgroup "$tgt" --chunk 8M --thp never -o /dev/null 2>/dev/null &
	other=$!
	wait_filling $other > /dev/null
	"$MEMPROBE" record --cgroup "$tgt" --duration 2 --probe-at 1 -o /dev/null 2> "$TMP/err"; rc=$?
	check_eq "safety: record --probe-at of a cgroup being probed exits 1" "$rc" 1
	check "safety: ... naming the probe" grep -q "a memprobe (pid $other) is probing" "$TMP/err"
	wait "$other"
	remove_cgroup "$tgt"
	check "safety: nothing left behind" no_leftovers
}

# caught_term PID: the process runs memprobe (not the shell that forks it,
# which has the suite's own TERM trap) and has a SIGTERM handler (SigCgt,
# bit 15)
caught_term() {
	local m
	[ "$(readlink /proc/$1/exe 2>/dev/null)" = "$(readlink -f "$MEMPROBE")" ] || return 1
	m=$(awk '/^SigCgt:/ { print $2 }' /proc/$1/status 2>/dev/null)
	[ -n "$m" ] && [ $(( 0x$m & 0x4000 )) != 0 ]
}

test_probe_kills() {
	local out=$TMP/kills.json pid rc i stale ok=0 n=0
	# SIGTERM at any moment, even before the probe process is ready
	# (2 GiB in 16 MiB chunks: not done within 0.3 s even where a fault costs
	# 2 us; a 512 MiB probe was, and the report was rightly not interrupted)
	for i in 0.01 0.02 0.03 0.05 0.1 0.2 0.3; do
		"$MEMPROBE" probe --limit 2G --chunk 16M --thp never --format json -o "$out" 2>/dev/null &
		pid=$!
		# from the moment memprobe catches SIGTERM (SigCgt bit 15): before
		# it, the dynamic loader runs and the default action kills (in a
		# TCG guest that lasts more than 10 ms)
		while ! caught_term $pid && kill -0 $pid 2>/dev/null; do :; done
		sleep $i; kill -TERM $pid; wait $pid; rc=$?
		n=$((n + 1))
		if [ "$rc" = 0 ] && [ "$(jqv "$out" .interrupted)" = true ]; then ok=$((ok + 1))
		else echo "# SIGTERM after ${i}s: exit $rc, interrupted $(jqv "$out" .interrupted 2>&1)"; fi
	done
	check_eq "kills: SIGTERM at any moment: exit 0 and an interrupted report ($ok of $n)" "$ok" "$n"
	check "kills: SIGTERM at any moment: nothing left" no_leftovers
	# SIGHUP (a lost terminal) is a signal to stop too
	"$MEMPROBE" probe --limit 1G --chunk 16M --format json -o "$out" 2>/dev/null &
	pid=$!; wait_filling $pid > /dev/null; kill -HUP $pid; wait $pid; rc=$?
	check_eq "kills: SIGHUP: exit 0, interrupted, nothing left" "$rc" 0
	check_eq "kills: SIGHUP: exit 0, interrupted, nothing left" "$(jqv "$out" .interrupted)" true
	check "kills: SIGHUP: exit 0, interrupted, nothing left" no_leftovers
	# SIGKILL leaves cgroups behind; the next run removes them
	"$MEMPROBE" probe --limit 1G --chunk 16M -o /dev/null 2>/dev/null &
	pid=$!; wait_filling $pid > /dev/null; kill -KILL $pid; wait $pid 2>/dev/null
	stale=$(find /sys/fs/cgroup -type d -name "memprobe-target-$pid")
	check "kills: SIGKILL leaves the cgroups (the kernel gives no chance)" [ -n "$stale" ]
	"$MEMPROBE" probe --limit 64M -o /dev/null 2> "$TMP/err"
	check_empty "kills: the next run removes what a killed memprobe left" "$(find /sys/fs/cgroup -type d -name "memprobe-*-$pid")"
	check "kills: ... and says so" grep -q "left by a memprobe that was killed" "$TMP/err"
	# the probe process killed by someone else: said on stderr and in the
	# text, and memprobe exits 1 (the measurement did not happen as asked)
	local c
	"$MEMPROBE" probe --limit 1G --chunk 16M --thp never --format json -o "$out" 2> "$TMP/err" &
	pid=$!
	c=$(wait_filling $pid)
	kill -TERM "$c"; wait $pid; rc=$?
	echo "# probe killed by SIGTERM: exit $rc, killed_by_signal $(jqv "$out" .probe_killed_by_signal), oom_killed $(jqv "$out" .probe_oom_killed)"
	check_eq "kills: a probe killed by SIGTERM is reported as killed, not as OOM" "$(jqv "$out" .probe_killed_by_signal)" 15
	check_eq "kills: a probe killed by SIGTERM is reported as killed, not as OOM" "$(jqv "$out" .probe_oom_killed)" false
	check_eq "kills: ... memprobe exits 1" "$rc" 1
	check "kills: ... and says so on stderr" grep -q "the probe process was killed by signal 15" "$TMP/err"
	"$MEMPROBE" probe --limit 1G --chunk 16M --thp never -o "$TMP/kills.txt" 2>/dev/null &
	pid=$!
	c=$(wait_filling $pid)
	kill -KILL "$c"; wait $pid
	check "kills: ... and in the text report" grep -q "^KILLED: the probe process was killed by signal 9" "$TMP/kills.txt"
	check "kills: nothing left behind" no_leftovers
	# a SIGKILLed record: its command dies with it, the next run removes its cgroup
	"$MEMPROBE" record --limit 256M -o /dev/null -- sleep 60 2>/dev/null &
	pid=$!
	for i in $(seq 500); do c=$(children $pid | head -n 1); [ -n "$c" ] && [ "$(cat /proc/$c/comm 2>/dev/null)" = sleep ] && break; sleep 0.01; done
	kill -KILL $pid; wait $pid 2>/dev/null
	# dead: gone, or a zombie its new parent has yet to reap
	for i in $(seq 100); do alive "$c" || break; sleep 0.01; done
	check "kills: a SIGKILLed record's command does not outlive it" eval '! alive "$c"'
	"$MEMPROBE" record --limit 64M -o /dev/null -- true 2> "$TMP/err"
	check_empty "kills: the next record removes the killed one's cgroup" "$(find /sys/fs/cgroup -type d -name "memprobe-run-$pid")"
	check "kills: record: nothing left behind" no_leftovers
}

test_probe_paths() {
	local cg out=$TMP/paths.json dir base
	cg=$(make_cgroup paths $((512 * MIB))) || { fail "paths: make cgroup"; return; }
	dir=$(dirname "$cg"); base=$(basename "$cg")
	# a path with . and .. is the same cgroup, and attribution still works
	"$MEMPROBE" probe --cgroup "$dir/./$base/../$base" --thp never --format json -o "$out" 2>/dev/null
	check_eq "paths: . and .. resolve to the cgroup" "$(jqv "$out" .target.dir)" "$cg"
	check_gt "paths: attribution works through . and .." "$(jqv "$out" .attribution.reconciliation.attributed_bytes)" "$((100 * MIB))"
	# a path relative to the working directory
	(cd "$dir" && "$MEMPROBE" limits --cgroup "$base" --format json) > "$out"
	check_eq "paths: a relative path is resolved" "$(jqv "$out" .cgroup.dir)" "$cg"
	remove_cgroup "$cg"
	# inside a cgroup namespace, with the hierarchy mounted as memprobe sees it
	if [ "$(cg_version "$(own_memcg_dir)")" = 1 ]; then
		unshare -C -m --propagation private sh -c '
			umount /sys/fs/cgroup/memory && mount -t cgroup -o memory none /sys/fs/cgroup/memory &&
			"$0" probe --limit 256M --thp never --format json -o "$1"' "$MEMPROBE" "$out" 2> "$TMP/ns.err"
	else
		unshare -C -m --propagation private sh -c '
			umount /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup &&
			"$0" probe --limit 256M --thp never --format json -o "$1"' "$MEMPROBE" "$out" 2> "$TMP/ns.err"
	fi
	[ -s "$TMP/ns.err" ] && echo "# in a cgroup namespace, stderr: $(head -c 300 "$TMP/ns.err")"
	echo "# in a cgroup namespace: target $(jqv "$out" .target.path), attributed $(jqv "$out" .attribution.reconciliation.attributed_bytes)"
	check_eq "paths: in a cgroup namespace the target is seen from /" "$(jqv "$out" .target.path)" "/memprobe-target-$(jqv "$out" '.probe.cgroup | split("-") | last')"
	check_gt "paths: in a cgroup namespace attribution still works" "$(jqv "$out" .attribution.reconciliation.attributed_bytes)" "$((100 * MIB))"
	check "paths: nothing left behind" no_leftovers
}

# overhead_checks FILE PID MODE BURST_MIB: the overhead object of a probe of
# the stand-in benchmark (PID), steady or bursty
overhead_checks() {
	local out=$1 pid=$2 mode=$3 burst=$4 floor_mib=${5:-8} over unexp bound anon want tol
	over=$(jqv "$out" .overhead_bytes)
	unexp=$(jqv "$out" .overhead.unexplained_bytes)
	echo "# $mode: overhead $over unexplained $unexp (peak - vector usage $(jqv "$out" '.usage_peak_bytes - .overhead.vector_usage_bytes')) parts $(jq -c '[.overhead.parts[] | select((.bytes | fabs) >= 65536) | [.comm, .category, .bytes]]' "$out") probe $(jq -c .overhead.probe_kernel_parts "$out")"
	check_eq "overhead $mode: the object explains overhead_bytes" "$(jqv "$out" .overhead.bytes)" "$over"
	check_eq "overhead $mode: ... at the peak" "$(jqv "$out" .overhead.at)" peak
	check_eq "overhead $mode: parts + probe's cost + unexplained = overhead, exactly" \
		"$(jqv "$out" '[.overhead.parts[].bytes] + [.overhead.probe_kernel_bytes, .overhead.reclaimed_bytes // 0, .overhead.unexplained_bytes] | add')" "$over"
	check_eq "overhead $mode: the probe's cost is the sum of its parts" \
		"$(jqv "$out" '[.overhead.probe_kernel_parts[].bytes] | add // 0')" "$(jqv "$out" .overhead.probe_kernel_bytes)"
	check_eq "overhead $mode: left_after explains usage_after - usage_before" \
		"$(jqv "$out" .overhead.left_after.bytes)" "$(jqv "$out" '.usage_after_bytes - .usage_before_bytes')"
	check_eq "overhead $mode: ... exactly" \
		"$(jqv "$out" '[.overhead.left_after.parts[].bytes] + [.overhead.left_after.probe_kernel_bytes, .overhead.left_after.reclaimed_bytes // 0, .overhead.left_after.unexplained_bytes] | add')" \
		"$(jqv "$out" .overhead.left_after.bytes)"
	check_ge "overhead $mode: not negative (the baseline caught no burst)" "$over" 0
	check_eq "overhead $mode: the baseline is the window's lowest usage" \
		"$(jqv "$out" .overhead.baseline_usage_bytes)" "$(jqv "$out" .usage_before_bytes)"
	# the issue's bound, max(5%, 8 MiB), bursty too: a burst being freed
	# at the peak is counted (anon_unmapped) where it was 16 MiB and more
	# unexplained under load (38 MiB on 6.1: a whole TLB batch); what is
	# left is the usage's move between the kernel's exact peak counter
	# and the sampled vector (0.5 ms apart, a burst touched at 3 MiB/ms)
	# and that move is in the document (usage_peak - vector_usage): on
	# a loaded machine a maps read of 3 ms puts 10 MiB of a burst between
	# them (10 633 216 unexplained of which 10 752 000 the move, in 1 of
	# 10 runs). So the bound holds for what the vector could hold, and
	# the move itself is bounded by the burst it belongs to.
	bound=$(jqv "$out" "[(.overhead_bytes / 20 | floor), $((floor_mib * MIB))] | max")
	check_le "overhead $mode: unexplained, less the usage's move from the peak to the vector, within max(5%, $floor_mib MiB)" \
		"$(jqv "$out" '.overhead.unexplained_bytes - (.usage_peak_bytes - .overhead.vector_usage_bytes) | fabs')" "$bound"
	check_le "overhead $mode: ... and the move within the burst and $floor_mib MiB" \
		"$(jqv "$out" '.usage_peak_bytes - .overhead.vector_usage_bytes | fabs')" "$(((burst + floor_mib) * MIB))"
	anon=$(jqv "$out" "[.overhead.parts[] | select(.pid == $pid and .category == \"anon\") | .bytes] | add // null")
	# the benchmark grows 10 MiB/s from the baseline's low (in its window)
	# to the peak (the fill's end); a burst held at the peak adds to it
	want=$(jqv "$out" '((.overhead.baseline_window_ns + .probe.fill_ns) / 1e9 * 10 * 1048576) | floor')
	tol=$((want / 4 + 8 * MIB))
	echo "# $mode: the benchmark's anon $anon, grown about $want (+ $burst MiB in a burst)"
	check_ge "overhead $mode: names the benchmark's anon growth (pid $pid)" "${anon:-x}" $((want - tol))
	check_le "overhead $mode: ... no more than it allocated in the probe's time" "${anon:-x}" $((want + tol + burst * MIB))
	if [ "$(cat_field "$out" pagetables available)" = false ]; then
		skip "overhead $mode: the probe's page tables are its cost: this kernel keeps no pagetables per memcg"
	else
		check_gt "overhead $mode: the probe's page tables are its cost" \
			"$(jqv "$out" '[.overhead.probe_kernel_parts[] | select(.category == "pagetables") | .bytes] | add // 0')" 0
	fi
}

test_overhead() {
	local cg out pid mode burst
	for mode in steady bursty; do
		burst=0; [ $mode = bursty ] && burst=80
		cg=$(make_cgroup "overhead-$mode" $((3 * GIB / 2))) || { fail "overhead: make cgroup"; return; }
		out=$TMP/overhead-$mode.json
		pid=$(run_in_cgroup "$cg" "$BIN/benchmark" 600 100 50 10 $burst 300 "$TMP/bench-cache" 1600)
		check_usage "overhead $mode: the benchmark holds its anon and page cache" "$cg" $((700 * MIB))
		sleep 0.5
		if "$MEMPROBE" probe --cgroup "$cg" --format json -o "$out" 2> "$TMP/overhead.err"; then
			overhead_checks "$out" "$pid" $mode $burst
			"$MEMPROBE" report "$out" > "$TMP/overhead.txt"
			check "overhead $mode: the text says it after the nine fields" \
				eval "sed -n 3p '$TMP/overhead.txt' | grep -q '^overhead [0-9.-]* MiB at the peak: benchmark\[$pid\] anon '"
			check "overhead $mode: ... and what was left after" grep -q '^left after [0-9.-]* MiB' "$TMP/overhead.txt"
		else
			fail "overhead $mode: probe exits 0 (got $?: $(shown "$(cat "$TMP/overhead.err")"))"
		fi
		check "overhead $mode: the benchmark survives" kill -0 "$pid"
		kill -9 "$pid"; wait "$pid" 2>/dev/null
		remove_cgroup "$cg"
	done
	overhead_record
	check "overhead: nothing left behind" no_leftovers
}

# Charges left behind: a process allocates 64 MiB in the target, moves to a
# sibling cgroup, frees 32 MiB of what it left; then another allocates 100
# MiB in the target (the peak). The report names the one that moved out,
# with its pid, comm and the 32 MiB it left, not "(other context)".
test_moved_out() {
	local a b out=$TMP/moved.json rec pid i other
	a=$(make_cgroup movedA $((512 * MIB))) && b=$(make_cgroup movedB $((512 * MIB))) ||
		{ fail "moved out: make cgroups"; return; }
	"$MEMPROBE" record --cgroup "$a" --duration 6 --memcg-from tracepoint --format json -o "$out" --ready-fd 3 3> "$TMP/ready-moved" 2>/dev/null &
	rec=$!
	for i in $(seq 1200); do [ -s "$TMP/ready-moved" ] && break; sleep 0.05; done
	pid=$(run_in_cgroup "$a" "$BIN/leave" 64 32)
	check_usage "moved out: leave gets to 64 MiB" "$a" $((64 * MIB))
	echo "$pid" > "$b/cgroup.procs"
	kill -USR1 "$pid"
	for i in $(seq 600); do [ "$(cg_usage "$a")" -lt $((40 * MIB)) ] && break; sleep 0.01; done
	run_in_cgroup "$a" "$BIN/alloc" 100 > /dev/null
	wait $rec 2>/dev/null
	jqv "$out" '.attribution.categories[] | select(.name == "anon") | .tasks[] | "# anon: \(.comm)[\(.pid)] \(.bytes)\(if .moved_out then " moved out" else "" end)"'
	check_eq "moved out: named by pid and comm" "$(jqv "$out" "[.attribution.categories[] | select(.name == \"anon\") | .tasks[] | select(.pid == $pid) | .comm] | first")" leave
	check_eq "moved out: said to have moved out" "$(jqv "$out" "[.attribution.categories[] | select(.name == \"anon\") | .tasks[] | select(.pid == $pid) | .moved_out] | first")" true
	check_within "moved out: the 32 MiB it left, net of what it freed outside" "$(jqv "$out" "[.attribution.categories[] | select(.name == \"anon\") | .tasks[] | select(.pid == $pid) | .bytes] | first")" $((32 * MIB)) 0.05
	other=$(task_bytes "$out" anon "(other context)")
	check_le "moved out: its free is not (other context)'s (${other#-} bytes there)" "${other#-}" $((4 * MIB))
	"$MEMPROBE" report "$out" > "$TMP/moved.txt"
	check "moved out: the text says so" grep -q "leave\[$pid\] (moved out)" "$TMP/moved.txt"
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$a"; remove_cgroup "$b"
	check "moved out: nothing left behind" no_leftovers
}

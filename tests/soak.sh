#!/usr/bin/env bash
# make soak: 20 probes in a row, each of a fresh 1 GiB test cgroup that a
# workload fills to 60%..95% of its limit and keeps growing through the
# probe. Per run: the probe exits 0, the workload is not OOM-killed, the
# nine fields add up, the probe stays under its margin, the categories
# reconcile with the measured growth, and the overhead is explained by the
# workload's growth plus the probe's own kernel memory; nothing is left
# behind. Needs root. Not part of make check (docs/testing.md).
set -u
. "$(dirname "$0")/lib.sh"

GIB=1073741824
MIB=1048576
BIN=$(cd "$(dirname "$0")/.." && pwd)/build/tests/bin
RUNS=20
LIMIT=$GIB
LO_PCT=60 HI_PCT=95          # the fill levels, spread evenly over the runs
CAP_MIB=$((LIMIT * 97 / 100 / MIB))   # the workload alone never plans past 97%
STEP_MIB=2 STEP_MS=50        # its growth while the probe runs: 40 MiB/s, in
                             # steps short enough to land in a 100 ms probe

if [ "$(id -u)" -ne 0 ]; then
	echo "soak needs root (BPF, cgroups)"; echo "soak: 0 passed, 1 failed"; exit 1
fi
for f in "$MEMPROBE" "$BIN/grow"; do
	[ -x "$f" ] || { echo "no $f: run make soak"; echo "soak: 0 passed, 1 failed"; exit 1; }
done

# The cgroup's own OOM-kill counter (v1 memory.oom_control, v2 memory.events).
cg_oom_kills() {
	if [ -e "$1/memory.oom_control" ]; then
		awk '$1 == "oom_kill" { print $2 }' "$1/memory.oom_control"
	else
		awk '$1 == "oom_kill" { print $2 }' "$1/memory.events"
	fi
}

now_ns() { date +%s%N; }
mib() { awk -v b="$1" 'BEGIN { if (b ~ /^-?[0-9]+$/) printf "%.1f", b / 1048576; else printf "?" }'; }
is_int() { [[ $1 =~ ^-?[0-9]+$ ]]; }
# abs_le X BOUND: |X| <= BOUND (integers)
abs_le() { is_int "$1" && is_int "$2" && [ "${1#-}" -le "$2" ]; }
# a live process: kill -0 alone passes for a zombie
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# no_leftovers for what this run can have made. memprobe runs in our memory
# cgroup and makes its cgroups under it (memprobe-target-*) or under the
# target (memprobe-probe-*), so a leftover of ours is below own_memcg_dir.
# no_leftovers itself also lists what other runs going on at the same time
# have made in their own cgroups (their memprobe-target-*, memprobe-run-*,
# and, as its loop has no braces, their memprobe-test-* too): named, not
# counted.
soak_no_leftovers() {
	local own list mine others
	own=$(own_memcg_dir)
	list=$(no_leftovers) && return 0
	list=$(printf '%s\n' "$list" | sed 's/^# left behind: //')
	mine=$(printf '%s\n' "$list" | grep -F "$own/")
	others=$(printf '%s\n' "$list" | grep -vF "$own/")
	[ -n "$others" ] && echo "# not ours (another run's, outside $own): $(printf "%s\n" "$others" | tr "\n" " ")"
	[ -z "$mine" ] && return 0
	echo "# left behind: $mine"
	return 1
}

RUN_FAILS=0
# expect DESCRIPTION CONDITION-COMMAND...: one assertion of the current run
expect() {
	local what=$1; shift
	if ! "$@"; then
		echo "not ok - run $run: $what"
		RUN_FAILS=$((RUN_FAILS + 1))
	fi
}

ROWS=()
OVERHEADS=()
UNEXPLAINED=()
t_start=$(now_ns)
for run in $(seq "$RUNS"); do
	RUN_FAILS=0
	out=$TMP/soak-$run.json err=$TMP/soak-$run.err
	pct=$(awk -v i="$run" -v n="$RUNS" -v lo=$LO_PCT -v hi=$HI_PCT \
		'BEGIN { printf "%.1f", lo + (i - 1) * (hi - lo) / (n - 1) }')
	hold=$(awk -v p="$pct" -v l=$LIMIT 'BEGIN { printf "%d", l * p / 100 / 1048576 }')
	# make_cgroup and run_in_cgroup in this shell, not in $(...): what they
	# record (CREATED_CGROUPS, STARTED_PIDS) is what lib.sh's trap removes,
	# and the workload is our child
	make_cgroup "soak-$run" $LIMIT > "$TMP/cg" || { fail "run $run: make cgroup"; continue; }
	cg=$(< "$TMP/cg")
	oom0=$(cg_oom_kills "$cg")

	run_in_cgroup "$cg" "$BIN/grow" "$hold" $STEP_MIB $STEP_MS $CAP_MIB > "$TMP/pid"
	pid=$(< "$TMP/pid")
	# the hold shows in the cgroup's usage (page tables and the binary on top)
	reached=0
	for _ in $(seq 3000); do
		[ "$(cg_usage "$cg")" -ge $((hold * MIB)) ] && { reached=1; break; }
		alive "$pid" || break
		sleep 0.02
	done
	if [ $reached = 0 ]; then
		fail "run $run: the workload did not reach $hold MiB (usage $(cg_usage "$cg"))"
		kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		remove_cgroup "$cg"
		continue
	fi

	kill -USR1 "$pid"       # grow from now on, through the probe
	t0=$(now_ns)
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2> "$err"
	rc=$?
	dur_ms=$((($(now_ns) - t0) / 1000000))
	fill_ms=$(jqv "$out" '(.probe.fill_ns // 0) / 1000000 | floor' 2>/dev/null) || fill_ms="?"

	expect "probe exits 0 (rc $rc: $(head -c 300 "$err"))" [ "$rc" = 0 ]
	expect "the workload (pid $pid) is alive" alive "$pid"
	oom1=$(cg_oom_kills "$cg")
	expect "the probe removed its cgroup ($(find "$cg" -mindepth 1 -type d | head -n 3))" \
		[ -z "$(find "$cg" -mindepth 1 -type d)" ]
	expect "the cgroup's oom_kill counter did not move ($oom0 -> $oom1)" [ "$oom0" = "$oom1" ]
	# the rest reads the report: without one, one failure, not twenty
	unexpl="?" before="?" alloc="?" peak="?" over="?" wl="?"
	if ! jq -e .allocated_bytes "$out" >/dev/null 2>&1; then
		expect "a JSON report in $out" false
	else
		expect "the report lists no workload OOM kill" [ "$(jqv "$out" \
			'if .workload_oom_kills == null then .workload_oom_kill_count == 0
			 else (.workload_oom_kills | length) == 0 end')" = true ]
		expect "the probe completed (not OOM-killed, not interrupted)" [ "$(jqv "$out" \
			'.probe_oom_killed == false and .interrupted == false')" = true ]

		lim=$(jqv "$out" .cgroup_limit_bytes); margin=$(jqv "$out" .probe.margin_bytes)
		before=$(jqv "$out" .usage_before_bytes); alloc=$(jqv "$out" .allocated_bytes)
		peak=$(jqv "$out" .usage_peak_bytes); over=$(jqv "$out" .overhead_bytes)
		growth=$(jqv "$out" .attribution.reconciliation.measured_growth_bytes)
		unattr=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
		# the workload's growth: every task's anon but the probe's
		wl=$(jqv "$out" '[.attribution.categories[] | select(.name == "anon") | .tasks[]
			| select(.comm != "memprobe-probe") | .bytes] | add // 0')
		# the probe's kernel growth: the kernel row is the sum of pagetables,
		# kernel_stack, slab, percpu, vmalloc and kernel_other (no double count)
		pk=$(jqv "$out" '[.attribution.categories[] | select(.name == "kernel") | .tasks[]
			| select(.comm == "memprobe-probe") | .bytes] | add // 0')
		if is_int "$lim" && is_int "$margin" && is_int "$before" && is_int "$alloc" &&
		   is_int "$peak" && is_int "$over" && is_int "$growth" && is_int "$unattr" &&
		   is_int "$wl" && is_int "$pk"; then
			unexpl=$((over - wl - pk))
			expect "overhead = peak - before - allocated ($over vs $((peak - before - alloc)))" \
				[ "$over" -eq $((peak - before - alloc)) ]
			# from 93.75% on the workload alone is inside the 64 MiB margin:
			# there the probe must not allocate at all
			if [ "$before" -le $((lim - margin)) ]; then
				expect "before + allocated <= limit - margin ($((before + alloc)) > $((lim - margin)))" \
					[ $((before + alloc)) -le $((lim - margin)) ]
			else
				expect "nothing allocated inside the margin (before $before > $((lim - margin)), allocated $alloc)" \
					[ "$alloc" -eq 0 ]
			fi
			tol=$((growth / 50 > 4 * MIB ? growth / 50 : 4 * MIB))
			expect "unattributed $unattr within max(2%, 4 MiB) = $tol of growth $growth" \
				abs_le "$unattr" "$tol"
			tol=$((over / 20 > 8 * MIB ? over / 20 : 8 * MIB))
			expect "overhead $over = workload anon $wl + probe kernel $pk within $tol (off by $unexpl)" \
				abs_le "$unexpl" "$tol"
			OVERHEADS+=("$over"); UNEXPLAINED+=("$unexpl")
		else
			expect "the report has every figure ($(head -c 300 "$err"))" false
		fi
	fi

	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
	expect "nothing left behind" soak_no_leftovers

	ROWS+=("$(printf '%3d %6s %9s %9s %9s %9s %9s %9s %7s %7s' "$run" "$pct" "$(mib "$before")" \
		"$(mib "$alloc")" "$(mib "$peak")" "$(mib "$over")" "$(mib "$wl")" \
		"$(mib "$unexpl")" "$dur_ms" "$fill_ms")")
	if [ $RUN_FAILS = 0 ]; then
		pass "run $run: fill $pct%, overhead $(mib "$over") MiB, unexplained $(mib "$unexpl") MiB"
	else
		fail "run $run: fill $pct%: $RUN_FAILS checks failed"
		sed 's/^/# stderr: /' "$err" 2>/dev/null | head -n 5
	fi
done
elapsed=$((($(now_ns) - t_start) / 1000000))

echo
echo "# MiB; unexpl = overhead - workload anon growth - probe kernel growth;"
echo "# ms: the probe command's wall time; fill_ms: first chunk to the last (.probe.fill_ns)"
printf '%3s %6s %9s %9s %9s %9s %9s %9s %7s %7s\n' run fill% before alloc peak overhead wl_grow unexpl ms fill_ms
for r in "${ROWS[@]}"; do echo "$r"; done
# min/median/max (the lower median for an even count)
stats() {
	[ $# -gt 0 ] || { echo "no figures"; return; }
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR) printf "min %.1f median %.1f max %.1f MiB", v[1] / 1048576,
			v[int((NR + 1) / 2)] / 1048576, v[NR] / 1048576 }'
}
echo "# overhead: $(stats "${OVERHEADS[@]}")"
echo "# unexplained: $(stats "${UNEXPLAINED[@]}")"
echo "# $RUNS runs in $((elapsed / 1000)).$((elapsed % 1000 / 100)) s"
summary soak

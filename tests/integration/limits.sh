# shellcheck shell=bash
# tests/integration/limits.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# ---------------------------------------------------------------------------
test_limits() {
	local cg out
	cg=$(make_cgroup limits $GIB) || { fail "limits: make cgroup"; return; }
	out=$TMP/limits.json
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$out"
	check_eq "limits: own limit is 1 GiB" "$(jqv "$out" .cgroup.limit_bytes)" "$GIB"
	check_eq "limits: effective limit is 1 GiB" "$(jqv "$out" .cgroup.effective_limit_bytes)" "$GIB"
	check_eq "limits: headroom = effective - usage" "$(jqv "$out" '.cgroup.effective_limit_bytes - .cgroup.usage_bytes')" "$(jqv "$out" .cgroup.headroom_bytes)"
	check_eq "limits: MemTotal from /proc/meminfo" "$(jqv "$out" .host.mem_total_bytes)" "$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024))"
	# markdown has what text has: the soft headroom and the host (they
	# were missing)
	"$MEMPROBE" report "$out" --format markdown --bytes > "$TMP/limits.md"
	check_eq "limits markdown: the soft headroom and its reclaimable part" \
		"$(sed -n 's/^| soft headroom | \([0-9]*\): the headroom and \([0-9]*\) of reclaimable page cache |$/\1 \2/p' "$TMP/limits.md")" \
		"$(jq -r '.cgroup | "\(.soft_headroom_bytes) \(.reclaimable_bytes)"' "$out")"
	check_eq "limits markdown: the host's MemTotal and MemAvailable" \
		"$(sed -n 's/^| Mem\(Total\|Available\) | \([0-9]*\) |$/\2/p' "$TMP/limits.md" | tr '\n' ' ')" \
		"$(jq -r '.host | "\(.mem_total_bytes) \(.mem_available_bytes) "' "$out")"

	# env format evals in a shell; a process inside the cgroup is found by --pid
	local pid
	pid=$(run_in_cgroup "$cg" sleep 30)
	sleep 0.2
	eval "$("$MEMPROBE" limits --pid "$pid" --format env)"
	check_eq "limits --pid: env names the cgroup" "${MEMPROBE_CGROUP_DIR:-}" "$cg"
	check_eq "limits --pid: env effective limit" "${MEMPROBE_EFFECTIVE_LIMIT_BYTES:-}" "$GIB"
	kill -9 "$pid"; wait "$pid" 2>/dev/null

	# a nested unlimited child gets its parent's limit (on v2 the parent
	# must delegate memory for the child to be a memory cgroup of its own)
	[ "$(cg_version "$cg")" = 2 ] && echo +memory > "$cg/cgroup.subtree_control"
	mkdir "$cg/inner"
	"$MEMPROBE" limits --cgroup "$cg/inner" --format json > "$out"
	check_eq "limits: unlimited child reports null limit" "$(jqv "$out" .cgroup.limit_bytes)" null
	check_eq "limits: nested effective limit from the parent" "$(jqv "$out" .cgroup.effective_limit_bytes)" "$GIB"
	rmdir "$cg/inner"
	remove_cgroup "$cg"
	check "limits: nothing left behind" no_leftovers
}

# ---- headroom (issue 11 §2, 3, 6) -----------------------------------------
# oom_kills DIR: the cgroup's OOM-kill counter
oom_kills() {
	if [ -e "$1/memory.oom_control" ]; then awk '/^oom_kill / {print $2}' "$1/memory.oom_control"
	else awk '/^oom_kill / {print $2}' "$1/memory.events"; fi
}

# v1: the soft limit is reported as one, and is no stop point
test_headroom_soft() {
	local cg out=$TMP/soft.json
	cg=$(make_cgroup soft $((512 * MIB))) || { fail "headroom: make cgroup"; return; }
	if [ "$(cg_version "$cg")" != 1 ]; then
		skip "headroom: the v1 soft limit: cgroup v2 here (memory.high: test_headroom_high)"
		remove_cgroup "$cg"; return
	fi
	echo $((256 * MIB)) > "$cg/memory.soft_limit_in_bytes"
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$out"
	check_eq "soft: throttle_bytes is the soft limit" "$(jqv "$out" .cgroup.throttle_bytes)" $((256 * MIB))
	check_eq "soft: throttle_kind" "$(jqv "$out" .cgroup.throttle_kind)" soft_limit
	check_eq "soft: throttle_from" "$(jqv "$out" .cgroup.throttle_from)" "$cg"
	check "soft: the text says it is a soft limit" grep -q "throttling point .*soft_limit.*a soft limit: it acts only under global memory pressure" <<< "$("$MEMPROBE" limits --cgroup "$cg")"
	check_match "soft: env has MEMPROBE_THROTTLE_BYTES" "$("$MEMPROBE" limits --cgroup "$cg" --format env)" -x "MEMPROBE_THROTTLE_BYTES=$((256 * MIB))"
	"$MEMPROBE" probe --cgroup "$cg" --format json -o "$out" 2> "$TMP/soft.err"
	check_eq "soft: the probe aims at the hard limit" "$(jqv "$out" .probe.aim)" limit
	check_match "soft: ... and says why (v1 soft limit, global pressure)" "$(jqv "$out" .probe.aim_why)" "global memory pressure"
	check_match "soft: the throttle signal says v1 has none" "$(jqv "$out" .probe.throttle_signal)" "^none: cgroup v1"
	check_eq "soft: stopped at the margin" "$(jqv "$out" .probe.stop_reason)" margin
	check_ge "soft: the probe went past the soft limit" "$(jqv "$out" .usage_peak_bytes)" $((256 * MIB))
	remove_cgroup "$cg"
	check "soft: nothing left behind" no_leftovers
}

# page cache made inside a test cgroup: soft headroom, a plain allocation
# beyond the hard headroom without an OOM kill, and --reclaim-cache
test_headroom_cache() {
	local cg out=$TMP/cache.json d hard soft rec pid want fs
	if ! d=$(mktemp -d /var/tmp/memprobe-test-cache.XXXXXX 2>/dev/null); then
		skip "headroom: page cache: no /var/tmp to write a file on disk"
		return
	fi
	fs=$(stat -f -c %T "$d")
	if [ "$fs" = tmpfs ] || [ "$fs" = ramfs ]; then
		skip "headroom: page cache: /var/tmp is $fs here, its pages are not reclaimable"
		rm -rf "$d"; return
	fi
	cg=$(make_cgroup cache $((512 * MIB))) || { fail "cache: make cgroup"; rm -rf "$d"; return; }
	# 300 MiB of clean page cache, charged to the test cgroup
	pid=$(run_in_cgroup "$cg" sh -c "dd if=/dev/zero of=$d/f bs=1M count=300 conv=fsync 2>/dev/null; exec sleep 600")
	wait_usage "$cg" $((290 * MIB)); sleep 0.5
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$out"
	hard=$(jqv "$out" .cgroup.headroom_bytes); soft=$(jqv "$out" .cgroup.soft_headroom_bytes)
	rec=$(jqv "$out" .cgroup.reclaimable_bytes)
	echo "# page cache: hard headroom $hard, reclaimable $rec, soft headroom $soft"
	check_ge "cache: reclaimable page cache >= 290 MiB" "$rec" $((290 * MIB))
	check_eq "cache: soft = hard + reclaimable" "$soft" $((hard + rec))
	check "cache: text shows the soft headroom" grep -q "soft headroom .*of reclaimable page cache" <<< "$("$MEMPROBE" limits --cgroup "$cg")"
	# the cgroup unlimited: where MemAvailable bounds the headroom, it
	# counts this cache already, and the soft headroom adds none (it added
	# the cache a second time)
	local lim_file=memory.limit_in_bytes unl=-1 hfrom
	[ "$(cg_version "$cg")" = 2 ] && lim_file=memory.max unl=max
	echo "$unl" > "$cg/$lim_file"
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$TMP/cache-unl.json"
	hfrom=$(jqv "$TMP/cache-unl.json" .cgroup.headroom_from)
	if [ "$hfrom" = MemAvailable ]; then
		check_eq "cache: bound by MemAvailable, the soft headroom is the headroom" \
			"$(jqv "$TMP/cache-unl.json" .cgroup.soft_headroom_bytes)" \
			"$(jqv "$TMP/cache-unl.json" .cgroup.headroom_bytes)"
		check "cache: ... and the text says MemAvailable counts the cache" grep -q \
			"soft headroom .*MemAvailable, which sets it, counts the .* of reclaimable page cache already" \
			<<< "$("$MEMPROBE" report "$TMP/cache-unl.json")"
	else
		skip "cache: unlimited, the headroom is set by $hfrom here, not MemAvailable"
	fi
	echo $((512 * MIB)) > "$cg/$lim_file"
	# a plain process allocates more than the hard headroom: the kernel
	# reclaims the cache, nobody is OOM-killed
	want=$((hard / MIB + 100))
	local a oom0
	oom0=$(oom_kills "$cg")
	a=$(run_in_cgroup "$cg" "$BIN/alloc" "$want")
	# usage holds the cache too: wait for the anonymous memory itself
	local anon i
	for i in $(seq 600); do
		anon=$(awk '/^(total_rss|anon) / {print $2; exit}' "$cg/memory.stat")
		[ "$anon" -ge $(((want - 2) * MIB)) ] && break
		kill -0 "$a" 2>/dev/null || break
		sleep 0.1
	done
	echo "# a plain allocation of $want MiB (hard headroom $((hard / MIB)) MiB): anon $((anon / MIB)) MiB, alive $(kill -0 "$a" 2>/dev/null && echo yes || echo no)"
	check "cache: a plain allocation of hard headroom + 100 MiB survives" kill -0 "$a"
	check_eq "cache: ... no OOM kill" "$(oom_kills "$cg")" "$oom0"
	check_ge "cache: ... and got it all" "$anon" $(((want - 2) * MIB))
	kill -9 "$a"; wait "$a" 2>/dev/null
	# page cache again, then a probe that pushes through it
	run_in_cgroup "$cg" sh -c "cat $d/f > /dev/null" > /dev/null; sleep 1
	run_in_cgroup "$cg" sh -c "dd if=/dev/zero of=$d/g bs=1M count=200 conv=fsync 2>/dev/null" > /dev/null
	sleep 2
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$TMP/cache-l.json"
	hard=$(jqv "$TMP/cache-l.json" .cgroup.headroom_bytes)
	# the counters path (the default on v2): the cache reclaimed is told from
	# memory.stat, no process's row holding it
	"$MEMPROBE" probe --cgroup "$cg" --reclaim-cache --memcg-from counters --format json -o "$out" 2> "$TMP/cache.err"
	echo "# --reclaim-cache: hard headroom $hard, allocated $(jqv "$out" .allocated_bytes), file before $(jqv "$out" .probe.file_before_bytes), at stop $(jqv "$out" .probe.file_at_stop_bytes), reclaimed $(jqv "$out" .probe.cache_reclaimed_bytes)"
	check_eq "cache: --reclaim-cache in the report" "$(jqv "$out" .probe.reclaim_cache)" true
	check_ge "cache: --reclaim-cache allocates more than the hard headroom" "$(jqv "$out" .allocated_bytes)" "$hard"
	check_ge "cache: ... the kernel reclaimed >= 100 MiB of cache" "$(jqv "$out" .probe.cache_reclaimed_bytes)" $((100 * MIB))
	check_eq "cache: ... the workload was not OOM-killed" "$(jqv "$out" '.workload_oom_kills | length')" 0
	check "cache: the text says how much was reclaimed" grep -q "reclaimed by the kernel to make room" <<< "$("$MEMPROBE" report "$out")"
	# the overhead at the peak is explained by the reclaim: the page
	# cache the kernel reclaimed in the probe's context (the workload's,
	# not the probe's cost) within 10% of the cache reclaimed, its anon
	# part (what it had not touched yet) near 0. The vector was the first
	# at the limit, with the reclaim still to come: anon -115 MiB for
	# 113 MiB reclaimed.
	echo "# --reclaim-cache overhead: reclaimed $(jq -c '[.overhead.reclaimed_parts[]? | "\(.category) \(.bytes)"]' "$out"), the probe's $(jq -c '[.overhead.probe_kernel_parts[] | "\(.category) \(.bytes)"]' "$out")"
	check_within "cache: the overhead's reclaimed page cache is the cache reclaimed" \
		"$(jqv "$out" '[.overhead.reclaimed_parts[]? | select(.category == "page_cache") | -.bytes] | add // 0')" \
		"$(jqv "$out" .probe.cache_reclaimed_bytes)" 0.10
	check_eq "cache: ... and none of it is the probe's cost" \
		"$(jqv "$out" '[.overhead.probe_kernel_parts[] | select(.category == "file" or .category == "page_cache") | .bytes] | add // 0')" 0
	check "cache: the overhead's words say the kernel reclaimed the workload's page cache" \
		grep -Eq "^overhead -?[0-9.]+ MiB at the peak: the kernel reclaimed [0-9.]+ MiB of the workload's page cache" \
		<<< "$("$MEMPROBE" report "$out")"
	# a growth near zero has no share: the issue's "unattributed -224.0 KiB
	# (560.0% of the growth)", from this report with its growth as it was
	jq '.attribution.reconciliation.measured_growth_bytes = -40960 |
	    .attribution.reconciliation.unattributed_bytes = -229376' "$out" > "$TMP/cache-zero.json"
	"$MEMPROBE" report "$TMP/cache-zero.json" > "$TMP/cache-zero.txt"
	check "cache: a growth near zero: the unattributed line gives no share" \
		grep -Eq "^  unattributed +-224.0 KiB +\(no share: the growth is under 1 MiB\)$" "$TMP/cache-zero.txt"
	check "cache: ... and no percentage anywhere" bash -c "! grep -q '% of the growth' '$TMP/cache-zero.txt'"
	check_le "cache: ... and its anon part is near 0 (under 8 MiB)" \
		"$(jqv "$out" '[.overhead.probe_kernel_parts[] | select(.category == "anon") | .bytes | fabs] | add // 0 | floor')" $((8 * MIB))
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"; rm -rf "$d"
	check "cache: nothing left behind" no_leftovers
}

# v2: memory.high below memory.max. The probe stops below it by default;
# with --to-limit it is throttled and says so
test_headroom_high() {
	local cg out=$TMP/high.json t0 t1
	cg=$(make_cgroup high $((640 * MIB))) || { fail "high: make cgroup"; return; }
	if [ "$(cg_version "$cg")" != 2 ]; then
		skip "headroom: memory.high: cgroup v1 here (v2 runs in the QEMU guests)"
		remove_cgroup "$cg"; return
	fi
	echo $((320 * MIB)) > "$cg/memory.high"
	echo +memory > "$cg/cgroup.subtree_control"
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$out"
	check_eq "high: throttle_bytes" "$(jqv "$out" .cgroup.throttle_bytes)" $((320 * MIB))
	check_eq "high: throttle_kind" "$(jqv "$out" .cgroup.throttle_kind)" memory.high
	t0=$(date +%s.%N)
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/high.err"
	t1=$(date +%s.%N)
	echo "# memory.high default: peak $(jqv "$out" .usage_peak_bytes), allocated $(jqv "$out" .allocated_bytes), stop_at $(jqv "$out" .probe.stop_at_bytes), reason $(jqv "$out" .probe.stop_reason), $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s"
	check_eq "high: the probe aims below memory.high" "$(jqv "$out" .probe.aim)" throttle
	check_eq "high: stops at memory.high - margin" "$(jqv "$out" .probe.stop_at_bytes)" $((320 * MIB - $(jqv "$out" .probe.margin_bytes)))
	check_eq "high: stopped at the margin, not throttled" "$(jqv "$out" .probe.stop_reason)" margin
	check_le "high: the peak stays below memory.high" "$(jqv "$out" .usage_peak_bytes)" $((320 * MIB))
	check "high: the text says where it aimed" grep -q "^aim        throttle: stop at" <<< "$("$MEMPROBE" report "$out")"
	t0=$(date +%s.%N)
	"$MEMPROBE" probe --cgroup "$cg" --thp never --to-limit --format json -o "$out" 2> "$TMP/high.err"
	t1=$(date +%s.%N)
	echo "# memory.high --to-limit: peak $(jqv "$out" .usage_peak_bytes), allocated $(jqv "$out" .allocated_bytes), reason $(jqv "$out" .probe.stop_reason), high events $(jqv "$out" .probe.throttle_high_events), pressure $(jqv "$out" .probe.throttle_pressure_some_us) us, $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s"
	check_eq "high --to-limit: aims at the limit" "$(jqv "$out" .probe.aim)" limit
	check_eq "high --to-limit: stopped, throttled" "$(jqv "$out" .probe.stop_reason)" throttled
	check_eq "high --to-limit: throttled in the report" "$(jqv "$out" .probe.throttled)" true
	check "high --to-limit: said on stderr" grep -q "throttled at memory.high" "$TMP/high.err"
	check "high --to-limit: the text says THROTTLED" grep -q "THROTTLED at memory.high" <<< "$("$MEMPROBE" report "$out")"
	remove_cgroup "$cg"
	check "high: nothing left behind" no_leftovers
}

# v2: the root can be probed (usage as limits reads it), only with --fill-host
test_headroom_root() {
	local root out=$TMP/root.json
	root=$(own_memcg_dir); while [ "$(stat -c %i "$root")" != 1 ] && [ "$root" != / ]; do root=$(dirname "$root"); done
	if [ "$(cg_version "$root")" != 2 ] || [ "$(own_memcg_dir)" != "$root" ]; then
		skip "headroom: probe of the v2 root: not a v2 host whose tests run in the root"
		return
	fi
	expect_bad "probe of the v2 root without --fill-host" "$MEMPROBE" probe --cgroup "$root"
	"$MEMPROBE" probe --cgroup "$root" --fill-host --margin $(( $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024 - 256 * MIB )) --thp never --format json -o "$out" 2> "$TMP/root.err"
	check_eq "root: the v2 root probed" "$(jqv "$out" .probe.stop_reason)" margin
	check_ge "root: something allocated" "$(jqv "$out" .allocated_bytes)" 1
	check "root: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# A cgroup with no memory limit anywhere on its path is the host: probing it
# fills the host to MemAvailable (a fresh user's record --probe-at of a
# command without --limit filled 19.6 GiB of a 23.5 GiB host). Refused
# without --fill-host, as the root is. Only where this test's own cgroup is
# unlimited all the way up: elsewhere the child would be bounded by it, and
# the run would be a real probe of that limit.
test_fills_host() {
	local own cg from
	own=$(own_memcg_dir)
	from=$("$MEMPROBE" limits --cgroup "$own" --format json | jq -r .cgroup.effective_limit_from)
	if [ "$from" != MemTotal ]; then
		skip "fills host: this test's own cgroup has a limit on its path ($from)"; return
	fi
	cg="$own/memprobe-test-unlimited-$$"
	mkdir "$cg" && CREATED_CGROUPS+=("$cg") && echo "$cg" >> "$TMP/created-cgroups"
	# timeout: should the guard be gone, the probe is stopped (SIGINT) at once
	expect_bad "probe of a cgroup with no limit on its path" \
		timeout -s INT 3 "$MEMPROBE" probe --cgroup "$cg" --format json
	check "fills host: ... says no limit and names --fill-host" \
		grep -q "no memory limit on its path.*--fill-host" "$TMP/bad.err"
	expect_bad "record --probe-at of a command without --limit" \
		timeout -s INT 3 "$MEMPROBE" record --probe-at 0.2 --format json -- sleep 1
	check "fills host: ... names --limit" grep -q "no memory limit on its path.*--limit" "$TMP/bad.err"
	expect_bad "record --probe-at of a cgroup with no limit on its path" \
		timeout -s INT 3 "$MEMPROBE" record --cgroup "$cg" --probe-at 0.2 --duration 1 --format json
	remove_cgroup "$cg"
	check "fills host: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# A report that cannot be written says which file and what to do, in one
# "problem; fix" line, exit 1, for every command that writes one (limits
# and budget said neither file nor fix; report and compare no fix).
test_write_failed() {
	local doc c rc err
	doc="$(dirname "$0")/fixtures/golden/corpus-probe-full.json"
	local fix="No space left on device; free space there, or give -o a file on another filesystem"
	for c in limits "report $doc" "compare $doc $doc" "budget --from $doc"; do
		set -- $c
		err=$("$MEMPROBE" "$@" -o /dev/full 2>&1 >/dev/null); rc=$?
		check_eq "write failed: $1 -o /dev/full exits 1" "$rc" 1
		check_eq "write failed: $1 names the file and a fix" "$err" \
			"memprobe $1: cannot write the report to /dev/full: $fix"
	done
	err=$("$MEMPROBE" limits 2>&1 >/dev/full); rc=$?
	check_eq "write failed: limits > /dev/full exits 1" "$rc" 1
	check_eq "write failed: limits names standard output and a fix" "$err" \
		"memprobe limits: cannot write the report to standard output: No space left on device; free space where standard output goes, or give -o a file on another filesystem"
}

# shellcheck shell=bash
# tests/integration/container.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# ---------------------------------------------------------------------------
# No BPF (issue 22): memprobe as root with CAP_BPF, CAP_PERFMON and
# CAP_SYS_ADMIN out of its bounding set, as a container's root has them. The
# kernel refuses its programs; it says so in one line (never "run as root")
# and attributes from /proc's per-process counters and the cgroup's files.
# Before, the probe's own part of the overhead was minus its allocation
# ("the probe's anon -476.0 MiB") and up to 498 MiB unexplained, budget left
# the page tables out, features said BTF was missing, record named no
# process.
NOBPF=(setpriv --bounding-set -bpf,-perfmon,-sys_admin --inh-caps=-all --)

# nobpf_vmpte PID: the largest VmPTE (bytes) of PID read until it exits
nobpf_vmpte() {
	local max=0 k v _
	while [ -e /proc/"$1"/status ]; do
		while read -r k v _; do
			[ "$k" = VmPTE: ] && [ "$v" -gt "$max" ] && max=$v
		done < /proc/"$1"/status 2>/dev/null
		sleep 0.005
	done
	echo $((max * 1024))
}

test_no_bpf() {
	local f=$TMP/nobpf-features.json out=$TMP/nobpf-probe.json mp child pte=0 alloc want rc
	local pt part cg pid rec=$TMP/nobpf-record.json st=$TMP/nobpf-status rss got
	if ! command -v setpriv > /dev/null; then skip "no BPF: no setpriv here"; return; fi
	"${NOBPF[@]}" "$MEMPROBE" limits --features --format json > "$f" 2> "$TMP/nobpf.err"
	# by the plan, whatever the document says of it: a hook that is no
	# polled file is a BPF program the kernel took
	if [ "$(jqv "$f" '[.plan[] | select(.kind != null and .kind != "poll")] | length')" != 0 ]; then
		skip "no BPF: the kernel loads BPF without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN here"
		return
	fi
	check_eq "no BPF: features: BPF refused" "$(jqv "$f" .bpf)" refused
	check "no BPF: features: ... the BTF is there all the same" [ -n "$(jqv "$f" .btf)" ]
	check "no BPF: features: ... and names the capabilities" \
		grep -q 'CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN' <(jqv "$f" .error)
	"${NOBPF[@]}" "$MEMPROBE" limits --features > "$TMP/nobpf-features.txt" 2>/dev/null
	check "no BPF: features text: the BTF" grep -qx "BTF  *$(jqv "$f" .btf)" "$TMP/nobpf-features.txt"
	check "no BPF: features text: BPF refused" grep -q '^BPF  *refused' "$TMP/nobpf-features.txt"

	# a 512 MiB stand-in, the probe's page tables read beside it
	"${NOBPF[@]}" "$MEMPROBE" probe --limit 512M --thp never --format json -o "$out" 2> "$TMP/nobpf.err" &
	mp=$!
	child=$(wait_filling $mp) && pte=$(nobpf_vmpte "$child")
	wait $mp; rc=$?
	check_eq "no BPF: probe exits 0" "$rc" 0
	check_eq "no BPF: one line on stderr" "$(wc -l < "$TMP/nobpf.err")" 1
	check "no BPF: ... naming the capabilities, and what memprobe does instead" \
		grep -q "CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN, in the host's user namespace.*goes on with /proc" "$TMP/nobpf.err"
	check "no BPF: ... never 'run as root' to root" eval "! grep -q 'run as root' '$TMP/nobpf.err'"
	check_eq "no BPF: the nine fields' formula, exact" "$(jqv "$out" .overhead_bytes)" \
		"$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')"
	check_eq "no BPF: the overhead explained, exactly" \
		"$(jqv "$out" '[.overhead.parts[].bytes] + [.overhead.probe_kernel_bytes, .overhead.reclaimed_bytes // 0, .overhead.unexplained_bytes] | add')" \
		"$(jqv "$out" .overhead_bytes)"
	alloc=$(jqv "$out" .allocated_bytes); want=$((alloc / 512))
	part=$(jqv "$out" '[.overhead.probe_kernel_parts[] | select(.category == "pagetables") | .bytes] | add // 0')
	pt=$(jqv "$out" '[.attribution.processes.top[] | select(.comm == "memprobe-probe") | .pagetables_bytes][0]')
	echo "# no BPF: $("$MEMPROBE" report "$out" | sed -n 3p)"
	echo "# no BPF: probe allocated $alloc: its page tables' growth $part, VmPTE at the stop $pt, read beside it $pte (allocated/512 = $want)"
	check_ge "no BPF: the probe's part is not minus its allocation" "$(jqv "$out" .overhead.probe_kernel_bytes)" 0
	check_ge "no BPF: the probe's page tables are about allocated/512" \
		"$part" "$((want * 95 / 100))"
	check_le "no BPF: the probe's page tables are about allocated/512" \
		"$part" "$((want * 11 / 10 + 65536))"
	check_le "no BPF: the probe's VmPTE as memprobe read it = as read beside it (64 KiB)" \
		"$(( pt > pte ? pt - pte : pte - pt ))" 65536
	check_le "no BPF: unexplained within max(10%, 16 MiB)" "$(jqv "$out" '.overhead.unexplained_bytes | fabs')" \
		"$(jqv "$out" "[(.overhead_bytes / 10 | floor), $((16 * MIB))] | max")"
	check "no BPF: attribution_missing says why, and what would bring it" \
		says_missing "$out" --concern null --category null --reason no_bpf
	check "no BPF: ... and what /proc cannot tell" says_missing "$out" --concern memcg --reason proc
	check_eq "no BPF: pagetables from /proc (v1 has no key)" "$(cat_field "$out" pagetables available)" true
	check_eq "no BPF: the probe's anon row from /proc" \
		"$(jqv "$out" '[.attribution.categories[] | select(.name == "anon") | .tasks[] | select(.comm == "memprobe-probe") | .source][0]')" proc
	check "no BPF: the text names the probe's page tables" \
		eval "'$MEMPROBE' report '$out' | sed -n 3p | grep -q 'the probe.s .*pagetables'"
	# its anon beyond the allocation: its RssAnon's drift (6.1 batches a
	# task's counts, 64 events), a few pages either way; before, minus all
	check_ge "no BPF: the probe's anon part not below -4 MiB" \
		"$(jqv "$out" '[.overhead.probe_kernel_parts[] | select(.category == "anon") | .bytes] | add // 0')" $((-4 * MIB))

	"${NOBPF[@]}" "$MEMPROBE" budget --limit 512M --thp never --format env > "$TMP/nobpf-budget.env" 2>/dev/null
	echo "# no BPF: budget: $(tr '\n' ' ' < "$TMP/nobpf-budget.env")"
	check_ge "no BPF: budget: the probe's page tables in its kernel cost (2 MiB per GiB)" \
		"$(sed -n 's/^MEMPROBE_BUDGET_KERNEL_PER_GIB_BYTES=//p' "$TMP/nobpf-budget.env")" $((MIB * 19 / 10))

	# a growing, bursting workload (the overhead test's benchmark)
	# its anon capped at 1200 MiB: grown to the limit on its own (a slow
	# guest's minutes), it is OOM-killed by its own growth, not the probe's
	cg=$(make_cgroup nobpf-bench $((3 * GIB / 2))) || { fail "no BPF: make cgroup"; return; }
	pid=$(run_in_cgroup "$cg" "$BIN/benchmark" 600 100 50 10 80 300 "$TMP/bench-cache" 1200)
	check_usage "no BPF: the benchmark holds its anon and page cache" "$cg" $((700 * MIB))
	sleep 0.5
	out=$TMP/nobpf-bench.json
	if "${NOBPF[@]}" "$MEMPROBE" probe --cgroup "$cg" --format json -o "$out" 2> "$TMP/nobpf-bench.err"; then
		check_eq "no BPF bench: the nine fields' formula, exact" "$(jqv "$out" .overhead_bytes)" \
			"$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')"
		# without BPF no free hook counts a burst being freed at the peak
		# (anon_unmapped): the bound before that hook, 16 MiB (9.4 MiB
		# seen against 8 on a loaded host)
		overhead_checks "$out" "$pid" bursty 80 16
	else
		fail "no BPF bench: probe exits 0 (got $?: $(shown "$(cat "$TMP/nobpf-bench.err")"))"
	fi
	check "no BPF bench: the benchmark survives" kill -0 "$pid"
	check_eq "no BPF bench: ... no OOM kill in it while probed" "$(jqv "$out" '.workload_oom_kills | length')" 0
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"

	# record -- CMD: its process named, with its own figures
	"${NOBPF[@]}" "$MEMPROBE" record --limit 512M --format json -o "$rec" -- sh -c '
		"$1" 200 & a=$!
		until [ "$(awk "/RssAnon/ { print \$2 }" /proc/$a/status)" -ge 204800 ]; do sleep 0.02; done
		cp /proc/$a/status "$2"; sleep 1; kill $a' sh "$BIN/alloc" "$st" 2>/dev/null
	check_eq "no BPF record: exits 0" "$?" 0
	rss=$(awk '/^RssAnon/ { print $2 * 1024 }' "$st")
	got=$(task_bytes "$rec" anon alloc)
	echo "# no BPF record: alloc's anon $got, RssAnon read beside it $rss; VmPTE $(jqv "$rec" '[.attribution.processes.top[] | select(.comm == "alloc") | .pagetables_bytes][0]') beside $(awk '/^VmPTE/ { print $2 * 1024 }' "$st")"
	check_le "no BPF record: the command's anon within max(2%, 4 MiB) of its RssAnon" \
		"$(( got > rss ? got - rss : rss - got ))" "$(( rss / 50 > 4 * MIB ? rss / 50 : 4 * MIB ))"
	check_eq "no BPF record: ... its row says /proc" \
		"$(jqv "$rec" '[.attribution.categories[] | select(.name == "anon") | .tasks[] | select(.comm == "alloc") | .source][0]')" proc
	check_eq "no BPF record: ... not 'moved out' once it has exited" \
		"$(jqv "$rec" '[.attribution.categories[].tasks[] | select(.comm == "alloc") | .moved_out // false] | any')" false
	check_eq "no BPF record: its cmdline" \
		"$(jqv "$rec" '[.attribution.processes.top[] | select(.comm == "alloc") | .cmdline][0]')" "$BIN/alloc 200"
	# an OOM kill with no hook: the cgroup's oom_kill counter's, named by
	# the command killed (it was in oom_kill_counter_delta alone, no
	# renderer but openmetrics said it)
	"${NOBPF[@]}" "$MEMPROBE" record --limit 128M --format json -o "$rec" -- "$BIN/alloc" 400 \
		> /dev/null 2>&1
	check_eq "no BPF record OOM: exit 137, the command's" "$?" 137
	check_eq "no BPF record OOM: the kill listed, as many as the kernel's counter" \
		"$(jqv "$rec" '"\(.oom_kills | length) \(.oom_kill_counter_delta) \(.run.ended_by)"')" "1 1 oom_kill"
	check_eq "no BPF record OOM: its victim the command" \
		"$(jqv "$rec" '.oom_kills[0] | "\(.comm) \(.pid > 0) \(.limit_bytes) \(.levels | length)"')" "alloc true $((128 * MIB)) 0"
	check "no BPF record OOM: the text says it, and that no hook read the levels" \
		eval '"$MEMPROBE" report "$rec" | grep -A1 "^OOM kill at" | grep -q "not read, no OOM hook"'
	# a kill of the command's child, the command living on: the counter
	# names no victim, and nothing does; its pid, comm and trigger are
	# null (not measured), never 0 (before: pid 0, "(not named)")
	"${NOBPF[@]}" "$MEMPROBE" record --limit 128M --format json -o "$rec" -- \
		sh -c '"$1" 400; exit 0' sh "$BIN/alloc" > /dev/null 2>&1
	check_eq "no BPF record child OOM: exit 0, the command's" "$?" 0
	check_eq "no BPF record child OOM: the kill listed, as many as the kernel's counter" \
		"$(jqv "$rec" '"\(.oom_kills | length) \(.oom_kill_counter_delta) \(.run.ended_by)"')" "1 1 command exited"
	check_eq "no BPF record child OOM: its victim not known: pid, host pid, comm, trigger null" \
		"$(jqv "$rec" '.oom_kills[0] | [.pid, .host_pid, .comm, .trigger_pid] | tostring')" "[null,null,null,null]"
	check_eq "no BPF record child OOM: the text says the victim is not known" \
		"$("$MEMPROBE" report "$rec" | grep "^OOM kill at" | grep -o "victim not known (polled oom_kill counter")" \
		"victim not known (polled oom_kill counter"
	check "no BPF: nothing left behind" no_leftovers
}

# Inside a container: where the brief's team ran their probe. A stand-in:
# a test cgroup, a shell moved into it that unshares cgroup, mount and pid
# namespaces, mounts /proc and the memory hierarchy afresh over a tmpfs on
# /sys/fs/cgroup (v1: the memory controller under it; v2: cgroup2 on it:
# the kernel refuses a mount of one superblock straight on its own root)
# and runs a script as the container's root.
# Unprivileged: the mount read-only and Docker's default capabilities only
# (no CAP_SYS_ADMIN, CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE, CAP_IPC_LOCK,
# CAP_SYS_PTRACE); privileged: the mount writable, every capability. The
# mounts die with the namespace, its processes with its first.
DOCKER_CAPS=+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+net_bind_service,+net_raw,+sys_chroot,+mknod,+audit_write,+setfcap

# in_container CGDIR ro|rw SCRIPT: SCRIPT (bash) runs inside, with MEMPROBE,
# BIN, TMP and D (a directory for its files) in its environment
in_container() {
	local cg=$1 mode=$2 script=$3 mnt caps=-all,$DOCKER_CAPS
	[ "$mode" = rw ] && caps=+all
	if [ "$(cg_version "$cg")" = 1 ]; then
		mnt="mount -t tmpfs tmpfs /sys/fs/cgroup && mkdir /sys/fs/cgroup/memory && mount -t cgroup -o $mode,memory cgroup /sys/fs/cgroup/memory"
	else
		mnt="mount -t tmpfs tmpfs /sys/fs/cgroup && mount -t cgroup2 -o $mode cgroup2 /sys/fs/cgroup"
	fi
	# bash, not sh: the guests' busybox sh runs its own unshare and
	# setpriv applets, which lack --cgroup and --bounding-set
	MEMPROBE=$MEMPROBE BIN=$BIN TMP=$TMP D=$D bash -c 'echo $$ > "$0/cgroup.procs" &&
		exec unshare --cgroup --mount --pid --fork --mount-proc --propagation private \
		bash -c "$1 && exec setpriv --bounding-set $2 --inh-caps -all -- bash -c \"\$0\"" "$3"' \
		"$cg" "$mnt" "$caps" "$script"
}

# The container's own script: a workload that holds most of the limit (450
# of 768 MiB) and grows by 10 MiB/s, with 32 MiB bursts every 300 ms,
# while memprobe runs as a renter would type it; every figure and exit
# status into $D. Sizes kept small: it runs in every QEMU guest too.
CONTAINER_SCRIPT='
cd /tmp
m=/sys/fs/cgroup; [ -e $m/memory/memory.usage_in_bytes ] && m=$m/memory
kernel() { # the kernel s own figures, as the container reads them
	if [ -e "$m/memory.usage_in_bytes" ]; then
		echo "usage $(cat $m/memory.usage_in_bytes) max_usage $(cat $m/memory.max_usage_in_bytes)"
	else
		echo "usage $(cat $m/memory.current) max_usage $(cat $m/memory.peak 2>/dev/null)"
	fi
	grep -E "^(total_)?(rss|cache|anon|file|shmem|pagetables|kernel|slab) " $m/memory.stat | tr "\n" " "; echo
}
"$BIN/benchmark" 400 50 10 10 32 300 "$D/cache" 480 > "$D/bench.out" 2>&1 &
bench=$!
echo $bench > "$D/bench.pid"
for i in $(seq 6000); do grep -q ready "$D/bench.out" && break; sleep 0.01; done
grep -q ready "$D/bench.out" || exit 1
"$MEMPROBE" limits --format json > "$D/limits.json" 2> "$D/limits.err"; echo $? > "$D/limits.rc"
"$MEMPROBE" limits --cgroup / --format json > "$D/limits-root.json" 2>> "$D/limits.err"; echo $? >> "$D/limits.rc"
"$MEMPROBE" limits --pid $bench --format json > "$D/limits-pid.json" 2>> "$D/limits.err"; echo $? >> "$D/limits.rc"
kernel > "$D/kernel-before.txt"
"$MEMPROBE" probe --format json -o "$D/probe.json" 2> "$D/probe.err"; echo $? > "$D/probe.rc"
kernel > "$D/kernel-probe.txt"
"$MEMPROBE" budget --format env -o "$D/budget.env" 2> "$D/budget.err"; echo $? > "$D/budget.rc"
kernel > "$D/kernel-budget.txt"
"$MEMPROBE" record --duration 300 --format json -o "$D/record.json" -- \
	bash "$D/cmd.sh" "$BIN/alloc" 2> "$D/record.err"; echo $? > "$D/record.rc"
kernel > "$D/kernel-record.txt"
kill -0 $bench && echo alive > "$D/bench.alive"
'

# The figures a test shows beside the kernel's own
container_figures() {
	local d=$1 what=$2
	echo "# $what: probe $(jq -c '{cgroup_limit_bytes, usage_before_bytes, allocated_bytes, usage_peak_bytes, usage_after_bytes, overhead_bytes, probe_chunks}' "$d/probe.json" 2>/dev/null)"
	echo "# $what: probe text: $(sed -n 3p "$d/probe.txt" 2>/dev/null)"
	echo "# $what: kernel before the probe: $(tr '\n' ' ' < "$d/kernel-before.txt" 2>/dev/null)"
	echo "# $what: kernel after the probe: $(tr '\n' ' ' < "$d/kernel-probe.txt" 2>/dev/null)"
	echo "# $what: budget: $(grep -E '^MEMPROBE_BUDGET_(BYTES|KERNEL_PER_GIB_BYTES|WORKLOAD_OVERHEAD_BYTES)=' "$d/budget.env" 2>/dev/null | tr '\n' ' ')"
	echo "# $what: record: $(jq -c '{run: .run | {in_place, command_pids, ended_by}, peak: .peak.usage_bytes, anon_tasks: [.attribution.categories[]? | select(.name == "anon") | .tasks[] | [.pid, .comm, .bytes]]}' "$d/record.json" 2>/dev/null)"
	echo "# $what: kernel after the record: $(tr '\n' ' ' < "$d/kernel-record.txt" 2>/dev/null)"
}

test_container() {
	local cg D=$TMP/container lim=$((768 * MIB)) mounts0 out m v
	mkdir -p "$D"
	# record's command: two processes holding 32 and 16 MiB, ended once
	# both hold it (a state, not a time: a TCG guest touches slowly) and
	# the sampler has had half a second (five samples) to see it
	cat > "$D/cmd.sh" <<-'CMD'
		"$1" 32 & a=$!
		"$1" 16 & b=$!
		rss() { awk '/^VmRSS:/ { print $2 }' /proc/$1/status; }
		until [ "$(rss $a)" -ge 32768 ] && [ "$(rss $b)" -ge 16384 ]; do sleep 0.05; done
		sleep 0.5
		kill $a $b
		wait
	CMD
	cg=$(make_cgroup container $lim) || { fail "container: make cgroup"; return; }
	v=$(cg_version "$cg")
	mounts0=$(wc -l < /proc/self/mountinfo)
	in_container "$cg" ro "$CONTAINER_SCRIPT"
	check_eq "container v$v: limits, limits --cgroup /, limits --pid exit 0 inside" "$(tr '\n' ' ' < "$D/limits.rc")" "0 0 0 "
	m=$([ "$v" = 1 ] && echo /sys/fs/cgroup/memory || echo /sys/fs/cgroup)
	check_eq "container v$v: memprobe's cgroup is the namespace's root, the mount seen" \
		"$(jq -r '.cgroup | "\(.path) \(.dir) \(.effective_limit_bytes)"' "$D/limits.json")" "/ $m $lim"
	check_eq "container v$v: --cgroup / is the same cgroup" "$(jq -r '.cgroup | "\(.path) \(.dir)"' "$D/limits-root.json")" "/ $m"
	check_eq "container v$v: --pid of the workload finds it" "$(jq -r '.cgroup | "\(.path) \(.dir)"' "$D/limits-pid.json")" "/ $m"
	out=$D/probe.json
	check_eq "container v$v: probe with no target exits 0 ($(head -c 300 "$D/probe.err" | tr '\n' ' '))" "$(cat "$D/probe.rc")" 0
	check "container v$v: it says it probes the container's own cgroup" grep -q "probing the container's own cgroup" "$D/probe.err"
	check_eq "container v$v: the target is memprobe's own cgroup, chosen and said so" \
		"$(jq -r '.target | "\(.path) \(.dir) \(.created_by_memprobe) \(has("chosen_why"))"' "$out")" "/ $m false true"
	check_eq "container v$v: the probe filled it from inside: the cgroup filesystem is read-only" \
		"$(jq -r '.probe | "\(.in_target) \(.in_target_reason) \(.cgroup)"' "$out")" "true read_only $m"
	check_eq "container v$v: the nine fields, named as in the brief" "$(jq -c '[keys_unsorted[5:14][]]' "$out")" '["cgroup_limit_bytes","usage_before_bytes","allocated_bytes","allocated_gib","usage_peak_bytes","usage_after_bytes","overhead_bytes","overhead_gib","probe_chunks"]'
	check_eq "container v$v: overhead = peak - before - allocated, exactly" \
		"$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')" "$(jqv "$out" .overhead_bytes)"
	check_eq "container v$v: cgroup_limit_bytes is the container's limit" "$(jqv "$out" .cgroup_limit_bytes)" $lim
	check_eq "container v$v: stopped at the margin, not killed" \
		"$(jqv "$out" '"\(.probe.stop_reason) \(.interrupted) \(.probe_oom_killed)"')" "margin false false"
	check_le "container v$v: usage_before + allocated <= limit - margin" \
		"$(jqv "$out" '.usage_before_bytes + .allocated_bytes')" "$(jqv "$out" '.cgroup_limit_bytes - .probe.margin_bytes')"
	check_ge "container v$v: it filled at least half the room it had at the go" \
		"$(jqv "$out" '.allocated_bytes * 2')" "$(jqv "$out" '.probe.stop_at_bytes - .probe.usage_at_go_bytes')"
	check_le "container v$v: the peak stayed under the limit" "$(jqv "$out" .usage_peak_bytes)" $lim
	check_eq "container v$v: the workload survived, never OOM-killed" "$(cat "$D/bench.alive" 2>/dev/null)" alive
	if [ "$v" = 1 ]; then
		check_eq "container v1: the cgroup's oom_kill counter stayed 0" "$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control")" 0
	else
		check_eq "container v2: the cgroup's oom_kill counter stayed 0" "$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")" 0
	fi
	check_eq "container v$v: the overhead object explains overhead_bytes exactly" \
		"$(jqv "$out" '[.overhead.parts[].bytes] + [.overhead.probe_kernel_bytes, .overhead.reclaimed_bytes // 0, .overhead.unexplained_bytes] | add')" "$(jqv "$out" .overhead_bytes)"
	# without BPF: per-process figures from /proc (issue #22, item 3). The
	# vector is /proc's, read when the poller saw the new high; the
	# workload's 32 MiB burst (held 150 ms of every 300) can come or go
	# between the kernel's peak and that read, which no snapshot can see
	# (18.6 MiB once in 7 runs on 2 loaded cores): the burst is the bound
	check_le "container v$v: unexplained within max(10%, the 32 MiB burst + 1 MiB)" \
		"$(jqv "$out" '.overhead.unexplained_bytes | fabs')" "$(jqv "$out" "[(.overhead_bytes | fabs) / 10 | floor, $((33 * MIB))] | max")"
	"$MEMPROBE" report "$out" > "$D/probe.txt"
	check "container v$v: the text says where the probe ran and why" grep -q "in the target itself, without a limit of its own (the kernel enforces none; the bounds are checked before each chunk): cannot create" "$D/probe.txt"
	# budget
	check_eq "container v$v: budget --format env exits 0 ($(head -c 300 "$D/budget.err" | tr '\n' ' '))" "$(cat "$D/budget.rc")" 0
	check_gt "container v$v: budget --format env gives a budget" \
		"$(. "$D/budget.env" && echo "${MEMPROBE_BUDGET_BYTES:-0}")" 0
	check_lt "container v$v: ... below the limit" \
		"$(. "$D/budget.env" && echo "${MEMPROBE_BUDGET_BYTES:-}")" "$lim"
	check_gt "container v$v: the budget has the probe's page tables in it" \
		"$(. "$D/budget.env" && echo "${MEMPROBE_BUDGET_KERNEL_PER_GIB_BYTES:-0}")" 0
	# record -- CMD, in place
	out=$D/record.json
	check_eq "container v$v: record -- CMD runs it in place, until it exits ($(tail -c 600 "$D/record.err" | tr '\n' ' '))" \
		"$(cat "$D/record.rc") $(jqv "$out" '"\(.run.in_place) \(.run.ended_by) \(.target.path) \(.target.created_by_memprobe)"')" "0 true command exited / false"
	check_ge "container v$v: its process tree: the shell and its two allocs" "$(jqv "$out" '.run.command_pids | length')" 3
	# above the lowest sample: the workload's 32 MiB bursts come and go
	check_ge "container v$v: the peak holds the command's 48 MiB" \
		"$(jqv "$out" '.peak.usage_bytes - ([.timeline[].usage_bytes] | min)')" $((45 * MIB))
	check_ne "container v$v: the anon's top tasks name the command's processes" \
		"$(jqv "$out" '.run.command_pids as $c | [.attribution.categories[]? | select(.name == "anon") | .tasks[] | select(.pid != null and (.pid as $p | $c | any(. == $p)))] | length')" 0
	check "container v$v: the record's text says it ran in place" eval '"$MEMPROBE" report "$D/record.json" | grep -q "^in place: cannot create"'
	container_figures "$D" "container v$v"
	check_empty "container v$v: nothing left in the cgroup" "$(find "$cg" -mindepth 1 -type d)"
	remove_cgroup "$cg"
	check_eq "container v$v: the mounts died with the namespace" "$(wc -l < /proc/self/mountinfo)" "$mounts0"
	check "container v$v: nothing left behind" no_leftovers
	rm -rf "$D"
}

# A second memory mount stacked on the first at one mount point, in a
# cgroup namespace: every command reads the one the path shows (mountinfo
# lists the hidden one first). Over a tmpfs: the kernel refuses a mount of
# one superblock straight on its own root (EBUSY). BPF allowed: a cgroup
# namespace alone.
test_stacked_mount() {
	local cg D=$TMP/stacked lim=$((256 * MIB)) m v out
	mkdir -p "$D"
	cg=$(make_cgroup stacked $lim) || { fail "stacked: make cgroup"; return; }
	v=$(cg_version "$cg")
	if [ "$v" = 1 ]; then
		m=/sys/fs/cgroup/memory
		mnt="mount -t tmpfs tmpfs /sys/fs/cgroup && mkdir $m && mount -t cgroup -o memory none $m"
	else
		m=/sys/fs/cgroup; mnt="mount -t tmpfs tmpfs $m && mount -t cgroup2 none $m"
	fi
	MEMPROBE=$MEMPROBE D=$D bash -c 'echo $$ > "$0/cgroup.procs" &&
		exec unshare -C -m --propagation private bash -c "$1 &&
			\"\$MEMPROBE\" limits --format json > \"\$D/limits.json\" 2> \"\$D/err\";
			\"\$MEMPROBE\" probe --cgroup / --thp never --format json -o \"\$D/probe.json\" 2>> \"\$D/err\";
			echo \$? > \"\$D/probe.rc\"; cat /proc/self/mountinfo > \"\$D/mounts\""' "$cg" "$mnt"
	echo "# stacked v$v: $(awk -v m="$m" '$5 == m' "$D/mounts" | tr '\n' '|')"
	check_ge "stacked v$v: the mount point holds two memory mounts" \
		"$(awk -v m="$m" '$5 == m && / - cgroup2? /' "$D/mounts" | wc -l)" 2
	check_eq "stacked v$v: limits reads the visible one ($(head -c 300 "$D/err" | tr '\n' ' '))" \
		"$(jq -r '.cgroup | "\(.path) \(.dir) \(.effective_limit_bytes)"' "$D/limits.json" 2>/dev/null)" "/ $m $lim"
	out=$D/probe.json
	check_eq "stacked v$v: probe --cgroup / exits 0" "$(cat "$D/probe.rc")" 0
	check_eq "stacked v$v: ... of the namespace's root, the test cgroup" \
		"$(jq -r '"\(.target.path) \(.target.dir) \(.cgroup_limit_bytes)"' "$out")" "/ $m $lim"
	check_ge "stacked v$v: attribution works" "$(jqv "$out" .attribution.reconciliation.attributed_bytes)" $((100 * MIB))
	check_eq "stacked v$v: the probe's fill is its own, by name and pid" "$(top_task "$out" anon comm)" memprobe-probe
	check_eq "stacked v$v: ... not the workload's overhead" \
		"$(jqv "$out" '.allocated_bytes as $a | [.overhead.parts[] | select(.comm == "memprobe-probe" or (.category == "anon" and .bytes > $a / 2))] | length')" 0
	remove_cgroup "$cg"
	check "stacked v$v: nothing left behind" no_leftovers
	rm -rf "$D"
}

# A cgroup memprobe runs below (in its child "sub") and may make children
# in, but whose cgroup.procs it may not write (a namespace's root the host
# owns): on v2 the probe cannot move from sub to a cgroup of its own (the
# common ancestor's cgroup.procs decides), so it fills the target from
# where it is (before: "the probe process could not join", exit 1); v1
# asks the destination alone, and the probe has its own cgroup as ever.
test_in_place_permission() {
	local cg out=$TMP/in-place.json rc want
	cg=$(make_cgroup in-place $((128 * MIB))) || { fail "in place: make cgroup"; return; }
	want="true no_permission margin"
	[ "$(cg_version "$cg")" = 1 ] && want="false null margin"
	[ "$(cg_version "$cg")" = 2 ] && echo +memory > "$cg/cgroup.subtree_control"
	mkdir "$cg/sub"
	chown 65534 "$cg/cgroup.procs"
	bash -c 'echo $$ > "$0/sub/cgroup.procs" && exec setpriv --bounding-set -dac_override,-dac_read_search \
		--inh-caps -all -- "$1" probe --cgroup "$0" --thp never --format json -o "$2"' \
		"$cg" "$MEMPROBE" "$out" 2> "$TMP/in-place.err"
	rc=$?
	check_eq "in place: exits 0 ($(head -c 300 "$TMP/in-place.err" | tr '\n' ' '))" $rc 0
	check_eq "in place: v$(cg_version "$cg"): a cgroup of its own where the probe may move there (v1), the target itself where not (v2)" \
		"$(jqv "$out" '"\(.probe.in_target) \(.probe.in_target_reason) \(.probe.stop_reason)"')" "$want"
	check_eq "in place: overhead = peak - before - allocated, exactly" \
		"$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')" "$(jqv "$out" .overhead_bytes)"
	check_empty "in place: no cgroup left in it" "$(find "$cg" -mindepth 1 -type d ! -name sub)"
	remove_cgroup "$cg"
	check "in place: nothing left behind" no_leftovers
}

# A privileged container: BPF allowed, cgroup, mount and pid namespaces,
# the hierarchy mounted afresh and writable. The report names processes by
# the pids the container sees, the host's beside them.
PRIVILEGED_SCRIPT='
"$BIN/benchmark" 150 0 3 10 0 300 "$D/cache" 300 > "$D/bench.out" 2>&1 &
echo $! > "$D/bench.pid"
for i in $(seq 6000); do grep -q ready "$D/bench.out" && break; sleep 0.01; done
"$MEMPROBE" probe --cgroup / --format json -o "$D/probe.json" 2> "$D/probe.err"; echo $? > "$D/probe.rc"
"$MEMPROBE" budget --format env -o "$D/budget.env" 2> "$D/budget.err"; echo $? > "$D/budget.rc"
'

test_privileged_container() {
	local cg D=$TMP/privileged lim=$((512 * MIB)) out nspid hostpid= p want
	mkdir -p "$D"
	cg=$(make_cgroup privileged $lim) || { fail "privileged: make cgroup"; return; }
	in_container "$cg" rw "$PRIVILEGED_SCRIPT" &
	p=$!
	# the workload's host pid, from outside, once it is ready
	for i in $(seq 6000); do grep -q ready "$D/bench.out" 2>/dev/null && break; sleep 0.01; done
	for hostpid in $(cat "$cg/cgroup.procs"); do
		[ "$(cat /proc/$hostpid/comm 2>/dev/null)" = benchmark ] && break
	done
	wait $p
	nspid=$(cat "$D/bench.pid")
	out=$D/probe.json
	echo "# privileged: benchmark pid $nspid in the container, $hostpid on the host; anon tasks $(jq -c '[.attribution.categories[] | select(.name == "anon") | .tasks[] | [.pid, .host_pid, .comm, .bytes]]' "$out")"
	check_eq "privileged: probe --cgroup / exits 0 ($(head -c 300 "$D/probe.err" | tr '\n' ' '))" "$(cat "$D/probe.rc")" 0
	check "privileged: the workload's pids differ in and out" [ -n "$nspid" ]
	check "privileged: the workload's pids differ in and out" [ -n "$hostpid" ]
	check_ne "privileged: the workload's pids differ in and out" "$nspid" "$hostpid"
	check_eq "privileged: the workload's anon is named by its container pid, the host's beside" \
		"$(jqv "$out" '[.attribution.categories[] | select(.name == "anon") | .tasks[] | select(.comm == "benchmark") | "\(.pid) \(.host_pid)"][0]')" "$nspid $hostpid"
	check_eq "privileged: ... and so in the overhead's parts" \
		"$(jqv "$out" '[.overhead.parts[] | select(.comm == "benchmark") | "\(.pid) \(.host_pid)"] | unique | join(",")')" "$nspid $hostpid"
	check_eq "privileged: the probe's fill is found by its pid: its own, not the workload's" \
		"$(jqv "$out" '.allocated_bytes as $a | "\(.attribution.page_faults.probe > 0) \([.overhead.parts[] | select(.comm == "memprobe-probe" or (.category == "anon" and .bytes > $a / 2))] | length)"')" "true 0"
	check_eq "privileged: overhead = peak - before - allocated, exactly" \
		"$(jqv "$out" '.usage_peak_bytes - .usage_before_bytes - .allocated_bytes')" "$(jqv "$out" .overhead_bytes)"
	check_le "privileged: unexplained within max(10%, 16 MiB)" \
		"$(jqv "$out" '.overhead.unexplained_bytes | fabs')" "$(jqv "$out" "[(.overhead_bytes | fabs) / 10 | floor, $((16 * MIB))] | max")"
	# with no target, the brief's command: the container's own cgroup,
	# writable here ("--limit 1G: above the effective limit ...", exit 2)
	check_eq "privileged: budget --format env (no target) exits 0 ($(head -c 300 "$D/budget.err" | tr '\n' ' '))" \
		"$(cat "$D/budget.rc")" 0
	check_gt "privileged: ... gives a budget" \
		"$(. "$D/budget.env" && echo "${MEMPROBE_BUDGET_BYTES:-0}")" 0
	check_gt "privileged: ... with the probe's page tables" \
		"$(. "$D/budget.env" && echo "${MEMPROBE_BUDGET_KERNEL_PER_GIB_BYTES:-0}")" 0
	check_eq "privileged: ... of the container's own cgroup, said so" \
		"$(grep -c "probing the container's own cgroup .* limit 512.0 MiB" "$D/budget.err")" 1
	check_eq "privileged: ... its limit the container's" \
		"$(sed -n 's/^MEMPROBE_BUDGET_EFFECTIVE_LIMIT_BYTES=//p' "$D/budget.env")" $lim
	"$MEMPROBE" report "$out" > "$D/probe.txt"
	check "privileged: the text shows the host's pid beside" grep -q "benchmark\[$nspid, host $hostpid\]" "$D/probe.txt"
	# ... in the kernel paths' lines too (they said "by memprobe-probe[129]")
	want=$(jq -r '[.attribution.kernel_paths[].top_stacks[0] | select(.host_pid != null and .host_pid != .pid) | "by \(.comm)[\(.pid), host \(.host_pid)]"] | unique | .[]' "$out")
	check "privileged: a kernel path's process has a host pid beside in the document" [ -n "$want" ]
	check_eq "privileged: ... and so in the text's kernel paths" \
		"$(printf '%s\n' "$want" | while read -r w; do grep -qF "$w" "$D/probe.txt" || echo "missing: $w"; done)" ""
	check_empty "privileged: nothing left in the cgroup" "$(find "$cg" -mindepth 1 -type d)"
	remove_cgroup "$cg"
	check "privileged: nothing left behind" no_leftovers
	rm -rf "$D"
}

# memprobe inside what it records, BPF refused: its own memory is its
# buffers; the line spoke of "BPF maps" no run had loaded
test_self_no_bpf() {
	local cg out=$TMP/self-nobpf.json err=$TMP/self-nobpf.err rc
	if ! command -v setpriv > /dev/null; then skip "self, no BPF: no setpriv here"; return; fi
	cg=$(make_cgroup self-nobpf $((256 * MIB))) || { fail "self, no BPF: make cgroup"; return; }
	bash -c 'echo $$ > "$0/cgroup.procs" && exec "${@:3}" "$1" record --cgroup "$0" --duration 1 \
		--format json -o "$2"' "$cg" "$MEMPROBE" "$out" "${NOBPF[@]}" 2> "$err"; rc=$?
	check_eq "self, no BPF: record exits 0 ($(head -c 300 "$err" | tr '\n' ' '))" "$rc" 0
	check_eq "self, no BPF: its own memory is its buffers, no BPF maps" \
		"$(grep -c "memprobe itself runs in $cg: its own memory (buffers; no BPF maps: none were loaded) is charged to what it measures" "$err"):$(grep -c "BPF maps, buffers" "$err")" "1:0"
	remove_cgroup "$cg"
	check "self, no BPF: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# memprobe as a container's entrypoint is pid 1 of its pid namespace. The
# probe child took "my parent is pid 1" for "memprobe is gone" and exited
# before joining its cgroup: "the probe process could not join", exit 1.
test_probe_pid1() {
	local out=$TMP/pid1.json rc
	unshare --pid --fork --mount-proc "$MEMPROBE" probe --limit 256M --thp never \
		--format json -o "$out" 2> "$TMP/pid1.err"
	rc=$?
	check_eq "pid 1: probe exits 0 (stderr: $(shown "$(tail -1 "$TMP/pid1.err")"))" "$rc" 0
	check_gt "pid 1: the probe allocated" "$(jqv "$out" .allocated_bytes 2>/dev/null)" $((128 * MIB))
	check "pid 1: nothing left behind" no_leftovers
}

# A probe held by a memprobe in another pid namespace (a container's
# first process: pid 1 there): the refusal named "pid 1", the host's init.
# The holder is stopped while it holds the lock, so the second probe
# meets it whatever the machine's speed.
test_lock_pidns() {
	local cg lock pid holder="" i rc
	cg=$(make_cgroup lockns $((256 * MIB))) || { fail "lock pidns: make cgroup"; return; }
	lock=$(printf '/run/memprobe/probe-%x-%x.lock' $(stat -c '%d %i' "$cg"))
	unshare --pid --fork --mount-proc "$MEMPROBE" probe --cgroup "$cg" --chunk 8M \
		--thp never -o /dev/null 2>/dev/null &
	pid=$!
	for i in $(seq 6000); do
		read -r holder _ 2>/dev/null < "$lock"
		[ -n "$holder" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	# memprobe is unshare's child, pid 1 in its namespace
	local mp; mp=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null | awk '{print $1}')
	[ -n "$mp" ] && kill -STOP "$mp"
	check_eq "lock pidns: the holder wrote its own namespace's pid" "$holder" 1
	"$MEMPROBE" probe --cgroup "$cg" -o /dev/null 2> "$TMP/lockns.err"; rc=$?
	[ -n "$mp" ] && kill -CONT "$mp"
	check_eq "lock pidns: a second probe of the cgroup exits 1" "$rc" 1
	check_eq "lock pidns: ... and says the pid is another namespace's" "$(cat "$TMP/lockns.err")" \
		"memprobe probe: a memprobe (pid 1 in another pid namespace) is probing $cg already; wait for it to finish"
	wait "$pid"
	remove_cgroup "$cg"
	check "lock pidns: nothing left behind" no_leftovers
}

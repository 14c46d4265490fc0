# shellcheck shell=bash
# tests/integration/truth.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# What test_record_daemon started (outside the test cgroups), killed by pid
DAEMON_PIDS=()
daemon_cleanup() {
	local p
	for p in "${DAEMON_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	DAEMON_PIDS=()
}

# ---------------------------------------------------------------------------
# Truth: memprobe's figures against the kernel's own counters, at the peak
# sample of a recording (both read within the same instant): every category
# the kernel itemises for the cgroup (memory.stat on v2; anon, file, shmem
# and memory.kmem.usage_in_bytes on v1) agrees within max(2%, 1 MiB); one
# this kernel does not keep per memcg must be named in attribution_missing.

# says_polled FILE CATEGORY: the report says why CATEGORY comes from
# memory.stat: the memcg concern has no BPF hook, or its hook cannot count
# this category (reason clone or rounded)
says_polled() {
	says_missing "$1" --concern memcg --reason polled ||
		says_missing "$1" --concern memcg --category "$2"
}

truth_check() {
	local what=$1 out=$2 key kdelta bpf avail tol n=0 bad=""
	# a file, not process substitution: a guest's initramfs has no /dev/fd
	jq -r '.timeline[0].stat as $s0 | .peak.sample as $p |
		([.attribution.categories[] | {key: .name, value: .available}] | from_entries) as $av |
		([.attribution.categories[] | {key: .name, value: (.source // "bpf")}] | from_entries) as $src |
		$p.stat | to_entries[] | .key as $k |
		"\(.key) \(.value - ($s0[.key] // 0)) \($p.bpf_growth[.key] // 0) \(if $av | has($k) then $av[$k] else true end) \($src[.key] // "bpf")"' "$out" > "$TMP/truth.rows"
	while read -r key kdelta bpf avail src; do
		[ -n "$key" ] || continue
		if [ "$avail" = false ]; then
			says_missing "$out" --category "$key" || bad="$bad $key(unavailable, not said)"
			continue
		fi
		# no hook sees it on this kernel: the report must say it took memory.stat's
		if [ "$src" = memory.stat ]; then
			echo "# truth $what: $key from memory.stat (no hook sees it here)"
			says_polled "$out" "$key" || bad="$bad $key(polled, not said)"
			continue
		fi
		tol=$(( ${kdelta#-} / 50 > MIB ? ${kdelta#-} / 50 : MIB ))
		d=$(( kdelta - bpf )); d=${d#-}
		n=$((n + 1))
		echo "# truth $what: $key kernel $kdelta memprobe $bpf"
		[ "$d" -le "$tol" ] || bad="$bad $key(kernel $kdelta, memprobe $bpf)"
	done < "$TMP/truth.rows"
	check_empty "truth $what: every itemised category agrees with the kernel's ($n compared)" "$bad"
	check_gt "truth $what: itemised categories compared with the kernel's" "$n" 0
}

test_truth() {
	local out sock mnt=$TMP/truth-tmpfs
	mkdir -p "$mnt" && mount -t tmpfs -o size=400m memprobe-test "$mnt" || { fail "truth: mount tmpfs"; return; }
	out=$TMP/truth-anon.json
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/alloc" 256 2>/dev/null &
	local pid=$!; sleep 3; kill -INT $pid; wait $pid
	truth_check "anon (256 MiB touched)" "$out"
	out=$TMP/truth-sparse.json
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/sparse" 64 2 2>/dev/null
	truth_check "sparse 64 GiB" "$out"
	out=$TMP/truth-threads.json
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/threads" 1000 2 2>/dev/null
	truth_check "1000 threads" "$out"
	out=$TMP/truth-files.json
	"$MEMPROBE" record --limit 1G --memcg-from tracepoint --format json -o "$out" -- "$BIN/files" "$mnt" 100000 2 2>/dev/null
	truth_check "100000 files in tmpfs" "$out"
	find "$mnt" -type f -delete
	out=$TMP/truth-shmem.json
	"$MEMPROBE" record --limit 1G --memcg-from tracepoint --format json -o "$out" -- sh -c "dd if=/dev/zero of=$mnt/big bs=1M count=256 2>/dev/null; sleep 2" 2>/dev/null
	truth_check "256 MiB tmpfs file" "$out"
	check_within "truth: the tmpfs file is shmem, 256 MiB within 10%" "$(jqv "$out" '.peak.sample.bpf_growth.shmem')" $((256 * MIB)) 0.10
	rm -f "$mnt/big"
	umount "$mnt"
	out=$TMP/truth-tcp.json
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/tcp" 16 256 2 > "$TMP/tcp.sent" 2>/dev/null
	truth_check "16 TCP connections, data unread" "$out"
	if [ "$(cg_version "$(own_memcg_dir)")" = 2 ]; then
		if [ "$(cat_field "$out" sock source)" = memory.stat ]; then
			# no hook sees sock here (5.10): the figure is the kernel's own
			# (5.10 charged 4980736 for 4194304 queued: skb truesize)
			sock=$(jqv "$out" '.peak.sample.stat.sock - .timeline[0].stat.sock')
			echo "# sock: queued $(head -1 "$TMP/tcp.sent") bytes, memory.stat $sock (no hook sees sock here)"
			check "truth: sock taken from memory.stat, and the report says why" says_polled "$out" sock
		else
			# the median over the samples with the sockets open: the plateau,
			# where the peak can catch data in flight on both ends (6.12:
			# 5455872 at the peak, 4390912 settled, for 4194304 queued) and the
			# last sample the teardown (6.1: 1978368)
			sock=$(jqv "$out" '.timeline[0].stat.sock as $s0 | [.timeline[] | select(.stat.sock > $s0) | .bpf_growth.sock] | sort | if length > 0 then .[length / 2 | floor] else 0 end')
			echo "# sock: queued $(head -1 "$TMP/tcp.sent") bytes, memprobe $sock (median of the samples with the sockets open)"
			check_within "truth: sock grows by the queued bytes within 10%" "$sock" "$(head -1 "$TMP/tcp.sent")" 0.10
		fi
	else
		skip "truth: sock grows by the queued bytes: cgroup v1's memory.stat keeps no sock"
	fi
	check "truth: nothing left behind" no_leftovers
}

# slab_churn_check WHAT FILE KERNEL_TOO [PAST]: the slab categories of a record
# against the cgroup's own counters read in the same samples: v1 keeps no
# slab key, so its whole kernel charge (memory.kmem.usage_in_bytes, "kernel"
# in the samples' stat) less what it holds charged that no object holds
# (objcg_reserve_bytes: the objcgs' nr_charged_bytes, which since 6.16 kept
# up to 10 MiB of a socket churn's freed bytes charged); v2 its memory.stat
# slab keys. Both over the same span: from the first sample that has every
# figure (z) to the peak sample and to the last (each reads its stat and its
# BPF figures together; BPF's own start is a moment earlier, and a churning
# cgroup moved 1.6 MiB in it). A cgroup the record made starts with no
# reserve, so z is the first sample; one with a PAST (1) has a reserve
# unknown until its first update: z is the first sample that read it. Slab's change there is within max(2%, 1 MiB)
# of the kernel's (on v1 only when KERNEL_TOO is 1: when slab is what the
# workload's kernel memory is made of); at every sample it is no lower than
# minus what the cgroup held at the start, less the report's bounds (its
# own and the skipped runs') and 1 MiB; the report marks neither slab
# category below_floor. On v1 each sample's kernel reading less BPF's
# kernel growth (exact pages) is what the cgroup held at BPF's start, but
# the two are read a moment apart, and a churn charged 1 MiB in one here.
slab_churn_check() {
	local what=$1 out=$2 kernel_too=$3 past=${4:-0} v key peak end floor bound tol n pk_k end_k low z sl
	sl='(.bpf_growth | .slab_reclaimable + .slab_unreclaimable)'
	v=$(cg_version "$(own_memcg_dir)")
	z='.timeline[0]'
	if [ "$v" = 1 ]; then key='(.stat.kernel - (.objcg_reserve_bytes // 0))'
		low='.stat.kernel - .bpf_growth.kernel + .bpf_growth.slab_reclaimable + .bpf_growth.slab_unreclaimable'
		[ "$past" = 1 ] && z='([.timeline[] | select(has("objcg_reserve_bytes"))] + [.timeline[0]])[0]'
	else key='(.stat.slab_reclaimable + .stat.slab_unreclaimable)'
		low='.bpf_growth.slab_reclaimable + .bpf_growth.slab_unreclaimable'
	fi
	if [ "$(jqv "$out" '.timeline[-1] | has("bpf_growth")')" != true ]; then
		skip "slab churn $what: no memcg BPF hook on this kernel (no bpf_growth)"; return
	fi
	# the attribution's vector is taken after the peak sample's reading, a
	# moment later (in a loaded guest, after 5000 pipes were closed)
	peak=$(jqv "$out" "(.peak.sample | $sl) - ($z | $sl)")
	bound=$(jqv "$out" '([.attribution.categories[] | select(.name | startswith("slab_")) | .bound_bytes // 0] | add) + .attribution.events_lost.recursion_miss_bound_bytes')
	pk_k=$(jqv "$out" "(.peak.sample | $key) - ($z | $key)")
	end=$(jqv "$out" "(.timeline[-1] | $sl) - ($z | $sl)")
	end_k=$(jqv "$out" "(.timeline[-1] | $key) - ($z | $key)")
	# v1: slab + what the cgroup held at the start >= 0; v2: slab >= -slab at the first sample
	if [ "$v" = 1 ]; then floor=0; else floor=$(jqv "$out" "-(.timeline[0] | $key)"); fi
	n=$(jqv "$out" "[.timeline[] | $low] | min")
	echo "# slab churn $what (v$v): slab at the peak $peak, kernel's $pk_k; at the end $end, kernel's $end_k; lowest ($low) $n, floor $floor, bounds $bound"
	if [ "$v" = 2 ] || [ "$kernel_too" = 1 ]; then
		tol=$(( ${pk_k#-} / 50 > MIB ? ${pk_k#-} / 50 : MIB ))
		check_le "slab churn $what: slab at the peak within max(2%, 1 MiB) of the kernel's ($peak, $pk_k)" \
			"$(( peak > pk_k ? peak - pk_k : pk_k - peak ))" "$tol"
		tol=$(( ${end_k#-} / 50 > MIB ? ${end_k#-} / 50 : MIB ))
		check_le "slab churn $what: slab at the end within max(2%, 1 MiB) of the kernel's ($end, $end_k)" \
			"$(( end > end_k ? end - end_k : end_k - end ))" "$tol"
	else
		# the kernel's change is page tables and stacks too: slab is a part of it
		check_le "slab churn $what: slab at the peak no more than the kernel's change + 1 MiB" \
			"$peak" "$(( pk_k + MIB ))"
	fi
	check_ge "slab churn $what: slab never below minus what the cgroup held at the start" \
		"$n" "$(( floor - bound - MIB ))"
	check_eq "slab churn $what: no slab category below its floor in the report" \
		"$(jqv "$out" '[.attribution.categories[] | select(.name | startswith("slab_")) | .below_floor // false, .retained_below_floor // false] | any')" false
}

# Slab that moves up and down by small amounts, thousands of times: the
# 6.13+ memcg tracepoints pass each update rounded to pages, and the sum
# drifted without bound (socket churn: -259.8 MiB for a cgroup whose kernel
# memory rose 1.6 MiB; 5000 pipes: -10.4 MiB; 200 processes in a cgroup
# that started empty: -3.5 MiB). memprobe reads the kernel's byte counter.
test_slab_churn() {
	local out=$TMP/slab-churn.json mnt=$TMP/churn-tmpfs cg k
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/churn" sockets 3 > "$TMP/churn.n" 2>/dev/null
	echo "# socket churn: $(cat "$TMP/churn.n") sockets"
	slab_churn_check "sockets" "$out" 1
	# the churner's own share: the frees its RCU callbacks run elsewhere
	# are another context's, but its own may not drift below zero either
	check_ge "slab churn sockets: the churner's slab share is not negative" \
		"$(task_bytes "$out" slab_reclaimable churn)" 0
	if [ "$(jqv "$out" '[.attribution.categories[] | select(.name | startswith("slab_")) | .source // "bpf"] | any(. == "bpf")')" = true ]; then
		# the exact reads: every update but the first of the memcg on each
		# CPU (and a few nested ones) from the kernel's counter
		echo "# socket churn: updates exact $(jqv "$out" '.attribution.categories[] | select(.name == "slab_reclaimable") | .bound_bytes // 0') B bound"
		check_le "slab churn sockets: slab_reclaimable's bound is a few pages" \
			"$(cat_field "$out" slab_reclaimable bound_bytes | sed 's/null/0/')" $((64 * 4096))
	fi
	mkdir -p "$mnt" && mount -t tmpfs -o size=64m memprobe-test "$mnt" || { fail "slab churn: mount tmpfs"; return; }
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/churn" files "$mnt" 3 > "$TMP/churn.n" 2>/dev/null
	umount "$mnt"
	echo "# file churn: $(cat "$TMP/churn.n") files created and unlinked"
	slab_churn_check "files" "$out" 1
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/churn" pipes 5000 > /dev/null 2>/dev/null
	slab_churn_check "5000 pipes" "$out" 1
	"$MEMPROBE" record --limit 512M --memcg-from tracepoint --format json -o "$out" -- "$BIN/churn" procs 200 1 > /dev/null 2>/dev/null
	slab_churn_check "200 processes" "$out" 0
	# a cgroup with a past (its per-CPU counters are not 0 on any CPU):
	# churned before, and churning while recorded
	cg=$(make_cgroup slabpast $((512 * MIB))) || { fail "slab churn: make cgroup"; return; }
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$BIN/churn" pipes 5000 > /dev/null
	k=$(run_in_cgroup "$cg" "$BIN/churn" sockets 8)
	sleep 1
	"$MEMPROBE" record --cgroup "$cg" --duration 3 --memcg-from tracepoint --format json -o "$out" 2>/dev/null
	slab_churn_check "a cgroup with a past" "$out" 1 1
	kill "$k" 2>/dev/null; wait "$k" 2>/dev/null
	remove_cgroup "$cg"
	check "slab churn: nothing left behind" no_leftovers
}

# A real driver: brd's pages are allocated in the writer's task context,
# in brd's code, without __GFP_ACCOUNT: the cgroup does not pay for them.
test_driver() {
	local ko cg out=$TMP/driver.json pid i alloc unacc kdelta
	ko=/lib/modules/$(uname -r)/brd.ko
	if [ ! -f "$ko" ] && ! modprobe -n brd 2>/dev/null; then
		skip "driver: brd's pages as driver:brd: no brd module for $(uname -r) here"
		return
	fi
	if [ -e /dev/ram0 ]; then
		skip "driver: brd's pages as driver:brd: /dev/ram0 exists already (not ours to load or unload)"
		return
	fi
	{ [ -f "$ko" ] && insmod "$ko" rd_nr=1 rd_size=65536; } || modprobe brd rd_nr=1 rd_size=65536 ||
		{ fail "driver: load brd"; return; }
	cg=$(make_cgroup driver $GIB)
	"$MEMPROBE" record --cgroup "$cg" --duration 4 --format json -o "$out" --ready-fd 3 3> "$TMP/ready" 2>/dev/null &
	pid=$!
	for i in $(seq 200); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
	run_in_cgroup "$cg" dd if=/dev/zero of=/dev/ram0 bs=1M count=32 oflag=direct > /dev/null
	wait $pid
	rmmod brd
	alloc=$(path_field "$out" kernel_paths driver:brd alloc_bytes)
	unacc=$(path_field "$out" not_charged driver:brd alloc_bytes)
	kdelta=$(jqv "$out" '(.peak.sample.stat.kernel // 0) - (.timeline[0].stat.kernel // 0) + (.peak.sample.stat.file // 0) - (.timeline[0].stat.file // 0)')
	echo "# driver: brd allocated $alloc, not charged $unacc, the cgroup's kernel+file moved $kdelta"
	check_within "driver: 32 MiB written to brd are allocated by driver:brd within 10%" "$alloc" $((32 * MIB)) 0.10
	check_within "driver: ... and reported as not charged to the cgroup" "$unacc" $((32 * MIB)) 0.10
	check_le "driver: ... and the cgroup's own counters did not move by them" "${kdelta#-}" $((4 * MIB - 1))
	remove_cgroup "$cg"
	check "driver: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# Hook ladders: every rung below the first, forced on this kernel by
# MEMPROBE_DENY_HOOKS or by hiding the kernel's BTF, must still measure.
# probe_figures NAME FILE: the probe's faults and anon, from whatever source
# the report names, against what it allocated.
probe_figures() {
	local name=$1 out=$2 alloc faults anon
	alloc=$(jqv "$out" .allocated_bytes)
	faults=$(jqv "$out" .attribution.page_faults.total)
	anon=$(cat_field "$out" anon growth_bytes)
	echo "# $name: allocated $alloc faults $faults anon $anon"
	check_within "$name: faults = allocated / 4 KiB within 5%" "$faults" $((alloc / 4096)) 0.05
	check_within "$name: anon = allocated within 5%" "$anon" "$alloc" 0.05
}

test_hooks() {
	local cg out=$TMP/hooks.json f=$TMP/features.json n
	"$MEMPROBE" limits --features --format json > "$f"
	echo "# features: $(jq -c '[.plan[] | {(.concern): .hook}] | add' "$f")"
	check_eq "features: the eight concerns by id, in order" "$(jq -c '[.plan[].concern]' "$f")" \
		'["faults","alloc","free","migrate","comm","oom","memcg","charge"]'
	check_eq "features: eight concerns, each with a hook or a polled file" "$(jqv "$f" '[.plan[] | select(.hook != null)] | length')" 8
	check_eq "features: each one's kind is its used rung's, and it names its target" \
		"$(jqv "$f" '[.plan[] | [.rungs[] | select(.status == "used")][0] as $u | .kind == $u.kind and (.target | type) == "string"] | all')" true
	check_eq "features: every rung has a kind and a target" \
		"$(jqv "$f" '[.plan[].rungs[] | has("kind") and has("target")] | all')" true
	check_eq "features: exactly one rung used per concern" "$(jqv "$f" '[.plan[] | [.rungs[] | select(.status == "used")] | length == 1] | all')" true
	check_eq "features: every rung judged (used, usable, or why not)" "$(jqv "$f" '[.plan[].rungs[].status | select(. == "not tried")] | length')" 0
	# a rung's why whole: v1's counters rung was cut at 63 bytes
	check_eq "features: every 'passed over (...)' said whole" \
		"$(jqv "$f" '[.plan[].rungs[].status | select(startswith("passed over (") and (endswith(")") | not))]')" "[]"
	check_eq "features: BTF source named" "$(jqv "$f" .btf)" /sys/kernel/btf/vmlinux
	check_eq "features: anon is kept per memcg" "$(jqv "$f" .categories.anon)" true
	"$MEMPROBE" limits --features > "$TMP/features.txt"
	check "features: text names the page-fault concern" grep -q "^page faults: " "$TMP/features.txt"

	cg=$(make_cgroup hooks $((512 * MIB))) || { fail "hooks: make cgroup"; return; }
	# --features says which memcg path a run takes by default: the counters
	# on cgroup v2, the tracepoints on v1 (it said counters on v1)
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2>/dev/null
	check_eq "features: the memcg hook a default probe uses" \
		"$(jq -r '.plan[] | select(.concern == "memcg") | .hook' "$f")" \
		"$(jq -r '.attribution.hooks[] | select(.concern == "memcg") | .hook' "$out")"
	# ... and its page free hook (features judged it as with no stacks)
	check_eq "features: the page free hook a default probe uses" \
		"$(jq -r '.plan[] | select(.concern == "free") | .hook' "$f")" \
		"$(jq -r '.attribution.hooks[] | select(.concern == "free") | .hook' "$out")"
	# raw tracepoints, as with an external BTF
	MEMPROBE_DENY_HOOKS=tp_btf "$MEMPROBE" probe --cgroup "$cg" --thp never --memcg-from tracepoint --format json -o "$out" 2>/dev/null
	# every concern on a tp_btf tracepoint by default moves to its raw twin
	jq -r '.plan[] | select(any(.rungs[]; .kind == "tp_btf" and .status == "used")) | .concern' "$f" > "$TMP/tp.concerns"
	n=$(wc -l < "$TMP/tp.concerns")
	check_ge "raw_tp: the $n tp_btf concerns on raw tracepoints" "$n" 4
	check_eq "raw_tp: ... each of them" "$(jq -r '.attribution.hooks[] | select(.kind == "raw_tp") | .concern' "$out" | grep -cxFf "$TMP/tp.concerns")" "$n"
	probe_figures raw_tp "$out"
	# nothing but polling: the cgroup's files
	MEMPROBE_DENY_HOOKS=tp_btf,raw_tp,fentry,kprobe "$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2>/dev/null
	check_eq "poll: the probe ran" "$(jqv "$out" '.probe_chunks > 0')" true
	check_eq "poll: faults from memory.stat pgfault" "$(jqv "$out" .attribution.page_faults.source)" "memory.stat pgfault"
	check_eq "poll: anon from memory.stat" "$(cat_field "$out" anon source)" memory.stat
	check "poll: the report says page allocation has no hook" says_missing "$out" --concern alloc --reason no_hook
	probe_figures poll "$out"
	check_eq "poll: OOM kills counted from the cgroup's counter, not listed" "$(jqv "$out" '[.workload_oom_kills, .workload_oom_kill_count] | tostring')" "[null,0]"
	# a word that names no hook is a typo: one line says so, the run goes on
	MEMPROBE_DENY_HOOKS=tp_bft "$MEMPROBE" probe --limit 64M -o /dev/null 2> "$TMP/deny.err"
	check "deny: an unknown word is named on stderr" grep -q "MEMPROBE_DENY_HOOKS: 'tp_bft' names no hook" "$TMP/deny.err"
	MEMPROBE_DENY_HOOKS="exceptions:page_fault_user" "$MEMPROBE" probe --limit 64M --format json -o "$out" 2>/dev/null
	check_ne "deny: group:name as the report prints it" "$(hook_field "$out" faults target)" exceptions:page_fault_user
	# the counters' exit hook denied: the per-fault tracepoint is the next rung
	MEMPROBE_DENY_HOOKS="sched_process_exit" "$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$out" 2>/dev/null
	check_eq "deny: no exit hook: faults by the tracepoint" "$(hook_field "$out" faults target)" exceptions:page_fault_user
	probe_figures "no exit hook" "$out"
	# the kernel's BTF hidden (a private mount namespace): a clear line, the
	# probe still runs; with --btf, raw tracepoints and CO-RE from that file
	cp /sys/kernel/btf/vmlinux "$TMP/vmlinux.btf"; : > "$TMP/empty"
	unshare -m sh -c 'mount -o bind "$1" /sys/kernel/btf/vmlinux && exec "$2" probe --cgroup "$3" --thp never --format json -o "$4"' \
		sh "$TMP/empty" "$MEMPROBE" "$cg" "$out" 2> "$TMP/nobtf.err"
	check_eq "no BTF: the probe still measures" "$(jqv "$out" '.probe_chunks > 0')" true
	check "no BTF: one line names the file and --btf" grep -q "no kernel BTF (/sys/kernel/btf/vmlinux.*--btf FILE" "$TMP/nobtf.err"
	check_eq "no BTF: faults polled from memory.stat" "$(jqv "$out" .attribution.page_faults.source)" "memory.stat pgfault"
	check_eq "no BTF: the probe's own faults unknown (null), not 0" "$(jqv "$out" .attribution.page_faults.probe)" null
	probe_figures "no BTF" "$out"
	unshare -m sh -c 'mount -o bind "$1" /sys/kernel/btf/vmlinux && exec "$2" probe --btf "$5" --cgroup "$3" --thp never --format json -o "$4"' \
		sh "$TMP/empty" "$MEMPROBE" "$cg" "$out" "$TMP/vmlinux.btf" 2>/dev/null
	check_eq "--btf: a raw tracepoint keeps exited threads' faults" \
		"$(hook_field "$out" faults kind) $(hook_field "$out" faults target)" \
		"raw_tp sched:sched_process_exit"
	probe_figures --btf "$out"
	unshare -m sh -c 'mount -o bind "$1" /sys/kernel/btf/vmlinux && exec "$2" probe --btf "$5" --fault-tracepoint --cgroup "$3" --thp never --format json -o "$4"' \
		sh "$TMP/empty" "$MEMPROBE" "$cg" "$out" "$TMP/vmlinux.btf" 2>/dev/null
	check_eq "--btf --fault-tracepoint: raw tracepoints for page faults" \
		"$(hook_field "$out" faults kind) $(hook_field "$out" faults target)" \
		"raw_tp exceptions:page_fault_user"
	probe_figures "--btf --fault-tracepoint" "$out"
	remove_cgroup "$cg"
	check "hooks: nothing left behind" no_leftovers
}

# Pinned memory: a stand-in for a pinned host pool (64 MiB of shared
# anonymous memory, mlocked, and a 32 MiB tmpfs file kept mapped, both
# touched) in a test cgroup, during a record and a probe of that cgroup.
pinned_checks() {
	local what=$1 out=$2 pid=$3 p
	p=".pinned.tasks[]? | select(.pid == $pid)"
	check_eq "pinned $what: the stand-in is named" "$(jqv "$out" "[$p | .comm] | first")" pinned
	check_eq "pinned $what: ... in category shmem" "$(jqv "$out" "[$p | .category] | first")" shmem
	check_within "pinned $what: ... VmLck 64 MiB within 5%" "$(jqv "$out" "[$p | .vm_lck_bytes] | first")" $((64 * MIB)) 0.05
	check_within "pinned $what: ... locked shmem 64 MiB within 5%" "$(jqv "$out" "[$p | .locked.shmem_bytes] | first")" $((64 * MIB)) 0.05
	check_within "pinned $what: ... RssShmem 96 MiB (pool + tmpfs file) within 5%" "$(jqv "$out" "[$p | .rss_shmem_bytes] | first")" $((96 * MIB)) 0.05
	check_within "pinned $what: memory.stat unevictable 64 MiB within 5%" "$(jqv "$out" .pinned.unevictable_bytes)" $((64 * MIB)) 0.05
	check_ge "pinned $what: memory.stat shmem holds both (96 MiB - 5%)" "$(jqv "$out" .pinned.shmem_bytes)" $((96 * MIB * 95 / 100))
}

test_pinned() {
	local cg pid out mnt=$TMP/pinned-tmpfs
	mkdir -p "$mnt" && mount -t tmpfs -o size=64m memprobe-test "$mnt" || { fail "pinned: mount tmpfs"; return; }
	cg=$(make_cgroup pinned $((400 * MIB)))
	pid=$(run_in_cgroup "$cg" "$BIN/pinned" 64 "$mnt/pool" 32 120)
	check_usage "pinned: the stand-in gets to 96 MiB" "$cg" $((96 * MIB))
	sleep 0.5
	out=$TMP/pinned-record.json
	"$MEMPROBE" record --cgroup "$cg" --duration 2 --format json -o "$out" 2>/dev/null
	pinned_checks record "$out" "$pid"
	check_eq "pinned record: taken at the peak" "$(jqv "$out" .pinned.at)" peak
	"$MEMPROBE" report "$out" > "$TMP/pinned.txt"
	check "pinned: the text names the process, the category and the locked bytes" \
		grep -Eq "^  pinned\[$pid\] +shmem +locked 64\.0 MiB \(shmem 64\.0 MiB" "$TMP/pinned.txt"
	out=$TMP/pinned-probe.json
	"$MEMPROBE" probe --cgroup "$cg" --format json -o "$out" 2>/dev/null
	pinned_checks probe "$out" "$pid"
	check_eq "pinned probe: taken at the probe's stop" "$(jqv "$out" .pinned.at)" stop
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
	rm -f "$mnt/pool"
	umount "$mnt"
	check "pinned: nothing left behind" no_leftovers
}

# Issue 23: the figures at the moment they claim, each against the kernel's
# own counter read beside it.

# stat_key DIR KEY: a memory.stat value of cgroup DIR by its v2 name (anon,
# file, shmem, file_mapped, kernel, sock, anon_thp), hierarchical on v1
# (total_rss, total_cache, ...; kernel is memory.kmem.usage_in_bytes); 0
# where this kernel keeps none
stat_key() {
	local dir=$1 key=$2 v1
	if [ "$(cg_version "$dir")" = 1 ]; then
		case $key in
		anon) v1=total_rss ;; file) v1=total_cache ;; shmem) v1=total_shmem ;;
		file_mapped) v1=total_mapped_file ;; anon_thp) v1=total_rss_huge ;;
		unevictable) v1=total_unevictable ;;
		kernel) cat "$dir/memory.kmem.usage_in_bytes" 2>/dev/null || echo 0; return ;;
		sock) echo 0; return ;;
		*) v1=$key ;;
		esac
		awk -v k="$v1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$dir/memory.stat"
	else
		awk -v k="$key" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$dir/memory.stat"
	fi
}

# unstat DIR: the cgroup's usage that no memory.stat category holds (usage
# - anon - file - kernel - sock), read together until two readings agree
# within 256 KiB (memory.stat is flushed lazily)
unstat() {
	local dir=$1 a b i
	for i in $(seq 50); do
		a=$(( $(cg_usage "$dir") - $(stat_key "$dir" anon) - $(stat_key "$dir" file) - $(stat_key "$dir" kernel) - $(stat_key "$dir" sock) ))
		b=$(( $(cg_usage "$dir") - $(stat_key "$dir" anon) - $(stat_key "$dir" file) - $(stat_key "$dir" kernel) - $(stat_key "$dir" sock) ))
		[ $((a - b)) -le 262144 ] && [ $((b - a)) -le 262144 ] && break
		sleep 0.05
	done
	echo "$b"
}

# Pages out of memory.stat's anon and still charged: 64 MiB a process
# unmapped after handing them to pipes (vmsplice), which hold them. The
# usage keeps them, no memory.stat category does: before, record called
# them unattributed (64 MiB) and a probe's overhead unexplained; the page
# free hook counts them now (anon_unmapped). Then the same hand-over while
# a probe fills: the workload's anon goes down by 64 MiB, its
# anon_unmapped up by as much, and the overhead is explained.
test_anon_unmapped() {
	local cg pid rp out=$TMP/unmapped.json k m u i
	cg=$(make_cgroup unmapped $((256 * MIB))) || { fail "anon unmapped: make cgroup"; return; }
	rm -f "$TMP/ready"
	"$MEMPROBE" record --cgroup "$cg" --duration 30 --memcg-from tracepoint --format json -o "$out" --ready-fd 3 \
		3> "$TMP/ready" 2>/dev/null &
	rp=$!
	for i in $(seq 3000); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
	pid=$(run_in_cgroup "$cg" sh -c "exec '$BIN/held' 64 > '$TMP/held.out'")
	for i in $(seq 3000); do grep -q ready "$TMP/held.out" 2>/dev/null && break; sleep 0.02; done
	k=$(unstat "$cg")
	kill -INT "$rp"; wait "$rp"
	check_eq "anon unmapped: record exits 0" "$?" 0
	m=$(jqv "$out" .attribution.reconciliation.anon_unmapped_bytes)
	u=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
	echo "# anon unmapped: memprobe $m (unattributed $u), the kernel's usage - memory.stat $k"
	check_ge "anon unmapped: the kernel holds the pipes' 64 MiB out of memory.stat" "$k" $((63 * MIB))
	check_near "anon unmapped: record's figure within 1 MiB of the kernel's" "$m" "$k" "$MIB"
	check_le "anon unmapped: ... and unattributed no more than 2 MiB" "$(abs "$u")" $((2 * MIB))
	"$MEMPROBE" report "$out" > "$TMP/unmapped.txt"
	check "anon unmapped: the text says it" grep -Eq '^  anon unmapped +6[34]\.[0-9] MiB' "$TMP/unmapped.txt"
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	unmapped_probe "$cg"
	remove_cgroup "$cg"
	check "anon unmapped: nothing left behind" no_leftovers
}

# status_sum KEY PID...: a /proc/PID/status figure (VmLck, VmPin, RssShmem)
# summed over the processes, in bytes
status_sum() {
	local key=$1 p t=0 v; shift
	for p in "$@"; do
		v=$(awk -v k="$key:" '$1 == k { print $2 * 1024 }' "/proc/$p/status" 2>/dev/null)
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

# status_max KEY PID...: the largest of the processes' KEY, in bytes
status_max() {
	local key=$1 p t=0 v; shift
	for p in "$@"; do
		v=$(awk -v k="$key:" '$1 == k { print $2 * 1024 }' "/proc/$p/status" 2>/dev/null)
		[ "${v:-0}" -gt "$t" ] && t=$v
	done
	echo "$t"
}

# Pinned memory at the peak, in record: 100 MiB of shared anonymous memory
# touched, then mlocked 100 ms later (the brief's pinned pool), and 64 MiB
# registered as io_uring fixed buffers 100 ms after their touch (VmPin):
# the usage is at its peak before either is pinned. main read the pinned
# object at the first peak and at most once a second: unevictable, VmLck
# and VmPin 0. Every figure within 1 MiB of the kernel's, read beside.
test_pinned_moment() {
	local cg out=$TMP/pinned-moment.json rp a b i m k what key
	cg=$(make_cgroup pinned-moment $((512 * MIB))) || { fail "pinned moment: make cgroup"; return; }
	rm -f "$TMP/ready"
	"$MEMPROBE" record --cgroup "$cg" --format json -o "$out" --ready-fd 3 \
		3> "$TMP/ready" 2>/dev/null &
	rp=$!
	for i in $(seq 3000); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
	a=$(run_in_cgroup "$cg" sh -c "exec '$BIN/pinned' 100 - 0 600 100 > '$TMP/pool.out'")
	b=$(run_in_cgroup "$cg" sh -c "exec '$BIN/uring' 64 100 > '$TMP/uring.out'")
	for i in $(seq 3000); do
		grep -q ready "$TMP/pool.out" 2>/dev/null && grep -q ready "$TMP/uring.out" 2>/dev/null && break
		sleep 0.02
	done
	if ! grep -q ready "$TMP/uring.out"; then
		kill -9 "$a" "$b" "$rp" 2>/dev/null; wait "$rp" 2>/dev/null
		skip "pinned moment: no io_uring fixed buffers here ($(cat "$TMP/uring.out"))"
		remove_cgroup "$cg"; return
	fi
	kill -INT "$rp"; wait "$rp"
	check_eq "pinned moment: record exits 0" "$?" 0
	check_eq "pinned moment: read at the peak" "$(jqv "$out" .pinned.at)" peak
	for what in unevictable shmem; do
		m=$(jqv "$out" ".pinned.${what}_bytes")
		k=$(stat_key "$cg" "$what")
		echo "# pinned moment: $what memprobe $m, memory.stat $k"
		check_near "pinned moment: memory.stat $what within 1 MiB of the kernel's" "$m" "$k" "$MIB"
	done
	for key in VmLck VmPin; do
		what=$(echo "$key" | sed 's/Vm\(...\)/vm_\L\1/')
		m=$(jqv "$out" ".pinned.${what}_bytes")
		k=$(status_sum "$key" "$a" "$b")
		echo "# pinned moment: $key memprobe $m, /proc's $k"
		check_near "pinned moment: $key within 1 MiB of the kernel's" "$m" "$k" "$MIB"
	done
	# RssShmem is never summed (a shared page counts in every mapper): the
	# largest one process holds
	m=$(jqv "$out" .pinned.rss_shmem_max_bytes)
	k=$(status_max RssShmem "$a" "$b")
	echo "# pinned moment: RssShmem's largest memprobe $m, /proc's $k"
	check_near "pinned moment: the largest RssShmem within 1 MiB of the kernel's" "$m" "$k" "$MIB"
	check_ge "pinned moment: ... VmLck holds the 100 MiB pool" "$(jqv "$out" .pinned.vm_lck_bytes)" $((100 * MIB))
	check_ge "pinned moment: ... VmPin the 64 MiB of fixed buffers" "$(jqv "$out" .pinned.vm_pin_bytes)" $((64 * MIB))
	kill -9 "$a" "$b"; wait "$a" "$b" 2>/dev/null
	remove_cgroup "$cg"
	check "pinned moment: nothing left behind" no_leftovers
}

# kernel_unmapped DIR: memory.stat's shmem no process maps, at least
# (shmem - file_mapped, 0 below), read beside memprobe's
kernel_unmapped() {
	local v=$(( $(stat_key "$1" shmem) - $(stat_key "$1" file_mapped) ))
	[ "$v" -lt 0 ] && v=0
	echo "$v"
}

# Memory no process maps: 200 MiB written to a tmpfs file by a process
# that exited, charged to the cgroup as shmem. main gave the numbers
# (shmem 200 MiB) but never said that no process maps them, the usual
# answer to "OOM-killed with low RSS". limits, record and probe say it
# now (shmem_unmapped_bytes, and a line in the text), each within 1 MiB
# of the kernel's shmem - file_mapped read beside.
test_unmapped_shmem() {
	local cg mnt=$TMP/unmapped-tmpfs out k m i
	mkdir -p "$mnt" && mount -t tmpfs -o size=256m memprobe-test "$mnt" || { fail "unmapped: mount tmpfs"; return; }
	cg=$(make_cgroup unmapped-shmem $((512 * MIB))) || { fail "unmapped: make cgroup"; umount "$mnt"; return; }
	i=$(run_in_cgroup "$cg" dd if=/dev/zero of="$mnt/pool" bs=1M count=200)
	wait "$i" 2>/dev/null
	for i in $(seq 3000); do [ "$(stat_key "$cg" shmem)" -ge $((200 * MIB)) ] && break; sleep 0.02; done
	out=$TMP/unmapped-limits.json
	"$MEMPROBE" limits --cgroup "$cg" --format json -o "$out"
	k=$(kernel_unmapped "$cg"); m=$(jqv "$out" .cgroup.shmem_unmapped_bytes)
	echo "# unmapped: limits $m, the kernel's shmem - file_mapped $k"
	check_ge "unmapped: the kernel holds 200 MiB of shmem no process maps" "$k" $((200 * MIB))
	check_near "unmapped: limits says it, within 1 MiB" "$m" "$k" "$MIB"
	"$MEMPROBE" limits --cgroup "$cg" > "$TMP/unmapped.txt"
	check "unmapped: ... and its text" grep -Eq '^  no process maps +shmem 200\.0 MiB at least' "$TMP/unmapped.txt"
	out=$TMP/unmapped-record.json
	"$MEMPROBE" record --cgroup "$cg" --duration 0.3 --format json -o "$out" 2>/dev/null
	k=$(kernel_unmapped "$cg"); m=$(jqv "$out" .pinned.shmem_unmapped_bytes)
	echo "# unmapped: record $m, the kernel's $k"
	check_near "unmapped: record says it, within 1 MiB" "$m" "$k" "$MIB"
	"$MEMPROBE" report "$out" > "$TMP/unmapped.txt"
	check "unmapped: ... and its text" grep -Eq '^  no process maps +shmem 200\.0 MiB at least' "$TMP/unmapped.txt"
	out=$TMP/unmapped-probe.json
	"$MEMPROBE" probe --cgroup "$cg" --format json -o "$out" 2>/dev/null
	k=$(kernel_unmapped "$cg"); m=$(jqv "$out" .pinned.shmem_unmapped_bytes)
	echo "# unmapped: probe $m, the kernel's $k"
	check_near "unmapped: probe says it, within 1 MiB" "$m" "$k" "$MIB"
	remove_cgroup "$cg"
	rm -f "$mnt/pool"; umount "$mnt"
	check "unmapped: nothing left behind" no_leftovers
}

# Huge pages per cgroup and per process: 256 MiB asked for in huge pages
# (tests/programs/thp). main had no huge-page figure anywhere but the
# order-9 allocations inside page_alloc. Now anon_thp is a category (the
# kernel's NR_ANON_THPS per process, through the memcg hook) in every
# document and renderer, and limits gives the cgroup's: each against the
# kernel's memory.stat anon_thp (v1 rss_huge) and the process's
# AnonHugePages read beside.
test_thp() {
	local cg out=$TMP/thp.json rp pid i k s m d=$TMP/thp
	mkdir -p "$d"
	cg=$(make_cgroup thp $((512 * MIB))) || { fail "thp: make cgroup"; return; }
	rm -f "$TMP/ready"
	"$MEMPROBE" record --cgroup "$cg" --format json -o "$out" --ready-fd 3 \
		3> "$TMP/ready" 2>/dev/null &
	rp=$!
	for i in $(seq 3000); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
	pid=$(run_in_cgroup "$cg" sh -c "exec '$BIN/thp' 256 > '$TMP/thp.out'")
	for i in $(seq 3000); do grep -q ready "$TMP/thp.out" 2>/dev/null && break; sleep 0.02; done
	k=$(stat_key "$cg" anon_thp)
	s=$(awk '$1 == "AnonHugePages:" { print $2 * 1024 }' "/proc/$pid/smaps_rollup")
	kill -INT "$rp"; wait "$rp"
	check_eq "thp: record exits 0" "$?" 0
	echo "# thp: memory.stat anon_thp $k, AnonHugePages $s; record's $(cat_field "$out" anon_thp growth_bytes), the process's $(task_bytes "$out" anon_thp thp); events lost $(jq -c '.attribution.events_lost | {total, recursion_misses, recursion_miss_bound_bytes}' "$out")"
	if [ "${k:-0}" -lt $((2 * MIB)) ]; then
		skip "thp: the kernel gave no huge page here (THP $(cat /sys/kernel/mm/transparent_hugepage/enabled))"
	else
		# the peak's figures are a sample's that has caught up with its
		# usage: a huge page is charged before it is counted, and a peak
		# read while one was in flight had its usage, not yet its
		# anon_thp (1 to 40 huge pages short, 1 run in 3 to 7; issue 23)
		check_near "thp: record's anon_thp within 1 MiB of memory.stat's" \
			"$(cat_field "$out" anon_thp growth_bytes)" "$k" "$MIB"
		check_near "thp: ... the process's share within 1 MiB of its AnonHugePages" \
			"$(task_bytes "$out" anon_thp thp)" "$s" "$MIB"
		check_near "thp: ... in the peak's sample" "$(jqv "$out" .peak.sample.stat.anon_thp)" "$k" "$MIB"
		"$MEMPROBE" limits --cgroup "$cg" --format json -o "$d/limits.json"
		check_near "thp: limits' anon_thp within 1 MiB of memory.stat's" \
			"$(jqv "$d/limits.json" .cgroup.anon_thp_bytes)" "$(stat_key "$cg" anon_thp)" "$MIB"
		"$MEMPROBE" report "$out" > "$d/text"
		check "thp: the text has its row, with the process" grep -Eq "^  anon_thp +25[0-9]\.[0-9] MiB .*thp\[$pid\]" "$d/text"
		"$MEMPROBE" report "$out" --format markdown > "$d/md"
		check "thp: markdown has its row" grep -q '^| `anon_thp` |' "$d/md"
		"$MEMPROBE" report "$out" --format csv > "$d/csv"
		check "thp: csv has its row" grep -q '^anon_thp,' "$d/csv"
		"$MEMPROBE" report "$out" --format openmetrics > "$d/om"
		check "thp: openmetrics has it, a part of anon" grep -q 'memprobe_growth_part_bytes{.*category="anon_thp",part_of="anon"}' "$d/om"
		"$MEMPROBE" compare "$out" "$out" --format csv > "$d/cmp"
		check "thp: compare has its row" grep -q '^"growth.anon_thp",' "$d/cmp"
	fi
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
	check "thp: nothing left behind" no_leftovers
}

# An OOM kill explained: a child cgroup with no limit under a parent of
# 256 MiB, 100 MiB of tmpfs written from the child by a process that
# exited, then alloc 400 in the child: the parent's limit kills it, with a
# third of the usage in no process's RSS. main said the kill and the
# usage; now which level's limit (the parent's: its failcnt on v1, its
# memory.events.local oom on v2, read beside), each level's usage and
# limit at the kill, and what no RSS shows, in one line.
test_oom_explained() {
	local p c mnt=$TMP/oom-tmpfs out=$TMP/oom.json rp pid i k lim hit
	mkdir -p "$mnt" && mount -t tmpfs -o size=256m memprobe-test "$mnt" || { fail "oom explained: mount tmpfs"; return; }
	p=$(make_cgroup oomp $((256 * MIB))) || { fail "oom explained: make cgroup"; umount "$mnt"; return; }
	[ "$(cg_version "$p")" = 2 ] && echo +memory > "$p/cgroup.subtree_control"
	c=$p/child
	mkdir "$c" || { fail "oom explained: make the child"; remove_cgroup "$p"; umount "$mnt"; return; }
	i=$(run_in_cgroup "$c" dd if=/dev/zero of="$mnt/pool" bs=1M count=100)
	wait "$i" 2>/dev/null
	for i in $(seq 3000); do [ "$(stat_key "$c" shmem)" -ge $((100 * MIB)) ] && break; sleep 0.02; done
	rm -f "$TMP/ready"
	"$MEMPROBE" record --cgroup "$c" --format json -o "$out" --ready-fd 3 3> "$TMP/ready" 2>/dev/null &
	rp=$!
	for i in $(seq 3000); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
	pid=$(run_in_cgroup "$c" "$BIN/alloc" 400)
	for i in $(seq 3000); do alive "$pid" || break; sleep 0.02; done
	check "oom explained: alloc 400 was killed" eval '! alive "$pid"'
	# the kill's event is in the ring buffer before the victim dies: the
	# end of the recording reads what is left there
	kill -INT "$rp"; wait "$rp"
	check_eq "oom explained: record exits 0" "$?" 0
	hit=$(jqv "$out" "[.oom_kills[] | select(.pid == $pid)][0]")
	echo "# oom explained: $(echo "$hit" | jq -c '{limit_hit, levels: [.levels[] | {dir: (.dir | split("/") | .[-1]), usage_bytes, limit_bytes, failcnt}], charged}')"
	check_eq "oom explained: the limit hit is the parent's" "$(echo "$hit" | jq -r .limit_hit.dir)" "$p"
	lim=$(cat "$p/memory.limit_in_bytes" 2>/dev/null || cat "$p/memory.max")
	check_eq "oom explained: ... its limit, as the kernel's file has it" "$(echo "$hit" | jq -r .limit_hit.limit_bytes)" "$lim"
	check_near "oom explained: ... its usage at the kill at it (within 2.25 MiB)" \
		"$(echo "$hit" | jq -r .limit_hit.usage_bytes)" "$lim" "$((9 * MIB / 4))"
	check_eq "oom explained: the first level is the child's, no limit" \
		"$(echo "$hit" | jq -r '.levels[0] | "\(.dir) \(.limit_bytes)"')" "$c null"
	if [ "$(cg_version "$p")" = 1 ]; then
		echo "# oom explained: the kernel's failcnt: parent $(cat "$p/memory.failcnt"), child $(cat "$c/memory.failcnt")"
		check_gt "oom explained: the kernel failed the parent's charge (failcnt), not the child's" \
			"$(cat "$p/memory.failcnt")" 0
		check_eq "oom explained: the kernel failed the parent's charge (failcnt), not the child's" \
			"$(cat "$c/memory.failcnt")" 0
		check_ge "oom explained: ... the parent's failcnt at the kill, at most the kernel's now" \
			"$(cat "$p/memory.failcnt")" "$(echo "$hit" | jq -r .levels[1].failcnt)"
	else
		k=$(awk '$1 == "oom" { print $2 }' "$p/memory.events.local")
		echo "# oom explained: memory.events.local oom: parent $k, child $(awk '$1 == "oom" { print $2 }' "$c/memory.events.local")"
		check_gt "oom explained: the kernel's OOM was the parent's (memory.events.local)" "$k" 0
		check_eq "oom explained: ... not the child's" \
			"$(awk '$1 == "oom" { print $2 }' "$c/memory.events.local")" 0
	fi
	k=$(kernel_unmapped "$c")
	check_near "oom explained: the shmem no process maps within 2 MiB of the kernel's" \
		"$(echo "$hit" | jq -r .charged.shmem_unmapped_bytes)" "$k" "$((2 * MIB))"
	check_ge "oom explained: RSS holds alloc's (more than 100 MiB)" "$(echo "$hit" | jq -r .charged.rss_bytes)" $((100 * MIB))
	"$MEMPROBE" report "$out" > "$TMP/oom.txt"
	check "oom explained: one line says it" \
		grep -Eq "^  OOM at $p's 256\.0 MiB limit \(usage 25[0-9.]+ MiB\): RSS [0-9.]+ MiB; shmem (99|100)\.[0-9] MiB that no process maps" "$TMP/oom.txt"
	rmdir "$c"; remove_cgroup "$p"
	rm -f "$mnt/pool"; umount "$mnt"
	check "oom explained: nothing left behind" no_leftovers
}

# ---- real databases: copy-on-write, PostgreSQL, redis ----------------------

# private_dirty PID: the process's Private_Dirty in bytes (smaps_rollup)
private_dirty() {
	awk '/^Private_Dirty:/ { print $2 * 1024; exit }' /proc/"$1"/smaps_rollup 2>/dev/null
}

# wait_file PATH: until PATH exists (up to 60 s); false if it never does
wait_file() {
	local i
	for i in $(seq 1200); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}

# cow_of FILE PID: the bytes copied on write by that process in a report
cow_of() {
	jqv "$1" "[.attribution.copy_on_write.by_task[]? | select(.pid == $2) | .bytes] | add // 0"
}

# A fork whose parent rewrites every page: the parent's copies on write,
# against the child's Private_Dirty (the pages it no longer shares), read
# beside. Runs in the kernel guests too (no database needed).
test_cow() {
	local out=$TMP/cow.json mp pid child pd0 pd1 got i
	"$MEMPROBE" record --limit 256M --format json -o "$out" -- "$BIN/cow" 32 "$TMP/cow" 2>/dev/null &
	mp=$!
	wait_file "$TMP/cow.pid" || { fail "cow: the workload did not fork"; kill -INT "$mp"; wait "$mp"; return; }
	child=$(cat "$TMP/cow.pid")
	pid=$(children "$mp" | head -n 1)
	pd0=$(private_dirty "$child")
	kill -USR1 "$pid"
	wait_file "$TMP/cow.done" || fail "cow: the parent did not rewrite its pages"
	pd1=$(private_dirty "$child")
	kill -USR1 "$pid"
	wait "$mp"
	got=$(cow_of "$out" "$pid")
	echo "# copy-on-write: memprobe $got bytes for cow[$pid]; the child's Private_Dirty $pd0 -> $pd1 (+$((pd1 - pd0)))"
	# not looked for (no kallsyms in a guest, say): skipped, said why; a
	# document without the object fails below
	if jq -e '.attribution.copy_on_write | .source == null and (.why | type == "string")' "$out" > /dev/null 2>&1; then
		skip "cow: not looked for here: $(jqv "$out" .attribution.copy_on_write.why)"
	else
		check_within "cow: the parent's copies are the child's Private_Dirty growth (2%)" \
			"$got" $((pd1 - pd0)) 0.02
		check_ge "cow: ... at least the 32 MiB it rewrote" "$got" $((32 * MIB))
		check "cow: the text says who copied how much" grep -Eq \
			"^Copy-on-write: .* copied on write \(after a fork, .*: cow\[$pid\] copied 32\.[0-9] MiB" \
			<<< "$("$MEMPROBE" report "$out")"
		check_eq "cow: csv: the parent's row" \
			"$("$MEMPROBE" report "$out" --format csv --table copy_on_write | grep "^$pid,cow," | cut -d, -f3 | tr -d '\r')" "$got"
	fi
	check "cow: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# --memcg-from counters (issue 24): no program per memcg stat update; each
# process's categories are its own counters at the snapshots, memory.stat
# the cgroup's totals. A probe of a cgroup where a workload holds 64 MiB,
# run with the kernel's BPF run-time stats on (tests/programs/bpf_stats):
# the probe's anon is what it allocated and the workload grew by nothing,
# the growth reconciles with memory.stat within max(2%, 4 MiB), no memcg
# program is loaded (so none ran), and the report says what the counters
# cannot tell (reason proc) and leaves anon unmapped not measured (null).
test_memcg_counters() {
	local cg out=$TMP/counters.json pid alloc anon grown meas unattr tol st
	cg=$(make_cgroup counters $((512 * MIB))) || { fail "counters: make cgroup"; return; }
	pid=$(run_in_cgroup "$cg" "$BIN/alloc" 64)
	wait_usage "$cg" $((64 * MIB)) || fail "counters: the workload's 64 MiB (usage $(cg_usage "$cg"))"
	"$BIN/bpf_stats" "$MEMPROBE" probe --cgroup "$cg" --thp never --memcg-from counters \
		--format json -o "$out" 2>/dev/null; st=$?
	if [ $st = 77 ]; then
		skip "counters: the kernel's run-time stats (BPF_ENABLE_STATS) cannot be turned on"
		"$MEMPROBE" probe --cgroup "$cg" --thp never --memcg-from counters --format json -o "$out" 2>/dev/null
	fi
	check_eq "counters: memcg split by the processes' counters" \
		"$(hook_field "$out" memcg kind) $(hook_field "$out" memcg target)" "poll memory.stat + /proc/PID/status"
	check_eq "counters: no memcg program loaded" \
		"$(jqv "$out" '[.attribution.events_lost.recursion_misses_by_program | keys[] | select(test("memcg"))] | length')" 0
	probe_figures counters "$out"
	alloc=$(jqv "$out" .allocated_bytes)
	anon=$(task_bytes "$out" anon "memprobe-probe*")
	tol=$(( alloc / 50 > 4 * MIB ? alloc / 50 : 4 * MIB ))
	check_near "counters: the probe's anon is what it allocated, max(2%, 4 MiB)" "$anon" "$alloc" "$tol"
	grown=$(task_bytes "$out" anon alloc)
	check_near "counters: the workload's anon grew by nothing, within 4 MiB" "${grown:-0}" 0 $((4 * MIB))
	meas=$(jqv "$out" .attribution.reconciliation.measured_growth_bytes)
	unattr=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
	tol=$(( meas / 50 > 4 * MIB ? meas / 50 : 4 * MIB ))
	check_near "counters: unattributed within max(2%, 4 MiB) of the growth" "$unattr" 0 "$tol"
	check "counters: the report says what the counters cannot tell" says_missing "$out" --concern memcg --reason proc
	check_eq "counters: anon unmapped and still charged: not measured" \
		"$(jqv "$out" .attribution.reconciliation.anon_unmapped_bytes)" null
	if [ $st != 77 ]; then
		echo "# counters: program runs $(jq -c .attribution.events.program_runs "$out"), user pages $(jqv "$out" '.attribution.page_alloc.user_pages_by_order[0]')"
		check_gt "counters: the kernel counted the allocation program's runs" \
			"$(jqv "$out" '[.attribution.events.program_runs | to_entries[] | select(.key | test("mm_page_alloc")) | .value] | add // 0')" 0
		check_eq "counters: no program on a memcg tracepoint ran" \
			"$(jqv "$out" '[.attribution.events.program_runs | keys[] | select(test("memcg"))] | length')" 0
	fi
	# --stack-sample 0 too: the free program has no job left (no anon
	# unmaps to pair, no page tracked), so none runs; it ran on every
	# free of the machine before. The allocations fire once a page.
	"$BIN/bpf_stats" "$MEMPROBE" probe --cgroup "$cg" --thp never --memcg-from counters \
		--stack-sample 0 --format json -o "$out" 2>/dev/null; st=$?
	[ $st = 77 ] && "$MEMPROBE" probe --cgroup "$cg" --thp never --memcg-from counters \
		--stack-sample 0 --format json -o "$out" 2>/dev/null
	check_eq "counters, no stacks: the page free concern needs no hook" \
		"$(hook_field "$out" free kind)" poll
	check_eq "counters, no stacks: no page free program loaded" \
		"$(jqv "$out" '[.attribution.events_lost.recursion_misses_by_program | keys[] | select(test("page_free"))] | length')" 0
	check_eq "counters, no stacks: nothing missing for it" \
		"$(jqv "$out" '[.attribution_missing // .attribution.attribution_missing // [] | .[] | select(.concern == "free")] | length')" 0
	unattr=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
	meas=$(jqv "$out" .attribution.reconciliation.measured_growth_bytes)
	tol=$(( meas / 50 > 4 * MIB ? meas / 50 : 4 * MIB ))
	check_near "counters, no stacks: unattributed within max(2%, 4 MiB)" "$unattr" 0 "$tol"
	kill "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
	# an OOM kill at the peak: its snapshot may come as the victim exits,
	# its anon gone from memory.stat and /proc, the usage still holding it
	# (2 of 5 runs attributed 0.6 MiB of 256 MiB before record kept the
	# peak sample's memory.stat and the snapshot that accounts for most)
	out=$TMP/counters-oom.json
	"$MEMPROBE" record --limit 256M --memcg-from counters --format json -o "$out" -- "$BIN/alloc" 400 2>/dev/null
	check_eq "counters, OOM: ended by the kill" "$(jqv "$out" .run.ended_by)" oom_kill
	meas=$(jqv "$out" .attribution.reconciliation.measured_growth_bytes)
	unattr=$(jqv "$out" .attribution.reconciliation.unattributed_bytes)
	tol=$(( meas / 50 > 4 * MIB ? meas / 50 : 4 * MIB ))
	# (once -7 602 176 under the sanitizers, not seen again in 11 runs:
	# what the peak held, for the next time)
	echo "# counters, OOM: usage $(jqv "$out" .peak.usage_bytes), vector usage $(jqv "$out" .peak.vector_usage_bytes), categories $(jq -c '[.attribution.categories[] | select((.growth_bytes // 0) != 0) | [.name, .growth_bytes]]' "$out")"
	check_near "counters, OOM: unattributed at the peak within max(2%, 4 MiB)" "$unattr" 0 "$tol"
	check_within "counters, OOM: anon at the peak is the victim's 256 MiB within 2%" \
		"$(cat_field "$out" anon growth_bytes)" $((256 * MIB)) 0.02
	check "counters: nothing left behind" no_leftovers
}

# shellcheck shell=bash
# tests/integration/budget.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# page_cache_of DIR: the cgroup's page cache as the kernel counts it,
# inactive_file + active_file (v1: the total_ keys)
page_cache_of() {
	awk '/^total_(in)?active_file / { t += $2; v1 = 1 } /^(in)?active_file / { p += $2 }
	     END { print v1 ? t : p }' "$1/memory.stat"
}

# The budget says its basis: with page cache in the cgroup, the budget on
# the hard headroom (the cache counted as used) and the one on the soft
# headroom (the cache counted as room) side by side, the cache as the
# kernel counts it read beside.
test_budget_cache() {
	local cg out=$TMP/budget-cache.json d pid cache fs
	if ! d=$(mktemp -d /var/tmp/memprobe-test-bcache.XXXXXX 2>/dev/null); then
		skip "budget cache: no /var/tmp to write a file on disk"; return
	fi
	fs=$(stat -f -c %T "$d")
	if [ "$fs" = tmpfs ] || [ "$fs" = ramfs ]; then
		skip "budget cache: /var/tmp is $fs here, its pages are not reclaimable"
		rm -rf "$d"; return
	fi
	cg=$(make_cgroup bcache $((512 * MIB))) || { fail "budget cache: make cgroup"; rm -rf "$d"; return; }
	[ "$(cg_version "$cg")" = 2 ] && echo +memory > "$cg/cgroup.subtree_control"
	pid=$(run_in_cgroup "$cg" sh -c "dd if=/dev/zero of=$d/f bs=1M count=160 conv=fsync 2>/dev/null; exec sleep 600")
	wait_usage "$cg" $((150 * MIB)); sleep 0.5
	cache=$(page_cache_of "$cg")
	"$MEMPROBE" budget --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/budget-cache.err"
	echo "# budget with page cache: kernel's page cache $cache; $(jq -c '{budget_bytes, basis, budget_soft_bytes, cache: .figures.page_cache_bytes, room: .figures.room_bytes, soft_room: .figures.soft_room_bytes}' "$out")"
	check_eq "budget cache: the basis is the hard headroom" "$(jqv "$out" .basis)" hard_headroom
	check_within "budget cache: the page cache counted is the kernel's (5%)" \
		"$(jqv "$out" .figures.page_cache_bytes)" "$cache" 0.05
	check_eq "budget cache: soft room = room + page cache" \
		"$(jqv "$out" .figures.soft_room_bytes)" "$(jqv "$out" '.figures.room_bytes + .figures.page_cache_bytes')"
	check_within "budget cache: the soft budget is the hard one and the page cache (3%)" \
		"$(jqv "$out" .budget_soft_bytes)" "$(jqv "$out" '.budget_bytes + .figures.page_cache_bytes')" 0.03
	"$MEMPROBE" report "$out" > "$TMP/budget-cache.txt"
	check "budget cache: text: the basis, the cache counted as used" \
		grep -Eq "^  basis: the hard headroom \([0-9.]+ MiB\), the page cache in the usage \([0-9.]+ MiB\) counted as used$" "$TMP/budget-cache.txt"
	check "budget cache: text: hard headroom and soft room side by side, the soft budget" \
		grep -Eq "^  hard headroom [0-9.]+ MiB, soft room [0-9.]+ MiB: .* the budget would be [0-9.]+ MiB \($(jqv "$out" .budget_soft_bytes) bytes\)$" "$TMP/budget-cache.txt"
	# the soft room printed is the document's, the one the soft budget
	# stands on (it was hard + cache, named soft headroom, beside the
	# table's soft_headroom_bytes: two figures under one name)
	check "budget cache: text: ... the soft room is soft_room_bytes" \
		grep -Fq "soft room $(sed -n 's/^  soft_room_bytes *\(.*\) ([0-9]*)$/\1/p' "$TMP/budget-cache.txt"):" "$TMP/budget-cache.txt"
	check_eq "budget cache: env: the basis and the soft budget" \
		"$("$MEMPROBE" report "$out" --format env | grep -E '^MEMPROBE_BUDGET_(BASIS|SOFT_BYTES)=' | tr '\n' ' ')" \
		"MEMPROBE_BUDGET_BASIS=hard_headroom MEMPROBE_BUDGET_SOFT_BYTES=$(jqv "$out" .budget_soft_bytes) "
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"; rm -rf "$d"
	check "budget cache: nothing left behind" no_leftovers
}

# budget: probe a test cgroup, then a workload allocates exactly the budget
test_budget() {
	local cg cg2 out=$TMP/budget.json lim=$((512 * MIB)) a peak oom0 rc
	cg=$(make_cgroup budget $lim) || { fail "budget: make cgroup"; return; }
	[ "$(cg_version "$cg")" = 2 ] && echo +memory > "$cg/cgroup.subtree_control"
	"$MEMPROBE" budget --cgroup "$cg" --thp never --format json -o "$out" 2> "$TMP/budget.err"
	check_eq "budget: a budget document" "$(jqv "$out" .kind)" budget
	# the headroom beside the usage it is of (it was the target's as made:
	# 512 MiB beside a usage of 274 432)
	check_eq "budget: hard headroom = limit - usage in the figures" \
		"$(jqv "$out" .figures.hard_headroom_bytes)" "$(jqv "$out" '.figures.effective_limit_bytes - .figures.usage_bytes')"
	eval "$("$MEMPROBE" report "$out" --format env)"
	echo "# budget: $(tr '\n' ' ' <<< "$("$MEMPROBE" report "$out" --format env)")"
	check_ge "budget: MEMPROBE_BUDGET_BYTES set" "${MEMPROBE_BUDGET_BYTES:-}" $((256 * MIB))
	check_eq "budget: the margin is the probe's" "${MEMPROBE_BUDGET_MARGIN_BYTES:-}" $((32 * MIB))
	check "budget: text shows it" grep -q "^budget     .*bytes) for $cg" <<< "$("$MEMPROBE" report "$out")"
	"$MEMPROBE" report "$out" --format json > "$TMP/budget2.json"
	# --from a saved probe report gives the same figures
	"$MEMPROBE" probe --cgroup "$cg" --thp never --format json -o "$TMP/budget-probe.json" 2>/dev/null
	"$MEMPROBE" budget --from "$TMP/budget-probe.json" --format json -o "$TMP/budget-from.json"
	check_eq "budget --from: from the file" "$(jqv "$TMP/budget-from.json" .source)" file
	check_ge "budget --from: a budget" "$(jqv "$TMP/budget-from.json" .budget_bytes)" $((256 * MIB))
	# a negative overhead.probe_kernel_bytes (probe --reclaim-cache of a
	# cgroup holding page cache: its file -1060864, its page tables 12288)
	# is read; the kernel cost is its page tables, the reclaimed file no
	# kernel cost: 64 MiB limit, 512 KiB usage, 3 MiB overhead, 2 MiB
	# allowance, 4 MiB margin: 54 MiB
	# (a fixture: the kernel guests have tests/run-integration.sh, not
	# tests/fixtures; the unit test test_budget reads it there too)
	local neg
	neg="$(dirname "$0")/fixtures/probe-negative-kernel.json"
	if [ ! -e "$neg" ]; then
		skip "budget --from a negative probe_kernel_bytes: no $neg here"
	else
		"$MEMPROBE" budget --from "$neg" --format json -o "$TMP/budget-neg.json" \
			2> "$TMP/budget-neg.err"; rc=$?
		check_eq "budget --from a negative probe_kernel_bytes: exit 0" "$rc $(cat "$TMP/budget-neg.err")" "0 "
		check_eq "budget --from a negative probe_kernel_bytes: the budget" \
			"$(jqv "$TMP/budget-neg.json" .budget_bytes)" $((54 * MIB))
		check_eq "budget --from a negative probe_kernel_bytes: its kernel part the page tables" \
			"$(jqv "$TMP/budget-neg.json" .figures.probe_kernel_bytes)" 12288
	fi
	# a margin the room cannot hold: a budget of 0 is no budget, exit 1
	# (a failure at run time), one line saying what took the room; json
	# keeps the document whole, env assigns nothing an eval could take
	"$MEMPROBE" budget --from "$TMP/budget-probe.json" --margin $lim --format env \
		> "$TMP/budget0.env" 2> "$TMP/budget0.err"; rc=$?
	check_eq "budget 0: exit status 1" "$rc" 1
	check_eq "budget 0: one line on stderr" "$(wc -l < "$TMP/budget0.err")" 1
	check "budget 0: ... says the budget is 0 and what took the room ($(cat "$TMP/budget0.err"))" \
		grep -qE "^memprobe budget: the budget is 0 B: nothing fits: the room, .* is no more than .* the margin 512\.0 MiB; " "$TMP/budget0.err"
	check_eq "budget 0: env: no assignment at all" "$(grep -c '^[^#]' "$TMP/budget0.env")" 0
	check_eq "budget 0: env: eval sets no MEMPROBE_BUDGET_BYTES" \
		"$(unset MEMPROBE_BUDGET_BYTES; eval "$(cat "$TMP/budget0.env")"; echo "${MEMPROBE_BUDGET_BYTES-unset}")" unset
	"$MEMPROBE" budget --from "$TMP/budget-probe.json" --margin $lim --format json \
		-o "$TMP/budget0.json" 2> /dev/null; rc=$?
	check_eq "budget 0: json: exit status 1" "$rc" 1
	check_eq "budget 0: json: the document, budget_bytes 0, the margin asked" \
		"$(jq -c '[.kind, .budget_bytes, .figures.margin_bytes]' "$TMP/budget0.json")" "[\"budget\",0,$lim]"
	check "budget 0: text says nothing fits" grep -q "^  nothing fits: the room" \
		<("$MEMPROBE" report "$TMP/budget0.json")
	check_eq "budget 0: report --format env of it: no assignment either" \
		"$("$MEMPROBE" report "$TMP/budget0.json" --format env | grep -c '^[^#]')" 0
	# a probe cut short measured part of the fill: no budget from it
	jq '.interrupted = true' "$TMP/budget-probe.json" > "$TMP/budget-int.json"
	expect_bad "budget --from an interrupted probe" "$MEMPROBE" budget --from "$TMP/budget-int.json"
	check "budget: ... says it did not run to its end" grep -q "did not run to its end" "$TMP/bad.err"
	expect_bad "budget --from with a probe option" "$MEMPROBE" budget --from "$TMP/budget-probe.json" --thp never
	check "budget: ... named as the probe's, not as unknown" grep -q -- "--thp is the probe's, and --from runs no probe" "$TMP/bad.err"
	expect_bad "budget --from with a probe option's short form" "$MEMPROBE" budget --from "$TMP/budget-probe.json" -c /tmp
		expect_bad "budget --from a limits document" sh -c "\"$MEMPROBE\" limits --format json > $TMP/lim.json && exec \"$MEMPROBE\" budget --from $TMP/lim.json"
	# the workload allocates exactly the budget in a fresh cgroup of the same
	# limit (its peak counter starts at zero)
	cg2=$(make_cgroup budget-run $lim)
	oom0=$(oom_kills "$cg2")
	a=$(run_in_cgroup "$cg2" "$BIN/alloc" $((MEMPROBE_BUDGET_BYTES / MIB)))
	wait_usage "$cg2" "$MEMPROBE_BUDGET_BYTES" || true
	sleep 1
	# v2 before 5.19 keeps no memory.peak: the usage, with the workload
	# holding all it allocated, is its peak
	if [ -e "$cg2/memory.max_usage_in_bytes" ]; then peak=$(cat "$cg2/memory.max_usage_in_bytes")
	elif [ -e "$cg2/memory.peak" ]; then peak=$(cat "$cg2/memory.peak")
	else peak=$(cat "$cg2/memory.current"); fi
	echo "# budget $MEMPROBE_BUDGET_BYTES allocated: peak $peak, limit - margin $((lim - MEMPROBE_BUDGET_MARGIN_BYTES)), free at peak $((lim - peak))"
	check "budget: the workload allocating the budget is alive" kill -0 "$a"
	check_ge "budget: ... it holds the budget" "$peak" "$MEMPROBE_BUDGET_BYTES"
	check_eq "budget: ... not OOM-killed" "$(oom_kills "$cg2")" "$oom0"
	check_le "budget: ... its peak leaves the margin free" "$peak" $((lim - MEMPROBE_BUDGET_MARGIN_BYTES))
	kill -9 "$a"; wait "$a" 2>/dev/null
	remove_cgroup "$cg2"; remove_cgroup "$cg"
	check "budget: nothing left behind" no_leftovers
}

# budget --from reads its file with the loader `report` uses
# (mp_doc_load_file): what is not a document is refused as report refuses
# it, one "problem; fix" line, exit 2, never a hang. Before, its own fopen
# waited forever for a FIFO's writer and read a directory as "Is a
# directory". timeout only guards the run: 124 is a failure.
test_budget_from_files() {
	local d=$TMP/budget-files rc neg
	mkdir -p "$d"
	from_refused() { # WHAT WANT FILE
		timeout 60 "$MEMPROBE" budget --from "$3" > "$TMP/bad.out" 2> "$TMP/bad.err" < /dev/null
		rc=$?
		if [ "$rc" = 2 ] && [ "$(wc -l < "$TMP/bad.err")" = 1 ] && [ ! -s "$TMP/bad.out" ] &&
			grep -qF "memprobe budget: --from $3: $2" "$TMP/bad.err"; then
			pass "budget --from $1 ($(cat "$TMP/bad.err"))"
		else
			fail "budget --from $1: exit $rc, want 2 and '$2': $(head -c 300 "$TMP/bad.err")"
		fi
	}
	mkfifo "$d/fifo.json"; from_refused "a FIFO nobody writes" "a FIFO, not a document" "$d/fifo.json"
	mkdir "$d/dir.json"; from_refused "a directory" "a directory, not a document" "$d/dir.json"
	from_refused "/dev/zero" "a character device, not a document" /dev/zero
	truncate -s $((300 * MIB)) "$d/sparse.json"
	from_refused "a file over the size limit" "larger than a memprobe document can be (256 MiB)" "$d/sparse.json"
	from_refused "a missing file" "cannot open it (No such file or directory)" "$d/none.json"
	# - is standard input, as for report
	neg="$(dirname "$0")/fixtures/probe-negative-kernel.json"
	if [ ! -e "$neg" ]; then
		skip "budget --from -: no $neg here"
	else
		timeout 60 "$MEMPROBE" budget --from - --format json < "$neg" > "$d/stdin.json" 2> "$TMP/bad.err"
		check_eq "budget --from - reads standard input: exit 0, the fixture's budget" \
			"$? $(jqv "$d/stdin.json" .budget_bytes)" "0 $((54 * MIB))"
	fi
	rm -rf "$d"
}

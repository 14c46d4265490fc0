# shellcheck shell=bash
# tests/integration/cli.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

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
	# sizes are binary (as memory.max takes them): 1GB, 10^9 bytes to SI
	# and 2^30 to Docker, was taken as 2^30; a fraction of a byte was
	# rounded down. Both refused now, before the missing pid is looked at.
	expect_bad "size 1GB" "$MEMPROBE" probe --chunk 1GB --pid $missing_pid
	check_eq "bad input: ... names both readings and the binary spellings" "$(cat "$TMP/bad.err")" \
		"memprobe probe: --chunk 1GB: GB means 10^9 bytes to some, 2^30 to others; give 1G or 1GiB (2^30), or a byte count"
	expect_bad "size 268435456.5" "$MEMPROBE" record --limit 268435456.5 -- true
	check_eq "bad input: ... a fraction of a byte" "$(cat "$TMP/bad.err")" \
		"memprobe record: --limit 268435456.5: a fraction of a byte; give whole bytes, or a fraction of a unit such as 1.5G"
	expect_bad "size 100B" "$MEMPROBE" budget --margin 100B --pid $missing_pid
	check_match "bad input: ... not a size" "$(cat "$TMP/bad.err")" -F -- "--margin 100B: not a size"
	check_empty "bad input: 1G, 1GiB, 1Gi, 1024M, 1.5G and 4096 are sizes (the pid refused, not they)" \
		"$(for s in 1G 1GiB 1Gi 1024M 1.5G 4096; do
			"$MEMPROBE" probe --chunk $s --pid $missing_pid 2>&1 | grep -- --chunk; done)"
	expect_bad "chunk 0" "$MEMPROBE" probe --chunk 0
	# with no target given, the line saying which stand-in or cgroup is
	# probed came first: two lines for one bad size
	expect_bad "chunk not a page multiple, no target given" "$MEMPROBE" probe --chunk 1000
	expect_bad "margin above the default stand-in's limit, no target given" "$MEMPROBE" probe --margin 2G
	expect_bad "limit below one chunk" "$MEMPROBE" probe --limit 16M --chunk 32M
	expect_bad "unknown thp mode" "$MEMPROBE" probe --thp sometimes
	expect_bad "unknown format" "$MEMPROBE" limits --format yaml
	expect_bad "unknown option" "$MEMPROBE" probe --frobnicate
	# a known option given last without its value was called "unknown
	# option or missing value": now it is named, with what it takes
	expect_bad "--limit without its value" "$MEMPROBE" probe --limit
	check_eq "bad input: ... the line names the option and its value" "$(cat "$TMP/bad.err")" \
		"memprobe probe: --limit needs a value (SIZE); see memprobe probe --help"
	expect_bad "-c without its value" "$MEMPROBE" limits -c
	check_eq "bad input: ... the short form named by its long name" "$(cat "$TMP/bad.err")" \
		"memprobe limits: --cgroup needs a value (PATH); see memprobe limits --help"
	expect_bad "output in a missing directory" "$MEMPROBE" probe -o /no/such/dir/report.json
	expect_bad "unknown command" "$MEMPROBE" frobnicate
	check "bad input: no report file created" [ ! -e /no/such/dir/report.json ]
	# -o to a device is written in place (a temporary file renamed over
	# /dev/null once replaced the device with a regular file)
	"$MEMPROBE" probe --limit 64M -o /dev/null 2>/dev/null
	check "-o /dev/null leaves /dev/null a character device" [ -c /dev/null ]
	"$MEMPROBE" probe --limit 64M --format json -o /dev/stdout 2>/dev/null | jq -e .allocated_bytes > /dev/null
	check_eq "-o /dev/stdout writes the report to standard output" "$?" 0
	expect_bad "record --interval 0" "$MEMPROBE" record --interval 0 --limit 64M -- true
	expect_bad "record with nothing to record" "$MEMPROBE" record
	expect_bad "record --limit without a command" "$MEMPROBE" record --cgroup / --limit 1G
	expect_bad "record --duration -3" "$MEMPROBE" record --duration -3 -- true
	expect_bad "record --pid missing" "$MEMPROBE" record --pid $missing_pid
	expect_bad "--btf missing file" "$MEMPROBE" probe --limit 64M --btf /no/such/vmlinux
	expect_bad "--btf not BTF" "$MEMPROBE" probe --limit 64M --btf /proc/self/status
	head -c 100000 /sys/kernel/btf/vmlinux > "$TMP/truncated.btf"
	expect_bad "--btf truncated BTF" "$MEMPROBE" probe --limit 64M --btf "$TMP/truncated.btf"
	expect_bad "--btf an ELF without .BTF" "$MEMPROBE" probe --limit 64M --btf "$MEMPROBE"
	if [ -f "${MEMPROBE%/*}/memprobe.bpf.o" ]; then
		expect_bad "--btf a BPF object's BTF, not a kernel's" "$MEMPROBE" limits --features --btf "${MEMPROBE%/*}/memprobe.bpf.o"
	else
		skip "bad input: --btf a BPF object's BTF: no memprobe.bpf.o beside $MEMPROBE"
	fi
	expect_bad "limits --features --format env" "$MEMPROBE" limits --features --format env
	expect_bad "--btf not BTF (record)" "$MEMPROBE" record --btf /etc/hostname -- true
	expect_bad "limits --btf without --features" "$MEMPROBE" limits --btf /sys/kernel/btf/vmlinux
	expect_bad "limits --features with --cgroup" "$MEMPROBE" limits --features --cgroup /
	# -o over the --btf it reads: the report was renamed over the BTF
	cp /sys/kernel/btf/vmlinux "$TMP/own.btf"
	expect_bad "limits --features --btf X -o X" "$MEMPROBE" limits --features --btf "$TMP/own.btf" -o "$TMP/own.btf"
	expect_bad "probe --btf X -o X" "$MEMPROBE" probe --limit 64M --btf "$TMP/own.btf" -o "$TMP/own.btf"
	check "bad input: ... the BTF file is as it was" cmp -s /sys/kernel/btf/vmlinux "$TMP/own.btf"
	rm -f "$TMP/own.btf"
}

# ---------------------------------------------------------------------------
# The command line: the command table, --version, and each command's --help
# listing its options with their defaults from the same table the parser uses.
# help_opt CMD OPTION: the --help entry of OPTION ("--top N ..."), its
# continuation lines joined into one
help_opt() {
	"$MEMPROBE" "$1" --help | awk -v opt="$2" '
		/^  (-[a-zA-Z], |    )--/ { if (hit) exit; hit = $0 ~ ("^  (-[a-zA-Z], |    )" opt "( |$)") }
		/^                          / && hit { sub(/^ +/, " "); line = line $0; next }
		hit && !line { line = $0 }
		END { print line }'
}

test_cli() {
	local st src want got rc opt all form syn took f cg=$(own_memcg_dir)
	src=$(cd "$(dirname "$0")/.." && pwd)
	# the version the documents carry: `git describe` of the tree it was built from
	got=$("$MEMPROBE" --version); rc=$?
	check_eq "cli: --version exits 0" "$rc" 0
	check_eq "cli: -V says what --version says" "$("$MEMPROBE" -V)" "$got"
	if want=$(git -C "$src" describe --always --dirty --tags 2>/dev/null); then
		check_eq "cli: --version is git describe of the tree" "$got" "memprobe $want"
	else
		# a guest of the kernel matrix: no git, the binary built elsewhere
		echo "# no git checkout at $src: --version checked for its form only"
		check_match "cli: --version is 'memprobe VERSION'" "$got" -xE 'memprobe [^ ]+'
	fi
	# the command table: usage, help, unknown command
	"$MEMPROBE" > "$TMP/cli.out" 2> "$TMP/cli.err"; rc=$?
	check_eq "cli: no command: exit status" "$rc" 2
	check "cli: no command: the usage on stderr, nothing on stdout" [ ! -s "$TMP/cli.out" -a -s "$TMP/cli.err" ]
	for c in limits probe record budget report help; do
		check "cli: the usage lists $c" grep -qE "^  $c +[a-z]" "$TMP/cli.err"
	done
	check_eq "cli: --help is the usage, on stdout" "$("$MEMPROBE" --help 2>&1)" "$(cat "$TMP/cli.err")"
	check_eq "cli: help is the usage" "$("$MEMPROBE" help 2>&1)" "$(cat "$TMP/cli.err")"
	# help's own help, as every command's: exit 0, the usage on stdout
	for opt in help --help -h; do
		"$MEMPROBE" help $opt > "$TMP/cli.out" 2> "$TMP/cli.help.err"; rc=$?
		check_eq "cli: help $opt exits 0" "$rc" 0
		check_eq "cli: help $opt is the usage, on stdout" "$(cat "$TMP/cli.out")" "$(cat "$TMP/cli.err")"
		check_eq "cli: help $opt: nothing on stderr" "$(cat "$TMP/cli.help.err")" ""
	done
	"$MEMPROBE" frobnicate > "$TMP/cli.out" 2> "$TMP/cli.err"; rc=$?
	check_eq "cli: unknown command: exit status" "$rc" 2
	check_eq "cli: unknown command: one line naming the commands" "$(cat "$TMP/cli.err")" \
		"memprobe: unknown command 'frobnicate'; use limits, probe, record, budget, report or compare (memprobe --help)"
	check "cli: unknown command: nothing on stdout" [ ! -s "$TMP/cli.out" ]
	# each command's --help: exit 0, on stdout, every option with its default
	for c in limits probe record budget; do
		"$MEMPROBE" $c --help > "$TMP/cli.out" 2> "$TMP/cli.err"; rc=$?
		check_eq "cli: $c --help exits 0" "$rc" 0
		check "cli: $c --help on stdout only" [ -s "$TMP/cli.out" -a ! -s "$TMP/cli.err" ]
		check "cli: $c --help starts with its synopsis" grep -q "^usage: memprobe $c " "$TMP/cli.out"
		check_eq "cli: $c -h is --help" "$("$MEMPROBE" $c -h)" "$(cat "$TMP/cli.out")"
		check_eq "cli: help $c is $c --help" "$("$MEMPROBE" help $c)" "$(cat "$TMP/cli.out")"
		check_match "cli: $c --help: -f, --format with its default" "$(help_opt $c --format)" -- "-f, --format FORMAT .*(default: text)"
		check "cli: $c --help: -c, --cgroup and -p, --pid" grep -q -- "-c, --cgroup PATH" "$TMP/cli.out"
		check "cli: $c --help: -p, --pid" grep -q -- "-p, --pid PID" "$TMP/cli.out"
		check "cli: $c --help: -h, --help" grep -q -- "-h, --help" "$TMP/cli.out"
	done
	for c in probe record budget; do
		check_match "cli: $c --help: -o, --output" "$(help_opt $c --output)" -- "-o, --output FILE .*(default: standard output)"
		check_match "cli: $c --help: -l, --limit" "$(help_opt $c --limit)" -- "-l, --limit SIZE"
		check_match "cli: $c --help: --top defaults to 10" "$(help_opt $c --top)" -- "--top N .*(default: 10)$"
		check_match "cli: $c --help: --stack-sample defaults to 1" "$(help_opt $c --stack-sample)" -- "--stack-sample N .*(default: 1)$"
		check "cli: $c --help: --btf" grep -q -- "--btf FILE" "$TMP/cli.out"
	done
	check "cli: limits --help lists -o, as every command's does" grep -qE -- "^  -o, --output FILE" <<< "$("$MEMPROBE" limits --help)"
	"$MEMPROBE" probe --help > "$TMP/cli.out"
	for opt in --cgroup --pid --limit --chunk --margin --thp --format --output --stack-sample --fault-tracepoint --memcg-from --top --threads --populate --btf --fill-host --to-limit --reclaim-cache --help; do
		check "cli: probe --help lists $opt" grep -qE -- "^  (-[a-z], |    )$opt( |\$)" "$TMP/cli.out"
	done
	check_match "cli: probe --help: --chunk's default" "$(help_opt probe --chunk)" -- "--chunk SIZE .*(default: limit/32 in 2 MiB steps, 2 MiB to 1 GiB)"
	check_match "cli: probe --help: --margin's default" "$(help_opt probe --margin)" -- "--margin SIZE .*(default: limit/16 in 2 MiB steps, 2 MiB to 2 GiB)"
	check_match "cli: probe --help: --limit's default" "$(help_opt probe --limit)" -- "--limit SIZE .*(default: 1G; in a limited cgroup, that cgroup)"
	check_match "cli: probe --help: --thp's default" "$(help_opt probe --thp)" -- "--thp MODE .*(default: auto)"
	check_match "cli: probe --help: --threads' default" "$(help_opt probe --threads)" -- "--threads N .*(default: 1)"
	check_match "cli: probe --help: --memcg-from's default" "$(help_opt probe --memcg-from)" -- "--memcg-from SOURCE .*(default: counters on cgroup v2, tracepoint on v1)"
	"$MEMPROBE" probe --limit 64M --memcg-from events -o /dev/null 2> "$TMP/cli.err"; st=$?
	check_eq "cli: --memcg-from events: exit 2" "$st" 2
	check_eq "cli: --memcg-from events: one line naming the value and the fix" "$(cat "$TMP/cli.err")" \
		"memprobe probe: --memcg-from events: no such source; give tracepoint or counters"
	"$MEMPROBE" record --help > "$TMP/cli.out"
	for opt in --cgroup --pid --limit --duration --interval --probe-at --format --output --stack-sample --fault-tracepoint --memcg-from --top --ready-fd --btf --help; do
		check "cli: record --help lists $opt" grep -qE -- "^  (-[a-z], |    )$opt( |\$)" "$TMP/cli.out"
	done
	check_match "cli: record --help: --interval's default" "$(help_opt record --interval)" -- "--interval MS .*(default: 100)"
	# the README as the program is: compare's synopsis (it said
	# "compare A.json B.json [C.json ...]", one report is taken) and the
	# limits env example, a budget never negative (a 1 GiB limit gave
	# 1 GiB - 2 GiB)
	check_eq "cli: README's compare synopsis is --help's" \
		"$(sed -n 's/^### `memprobe compare \(A.json \[B.json ...\]\) .*/\1/p' "$src/README.md")" \
		"$("$MEMPROBE" compare --help | sed -n 's/^usage: memprobe compare \(A.json \[B.json ...\]\) .*/\1/p')"
	got=$(sed -n '/^eval "\$(memprobe limits --format env)"$/,/^```$/p' "$src/README.md" | sed '1d;$d')
	check_eq "cli: README's limits env example, a 1 GiB limit with 10 MiB headroom: budget 0, not negative" \
		"$(MEMPROBE_EFFECTIVE_LIMIT_BYTES=$((1024 * MIB)) MEMPROBE_HEADROOM_BYTES=$((10 * MIB)) bash -c "$got"'; echo "$budget"')" 0
	check_eq "cli: ... with 900 MiB headroom: 900 MiB less limit/16" \
		"$(MEMPROBE_EFFECTIVE_LIMIT_BYTES=$((1024 * MIB)) MEMPROBE_HEADROOM_BYTES=$((900 * MIB)) bash -c "$got"'; echo "$budget"')" $((836 * MIB))
	check_empty "cli: every --help line fits in 80 columns (the longer ones)" \
		"$(for c in limits probe record report budget compare; do "$MEMPROBE" $c --help; done | awk 'length > 79')"
	# each synopsis' format list is what its parser takes, no more, no fewer:
	# every renderer's name tried with a target or file that cannot be, so
	# that a format taken fails later, on something that is not the format
	all=$("$MEMPROBE" report --format '?' /dev/null 2>&1 | sed 's/.*; use //; s/ or /, /g; s/, / /g')
	check_match "cli: the renderers' names, from report's message ($all)" "$all" -w openmetrics
	for form in "limits --cgroup /nonexistent-memprobe-test" \
		    "limits --features" \
		    "budget --from /nonexistent-memprobe-test.json" \
		    "compare /nonexistent-memprobe-test.json"; do
		# the form's own line of the synopsis: limits has two lists, in order
		syn=$("$MEMPROBE" ${form%% *} --help | sed '/^options:/,$d' | grep -oE -- '(-f|--format) [a-z|]+' |
			sed -n "$([ "$form" = "limits --features" ] && echo 2 || echo 1)p" | cut -d' ' -f2)
		took=""
		for f in $all; do
			# --features loads BPF as root: as nobody a format taken
			# is refused for the user instead
			if [ "$form" = "limits --features" ]; then
				setpriv --reuid=65534 --regid=65534 --clear-groups "$MEMPROBE" $form -f "$f" \
					> /dev/null 2> "$TMP/cli.err"
			else
				"$MEMPROBE" $form -f "$f" > /dev/null 2> "$TMP/cli.err"
			fi
			grep -q format "$TMP/cli.err" || took=$took${took:+|}$f
		done
		# as sets: compare lists its own table's order
		check_eq "cli: ${form%% /*} --help: the synopsis' formats are the parser's" \
			"$(tr '|' '\n' <<< "$syn" | sort | tr '\n' ' ')" "$(tr '|' '\n' <<< "$took" | sort | tr '\n' ' ')"
	done
	check_eq "cli: limits --help: the synopsis lists every limits format" \
		"$("$MEMPROBE" limits --help | sed -n 2p | tr -d ' ')" "[-ftext|json|env|markdown|openmetrics]"
	# the same short options everywhere
	"$MEMPROBE" limits -c "$cg" -f json > "$TMP/cli.json"
	check_eq "cli: limits -c DIR -f json" "$(jqv "$TMP/cli.json" .cgroup.dir)" "$cg"
	expect_bad "probe -l 3M (below 16 MiB)" "$MEMPROBE" probe -l 3M
	check "... says --limit and the minimum" grep -q -- "--limit 3M: below 16 MiB" "$TMP/bad.err"
	expect_bad "record -l 3M (below 4 MiB)" "$MEMPROBE" record -l 3M -- true
	check "... says --limit and the minimum" grep -q -- "--limit 3M: below 4 MiB" "$TMP/bad.err"
	expect_bad "probe -f yaml" "$MEMPROBE" probe -f yaml
	# the renderer table's names, whichever renderers it has
	check "... says --format and the formats" grep -qE -- "--format yaml: unknown; use text, json(, [a-z]+)* or openmetrics$" "$TMP/bad.err"
	check "... says --format, naming the renderers" grep -q -- "--format yaml: unknown; use text, json, markdown, csv, folded\(,\| or\) html" "$TMP/bad.err"
	expect_bad "record -o DIR" "$MEMPROBE" record -o "$TMP" -- true
	expect_bad "record -c / -p 1" "$MEMPROBE" record -c / -p 1
	check "... says they are exclusive" grep -q "are exclusive" "$TMP/bad.err"
	expect_bad "limits --cgroup twice" "$MEMPROBE" limits -c / -c /
	check "... says given twice" grep -q -- "--cgroup given twice" "$TMP/bad.err"
	expect_bad "record --top not a count" "$MEMPROBE" record --top x -- true
	check "... names --top" grep -q -- "--top x: not a count" "$TMP/bad.err"
	expect_bad "record --limit 0" "$MEMPROBE" record --limit 0 -- true
	# record's options end at the command's name, even without --: sh's -c is sh's
	"$MEMPROBE" record -l 64M -f json -o "$TMP/cli.json" sh -c 'exit 3' 2>/dev/null; rc=$?
	check_eq "cli: record CMD -c ...: the command's own option; its exit status" "$rc" 3
	check_eq "cli: ... the report's command" "$(jqv "$TMP/cli.json" '.run.command | tojson')" '["sh","-c","exit 3"]'
	check "cli: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# The rules of the suite: no_leftovers' exemptions, on a tree of its own.
test_rules() {
	local root=$TMP/leftover-root
	mkdir -p "$root/a/memprobe-test-other-1/memprobe-target-7" "$root/b/memprobe-bench-2/memprobe-probe-8"
	LEFTOVER_ROOT=$root no_leftovers > /dev/null
	check_eq "rules: another run's test and bench cgroups, with what they hold, are not ours" $? 0
	mkdir -p "$root/c/memprobe-test-mine-$$/inner" "$root/c/memprobe-test-mine-$$/memprobe-run-9"
	LEFTOVER_ROOT=$root no_leftovers > /dev/null
	check_eq "rules: a memprobe cgroup left inside our own test cgroup is a leftover" $? 1
	rm -r "$root/c"; mkdir -p "$root/d/memprobe-target-5"
	LEFTOVER_ROOT=$root no_leftovers > /dev/null
	check_eq "rules: a memprobe cgroup anywhere else is a leftover" $? 1
	# ... unless its memprobe still runs (another run's, beside ours): a
	# process named memprobe, started here and killed by its pid (its argv[0]
	# stays sleep: a guest's sleep is busybox, which goes by argv[0])
	local live i
	cp "$(command -v sleep)" "$TMP/memprobe"
	bash -c 'exec -a sleep "$0" 30' "$TMP/memprobe" & live=$!
	for i in $(seq 500); do
		[ "$(cat "/proc/$live/comm" 2>/dev/null)" = memprobe ] && break
		sleep 0.01
	done
	rm -r "$root/d"; mkdir -p "$root/e/memprobe-run-$live"
	LEFTOVER_ROOT=$root no_leftovers > /dev/null
	check_eq "rules: the cgroup of a memprobe still running is not a leftover" $? 0
	kill "$live"; wait "$live" 2>/dev/null
	LEFTOVER_ROOT=$root no_leftovers > /dev/null
	check_eq "rules: ... and is one once it is gone" $? 1
	rm -r "$root" "$TMP/memprobe"
	test_rules_checks
}

# The checks and filters of lib.sh on what they print and on a document of
# known content.
test_rules_checks() {
	local got doc=$TMP/ids.json
	# in a subshell: its passes and failures are not this suite's
	got=$(TESTS_PASSED=0 TESTS_FAILED=0 TESTS_SKIPPED=0
		check_eq "e" 1 2; check_le "l" 3 2; check_ge "g" "" 2; check_within "w" 94 100 0.05
		check_within "n" null 100 0.05; check_within "ok" -96 -100 0.05; skip "s: why"
		summary lib)
	check_eq "rules: a failed check prints got and want" "$(echo "$got" | head -n 5 | tr '\n' '|')" \
		"not ok - e (got '1', want '2')|not ok - l (got '3', want <= '2')|not ok - g (got '', want >= '2')|not ok - w (got '94', want '100' within 5%)|not ok - n (got 'null', want '100' within 5%)|"
	check_eq "rules: a skip is counted and said" "$(echo "$got" | tail -n 3 | tr '\n' '|')" \
		"ok - ok|skip - s: why|lib: 1 passed, 5 failed, 1 skipped|"
	cat > "$doc" <<-'EOF'
	{"attribution": {
	  "hooks": [{"concern": "faults", "kind": "poll", "target": "memory.stat pgfault"}],
	  "attribution_missing": [
	    {"concern": "alloc", "category": null, "reason": "no_hook", "message": "page allocation: ..."},
	    {"concern": "memcg", "category": "pagetables", "reason": "no_stat_item", "message": "..."}],
	  "categories": [{"name": "anon", "growth_bytes": 30, "source": "memory.stat", "tasks": [
	    {"pid": 1, "comm": "stress-ng-vm", "bytes": 20}, {"pid": 2, "comm": "stress-ng", "bytes": 7},
	    {"pid": null, "comm": "(rest)", "bytes": 3}]}],
	  "kernel_paths": [{"path": "slab", "alloc_bytes": 8, "top_stacks": [{"frames": ["d_alloc+0x1", "x"]}]},
	    {"path": "slab", "alloc_bytes": 4, "top_stacks": []}]}}
	EOF
	check "rules: says_missing by concern and reason" says_missing "$doc" --concern alloc --reason no_hook
	check "rules: says_missing by a null category" says_missing "$doc" --concern alloc --category null
	check "rules: says_missing by category alone" says_missing "$doc" --category pagetables
	check "rules: says_missing: every id given must match" eval '! says_missing "$doc" --concern alloc --category pagetables'
	check_eq "rules: says_missing: a bad option is an error, not a miss" "$(says_missing "$doc" --kind x 2> /dev/null; echo $?)" 2
	check_eq "rules: cat_field" "$(cat_field "$doc" anon source) $(cat_field "$doc" file source)" "memory.stat null"
	check_eq "rules: task_bytes by comm and by prefix" "$(task_bytes "$doc" anon stress-ng) $(task_bytes "$doc" anon 'stress-ng*') $(task_bytes "$doc" file x)" "7 27 0"
	check_eq "rules: top_task" "$(top_task "$doc" anon comm)" stress-ng-vm
	check_eq "rules: hook_field" "$(hook_field "$doc" faults kind) $(hook_field "$doc" oom kind)" "poll null"
	check_eq "rules: path_field sums a class" "$(path_field "$doc" kernel_paths slab alloc_bytes)" 12
	check_eq "rules: path_frames" "$(path_frames "$doc" slab '^d_alloc')" 1
}

# Targets that must be refused, or named for what they are.
test_targets() {
	local z c cg mnt rootcg out=$TMP/targets.json rc want
	# a zombie: its /proc/PID/cgroup names the root, which must not become the target
	( sleep 0.01 & exec sleep 30 ) &
	c=$!; STARTED_PIDS+=($c)
	for i in $(seq 200); do z=$(children $c | head -n 1); [ -n "$z" ] && grep -q '^State:.*Z' /proc/$z/status 2>/dev/null && break; sleep 0.01; done
	echo "# zombie pid $z: $(grep State: /proc/$z/status 2>/dev/null)"
	expect_bad "limits --pid of a zombie" "$MEMPROBE" limits --pid "$z"
	expect_bad "probe --pid of a zombie" "$MEMPROBE" probe --pid "$z"
	expect_bad "record --pid of a zombie" "$MEMPROBE" record --pid "$z"
	kill -9 $c; wait $c 2>/dev/null
	# the host's root memory cgroup: probe refuses (it would fill the host)
	# (the tests may run in it themselves, as in the QEMU guests)
	rootcg=$(own_memcg_dir); while [ "$(stat -c %i "$rootcg")" != 1 ] && [ "$rootcg" != / ]; do rootcg=$(dirname "$rootcg"); done
	echo "# the host's root memory cgroup: $rootcg"
	expect_bad "probe of the host's root memory cgroup" "$MEMPROBE" probe --cgroup "$rootcg"
	expect_bad "probe --pid 1 (in the root memory cgroup)" sh -c "grep -qE ':memory:/\$|^0::/\$' /proc/1/cgroup && exec \"$MEMPROBE\" probe --pid 1 || { echo 'pid 1 is not in the root memory cgroup here' >&2; exit 2; }"
	"$MEMPROBE" limits --cgroup "$rootcg" --format json > "$out"
	check_eq "limits of the root: says it is the host's root" "$(jqv "$out" .cgroup.host_root)" true
	cg=$(make_cgroup notroot $((256 * MIB)))
	"$MEMPROBE" limits --cgroup "$cg" --format json > "$out"
	check_eq "limits of a test cgroup: not the root" "$(jqv "$out" .cgroup.host_root)" false
	remove_cgroup "$cg"
	if [ "$(cg_version "$rootcg")" = 1 ]; then
		"$MEMPROBE" record --cgroup "$rootcg" --duration 0.5 --format json -o "$out" 2> "$TMP/err"; rc=$?
		check_eq "record of the root: runs" "$rc" 0
		check_eq "record of the root: the report names it the host's root" "$(jqv "$out" .target.host_root)" true
		check "record of the root: says it records the whole host" grep -q "is the host's root memory cgroup: recording the whole host" "$TMP/err"
	else
		# the v2 root keeps no memory.current: recording it is the open issue 11
		skip "record of the root: the v2 root keeps no memory.current (issue 11)"
	fi
	expect_bad "record --probe-at on the root" "$MEMPROBE" record --cgroup "$rootcg" --duration 3 --probe-at 1
	# a directory that is not a memory cgroup; a symbolic link to one that is
	mkdir -p "$TMP/notcg"
	expect_bad "--cgroup of a directory that is not a memory cgroup" "$MEMPROBE" limits --cgroup "$TMP/notcg"
	check "... says it is not a memory cgroup" grep -q "a directory, but not a memory cgroup" "$TMP/bad.err"
	cg=$(make_cgroup link $((256 * MIB)))
	ln -s "$cg" "$TMP/cglink"
	"$MEMPROBE" limits --cgroup "$TMP/cglink" --format json > "$out"
	check_eq "--cgroup through a symbolic link: the cgroup it names" "$(jqv "$out" .cgroup.dir)" "$cg"
	remove_cgroup "$cg"
	# no target, memprobe in a limited cgroup it may write (a container
	# whose cgroup filesystem is writable): that cgroup, probed from a
	# child of its own (before: "--limit 1G: above the effective limit of
	# memprobe's own cgroup; give a smaller --limit", exit 2)
	cg=$(make_cgroup own $((128 * MIB)))
	bash -c 'echo $$ > "$0/cgroup.procs" && exec "$1" probe --thp never --format json -o "$2"' \
		"$cg" "$MEMPROBE" "$out" 2> "$TMP/err"; rc=$?
	check_eq "no target in a limited cgroup: exit 0 ($(head -c 300 "$TMP/err" | tr '\n' ' '))" "$rc" 0
	# (on v2 a cgroup with processes delegates nothing: from inside it)
	want=false; [ "$(cg_version "$cg")" = 2 ] && want=true
	check_eq "... probes that cgroup, chosen and said so, from a child cgroup of its own (v1)" \
		"$(jq -r --arg cg "$cg" '"\(.target.dir == $cg) \(.target.created_by_memprobe) \(.target | has("chosen_why")) \(.probe.in_target) \(.probe.cgroup | startswith($cg)) \(.cgroup_limit_bytes) \(.probe.stop_reason)"' "$out")" \
		"true false true $want true $((128 * MIB)) margin"
	check "... and says so on standard error" grep -q "probing the container's own cgroup $cg " "$TMP/err"
	remove_cgroup "$cg"
	check "targets: nothing left behind" no_leftovers
}

test_record_opts() {
	local out=$TMP/rec-opts.json rc t0 t1
	# bash's own clock: a guest's busybox date has no %N
	t0=${EPOCHREALTIME/./}
	"$MEMPROBE" record --duration 1 --format json -o "$out" -- sleep 8 2>/dev/null; rc=$?
	t1=${EPOCHREALTIME/./}
	echo "# record --duration 1 -- sleep 8: $(( (t1 - t0) / 1000 )) ms, exit $rc"
	check_eq "record --duration with a command: ended by the duration" "$(jqv "$out" .run.ended_by)" duration
	check_le "record --duration with a command: stops the command (ms)" $(( (t1 - t0) / 1000 )) 4000
	check_eq "record --duration with a command: exit status 128+SIGINT" "$rc" 130
	expect_bad "record --duration 1e99" "$MEMPROBE" record --duration 1e99 -- true
	expect_bad "record --duration 1e18" "$MEMPROBE" record --duration 1e18 -- true
	expect_bad "record --probe-at after --duration" "$MEMPROBE" record --cgroup "$(own_memcg_dir)" --duration 2 --probe-at 5
	expect_bad "record --limit too large" "$MEMPROBE" record --limit 99999999T -- true
	check "... says too large" grep -q "too large" "$TMP/bad.err"
	expect_bad "record --cgroup twice" "$MEMPROBE" record --cgroup / --cgroup / --duration 1
	check "... says given twice" grep -q "given twice" "$TMP/bad.err"
	expect_bad "probe --limit twice" "$MEMPROBE" probe --limit 64M --limit 128M
	check "... says given twice" grep -q "given twice" "$TMP/bad.err"
	expect_bad "probe --limit 3M" "$MEMPROBE" probe --limit 3M
	# the report on standard output: the command's output goes to stderr
	"$MEMPROBE" record --limit 64M --format json -- sh -c 'echo from-the-command' > "$out" 2> "$TMP/err"
	check "record: the report on stdout is not mixed with the command's output" eval 'jq -e .run "$out" > /dev/null'
	check "record: ... which went to stderr" grep -q "^from-the-command$" "$TMP/err"
	# the same with -o naming standard output (/dev/fd/1, /dev/stdout)
	"$MEMPROBE" record --limit 64M --format json -o /dev/fd/1 -- sh -c 'echo from-the-command' > "$out" 2> "$TMP/err"
	check "record -o /dev/fd/1: the report is not mixed with the command's output" eval 'jq -e .run "$out" > /dev/null'
	check "record -o /dev/fd/1: ... which went to stderr" grep -q "^from-the-command$" "$TMP/err"
	# --ready-fd is memprobe's alone: the reader's end of file comes with
	# "ready", not when the command (which would inherit it) ends
	local fifo=$TMP/ready.fifo rpid ready_ms
	mkfifo "$fifo"
	( t0=${EPOCHREALTIME/./}; cat "$fifo" > "$TMP/ready.txt"
	  echo $(( (${EPOCHREALTIME/./} - t0) / 1000 )) > "$TMP/ready.ms" ) &
	rpid=$!
	"$MEMPROBE" record --limit 64M --ready-fd 3 --format json -o "$out" -- sleep 3 3> "$fifo" 2>/dev/null
	wait "$rpid"
	ready_ms=$(cat "$TMP/ready.ms")
	check_eq "record --ready-fd: the reader gets ready" "$(cat "$TMP/ready.txt")" ready
	check_le "record --ready-fd: ... and its end of file before the 3 s command ends (ms)" "$ready_ms" 2500
	expect_bad "record --ready-fd 1" "$MEMPROBE" record --ready-fd 1 -- true
	check "... says standard output" grep -q "standard output" "$TMP/bad.err"
	check "record opts: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# -o PATH replaces nothing but a regular file (or a missing one): through a
# symlink the target is written (beside it, atomically), a FIFO is written
# in place, /dev/stdout is the descriptor the shell set up (>, >>, a pipe).
# Temporary files of memprobes that are gone are removed; "" and a directory
# are refused at option time. Only paths under $TMP/output.
test_output() {
	local d=$TMP/output lim=$((64 * MIB)) ino dead catpid sleeppid fakepid i was_link=false
	mkdir -p "$d"
	output_probe() { "$MEMPROBE" probe --limit 64M --format json -o "$@" 2>> "$d/err"; }

	# a symlink to a regular file, and a dangling one in an existing directory
	echo stale > "$d/target.json"; ln -s target.json "$d/link.json"
	output_probe "$d/link.json"
	check_eq "output: -o LINK leaves the link a link to its target" "$(readlink "$d/link.json")" target.json
	check_eq "output: -o LINK writes the report into the target" "$(jqv "$d/target.json" .cgroup_limit_bytes)" "$lim"
	ln -s new.json "$d/dangling.json"
	output_probe "$d/dangling.json"
	check "output: -o DANGLING-LINK makes its target, the link stays" \
		[ -L "$d/dangling.json" ]
	check_eq "output: -o DANGLING-LINK makes its target, the link stays" \
		"$(jqv "$d/new.json" .cgroup_limit_bytes)" "$lim"
	check_empty "output: no temporary file beside a link or its target" \
		"$(find "$d" -name '*.memprobe-tmp-*')"

	# a FIFO: written in place, read by a cat of ours
	mkfifo "$d/fifo"
	cat "$d/fifo" > "$d/fifo.out" & catpid=$!; STARTED_PIDS+=($catpid)
	output_probe "$d/fifo"
	for i in $(seq 100); do kill -0 $catpid 2>/dev/null || break; sleep 0.05; done
	kill -9 $catpid 2>/dev/null; wait $catpid 2>/dev/null
	check_eq "output: -o FIFO: the reader gets the report" "$(jqv "$d/fifo.out" .cgroup_limit_bytes)" "$lim"
	check "output: -o FIFO leaves it a FIFO" [ -p "$d/fifo" ]
	# a FIFO nobody reads: the open waits; a stop then says so (it said
	# "cannot create it; give a writable path", exit 2)
	mkfifo "$d/fifo-unread"
	"$MEMPROBE" probe --limit 64M --format json -o "$d/fifo-unread" 2> "$d/unread.err" & i=$!
	STARTED_PIDS+=($i)
	sleep 0.5; kill -TERM $i; wait $i
	check_eq "output: -o FIFO nobody reads, stopped: exit 1" "$?" 1
	check_eq "output: ... one line, naming the wait" \
		"$(wc -l < "$d/unread.err") $(grep -c 'stopped while it waited for a reader' "$d/unread.err")" "1 1"
	rm -f "$d/fifo-unread"

	# /dev/stdout: what the shell redirected it to
	[ -L /dev/stdout ] && was_link=true
	output_probe /dev/stdout > "$d/stdout.json"
	check_eq "output: -o /dev/stdout > FILE: FILE holds the report" "$(jqv "$d/stdout.json" .cgroup_limit_bytes)" "$lim"
	check_eq "output: -o /dev/stdout leaves /dev/stdout as it was" "$([ -L /dev/stdout ] && echo true || echo false)" "$was_link"
	echo '{"earlier": 1}' > "$d/append.json"
	output_probe /dev/stdout >> "$d/append.json"
	check_eq "output: -o /dev/stdout >> FILE appends to what was there" \
		"$(jq -s -c '[length, .[0].earlier, .[1].cgroup_limit_bytes]' "$d/append.json")" "[2,1,$lim]"
	check_eq "output: -o /dev/stdout | jq" "$(output_probe /dev/stdout | jq -r .cgroup_limit_bytes)" "$lim"
	check_eq "output: -o /proc/self/fd/3 3> FILE" \
		"$(output_probe /proc/self/fd/3 3> "$d/fd3.json"; jqv "$d/fd3.json" .cgroup_limit_bytes)" "$lim"

	# a regular file: replaced (a new inode, its mode kept), no temporary left;
	# temporary files of memprobes that are gone removed, a live one's kept
	dead=4194000
	while kill -0 $dead 2>/dev/null; do dead=$((dead + 1)); done
	sleep 30 & sleeppid=$!; STARTED_PIDS+=($sleeppid)
	# a live process whose comm is memprobe: a copy of a test program that
	# waits (alloc 0); not of sleep, which in the guests is a busybox applet
	cp "$BIN/alloc" "$d/memprobe"
	"$d/memprobe" 0 & fakepid=$!; STARTED_PIDS+=($fakepid)
	for i in $(seq 100); do [ "$(cat /proc/$fakepid/comm 2>/dev/null)" = memprobe ] && break; sleep 0.02; done
	echo stale > "$d/report.json"; chmod 600 "$d/report.json"
	ino=$(stat -c %i "$d/report.json")
	touch "$d/report.json.memprobe-tmp-$dead" "$d/report.json.memprobe-tmp-$sleeppid" \
		"$d/report.json.memprobe-tmp-$fakepid" "$d/report.json.memprobe-tmp-${dead}x" \
		"$d/other.json.memprobe-tmp-$dead"
	mkdir "$d/report.json.memprobe-tmp-$((dead + 1))"
	output_probe "$d/report.json"
	check_eq "output: -o FILE holds the report" "$(jqv "$d/report.json" .cgroup_limit_bytes)" "$lim"
	check_ne "output: -o FILE replaced it (a new inode), mode kept" \
		"$(stat -c %i "$d/report.json")" "$ino"
	check_eq "output: -o FILE replaced it (a new inode), mode kept" \
		"$(stat -c %a "$d/report.json")" 600
	check "output: a dead memprobe's temporary file removed" [ ! -e "$d/report.json.memprobe-tmp-$dead" ]
	check "output: a temporary file whose pid is now another program's removed" \
		[ ! -e "$d/report.json.memprobe-tmp-$sleeppid" ]
	check "output: a live memprobe's temporary file kept" [ -f "$d/report.json.memprobe-tmp-$fakepid" ]
	check "output: names not of the pattern, other files, directories kept" \
		[ -f "$d/report.json.memprobe-tmp-${dead}x" -a -f "$d/other.json.memprobe-tmp-$dead" \
		  -a -d "$d/report.json.memprobe-tmp-$((dead + 1))" ]
	check_eq "output: no temporary file of its own left (the three kept are all)" \
		"$(find "$d" -name 'report.json.memprobe-tmp-*' | wc -l)" 3
	kill -9 $sleeppid $fakepid; wait $sleeppid $fakepid 2>/dev/null
	check "output: nothing on stderr" [ ! -s "$d/err" ]

	# refused at option time: one line, exit 2, nothing made
	expect_bad "-o \"\"" "$MEMPROBE" probe --limit 64M -o ""
	expect_bad "-o DIR" "$MEMPROBE" probe --limit 64M -o "$d"
	check "output: -o DIR says it is a directory" grep -q "names a directory" "$TMP/bad.err"
	expect_bad "-o DIR (record)" "$MEMPROBE" record -o "$d" -- true
	check_empty "output: -o DIR made nothing beside it" "$(find "$TMP" -maxdepth 1 -name 'output.memprobe-tmp-*')"

	# -o naming a file the command reads or also writes (by path, by a
	# symlink): refused up front, that file as it was, nothing made
	cp "$d/report.json" "$d/saved.json"; ln -s saved.json "$d/saved-link.json"
	expect_bad "record --openmetrics X -o X" "$MEMPROBE" record --openmetrics "$d/om.json" \
		-o "$d/./om.json" --format json --limit 256M -- true
	check "output: record --openmetrics X -o X says so" grep -q "name the same file" "$TMP/bad.err"
	check "output: record --openmetrics X -o X made no X" [ ! -e "$d/om.json" ]
	expect_bad "record --openmetrics LINK -o FILE" "$MEMPROBE" record \
		--openmetrics "$d/saved-link.json" -o "$d/saved.json" -- true
	expect_bad "report FILE -o FILE" "$MEMPROBE" report "$d/saved.json" -o "$d/saved.json"
	check "output: report FILE -o FILE says so" grep -q "the document being rendered" "$TMP/bad.err"
	expect_bad "report FILE -o LINK" "$MEMPROBE" report "$d/saved.json" -o "$d/saved-link.json"
	expect_bad "compare A B -o A" "$MEMPROBE" compare "$d/saved.json" "$d/report.json" \
		-o "$d/saved.json"
	expect_bad "budget --from FILE -o LINK" "$MEMPROBE" budget --from "$d/saved.json" \
		-o "$d/saved-link.json"
	check "output: the refusals left the saved report as it was" cmp -s "$d/saved.json" "$d/report.json"
	check_eq "output: the saved report's limit after the refusals" \
		"$(jqv "$d/saved.json" .cgroup_limit_bytes)" "$lim"
	check "output: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# The status line (user/status.c): on a pseudo-terminal (script(1), from
# util-linux) probe and record redraw it in place and clear it before the
# report; nothing of it reaches a file unless --progress asks for plain lines.

# status_facts TYPESCRIPT|FILE KIND: the status lines in it, as shell
# assignments: n (how many), rising (chunks and bytes never fall, the last
# above the first), last_chunks, last_filled (the last line's words),
# stray (segments between two clears that are not a status line), esc (1
# when an escape character is in it at all), tail_status (1 when a status
# line follows the last clear), tail_report (1 when what follows it starts
# as a JSON document does, with "{"), lf (1
# when every line ends in "\n"). KIND: probe or record.
status_facts() {
	python3 - "$1" "$2" <<'PY'
import re, sys
raw = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
if raw.startswith('Script started'):  # script(1)'s own first and last lines
	raw = raw.split('\n', 1)[1]
	raw = raw[:raw.rfind('\nScript done')] if '\nScript done' in raw else raw
line_re = {'probe': r' *\d+\.\ds  (\d+) chunks  ([0-9.]+ (?:B|KiB|MiB|GiB))  (?:[0-9.]+|-) GiB/s  usage ',
	   'record': r' *\d+\.\ds  usage [0-9.]+ (?:B|KiB|MiB|GiB) \(.*\)  top: '}[sys.argv[2]]
clear = '\r\x1b[K'
if clear in raw:  # in place: the text between two clears is one line
	segs = raw.split(clear)
	lines, tail = segs[1:-1], segs[-1]
else:             # plain lines
	lines, tail = [l for l in raw.split('\n') if re.match(line_re, l)], ''
status = [l for l in lines if re.match(line_re, l)]
unit = {'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}
def nbytes(w):
	v, u = w.split()
	return float(v) * unit[u]
rising = 0
if sys.argv[2] == 'probe' and len(status) >= 2:
	got = [re.match(line_re, l).groups() for l in status]
	ch = [int(c) for c, _ in got]
	by = [nbytes(b) for _, b in got]
	rising = int(all(a <= b for a, b in zip(ch, ch[1:])) and all(a <= b for a, b in zip(by, by[1:]))
		     and ch[-1] > ch[0] and by[-1] > by[0])
last = re.match(line_re, status[-1]).groups() if status and sys.argv[2] == 'probe' else ('', '')
print('n=%d rising=%d last_chunks=%s last_filled=%s stray=%d esc=%d tail_status=%d lf=%d' % (
	len(status), rising, last[0] or 0, last[1].replace(' ', '_') or '-', len(lines) - len(status),
	int('\x1b' in raw), int(bool(re.search(line_re, tail, re.M))),
	int(raw == '' or raw.endswith('\n'))))
print('tail_report=%d' % tail.lstrip().startswith('{'))
PY
}

# fmt_bytes N: as memprobe's text says it (util.c mp_fmt_bytes), spaces as _
fmt_bytes() {
	awk -v b="$1" 'BEGIN { if (b >= 2^30) printf "%.2f_GiB", b / 2^30
		else if (b >= 2^20) printf "%.1f_MiB", b / 2^20
		else if (b >= 2^10) printf "%.1f_KiB", b / 2^10; else printf "%d_B", b }'
}

test_progress() {
	local d=$TMP/progress args="--limit 1G --thp never --chunk 16M" n rising last_chunks
	local last_filled stray esc tail_status lf tail_report first chunks alloc
	if ! command -v script > /dev/null || ! command -v python3 > /dev/null; then
		skip "progress: needs script(1) (util-linux) and python3"; return
	fi
	mkdir -p "$d"
	# the report on the terminal too: it must follow the last clear
	script -q -e -c "$MEMPROBE probe $args" "$d/tty.ts" < /dev/null > /dev/null
	eval "$(status_facts "$d/tty.ts" probe)"
	first=$(sed -n 2p "$d/tty.ts" | tr -d '\r' | sed 's/.*\x1b\[K//')
	chunks=$(echo "$first" | jq -r .probe_chunks); alloc=$(echo "$first" | jq -r .allocated_bytes)
	echo "# probe on a terminal: $n status lines, the last: $last_chunks chunks, $last_filled"
	check_ge "progress: status lines on a terminal (the first and the final at least)" "$n" 2
	check_eq "progress: ... chunks and bytes rise" "$rising" 1
	check_eq "progress: ... nothing else between the redraws" "$stray" 0
	check_eq "progress: the last line's chunks are the report's probe_chunks" "$last_chunks" "$chunks"
	check_eq "progress: ... and its bytes the report's allocated_bytes" "$last_filled" "$(fmt_bytes "$alloc")"
	check_eq "progress: no status line after the last clear" "$tail_status" 0
	check_eq "progress: ... where the report is, its first line the brief's" "$tail_report" 1
	check_ge "progress: ... which filled chunks" "$chunks" 1
	# stderr to a file, stdout the terminal: nothing of it anywhere
	script -q -e -c "$MEMPROBE probe $args 2> $d/err.txt" "$d/file.ts" < /dev/null > /dev/null
	eval "$(status_facts "$d/err.txt" probe)"
	check_eq "progress: stderr to a file: no status line there" "$n" 0
	check_eq "progress: ... no escape character" "$esc" 0
	eval "$(status_facts "$d/file.ts" probe)"
	check_eq "progress: ... nor on the terminal (stdout)" "$n$esc" 00
	# --quiet on the terminal
	script -q -e -c "$MEMPROBE probe $args --quiet" "$d/quiet.ts" < /dev/null > /dev/null
	eval "$(status_facts "$d/quiet.ts" probe)"
	check_eq "progress: --quiet: no status line, no escape" "$n$esc" 00
	check "progress: --quiet: the report still there" grep -q '"probe_chunks"' "$d/quiet.ts"
	# a terminal that cannot erase (TERM=dumb): as a file, no escape
	TERM=dumb script -q -e -c "$MEMPROBE probe $args" "$d/dumb.ts" < /dev/null > /dev/null
	eval "$(status_facts "$d/dumb.ts" probe)"
	check_eq "progress: TERM=dumb: no status line, no escape" "$n$esc" 00
	# --progress into a file: plain lines
	"$MEMPROBE" probe $args --progress --format json -o "$d/p.json" 2> "$d/progress.txt"
	eval "$(status_facts "$d/progress.txt" probe)"
	check_ge "progress: --progress to a file: plain status lines" "$n" 2
	check_eq "progress: ... rising" "$rising" 1
	check_eq "progress: ... no escape character, every line ends in a newline" "$esc$lf" 01
	check_eq "progress: ... the last says the report's chunks" "$last_chunks" "$(jqv "$d/p.json" .probe_chunks)"
	check_eq "progress: ... a line before the first chunk shows no rate nor time left" \
		"$(grep -E '^ *[0-9.]+s  0 chunks' "$d/progress.txt" | grep -cvE '  - GiB/s  .* above margin$')" 0
	# record: the same code and look
	script -q -e -c "$MEMPROBE record --limit 64M --format json -- sleep 1" "$d/rec.ts" < /dev/null > /dev/null
	eval "$(status_facts "$d/rec.ts" record)"
	check_ge "progress: record on a terminal: status lines" "$n" 1
	check_eq "progress: record: ... cleared before the report" "$stray$tail_status" 00
	check_eq "progress: record: ... where the report is" "$tail_report" 1
	script -q -e -c "$MEMPROBE record --limit 64M --quiet -o $d/rec.json -- sleep 1" "$d/recq.ts" < /dev/null > /dev/null
	eval "$(status_facts "$d/recq.ts" record)"
	check_eq "progress: record --quiet: no status line, no escape" "$n$esc" 00
	"$MEMPROBE" record --limit 64M --progress -o "$d/rec.json" -- sleep 1 2> "$d/rec.txt"
	eval "$(status_facts "$d/rec.txt" record)"
	check_ge "progress: record --progress to a file: plain lines" "$n" 1
	check_eq "progress: record --progress: ... no escape, newline-terminated" "$esc$lf" 01
	expect_bad "probe --quiet --progress" "$MEMPROBE" probe --quiet --progress
	check "... says exclusive" grep -q "exclusive" "$TMP/bad.err"
	check "progress: nothing left behind" no_leftovers
}

# record --probe-at: the probe's overhead over its own window, in .probe
overhead_record() {
	local cg out=$TMP/overhead-record.json pid over
	cg=$(make_cgroup overhead-record $((3 * GIB / 2))) || { fail "overhead record: make cgroup"; return; }
	pid=$(run_in_cgroup "$cg" "$BIN/benchmark" 600 100 50 10 0 300 "$TMP/bench-cache" 1600)
	check_usage "overhead record: the benchmark holds its anon and page cache" "$cg" $((700 * MIB))
	"$MEMPROBE" record --cgroup "$cg" --duration 5 --probe-at 1 --format json -o "$out" 2>/dev/null
	check_eq "overhead record: exits 0" "$?" 0
	over=$(jqv "$out" .probe.overhead_bytes)
	echo "# record: probe overhead $over unexplained $(jqv "$out" .probe.overhead.unexplained_bytes) parts $(jq -c '[.probe.overhead.parts[] | select((.bytes | fabs) >= 65536) | [.comm, .category, .bytes]]' "$out")"
	check_eq "overhead record: .probe.overhead explains the probe's overhead_bytes" \
		"$(jqv "$out" .probe.overhead.bytes)" "$over"
	check_eq "overhead record: ... exactly" \
		"$(jqv "$out" '[.probe.overhead.parts[].bytes] + [.probe.overhead.probe_kernel_bytes, .probe.overhead.reclaimed_bytes // 0, .probe.overhead.unexplained_bytes] | add')" "$over"
	check_le "overhead record: ... unexplained <= max(5%, 8 MiB)" \
		"$(jqv "$out" '.probe.overhead.unexplained_bytes | fabs')" "$(jqv "$out" "[(.probe.overhead_bytes / 20 | floor), $((8 * MIB))] | max")"
	check_ge "overhead record: ... the benchmark's anon growth named" \
		"$(jqv "$out" "[.probe.overhead.parts[] | select(.pid == $pid and .category == \"anon\") | .bytes] | add // null")" $((2 * MIB))
	check_eq "overhead record: the recording's own attribution stays" "$(jqv "$out" '.attribution.reconciliation | has("measured_growth_bytes")')" true
	"$MEMPROBE" report "$out" > "$TMP/overhead-record.txt"
	check "overhead record: the text says it" grep -q "^overhead [0-9.-]* MiB at the peak: benchmark\[$pid\]" "$TMP/overhead-record.txt"
	kill -9 "$pid"; wait "$pid" 2>/dev/null
	remove_cgroup "$cg"
}

# The static binary (issue 13): no shared library, no loader, and it runs in
# an empty chroot that holds only the binary, with /proc and /sys (and so
# /sys/fs/cgroup, /sys/kernel/btf) mounted, as in a bare container image.
# The mounts live in a private mount namespace (unshare -m): they are
# unmounted there, and gone with the namespace even if a step fails.
test_static() {
	local root cg rc lim
	if [ "${MEMPROBE_STATIC:-1}" = 0 ]; then
		skip "static: this build is dynamic by design (SANITIZE=1: ASan cannot link static)"
		return
	fi
	if command -v ldd > /dev/null; then
		check "static: ldd says not a dynamic executable" \
			eval 'ldd "$MEMPROBE" 2>&1 | grep -q "not a dynamic executable"'
	else
		skip "static: ldd check: no ldd here"
	fi
	if command -v file > /dev/null; then
		check "static: file says statically linked" \
			eval 'file -L "$MEMPROBE" | grep -q "statically linked"'
	else
		skip "static: file check: no file command here"
	fi
	# no PT_INTERP, i.e. no .interp section: nothing for a loader to load
	if command -v readelf > /dev/null; then
		check "static: no program interpreter" eval '! readelf -l "$MEMPROBE" | grep -q INTERP'
	fi
	lim=$((256 * MIB))
	cg=$(make_cgroup static $lim) || { fail "static: make cgroup"; return; }
	root=$TMP/chroot
	mkdir -p "$root/proc" "$root/sys"
	cp "$MEMPROBE" "$root/memprobe"
	# The documents are checked on the host side (the chroot has no $TMP):
	# the outputs come back through stdout.
	unshare -m --propagation private sh -c '
		root=$1 cg=$2 out=$3 ch=$(command -v chroot)
		mount -t proc proc "$root/proc" && mount -o rbind /sys "$root/sys" || exit 97
		rc=0
		env -i "$ch" "$root" /memprobe limits --cgroup "$cg" --format json > "$out/limits.json" 2> "$out/limits.err" || rc=1
		env -i "$ch" "$root" /memprobe limits > "$out/limits.txt" 2>> "$out/limits.err" || rc=1
		env -i "$ch" "$root" /memprobe probe --cgroup "$cg" --format json > "$out/probe.json" 2> "$out/probe.err" || rc=1
		# -l detaches /sys with every mount below it (busybox has no -R)
		umount -l "$root/sys"; umount "$root/proc"
		exit $rc' sh "$root" "$cg" "$TMP" > "$TMP/static.log" 2>&1
	rc=$?
	check_eq "static: limits and probe in the empty chroot exit 0" "$rc" 0
	[ "$rc" = 0 ] || cat "$TMP/static.log" "$TMP/limits.err" "$TMP/probe.err" 2>/dev/null | head -n 20 | sed 's/^/# /'
	check "static: the chroot's mounts are gone" eval '! grep -qF " $root/" /proc/self/mountinfo'
	# the schema check (check_docs) of what the chroot's memprobe wrote
	[ ! -s "$TMP/limits.json" ] || cp "$TMP/limits.json" "$TMP/docs/static-limits.json"
	[ ! -s "$TMP/probe.json" ] || cp "$TMP/probe.json" "$TMP/docs/static-probe.json"
	echo "# chroot: $(jqv "$TMP/limits.json" '"limits: effective limit \(.cgroup.effective_limit_bytes), usage \(.cgroup.usage_bytes), headroom \(.cgroup.headroom_bytes), distribution \(.host.distribution)"')"
	echo "# chroot: $(jq -c '{cgroup_limit_bytes, usage_before_bytes, allocated_bytes, usage_peak_bytes, overhead_bytes, probe_chunks}' "$TMP/probe.json")"
	check_eq "static: limits in the chroot: the test cgroup's effective limit" \
		"$(jqv "$TMP/limits.json" .cgroup.effective_limit_bytes)" "$lim"
	check "static: limits in the chroot: the text names memprobe's own cgroup" grep -q '^  effective limit' "$TMP/limits.txt"
	check_eq "static: probe in the chroot: the target's limit" "$(jqv "$TMP/probe.json" .cgroup_limit_bytes)" "$lim"
	check_ge "static: probe in the chroot: allocated > 0" "$(jqv "$TMP/probe.json" .allocated_bytes)" 1
	check_ge "static: probe in the chroot: chunks filled" "$(jqv "$TMP/probe.json" .probe_chunks)" 1
	check_ge "static: probe in the chroot: the probe's own faults counted" \
		"$(jqv "$TMP/probe.json" '[.attribution.page_faults.by_task[] | select(.comm == "memprobe-probe") | .faults] | add // 0')" 1
	remove_cgroup "$cg"
	rm -rf "$root"
	check "static: nothing left behind" no_leftovers
}

# ---------------------------------------------------------------------------
# The man page (docs/memprobe.8) against the binary, both ways: every
# command `memprobe --help` lists has its entry under COMMANDS and its .SS
# under OPTIONS, and the long options there (the .TP tag lines) are exactly
# those `memprobe CMD --help` lists. Both sides are read, never listed here:
# a new command or option only needs its man-page lines.
man_cmds() { "$MEMPROBE" --help | awk '/^  [a-z]+  / { print $1 }'; }
# help_opts CMD: the long options of CMD's --help, one a line, sorted
help_opts() {
	"$MEMPROBE" "$1" --help | awk '/^  -[A-Za-z], --[a-z]/ || /^      --[a-z]/' |
		grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}
# man_tags SECTION [SUBSECTION]: the .TP tag lines of a section (of one
# .SS of it), with \- as -
man_tags() {
	awk -v sec="$2" -v ss="${3:-}" '
		/^\.SH / { in_sec = ($2 == sec); cur = ""; next }
		/^\.SS / { cur = $2; next }
		!in_sec { next }
		tp { if (ss == "" || cur == ss) print; tp = 0; next }
		/^\.TP/ { tp = 1 }' "$1" | sed 's/\\-/-/g'
}
# man_formats MAN CMD: the words in bold of the -f, --format entry under
# OPTIONS' .SS CMD (.B all, .BR the odd arguments, .RB the even ones), one
# a line: the formats the page names, among its other bold words
man_formats() {
	awk -v ss="$2" '
		function args(s, a,   n, q, i, c, w) {
			n = 0; q = 0; w = ""
			for (i = 1; i <= length(s); i++) {
				c = substr(s, i, 1)
				if (c == "\"") { q = !q; continue }
				if (c == " " && !q) { if (w != "") a[++n] = w; w = ""; continue }
				w = w c
			}
			if (w != "") a[++n] = w
			return n
		}
		/^\.SH / { in_opt = ($2 == "OPTIONS"); next }
		/^\.SS / { cur = $2; on = 0; next }
		!in_opt || cur != ss { next }
		/^\.TP/ { tp = 1; on = 0; next }
		tp { tp = 0; on = ($0 ~ /\\-\\-format/); next }
		on && /^\.(B|BR|RB) / {
			m = $1; n = args(substr($0, length(m) + 2), a)
			for (i = 1; i <= n; i++)
				if (m == ".B" || (m == ".BR" && i % 2) || (m == ".RB" && !(i % 2))) print a[i]
		}' "$1"
}
test_man() {
	local src man c want got all
	src=$(cd "$(dirname "$0")/.." && pwd)
	man=$src/docs/memprobe.8
	[ -f "$man" ] || { skip "man: no docs/memprobe.8 here (a guest)"; return; }
	if command -v mandoc > /dev/null; then
		check_eq "man: mandoc -T lint is clean" "$(mandoc -T lint "$man" 2>&1)" ""
	else
		skip "man: lint: no mandoc here (scripts/deps.sh --tests installs it)"
	fi
	for c in $(man_cmds); do
		check "man: COMMANDS has $c" eval 'man_tags "$man" COMMANDS | grep -qE "^\.B $c\$"'
		[ "$c" = help ] && continue
		want=$(help_opts "$c")
		got=$(man_tags "$man" OPTIONS "$c" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
		check "man: $c --help lists some options" [ -n "$want" ]
		check_eq "man: OPTIONS' $c: the long options of $c --help, no more, no fewer" \
			"only in --help: $(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' '); only in the man page: $(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')" \
			"only in --help: ; only in the man page: "
	done
	# --format's values: those each command takes, from the renderer table
	# by way of its own messages (scripts/completion.sh, as the completion
	# has them), against the renderers the man page names there: a
	# renderer added to the table is added to the page too
	"$src/scripts/completion.sh" "$MEMPROBE" > "$TMP/man.bash"
	all=$(. "$TMP/man.bash"; _memprobe_opts report-format | tr ' ' '\n' | sort)
	check_match "man: the renderers' names, from the binary" "$all" -x openmetrics
	for c in $(man_cmds); do
		[ "$c" = help ] && continue
		want=$(. "$TMP/man.bash"; _memprobe_opts "$c-format" | tr ' ' '\n' | sort)
		got=$(man_formats "$man" "$c" | sort -u | comm -12 - <(echo "$all"))
		check_eq "man: OPTIONS' $c: --format names the formats $c takes, no more, no fewer" \
			"only taken: $(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' '); only in the man page: $(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')" \
			"only taken: ; only in the man page: "
	done
	check "man: nothing left behind" no_leftovers
}

# make install DESTDIR PREFIX: the three files in place, the completion from
# the binary's own tables; make uninstall removes them.
test_install() {
	local src d c
	src=$(cd "$(dirname "$0")/.." && pwd)
	if [ ! -f "$src/Makefile" ] || ! command -v make > /dev/null; then
		skip "install: no Makefile or make here (a guest)"; return
	fi
	if ! [ "$MEMPROBE" -ef "$src/build/memprobe" ]; then
		skip "install: make install installs build/memprobe; this run tests $MEMPROBE"; return
	fi
	d=$TMP/install
	# not the outer make's variables (make check SANITIZE=1 ...): a make of its own
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" install DESTDIR="$d" PREFIX=/usr > "$TMP/install.log" 2>&1
	check_eq "install: make install exits 0" "$?" 0
	check "install: sbin/memprobe is the binary" cmp -s "$d/usr/sbin/memprobe" "$MEMPROBE"
	check "install: ... executable" [ -x "$d/usr/sbin/memprobe" ]
	check "install: share/man/man8/memprobe.8 is docs/memprobe.8" \
		cmp -s "$d/usr/share/man/man8/memprobe.8" "$src/docs/memprobe.8"
	c=$d/usr/share/bash-completion/completions/memprobe
	check "install: the bash completion, valid bash" bash -n "$c"
	# what it completes, by calling it as bash does
	comp() {
		bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			_memprobe; echo "${COMPREPLY[*]}"' sh "$c" memprobe "$@"
	}
	check_eq "install: completion: the commands" "$(comp '')" "$(man_cmds | tr '\n' ' ')--help --version"
	check_eq "install: completion: --thp's values" "$(comp probe --thp '')" "auto never always"
	check_eq "install: completion: limits --format's values" "$(comp limits --format '')" "text json env markdown openmetrics"
	check_eq "install: completion: probe's options" "$(comp probe --th)" "--thp --threads"
	check_eq "install: completion: record --table's names" "$(comp record --format csv --table '')" \
		"categories tasks kernel_paths hooks overhead copy_on_write timeline oom_kills figures"
	check_eq "install: completion: probe --table's" "$(comp probe --table k)" "kernel_paths"
	check_eq "install: completion: after record --, a command" "$(comp record -- stress-n)" \
		"$(compgen -c -- stress-n | tr '\n' ' ' | sed 's/ $//')"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" uninstall DESTDIR="$d" PREFIX=/usr >> "$TMP/install.log" 2>&1
	check_eq "install: make uninstall exits 0" "$?" 0
	check_eq "install: ... and removes the three files" "$(find "$d" -type f | wc -l)" 0
	rm -rf "$d"
	check "install: nothing left behind" no_leftovers
}

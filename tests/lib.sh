# shellcheck shell=bash
# Helpers for the integration tests: test cgroups under our own memory
# cgroup, named memprobe-test-*, removed on exit even when a test fails.

MEMPROBE=${MEMPROBE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/memprobe}
TESTS_PASSED=0
TESTS_FAILED=0
TESTS_SKIPPED=0
CREATED_CGROUPS=()
STARTED_PIDS=()
TMP=$(mktemp -d /tmp/memprobe-test.XXXXXX)

# The memory cgroup directory of this shell (v1 memory line, else v2 0:: line).
own_memcg_dir() { memcg_dir_of self; }

# memcg_dir_of PID: the memory cgroup directory of a process (as above)
memcg_dir_of() {
	local line path mnt
	line=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/"$1"/cgroup 2>/dev/null | head -n 1)
	if [ -n "$line" ]; then
		path=${line#*:*:}
		# the fstype is the first field after " - " (optional fields vary)
		mnt=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
			$(i + 1) == "cgroup" && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	else
		path=$(sed -n 's/^0:://p' /proc/"$1"/cgroup 2>/dev/null)
		mnt=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
			$(i + 1) == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	fi
	echo "$mnt${path%/}"
}

# cg_version DIR: 1 or 2
cg_version() { [ -e "$1/memory.limit_in_bytes" ] && echo 1 || echo 2; }

# make_cgroup NAME LIMIT_BYTES: prints the directory. Tests call it as
# cg=$(make_cgroup ...), a subshell: what it makes is listed in a file the
# exit trap reads, not only in an array that subshell would lose.
make_cgroup() {
	local dir
	dir="$(own_memcg_dir)/memprobe-test-$1-$$"
	mkdir "$dir" || return 1
	CREATED_CGROUPS+=("$dir")
	echo "$dir" >> "$TMP/created-cgroups"
	if [ "$(cg_version "$dir")" = 1 ]; then
		echo "$2" > "$dir/memory.limit_in_bytes"
	else
		echo "$2" > "$dir/memory.max"
	fi
	echo "$dir"
}

cg_usage() {
	if [ -e "$1/memory.usage_in_bytes" ]; then cat "$1/memory.usage_in_bytes"; else cat "$1/memory.current"; fi
}

# run_in_cgroup DIR CMD...: start CMD in DIR in the background; prints its pid
run_in_cgroup() {
	local dir=$1; shift
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$dir" "$@" >/dev/null 2>&1 &
	STARTED_PIDS+=($!)
	echo $! >> "$TMP/started-pids"
	echo $!
}

remove_cgroup() {
	local dir=$1 i p d
	[ -d "$dir" ] || return 0
	for i in $(seq 100); do
		# what a failed test left inside (memprobe's cgroups, sub-cgroups): kill, children first
		for d in $(find "$dir" -depth -type d); do
			for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
			rmdir "$d" 2>/dev/null
		done
		[ -d "$dir" ] || return 0
		sleep 0.05
	done
	echo "could not remove $dir" >&2
	return 1
}

cleanup_all() {
	local p d
	# by pid, and only a process still in one of this run's test cgroups
	# (a pid from the file may have been reused by someone else's)
	for p in "${STARTED_PIDS[@]}" $(cat "$TMP/started-pids" 2>/dev/null); do
		grep -q "memprobe-test-.*-$$" /proc/"$p"/cgroup 2>/dev/null && kill -9 "$p" 2>/dev/null
	done
	for p in "${STARTED_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for d in "${CREATED_CGROUPS[@]}" $(cat "$TMP/created-cgroups" 2>/dev/null); do remove_cgroup "$d"; done
	rm -rf "$TMP"
}
trap cleanup_all EXIT
trap 'exit 130' INT TERM

# ---- checks, in the manner of the kernel's selftests ----------------------
# Each prints one line: "ok - WHAT", "not ok - WHAT (got ..., want ...)" or
# "skip - WHAT: WHY"; summary counts each kind. A check whose figure is not
# there (an empty or null got) fails: a missing report must not pass.
pass() { TESTS_PASSED=$((TESTS_PASSED + 1)); echo "ok - $*"; }
fail() { TESTS_FAILED=$((TESTS_FAILED + 1)); echo "not ok - $*"; }
# skip WHAT: WHY: the check cannot run here (no module, another cgroup
# mode); counted, never a pass
skip() { TESTS_SKIPPED=$((TESTS_SKIPPED + 1)); echo "skip - $*"; }

# shown TEXT: TEXT for a failure line: one line, at most 300 characters
shown() {
	local s=${1//$'\n'/\\n}
	[ ${#s} -le 300 ] && printf '%s' "$s" || printf '%s...' "${s:0:300}"
}

# check WHAT CONDITION-COMMAND...: pass or fail on the command's status; a
# failure prints the command as it ran (its arguments expanded), for the
# commands whose status is the check (grep -q, cmp, valid_doc,
# no_leftovers, a file test). A comparison of values is one of the
# check_* below, which print what was got and what was wanted.
check() {
	local what=$1; shift
	if "$@"; then pass "$what"; else fail "$what (failed: $(shown "$*"))"; fi
}

is_int() { [[ "$1" =~ ^-?[0-9]+$ ]]; }

# check_eq WHAT GOT WANT: equal, as strings; check_ne: not equal, as strings
check_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (got '$(shown "$2")', want '$(shown "$3")')"; fi; }
check_ne() { if [ "$2" != "$3" ]; then pass "$1"; else fail "$1 (got '$(shown "$2")', want not '$3')"; fi; }
# check_empty WHAT GOT: GOT is the empty string (a list of what is left, of
# what is wrong)
check_empty() { if [ -z "$2" ]; then pass "$1"; else fail "$1 (got '$(shown "$2")', want nothing)"; fi; }
# check_match WHAT GOT GREP-ARGS...: some line of GOT matches, as
# grep -q GREP-ARGS would (give -E, -x, -F, -- as grep takes them)
check_match() {
	local what=$1 got=$2; shift 2
	if grep -q "$@" <<< "$got"; then pass "$what"
	else fail "$what (got '$(shown "$got")', want a line matching: $*)"; fi
}
# check_le WHAT GOT MAX, check_ge WHAT GOT MIN: integers, at most / at least
check_le() {
	if is_int "$2" && is_int "$3" && [ "$2" -le "$3" ]; then pass "$1"
	else fail "$1 (got '$2', want <= '$3')"; fi
}
check_ge() {
	if is_int "$2" && is_int "$3" && [ "$2" -ge "$3" ]; then pass "$1"
	else fail "$1 (got '$2', want >= '$3')"; fi
}
# check_lt WHAT GOT MAX, check_gt WHAT GOT MIN: integers, below / above
check_lt() {
	if is_int "$2" && is_int "$3" && [ "$2" -lt "$3" ]; then pass "$1"
	else fail "$1 (got '$2', want < '$3')"; fi
}
check_gt() {
	if is_int "$2" && is_int "$3" && [ "$2" -gt "$3" ]; then pass "$1"
	else fail "$1 (got '$2', want > '$3')"; fi
}
# check_near WHAT GOT WANT SLACK: integers, |GOT - WANT| <= SLACK (bytes
# against the kernel's counter: a slack in bytes, not a fraction)
check_near() {
	if is_int "$2" && is_int "$3" && [ $(($2 - $3)) -le "$4" ] && [ $(($3 - $2)) -le "$4" ]; then pass "$1"
	else fail "$1 (got '$2', want '$3' within $4)"; fi
}
# check_within WHAT GOT WANT TOLERANCE: |got - want| <= TOLERANCE * |want|,
# TOLERANCE a fraction (0.05: within 5%)
check_within() {
	if within "$2" "$3" "$4"; then pass "$1"
	else fail "$1 (got '$2', want '$3' within $(awk -v t="$4" 'BEGIN { print t * 100 }')%)"; fi
}

# check_num WHAT GOT OP WANT: decimal numbers (a fraction, a ratio, a
# count per GiB), compared as awk's doubles; OP is <, <=, >, >= or ==. For
# byte counts use the integer checks above: a double is exact only to 2^53.
check_num() {
	if num_cmp "$2" "$3" "$4"; then pass "$1"
	else fail "$1 (got '$(shown "$2")', want $3 '$(shown "$4")')"; fi
}

# num_cmp GOT OP WANT: the condition of check_num; false when either is
# not a number or OP is none of the five
num_cmp() {
	awk -v g="$1" -v op="$2" -v w="$3" 'BEGIN {
		n = "^-?[0-9]+(\\.[0-9]+)?$"
		if (g !~ n || w !~ n) exit 1
		g += 0; w += 0
		if (op == "<") exit !(g < w); if (op == "<=") exit !(g <= w)
		if (op == ">") exit !(g > w); if (op == ">=") exit !(g >= w)
		if (op == "==") exit !(g == w)
		exit 1 }'
}

# check_usage WHAT DIR BYTES: cgroup DIR comes to hold at least BYTES
# (waited for, as wait_usage), failing with the usage it last read; that
# reading, not a second one (a probe's cgroup may be gone by then)
check_usage() {
	wait_usage "$2" "$3"
	check_ge "$1" "$USAGE_READ" "$3"
}

# within GOT WANT TOLERANCE_FRACTION: the condition of check_within; false
# when either is not a number
within() {
	awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN {
		if (g !~ /^-?[0-9]+(\.[0-9]+)?$/ || w !~ /^-?[0-9]+(\.[0-9]+)?$/) exit 1
		d = g - w; if (d < 0) d = -d; if (w < 0) w = -w; exit !(d <= t * w) }'
}

# ---- the filters the tests repeat, on a probe or record document ----------
# By ids (category names, concern and reason ids, kernel path classes),
# never by the words for people.

# cat_field FILE CATEGORY FIELD: a field of .attribution.categories' entry
# CATEGORY (kernel_other too); null when either is absent
cat_field() {
	jq -r --arg c "$2" --arg f "$3" '[.attribution.categories[]? | select(.name == $c) | .[$f]][0]' "$1"
}

# task_bytes FILE CATEGORY COMM: the bytes of CATEGORY charged to the
# processes named COMM (COMM* for a prefix), summed; 0 when none
task_bytes() {
	jq -r --arg c "$2" --arg p "$3" '
		def named: if ($p | endswith("*")) then startswith($p[:-1]) else . == $p end;
		[.attribution.categories[]? | select(.name == $c) | .tasks[] |
		 select(.comm | named) | .bytes] | add // 0' "$1"
}

# top_task FILE CATEGORY FIELD: a field of CATEGORY's largest share (pid, comm, bytes)
top_task() {
	jq -r --arg c "$2" --arg f "$3" '[.attribution.categories[]? | select(.name == $c) | .tasks[0][$f]][0]' "$1"
}

# hook_field FILE CONCERN FIELD: a field of the hook of concern id CONCERN
# (faults, alloc, free, migrate, comm, oom, memcg, charge)
hook_field() {
	jq -r --arg c "$2" --arg f "$3" '[.attribution.hooks[]? | select(.concern == $c) | .[$f]][0]' "$1"
}

# path_field FILE LIST PATH FIELD: FIELD summed over LIST's (kernel_paths,
# not_charged) entries of class PATH (pagetables, slab, driver:brd, ...); 0 when none
path_field() {
	jq -r --arg l "$2" --arg p "$3" --arg f "$4" \
		'[.attribution[$l][]? | select(.path == $p) | .[$f]] | add // 0' "$1"
}

# path_frames FILE PATH REGEX: how many frames of kernel path PATH's top
# stacks match REGEX
path_frames() {
	jq -r --arg p "$2" --arg r "$3" \
		'[.attribution.kernel_paths[]? | select(.path == $p) | .top_stacks[].frames[] | select(test($r))] | length' "$1"
}

# says_missing FILE [--concern ID] [--category NAME] [--reason ID]: some
# attribution_missing entry carries every id given ("null" for a null id),
# e.g. says_missing f --category pagetables --reason no_stat_item
says_missing() {
	local f=$1 sel=true args=() k; shift
	while [ $# -ge 2 ]; do
		case $1 in
		--concern | --category | --reason) k=${1#--} ;;
		*) echo "says_missing: $1: give --concern, --category or --reason" >&2; return 2 ;;
		esac
		args+=(--arg "$k" "$2")
		sel="$sel and .$k == (\$$k | if . == \"null\" then null else . end)"
		shift 2
	done
	[ $# -eq 0 ] || { echo "says_missing: $1 without a value" >&2; return 2; }
	jq -e "${args[@]}" "any(.attribution.attribution_missing[]?; type == \"object\" and $sel)" \
		"$f" > /dev/null
}

# Nothing named memprobe-* remains under this shell's own memory cgroup,
# where memprobe makes its cgroups (beside itself, and in the test cgroups
# it is given), but this run's own test cgroups and the test or bench
# cgroups of another run going on at the same time, with whatever that run
# has inside them. Other cgroups of the machine are not this run's to judge.
# LEFTOVER_ROOT (for the test of this function) looks elsewhere.
no_leftovers() {
	local left d pid
	left=$(find "${LEFTOVER_ROOT:-$(own_memcg_dir)}" -type d -name 'memprobe-*' 2>/dev/null | awk -v me="-$$" '
		{
			n = split($0, part, "/"); other = 0; mine = 0
			for (i = 1; i <= n; i++) {
				if (part[i] ~ /^memprobe-bench-/) other = 1    # a benchmark going on
				if (part[i] ~ /^memprobe-test-/) {
					if (substr(part[i], length(part[i]) - length(me) + 1) == me) mine = i
					else other = 1
				}
			}
			if (other || mine == n) next   # another run, or our test cgroup itself
			print
		}')
	# memprobe-run-PID (and -target-, -probe-) of a memprobe still running
	# is in use, not left behind: another run's, in the same cgroup as ours
	# (ours have all exited when a test asks)
	left=$(for d in $left; do
		pid=${d##*-}
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = memprobe ] || echo "$d"
	done)
	if [ -n "$left" ]; then
		echo "# left behind: $left"
		return 1
	fi
	return 0
}

# children PID: the pids of PID's children (every thread's), by pid, never by name
children() {
	cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -v '^$'
}

# alive PID: the process runs (exists and is not a zombie)
alive() {
	[ -e /proc/"$1" ] && ! grep -q '^State:[[:space:]]*[ZX]' /proc/"$1"/status 2>/dev/null
}

# probe_child PID: the pid of memprobe PID's probe process (comm
# memprobe-probe), or nothing
probe_child() {
	local c
	for c in $(children "$1"); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = memprobe-probe ] && { echo "$c"; return 0; }
	done
	return 1
}

# wait_filling PID [BYTES]: until memprobe PID's probe process has left
# memprobe's memory cgroup for its own (or the target) and that cgroup is
# charged at least BYTES (default 16 MiB): the probe is filling. Not the
# probe's RSS: a fork of an ASan build starts with the parent's. Up to 60 s
# (a QEMU TCG guest takes seconds to load the BPF programs). Prints the
# probe's pid.
wait_filling() {
	local pid=$1 want=${2:-16777216} c d home i
	home=$(memcg_dir_of "$pid")
	for i in $(seq 6000); do
		c=$(probe_child "$pid")
		d=${c:+$(memcg_dir_of "$c")}
		if [ -n "$d" ] && [ "$d" != "$home" ] && [ "$(cg_usage "$d" 2>/dev/null || echo 0)" -ge "$want" ]; then
			echo "$c"; return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# wait_usage DIR BYTES: wait (up to 60 s) until cgroup DIR holds BYTES;
# USAGE_READ is the last usage read (empty when DIR could not be read)
wait_usage() {
	local i
	for i in $(seq 6000); do
		USAGE_READ=$(cg_usage "$1" 2>/dev/null)
		[ "${USAGE_READ:-0}" -ge "$2" ] && return 0
		sleep 0.01
	done
	return 1
}

# jqv FILE FILTER: one value from a JSON report
jqv() { jq -r "$2" "$1"; }

summary() {
	echo "$1: $TESTS_PASSED passed, $TESTS_FAILED failed, $TESTS_SKIPPED skipped"
	[ "$TESTS_FAILED" -eq 0 ]
}

# ---- documents and their schema (docs/report.schema.json) -------------------
# Debian's python3-jsonschema (scripts/deps.sh) checks them: its jsonschema
# command (4.10 in bookworm) takes the draft, 2020-12, from the schema's
# $schema. Not in the QEMU guests: there the checks are skipped, said so.
SCHEMA=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/docs/report.schema.json
JSONSCHEMA=$(command -v /usr/bin/jsonschema || command -v jsonschema || true)
# Every document a memprobe of this run emits, whatever format it printed,
# is also written here (see mp_emit in user/render.h); check_docs reads them.
mkdir -p "$TMP/docs"
export MEMPROBE_DOC_COPY=$TMP/docs

# valid_doc FILE: 0 when FILE is valid against the schema, else the
# validator's complaint (where, and what) on stdout and 1
valid_doc() {
	local out
	out=$("$JSONSCHEMA" -F '{error.json_path}: {error.message}
' -i "$1" "$SCHEMA" 2>&1) && return 0
	printf '%s\n' "$out" | cut -c1-300 | head -n 5
	return 1
}

# check_docs WHAT: every document emitted since the last call is valid (one
# check, naming each invalid one and why); then they are removed
check_docs() {
	local what=$1 f bad="" args=() docs=("$TMP"/docs/*.json)
	[ -e "${docs[0]}" ] || return 0
	if [ -z "$JSONSCHEMA" ]; then
		echo "# skip: schema check of the ${#docs[@]} documents $what wrote (no jsonschema command)"
		rm -f "${docs[@]}"
		return 0
	fi
	for f in "${docs[@]}"; do args+=(-i "$f"); done
	# one validator for all (its start-up is most of the time), one per
	# file only to name a failure
	if ! "$JSONSCHEMA" "${args[@]}" "$SCHEMA" > /dev/null 2>&1; then
		for f in "${docs[@]}"; do
			valid_doc "$f" > "$TMP/docs.why" || bad="$bad ${f##*/}: $(head -c 300 "$TMP/docs.why" | tr '\n' ' ')"
		done
		[ -n "$bad" ] || bad=" (the validator failed on them all, on none alone)"
	fi
	check "schema: every document $what wrote is valid (${#docs[@]})${bad:+:$bad}" [ -z "$bad" ]
	rm -f "${docs[@]}"
}

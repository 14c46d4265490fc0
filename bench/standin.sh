#!/usr/bin/env bash
# bench/standin.sh [RUNS] [OUTDIR]: the issue 11 stand-in, measured (not a
# test): a 3 GiB cgroup holding a 1.5 GiB "benchmark" with 300 MiB of its
# own page cache and 200 threads, growing 20 MiB/s, probed RUNS times
# steady and RUNS times with bursts of 160 MiB every 300 ms. Prints one
# row per run (overhead_bytes, its parts, unexplained_bytes, within
# max(5%, 8 MiB)?) and the text report's explanation line; the documents
# stay in OUTDIR. Needs root; the cgroup is made under this shell's own
# memory cgroup as memprobe-bench-standin-PID and removed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
MEMPROBE=${MEMPROBE:-$here/build/memprobe}
BENCH=${MEMPROBE_TEST_BIN:-$here/build/tests/bin}/benchmark
RUNS=${1:-10}
OUT=${2:-$(mktemp -d /tmp/memprobe-standin.XXXXXX)}
MIB=1048576
. "$here/tests/lib.sh" # own_memcg_dir, cg_usage, wait_usage
mkdir -p "$OUT"
cg="$(own_memcg_dir)/memprobe-bench-standin-$$"
bpid=
cleanup() {
	[ -n "$bpid" ] && kill -9 "$bpid" 2>/dev/null && wait "$bpid" 2>/dev/null
	[ -d "$cg" ] && remove_cgroup "$cg"
	cleanup_all # lib.sh's: its temporary directory
}
trap cleanup EXIT

run() { # MODE BURST_MIB I
	local f=$OUT/$1-$3.json
	mkdir "$cg" || return 1
	echo $((3 * 1024 * MIB)) > "$cg/memory.limit_in_bytes" 2>/dev/null || echo $((3 * 1024 * MIB)) > "$cg/memory.max"
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$BENCH" 1536 300 200 20 "$2" 300 \
		"$OUT/cache-$$" 2600 >/dev/null 2>&1 &
	bpid=$!
	wait_usage "$cg" $((1836 * MIB)) || echo "# $1 $3: the benchmark did not reach 1836 MiB" >&2
	sleep 1
	"$MEMPROBE" probe --cgroup "$cg" --format json -o "$f" 2> "$f.err"
	"$MEMPROBE" report "$f" > "${f%.json}.txt" 2>/dev/null
	kill -9 "$bpid"; wait "$bpid" 2>/dev/null; bpid=
	remove_cgroup "$cg"
	jq -r --arg m "$1" --arg i "$3" '
		def mib: . / 1048576 * 10 | round / 10;
		[.overhead_bytes, .overhead.unexplained_bytes] as [$o, $u]
		| ([($o / 20 | floor), 8388608] | max) as $b
		| "| \($m) | \($i) | \($o) | \(.usage_before_bytes) | \(.usage_peak_bytes) | \(
		  [.overhead.parts[] | select((.bytes | fabs) >= 1048576) | "\(.comm) \(.category) \(.bytes | mib)"] | join(", ")) | \(
		  .overhead.probe_kernel_bytes) | \($u) | \(if ($u | fabs) <= $b and $o >= 0 then "yes" else "NO" end) |"' "$f"
}

echo "| mode | run | overhead_bytes | usage_before | usage_peak | parts >= 1 MiB (MiB) | probe_kernel_bytes | unexplained_bytes | within |"
echo "|---|---|---|---|---|---|---|---|---|"
for mode in steady bursty; do
	burst=0; [ $mode = bursty ] && burst=160
	for i in $(seq "$RUNS"); do
		run $mode $burst "$i"
	done
done
echo
for mode in steady bursty; do
	echo "$mode, run 1: $(sed -n 3p "$OUT/$mode-1.txt")"
done
echo "# documents in $OUT"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The scale bench (issue 14): `memprobe record` of a cgroup of 1000
# processes and 10 000 threads (bench/swarm) for SCALE_SECONDS (600), to see
# whether memprobe's own memory and its BPF maps stay bounded and whether
# any map overflows (the report's attribution.events_lost).
#
#   bench/scale.sh          (root; `make scale` builds what it needs first)
#
# Environment: SCALE_SECONDS (600), SCALE_PROCS (1000), SCALE_THREADS (10
# per process), SCALE_LIFE (60:300, a process's life in seconds before it is
# replaced), SCALE_SAMPLE (10, seconds between samples of memprobe's
# memory), SCALE_LIMIT (2G, the cgroup's limit), SCALE_HOUR (180, seconds
# of the hour-of-timeline check below; 0: none), MEMPROBE (build/memprobe),
# SWARM (build/bench/swarm), MAPSTAT (build/bench/mapstat), SCALE_OUT
# (build/bench).
#
# The cgroup is memprobe-bench-scale-PID, a child of this shell's own memory
# cgroup. memprobe runs outside it. Every SCALE_SAMPLE seconds: memprobe's
# VmRSS and VmHWM, the memlock of its BPF map descriptors (fdinfo), the
# cgroup's usage and its process and thread counts, and how full each map
# is and the events lost so far (bench/mapstat: the report's events_lost
# span the start to the peak only, this the whole run). At the end memprobe is
# stopped with SIGINT, and the summary (also SCALE_OUT/scale.json) gives the
# report's size, its size per hour at the default interval, the events
# lost, and the per-CPU maps' memory per CPU, projected for 192 CPUs.
#
# Everything made (the cgroup, the swarm, memprobe) is removed on any exit,
# Ctrl-C included. Only processes this script started are signalled, by id.
set -u

cd "$(dirname "$0")/.." || exit 1
SECONDS_RUN=${SCALE_SECONDS:-600}
PROCS=${SCALE_PROCS:-1000}
THREADS=${SCALE_THREADS:-10}
LIFE=${SCALE_LIFE:-60:300}
SAMPLE=${SCALE_SAMPLE:-10}
LIMIT=${SCALE_LIMIT:-2G}
MEMPROBE=${MEMPROBE:-build/memprobe}
SWARM=${SWARM:-build/bench/swarm}
MAPSTAT=${MAPSTAT:-build/bench/mapstat}
OUT=${SCALE_OUT:-build/bench}
PROJECT_CPUS=192

die() { echo "scale: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (real cgroups, real BPF)"
for f in "$MEMPROBE" "$SWARM" "$MAPSTAT"; do
	[ -x "$f" ] || die "$f missing: make scale (or make $f)"
done
command -v jq >/dev/null || die "needs jq (apt-get install jq)"
mkdir -p "$OUT" || exit 1

# This shell's own memory cgroup: v1's memory controller or the v2 tree.
if [ -d /sys/fs/cgroup/memory ]; then
	rel=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup)
	PARENT=/sys/fs/cgroup/memory${rel%/}
	LIMIT_FILE=memory.limit_in_bytes
else
	rel=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
	PARENT=/sys/fs/cgroup${rel%/}
	LIMIT_FILE=memory.max
fi
[ -d "$PARENT" ] || die "cannot find this shell's memory cgroup ($PARENT)"
CG=$PARENT/memprobe-bench-scale-$$
TMP=$(mktemp -d /tmp/memprobe-bench-scale.XXXXXX) || exit 1
REPORT=$OUT/scale-report.json
SAMPLES=$OUT/scale-samples.tsv
SUMMARY=$OUT/scale.json
SWARM_PID='' MP_PID='' MP_JOB=''

stop_swarm() {
	[ -n "$SWARM_PID" ] || return 0
	kill -TERM -- "-$SWARM_PID" 2>/dev/null
	for _ in $(seq 50); do kill -0 -- "-$SWARM_PID" 2>/dev/null || break; sleep 0.2; done
	kill -KILL -- "-$SWARM_PID" 2>/dev/null
	wait "$SWARM_PID" 2>/dev/null
	SWARM_PID=
}

# Stop what this script started, by pid: memprobe, then the swarm's process
# group (its own, made by swarm itself: the id is the swarm's pid), then
# wait for the cgroup to empty and remove it.
cleanup() {
	trap - EXIT INT TERM
	if [ -n "$MP_PID" ] && kill -0 "$MP_PID" 2>/dev/null; then
		kill -INT "$MP_PID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$MP_PID" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$MP_PID" 2>/dev/null
	fi
	[ -n "$MP_JOB" ] && wait "$MP_JOB" 2>/dev/null
	stop_swarm
	if [ -d "$CG" ]; then
		for _ in $(seq 100); do [ -s "$CG/cgroup.procs" ] || break; sleep 0.2; done
		rmdir "$CG" 2>/dev/null || echo "scale: could not remove $CG" >&2
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "scale: interrupted" >&2; exit 130' INT TERM

mkdir "$CG" || die "cannot make $CG"
echo "$LIMIT" > "$CG/$LIMIT_FILE" || die "cannot set the limit of $CG"

# The swarm, moved into the cgroup before it forks anything.
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" --procs "$3" --threads "$4" --life "$5"' \
	swarm "$CG" "$SWARM" "$PROCS" "$THREADS" "$LIFE" > "$TMP/swarm.out" 2> "$TMP/swarm.err" &
SWARM_PID=$!
echo "scale: starting $PROCS processes x $THREADS threads in $CG" >&2
for _ in $(seq 600); do
	grep -q '^ready' "$TMP/swarm.out" 2>/dev/null && break
	kill -0 "$SWARM_PID" 2>/dev/null || die "the swarm died: $(cat "$TMP/swarm.err")"
	sleep 0.5
done
grep -q '^ready' "$TMP/swarm.out" || die "the swarm did not start in 300 s"
threads_in() { wc -l < "$CG/tasks" 2>/dev/null || echo 0; }
procs_in() { wc -l < "$CG/cgroup.procs" 2>/dev/null || echo 0; }
usage_in() {
	cat "$CG/memory.usage_in_bytes" 2>/dev/null || cat "$CG/memory.current" 2>/dev/null || echo 0
}
[ -e "$CG/tasks" ] || threads_in() { wc -l < "$CG/cgroup.threads" 2>/dev/null || echo 0; }
echo "scale: swarm ready: $(procs_in) processes, $(threads_in) threads, $(( $(usage_in) >> 20 )) MiB" >&2

# memprobe, outside the cgroup; ready once its hooks are attached. Under
# GNU time where there is one, for its whole life's peak RSS (ru_maxrss:
# the peak is in writing the report, after the last /proc reading); then
# MP_JOB is time's pid, MP_PID memprobe's (its child).
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=
# start_memprobe TIMEFILE ARGS...: memprobe ARGS in the background.
start_memprobe() {
	local tf=$1
	shift
	${TIME:+"$TIME" -f %M -o "$tf"} "$MEMPROBE" "$@" &
	MP_JOB=$!
	MP_PID=$MP_JOB
	[ -n "$TIME" ] || return 0
	for _ in $(seq 50); do
		MP_PID=$(cat /proc/"$MP_JOB"/task/"$MP_JOB"/children 2>/dev/null)
		MP_PID=${MP_PID%% *}
		[ -n "$MP_PID" ] && return 0
		sleep 0.1
	done
	die "memprobe did not start under $TIME"
}
start_memprobe "$TMP/time" record --cgroup "$CG" --format json -o "$REPORT" --quiet \
	--ready-fd 3 3> "$TMP/ready" 2> "$TMP/memprobe.err"
for _ in $(seq 300); do
	grep -q ready "$TMP/ready" 2>/dev/null && break
	kill -0 "$MP_PID" 2>/dev/null || die "memprobe exited early: $(cat "$TMP/memprobe.err")"
	sleep 0.2
done
grep -q ready "$TMP/ready" || die "memprobe not ready after 60 s"

# The BPF maps memprobe holds, from its fdinfo: one line per map, "id type
# value_size max_entries memlock name" (bpf-map descriptors only).
maps_of() {
	local fd info
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-map" ] || continue
		info=/proc/$1/fdinfo/${fd##*/}
		awk '$1=="map_id:"{id=$2} $1=="map_type:"{t=$2} $1=="value_size:"{v=$2}
		     $1=="max_entries:"{m=$2} $1=="memlock:"{l=$2}
		     END{print id, t, v, m, l}' "$info" 2>/dev/null
	done | sort -un | while read -r id t v m l; do
		name=$(bpftool map show id "$id" 2>/dev/null | sed -n '1s/.* name \([^ ]*\) .*/\1/p')
		echo "$id $t $v $m $l ${name:--}"
	done
}
status_kb() { awk -v k="$2:" '$1==k{print $2}' /proc/"$1"/status 2>/dev/null; }

maps_of "$MP_PID" > "$TMP/maps.start"
map_ids=$(awk '{print $1}' "$TMP/maps.start")
printf 't_s\tvmrss_kib\tvmhwm_kib\tmap_memlock_bytes\tcgroup_bytes\tprocs\tthreads\tmaps\n' > "$SAMPLES"
sample() {
	local memlock
	memlock=$(maps_of "$MP_PID" | awk '{s+=$5} END{print s+0}')
	# shellcheck disable=SC2086 # one argument per map id
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$(status_kb "$MP_PID" VmRSS)" \
		"$(status_kb "$MP_PID" VmHWM)" "$memlock" "$(usage_in)" "$(procs_in)" \
		"$(threads_in)" "$("$MAPSTAT" $map_ids 2>/dev/null | sed 's/^ //')" >> "$SAMPLES"
}
echo "scale: recording for $SECONDS_RUN s (a sample every $SAMPLE s in $SAMPLES)" >&2
start=$(date +%s)
sample 0
while :; do
	now=$(( $(date +%s) - start ))
	[ "$now" -ge "$SECONDS_RUN" ] && break
	kill -0 "$MP_PID" 2>/dev/null || die "memprobe exited during the run: $(cat "$TMP/memprobe.err")"
	step=$(( SECONDS_RUN - now < SAMPLE ? SECONDS_RUN - now : SAMPLE ))
	sleep "$step"
	sample $(( $(date +%s) - start ))
done
maps_of "$MP_PID" > "$TMP/maps.end"
elapsed=$(( $(date +%s) - start ))

# SIGINT, and how long memprobe takes to write its report and exit.
t0=$(date +%s%N)
kill -INT "$MP_PID"
mp_rc=
# VmHWM read until the exit: writing the report is memprobe's peak.
hwm_exit=0
# (by pid and name: the swarm starts processes all the time, and one may
# take memprobe's pid once it has gone)
is_memprobe() { [ "$(cat /proc/"$1"/comm 2>/dev/null)" = memprobe ]; }
for _ in $(seq 1200); do
	is_memprobe "$MP_PID" || break
	h=$(status_kb "$MP_PID" VmHWM)
	[ -n "$h" ] || break
	hwm_exit=$h
	sleep 0.05
done
if is_memprobe "$MP_PID"; then
	echo "scale: memprobe still running 120 s after SIGINT (a hang)" >&2
	grep -E 'State|Threads' /proc/"$MP_PID"/status >&2
	cat /proc/"$MP_PID"/stack >&2 2>/dev/null
	stop_ms=-1
else
	wait "$MP_JOB"; mp_rc=$?
	MP_JOB=
	stop_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	MP_PID=
fi
[ -s "$TMP/memprobe.err" ] && sed 's/^/memprobe: /' "$TMP/memprobe.err" >&2
procs_end=$(procs_in) threads_end=$(threads_in)

# The summary: memprobe's memory over the run, the maps, the report.
mem=$(jq -R -s -c --argjson half "$(( SECONDS_RUN / 2 ))" '
	[split("\n")[1:][] | select(length > 0) | split("\t") | map(tonumber? // 0)
	 | select(.[1] > 0)] as $s
	| ([$s[] | select(.[0] >= $half)] | first // $s[-1]) as $h
	| {samples: ($s | length), vmrss_kib_first: $s[0][1], vmrss_kib_half: $h[1],
	   vmrss_kib_last: $s[-1][1], vmrss_kib_max: ([$s[][1]] | max),
	   vmhwm_kib: ([$s[][2]] | max),
	   map_memlock_bytes_first: $s[0][3], map_memlock_bytes_last: $s[-1][3],
	   map_memlock_bytes_max: ([$s[][3]] | max),
	   cgroup_bytes_max: ([$s[][4]] | max), threads_max: ([$s[][6]] | max)}' "$SAMPLES")
# The maps' fill: at the last sample (just before SIGINT), the most seen,
# and when each was first full; the events lost over the whole run.
fill=$(jq -R -s -c '
	[split("\n")[1:][] | select(length > 0) | split("\t") | select(length >= 8)
	 | {t: (.[0] | tonumber), kv: (.[7] | split(" ") | map(select(length > 0) | split("=")
	    | {key: .[0], value: .[1]}) | from_entries)}] as $s
	| ($s[-1].kv // {}) as $last
	| {lost_whole_run: ($last | with_entries(select(.key | startswith("lost_")))
		| with_entries(.key |= ltrimstr("lost_") | .value |= tonumber)),
	   maps: ($last | with_entries(select(.key | startswith("lost_") | not)) | keys
		| map(. as $m | {key: $m, value: {
			entries_end: ($last[$m] | split("/")[0] | tonumber),
			max_entries: ($last[$m] | split("/")[1] | tonumber),
			entries_most: ([$s[] | .kv[$m] // "0/0" | split("/")[0] | tonumber] | max),
			full_at_s: ([$s[] | select((.kv[$m] // "0/1" | split("/") | .[0] == .[1])) | .t] | first)}})
		| from_entries)}' "$SAMPLES")
[ -n "$fill" ] || fill='{}'
ncpu=$(nproc --all)
# Per-CPU maps: BPF_MAP_TYPE_PERCPU_HASH 5, PERCPU_ARRAY 6, LRU_PERCPU_HASH
# 10, PERCPU_CGROUP_STORAGE 21; each entry holds round_up(value_size, 8)
# bytes per possible CPU (the kernel's per-CPU allocation), preallocated.
maps_json=$(awk -v ncpu="$ncpu" -v proj="$PROJECT_CPUS" '
	BEGIN{printf "["}
	{pc = ($2==5 || $2==6 || $2==10 || $2==21); per = pc ? int(($3+7)/8)*8*$4 : 0
	 printf "%s{\"id\":%d,\"name\":\"%s\",\"type\":%d,\"value_size\":%d,\"max_entries\":%d,\"memlock_bytes\":%d,\"percpu\":%s,\"percpu_bytes_per_cpu\":%d,\"percpu_bytes_at_%d_cpus\":%d}",
		(NR>1 ? "," : ""), $1, $6, $2, $3, $4, $5, pc?"true":"false", per, proj, per*proj}
	END{printf "]"}' "$TMP/maps.end")
report_bytes=$(stat -c %s "$REPORT" 2>/dev/null || echo 0)
interval_ms=100
lost='null' samples_n=0
if [ "$report_bytes" -gt 0 ] && jq -e . "$REPORT" >/dev/null 2>&1; then
	lost=$(jq -c '.attribution.events_lost // null' "$REPORT")
	samples_n=$(jq '.timeline | length' "$REPORT")
fi
# The timeline is the report's last member (one line "\t"timeline":" to its
# closing "\t}]"): its bytes per sample, the rest fixed; an hour at the
# default interval holds 3600 s / interval samples.
timeline_bytes=$(awk '/^\t"timeline":/ {on=1} on {n += length($0) + 1} on && /^\t[]}]/ {on=0}
	END {print n + 0}' "$REPORT" 2>/dev/null || echo 0)
per_hour=$(awk -v b="$report_bytes" -v t="$timeline_bytes" -v n="$samples_n" -v i="$interval_ms" \
	'BEGIN {printf "%d", (n > 0 ? b - t + t / n * 3600000 / i : 0)}')
jq -n --argjson mem "$mem" --argjson maps "$maps_json" --argjson lost "$lost" \
	--arg cg "$CG" --arg kernel "$(uname -r)" --arg cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
	--arg date "$(date -u +%FT%TZ)" --arg version "$("$MEMPROBE" --version 2>/dev/null | head -1)" \
	--argjson procs "$PROCS" --argjson threads "$THREADS" --arg life "$LIFE" \
	--argjson seconds "$elapsed" --argjson ncpu "$ncpu" --argjson proj "$PROJECT_CPUS" \
	--argjson report_bytes "$report_bytes" --argjson per_hour "$per_hour" \
	--argjson interval_ms "$interval_ms" --argjson samples_n "$samples_n" \
	--argjson stop_ms "$stop_ms" --arg mp_rc "$mp_rc" --argjson hwm_exit "$hwm_exit" \
	--argjson timeline_bytes "$timeline_bytes" --argjson fill "$fill" \
	--argjson maxrss "$(tail -1 "$TMP/time" 2>/dev/null | grep -x '[0-9][0-9]*' || echo null)" \
	--argjson procs_end "$procs_end" --argjson threads_end "$threads_end" \
	--arg spawned "$(cat "$TMP/swarm.err" 2>/dev/null)" '
	{date: $date, kernel: $kernel, cpu: $cpu, cpus: $ncpu, memprobe: $version,
	 workload: {processes: $procs, threads_per_process: $threads, life_s: $life,
		    processes_at_end: $procs_end, threads_at_end: $threads_end},
	 record_seconds: $seconds, interval_ms: $interval_ms, timeline_samples: $samples_n,
	 memprobe_memory: ($mem + {vmhwm_kib_at_exit: $hwm_exit, maxrss_kib_whole_life: $maxrss}),
	 sigint_to_exit_ms: $stop_ms, memprobe_exit: ($mp_rc | if . == "" then null else tonumber end),
	 report_bytes: $report_bytes, report_timeline_bytes: $timeline_bytes,
	 report_bytes_per_sample: (if $samples_n > 0 then ($timeline_bytes / $samples_n | floor) else null end),
	 report_bytes_per_hour: $per_hour,
	 events_lost: $lost,
	 events_lost_whole_run: $fill.lost_whole_run,
	 map_fill: $fill.maps,
	 maps: $maps,
	 percpu_bytes_per_cpu: ([$maps[] | .percpu_bytes_per_cpu] | add),
	 percpu_bytes_at_projected_cpus: ([$maps[] | .percpu_bytes_per_cpu] | add * $proj),
	 projected_cpus: $proj,
	 map_memlock_bytes_total: ([$maps[] | .memlock_bytes] | add)}' > "$SUMMARY" ||
	die "could not write $SUMMARY"

# An hour of timeline in SCALE_HOUR seconds (180; 0: skipped): a record at
# a 5 ms interval of a small swarm in a cgroup memprobe makes (--limit):
# the report's size and memprobe's peak RSS for an hour at the default.
HOUR=${SCALE_HOUR:-180}
if [ "$HOUR" -gt 0 ]; then
	stop_swarm
	echo "scale: an hour's timeline: record --interval 5 for $HOUR s" >&2
	start_memprobe "$TMP/hour.time" record --quiet --interval 5 --duration "$HOUR" \
		--limit 256M --format json -o "$OUT/scale-hour-report.json" -- \
		"$SWARM" --procs 20 --threads 10 --life 60:120 > /dev/null 2> "$TMP/hour.err"
	wait "$MP_JOB"; hour_rc=$?
	MP_JOB='' MP_PID=''
	[ "$hour_rc" = 0 ] || sed 's/^/memprobe: /' "$TMP/hour.err" >&2
	hour=$(jq -c --argjson s "$HOUR" --argjson rc "$hour_rc" \
		--argjson maxrss "$(tail -1 "$TMP/hour.time" 2>/dev/null | grep -x '[0-9][0-9]*' || echo null)" \
		--argjson bytes "$(stat -c %s "$OUT/scale-hour-report.json" 2>/dev/null || echo 0)" \
		'{seconds: $s, interval_ms: 5, exit: $rc, timeline_samples: (.timeline | length),
		  report_bytes: $bytes, maxrss_kib_whole_life: $maxrss}' \
		"$OUT/scale-hour-report.json" 2>/dev/null) || hour='{"failed":true}'
	jq --argjson h "$hour" '. + {hour_check: $h}' "$SUMMARY" > "$TMP/summary" &&
		mv "$TMP/summary" "$SUMMARY"
fi

jq -r '
	"scale: \(.workload.processes) processes x \(.workload.threads_per_process) threads, \(.record_seconds) s of record on \(.cpus) CPUs (\(.kernel))",
	"  memprobe VmRSS: first \(.memprobe_memory.vmrss_kib_first) KiB, half-way \(.memprobe_memory.vmrss_kib_half) KiB, last \(.memprobe_memory.vmrss_kib_last) KiB; VmHWM \(.memprobe_memory.vmhwm_kib) KiB during the run, \(.memprobe_memory.vmhwm_kib_at_exit) KiB at the last reading after SIGINT, \(.memprobe_memory.maxrss_kib_whole_life) KiB over its life (ru_maxrss)",
	"  BPF map memlock: first \(.memprobe_memory.map_memlock_bytes_first) B, last \(.memprobe_memory.map_memlock_bytes_last) B",
	"  SIGINT to exit: \(.sigint_to_exit_ms) ms, exit status \(.memprobe_exit)",
	"  report: \(.report_bytes) B for \(.timeline_samples) timeline samples (\(.report_bytes_per_sample) B each); \(.report_bytes_per_hour) B per hour at \(.interval_ms) ms",
	"  events lost (report, start to peak): \(.events_lost | tostring)",
	"  map overflows over the whole run (mapstat): \(.events_lost_whole_run | tostring)",
	(.map_fill | to_entries[] | "    \(.key): \(.value.entries_end) of \(.value.max_entries) entries at the end, \(.value.entries_most) at most\(if .value.full_at_s then ", full at \(.value.full_at_s) s" else "" end)"),
	"  per-CPU maps: \(.percpu_bytes_per_cpu) B per CPU, \(.percpu_bytes_at_projected_cpus) B at \(.projected_cpus) CPUs",
	(.maps[] | "    map \(.name) type \(.type): \(.max_entries) x \(.value_size) B, memlock \(.memlock_bytes) B\(if .percpu then ", \(.percpu_bytes_per_cpu) B per CPU" else "" end)"),
	(.hour_check // empty | "  an hour of samples (\(.timeline_samples) at \(.interval_ms) ms in \(.seconds) s): report \(.report_bytes) B, memprobe peak RSS \(.maxrss_kib_whole_life) KiB, exit \(.exit)")
	' "$SUMMARY"
echo "scale: summary in $SUMMARY, report in $REPORT" >&2
# A failure memprobe itself reported (no report, a bad exit, a hang) fails the run.
[ "$report_bytes" -gt 0 ] && [ "$stop_ms" -ge 0 ] && [ "${mp_rc:-1}" = 0 ]

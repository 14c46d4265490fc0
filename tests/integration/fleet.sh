# shellcheck shell=bash
# tests/integration/fleet.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# ---------------------------------------------------------------------------
# record left on (issue 25): no --duration, SIGHUP reopens the outputs (for
# logrotate) and stops nothing, SIGTERM stops it at once with its report,
# the cgroup's removal is said, and --wait-cgroup waits for it to come back.

# daemon_wait WHAT COMMAND...: until COMMAND succeeds, up to 60 s
daemon_wait() {
	local what=$1 i; shift
	for i in $(seq 600); do "$@" && return 0; sleep 0.1; done
	echo "# daemon: waited 60 s for $what"
	return 1
}

test_record_daemon() {
	local cg d=$TMP/daemon pid rc nomem
	trap 'daemon_cleanup; cleanup_all' EXIT
	cg=$(make_cgroup daemon $((256 * MIB))) || { fail "daemon: make cgroup"; return; }
	mkdir -p "$d/out"
	# a minute between samples: the live file is written at SIGHUP only
	"$MEMPROBE" record --cgroup "$cg" --interval 60000 --openmetrics "$d/out/m.prom" \
		--format json -o "$d/out/r.json" --ready-fd 3 3> "$d/ready" 2> "$d/err" &
	pid=$!
	DAEMON_PIDS+=("$pid")
	daemon_wait "ready" [ -s "$d/ready" ]
	# logrotate with olddir: the directory rotated away, a new one made, SIGHUP
	mv "$d/out" "$d/out.1"; mkdir "$d/out"
	kill -HUP "$pid"
	daemon_wait "the live file" [ -s "$d/out/m.prom" ]
	check "daemon: SIGHUP: the live file written at once where its path says" [ -s "$d/out/m.prom" ]
	check "daemon: SIGHUP: the recording goes on" alive "$pid"
	check "daemon: SIGHUP: says so, and which signals stop it" \
		grep -q "SIGHUP: outputs reopened.*; recording on (SIGINT or SIGTERM stops it)" "$d/err"
	check_eq "daemon: SIGHUP: the rotated directory keeps nothing of memprobe's" "$(ls -A "$d/out.1")" ""
	kill -TERM "$pid"; wait "$pid"; rc=$?
	check_eq "daemon: SIGTERM: exit 0" "$rc" 0
	check_eq "daemon: SIGTERM: the report where -o says now, ended by SIGTERM" \
		"$(jqv "$d/out/r.json" .run.ended_by)" SIGTERM
	# a stop was seen at the next timeline sample only: a minute here
	check_le "daemon: SIGTERM: stops at once, not at the next sample (ms)" \
		"$(jqv "$d/out/r.json" .run.duration_ms)" 30000
	check_eq "daemon: SIGTERM: the directory holds the report and the live file alone" \
		"$(ls -A "$d/out" | tr '\n' ' ')" "m.prom r.json "
	# SIGHUP is memprobe's alone: record -- CMD does not pass it on (a
	# postrotate killed the workload: "killed by signal 1", exit 129)
	"$MEMPROBE" record --format json -o "$d/hup.json" --ready-fd 3 -- sleep 600 \
		3> "$d/ready-hup" 2> "$d/err-hup" &
	pid=$!
	DAEMON_PIDS+=("$pid")
	daemon_wait "ready" [ -s "$d/ready-hup" ]
	kill -HUP "$pid"
	daemon_wait "SIGHUP's line" grep -q "SIGHUP: outputs reopened" "$d/err-hup"
	kill -INT "$pid"; wait "$pid"; rc=$?
	check_eq "daemon: SIGHUP is not sent to the command: it ends by memprobe's SIGINT, as ^C" \
		"$rc $(jqv "$d/hup.json" '"\(.run.ended_by) \(.run.killed_by_signal)"')" "130 SIGINT 2"
	# the cgroup's removal ends it with a line that says so
	"$MEMPROBE" record --cgroup "$cg" --interval 100 --format json -o "$d/gone.json" \
		--ready-fd 3 3> "$d/ready2" 2> "$d/err" &
	pid=$!
	DAEMON_PIDS+=("$pid")
	daemon_wait "ready" [ -s "$d/ready2" ]
	rmdir "$cg"
	wait "$pid"; rc=$?
	check_eq "daemon: the cgroup removed: exit 0, ended by it" \
		"$rc" 0
	check_eq "daemon: the cgroup removed: exit 0, ended by it" \
		"$(jqv "$d/gone.json" .run.ended_by)" "cgroup removed"
	check "daemon: the cgroup removed: one line names it and --wait-cgroup" \
		grep -q "^memprobe record: $cg was removed after [0-9.]* s: the recording ends there.*--wait-cgroup" "$d/err"
	# one moment for the removal: the line's figure is the report's (it
	# said 1.0 s beside the report's 0.9 s: the clock after the finish)
	check_eq "daemon: the cgroup removed: the line's time is the report's" \
		"$(sed -n 's/^memprobe record: .* was removed after \([0-9.]*\) s:.*/\1/p' "$d/err")" \
		"$(awk -v ms="$(jqv "$d/gone.json" .run.duration_ms)" 'BEGIN { printf "%.1f", ms / 1000 }')"
	# --wait-cgroup: not there yet, there, removed (its report written, the
	# live file gone), back (recorded anew), stopped
	"$MEMPROBE" record --cgroup "$cg" --wait-cgroup --interval 100 --openmetrics "$d/w.prom" \
		--format json -o "$d/w.json" 2> "$d/err" &
	pid=$!
	DAEMON_PIDS+=("$pid")
	daemon_wait "the waiting line" grep -q "no such memory cgroup yet; waiting" "$d/err"
	mkdir "$cg"
	daemon_wait "the live file" [ -s "$d/w.prom" ]
	check "daemon: --wait-cgroup: a cgroup not there yet is recorded once made" [ -s "$d/w.prom" ]
	rmdir "$cg"
	daemon_wait "the first report" [ -s "$d/w.json" ]
	daemon_wait "the live file's removal" [ ! -e "$d/w.prom" ]
	check_eq "daemon: --wait-cgroup: the removed cgroup's report written" \
		"$(jqv "$d/w.json" .run.ended_by)" "cgroup removed"
	check "daemon: --wait-cgroup: its live file removed while it is gone" [ ! -e "$d/w.prom" ]
	check "daemon: --wait-cgroup: memprobe waits on" alive "$pid"
	mkdir "$cg"
	daemon_wait "the live file" [ -s "$d/w.prom" ]
	check "daemon: --wait-cgroup: the cgroup back, recorded anew" grep -q "is there: recording it" "$d/err"
	kill -INT "$pid"; wait "$pid"; rc=$?
	check_eq "daemon: --wait-cgroup: SIGINT: exit 0, the second recording's report" \
		"$rc" 0
	check_eq "daemon: --wait-cgroup: SIGINT: exit 0, the second recording's report" \
		"$(jqv "$d/w.json" .run.ended_by)" SIGINT
	rmdir "$cg"
	expect_bad "record --wait-cgroup --pid" "$MEMPROBE" record --wait-cgroup --pid $$
	expect_bad "record --wait-cgroup --duration" "$MEMPROBE" record --wait-cgroup --cgroup "$(own_memcg_dir)" --duration 5
	# a cgroup at the path in another hierarchy, none in memory's (a v1
	# unit with memory accounting off): refused, not waited for forever
	# (the timeout only bounds the old behaviour's wait)
	nomem=$(awk -F: '$2 == "pids" { print $3 }' /proc/self/cgroup)
	if [ -n "$nomem" ] && [ -d "/sys/fs/cgroup/pids$nomem" ]; then
		nomem=${nomem%/}/memprobe-test-nomem-$$
		mkdir "/sys/fs/cgroup/pids$nomem" && echo "/sys/fs/cgroup/pids$nomem" >> "$TMP/created-cgroups"
		expect_bad "record --wait-cgroup of a cgroup without memory" \
			timeout 120 "$MEMPROBE" record --wait-cgroup --cgroup "$nomem" -o "$d/nomem.json"
		check "... names it not a memory cgroup" grep -q "a cgroup in /sys/fs/cgroup/pids, but not a memory cgroup" "$TMP/bad.err"
		rmdir "/sys/fs/cgroup/pids$nomem"
	else
		skip "record --wait-cgroup of a cgroup without memory: no v1 pids hierarchy"
	fi
	daemon_cleanup
	trap cleanup_all EXIT
	rm -rf "$d"
	check "daemon: nothing left behind" no_leftovers
}

# unit_cmd UNIT KEY: KEY='s command line of the unit file, its continued
# lines joined
unit_cmd() {
	awk -v k="$2=" 'index($0, k) == 1 { line = substr($0, length(k) + 1); on = 1 }
		on && index($0, k) != 1 { line = line " " $0 }
		on { if (line ~ /\\$/) { sub(/\\$/, "", line); next } print line; exit }' "$1" |
		tr -s ' \t' '  '
}

# unit_words CMDLINE: the unit's command line as systemd runs it here: the
# specifiers %f and %i, its variables and memprobe's path stood in for, C
# escapes undone; one word a line
unit_words() {
	local w
	for w in $1; do
		w=${w//%f/$UNIT_CG}; w=${w//%i/$UNIT_INST}
		w=${w//'${TEXTFILE_DIR}'/$UNIT_TF}; w=${w//'${STATE_DIRECTORY}'/$UNIT_STATE}
		w=${w//'$MEMPROBE_OPTS'/}; w=${w//\/usr\/local\/sbin\/memprobe/$MEMPROBE}
		[ -n "$w" ] && printf '%b\n' "$w"
	done
}

# The systemd unit of deploy/: systemd-analyze verify, and its command lines
# run as the unit would run them (no systemd here to start it).
test_deploy_unit() {
	local src unit d=$TMP/unit pid rc prom args=()
	src=$(cd "$(dirname "$0")/.." && pwd)
	unit=$src/deploy/memprobe-record@.service
	[ -f "$unit" ] || { skip "unit: no deploy/ here (a guest)"; return; }
	if ! command -v systemd-analyze > /dev/null; then
		skip "unit: no systemd-analyze (Debian's systemd; scripts/deps.sh --tests)"; return
	fi
	mkdir -p "$d/man/man8" "$d/tf" "$d/state"
	UNIT_CG=$(make_cgroup unit $((256 * MIB))) || { fail "unit: make cgroup"; return; }
	UNIT_INST=$(systemd-escape --path "$UNIT_CG") UNIT_TF=$d/tf UNIT_STATE=$d/state
	# the unit as installed: memprobe where make install puts it, the man page too
	sed "s|/usr/local/sbin/memprobe|$MEMPROBE|g" "$unit" > "$d/memprobe-record@.service"
	cp "$src/docs/memprobe.8" "$d/man/man8/"
	MANPATH=$d/man systemd-analyze verify "$d/memprobe-record@$UNIT_INST.service" > "$d/verify.out" 2>&1
	rc=$?
	check_eq "unit: systemd-analyze verify exits 0" "$rc" 0
	check_eq "unit: systemd-analyze verify says nothing" "$(cat "$d/verify.out")" ""
	mapfile -t args < <(unit_words "$(unit_cmd "$unit" ExecStart)")
	"${args[@]}" 2> "$d/err" &
	pid=$!
	DAEMON_PIDS+=("$pid")
	prom=$d/tf/$(printf '%b' "memprobe-$UNIT_INST.prom")
	daemon_wait "the unit's live file" [ -s "$prom" ]
	check "unit: ExecStart writes memprobe-INSTANCE.prom into the textfile directory" [ -s "$prom" ]
	mapfile -t args < <(unit_words "$(unit_cmd "$unit" ExecReload | sed "s/\\\$MAINPID/$pid/")")
	"${args[@]}"
	daemon_wait "SIGHUP's line" grep -q "SIGHUP: outputs reopened" "$d/err"
	check "unit: ExecReload: the outputs reopened, the recording goes on" \
		eval 'grep -q "SIGHUP: outputs reopened" "$d/err" && alive "$pid"'
	kill -TERM "$pid"; wait "$pid"; rc=$?
	check_eq "unit: SIGTERM (systemctl stop): exit 0" "$rc" 0
	check_eq "unit: ... the report in the state directory" \
		"$(jqv "$d/state/$(printf '%b' "$UNIT_INST").json" .run.ended_by)" SIGTERM
	mapfile -t args < <(unit_words "$(unit_cmd "$unit" ExecStopPost)")
	"${args[@]}"
	check "unit: ExecStopPost removes the live file" [ ! -e "$prom" ]
	daemon_cleanup
	remove_cgroup "$UNIT_CG"
	rm -rf "$d"
	check "unit: nothing left behind" no_leftovers
}

# deploy/prometheus's rules: promtool check rules, and promtool test rules
# of memprobe.rules.test.yml (synthetic series for each recording rule and
# alert); om_fleet loads them into a real Prometheus.
test_fleet_rules() {
	local dir
	dir=$(cd "$(dirname "$0")/.." && pwd)/deploy/prometheus
	[ -f "$dir/memprobe.rules.yml" ] || { skip "fleet rules: no deploy/ here (a guest)"; return; }
	if ! command -v promtool > /dev/null; then
		skip "fleet rules: no promtool (Debian's prometheus; scripts/deps.sh --tests)"; return
	fi
	check "fleet rules: promtool check rules" promtool check rules "$dir/memprobe.rules.yml"
	check "fleet rules: promtool test rules memprobe.rules.test.yml" \
		promtool test rules "$dir/memprobe.rules.test.yml"
}

# Prometheus: --format openmetrics, and record --openmetrics through a real
# node_exporter's textfile collector into a real Prometheus (both Debian's,
# started here on 127.0.0.1 with ports chosen here, stopped here).

# free_port: a TCP port of 127.0.0.1 that nothing listens on (the kernel's pick)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# prom_value URL QUERY: the value of an instant query's first series, or nothing
prom_value() {
	curl -fsS --max-time 5 "$1/api/v1/query" --data-urlencode "query=$2" 2>/dev/null |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null
}

# prom_wait URL QUERY WANT: until the query's value is WANT (any value when
# WANT is ""), up to 60 s; prints the last value seen
prom_wait() {
	local v="" i
	for i in $(seq 120); do
		v=$(prom_value "$1" "$2")
		if [ -n "$v" ] && { [ -z "$3" ] || [ "$v" = "$3" ]; }; then break; fi
		sleep 0.5
	done
	echo "$v"
}

# om_start CGROUP LOG CMD...: CMD in CGROUP (so that cleanup_all kills it by
# pid even if the test dies), its output in LOG; prints its pid
om_start() {
	local cg=$1 log=$2; shift 2
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@" > "$log" 2>&1 &
	echo $! >> "$TMP/started-pids"
	echo $!
}

# om_sample FILE METRIC: the value of METRIC's one sample in an openmetrics file
om_sample() { awk -v m="$2" '$1 ~ "^" m "[{ ]" || $1 == m { print $NF; exit }' "$1"; }

# om_format WHAT FILE: the text format's rules memprobe keeps: # EOF last,
# no timestamps (a value alone after the labels), promtool check metrics
om_format() {
	check_eq "openmetrics: $1 ends with # EOF" "$(tail -n 1 "$2")" "# EOF"
	check "openmetrics: $1: every sample is NAME{LABELS} VALUE, no timestamp" \
		awk '!/^#/ && !/^[a-z_]+\{.*\} ([-+]?[0-9]+(\.[0-9]+)?|\+Inf)$/ { bad = 1; print "# bad line: " $0 } END { exit bad }' "$2"
	if [ -n "$PROMTOOL" ]; then
		check "openmetrics: promtool check metrics passes on $1" promtool check metrics < "$2"
	fi
}

om_daemons() {
	local d=$1 cg=$2 rcg=$3 ne prom pne pp url rpid pid i v want path rules
	rules=$(cd "$(dirname "$0")/.." && pwd)/deploy/prometheus/memprobe.rules.yml
	mkdir -p "$d/tf" "$d/data"
	pne=$(free_port); pp=$(free_port)
	ne=$(om_start "$cg" "$d/ne.log" prometheus-node-exporter --web.listen-address="127.0.0.1:$pne" \
		--collector.disable-defaults --collector.textfile --collector.textfile.directory="$d/tf")
	cat > "$d/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	$([ -f "$rules" ] && printf 'rule_files:\n  - %s' "$rules")
	scrape_configs:
	  - job_name: memprobe-test
	    static_configs:
	      - targets: ['127.0.0.1:$pne']
	EOF
	prom=$(om_start "$cg" "$d/prom.log" prometheus --config.file="$d/prometheus.yml" \
		--storage.tsdb.path="$d/data" --web.listen-address="127.0.0.1:$pp")
	url=http://127.0.0.1:$pp
	OM_PIDS+=("$ne" "$prom")
	# the recording: a workload holding 48 MiB in the test cgroup
	pid=$(run_in_cgroup "$rcg" "$BIN/alloc" 48)
	wait_usage "$rcg" $((48 * MIB))
	"$MEMPROBE" record --cgroup "$rcg" --interval 200 --openmetrics "$d/tf/memprobe.prom" \
		--format json -o "$d/rec.json" 2> "$d/rec.err" &
	rpid=$!
	OM_PIDS+=("$rpid")
	for i in $(seq 300); do [ -s "$d/tf/memprobe.prom" ] && break; sleep 0.1; done
	check "openmetrics: record --openmetrics wrote its file" [ -s "$d/tf/memprobe.prom" ]
	om_format "record's live file" "$d/tf/memprobe.prom"
	v=$(prom_wait "$url" memprobe_build_info "")
	check_eq "prometheus: scraped memprobe's file through node_exporter" "$v" 1
	kill -INT "$rpid"; wait "$rpid"
	check_eq "openmetrics: record ended by SIGINT wrote its report" "$(jqv "$d/rec.json" .run.ended_by)" SIGINT
	path=$(jqv "$d/rec.json" .target.path)
	check_eq "openmetrics: the textfile directory holds the file alone (no temporary left)" \
		"$(ls -A "$d/tf")" memprobe.prom
	# the file stays with the last sample, the report's last timeline sample
	want=$(jqv "$d/rec.json" '.timeline[-1].stat.anon')
	v=$(prom_wait "$url" "memprobe_memory_bytes{cgroup=\"$path\",category=\"anon\"}" "$want")
	echo "# prometheus: memprobe_memory_bytes{category=\"anon\"} = $v"
	check_eq "prometheus: anon bytes = the report's last sample" "$v" "$want"
	check_eq "prometheus: effective limit = the report's" \
		"$(prom_value "$url" "memprobe_effective_limit_bytes{cgroup=\"$path\"}")" \
		"$(jqv "$d/rec.json" .target.effective_limit_bytes)"
	check_eq "prometheus: build_info names the report's memprobe and kernel" \
		"$(prom_value "$url" "memprobe_build_info{version=\"$(jqv "$d/rec.json" .generator.version)\",kernel=\"$(jqv "$d/rec.json" .host.kernel_release)\"}")" 1
	want=$(jqv "$d/rec.json" '.target.throttle_bytes // "+Inf"')
	check_eq "prometheus: throttling point = the report's (+Inf: none)" \
		"$(prom_value "$url" "memprobe_throttle_bytes{cgroup=\"$path\"}")" "$want"
	check_eq "prometheus: OOM kills counter = the report's" \
		"$(prom_value "$url" "memprobe_oom_kills_total{cgroup=\"$path\"}")" \
		"$(jqv "$d/rec.json" .oom_kill_counter_delta)"
	check_eq "prometheus: node_exporter read the file without error" \
		"$(prom_value "$url" node_textfile_scrape_error)" 0
	curl -fsS --max-time 5 "$url/api/v1/query" --data-urlencode \
		"query=memprobe_memory_bytes{cgroup=\"$path\"}" > "$d/query.json"
	echo "# query: $(jq -c '[.data.result[] | {category: .metric.category, value: .value[1]}]' "$d/query.json")"
	echo "# GET /api/v1/query?query=memprobe_effective_limit_bytes: $(curl -fsS --max-time 5 \
		"$url/api/v1/query" --data-urlencode query=memprobe_effective_limit_bytes)"
	if [ -f "$rules" ]; then
		om_fleet "$d" "$url"
	else
		skip "prometheus: deploy/prometheus's rules: not here (a guest)"
	fi
	kill "$pid" "$ne" "$prom"
	for i in $(seq 100); do
		alive "$ne" || alive "$prom" || break
		sleep 0.1
	done
	check "prometheus: node_exporter and prometheus stopped" eval '! alive "$ne" && ! alive "$prom"'
}

# prom_cgroups URL QUERY: the cgroup labels of the query's series, sorted, one a line
prom_cgroups() {
	curl -fsS --max-time 5 "$1/api/v1/query" --data-urlencode "query=$2" 2>/dev/null |
		jq -r '[.data.result[].metric.cgroup] | sort | .[]' 2>/dev/null
}

# om_fleet DIR URL: the fleet's rules (deploy/prometheus/memprobe.rules.yml)
# in the Prometheus of om_daemons. Two cgroups recorded with --probe-at into
# node_exporter's directory; the short one's limit then lowered to its usage
# and half the overhead its probe measured. Prometheus names it, and it
# alone, as having less headroom than its measured overhead.
om_fleet() {
	local d=$1 url=$2 short roomy ov u lim got want i p q pids=()
	short=$(make_cgroup om-short $((256 * MIB))) || { fail "fleet: make cgroup"; return; }
	roomy=$(make_cgroup om-roomy $((256 * MIB))) || { fail "fleet: make cgroup"; return; }
	for p in "$short" "$roomy"; do
		pids+=("$(run_in_cgroup "$p" "$BIN/alloc" 48)")
		wait_usage "$p" $((48 * MIB))
	done
	"$MEMPROBE" record --cgroup "$short" --interval 200 --probe-at 0.2 --quiet \
		--openmetrics "$d/tf/memprobe-short.prom" --format json -o "$d/short.json" 2> "$d/short.err" &
	OM_PIDS+=("$!")
	"$MEMPROBE" record --cgroup "$roomy" --interval 200 --probe-at 0.2 --quiet \
		--openmetrics "$d/tf/memprobe-roomy.prom" --format json -o "$d/roomy.json" 2> "$d/roomy.err" &
	OM_PIDS+=("$!")
	# a probe's file of another cgroup beside the recordings' (its HELP
	# texts differed: node_exporter dropped one file's series)
	cp "$d/probe.prom" "$d/tf/memprobe-probe.prom"
	for i in $(seq 600); do
		grep -q '^memprobe_probe_overhead_bytes' "$d/tf/memprobe-short.prom" 2> /dev/null &&
			grep -q '^memprobe_probe_overhead_bytes' "$d/tf/memprobe-roomy.prom" 2> /dev/null && break
		sleep 0.1
	done
	ov=$(om_sample "$d/tf/memprobe-short.prom" memprobe_probe_overhead_bytes)
	echo "# fleet: the probes' overhead: short $ov B, roomy $(om_sample "$d/tf/memprobe-roomy.prom" memprobe_probe_overhead_bytes) B"
	# a probe of a few MiB measures its page tables against v1's per-CPU
	# charge stocks, up to 64 pages a CPU drained when another cgroup
	# charges there: on a busy host its overhead can read below zero, and
	# the alert then has nothing to compare (-48 KiB in one loaded run)
	if [ -n "$ov" ] && [ "$ov" -lt 8192 ]; then
		skip "fleet: the short cgroup's probe measured $ov B of overhead, under two pages (charge stocks on a busy host): no alert to raise"
	else
		check_ge "fleet: the short cgroup's probe measured an overhead of two pages or more" "$ov" 8192
		u=$(cg_usage "$short")
		lim=$(( (u + ov / 2 + 4095) / 4096 * 4096 ))
		if [ "$(cg_version "$short")" = 1 ]; then echo "$lim" > "$short/memory.limit_in_bytes"
		else echo "$lim" > "$short/memory.max"; fi
		echo "# fleet: $short: usage $u B, limit lowered to $lim B"
		q='instance_cgroup:memprobe_headroom_after_overhead_bytes < 0'
		want=$(grep -o '^memprobe_headroom_bytes{cgroup="[^"]*"' "$d/tf/memprobe-short.prom" | sed 's/.*cgroup="//; s/"$//')
		for i in $(seq 120); do
			got=$(prom_cgroups "$url" "$q")
			[ "$got" = "$want" ] && break
			sleep 0.5
		done
		curl -fsS --max-time 5 "$url/api/v1/query" --data-urlencode "query=$q" > "$d/short-query.json"
		echo "# prometheus: which cgroups have less headroom than their measured overhead ($q):"
		echo "# $(jq -c '[.data.result[] | {instance: .metric.instance, cgroup: .metric.cgroup, after_overhead_bytes: .value[1]}]' "$d/short-query.json")"
		check_eq "fleet: prometheus names the short cgroup, and it alone" "$got" "$want"
		check_eq "fleet: the roomy cgroup has room after its overhead" \
			"$(prom_cgroups "$url" 'instance_cgroup:memprobe_headroom_after_overhead_bytes > 0' | grep -c om-roomy)" 1
		# the alert is its own rule group's, evaluated after the recording rule
		# its expression reads: wait for its state, as for the rule's
		for i in $(seq 120); do
			got=$(prom_cgroups "$url" 'ALERTS{alertname="MemprobeHeadroomBelowOverhead"}')
			[ "$(echo "$got" | grep -c om-short)" = 1 ] && break
			sleep 0.5
		done
		check_eq "fleet: MemprobeHeadroomBelowOverhead pending for the short cgroup alone" \
			"$(echo "$got" | grep -c om-short)" 1
		check_eq "fleet: MemprobeHeadroomBelowOverhead pending for the short cgroup alone" \
			"$(echo "$got" | grep -c .)" 1
	fi
	check_ge "fleet: the overhead per GiB recorded for both" \
		"$(prom_value "$url" 'count(instance_cgroup:memprobe_overhead_bytes_per_gib:ratio)')" 2
	# every file's series: the first recording's, the two, the probe's
	check_eq "fleet: node_exporter serves every file's usage (one HELP a family)" \
		"$(prom_value "$url" 'count(memprobe_usage_bytes)')" 4
	check_eq "fleet: ... and every file's build_info (one series a cgroup)" \
		"$(prom_value "$url" 'count(memprobe_build_info)')" 4
	check "fleet: node_exporter logged no error gathering the files" \
		eval '! grep -q "error gathering metrics" "$d/ne.log"'
	for p in "${OM_PIDS[@]: -2}"; do kill -TERM "$p"; wait "$p"; done
	check_eq "fleet: the recordings stopped by SIGTERM wrote their reports" \
		"$(jqv "$d/short.json" .run.ended_by)" SIGTERM
	check_eq "fleet: the recordings stopped by SIGTERM wrote their reports" \
		"$(jqv "$d/roomy.json" .run.ended_by)" SIGTERM
	kill "${pids[@]}"; wait "${pids[@]}" 2> /dev/null
	remove_cgroup "$short"
	remove_cgroup "$roomy"
}

# What test_openmetrics started outside a test cgroup (the recording) or
# inside one (the daemons), killed by pid should the run die on the way.
OM_PIDS=()
om_cleanup() {
	local p
	for p in "${OM_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	OM_PIDS=()
}

test_openmetrics() {
	local d=$TMP/om cg rcg dcg
	mkdir -p "$d"
	trap 'om_cleanup; cleanup_all' EXIT
	PROMTOOL=$(command -v promtool || true)
	[ -n "$PROMTOOL" ] || skip "openmetrics: promtool check metrics: no promtool (Debian's prometheus package, scripts/deps.sh --tests)"
	# limits, with a label value to escape: a " and a \ in the cgroup's name
	cg=$(make_cgroup 'om-a"b\c' $((256 * MIB))) || { fail "openmetrics: make cgroup"; return; }
	MEMPROBE_DOC_COPY=$d/limits.json "$MEMPROBE" limits --cgroup "$cg" --format openmetrics -o "$d/limits.prom"
	om_format limits "$d/limits.prom"
	check_eq "openmetrics: limits: effective limit exact" \
		"$(om_sample "$d/limits.prom" memprobe_effective_limit_bytes)" $((256 * MIB))
	check "openmetrics: limits: the cgroup label escapes \" and \\" \
		grep -qF 'cgroup="'"$(jqv "$d/limits.json" .cgroup.path | sed 's/\\/\\\\/g; s/"/\\"/g')"'"' "$d/limits.prom"
	check_eq "openmetrics: limits: no throttling point is +Inf" \
		"$(om_sample "$d/limits.prom" memprobe_throttle_bytes)" "$(jqv "$d/limits.json" '.cgroup.throttle_bytes // "+Inf"')"
	check_eq "openmetrics: report of the saved document = the live output" \
		"$("$MEMPROBE" report "$d/limits.json" --format openmetrics)" "$(cat "$d/limits.prom")"
	# a control character and a newline in a saved document's path
	jq '.cgroup.path = "/a\u0001b\"c\\d\ne"' "$d/limits.json" > "$d/odd.json"
	check "openmetrics: a label's \", \\, newline and control character escaped" \
		grep -qF 'cgroup="/a\\x01b\"c\\d\ne"}' <("$MEMPROBE" report "$d/odd.json" --format openmetrics)
	# probe: the nine fields, and the split whose sum is the attributed growth
	MEMPROBE_DOC_COPY=$d/probe.json "$MEMPROBE" probe --cgroup "$cg" --format openmetrics -o "$d/probe.prom" 2>/dev/null
	om_format probe "$d/probe.prom"
	check_eq "openmetrics: probe: allocated bytes = the document's" \
		"$(om_sample "$d/probe.prom" memprobe_probe_allocated_bytes)" "$(jqv "$d/probe.json" .allocated_bytes)"
	# the target as read before the probe (an empty cgroup: 0 B) is not its
	# usage: the usage once the probe exited, the peak the highest during it
	check_eq "openmetrics: probe: the usage is the usage after the probe" \
		"$(om_sample "$d/probe.prom" memprobe_usage_bytes)" "$(jqv "$d/probe.json" .usage_after_bytes)"
	check_eq "openmetrics: probe: the peak is the probe's peak" \
		"$(om_sample "$d/probe.prom" memprobe_peak_bytes)" "$(jqv "$d/probe.json" .usage_peak_bytes)"
	check_ge "openmetrics: probe: ... at least what it allocated" \
		"$(om_sample "$d/probe.prom" memprobe_peak_bytes)" "$(jqv "$d/probe.json" .allocated_bytes)"
	check_eq "openmetrics: probe: the split sums to the attributed growth" \
		"$(awk '/^memprobe_growth_bytes\{/ { s += $NF } END { print s }' "$d/probe.prom")" \
		"$(jqv "$d/probe.json" .attribution.reconciliation.attributed_bytes)"
	check_eq "openmetrics: probe: report of its document = the live output" \
		"$("$MEMPROBE" report "$d/probe.json" --format openmetrics)" "$(cat "$d/probe.prom")"
	# a category nothing measured (no hook sees it, no stat key) has no
	# sample: a 0 there read as measured (with the counters, v1 has no
	# slab, percpu, sock or sec_pagetables per memcg)
	MEMPROBE_DOC_COPY=$d/probe-c.json "$MEMPROBE" probe --cgroup "$cg" --memcg-from counters \
		--format openmetrics -o "$d/probe-c.prom" 2>/dev/null
	echo "# openmetrics: categories not measured: $(jq -c '[.attribution.categories[] | select(.available == false) | .name]' "$d/probe-c.json")"
	# on v1 the list is never empty: the check below would pass on nothing
	[ "$(cg_version "$(own_memcg_dir)")" = 1 ] &&
		check_gt "openmetrics: probe: v1 with the counters has categories not measured" \
			"$(jq '[.attribution.categories[] | select(.available == false)] | length' "$d/probe-c.json")" 0
	check_empty "openmetrics: probe: no sample for a category not measured" \
		"$(for c in $(jq -r '.attribution.categories[] | select(.available == false) | .name' "$d/probe-c.json"); do
			grep -E "^memprobe_growth(_part)?_bytes\{.*category=\"$c\"" "$d/probe-c.prom"; done)"
	check_eq "openmetrics: probe: ... and the split still sums to the attributed growth" \
		"$(awk '/^memprobe_growth_bytes\{/ { s += $NF } END { print s }' "$d/probe-c.prom")" \
		"$(jqv "$d/probe-c.json" .attribution.reconciliation.attributed_bytes)"
	remove_cgroup "$cg"
	# record's report, and its live file, with --probe-at's nine fields
	MEMPROBE_DOC_COPY=$d/rec.json "$MEMPROBE" record --limit 256M --probe-at 0.5 --duration 3 \
		--openmetrics "$d/live.prom" --format openmetrics -o "$d/rec.prom" -- "$BIN/alloc" 16 2>/dev/null
	om_format record "$d/rec.prom"
	om_format "record --probe-at's live file" "$d/live.prom"
	check_eq "openmetrics: record: report of its document = the live output" \
		"$("$MEMPROBE" report "$d/rec.json" --format openmetrics)" "$(cat "$d/rec.prom")"
	check_eq "openmetrics: record's live file: the probe's allocated bytes = the report's" \
		"$(om_sample "$d/live.prom" memprobe_probe_allocated_bytes)" "$(jqv "$d/rec.json" .probe.allocated_bytes)"
	check_eq "openmetrics: record's live file: the last sample's anon = the report's" \
		"$(awk '/^memprobe_memory_bytes\{.*category="anon"/ { print $NF }' "$d/live.prom")" \
		"$(jqv "$d/rec.json" '.timeline[-1].stat.anon')"
	# the live file's last write is the report's own document (it lacked
	# the growth split, its faults were ahead of the report's, its peak off)
	check_eq "openmetrics: record's live file at the end = report of the document" \
		"$("$MEMPROBE" report "$d/rec.json" --format openmetrics)" "$(cat "$d/live.prom")"
	# the target is as read at the start (0 B for a cgroup memprobe made):
	# usage and peak are the recording's own
	check_eq "openmetrics: record: the peak is the recording's" \
		"$(om_sample "$d/rec.prom" memprobe_peak_bytes)" "$(jqv "$d/rec.json" .peak.usage_bytes)"
	check_eq "openmetrics: record: the usage is the last sample's" \
		"$(om_sample "$d/rec.prom" memprobe_usage_bytes)" "$(jqv "$d/rec.json" '.timeline[-1].usage_bytes')"
	# a probe the recording's end stops: the live file's last write has it
	# (a TCG guest's probe of 256 MiB outlasted 3 s, its live file had none)
	MEMPROBE_DOC_COPY=$d/rec2.json "$MEMPROBE" record --limit 1G --probe-at 0.2 --duration 0.5 \
		--openmetrics "$d/live2.prom" --format json -o /dev/null -- sleep 2 2>/dev/null
	check_eq "openmetrics: a probe stopped by the end: interrupted" "$(jqv "$d/rec2.json" .probe.interrupted)" true
	check_eq "openmetrics: ... the live file has its allocated bytes" \
		"$(om_sample "$d/live2.prom" memprobe_probe_allocated_bytes)" "$(jqv "$d/rec2.json" .probe.allocated_bytes)"
	expect_bad "record --openmetrics in a missing directory" "$MEMPROBE" record --openmetrics /no-such-dir/m.prom -- true
	expect_bad "record --openmetrics -" "$MEMPROBE" record --openmetrics - -- true
	expect_bad "record --openmetrics DIRECTORY" "$MEMPROBE" record --openmetrics "$d" -- true
	# a FIFO: its open waited for a reader every interval, the recording
	# hung and one SIGTERM did not end it; standard output twice: the live
	# documents and the report interleaved
	mkfifo "$d/live.fifo"
	expect_bad "record --openmetrics FIFO" timeout 10 "$MEMPROBE" record --openmetrics "$d/live.fifo" -- true
	check "openmetrics: ... says a FIFO" grep -q "a FIFO, whose open waits for a reader" "$TMP/bad.err"
	rm -f "$d/live.fifo"
	expect_bad "record --openmetrics /dev/stdout, the report on standard output" \
		"$MEMPROBE" record --openmetrics /dev/stdout -- true
	# (one document per timeline sample but the first, and the last: the report's)
	check_eq "openmetrics: --openmetrics /dev/stdout -o FILE streams the live documents" \
		"$("$MEMPROBE" record --quiet --interval 100 --openmetrics /dev/stdout --format json -o "$d/stream.json" -- sleep 0.5 | grep -c '^# EOF$')" \
		"$(jqv "$d/stream.json" '.timeline | length')"
	expect_bad "limits --features --format openmetrics" "$MEMPROBE" limits --features --format openmetrics
	# node_exporter and Prometheus
	if ! command -v prometheus > /dev/null || ! command -v prometheus-node-exporter > /dev/null; then
		skip "openmetrics: Prometheus and node_exporter: not installed (Debian's prometheus, prometheus-node-exporter; scripts/deps.sh --tests)"
	else
		dcg=$(make_cgroup om-daemons $GIB) || { fail "openmetrics: make cgroup"; return; }
		rcg=$(make_cgroup om-rec $((256 * MIB))) || { fail "openmetrics: make cgroup"; return; }
		om_daemons "$d" "$dcg" "$rcg"
		remove_cgroup "$rcg"
		remove_cgroup "$dcg"
	fi
	OM_PIDS=()
	trap cleanup_all EXIT
	rm -rf "$d"
	check "openmetrics: nothing left behind" no_leftovers
}

# shellcheck shell=bash
# tests/integration/workloads.sh: sourced by tests/run-integration.sh (its header sets
# GIB, MIB and the root check; lib.sh the helpers).

# free_port: a TCP port on 127.0.0.1 nothing listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# backends_in DIR: how many processes of the cgroup have a PostgreSQL
# client backend's title (a client's HOST(PORT)), read from /proc
backends_in() {
	local p n=0
	for p in $(cat "$1/cgroup.procs"); do
		tr '\0' ' ' 2>/dev/null < /proc/"$p"/cmdline | grep -Eq '^postgres: .*\(([0-9]+)\)' && n=$((n + 1))
	done
	echo "$n"
}

# mapping DIR NAME: how many processes of the cgroup map NAME with pages of
# it resident (RssShmem), from /proc
mapping() {
	local p n=0
	for p in $(cat "$1/cgroup.procs"); do
		grep -q " $2\$" /proc/"$p"/maps 2>/dev/null &&
			[ "$(awk '/^RssShmem:/ {print $2}' /proc/"$p"/status 2>/dev/null)" != 0 ] && n=$((n + 1))
	done
	echo "$n"
}

# PostgreSQL (Debian's postgresql, postgresql-contrib's pgbench) in a test
# cgroup, probed under pgbench: the overhead's line groups its backends by
# name and role, shared_buffers is one segment with its mappers, RssShmem is
# never summed; each against /proc and memory.stat.
test_postgres() {
	local bin d cg port pg bench out=$TMP/pg.json n i sum shm mappers seg
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$bin" ] || ! command -v pgbench > /dev/null || ! command -v pg_isready > /dev/null ||
	   ! id postgres > /dev/null 2>&1 || ! command -v python3 > /dev/null; then
		skip "postgres: no PostgreSQL here (scripts/deps.sh: postgresql, postgresql-contrib)"
		return
	fi
	chmod 711 "$TMP" # the postgres user reaches its directory in it, reads nothing else
	d=$TMP/pg; mkdir -m 700 "$d" && chown postgres: "$d"
	setpriv --reuid postgres --regid postgres --init-groups "$bin/initdb" -D "$d/data" -A trust \
		-U postgres --no-sync > "$TMP/pg-initdb.log" 2>&1 || { fail "postgres: initdb"; return; }
	cg=$(make_cgroup pg $GIB) || { fail "postgres: make cgroup"; return; }
	for i in 1 2 3; do
		port=$(free_port)
		pg=$(run_in_cgroup "$cg" setpriv --reuid postgres --regid postgres --init-groups \
			"$bin/postgres" -D "$d/data" -k "$d" -p "$port" -c listen_addresses=127.0.0.1 \
			-c shared_buffers=128MB -c max_connections=20 -c fsync=off)
		for n in $(seq 300); do
			pg_isready -q -h 127.0.0.1 -p "$port" && break
			alive "$pg" || break
			sleep 0.1
		done
		pg_isready -q -h 127.0.0.1 -p "$port" && break
	done
	pg_isready -q -h 127.0.0.1 -p "$port" || { fail "postgres: did not start"; remove_cgroup "$cg"; return; }
	pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s 5 -q postgres > "$TMP/pg-init.log" 2>&1
	pgbench -h 127.0.0.1 -p "$port" -U postgres -S -c 8 -T 300 postgres > "$TMP/pg-bench.log" 2>&1 &
	bench=$!
	for i in $(seq 600); do [ "$(backends_in "$cg")" -ge 8 ] && break; sleep 0.05; done
	"$MEMPROBE" probe --cgroup "$cg" --format json -o "$out" 2> "$TMP/pg-probe.err"
	n=$(backends_in "$cg")
	mappers=$(mapping "$cg" "/dev/zero (deleted)")
	sum=0
	for i in $(cat "$cg/cgroup.procs"); do sum=$((sum + $(awk '/^RssShmem:/ {print $2 * 1024}' /proc/"$i"/status 2>/dev/null || echo 0))); done
	shm=$(awk '/^(total_)?shmem / { v = $2 } END { print v }' "$cg/memory.stat")
	kill "$bench"; wait "$bench" 2>/dev/null
	kill -INT "$pg"; for i in $(seq 300); do alive "$pg" || break; sleep 0.1; done
	"$MEMPROBE" report "$out" > "$TMP/pg.txt"
	echo "# postgres: $n backends, $mappers mappers of /dev/zero, RssShmem summed $sum, memory.stat shmem $shm"
	echo "# $(sed -n 3p "$TMP/pg.txt")"
	echo "# $(grep -E '^pinned|^  shared segment /dev/zero' "$TMP/pg.txt" | tr '\n' ' ')"
	check_eq "postgres: the backends are one group of the overhead, their count /proc's" \
		"$(jqv "$out" '[.overhead.groups[] | select(.comm == "postgres" and .role == "backend") | .processes] | join(" ")')" "$n"
	check "postgres: the overhead's words name them so" \
		grep -Eq "^overhead .*postgres ×$n \(backends\)" "$TMP/pg.txt"
	check_eq "postgres: the groups, the probe's, reclaimed and unexplained add up to the overhead" \
		"$(jqv "$out" '.overhead | ([.groups[].bytes] | add) + .probe_kernel_bytes + .reclaimed_bytes + .unexplained_bytes')" \
		"$(jqv "$out" .overhead.bytes)"
	seg='[.pinned.shared_segments[] | select(.name == "/dev/zero (deleted)")][0]'
	check_le "postgres: shared_buffers is one segment, its mappers /proc's (within 1)" \
		"$(jqv "$out" "$seg.mappers - $mappers | fabs")" 1
	check_within "postgres: the segments' resident bytes are memory.stat's shmem, once (2%)" \
		"$(jqv "$out" '[.pinned.shared_segments[].resident_bytes] | add')" "$(jqv "$out" .pinned.shmem_bytes)" 0.02
	check_ge "postgres: RssShmem summed over the mappers is more than the shmem there is" "$sum" "$shm"
	check_le "postgres: ... so the largest one's is given, no more than the cgroup's shmem" \
		"$(jqv "$out" .pinned.rss_shmem_max_bytes)" "$(jqv "$out" .pinned.shmem_bytes)"
	check "postgres: the text gives the largest RssShmem, not a sum" \
		grep -Eq "^pinned at the probe's stop: .*RssShmem up to [0-9.]+ [KMG]i?B in one process" "$TMP/pg.txt"
	check "postgres: the text names the segment and its mappers by role" \
		grep -Eq "^  shared segment /dev/zero \(deleted\): .* by [0-9]+ processes: postgres ×$n \(backends\)" "$TMP/pg.txt"
	# the words list the groups charged, in the groups' order: the backends among
	# them where their share is a MiB or more (the checkpointer, or another
	# process, may have touched more of the new pages during the probe: a
	# sanitizer build's slower probe once put it first)
	if [ "$(jqv "$out" '[.overhead.groups[] | select(.comm == "postgres" and .role == "backend") | .categories[] | select(.category == "shmem") | .bytes] | add // 0')" -ge "$MIB" ]; then
		check "postgres: shared memory said once, with who was charged" \
			grep -Eq "^overhead .*(: |; )shared memory \(shmem\) [0-9.]+ MiB, charged to the first toucher of each page:[^;]* postgres ×$n \(backends\)" "$TMP/pg.txt"
	else
		skip "postgres: the backends were charged less than 1 MiB of shared_buffers during the probe"
	fi
	remove_cgroup "$cg"
	rm -rf "$d"
	check "postgres: nothing left behind" no_leftovers
}

# redis-server (Debian's) with a BGSAVE while its keys are rewritten: the
# parent's copies on write against the saving child's Private_Dirty, read
# beside.
test_redis() {
	local d cg port rp child out=$TMP/redis.json mp pd0 pd1 got i
	for i in redis-server redis-cli redis-benchmark python3; do
		command -v "$i" > /dev/null || { skip "redis: no $i here (scripts/deps.sh: redis-server, redis-tools)"; return; }
	done
	d=$TMP/redis; mkdir -p "$d"
	cg=$(make_cgroup redis $((512 * MIB))) || { fail "redis: make cgroup"; return; }
	for i in 1 2 3; do
		port=$(free_port)
		rp=$(run_in_cgroup "$cg" redis-server --port "$port" --bind 127.0.0.1 --save '' \
			--appendonly no --dir "$d" --daemonize no)
		for n in $(seq 300); do
			[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
			alive "$rp" || break
			sleep 0.05
		done
		[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
	done
	[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] || { fail "redis: did not start"; remove_cgroup "$cg"; return; }
	redis-benchmark -p "$port" -t set -n 150000 -r 50000 -d 1000 -P 64 -c 4 -q > /dev/null 2>&1
	"$MEMPROBE" record --cgroup "$cg" --duration 300 --memcg-from tracepoint --format json -o "$out" --ready-fd 3 3> "$TMP/redis.ready" 2>/dev/null &
	mp=$!
	for i in $(seq 1200); do [ -s "$TMP/redis.ready" ] && break; sleep 0.05; done
	# the save slowed (0.5 ms a key) so that it outlasts the rewrite
	redis-cli -p "$port" config set rdb-key-save-delay 500 > /dev/null
	redis-cli -p "$port" bgsave > /dev/null
	for i in $(seq 600); do child=$(children "$rp" | head -n 1); [ -n "$child" ] && break; sleep 0.01; done
	pd0=$(private_dirty "$child")
	redis-benchmark -p "$port" -t set -n 100000 -r 50000 -d 1000 -P 64 -c 4 -q > /dev/null 2>&1
	pd1=$(private_dirty "$child")
	check "redis: the save outlasted the rewrite" alive "$child"
	echo "# redis: BGSAVE child $child, Private_Dirty $pd0 -> $pd1; redis's own $(redis-cli -p "$port" info persistence | grep -E '^current_cow_size:' | tr -d '\r')"
	kill -USR1 "$child" # the save ends without error
	for i in $(seq 600); do redis-cli -p "$port" info persistence | grep -q '^rdb_bgsave_in_progress:0' && break; sleep 0.05; done
	kill -INT "$mp"; wait "$mp"
	kill "$rp"; wait "$rp" 2>/dev/null
	got=$(cow_of "$out" "$rp")
	"$MEMPROBE" report "$out" > "$TMP/redis.txt"
	echo "# $(grep -E '^Copy-on-write' "$TMP/redis.txt")"
	check_within "redis: the parent's copies are the saving child's Private_Dirty growth (5%)" \
		"$got" $((pd1 - pd0)) 0.05
	check "redis: the text says BGSAVE's cost in copies" grep -Eq \
		"^Copy-on-write: [0-9.]+ MiB of pages copied on write \(after a fork, .*: redis-server\[$rp\] copied [0-9.]+ MiB" "$TMP/redis.txt"
	echo "# redis: the parent's anon growth at the peak $(jqv "$out" "[.attribution.categories[] | select(.name == \"anon\") | .tasks[] | select(.pid == $rp) | .bytes] | add // 0"), its copies $got"
	check_ge "redis: the parent's anon growth at the peak holds its copies (90%)" \
		"$(jqv "$out" "[.attribution.categories[] | select(.name == \"anon\") | .tasks[] | select(.pid == $rp) | .bytes] | add // 0")" $((got * 9 / 10))
	remove_cgroup "$cg"
	check "redis: nothing left behind" no_leftovers
}

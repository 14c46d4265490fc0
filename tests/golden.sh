#!/bin/sh
# golden.sh [--update]: every renderer's output of every saved document,
# against the expected bytes in tests/fixtures/golden/. No root: it only
# runs `memprobe report FILE --format F` (MEMPROBE, default build/memprobe).
#
# The documents: tests/fixtures/*.json, tests/fixtures/html/*.json,
# tests/fixtures/golden/in/*.json (limits, features, budget and compare
# documents captured from real runs on the 6.18 host) and the fuzz seeds
# tests/fuzz/corpus/*.json (real probes and records: stacks, groups,
# copies on write, --probe-at). Each is rendered in every format, csv with
# every --table, markdown and html with --bytes too; a format a document
# does not take is kept as well (its one-line message and exit code), so
# the messages are pinned as much as the renderings.
#
# One file a rendering: golden/NAME.VARIANT (stdout, then "[exit N]" and
# stderr when it did not exit 0). A difference prints the diff and fails;
# --update (make golden-update) writes them all anew. The last line is
# "golden: N passed, N failed, 0 skipped", which tests/run-unit.sh sums.
cd "$(dirname "$0")/.." || exit 1
mp=${MEMPROBE:-build/memprobe}
gold=tests/fixtures/golden
update=0
[ "${1-}" = --update ] && update=1

variants='text json env markdown markdown--bytes csv folded html html--bytes openmetrics'
for t in categories tasks kernel_paths hooks overhead copy_on_write timeline oom_kills figures; do
	variants="$variants csv--table=$t"
done

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0 failed=0
for doc in tests/fixtures/*.json tests/fixtures/html/*.json $gold/in/*.json tests/fuzz/corpus/*.json; do
	[ -f "$doc" ] || continue
	dir=$(basename "$(dirname "$doc")")
	name=$dir-$(basename "$doc" .json)
	for v in $variants; do
		# markdown--bytes: --format markdown --bytes; csv--table=T: --table T
		fmt=${v%%--*}
		set -- --format "$fmt"
		case $v in
		*--bytes) set -- "$@" --bytes ;;
		*--table=*) set -- "$@" --table "${v#*--table=}" ;;
		esac
		"$mp" report "$doc" "$@" > "$tmp/out" 2> "$tmp/err"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "[exit $rc]" >> "$tmp/out"
			cat "$tmp/err" >> "$tmp/out"
		fi
		want=$gold/$name.$v
		if [ "$update" = 1 ]; then
			cp "$tmp/out" "$want"
			passed=$((passed + 1))
		elif cmp -s "$tmp/out" "$want"; then
			passed=$((passed + 1))
		else
			echo "golden: memprobe report $doc $*: differs from $want (make golden-update rewrites it):"
			diff -u "$want" "$tmp/out" | head -n 40
			failed=$((failed + 1))
		fi
	done
done
[ "$passed" -gt 0 ] || failed=$((failed + 1))
echo "golden: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]

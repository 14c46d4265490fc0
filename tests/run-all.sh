#!/bin/sh
# The README's test command runs this (make check): unit tests, then the
# integration tests on the real kernel; one closing "N passed, N failed".
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/run-unit.sh "${MEMPROBE_UNIT_DIR:-build/tests}"/test_* | tee "$out"
tests/run-integration.sh | tee -a "$out"
passed=$(sed -n 's/^\(unit\|integration\): \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$out" | awk '{s += $1} END {print s + 0}')
failed=$(sed -n 's/^\(unit\|integration\): \([0-9]*\) passed, \([0-9]*\) failed$/\3/p' "$out" | awk '{s += $1} END {print s + 0}')
[ "$(grep -c -E '^(unit|integration): [0-9]+ passed' "$out")" = 2 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

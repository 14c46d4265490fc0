#!/bin/sh
# The README's test command runs this (make check): unit tests and the
# renderers' golden outputs (tests/golden.sh), then the
# integration tests on the real kernel; one closing "N passed, N failed, N
# skipped".
cd "$(dirname "$0")/.." || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/run-unit.sh "${MEMPROBE_UNIT_DIR:-build/tests}"/test_* tests/golden.sh | tee "$out"
tests/run-integration.sh | tee -a "$out"
# field N of the summary lines "unit: P passed, F failed, S skipped" and
# "integration: P passed, F failed, S skipped", summed
total() {
	sed -n 's/^\(unit\|integration\): \([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}$/\'"$1"'/p' "$out" |
		awk '{s += $1} END {print s + 0}'
}
passed=$(total 2)
failed=$(total 3)
skipped=$(total 5)
[ "$(grep -c -E '^(unit|integration): [0-9]+ passed' "$out")" = 2 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

#!/bin/sh
# Run the unit test binaries given as arguments; sum their
# "N passed, N failed, N skipped" lines as the integration summary does.
passed=0 failed=0 skipped=0
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -v '^fixture '
	line=$(printf '%s\n' "$out" | tail -n 1)
	re='.*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$'
	p=$(printf '%s' "$line" | sed -n "s/$re/\1/p")
	f=$(printf '%s' "$line" | sed -n "s/$re/\2/p")
	s=$(printf '%s' "$line" | sed -n "s/$re/\3/p")
	if [ -z "$p" ]; then p=0; f=1; s=0; echo "$t: crashed (exit $rc)"; fi
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

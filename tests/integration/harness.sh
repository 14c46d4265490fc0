# shellcheck shell=bash
# The harness's own checks (tests/lib.sh): each passes on the values it
# should, and its failure line says what was got and what was wanted.

# one_check CHECK ARGS...: the line CHECK prints, run in a subshell (its
# pass or failure not counted in this run's summary)
one_check() { ( "$@" ); }

test_checks() {
	local l
	check_eq "checks: check_eq passes on equal strings" "$(one_check check_eq x 007 007)" "ok - x"
	check_eq "checks: check_eq compares strings, not numbers" \
		"$(one_check check_eq x 007 7)" "not ok - x (got '007', want '7')"
	check_eq "checks: check_ne" "$(one_check check_ne x a a)" "not ok - x (got 'a', want not 'a')"
	check_eq "checks: check_le" "$(one_check check_le x 3 2)" "not ok - x (got '3', want <= '2')"
	check_eq "checks: check_ge: an empty got fails" "$(one_check check_ge x '' 0)" "not ok - x (got '', want >= '0')"
	check_eq "checks: check_lt: equal is not below" "$(one_check check_lt x 2 2)" "not ok - x (got '2', want < '2')"
	check_eq "checks: check_gt: null is no number" "$(one_check check_gt x null 0)" "not ok - x (got 'null', want > '0')"
	check_eq "checks: check_gt passes" "$(one_check check_gt x 1 0)" "ok - x"
	check_eq "checks: check_near: the slack, both ways" \
		"$(one_check check_near x 90 100 10; one_check check_near x 110 100 10)" "ok - x
ok - x"
	check_eq "checks: check_near: beyond it" "$(one_check check_near x 111 100 10)" \
		"not ok - x (got '111', want '100' within 10)"
	check_eq "checks: check_num: decimals, each operator on its side" \
		"$(for c in '520.57 < 521' '2.5 <= 2.5' '384.1 > 384' '-1 >= -1.0' '0.5 == 0.50'; do
			set -- $c; one_check check_num x "$1" "$2" "$3"; done)" "$(printf 'ok - x\n%.0s' 1 2 3 4 5)"
	check_eq "checks: check_num: the wrong side" "$(one_check check_num x 520.57 '<=' 416.5)" \
		"not ok - x (got '520.57', want <= '416.5')"
	check_eq "checks: check_num: equal is not above" "$(one_check check_num x 384 '>' 384.0)" \
		"not ok - x (got '384', want > '384.0')"
	check_eq "checks: check_num: null is no number" "$(one_check check_num x null '>=' 0)" \
		"not ok - x (got 'null', want >= '0')"
	check_eq "checks: check_num: an empty got fails" "$(one_check check_num x '' '<' 1)" "not ok - x (got '', want < '1')"
	check_eq "checks: check_num: an unknown operator fails" "$(one_check check_num x 1 '=<' 2)" \
		"not ok - x (got '1', want =< '2')"
	check_eq "checks: check_usage: this shell's cgroup holds a byte" "$(one_check check_usage x "$(own_memcg_dir)" 1)" "ok - x"
	# not waited for (a minute): the failure line, with the usage last read
	check_eq "checks: check_usage: below, the usage it got" \
		"$(wait_usage() { USAGE_READ=4096; return 1; }; one_check check_usage x /nowhere 8192)" \
		"not ok - x (got '4096', want >= '8192')"
	check_eq "checks: check_empty: the list, on one line" "$(one_check check_empty x "$(printf 'a\nb')")" \
		"not ok - x (got 'a\\nb', want nothing)"
	check_eq "checks: check_match: grep's options" "$(one_check check_match x "none: v1" -x 'none: v1')" "ok - x"
	check_eq "checks: check_match: a line of it" \
		"$(one_check check_match x "$(printf 'a\nbc')" -E '^b')" "ok - x"
	check_eq "checks: check_match: no line" "$(one_check check_match x abc -x ab)" \
		"not ok - x (got 'abc', want a line matching: -x ab)"
	check_eq "checks: check: the command, arguments expanded" \
		"$(l=/nowhere; one_check check x [ -s "$l" ])" "not ok - x (failed: [ -s /nowhere ])"
	l=$(one_check check_eq x "$(head -c 400 /dev/zero | tr '\0' y)" y)
	check_match "checks: a long got cut at 300 characters" "$l" -x "not ok - x (got 'y\{300\}\.\.\.', want 'y')"
}

# A check whose line ends in "> /dev/null" sends its own "ok"/"not ok"
# line there: counted, never seen (record's two "not mixed" checks did).
# The redirection belongs inside: check WHAT eval 'CMD > /dev/null'.
test_checks_seen() {
	check_empty "checks: no check's own line sent to /dev/null" \
		"$(grep -nE '\bcheck(_[a-z]+)? ".*[^2&]> ?/dev/null[[:space:]]*$' "$(dirname "${BASH_SOURCE[0]}")"/*.sh)"
}

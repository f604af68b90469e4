# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors
# Helpers for our sharness tests, sourced by sharness.sh itself.

# test_line_count OP N FILE: the number of lines of FILE compared with N
# by test(1) operator OP, e.g. test_line_count = 1 err.
test_line_count () {
	if test $# != 3; then
		echo "test_line_count: expected 3 arguments" >&2
		return 1
	fi
	if ! test $(wc -l <"$3") "$1" "$2"; then
		echo "test_line_count: line count for $3 !$1 $2"
		cat "$3"
		return 1
	fi
}

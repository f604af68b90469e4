#!/bin/sh
# The LOG_COMPILER of every test (mk/tap.mk): runs "$@" (a test program,
# or a shell and a sharness script) with stdin from /dev/null and a time
# bound, so that a test that hangs is one failure with its log, not a
# make check (or a CI run) that waits until something else kills it.
#
# FLUX_TEST_TIMEOUT: the bound in seconds (default 900: several times what
# the slowest test takes under ASAN on a loaded 2-core machine, and short
# enough that a hang in each of CI's two builds still ends CI within its
# limit).  On expiry the test's process group gets SIGTERM, and SIGKILL
# 30 s later.
bound=${FLUX_TEST_TIMEOUT:-900}
timeout -k 30 "$bound" "$@" </dev/null
rc=$?
case $rc in
124 | 137)
	echo "bounded-test.sh: $* did not end within ${bound}s" \
		"(FLUX_TEST_TIMEOUT): killed" >&2
	;;
esac
exit $rc

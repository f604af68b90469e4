# Common set-up for the integration tests: the freshly built flux and
# flux-broker come first in PATH, and no outer instance leaks in.
# Sourced by t*.t after test_description is set.
unset FLUX_URI FLUX_EXEC_PATH FLUX_BROKER_PATH
# FLUX_BUILD_DIR without "." or "..", as make check passes it: tests
# build paths from it that programs compare with the paths they were
# compiled with (the IMP's exec.allowed-shells and the exec agent's shell).
FLUX_BUILD_DIR=$(cd "${FLUX_BUILD_DIR:?}" && pwd) || exit 1
export FLUX_BUILD_DIR
PATH="$FLUX_BUILD_DIR/src/cmd:$FLUX_BUILD_DIR/src/broker:$PATH"
export PATH
. /usr/share/sharness/sharness.sh
# The brokers' rundirs (TMPDIR/flux-XXXXXX) go in a directory of this
# script's, removed when all its tests pass: a broker a test kills with
# SIGKILL cannot remove its own.  Short, for the unix sockets' paths;
# searchable by all, as /tmp is, for the tests of guest users.
TMPDIR=$(mktemp -d /tmp/flux-t.XXXXXX) && chmod 755 "$TMPDIR" || exit 1
export TMPDIR
cleanup 'rm -rf "$TMPDIR"'
# Without --verbose, keep what the tests print (their commands' output and
# sharness's "expecting success" headers) in NAME.out beside the trash
# directory, so that a failure in CI can be read afterwards.
if test "$verbose" != t; then
	exec 3>"$SHARNESS_TEST_DIRECTORY/$this_test.out" 4>&3
fi

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

# start_instance NAME SIZE [FLUX-START-ARGS...]: start an instance of
# SIZE brokers in the background, kept alive until NAME.keepalive is
# removed (or 15 minutes pass); export FLUX_URI for it once every broker's
# resources are up.  Its pid goes to NAME.pid, its output to NAME.log.
# Fails, saying why, if the instance is not up within 120 s.
start_instance () {
	name=$1 size=$2
	shift 2
	rm -f $name.uri && touch $name.keepalive &&
	flux start -s $size "$@" \
		sh -c "echo \$FLUX_URI >$name.uri.tmp &&
		mv $name.uri.tmp $name.uri && n=0 &&
		while test -e $name.keepalive && test \$n -lt 9000; do
			sleep 0.1; n=\$((n+1)); done" \
		>$name.log 2>&1 3>&- 4>&- &
	echo $! >$name.pid
	for i in $(seq 1200); do test -s $name.uri && break; sleep 0.1; done
	if ! test -s $name.uri; then
		echo "start_instance: no instance after 120 s" >&2
		tail -20 $name.log >&2
		return 1
	fi
	FLUX_URI=$(cat $name.uri) && export FLUX_URI || return 1
	for i in $(seq 1200); do
		test "$(flux resource list -n -o "{nnodes}" -s free,allocated \
			2>/dev/null | head -n 1)" = $size && return 0
		sleep 0.1
	done
	echo "start_instance: $size nodes not up after 120 s" >&2
	flux resource list >&2
	return 1
}

# stop_instance NAME: end the instance of start_instance NAME and wait
# (at most 120 s) for flux start to exit; its exit status when known.
stop_instance () {
	pid=$(cat $1.pid) && rm -f $1.keepalive || return 1
	for i in $(seq 1200); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $pid 2>/dev/null; then
		echo "stop_instance: $1 (pid $pid) still running after 120 s" >&2
		return 1
	fi
	wait $pid 2>/dev/null
	rc=$?
	test $rc = 127 && rc=0 # not our child: gone is all we know
	return $rc
}

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
# resources are up (at once if it runs no resource module, e.g. with
# -Sbroker.modules).  Its pid goes to NAME.pid, its output to NAME.log.
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
	flux module list 2>/dev/null | grep -q "^resource " || return 0
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

# eventually CMD EXPECTED: until the output of CMD (eval'd) is EXPECTED,
# polling every 0.1 s for EVENTUALLY_TIMEOUT seconds (default 30); says
# what it last got when it gives up
eventually () {
	n=0
	while test "$(eval "$1")" != "$2"; do
		test $n -lt $((${EVENTUALLY_TIMEOUT:-30} * 10)) ||
			{ echo "eventually: $1: $(eval "$1") != $2"; return 1; }
		n=$((n+1)); sleep 0.1
	done
}

# gone PID [SECONDS]: until PID is no more (or a zombie), 30 s at most;
# says what still runs when it gives up
gone () {
	for i in $(seq $((${2:-30} * 10))); do
		test -e /proc/$1 || return 0
		grep -q "^State:.Z" /proc/$1/status 2>/dev/null && return 0
		sleep 0.1
	done
	echo "process $1 still there: $(ps -o pid=,args= -p $1)" >&2
	return 1
}

# wait_file FILE: until FILE is not empty, 60 s at most
wait_file () {
	for i in $(seq 600); do
		test -s $1 && return 0
		sleep 0.1
	done
	return 1
}

# run_bg NAME ARGS...: flux run ARGS in the background, its pid in
# NAME.pid written by the process itself, so that a signal goes to flux
# run and not to a subshell of the test, which may ignore SIGINT; its
# stderr in NAME.err, its exit code in NAME.rc when it ends
run_bg () {
	name=$1; shift
	rm -f $name.pid $name.rc &&
	{ sh -c 'echo $$ >$0.pid.tmp && mv $0.pid.tmp $0.pid &&
		exec flux run "$@" 2>$0.err' $name "$@"; echo $? >$name.rc; } &
	for i in $(seq 600); do test -s $name.pid && break; sleep 0.1; done
	test -s $name.pid
}

# wait_exit NAME: until the flux run of run_bg NAME ended, at most
# WAIT_EXIT_TIMEOUT seconds (default 60)
wait_exit () {
	for i in $(seq $((${WAIT_EXIT_TIMEOUT:-60} * 10))); do
		test -s $1.rc && return 0
		sleep 0.1
	done
	return 1
}

# critical_ranks ID RANKS: set job-exec.critical-ranks of the started job
# ID (any form) to RANKS, the shell ranks whose loss is fatal
critical_ranks () {
	"$FLUX_BUILD_DIR/t/rpc" job-exec.critical-ranks \
		"{\"id\":$(flux job id --to=dec $1),\"ranks\":\"$2\"}"
}

# slow_shell DIR RANK: write DIR/slowshell.sh, a job shell (for
# -S exec.job_shell=DIR/slowshell.sh) that on broker RANK writes its pid
# to DIR/pid and waits for the file DIR/proceed (at most 60 s) before it
# execs flux-shell, so the other shells of the job wait in their start
# barrier.  DIR must have no space in its path (the agent runs the shell
# by that path).
slow_shell () {
	cat >$1/slowshell.sh <<-EOF &&
	#!/bin/sh
	if test "\$(flux getattr rank)" = $2; then
		echo \$\$ >$1/pid
		n=0
		while ! test -e $1/proceed && test \$n -lt 600; do
			sleep 0.1; n=\$((n+1))
		done
	fi
	exec $FLUX_BUILD_DIR/src/shell/flux-shell "\$@"
	EOF
	chmod +x $1/slowshell.sh
}

# run_shell ID [NSHELLS]: run NSHELLS (default 1) job shells of job ID
# (FLUX_KVS_NAMESPACE=job-ID, at most 120 s each), their stderr appended
# to shell.ID.err; return the largest of their exit codes
run_shell () {
	n=${2:-1} rc=0 pids=""
	for i in $(seq $n); do
		FLUX_KVS_NAMESPACE=job-$1 timeout 120 \
			"$FLUX_BUILD_DIR/src/shell/flux-shell" $1 2>>shell.$1.err &
		pids="$pids $!"
	done
	for p in $pids; do
		wait $p; r=$?
		test $r -gt $rc && rc=$r
	done
	return $rc
}

# wait_list RANK PATTERN COUNT: until rexec.list on RANK shows COUNT
# processes whose cmd is PATTERN (at most 30 s)
wait_list () {
	for i in $(seq 300); do
		n=$("$FLUX_BUILD_DIR/t/rpc" -r $1 rexec.list |
			grep -o "\"cmd\":\"$2\"" | wc -l)
		test $n -eq $3 && return 0
		sleep 0.1
	done
	return 1
}

# asan_build: the build under test is instrumented with AddressSanitizer
# (freed memory waits in its quarantine: a process's RSS says little)
asan_build () {
	ldd "$FLUX_BUILD_DIR/src/broker/flux-broker" 2>/dev/null | grep -q libasan
}

# blocked PID: PID sleeps (state S) in each of 10 looks 0.1 s apart, as a
# process blocked on its full output pipe does
blocked () {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		grep -q "^State:.S" /proc/$1/status || return 1
		sleep 0.1
	done
}

#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='the job shell is its tasks'"'"' child subreaper: a process
a task started that outlives it, even one that left the task'"'"'s group
and session (setsid, a double fork), is handed to the shell, not to
init.  Once no task runs the shell ends those strays (SIGTERM, SIGKILL
after stray-timeout), reaps them, says how many it killed, and only then
exits: a job is complete when nothing it started still runs.  On normal
exit, flux job kill, cancel and a time limit (issue 21).'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# durations no other test uses, to find our processes by their argv
D=9$$
T="timeout -k 5 60"

# none_left ARG: no "sleep ARG" runs
none_left () {
	if pgrep -f "^sleep $1\$" >left.pids; then
		echo "left running: $(cat left.pids)" >&2
		return 1
	fi
	return 0
}
# kill_left ARG: kill what none_left finds (test_when_finished: a stray
# left by a failure may hold a pipe of the test harness, which would
# then wait for it)
kill_left () {
	pkill -9 -f "^sleep $1" || :
}

test_expect_success 'start a broker' '
	start_instance a 1
'
# exit-timeout=none: the stray holds the task's output; on a shell that
# is no subreaper the job waits for it (here until timeout kills flux run)
test_expect_success 'setsid cmd &: the job ends at once, the process is gone' '
	test_when_finished "kill_left \$D.1" &&
	$T flux run -o exit-timeout=none \
		sh -c "setsid sleep $D.1 & echo started" >s1.out 2>s1.err &&
	grep -x started s1.out &&
	grep "reaper: killed 1 stray process the tasks left running (0 after SIGKILL)" s1.err &&
	none_left $D.1
'
test_expect_success 'a double fork holding the output: the grandchild is gone' '
	test_when_finished "kill_left \$D.2" &&
	$T flux run -o exit-timeout=none \
		sh -c "sh -c \"(sleep $D.2 &)\"; echo dbl" >s2.out 2>s2.err &&
	grep -x dbl s2.out &&
	grep "killed 1 stray process" s2.err &&
	none_left $D.2
'
test_expect_success 'a double fork into a session of its own, output closed: gone' '
	test_when_finished "kill_left \$D.3" &&
	$T flux run sh -c "(setsid sleep $D.3 >/dev/null 2>&1 </dev/null &)" \
		2>s3.err &&
	grep "killed 1 stray process" s3.err &&
	none_left $D.3
'
test_expect_success 'two tasks, a stray each: both gone, counted together' '
	test_when_finished "kill_left \$D.4" &&
	$T flux run -n2 -o exit-timeout=none \
		sh -c "setsid sleep $D.4 >/dev/null 2>&1 &" 2>s4.err &&
	grep "killed 2 stray processes" s4.err &&
	none_left $D.4
'
test_expect_success 'nosetpgrp: a setsid stray is gone too' '
	test_when_finished "kill_left \$D.5" &&
	$T flux run -o nosetpgrp sh -c "setsid sleep $D.5 >/dev/null 2>&1 &" \
		2>s5.err &&
	grep "killed 1 stray process" s5.err &&
	none_left $D.5
'
# a task that starts a stray in a session of its own (its pid in
# NAME.pid), then sleeps in the foreground (the signal to the task's
# group kills that sleep, but it may outlive the task sh by a moment,
# be handed to the shell, and be counted a stray too)
stray_task () {
	echo "setsid sleep $D.$1 >/dev/null 2>&1 </dev/null & echo \$! >$1.pid;
		sleep 300"
}
test_expect_success 'flux job kill: the task dies, its stray with it' '
	test_when_finished "kill_left \$D.6" &&
	id=$(flux submit sh -c "$(stray_task 6)") &&
	wait_file 6.pid &&
	flux job kill $id &&
	flux job wait-event -t 30 $id clean &&
	gone $(cat 6.pid) 10 &&
	flux job eventlog -p exec $id >6.ev &&
	grep -E "killed [12] stray process" 6.ev
'
test_expect_success 'cancel: the stray is gone' '
	test_when_finished "kill_left \$D.7" &&
	id=$(flux submit sh -c "$(stray_task 7)") &&
	wait_file 7.pid &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	gone $(cat 7.pid) 10
'
test_expect_success 'a time limit: the stray is gone' '
	test_when_finished "kill_left \$D.8" &&
	id=$(flux submit -t 2s sh -c "$(stray_task 8)") &&
	wait_file 8.pid &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id | grep "exception type=\"timeout\"" &&
	gone $(cat 8.pid) 10
'
# the task waits until the stray ignores SIGTERM, then exits
test_expect_success 'a stray ignoring SIGTERM gets SIGKILL after stray-timeout' '
	test_when_finished "kill_left \$D.9" &&
	$T flux run -o stray-timeout=0.5s sh -c "
		setsid sh -c \"trap \\\"\\\" TERM; echo \\\$\\\$ >9.pid;
			exec sleep $D.9\" >/dev/null 2>&1 </dev/null &
		while ! test -s 9.pid; do sleep 0.01; done" 2>s9.err &&
	grep "killed 1 stray process the tasks left running (1 after SIGKILL)" \
		s9.err &&
	gone $(cat 9.pid) 5 &&
	none_left $D.9
'
test_expect_success 'a bad stray-timeout is fatal' '
	test_must_fail $T flux run -o stray-timeout=soon true 2>bad.err &&
	grep "stray-timeout must be a duration" bad.err
'
# The stray exits by itself while the task runs: the shell reaps it
# (no zombie under the shell), and does not count it as killed.
test_expect_success 'a stray that exits by itself is reaped, not counted' '
	$T flux run sh -c "(setsid sleep 0.2 >/dev/null 2>&1 </dev/null &);
		sleep 1.5; ps -o stat= --ppid \$PPID >zomb.out" 2>s10.err &&
	test_must_fail grep Z zomb.out &&
	test_must_fail grep stray s10.err
'
# The rexec server of the shell waits for its own children: the
# reaper must leave them (and their exit codes) alone.
test_expect_success 'flux exec --jobid into a job: exit codes are kept' '
	id=$(flux submit sleep 300) &&
	flux job wait-event -t 30 -p exec $id shell.start &&
	test_expect_code 3 $T flux exec -j $id sh -c "exit 3" &&
	test_expect_code 5 $T flux exec -j $id sh -c "exit 5" &&
	$T flux exec -j $id true &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean
'
# Without strays the end costs one read of the shell's children list:
# the job must not wait for the 5 s stray-timeout (or anything).
test_expect_success 'a job without strays is not slowed' '
	for i in 1 2 3 4 5; do
		s=$(date +%s%N) &&
		$T flux run true 2>ns.err &&
		echo $(( ($(date +%s%N) - s) / 1000000 )) >>ns.ms &&
		test_must_fail grep stray ns.err || return 1
	done &&
	echo "flux run true, ms: $(cat ns.ms | tr "\n" " ")" &&
	test $(sort -n ns.ms | head -n 1) -lt 3000
'
test_expect_success 'two brokers: each shell ends its own stray and says so' '
	test_when_finished "kill_left \$D.11; rm -f b.keepalive" &&
	start_instance b 2 &&
	$T flux run -N2 -o exit-timeout=none \
		sh -c "setsid sleep $D.11 & echo up" >s11.out 2>s11.err &&
	test $(grep -c up s11.out) -eq 2 &&
	grep "flux-shell\[0\]: .*killed 1 stray process" s11.err &&
	grep "flux-shell\[1\]: .*killed 1 stray process" s11.err &&
	none_left $D.11 &&
	stop_instance b
'
test_expect_success 'no sleep of these jobs is left' '
	test_when_finished "kill_left $D" &&
	none_left "$D.*"
'
test_expect_success 'stop the broker' '
	stop_instance a
'
test_done

#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='a job shell killed by a signal while its broker lives
(PROTOCOLS-exec.md 2.7): job-exec tells the leader shell (lost-shell), so
it stops waiting for that shell output, and raises an exception naming
the shell rank: fatal on a critical rank (all by default) or the leader,
a severity 2 node-failure otherwise, and the job goes on.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

T="timeout -k 10 180"

# submit_job NAME ARGS...: a job whose tasks write their shell pid (their
# parent) to NAME.shellpid.TASKRANK, then wait for the file NAME.go
# (at most 120 s) and print "done TASKRANK"
submit_job () {
	name=$1; shift
	flux submit "$@" sh -c "echo \$PPID >$name.shellpid.\$FLUX_TASK_RANK;
		n=0; while ! test -e $name.go && test \$n -lt 1200; do
		sleep 0.1; n=\$((n+1)); done; echo done \$FLUX_TASK_RANK"
}
# wait_pids NAME N: until tasks 0..N-1 of job NAME wrote their shell pid
wait_pids () {
	for i in $(seq 600); do
		all=1
		for r in $(seq 0 $(($2 - 1))); do
			test -s $1.shellpid.$r || all=0
		done
		test $all = 1 && return 0
		sleep 0.1
	done
	return 1
}

test_expect_success 'start 3 brokers' '
	start_instance a 3
'
test_expect_success 'kill -9 of a non-leader shell (critical): the job ends at once' '
	id=$(submit_job a -N3 -n3) &&
	echo $id >a.id &&
	flux job wait-event -t 60 -p exec $id shell.start &&
	wait_pids a 3 &&
	kill -9 $(cat a.shellpid.2) &&
	# the tasks wait up to 120 s: the job must end well before, and
	# without the kill sequence of a cancel
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >a.ev &&
	grep "exception type=\"exec\" severity=0" a.ev &&
	grep "note=\"shell rank 2 (on $(hostname)): Killed\"" a.ev &&
	test $(grep -c " exception" a.ev) -eq 1 &&
	grep " finish status=" a.ev &&
	! grep " finish status=0" a.ev
'
test_expect_success 'the leader shell was told and logged it' '
	id=$(cat a.id) &&
	flux job eventlog -p exec $id >a.exec &&
	grep "log .*shell rank 2 (on $(hostname)): Killed" a.exec
'
test_expect_success 'kill -9 of a non-critical shell: severity 2, the job goes on' '
	id=$(submit_job b -N3 -n3) &&
	flux job wait-event -t 60 -p exec $id shell.start &&
	critical_ranks $id 0 &&
	wait_pids b 3 &&
	kill -9 $(cat b.shellpid.1) &&
	flux job wait-event -t 60 $id exception >b.exc &&
	grep "type=\"node-failure\" severity=2" b.exc &&
	grep "shell rank 1 (on $(hostname)): Killed" b.exc &&
	flux job wait-event -t 60 $id release >b.rel &&
	grep "ranks=\"1\" final=false" b.rel &&
	touch b.go &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >b.ev &&
	test $(grep -c " exception" b.ev) -eq 1 &&
	# the killed shell status counts in the job, as flux-core
	grep " finish status=9" b.ev &&
	{ $T flux job attach $id >b.out 2>b.err || true; } &&
	sort b.out >b.sorted &&
	printf "done 0\ndone 2\n" >b.exp &&
	test_cmp b.exp b.sorted
'
test_expect_success 'kill -9 of the leader shell: fatal, the job ends at once' '
	id=$(submit_job c -N3 -n3) &&
	flux job wait-event -t 60 -p exec $id shell.start &&
	critical_ranks $id 1 &&
	wait_pids c 3 &&
	kill -9 $(cat c.shellpid.0) &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >c.ev &&
	grep "exception type=\"exec\" severity=0" c.ev &&
	grep "note=\"shell rank 0 (on $(hostname)): Killed\"" c.ev
'
# each task writes its FLUX_JOB_TMPDIR, task 1 leaves files in it, then
# its shell pid (the last)
test_expect_success 'the tmpdirs of killed shells are removed, empty or not' '
	id=$(flux submit -N3 -n3 sh -c "r=\$FLUX_TASK_RANK;
		echo \$FLUX_JOB_TMPDIR >e.tmpdir.\$r;
		if test \$r = 1; then mkdir -p \$FLUX_JOB_TMPDIR/a/b &&
			echo x >\$FLUX_JOB_TMPDIR/a/b/f; fi;
		echo \$PPID >e.shellpid.\$r; sleep 120") &&
	wait_pids e 3 &&
	test -d "$(cat e.tmpdir.2)" &&
	test -f "$(cat e.tmpdir.1)/a/b/f" &&
	kill -9 $(cat e.shellpid.1) $(cat e.shellpid.2) &&
	flux job wait-event -t 30 $id clean &&
	for i in $(seq 300); do
		test -e "$(cat e.tmpdir.1)" || test -e "$(cat e.tmpdir.2)" ||
			break
		sleep 0.1
	done &&
	! test -e "$(cat e.tmpdir.0)" &&
	! test -e "$(cat e.tmpdir.1)" &&
	! test -e "$(cat e.tmpdir.2)" &&
	flux exec -r 1-2 flux module stats exec-agent >e.stats &&
	test $(jq -s "map(.shells[\"tmpdirs-removed\"]) | add" e.stats) -ge 2 &&
	test $(jq -s "map(.shells[\"tmpdirs-left\"]) | add" e.stats) -eq 0
'
test_expect_success 'a killed shell tmpdir that is a symlink is left alone' '
	d=$(mktemp -d "${TMPDIR:-/tmp}/t2562.XXXXXX") &&
	test_when_finished "rm -rf $d" &&
	echo keep >$d/f &&
	id=$(flux submit -N1 -n1 sh -c "echo \$FLUX_JOB_TMPDIR >f.tmpdir;
		rmdir \$FLUX_JOB_TMPDIR && ln -s $d \$FLUX_JOB_TMPDIR;
		echo \$PPID >f.shellpid.0; sleep 120") &&
	wait_pids f 1 &&
	test -L "$(cat f.tmpdir)" &&
	kill -9 $(cat f.shellpid.0) &&
	flux job wait-event -t 30 $id clean &&
	test -f $d/f &&
	test -L "$(cat f.tmpdir)" &&
	rm -f "$(cat f.tmpdir)"
'
# rank 2 runs its shell through a wrapper that writes its pid and waits
# for a file: killing it is killing a shell before the start barriers
test_expect_success 'a non-critical shell killed before the tasks started: fatal' '
	w=$(mktemp -d "${TMPDIR:-/tmp}/t2562.XXXXXX") &&
	test_when_finished "rm -rf $w" &&
	slow_shell $w 2 &&
	id=$(flux submit -N3 -n3 -S exec.job_shell=$w/slowshell.sh true) &&
	flux job wait-event -t 60 $id start &&
	critical_ranks $id 0 &&
	for i in $(seq 600); do test -s $w/pid && break; sleep 0.1; done &&
	kill -9 $(cat $w/pid) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >d.ev &&
	grep "exception type=\"exec\" severity=0" d.ev &&
	grep "rank 2: job shell: Killed before the job.s tasks started" d.ev &&
	test $(grep -c " exception" d.ev) -eq 1 &&
	grep " finish status=256" d.ev
'
test_expect_success 'job-exec counts the killed shells' '
	flux module stats job-exec |
		jq -e ".implementations.realexec.signaled >= 3"
'
test_expect_success 'every rank is free again' '
	touch a.go c.go &&
	EVENTUALLY_TIMEOUT=60 eventually \
		"flux resource list -n -s free -o {ranks}" 0-2
'
test_expect_success 'stop the instance' '
	stop_instance a
'
test_done

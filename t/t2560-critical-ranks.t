#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='critical ranks in real execution (PROTOCOLS-exec.md 2.1,
2.7): a lost broker on a non-critical shell rank raises a severity 2
node-failure, its rank is released and the job goes on; on a critical
rank (all by default) it is fatal.  A batch job tells its parent its
broker.critical-ranks (rank 0 and the tree interior), so losing one of
its leaf nodes does not end it.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

EVENTUALLY_TIMEOUT=60
T="timeout -k 10 180"

# kill_rank R: SIGKILL the broker of rank R
kill_rank () {
	pid=$(flux exec -r $1 flux getattr broker.pid) &&
	kill -9 $pid
}

test_expect_success 'broker.critical-ranks: rank 0 and the tree interior' '
	$T flux start -s 4 -Stbon.topo=kary:2 \
		flux exec flux getattr broker.critical-ranks >crit.out &&
	printf "0-1\n0-1\n0-1\n0-1\n" >crit.exp &&
	test_cmp crit.exp crit.out &&
	$T flux start -s 3 flux getattr broker.critical-ranks >crit0.out &&
	echo 0 >crit0.exp &&
	test_cmp crit0.exp crit0.out
'
test_expect_success 'broker.critical-ranks may be set; a bad value is refused' '
	$T flux start -s 2 -Sbroker.critical-ranks=0-1 \
		flux getattr broker.critical-ranks >crit1.out &&
	echo 0-1 >crit1.exp &&
	test_cmp crit1.exp crit1.out &&
	# every broker refuses it: flux start exits 1, or 143 from the
	# SIGTERM it sends to ranks not yet gone
	! $T flux start -s 2 -Sbroker.critical-ranks=0-2 true 2>crit2.err &&
	grep "invalid value for broker.critical-ranks=.0-2." crit2.err &&
	! $T flux start -s 1 -Sbroker.critical-ranks=x true 2>crit3.err &&
	grep "invalid value for broker.critical-ranks=.x." crit3.err
'
test_expect_success 'start 4 brokers' '
	start_instance a 4 --test-exit-mode=leader
'
test_expect_success 'a job whose only critical rank is 0 survives losing rank 3' '
	id=$(flux submit -N4 -n4 sh -c \
		"while ! test -e go; do sleep 0.1; done; echo done \$FLUX_TASK_RANK") &&
	echo $id >id1 &&
	# start comes once every shell is spawned, before their start
	# barriers; a loss before shell.start (barrier 2 passed) is fatal
	# (tested below), so wait for it
	flux job wait-event -t 60 -p exec $id shell.start &&
	critical_ranks $id 0 &&
	kill_rank 3 &&
	flux job wait-event -t 60 $id exception >exc1.out &&
	grep "type=\"node-failure\" severity=2" exc1.out &&
	grep "node failure on $(hostname) (shell rank 3)" exc1.out &&
	flux job wait-event -t 60 $id release >rel1.out &&
	grep "ranks=\"3\" final=false" rel1.out &&
	touch go &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >ev1.out &&
	grep "finish status=0" ev1.out &&
	test $(grep -c "exception" ev1.out) -eq 1 &&
	$T flux job attach $id >out1 &&
	sort out1 >out1.sorted &&
	printf "done 0\ndone 1\ndone 2\n" >out1.exp &&
	test_cmp out1.exp out1.sorted
'
test_expect_success 'rank 3 is down, ranks 0-2 are free again' '
	eventually "flux resource list -n -s down -o {ranks}" 3 &&
	eventually "flux resource list -n -s free -o {ranks}" 0-2
'
test_expect_success 'critical-ranks of a job: checked against its shell ranks' '
	# (no sleep 300: the task of the killed broker below lives on)
	id=$(flux submit -N3 -n3 sh -c \
		"while ! test -e stop2; do sleep 0.1; done") &&
	flux job wait-event -t 60 $id start &&
	test_must_fail critical_ranks $id 3 2>crit4.err &&
	grep "shell ranks 0-2 only" crit4.err &&
	test_must_fail critical_ranks $id "x" &&
	critical_ranks $id 2 &&
	echo $id >id2
'
test_expect_success 'losing the broker of a critical shell rank is fatal' '
	id=$(cat id2) &&
	kill_rank 2 &&
	flux job wait-event -t 60 $id exception >exc2.out &&
	grep "type=\"node-failure\" severity=0" exc2.out &&
	grep "node failure on $(hostname) (rank 2)" exc2.out &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id | grep " release .*final=true" &&
	touch stop2
'
test_expect_success 'stop the instance' '
	stop_instance a
'

test_expect_success 'start 4 brokers (c)' '
	start_instance c 4 --test-exit-mode=leader
'
# rank 3 runs its shell through a wrapper that waits for a file, so the
# other shells wait for it in their start barrier when its broker dies
# (the wrapper lives where the path has no space: the agent runs it)
test_expect_success 'a non-critical node lost before the tasks started is fatal' '
	w=$(mktemp -d "${TMPDIR:-/tmp}/t2560.XXXXXX") &&
	test_when_finished "touch $w/proceed; sleep 0.3; rm -rf $w" &&
	slow_shell $w 3 &&
	id=$(flux submit -N4 -n4 -S exec.job_shell=$w/slowshell.sh true) &&
	flux job wait-event -t 60 $id start &&
	critical_ranks $id 0 &&
	kill_rank 3 &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >ev3.out &&
	grep "type=\"node-failure\" severity=0" ev3.out &&
	grep "node failure on $(hostname) (rank 3) before the job.s tasks started" \
		ev3.out &&
	test $(grep -c "exception" ev3.out) -eq 1 &&
	# the other shells end on their failed start barrier (exit 1) or,
	# when the fatal exception'"'"'s kill comes first, by its SIGTERM
	grep -E "finish status=(256|15)$" ev3.out
'
test_expect_success 'stop the instance (c)' '
	stop_instance c
'

test_expect_success 'start 4 brokers for a batch job' '
	start_instance b 4 --test-exit-mode=leader
'
test_expect_success 'a batch job on 4 nodes tells its parent its critical ranks' '
	cat >batch.sh <<-"EOF" &&
	#!/bin/sh
	flux getattr broker.critical-ranks
	while ! test -e go2; do sleep 0.1; done
	flux run -N3 -n3 hostname | wc -l
	echo batch-done
	EOF
	chmod +x batch.sh &&
	id=$(flux batch -N4 --output=batch.out batch.sh) &&
	echo $id >idb &&
	# rank 0 tells the parent before it runs the script
	EVENTUALLY_TIMEOUT=120 eventually "head -n 1 batch.out 2>/dev/null" 0
'
test_expect_success 'losing a leaf node raises a non-fatal node-failure' '
	id=$(cat idb) &&
	suburi=$(flux uri --local $id) &&
	subpid=$(FLUX_URI=$suburi flux exec -r 3 flux getattr broker.pid) &&
	kill_rank 3 &&
	kill -9 $subpid &&
	flux job wait-event -t 60 $id exception >excb.out &&
	grep "type=\"node-failure\" severity=2" excb.out &&
	grep "(shell rank 3)" excb.out &&
	EVENTUALLY_TIMEOUT=120 eventually \
		"FLUX_URI=$suburi flux resource list -n -s down -o {ranks}" 3
'
test_expect_success 'the batch job goes on and ends with status 0' '
	id=$(cat idb) &&
	touch go2 &&
	flux job wait-event -t 120 $id clean &&
	flux job eventlog $id >evb.out &&
	grep "finish status=0" evb.out &&
	grep "ranks=\"3\" final=false" evb.out &&
	grep -x 3 batch.out &&
	grep batch-done batch.out
'
test_expect_success 'stop the instance' '
	stop_instance b
'
test_done

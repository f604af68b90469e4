#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='simulated jobs (system.exec.test) on a lost broker: as
for real execution, each gets a node-failure exception and ends, all its
ranks are released, and flux resource list shows the lost rank down only.
A job whose lost ranks hold no critical shell rank (job-exec.critical-ranks)
gets a severity 2 node-failure instead, its lost rank is released, and it
goes on.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

EVENTUALLY_TIMEOUT=60

SIM=--setattr=system.exec.test.run_duration
CRED="$FLUX_BUILD_DIR/t/rpc-cred"
RPC="$FLUX_BUILD_DIR/t/rpc"
# a job that runs until job-exec.override finish
HOLD='-S system.exec.test={"override":1,"run_duration":"inf"}'

# rpc_job TOPIC ID JSON-REST: TOPIC with {"<key>":ID-in-decimal,REST}
# (retried: the start request may not have reached job-exec yet)
rpc_job () {
	for i in $(seq 300); do
		$RPC $1 "{\"$2\":$(flux job id --to=dec $3)$4}" \
			>/dev/null 2>rpc_job.err && return 0
		sleep 0.1
	done
	cat rpc_job.err >&2
	return 1
}
override () { rpc_job job-exec.override jobid $1 ",\"event\":\"$2\""; }

test_expect_success 'start 4 brokers, fanout 2 (rank 3 is a grandchild of 0)' '
	start_instance lost 4 --test-exit-mode=leader -Stbon.fanout=2 &&
	flux job wait-event -t 60 $(flux submit -N4 $SIM=0 true) clean
'
test_expect_success 'two simulated jobs run on all 4 ranks' '
	id1=$(flux submit -N4 -n4 $SIM=1000s true) &&
	id2=$(flux submit -N4 -n4 $SIM=1000s true) &&
	echo $id1 $id2 >ids &&
	for id in $id1 $id2; do flux job wait-event -t 60 $id start || return 1; done &&
	flux resource list -n -s allocated -o "{ranks}" >alloc0.out &&
	grep "0-3" alloc0.out &&
	flux exec -r 3 flux getattr broker.pid >rank3.pid &&
	test -s rank3.pid
'
test_expect_success 'kill -9 of rank 3 (after a guest'"'"'s broker.shutdown): both jobs get node-failure, end, release all' '
	read id1 id2 <ids &&
	# refused to a guest by the broker, or ignored by testexec: either way
	# the loss below must still count
	{ $CRED -u 4242 -R 2 event.publish "{\"topic\":\"broker.shutdown\",\"flags\":0}" 2>guestpub.err ||
		grep "guests may not publish" guestpub.err; } &&
	kill -9 $(cat rank3.pid) &&
	for id in $id1 $id2; do
		flux job wait-event -t 60 $id exception >exc.$id &&
		grep "type=\"node-failure\"" exc.$id &&
		grep "node failure on $(hostname) (rank 3)" exc.$id &&
		flux job wait-event -t 60 $id clean &&
		flux job eventlog $id | grep " release .*final=true" || return 1
	done
'
test_expect_success 'flux resource list: rank 3 is down only, nothing allocated' '
	eventually "flux resource list -n -s down -o {ranks}" 3 &&
	eventually "flux resource list -n -s allocated -o {nnodes}" 0 &&
	eventually "flux resource list -n -s free -o {ranks}" 0-2
'
test_expect_success 'new jobs run on the other ranks' '
	id=$(flux submit -N3 -n3 $SIM=0 true) &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id | grep "finish status=0"
'
test_expect_success 'stop the instance' '
	stop_instance lost; ! kill -0 $(cat lost.pid) 2>/dev/null
'

test_expect_success 'critical ranks: start 4 brokers' '
	start_instance crit 4 --test-exit-mode=leader -Stbon.fanout=2
'
# (each broker has 2 cores: two 4-node jobs of 4 tasks fill the instance)
test_expect_success 'two held jobs on 4 ranks: one with critical rank 0 only, one default' '
	a=$(flux submit -N4 -n4 $HOLD true) &&
	c=$(flux submit -N4 -n4 $HOLD true) &&
	echo $a $c >cids &&
	for id in $a $c; do
		override $id start &&
		flux job wait-event -t 60 $id start || return 1
	done &&
	critical_ranks $a 0 &&
	test_must_fail critical_ranks $c 4 2>crit4.err &&
	grep "shell ranks 0-3 only" crit4.err
'
test_expect_success 'losing rank 3: severity 2 for the job whose rank 3 is not critical' '
	read a c <cids &&
	kill -9 $(flux exec -r 3 flux getattr broker.pid) &&
	for id in $a $c; do
		flux job wait-event -t 60 $id exception >exc.$id || return 1
	done &&
	grep "type=\"node-failure\" severity=2" exc.$a &&
	grep "node failure on $(hostname) (shell rank 3)" exc.$a &&
	grep "type=\"node-failure\" severity=0" exc.$c &&
	grep "node failure on $(hostname) (rank 3)" exc.$c
'
test_expect_success 'the default job ends; rank 3 of the other is released, it runs on' '
	read a c <cids &&
	flux job wait-event -t 60 $c clean &&
	flux job wait-event -t 60 $a release >rel.a &&
	grep "ranks=\"3\" final=false" rel.a &&
	flux job eventlog $a >ev.a &&
	! grep -E "finish|clean" ev.a &&
	test $(grep -c exception ev.a) -eq 1
'
test_expect_success 'it finishes with 0 when told, releasing 0-2' '
	read a c <cids &&
	override $a finish &&
	flux job wait-event -t 60 $a clean &&
	flux job eventlog $a >ev.a2 &&
	grep "finish status=0" ev.a2 &&
	grep "release ranks=\"0-2\" final=true" ev.a2 &&
	eventually "flux resource list -n -s free -o {ranks}" 0-2 &&
	eventually "flux resource list -n -s down -o {ranks}" 3
'
test_expect_success 'a job that released all but its last rank early loses it: it finishes with 0' '
	b=$(flux submit -N3 -n3 \
		-S system.exec.test="{\"override\":1,\"run_duration\":\"inf\",\"release_early\":0}" \
		true) &&
	override $b start &&
	flux job wait-event -t 60 $b release &&
	critical_ranks $b 0 &&
	kill -9 $(flux exec -r 2 flux getattr broker.pid) &&
	flux job wait-event -t 60 $b clean &&
	flux job eventlog $b >ev.b &&
	grep "release ranks=\"0-1\" final=false" ev.b &&
	grep "exception type=\"node-failure\" severity=2" ev.b &&
	grep "finish status=0" ev.b &&
	grep "release ranks=\"2\" final=true" ev.b
'
test_expect_success 'job-exec stats count the non-critical losses' '
	$RPC job-exec.stats-get >stats.json &&
	jq -e ".implementations.testexec[\"lost-noncritical\"] == 2" stats.json
'
test_expect_success 'stop the critical-ranks instance' '
	stop_instance crit
'
test_done

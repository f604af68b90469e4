#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='simulated jobs (system.exec.test) on a lost broker: as
for real execution, each gets a node-failure exception and ends, all its
ranks are released, and flux resource list shows the lost rank down only'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

EVENTUALLY_TIMEOUT=60

SIM=--setattr=system.exec.test.run_duration
CRED="$FLUX_BUILD_DIR/t/rpc-cred"

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
test_done

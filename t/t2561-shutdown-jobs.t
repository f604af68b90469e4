#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='an instance that shuts down with jobs running ends them
first, as flux-core'"'"'s rc3 does: the queue stopped (not saved), running
jobs canceled and waited for, pending ones kept for a restart; and an
exec-agent unloaded under running shells kills them (SIGTERM, then SIGKILL
after its unload-grace), so no job process outlives its broker.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

T="timeout -k 10 120"
# a duration no other test uses, to find our processes by their argv
D=300.$$
# none: no process of ours is left (bounded wait: the last ones may be
# going when the instance returns)
none () {
	for i in $(seq 100); do
		pgrep -f "$1" >/dev/null || return 0
		sleep 0.1
	done
	pgrep -af "$1"
	pkill -9 -f "$1"
	return 1
}

test_expect_success '1 broker: flux start returns with a job running' '
	$T flux start -s 1 sh -c "id=\$(flux submit sleep ${D}1) &&
		flux job wait-event -t 60 \$id start" &&
	none "sleep ${D}1"
'
test_expect_success '4 brokers: flux start returns with a 4-node job running' '
	$T flux start -s 4 sh -c "id=\$(flux submit -N4 -n4 sleep ${D}2) &&
		flux job wait-event -t 60 \$id start" &&
	none "sleep ${D}2"
'
test_expect_success 'with a statedir: running jobs are canceled, held ones kept' '
	mkdir sd &&
	$T flux start -s 2 -Sstatedir="$(pwd)/sd" sh -c "
		id=\$(flux submit -N2 -n2 sleep ${D}3) &&
		flux job wait-event -t 60 \$id start &&
		held=\$(flux submit --urgency=0 true) &&
		echo \$id \$held >ids" &&
	none "sleep ${D}3" &&
	$T flux start -s 1 -Sstatedir="$(pwd)/sd" sh -c "
		read id held <ids &&
		flux job eventlog \$id >run.ev &&
		flux job eventlog \$held >held.ev &&
		flux queue status >queue.out" &&
	grep "exception type=\"cancel\".*the instance is shutting down" run.ev &&
	grep clean run.ev &&
	grep "priority priority=0" held.ev &&
	test_must_fail grep -E "exception|clean" held.ev &&
	grep "Scheduling is started" queue.out
'
test_expect_success 'broker.cleanup-cancel=0: no cancel, the agent still kills' '
	mkdir sd0 &&
	$T flux start -s 1 -Sstatedir="$(pwd)/sd0" -Sbroker.cleanup-cancel=0 \
		sh -c "id=\$(flux submit sleep ${D}5) &&
		flux job wait-event -t 60 \$id start && echo \$id >id0" &&
	none "sleep ${D}5" &&
	$T flux start -s 1 -Sstatedir="$(pwd)/sd0" \
		sh -c "flux job eventlog \$(cat id0) >run0.ev" &&
	test_must_fail grep "the instance is shutting down" run0.ev
'
test_expect_success 'start 2 brokers' '
	start_instance a 2
'
test_expect_success 'exec-agent unloaded under a shell kills it, and a TERM-proof task' '
	id=$(flux submit -N2 -n2 sh -c "trap \"\" TERM; sleep ${D}4; sleep ${D}4") &&
	flux job wait-event -t 60 $id start &&
	for i in $(seq 100); do
		test $(pgrep -fc "^sleep ${D}4") = 2 && break
		sleep 0.1
	done &&
	test $(pgrep -fc "^sleep ${D}4") = 2 &&
	$T flux exec -r 1 flux module remove exec-agent &&
	for i in $(seq 100); do
		test $(pgrep -fc "^sleep ${D}4") = 1 && break
		sleep 0.1
	done &&
	test $(pgrep -fc "^sleep ${D}4") = 1 &&
	flux dmesg | grep "exec-agent.*shells still running after 2s: killed" &&
	flux job wait-event -t 60 $id exception >unload.exc &&
	grep "node-failure" unload.exc &&
	flux job wait-event -t 60 $id clean &&
	none "sleep ${D}4"
'
test_expect_success 'the agent loads again and jobs run on rank 1' '
	flux exec -r 1 flux module load exec-agent &&
	flux run -N2 -n2 true
'
test_expect_success 'stop the instance' '
	stop_instance a
'
test_done

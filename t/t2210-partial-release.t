#!/bin/sh
test_description='partial release reaches the scheduler: a simulated
4-node job releases 3 of its ranks while it runs (testexec release_early),
the job manager sends sched.free final:false for them (sched-simple said
partial-ok), sched-simple gives them to the next job at once, and the
accounting (flux resource list, sched-simple) is right at every step,
also across a reload of the job manager'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
# a job that runs until job-exec.override finish, and releases all its
# ranks but the last at once
HOLD='-S system.exec.test={"override":1,"run_duration":"inf","release_early":0}'
SIM="-S system.exec.test.run_duration"

# override ID EVENT: job-exec.override (retried: the start request may not
# have reached job-exec yet)
override () {
	for i in $(seq 300); do
		$RPC job-exec.override \
			"{\"jobid\":$(flux job id --to=dec $1),\"event\":\"$2\"}" \
			>/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "job-exec.override $2 of $1 failed" >&2
	return 1
}
# nodes STATE: the nodes flux resource list shows in STATE
nodes () { flux resource list -n -s $1 -o "{nnodes}"; }
# sched_nodes KEY: the nodes of KEY (allocated, all) in sched-simple's own
# view (sched.resource-status)
sched_nodes () {
	$RPC sched.resource-status |
		jq -r "[.$1.execution.R_lite[]?.rank] | join(\",\")"
}
# timestamp ID EVENT: the time of ID's first EVENT
timestamp () {
	flux job eventlog -f json $1 |
		jq -r "select(.name == \"$2\") | .timestamp" | head -n 1
}
count_events () { flux job eventlog -f json $1 | jq -r .name | grep -c "^$2\$"; }
sstat () { flux module stats sched-simple | jq -r ".[\"$1\"]"; }
jstat () { flux module stats job-manager | jq -r "$1"; }
# wait_for CMD VALUE: until CMD prints VALUE (30 s at most)
wait_for () {
	for i in $(seq 300); do
		test "$(eval "$1")" = "$2" && return 0
		sleep 0.1
	done
	echo "$1: $(eval "$1"), not $2" >&2
	return 1
}

test_expect_success 'start an instance of 4 brokers with the default modules' '
	start_instance broker 4 &&
	flux module list | grep sched-simple &&
	wait_for "nodes free" 4
'
test_expect_success 'sched-simple said partial-ok at hello' '
	wait_for "jstat .alloc.ready" true &&
	test "$(jstat ".alloc[\"partial-ok\"]")" = true
'
test_expect_success 'a 4-node job releases 3 ranks while it runs: they are free' '
	id1=$(flux submit -N4 -x $HOLD true) &&
	echo $id1 >id1 &&
	flux job wait-event -t 60 $id1 alloc &&
	override $id1 start &&
	flux job wait-event -t 60 $id1 release &&
	flux job eventlog $id1 | grep "release ranks=\"0-2\" final=false" &&
	wait_for "nodes free" 3 &&
	test "$(nodes allocated)" = 1 &&
	wait_for "sstat partial-frees" 1 &&
	test "$(sstat free-errors)" = 0 &&
	test "$(flux jobs -n -o "{state}" $id1)" = RUN
'
test_expect_success 'sched-simple agrees: only the last rank is allocated' '
	test "$(sched_nodes allocated)" = 3
'
test_expect_success 'a 3-node job runs on the released nodes while the first runs' '
	id2=$(flux submit -N3 -x $SIM=0.1s true) &&
	echo $id2 >id2 &&
	flux job wait-event -t 60 $id2 clean &&
	test "$(flux jobs -n -o "{result}" $id2)" = COMPLETED &&
	test "$(flux jobs -n -o "{state}" $(cat id1))" = RUN &&
	test "$(nodes free)" = 3
'
test_expect_success 'the first job ends: final release, everything free' '
	id1=$(cat id1) &&
	override $id1 finish &&
	flux job wait-event -t 60 $id1 clean &&
	test "$(flux jobs -n -o "{result}" $id1)" = COMPLETED &&
	test $(count_events $id1 release) -ge 2 &&
	flux job eventlog $id1 | grep "release ranks=\"3\" final=true" &&
	wait_for "nodes free" 4 &&
	test "$(nodes allocated)" = 0 &&
	test -z "$(sched_nodes allocated)"
'
test_expect_success 'the second job started (and ended) before the first finished' '
	s2=$(timestamp $(cat id2) start) &&
	e2=$(timestamp $(cat id2) finish) &&
	f1=$(timestamp $(cat id1) finish) &&
	echo "job 2 start $s2 finish $e2, job 1 finish $f1" &&
	test -n "$s2" && test -n "$f1" &&
	jq -en "$s2 < $f1 and $e2 < $f1"
'
test_expect_success 'the sched.free sequence: one partial, then final frees' '
	test "$(sstat partial-frees)" = 1 &&
	test "$(sstat frees)" -ge 2 &&
	test "$(sstat free-errors)" = 0 &&
	test "$(jstat .alloc.sent.free_partial)" = 1
'
test_expect_success 'partial release, then a reload of the job manager' '
	id3=$(flux submit -N4 -x $HOLD true) &&
	echo $id3 >id3 &&
	flux job wait-event -t 60 $id3 alloc &&
	override $id3 start &&
	flux job wait-event -t 60 $id3 release &&
	wait_for "nodes free" 3 &&
	flux module reload job-manager &&
	wait_for "jstat .alloc.ready" true &&
	flux dmesg | grep "sched-simple.*the job manager was reloaded"
'
test_expect_success 'after the reload: the released ranks are still free' '
	test "$(nodes free)" = 3 &&
	test "$(nodes allocated)" = 1 &&
	wait_for "sched_nodes allocated" 3 &&
	test "$(flux jobs -n -o "{state}" $(cat id3))" = RUN
'
test_expect_success 'after the reload: a 3-node job runs on them' '
	id4=$(flux submit -N3 -x $SIM=0.1s true) &&
	flux job wait-event -t 60 $id4 clean &&
	test "$(flux jobs -n -o "{result}" $id4)" = COMPLETED &&
	test "$(flux jobs -n -o "{state}" $(cat id3))" = RUN
'
test_expect_success 'after the reload: the final release frees the last rank once' '
	id3=$(cat id3) &&
	errors=$(sstat free-errors) &&
	override $id3 finish &&
	flux job wait-event -t 60 $id3 clean &&
	test "$(flux jobs -n -o "{result}" $id3)" = COMPLETED &&
	test $(count_events $id3 release) -ge 2 &&
	wait_for "nodes free" 4 &&
	test "$(nodes allocated)" = 0 &&
	test -z "$(sched_nodes allocated)" &&
	test "$(sstat free-errors)" = $errors
'
test_expect_success 'ordinary jobs still run and free everything' '
	flux submit --cc=1-8 --quiet -N2 $SIM=0.05s true &&
	flux queue drain --timeout=60s &&
	test "$(flux jobs -a -n -o "{result}" | grep -c COMPLETED)" = 12 &&
	test "$(nodes allocated)" = 0 &&
	test "$(sstat free-errors)" = 0
'
test_expect_success 'nothing was refused or ignored along the way' '
	flux dmesg >dmesg.out &&
	test_must_fail grep -E "release ignored|free refused|holds no resources|final free:" dmesg.out
'
test_expect_success 'stop the instance' '
	stop_instance broker
'
test_done

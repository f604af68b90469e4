#!/bin/sh
test_description='the job control plane end to end, with the default
modules (job-ingest, job-manager, sched-simple, job-exec with simulated
execution, job-list, resource): jobs run to completion, flux resource list
shows what running jobs hold, cancel frees it'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# job-list learns of every event from the job manager's journal, a moment
# after it happens: what flux jobs shows is read with eventually
# (t/sharness.d), which checks again until it is right, within 30 s.

SIM=--setattr=system.exec.test.run_duration

test_expect_success 'start an instance of 2 brokers with the default modules' '
	start_instance broker 2 &&
	flux module list | grep sched-simple
'
test_expect_success '100 simulated jobs run to completion' '
	flux submit --cc=1-100 --quiet $SIM=0.01s true &&
	flux queue drain &&
	flux jobs -a -n -o "{result}" | sort | uniq -c >results &&
	test "$(cat results | tr -s " ")" = " 100 COMPLETED"
'
test_expect_success 'flux resource list: what running jobs hold is allocated' '
	ncores=$(flux resource list -n -o "{ncores}" -s free) &&
	test $ncores -ge 2 &&
	flux submit --cc=1-2 --quiet $SIM=600s true &&
	for i in $(seq 100); do
		test "$(flux jobs -n -o "{state}" | grep -c R)" = 2 && break
		sleep 0.1
	done &&
	test "$(flux resource list -n -o "{ncores}" -s allocated)" = 2 &&
	test "$(flux resource list -n -o "{ncores}" -s free)" = $((ncores - 2))
'
test_expect_success 'cancel frees them' '
	flux cancel --all &&
	flux queue drain &&
	test "$(flux resource list -n -o "{ncores}" -s allocated)" = 0 &&
	test "$(flux jobs -a -n -o "{result}" | grep -c CANCELED)" = 2
'
test_expect_success 'job-manager.resource-status answers {allocated:R}' '
	flux module stats job-manager >/dev/null &&
	$FLUX_BUILD_DIR/t/rpc job-manager.resource-status | jq -e .allocated.version
'
# One job is held running on purpose across the reloads (the 0.3 s jobs
# alone might all be over, under load, before the first reload).
test_expect_success 'a reload of the job manager alone, with jobs running and pending, loses none' '
	held=$(flux submit $SIM=600s true) &&
	flux job wait-event -t 60 $held start &&
	flux submit --cc=1-40 --quiet $SIM=0.3s true &&
	for i in 1 2 3 4; do flux module reload job-manager || return 1; done &&
	eventually "flux jobs -n -o {state_single} $held" R &&
	flux cancel $held &&
	flux queue drain --timeout=60s &&
	eventually "flux jobs -n -o {result} $held" CANCELED &&
	eventually "flux jobs -a -n -o {result} | grep -c COMPLETED" 140 &&
	flux dmesg >reload.dmesg &&
	grep "sched-simple.*the job manager was reloaded" reload.dmesg &&
	grep "job-exec.*the job manager was reloaded: hello again" reload.dmesg &&
	flux module stats job-exec | jq -e ".count.adopt >= 1" &&
	test "$(flux resource list -n -o "{ncores}" -s allocated)" = 0
'
# unload_while_running MODULE N: N jobs of 3 s run while MODULE is
# unloaded for 3.5 s (they finish meanwhile), then it is loaded again:
# they all complete, and the job manager is still there
unload_while_running () {
	flux submit --cc=1-$2 --quiet $SIM=3s true &&
	for i in $(seq 100); do
		test "$(flux jobs -n -o "{state}" | grep -c R)" = $2 && break
		sleep 0.1
	done &&
	test "$(flux jobs -n -o "{state}" | grep -c R)" = $2 &&
	flux module remove $1 &&
	sleep 3.5 &&
	flux module load $1 &&
	flux queue drain --timeout=60s &&
	flux module list | grep "^job-manager "
}
test_expect_success 'the kvs unloaded while jobs finish: their events wait for it, none is lost' '
	unload_while_running kvs 4 &&
	eventually "flux jobs -a -n -o {result} | grep -c COMPLETED" 144 &&
	flux dmesg >kvs.dmesg &&
	grep "job-manager.*eventlog commit refused" kvs.dmesg &&
	grep "job-manager.*the refused eventlog commit is sent again" kvs.dmesg
'
test_expect_success 'the content module unloaded while jobs finish: the kvs waits for it, none is lost' '
	unload_while_running content 2 &&
	eventually "flux jobs -a -n -o {result} | grep -c COMPLETED" 146 &&
	test "$(flux module stats content | jq -r .backing)" = content-sqlite &&
	flux dmesg >content.dmesg &&
	grep "kvs.*content.write refused" content.dmesg &&
	grep "kvs.*content service back: .* sent again" content.dmesg &&
	grep "content-sqlite.*registered again" content.dmesg
'
test_expect_success 'a reload of the kvs during submission and under load loses no job' '
	timeout 120 flux submit --cc=1-2000 --quiet $SIM=0.001s true >sub.out 2>sub.err &
	pid=$! &&
	sleep 0.1 &&
	flux module reload kvs &&
	wait $pid &&
	flux queue drain --timeout=60s &&
	flux module list | grep "^job-manager " &&
	eventually "flux jobs -a -c 0 -n -o {result} | grep -c COMPLETED" 2146
'
test_expect_success 'a job manager unloaded while a start is unanswered waits for the answer' '
	id=$(flux submit --setattr=system.exec.test.override=1 true) &&
	jobid=$(flux job id $id) &&
	for i in $(seq 100); do
		test "$(flux jobs -n -o "{state}" $id)" = RUN &&
			test $(flux module stats job-exec | jq .jobs.active) -ge 1 &&
			break
		sleep 0.1
	done &&
	t0=$(date +%s%N) &&
	{ flux module reload job-manager & } &&
	pid=$! &&
	sleep 0.5 &&
	$FLUX_BUILD_DIR/t/rpc job-exec.override \
		"{\"jobid\":$jobid,\"event\":\"start\"}" &&
	wait $pid &&
	ms=$(( ($(date +%s%N) - t0) / 1000000 )) &&
	test $ms -ge 400 &&
	flux dmesg >unanswered.dmesg &&
	grep "job-manager.*unloading: waiting for job-exec to answer 1 start request" unanswered.dmesg &&
	test $(flux job eventlog $id | grep -c " start") = 1 &&
	$FLUX_BUILD_DIR/t/rpc job-exec.override \
		"{\"jobid\":$jobid,\"event\":\"finish\",\"status\":0}" &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id | grep " finish status=0" &&
	test $(flux job eventlog $id | grep -c " start") = 1
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'

test_done

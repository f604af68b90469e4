#!/bin/sh
test_description='job-manager restart: reload of the module, and of the
whole instance (same statedir), with pending, held, dependent, running
and inactive jobs; replay of odd eventlogs found in the KVS'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
SUBMIT="$FLUX_BUILD_DIR/t/jm-submit"
SCHED="$FLUX_BUILD_DIR/t/module/.libs/sched-dummy.so"
EXEC="$FLUX_BUILD_DIR/t/module/.libs/exec-dummy.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch,job-manager

jkey () {
	printf "job.%04x.%04x.%04x.%04x" $(($1>>48&65535)) $(($1>>32&65535)) \
		$(($1>>16&65535)) $(($1&65535))
}
evlog () { flux kvs get $(jkey $1).eventlog; }
names () { evlog $1 | jq -r .name | tr "\n" " " | sed "s/ $//"; }
wait_event () {
	flux kvs eventlog wait-event -q -t 20s $(jkey $1).eventlog $2
}
jm () { $RPC job-manager.stats-get | jq -r "$1"; }
wait_jm () {
	for i in $(seq 150); do
		test "$(jm "$1")" = "$2" && return 0
		sleep 0.1
	done
	echo "job-manager $1 is $(jm "$1"), not $2" >&2
	return 1
}
sched () { $RPC sched-dummy.stats | jq -c -r "$1"; }
execstat () { $RPC exec-dummy.stats | jq -c -r "$1"; }
load_sched () {
	flux module remove -f sched-dummy &&
	flux module load $SCHED "$@" &&
	wait_jm .alloc.ready true
}
load_exec () {
	flux module remove -f exec-dummy &&
	flux module load $EXEC &&
	wait_jm .exec.service exec-dummy
}
reload_jm () {
	flux module remove job-manager &&
	flux module load job-manager
}
jobspec () {
	_t=${1:-}; test -n "$_t" || _t="{}"
	jq -cn --argjson t "$_t" --arg s "${2:-}" \
		--argjson d "${3:-null}" '{version:1,
		resources:[{type:"slot",count:1,label:"task",
			with:[{type:"core",count:1}]}],
		tasks:[{command:["true"],slot:"task",count:{per_slot:1}}],
		attributes:{system:({duration:0, exec:{test:$t}}
			+ (if $s != "" then {test:{sched:$s}} else {} end)
			+ (if $d != null then {dependencies:$d} else {} end))}}'
}
# jm_start ARGS: an instance of the modules above only (start_instance
# of sharness.d, named jm1, jm2, ... one per restart); jm_stop ends it.
jm_n=0
jm_start () {
	jm_n=$((jm_n + 1)) &&
	start_instance jm$jm_n 1 -Slog-stderr-level=6 \
		-Sbroker.modules=$MODULES "$@" &&
	flux module list | grep job-manager
}
jm_stop () {
	stop_instance jm$jm_n
}

test_expect_success 'start an instance with a statedir' '
	# the "run" job below must survive the restart: no cancel at cleanup
	jm_start "-Sstatedir=$(pwd)/state" -Sbroker.cleanup-cancel=0
'
test_expect_success 'set up jobs in every state' '
	load_sched mode=unlimited && load_exec &&
	done=$($SUBMIT -f 4) && wait_event $done clean &&
	run=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $run start &&
	dep=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afterany\",\"value\":\"$run\"}]")") &&
	wait_event $dep dependency-add &&
	held=$($SUBMIT -u 0) && wait_event $held priority &&
	flux module remove sched-dummy &&
	pend=$($SUBMIT) && wait_event $pend priority &&
	echo "$done $run $dep $held $pend" >jobs &&
	test "$(jm .active_jobs)" = 4 && test "$(jm .inactive_jobs)" = 1
'
test_expect_success 'reload the job manager: the same jobs, the same states' '
	cp jobs jobs.1 && set -- $(cat jobs) &&
	for j in $2 $3 $4 $5; do names $j >$j.before; done &&
	reload_jm &&
	test "$(jm .active_jobs)" = 4 &&
	test "$(jm .inactive_jobs)" = 1 &&
	test "$(jm .states.run)" = 1 &&
	test "$(jm .states.depend)" = 1 &&
	wait_jm .states.sched 2 &&
	test "$($RPC job-manager.getinfo "{}" | jq .max_jobid)" = $5
'
test_expect_success 'pending jobs in SCHED got flux-restart, then a priority' '
	set -- $(cat jobs) &&
	wait_event $5 flux-restart &&
	test "$(names $5)" = \
		"submit validate depend priority flux-restart priority" &&
	test "$(names $4)" = \
		"submit validate depend priority flux-restart priority" &&
	evlog $4 | tail -n 1 | jq -e ".context.priority == 0"
'
test_expect_success 'running and dependent jobs got no new event' '
	set -- $(cat jobs) &&
	test "$(names $2)" = "$(cat $2.before)" &&
	test "$(names $3)" = "$(cat $3.before)"
'
test_expect_success 'the exec service reattaches to the running job' '
	set -- $(cat jobs) &&
	test "$(jm .exec.service)" = null &&
	load_exec &&
	wait_event $2 finish &&
	test "$(execstat .count.reattach)" = 1 &&
	test "$(jm .exec.count.reattach)" = 1
'
test_expect_success 'a new scheduler is told about it at hello, then frees it' '
	set -- $(cat jobs) &&
	load_sched mode=unlimited &&
	test "$(sched .hello)" = "[$2]" &&
	wait_event $2 clean &&
	wait_event $3 clean &&
	wait_event $5 clean &&
	test "$(names $3)" = \
		"submit validate dependency-add dependency-remove depend priority alloc start finish release free clean" &&
	$RPC job-manager.urgency "{\"id\":$4,\"urgency\":16}" &&
	wait_event $4 clean &&
	test "$(jm .active_jobs)" = 0
'
test_expect_success 'a waitable job finished before the reload can still be purged' '
	set -- $(cat jobs) &&
	$RPC job-manager.purge-id "{\"id\":$1}" | jq -e ".count == 1"
'
test_expect_success 'a job whose eventlog ends at submit is validated' '
	id=$((($($RPC job-manager.getinfo "{}" | jq .max_jobid) >> 24 << 24) + (1 << 24) + 7)) &&
	flux kvs put $(jkey $id).jobspec="$(jobspec)" &&
	flux kvs eventlog append $(jkey $id).eventlog submit \
		"{\"urgency\":16,\"userid\":$(id -u),\"flags\":0,\"version\":1}" &&
	reload_jm && load_sched mode=unlimited && load_exec &&
	wait_event $id clean &&
	test "$(names $id)" = \
		"submit validate depend priority alloc start finish release free clean" &&
	echo $id >new.id
'
test_expect_success 'an invalidated job found in the KVS is removed' '
	id=$(($(cat new.id) + 1)) &&
	flux kvs eventlog append $(jkey $id).eventlog submit \
		"{\"urgency\":16,\"userid\":$(id -u),\"flags\":0,\"version\":1}" &&
	flux kvs eventlog append $(jkey $id).eventlog invalidate &&
	n=$(jm .inactive_jobs) &&
	reload_jm &&
	test "$(jm .inactive_jobs)" = $n &&
	for i in $(seq 50); do
		flux kvs get $(jkey $id).eventlog >/dev/null 2>&1 || break
		sleep 0.1
	done &&
	test_must_fail flux kvs get $(jkey $id).eventlog
'
test_expect_success 'a job with an impossible eventlog is skipped, and logged' '
	id=$(($(cat new.id) + 2)) &&
	flux kvs eventlog append $(jkey $id).eventlog submit \
		"{\"urgency\":16,\"userid\":$(id -u),\"flags\":0,\"version\":1}" &&
	flux kvs eventlog append $(jkey $id).eventlog alloc &&
	flux kvs put job.zzzz=1 &&
	n=$(($(jm .inactive_jobs) + $(jm .active_jobs))) &&
	reload_jm &&
	test $(($(jm .inactive_jobs) + $(jm .active_jobs))) = $n &&
	flux dmesg | grep "job $id: event 2 (alloc): alloc is not allowed in state NEW" &&
	flux dmesg | grep "restart: ignoring job.zzzz" &&
	flux kvs unlink -R $(jkey $id) && flux kvs unlink job.zzzz
'
test_expect_success 'set up jobs again, then stop the whole instance' '
	load_sched mode=unlimited && load_exec &&
	run=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $run start &&
	held=$($SUBMIT -u 0) && wait_event $held priority &&
	w=$($SUBMIT -f 4) && wait_event $w clean &&
	flux module remove sched-dummy &&
	pend=$($SUBMIT -n 3 | tr "\n" " ") &&
	echo "$run $held $pend" >jobs2 &&
	echo "$(jm .active_jobs) $(jm .inactive_jobs)" >counts2 &&
	jm_stop
'
test_expect_success 'restart the instance: nothing lost, states right' '
	jm_start "-Sstatedir=$(pwd)/state" &&
	test "$(jm .active_jobs) $(jm .inactive_jobs)" = "$(cat counts2)" &&
	set -- $(cat jobs2) &&
	test "$(jm .states.run)" = 1 &&
	wait_jm .states.sched 4 &&
	for j in $3 $4 $5; do wait_event $j flux-restart || return 1; done &&
	test "$(names $1)" = "submit validate depend priority alloc start"
'
test_expect_success 'with a scheduler and an exec service all of them finish' '
	set -- $(cat jobs2) &&
	load_exec && load_sched mode=unlimited &&
	test "$(sched .hello)" = "[$1]" &&
	for j in $1 $3 $4 $5; do wait_event $j clean || return 1; done &&
	$RPC job-manager.urgency "{\"id\":$2,\"urgency\":16}" &&
	wait_event $2 clean &&
	test "$(jm .active_jobs)" = 0
'
test_expect_success 'a stopped, disabled queue stays so across a reload' '
	flux queue stop for the test &&
	flux queue disable "no submissions now" &&
	reload_jm &&
	$RPC job-manager.queue-status "{}" >qs.out &&
	test "$(jq -c "[.enable,.start,.disable_reason,.stop_reason]" qs.out)" \
		= "[false,false,\"no submissions now\",\"for the test\"]" &&
	flux dmesg | grep "queue restored: disabled, stopped"
'
test_expect_success 'and across a restart of the instance' '
	jm_stop &&
	jm_start "-Sstatedir=$(pwd)/state" &&
	$RPC job-manager.queue-status "{}" >qs2.out &&
	test_cmp qs.out qs2.out &&
	test_must_fail $SUBMIT 2>refused.err &&
	grep "no submissions now" refused.err
'
test_expect_success 'a stop with nocheckpoint is not remembered' '
	flux queue enable && flux queue start &&
	flux queue stop --nocheckpoint &&
	test "$($RPC job-manager.queue-status "{}" | jq .start)" = false &&
	reload_jm &&
	$RPC job-manager.queue-status "{}" >qs3.out &&
	test "$(jq -c "[.enable,.start]" qs3.out)" = "[true,true]"
'
test_expect_success 'a malformed saved state is ignored, and logged' '
	flux kvs put checkpoint.job-manager="[1,2]" &&
	reload_jm &&
	flux dmesg | grep "checkpoint.job-manager: malformed, ignored" &&
	test "$($RPC job-manager.queue-status "{}" | jq -c "[.enable,.start]")" \
		= "[true,true]"
'
test_expect_success 'the instance shuts down cleanly' '
	jm_stop
'

test_done

#!/bin/sh
test_description='flux cancel, flux queue, flux update, and flux job
urgency, raise, cancel, kill and wait against the job manager'

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
ctx () { evlog $1 | jq -c "select(.name==\"$2\") | .context$3" | head -n 1; }
wait_event () {
	flux kvs eventlog wait-event -q -t 20s $(jkey $1).eventlog $2
}
jm () { $RPC job-manager.stats-get | jq -r "$1"; }
drain () { timeout 30 $RPC job-manager.drain >/dev/null; }
hang () { $SUBMIT "$@" "{\"version\":1,\"attributes\":{\"system\":{\"exec\":{\"test\":{\"hang\":true}}}}}"; }
# f58 ID: the F58 form (ASCII f) of a decimal id
f58 () { FLUX_F58_FORCE_ASCII=1 flux job id --to=f58 $1; }

test_expect_success 'start an instance with a scheduler and an exec service' '
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux module load $SCHED mode=unlimited &&
	flux module load $EXEC
'

#
# flux cancel
#
test_expect_success 'flux cancel cancels several jobs at once, with a note' '
	a=$(hang) && b=$(hang) && wait_event $a start && wait_event $b start &&
	flux cancel -m "no longer needed" $a $(f58 $b) &&
	wait_event $a clean && wait_event $b clean &&
	test "$(ctx $a exception)" = \
		"{\"type\":\"cancel\",\"severity\":0,\"note\":\"no longer needed\"}" &&
	test "$(ctx $b exception .type)" = "\"cancel\""
'
test_expect_success 'flux cancel of an unknown or inactive job fails, naming it' '
	id=$($SUBMIT) && wait_event $id clean &&
	test_must_fail flux cancel $id 2>c.err &&
	grep "flux-cancel: $id: unknown or inactive job id" c.err &&
	test_must_fail flux cancel notanid 2>c2.err &&
	grep "invalid job id notanid" c2.err
'
test_expect_success 'flux cancel needs ids or --all, not both' '
	test_must_fail flux cancel 2>u1.err &&
	grep "specify job ids or --all" u1.err &&
	test_must_fail flux cancel --all 123 &&
	test_must_fail flux cancel --states=run 123
'
test_expect_success 'flux cancel --all --dry-run counts, --all cancels' '
	a=$(hang) && b=$($SUBMIT -u 0) && wait_event $a start &&
	wait_event $b priority &&
	flux cancel --all --dry-run >dry.out &&
	test "$(cat dry.out)" = "flux-cancel: Would cancel 2 jobs" &&
	flux cancel --all --states=pending >pend.out &&
	test "$(cat pend.out)" = "flux-cancel: Canceled 1 job (0 errors)" &&
	wait_event $b clean && test "$(names $a | wc -w)" = 6 &&
	flux cancel --all -q >q.out && test ! -s q.out &&
	wait_event $a clean
'
test_expect_success 'flux cancel --user=all is for the owner; bad states are refused' '
	flux cancel --all --user=all --dry-run &&
	test_must_fail flux cancel --all --states=bogus 2>bs.err &&
	grep "invalid state bogus" bs.err
'

#
# flux job urgency / raise / cancel / kill / wait
#
#
# flux update
#
test_expect_success 'flux update: duration and name of a pending job' '
	h=$($SUBMIT -u 0) && wait_event $h priority &&
	flux update $(f58 $h) duration=30m name=short attributes.user.n=3 &&
	wait_event $h jobspec-update &&
	ctx $h jobspec-update | jq -e ".[\"attributes.system.duration\"] == 1800
		and .[\"attributes.system.job.name\"] == \"short\"
		and .[\"attributes.user.n\"] == 3 and length == 3" &&
	flux update $h duration=unlimited &&
	for i in $(seq 100); do
		test $(evlog $h | grep -c jobspec-update) = 2 && break
		sleep 0.1
	done &&
	evlog $h | jq -c "select(.name==\"jobspec-update\") | .context" |
		tail -1 | jq -e ". == {\"attributes.system.duration\": 0}"
	rc=$? && flux cancel $h && wait_event $h clean && test $rc = 0
'
test_expect_success 'flux update -n prints the update; JSON or string values' '
	flux update -n 1 attributes.user.tag="[1,2]" attributes.user.s=word \
		duration=90s >u.out &&
	test "$(cat u.out)" = "{\"attributes.system.duration\":90.0,\"attributes.user.s\":\"word\",\"attributes.user.tag\":[1,2]}"
'
test_expect_success 'flux update: errors name the job or the argument' '
	test_must_fail flux update 2>u1.err &&
	grep "JOBID and at least one KEY=VALUE" u1.err &&
	test_must_fail flux update notanid duration=1m 2>u2.err &&
	grep "error parsing jobid: notanid" u2.err &&
	test_must_fail flux update 1 duration=soon 2>u3.err &&
	grep "invalid duration .soon." u3.err &&
	test_must_fail flux update 1 =x 2>u4.err &&
	grep "expected KEY=VALUE" u4.err &&
	id=$($SUBMIT) && wait_event $id clean &&
	test_must_fail flux update $id version=2 2>u5.err &&
	grep "flux-update: $id: updating version is not supported" u5.err
'
test_expect_success 'flux job urgency: hold, then default, verbose' '
	id=$($SUBMIT) && wait_event $id clean &&
	h=$($SUBMIT -u 0) && wait_event $h priority &&
	flux job urgency -v $h default >urg.out &&
	test "$(cat urg.out)" = "$h: urgency changed from 0 to 16" &&
	wait_event $h clean
'
test_expect_success 'flux job urgency: expedite and numbers; errors' '
	h=$($SUBMIT -u 0) && wait_event $h priority &&
	flux job urgency $h expedite &&
	wait_event $h clean &&
	test "$(evlog $h | jq -c "select(.name==\"priority\") | .context.priority" | tail -n 1)" = 4294967295 &&
	test_must_fail flux job urgency $h 5 2>ue.err &&
	grep inactive ue.err &&
	test_must_fail flux job urgency $h 32 &&
	test_must_fail flux job urgency $h
'
test_expect_success 'flux job raise: type, severity, note' '
	a=$(hang) && wait_event $a start &&
	flux job raise -t oops -s 2 $a something odd &&
	wait_event $a exception &&
	test "$(ctx $a exception)" = \
		"{\"type\":\"oops\",\"severity\":2,\"note\":\"something odd\"}" &&
	flux job raise $a &&
	wait_event $a clean &&
	evlog $a | jq -c "select(.name==\"exception\") | .context" | tail -n 1 >r.out &&
	test "$(cat r.out)" = "{\"type\":\"cancel\",\"severity\":0}" ||
	test "$(cat r.out)" = "{\"type\":\"cancel\",\"severity\":0,\"note\":\"\"}"
'
test_expect_success 'flux job raise: bad type or severity' '
	a=$(hang) && wait_event $a start &&
	test_must_fail flux job raise -s 9 $a &&
	test_must_fail flux job raise -t "a=b" $a 2>rt.err &&
	grep "invalid exception type" rt.err &&
	flux job cancel $a bye && wait_event $a clean &&
	test "$(ctx $a exception .note)" = "\"bye\""
'
test_expect_success 'flux job kill publishes the signal, by name or number' '
	a=$(hang) && wait_event $a start &&
	{ flux event sub -c 2 shell-$a. >k.out & } && pid=$! && sleep 0.3 &&
	flux job kill $a &&
	flux job kill -s SIGUSR1 $a &&
	wait $pid &&
	cut -f2 k.out | jq -c .signum | tr "\n" " " >k.sigs &&
	test "$(cat k.sigs)" = "15 10 " &&
	test_must_fail flux job kill -s NOSUCH $a &&
	flux job cancel $a && wait_event $a clean &&
	test_must_fail flux job kill $a 2>k.err &&
	grep "unknown or inactive" k.err
'
test_expect_success 'flux job wait: success, failure, and --all' '
	ok=$($SUBMIT -f 4) &&
	flux job wait $ok &&
	bad=$($SUBMIT -f 4 "{\"version\":1,\"attributes\":{\"system\":{\"exec\":{\"test\":{\"status\":256}}}}}") &&
	test_must_fail flux job wait $bad 2>w.err &&
	echo "flux-job: task(s) exited with exit code 1" >w.exp &&
	test_cmp w.exp w.err &&
	$SUBMIT -f 4 -n 3 >three &&
	flux job wait --all -v 2>all.err &&
	test $(grep -c "job completed successfully" all.err) = 3 &&
	test_must_fail flux job wait 2>none.err &&
	grep "no waitable jobs" none.err
'
# as flux-core: the id of the job waited for on stdout, failed or not;
# -v says nothing more without --all; F58 ids with their U+0192 prefix
# under a UTF-8 locale, in plain ASCII else
test_expect_success 'flux job wait: the id it waited for, the forms of --all' '
	ok=$($SUBMIT -f 4) &&
	LC_ALL=C.UTF-8 flux job wait -v >any.out 2>any.err &&
	LC_ALL=C.UTF-8 flux job id -t f58 $ok >any.exp &&
	grep "^ƒ" any.exp &&
	test_cmp any.exp any.out &&
	test_must_be_empty any.err &&
	bad=$($SUBMIT -f 4 "{\"version\":1,\"attributes\":{\"system\":{\"exec\":{\"test\":{\"status\":256}}}}}") &&
	test_expect_code 1 env LC_ALL=C flux job wait >bad.out 2>bad.err &&
	LC_ALL=C flux job id -t f58 $bad >bad.exp &&
	test_cmp bad.exp bad.out &&
	grep "^f" bad.out &&
	echo "flux-job: task(s) exited with exit code 1" | test_cmp - bad.err &&
	ok=$($SUBMIT -f 4) &&
	bad=$($SUBMIT -f 4 "{\"version\":1,\"attributes\":{\"system\":{\"exec\":{\"test\":{\"status\":256}}}}}") &&
	test_expect_code 1 env LC_ALL=C.UTF-8 flux job wait --all 2>all1.err &&
	echo "$(LC_ALL=C.UTF-8 flux job id -t f58 $bad): task(s) exited with exit code 1" \
		| test_cmp - all1.err
'

#
# flux queue
#
test_expect_success 'flux queue status, disable and enable' '
	flux queue status >s1.out &&
	printf "Job submission is enabled\nScheduling is started\n" >s1.exp &&
	test_cmp s1.exp s1.out &&
	flux queue disable system upgrade &&
	flux queue status | grep -x "Job submission is disabled: system upgrade" &&
	test_must_fail $SUBMIT 2>sub.err &&
	grep "job submission is disabled: system upgrade" sub.err &&
	flux queue enable &&
	$SUBMIT >/dev/null && drain
'
test_expect_success 'flux queue disable needs a reason' '
	test_must_fail flux queue disable 2>d.err &&
	grep "a REASON is required" d.err
'
test_expect_success 'flux queue stop and start' '
	flux queue stop &&
	flux queue status | grep -x "Scheduling is stopped" &&
	id=$($SUBMIT) && wait_event $id priority && sleep 0.2 &&
	test "$(names $id)" = "submit validate depend priority" &&
	flux queue stop busy now &&
	flux queue status | grep -x "Scheduling is stopped: busy now" &&
	flux queue start && wait_event $id clean
'
test_expect_success 'flux queue idle and drain, with timeouts' '
	a=$(hang) && wait_event $a start &&
	test_must_fail flux queue idle --timeout=0.2s 2>i.err &&
	grep "timeout" i.err &&
	test_must_fail flux queue drain -t 0.2s &&
	flux cancel $a &&
	flux queue idle >idle.out && test "$(cat idle.out)" = "0 pending jobs" &&
	flux queue drain && flux queue idle -q >q.out && test ! -s q.out
'
test_expect_success 'flux queue: usage errors' '
	test_must_fail flux queue &&
	test_must_fail flux queue bogus &&
	test_must_fail flux queue enable extra &&
	flux queue --help | grep "Usage: flux queue" &&
	flux queue drain --help | grep timeout
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'

test_done

#!/bin/sh
test_description='every request topic of the broker and the default
modules, sent bad payloads (not JSON, truncated, wrong types, absurd
values, deep nesting, a large string, the id of a real job or real keys
with nonsense around them) as the owner and as a guest, on
both ranks of a 2-broker instance: nothing dies, every request is
answered but those that have no answer by protocol (disconnect and
cancel), and the instance still runs jobs afterwards'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

SWEEP="$FLUX_BUILD_DIR/t/sweep"
SIM="--setattr=system.exec.test.run_duration=0.01s"
# requests that are never answered, by protocol: sent too (nothing may
# crash), but not waited for
SILENT='\.disconnect$|cancel$'
sweep () { # ARGS...: both lists; the answerable ones must all be answered
	$SWEEP -t 0.1 -i $(cat jobid) "$@" <silent >silent.out &&
	$SWEEP -t 10 -i $(cat jobid) "$@" <answerable >answerable.out &&
	tail -n 1 answerable.out &&
	! grep "^unanswered" answerable.out
}

test_expect_success 'collect the request topics from the sources' '
	grep -rhoE "\{ ?(FLUX_MSGTYPE_REQUEST|REQ), *\"[^\"]+\"" \
		--include=*.c "$FLUX_SOURCE_DIR/src/broker" \
		"$FLUX_SOURCE_DIR/src/modules" |
		sed -E "s/.*\"([^\"]+)\"/\1/" | grep -v "\*" | sort -u |
		grep -vE "^(shutdown\.start|kvs\.setroot-pause)$" >topics &&
	test $(wc -l <topics) -gt 100 &&
	grep -q "^kvs.commit$" topics && grep -q "^job-manager.submit$" topics &&
	grep -E "$SILENT" topics >silent &&
	grep -vE "$SILENT" topics >answerable
'
test_expect_success 'start a 2-broker instance' '
	start_instance broker 2 &&
	flux module list | awk "{print \$1}" >mods0.before &&
	test $(wc -l <mods0.before) -gt 10 &&
	flux submit $SIM true | flux job id >jobid &&
	flux job wait-event -t 30 $(cat jobid) clean
'
test_expect_success 'as the owner, on rank 0' '
	sweep
'
test_expect_success 'as a guest, on rank 0' '
	sweep -u 4242 -R 2
'
test_expect_success 'as the owner, on rank 1' '
	sweep -r 1
'
test_expect_success '<module>.shutdown from a client is refused' '
	test_must_fail $FLUX_BUILD_DIR/t/rpc kvs.shutdown 2>kvsshut.err &&
	grep "only the broker stops a module" kvsshut.err &&
	test_must_fail $FLUX_BUILD_DIR/t/rpc job-manager.shutdown 2>jmshut.err &&
	grep "only the broker stops a module" jmshut.err
'
test_expect_success 'the modules are all still there, and the instance works' '
	flux module list | awk "{print \$1}" >mods0.after &&
	test_cmp mods0.before mods0.after &&
	flux ping -c 1 1 &&
	flux kvs put sweep.x=1 && test "$(flux kvs get sweep.x)" = 1 &&
	id=$(flux submit $SIM true) &&
	flux job wait-event -t 30 $id clean &&
	flux jobs -a -n -o "{result}" $id | grep COMPLETED
'
test_expect_success 'stop the instance' '
	stop_instance broker
'
test_done

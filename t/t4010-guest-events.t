#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='a guest may publish event topics of its own (as in
flux-core); the topics of the instance services are refused to guests
by the broker, and every event our broker and modules subscribe to is
ignored unless its sender has the owner role: each topic, published as a
guest, is refused or has no effect (doc/guide/guest-events.md); the same
event from the owner does, where that can be shown without harm'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

CRED="$FLUX_BUILD_DIR/t/rpc-cred"
SIM=--setattr=system.exec.test.run_duration

# guest_pub TOPIC [JSON]: publish as a guest (userid 4242, role user),
# through event.publish with the credentials the owner may preset, as
# the broker stamps a guest connection's requests.  The broker refuses
# guests the topics of the instance's services (doc/guide/access.md):
# that refusal, with its message, is as good as an event with no effect,
# which the subscribers' owner-only handlers ensure for the rest.
guest_pub () {
	if test $# -gt 1; then
		p=$(printf "%s\0" "$2" | base64 -w0)
		set -- "$1" "{\"topic\":\"$1\",\"flags\":0,\"payload\":\"$p\"}"
	else
		set -- "$1" "{\"topic\":\"$1\",\"flags\":0}"
	fi
	if ! $CRED -u 4242 -R 2 event.publish "$2" 2>pub.err; then
		grep "guests may not publish events of the instance" pub.err ||
			{ cat pub.err; return 1; }
		echo "$1: refused to a guest" >>refused.list
	fi
}

test_expect_success 'start an instance of 2 brokers' '
	start_instance guest 2 --test-exit-mode=leader &&
	done_id=$(flux submit -N1 $SIM=0 true) &&
	flux job wait-event -t 60 $done_id clean &&
	flux job id --to=dec $done_id >done.id &&
	eventually "flux jobs -a -n -o {id.dec} | grep -c ^$(cat done.id)\$" 1
'
test_expect_success 'a guest may publish (flux-core allows it too)' '
	guest_pub guestev.hello >pub.out &&
	grep seq pub.out
'
test_expect_success 'job-exception and shell-ID.kill from a guest: the job runs on' '
	id=$(flux submit -N2 -n2 $SIM=1000s true) &&
	echo $id >run.id &&
	flux job wait-event -t 60 $id start &&
	dec=$(flux job id --to=dec $id) &&
	guest_pub job-exception \
		"{\"id\":$dec,\"type\":\"cancel\",\"severity\":0,\"userid\":4242,\"note\":\"x\"}" &&
	guest_pub shell-$dec.kill "{\"signum\":9}" &&
	sleep 1 &&
	test_must_fail flux job wait-event -t 2 $id finish &&
	test "$(flux jobs -n -o {state} $id)" = RUN
'
test_expect_success 'shell-ID.kill from a guest: a real job shell ignores it' '
	id=$(flux submit sleep 300) &&
	echo $id >real.id &&
	flux job wait-event -t 60 $id start &&
	dec=$(flux job id --to=dec $id) &&
	guest_pub shell-$dec.kill "{\"signum\":9}" &&
	sleep 1 &&
	test_must_fail flux job wait-event -t 2 $id finish &&
	flux event pub shell-$dec.kill "{\"signum\":9}" &&
	flux job wait-event -t 60 $id finish >realfin.out &&
	grep "status=35072" realfin.out
'
test_expect_success 'kvs.namespace-primary-setroot/-removed from a guest: rank 1 keeps the real root' '
	flux kvs put guestev.key=old &&
	old=$(flux kvs getroot -b) &&
	flux kvs put guestev.key=new &&
	seq=$(flux kvs getroot -s) &&
	eventually "flux exec -r 1 flux kvs get guestev.key" new &&
	guest_pub kvs.namespace-primary-setroot \
		"{\"namespace\":\"primary\",\"rootseq\":$((seq+1)),\"rootref\":\"$old\"}" &&
	sleep 1 &&
	flux exec -r 1 flux kvs get guestev.key >rank1.out &&
	echo new >rank1.exp &&
	test_cmp rank1.exp rank1.out &&
	guest_pub kvs.namespace-primary-removed "{\"namespace\":\"primary\"}" &&
	sleep 1 &&
	flux exec -r 1 flux kvs get guestev.key >rank1b.out &&
	test_cmp rank1.exp rank1b.out
'
test_expect_success 'job-purge-inactive from a guest: job-list keeps the job' '
	dec=$(cat done.id) &&
	guest_pub job-purge-inactive "{\"jobs\":[$dec]}" &&
	sleep 1 &&
	flux jobs -a -n -o {id.dec} | grep "^$dec\$"
'
test_expect_success 'content.online, kvs.online, job-manager.online, heartbeat.pulse from a guest: nothing reloads' '
	flux dmesg >dmesg.before &&
	guest_pub content.online &&
	guest_pub kvs.online &&
	guest_pub job-manager.online &&
	guest_pub heartbeat.pulse &&
	sleep 1 &&
	flux dmesg >dmesg.after &&
	! grep -i "registered again\|hello again\|reloaded" dmesg.after &&
	id=$(flux submit -N1 $SIM=0 true) &&
	flux job wait-event -t 60 $id clean
'
test_expect_success 'broker.shutdown from a guest: both brokers run on' '
	guest_pub broker.shutdown &&
	sleep 1 &&
	flux exec -r 0-1 flux getattr rank | sort >ranks.out &&
	printf "0\n1\n" >ranks.exp &&
	test_cmp ranks.exp ranks.out &&
	flux overlay status >ov.out &&
	! grep -i "shutdown\|lost\|offline" ov.out
'
test_expect_success 'the running job is still running, and the owner can end it so' '
	id=$(cat run.id) &&
	test "$(flux jobs -n -o {state} $id)" = RUN &&
	dec=$(flux job id --to=dec $id) &&
	flux event pub shell-$dec.kill "{\"signum\":15}" &&
	flux job wait-event -t 60 $id finish >fin.out &&
	grep "status=15" fin.out
'
test_expect_success 'job-exception from the owner: job-exec ends the job' '
	id=$(flux submit -N1 $SIM=1000s true) &&
	flux job wait-event -t 60 $id start &&
	dec=$(flux job id --to=dec $id) &&
	flux event pub job-exception \
		"{\"id\":$dec,\"type\":\"cancel\",\"severity\":0,\"userid\":0,\"note\":\"x\"}" &&
	flux job wait-event -t 60 $id finish >exfin.out &&
	grep "status=9" exfin.out
'
test_expect_success 'the broker refused the service topics to the guest' '
	cat refused.list &&
	grep "^job-exception: refused" refused.list &&
	grep "^kvs.namespace-primary-setroot: refused" refused.list
'
test_expect_success 'job-purge-inactive from the owner: job-list drops the job' '
	dec=$(cat done.id) &&
	flux event pub job-purge-inactive "{\"jobs\":[$dec]}" &&
	eventually "flux jobs -a -n -o {id.dec} | grep -c ^$dec\$" 0
'
test_expect_success 'stop the instance' '
	stop_instance guest
'
test_done

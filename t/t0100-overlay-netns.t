#!/bin/sh
test_description='brokers on separate nodes (network namespaces) over tcp:
bootstrap through PMI, routing to every rank, events, overlay status, cut
links (peers lost within tbon.lost_max, requests fail instead of hanging),
orderly shutdown with no process left'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# Every namespace of this run is named $STEM-$$-* (netns-test.sh: the
# skip check, PREFIX, the clean-up, no_process_left).
STEM=flux-t0100
. "$SHARNESS_TEST_SRCDIR/netns-test.sh"
NODES=8

# Each rank's broker runs on node $PREFIX-n<rank> (netns-broker.sh).
FLUX_BROKER_PATH="$SHARNESS_TEST_SRCDIR/netns-broker.sh"
NETNS_PREFIX=$PREFIX
NETNS_PORT=8050
NETNS_SUBNET=10.251.0
export FLUX_BROKER_PATH NETNS_PREFIX NETNS_PORT NETNS_SUBNET

# A hung instance must fail the test, not the CI job.  Brokers lost on
# purpose must not bring the instance down: --test-exit-mode=leader.
# The tests below were written for a binary tree (interior brokers).
run_instance () {
	timeout -k 5 90 flux start --test-exit-mode=leader -Stbon.topo=kary:2 "$@"
}

# Helpers for the initial programs (which run on node 0).
cat >lib.sh <<EOF
RPC="$RPC"
NET="$NET"
PREFIX="$PREFIX"
EOF
cat >>lib.sh <<'EOF'
# attr RANK NAME: the value of broker attribute NAME on RANK
attr () {
	$RPC -r $1 attr.get "{\"name\":\"$2\"}" \
	    | sed -n -e 's/.*"value":"\([^"]*\)".*/\1/p'
}
now () {
	date +%s.%N
}
# elapsed_below T0 SECONDS: less than SECONDS passed since T0
elapsed_below () {
	awk -v t0="$1" -v max="$2" -v t="$(now)" \
	    'BEGIN { d = t - t0; print "elapsed " d "s"; exit !(d < max) }'
}
# wait_until SECONDS CMD...: run CMD every 0.1s until it succeeds
wait_until () {
	deadline=$(awk -v t="$(now)" -v s="$1" 'BEGIN { printf "%f", t + s }')
	shift
	until "$@"; do
		awk -v t="$(now)" -v d="$deadline" 'BEGIN { exit !(t > d) }' \
		    && { echo "timed out: $*"; return 1; }
		sleep 0.1
	done
}
# node_empty I: no process on node I
node_empty () {
	test -z "$(ip netns pids $PREFIX-n$1)"
}
# established I PEER: node I has one established connection to PEER
established () {
	test "$(ip netns exec $PREFIX-n$1 ss -tnH state established \
	    dst $2 | wc -l)" -eq 1
}
EOF

test_expect_success "set up $NODES nodes on one bridge" '
	"$NET" up "$PREFIX" $NODES &&
	ip -n $PREFIX-n7 -br addr show dev eth0 >addr.out &&
	grep "UP.*10.251.0.8/24" addr.out
'
test_expect_success 'size 4: brokers on 4 nodes come up over tcp' '
	cat >up4.sh <<-EOT &&
	. ./lib.sh
	flux getattr hostlist >hostlist.out
	flux getattr tbon.endpoint >endpoint.out
	attr 1 tbon.endpoint >>endpoint.out
	attr 3 tbon.endpoint >>endpoint.out
	for r in 0 1 2 3; do flux ping -c 1 \$r || exit 1; done >ping.out
	flux ping -c 1 node3 >ping-host.out || exit 1
	flux overlay status --timeout=30 >status4.out
	# the links are tcp between the nodes (children connect to the parent)
	established 1 10.251.0.1:8050 &&
	established 2 10.251.0.1:8050 &&
	established 3 10.251.0.2:8050
	EOT
	run_instance -s 4 sh up4.sh &&
	echo "node[0-3]" >hostlist.exp &&
	test_cmp hostlist.exp hostlist.out &&
	printf "%s\n" tcp://10.251.0.1:8050 tcp://10.251.0.2:8050 \
		tcp://10.251.0.4:8050 >endpoint.exp &&
	test_cmp endpoint.exp endpoint.out &&
	test $(grep -c "broker.ping.*time=" ping.out) -eq 4 &&
	# node3 is rank 3: the same broker (the last hop of the route) answers
	sed -n -e "s/^3!.*!\(.*\))$/\1/p" ping.out >uuid3.exp &&
	sed -n -e "s/^node3!.*!\(.*\))$/\1/p" ping-host.out >uuid3.out &&
	test -s uuid3.exp && test_cmp uuid3.exp uuid3.out &&
	test $(grep -c ": full" status4.out) -eq 4 &&
	grep "3 node3: full" status4.out &&
	no_process_left
'
test_expect_success 'size 4: events published on rank 0 and 3 reach every rank' '
	cat >events.sh <<-EOT &&
	. ./lib.sh
	pids=
	for r in 0 1 2 3; do
		FLUX_URI=\$(attr \$r local-uri) flux event sub netns. >ev.\$r.out &
		pids="\$pids \$!"
	done
	# subscribed once each has seen a sync event
	synced () {
		flux event pub netns.sync &&
		for r in 0 1 2 3; do grep -q netns.sync ev.\$r.out || return 1; done
	}
	wait_until 20 synced || exit 1
	for i in 1 2 3; do flux event pub netns.e\$i || exit 1; done
	FLUX_URI=\$(attr 3 local-uri) flux event pub netns.e4 || exit 1
	seen () {
		for r in 0 1 2 3; do grep -q netns.e4 ev.\$r.out || return 1; done
	}
	wait_until 20 seen
	rc=\$?
	kill \$pids
	wait
	exit \$rc
	EOT
	run_instance -s 4 sh events.sh &&
	printf "netns.e%s\n" 1 2 3 4 >ev.exp &&
	for r in 0 1 2 3; do
		grep -v netns.sync ev.$r.out | cut -f1 >ev.$r.topics &&
		test_cmp ev.exp ev.$r.topics || return 1
	done &&
	no_process_left
'
test_expect_success 'size 4: flux shutdown stops every node with no process left' '
	run_instance -s 4 sh -c "flux shutdown; sleep 60" &&
	no_process_left
'
test_expect_success 'size 8, any port: every rank answers, the tree is full' '
	cat >up8.sh <<-EOT &&
	. ./lib.sh
	for r in \$(seq 0 7); do flux ping -c 1 \$r || exit 1; done >ping8.out
	flux overlay status --timeout=30 >status8.out
	flux getattr hostlist >hostlist8.out
	# rank r (node r) is linked to its parent (r-1)/2, on another port
	for r in \$(seq 1 7); do
		established \$r 10.251.0.\$(( (r - 1) / 2 + 1 )) || exit 1
		established \$r 10.251.0.\$(( (r - 1) / 2 + 1 )):8050 && exit 1
	done
	exit 0
	EOT
	(NETNS_PORT="*" && export NETNS_PORT && run_instance -s 8 sh up8.sh) &&
	test $(grep -c "broker.ping.*time=" ping8.out) -eq 8 &&
	test $(grep -c ": full" status8.out) -eq 8 &&
	echo "node[0-7]" >hostlist8.exp &&
	test_cmp hostlist8.exp hostlist8.out &&
	no_process_left
'
# lost_max 3s, heartbeat 0.5s: a silent peer is lost after 3 to 3.5s.
LOST="-Stbon.lost_max=3 -Stbon.heartbeat=0.5"
test_expect_success 'cut a leaf: rank 0 loses it within lost_max, pings fail' '
	test_when_finished "\"$NET\" mend $PREFIX 2" &&
	cat >cutleaf.sh <<-EOT &&
	. ./lib.sh
	flux ping -c 1 2 >/dev/null || exit 1
	t0=\$(now)
	"\$NET" cut \$PREFIX 2 || exit 1
	# in flight when the link goes: answered when the loss is noticed
	\$RPC -r 2 broker.ping {} 2>inflight.err
	echo \$? >inflight.rc
	elapsed_below \$t0 6 >inflight.time || exit 1
	flux overlay status >cutleaf-status.out
	# after: refused at once
	t1=\$(now)
	\$RPC -r 2 broker.ping {} 2>after.err
	echo \$? >after.rc
	elapsed_below \$t1 1 >after.time || exit 1
	flux ping -c 1 2 2>flux-ping.err && exit 1
	# the rest of the tree still answers
	flux ping -c 1 1 >/dev/null && flux ping -c 1 3 >/dev/null || exit 1
	flux dmesg >cutleaf-dmesg.out
	# rank 2 lost its parent too and left on its own
	wait_until 10 node_empty 2
	EOT
	run_instance -s 4 $LOST sh cutleaf.sh 2>cutleaf.err &&
	echo 113 >ehostunreach.exp &&
	test_cmp ehostunreach.exp inflight.rc &&
	test_cmp ehostunreach.exp after.rc &&
	grep "No route to host: broker on the route was lost (rank 2)" inflight.err &&
	grep "No route to host: rank 2 is lost" after.err &&
	grep "No route to host: rank 2 is lost" flux-ping.err &&
	grep "2 node2: lost" cutleaf-status.out &&
	grep "0 node0: degraded" cutleaf-status.out &&
	grep "1 node1: full" cutleaf-status.out &&
	grep "broker on rank 2 lost" cutleaf-dmesg.out &&
	grep "rank 2: exited with status 1" cutleaf.err &&
	no_process_left
'
test_expect_success 'cut an interior broker: its subtree is lost, the rest works' '
	test_when_finished "\"$NET\" mend $PREFIX 1" &&
	cat >cutmid.sh <<-EOT &&
	. ./lib.sh
	flux ping -c 1 3 >/dev/null || exit 1
	t0=\$(now)
	"\$NET" cut \$PREFIX 1 || exit 1
	\$RPC -r 3 broker.ping {} 2>mid-inflight.err
	echo \$? >mid-inflight.rc
	elapsed_below \$t0 6 >mid-inflight.time || exit 1
	\$RPC -r 1 broker.ping {} 2>mid-after1.err
	echo \$? >mid-after1.rc
	\$RPC -r 3 broker.ping {} 2>mid-after3.err
	echo \$? >mid-after3.rc
	flux ping -c 1 2 >/dev/null || exit 1
	flux overlay status >cutmid-status.out
	# ranks 1 and 3 both lost their parent and left
	wait_until 10 node_empty 1 && wait_until 10 node_empty 3
	EOT
	run_instance -s 4 $LOST sh cutmid.sh 2>cutmid.err &&
	echo 113 >ehostunreach.exp &&
	test_cmp ehostunreach.exp mid-inflight.rc &&
	test_cmp ehostunreach.exp mid-after1.rc &&
	test_cmp ehostunreach.exp mid-after3.rc &&
	grep "No route to host: broker on the route was lost (rank 1, on the way to rank 3)" mid-inflight.err &&
	grep "No route to host: rank 1 is lost" mid-after1.err &&
	grep "No route to host: rank 3 is unreachable: rank 1 on the route is lost" mid-after3.err &&
	grep "1 node1: lost" cutmid-status.out &&
	grep "2 node2: full" cutmid-status.out &&
	no_process_left
'
test_expect_success 'an outage shorter than lost_max loses nothing' '
	test_when_finished "\"$NET\" mend $PREFIX 3" &&
	cat >blip.sh <<-EOT &&
	. ./lib.sh
	flux ping -c 1 3 >/dev/null || exit 1
	"\$NET" cut \$PREFIX 3 || exit 1
	\$RPC -r 3 broker.ping {} >blip-ping.out &
	pid=\$!
	sleep 1
	"\$NET" mend \$PREFIX 3 || exit 1
	wait \$pid || exit 1
	flux ping -c 1 3 >/dev/null || exit 1
	flux overlay status >blip-status.out
	flux dmesg >blip-dmesg.out
	EOT
	run_instance -s 4 -Stbon.lost_max=6 -Stbon.heartbeat=0.5 sh blip.sh &&
	grep "\"rank\":3" blip-ping.out &&
	test $(grep -c ": full" blip-status.out) -eq 4 &&
	! grep "lost" blip-dmesg.out &&
	no_process_left
'
test_expect_success 'tear down: no namespace of this run is left' '
	"$NET" down "$PREFIX" &&
	! ip netns list | grep "^$PREFIX-"
'
test_done

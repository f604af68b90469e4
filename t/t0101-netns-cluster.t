#!/bin/sh
test_description='a virtual cluster (netns-cluster.sh): 4 hosts in network
namespaces, each with its own address and host name, one broker per host
started from one config file; a job across the hosts; a leaf broker killed
during a 4-node job (node-failure, the rest released, the host shown lost,
scheduling goes on)'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# Namespaces $STEM-<pid>-* (netns-test.sh: the skip check, PREFIX, the
# clean-up, no_process_left, wait_gone).
STEM=flux-t0101
. "$SHARNESS_TEST_SRCDIR/netns-test.sh"
NODES=4
DIR=$TMPDIR/c

NETNS_SUBNET=10.252.0
NETNS_PORT=8060
NETNS_TOPO=kary:2
# a lost leaf is noticed in seconds, not the default tens
NETNS_BROKER_OPTS="-Stbon.heartbeat=0.5 -Stbon.lost_max=3"
export NETNS_SUBNET NETNS_PORT NETNS_TOPO NETNS_BROKER_OPTS

test_expect_success "set up $NODES hosts and their config" '
	"$CLUSTER" up "$PREFIX" $NODES "$DIR" &&
	grep -c "\"host\": \"node" "$DIR/boot.json" >nhosts &&
	echo $NODES >nhosts.exp &&
	test_cmp nhosts.exp nhosts
'
test_expect_success 'the brokers form one instance over tcp; a job runs on every host' '
	cat >up.sh <<-EOT &&
	flux getattr size &&
	flux overlay status &&
	flux resource list -n -s free -o "{nnodes} {nodelist}" &&
	flux run -N4 hostname | sort
	EOT
	timeout -k 5 120 "$CLUSTER" start "$PREFIX" $NODES "$DIR" sh "$(pwd)/up.sh" \
		>up.out 2>up.err &&
	cat up.out &&
	cat >up.exp <<-EOF &&
	4
	0 node0: full
	├─ 1 node1: full
	│  └─ 3 node3: full
	└─ 2 node2: full
	4 node[0-3]
	node0
	node1
	node2
	node3
	EOF
	test_cmp up.exp up.out &&
	wait_gone
'
test_expect_success 'a leaf broker killed during a 4-node job' '
	cat >kill.sh <<-EOT &&
	id=\$(flux submit -N4 -n4 sleep 300) || exit 1
	# past the start barrier of the shells: a loss during it fails the
	# job by the barrier, not by node-failure
	flux job wait-event -t 60 -p guest.exec.eventlog \$id shell.start || exit 1
	pid3=\$($RPC -r 3 attr.get "{\"name\":\"broker.pid\"}" |
		sed -e "s/.*\"value\":\"\([0-9]*\)\".*/\1/")
	test -n "\$pid3" || exit 1
	kill -9 \$pid3
	flux job wait-event -t 60 \$id exception >exc.out || exit 1
	flux job wait-event -t 60 \$id clean || exit 1
	flux job eventlog \$id >eventlog.out
	n=0
	while ! flux overlay status | grep -q "3 node3: lost"; do
		n=\$((n+1)); test \$n -lt 300 || exit 1; sleep 0.1
	done
	flux overlay status >status.out
	# scheduling goes on with the live hosts
	timeout -k 10 60 flux run -N3 hostname | sort >run3.out
	flux resource list -n -s down -o "{nodelist}" >down.out
	EOT
	timeout -k 5 150 "$CLUSTER" start "$PREFIX" $NODES "$DIR" \
		sh "$(pwd)/kill.sh" >kill.out 2>kill.err &&
	grep "node-failure" exc.out &&
	grep " release .*final=true" eventlog.out &&
	grep "3 node3: lost" status.out &&
	grep "1 node1: degraded\|1 node1: partial" status.out &&
	printf "node0\nnode1\nnode2\n" >run3.exp &&
	test_cmp run3.exp run3.out &&
	grep -x "node3" down.out
'
test_expect_success 'tear down: nothing of this run is left' '
	"$CLUSTER" down "$PREFIX" &&
	test -z "$(ip netns list | grep "^$PREFIX-")"
'
test_done

#!/bin/sh
test_description='flux start and the broker: instances of 1..64 brokers,
routing to every rank, events, attributes, orderly shutdown, lost brokers'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"

no_brokers_left () {
	! pgrep -x flux-broker >/dev/null
}

test_expect_success 'flux start runs the initial program and exits with its status' '
	flux start true &&
	test_expect_code 1 flux start false &&
	test_expect_code 3 flux start sh -c "exit 3"
'
test_expect_success 'the initial program gets FLUX_URI of rank 0' '
	flux start sh -c "echo \$FLUX_URI" >uri.out &&
	grep "^local://.*/local-0$" uri.out
'
test_expect_success 'a singleton broker answers attributes' '
	flux start flux getattr size >size.out &&
	echo 1 >size.exp &&
	test_cmp size.exp size.out
'
for n in 1 2 4 16 64; do
	test_expect_success "size $n: every rank answers broker.ping" "
		flux start -s $n sh -c '
			for r in \$(seq 0 $(($n - 1))); do
				$RPC -r \$r broker.ping {} || exit 1
			done' >ping.$n.out &&
		test \$(grep -c '\"rank\"' ping.$n.out) -eq $n &&
		no_brokers_left
	"
done
test_expect_success 'size 16: attributes describe the tree' '
	cat >tree.sh <<-EOT &&
	flux getattr size
	flux getattr tbon.maxlevel
	flux getattr tbon.descendants
	$RPC -r 15 attr.get "{\"name\":\"tbon.level\"}"
	EOT
	flux start -s 16 sh tree.sh >tree.out &&
	cat >tree.exp <<-EOT &&
	16
	4
	15
	{"value":"4","flags":1}
	EOT
	test_cmp tree.exp tree.out
'
test_expect_success 'an unknown rank gets EHOSTUNREACH, an unknown service ENOSYS' '
	flux start -s 4 sh -c "
		! $RPC -r 99 broker.ping {} 2>err1 &&
		! $RPC nosuch.method 2>err2 &&
		! $RPC -r 3 nosuch.method 2>err3" &&
	grep "No route to host" err1 &&
	grep "Function not implemented" err2 &&
	grep "Function not implemented" err3
'
test_expect_success 'events published on rank 0 arrive in order' '
	flux start -s 4 sh -c "
		flux event sub -c 3 test. >events.out &
		sleep 0.3 &&
		for i in 1 2 3; do flux event pub test.e\$i; done &&
		wait" &&
	cut -f1 events.out >topics.out &&
	printf "test.e1\ntest.e2\ntest.e3\n" >topics.exp &&
	test_cmp topics.exp topics.out
'
test_expect_success 'flux shutdown stops the instance with no broker left' '
	flux start -s 4 sh -c "flux shutdown; sleep 30" &&
	no_brokers_left
'
# kill.sh RANK: SIGKILL the broker of RANK (its pid from attr.get)
cat >kill.sh <<EOF
pid=\$($RPC -r \$1 attr.get '{"name":"broker.pid"}' | sed -e 's/.*"value":"\([0-9]*\)".*/\1/')
test -n "\$pid" && kill -9 "\$pid"
EOF
test_expect_success 'SIGKILL of a leaf: pings to it fail, the rest keep working' '
	cat >leaf.sh <<-EOT &&
	sh kill.sh 15 || exit 1
	sleep 1
	$RPC -r 15 broker.ping {} 2>leaf.err && exit 1
	$RPC -r 14 broker.ping {} && $RPC -r 7 broker.ping {}
	EOT
	flux start -s 16 sh leaf.sh &&
	grep "No route to host" leaf.err &&
	no_brokers_left
'
test_expect_success 'SIGKILL of an interior broker: its subtree is unreachable' '
	cat >interior.sh <<-EOT &&
	sh kill.sh 3 || exit 1
	sleep 1
	$RPC -r 3 broker.ping {} 2>int3.err && exit 1
	$RPC -r 7 broker.ping {} 2>int7.err && exit 1
	$RPC -r 4 broker.ping {}
	EOT
	flux start -s 16 sh interior.sh &&
	grep "No route to host" int3.err &&
	grep "No route to host" int7.err &&
	sleep 1 && no_brokers_left
'
test_done

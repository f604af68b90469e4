#!/bin/sh
test_description='jobs across the hosts of a virtual cluster (4 network
namespaces, one broker per host from a config file): an MPICH program of 8
ranks over 4 hosts, partial release across hosts, and sub-instances
(flux alloc, flux batch) of 2 hosts whose brokers link up over tcp'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# Namespaces $STEM-<pid>-*, a stem no other test uses (see t0104);
# netns-test.sh: the skip check, PREFIX, the clean-up, no_process_left,
# wait_gone.
STEM=flux-t0103
. "$SHARNESS_TEST_SRCDIR/netns-test.sh"
if command -v mpicc >/dev/null 2>&1 &&
	mpicc -o hello-host "$SHARNESS_TEST_SRCDIR/mpi/hello-host.c" \
		>mpicc.log 2>&1; then
	test_set_prereq MPICC
fi

NODES=4
DIR=$TMPDIR/c

NETNS_SUBNET=10.254.3
NETNS_PORT=8073
NETNS_TOPO=kary:2
export NETNS_SUBNET NETNS_PORT NETNS_TOPO

# run_cluster SCRIPT: a new instance runs SCRIPT on node0, then stops
# (fresh rundirs: nothing, a drain for one, is kept from the one before)
run_cluster () {
	rm -rf "$DIR"/run* &&
	timeout -k 5 120 "$CLUSTER" start "$PREFIX" $NODES "$DIR" \
		sh "$(pwd)/$1"
}

test_expect_success "set up $NODES hosts and their config" '
	"$CLUSTER" up "$PREFIX" $NODES "$DIR"
'
test_expect_success MPICC 'MPI: 8 ranks over 4 hosts wire up and report their hosts' '
	cat >mpi.sh <<-EOT &&
	timeout -k 10 60 flux run -N4 -n8 "$(pwd)/hello-host" >mpi.out
	EOT
	run_cluster mpi.sh &&
	sort -n mpi.out >mpi.sorted &&
	for r in 0 1 2 3 4 5 6 7; do
		echo "$r of 8 on node$((r / 2)): sum 8" || return 1
	done >mpi.exp &&
	test_cmp mpi.exp mpi.sorted &&
	wait_gone
'
# The leader shell (host 0) stays until every shell has sent its last
# output, as flux-core's: hosts 1 and 2 are what a partial release frees.
# Host 3's release may come with host 0's final one or just before it
# (the release window gathers what exits within 20 ms).
test_expect_success 'partial release across hosts: hosts 1-2 run a job while host 3 runs' '
	cat >partial.sh <<-"EOT" &&
	id=$(flux submit -N4 --exclusive sh -c "test \$FLUX_TASK_RANK = 3 && sleep 8; true") || exit 1
	flux job wait-event -t 60 $id release || exit 1
	timeout -k 10 60 flux run -N2 hostname | sort >partial-run.out || exit 1
	flux job eventlog $id >partial-during.out
	timeout -k 10 60 flux job wait-event -t 60 $id clean || exit 1
	flux job eventlog $id >partial-after.out
	EOT
	run_cluster partial.sh &&
	printf "node1\nnode2\n" >partial-run.exp &&
	test_cmp partial-run.exp partial-run.out &&
	grep "release ranks=\"[12-]*\" final=false" partial-during.out &&
	test_must_fail grep " finish " partial-during.out &&
	grep "release ranks=\"[0-9,-]*3[0-9,-]*\" final=" partial-after.out &&
	grep "release ranks=\"[0-9,-]*\" final=true" partial-after.out &&
	grep " finish status=0" partial-after.out &&
	wait_gone
'
test_expect_success 'flux alloc -N2 on hosts 2 and 3: a sub-instance over tcp' '
	cat >alloc.sh <<-"EOT" &&
	# keep hosts 0 and 1 out: neither the parent rank 0 nor a host of
	# its own tree holds the sub-instance
	flux resource drain 0-1 netns-test || exit 1
	timeout -k 10 60 flux alloc -N2 sh -c "flux getattr size &&
		flux getattr tbon.endpoint &&
		flux resource list -n -o {nodelist} &&
		timeout -k 10 30 flux run -N2 hostname | sort" >alloc.out
	EOT
	run_cluster alloc.sh &&
	cat alloc.out &&
	sed -n 1p alloc.out >size.out &&
	echo 2 >size.exp &&
	test_cmp size.exp size.out &&
	sed -n 2p alloc.out | grep "^tcp://10\.254\.3\.3:[0-9][0-9]*$" &&
	sed -n "3,\$p" alloc.out | grep -v "^\$" >alloc-hosts.out &&
	printf "node[2-3]\nnode2\nnode3\n" >alloc-hosts.exp &&
	test_cmp alloc-hosts.exp alloc-hosts.out &&
	wait_gone
'
test_expect_success 'flux batch -N2 on hosts 2 and 3: the script runs a job on both' '
	cat >batch.sh <<-EOT &&
	flux resource drain 0-1 netns-test || exit 1
	id=\$(flux batch -N2 --output="$(pwd)/batch.out" \
		--wrap sh -c "flux getattr tbon.endpoint; flux run -N2 hostname | sort") || exit 1
	timeout -k 10 60 flux job attach \$id
	EOT
	run_cluster batch.sh &&
	cat batch.out &&
	grep "^tcp://10\.254\.3\.3:" batch.out &&
	grep -v "^tcp:" batch.out >batch-hosts.out &&
	printf "node2\nnode3\n" >batch-hosts.exp &&
	test_cmp batch-hosts.exp batch-hosts.out &&
	wait_gone
'
test_expect_success 'tear down: nothing of this run is left' '
	"$CLUSTER" down "$PREFIX" &&
	test -z "$(ip netns list | grep "^$PREFIX-")"
'
test_done

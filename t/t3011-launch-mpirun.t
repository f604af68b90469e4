#!/bin/sh
test_description='Open MPI'"'"'s mpirun launches the brokers of one instance,
which bootstrap through PMIx (libpmix); FLUX_PMI_DEBUG shows the method'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

T="timeout -k 5 120"
# Debian'"'"'s mpirun alternative may be MPICH'"'"'s: name Open MPI'"'"'s.
# As root Open MPI wants --allow-run-as-root; 4 ranks on a 2-CPU machine
# want --oversubscribe.
MPIRUN="mpirun.openmpi --oversubscribe"
test "$(id -u)" = 0 && MPIRUN="$MPIRUN --allow-run-as-root"
# no Open MPI session directory left behind in /tmp
export TMPDIR="$PWD"

# libpmix keeps allocations past PMIx_Finalize (pmix_rte_init, its
# plugins), which LeakSanitizer reports at every broker's exit in the
# ASAN build: no leak check for brokers that joined through PMIx
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

command -v mpirun.openmpi >/dev/null 2>&1 && test_set_prereq OMPI

test_expect_success OMPI 'mpirun -np 4 flux start: one instance of size 4' '
	$T $MPIRUN -np 4 flux start flux getattr size >out &&
	test "$(cat out)" = 4
'
test_expect_success OMPI 'the brokers joined through PMIx' '
	$T $MPIRUN -np 4 -x FLUX_PMI_DEBUG=1 flux start true 2>err &&
	test "$(grep -c "flux-pmi: pmix: rank [0-3] of 4 on 1 node$" err)" = 4
'
test_expect_success OMPI 'a launch on one node links up over ipc' '
	$T $MPIRUN -np 2 flux start flux getattr tbon.endpoint >ep1.out &&
	grep "^ipc://" ep1.out
'

# Across hosts: 2 network-namespace hosts (t/netns-net.sh, stem
# flux-t3011), mpirun on node0 starting its daemon on node1 through an
# rsh agent that enters node1's namespace.  PMIx tells the brokers the
# launch spans 2 nodes, so rank 0 binds tcp on its address, not ipc (the
# hosts share /tmp, so ipc would link up too and hide the fault).
NET="$SHARNESS_TEST_SRCDIR/netns-net.sh"
test_have_prereq OMPI && "$NET" check >/dev/null 2>&1 &&
	test_set_prereq NETNS
STEM=flux-t3011
PREFIX=$STEM-$$
test_have_prereq NETNS && "$NET" reap-stale $STEM
# nshost I CMD...: CMD on host I (its network and UTS namespaces)
nshost () {
	i=$1
	shift
	ip netns exec $PREFIX-n$i unshare --uts \
		sh -c 'hostname "$0" && exec "$@"' node$i "$@"
}
test_expect_success NETNS 'mpirun over 2 netns hosts: PMIx says 2 nodes, tcp' '
	# the agent path must hold no blank (the trash directory has one)
	rsh=$(mktemp /tmp/$STEM-rsh.XXXXXX) &&
	test_when_finished "rm -f $rsh" &&
	test_when_finished "NETNS_SUBNET=10.254.11 \"$NET\" down $PREFIX" &&
	NETNS_SUBNET=10.254.11 "$NET" up $PREFIX 2 &&
	cat >$rsh <<-EOF &&
	#!/bin/sh
	# mpirun rsh agent: HOST CMD... runs CMD on HOST (10.254.11.<i+1>)
	host=\$1
	shift
	i=\$((\${host##*.} - 1))
	exec ip netns exec $PREFIX-n\$i unshare --uts \\
		sh -c "hostname node\$i && exec sh -c \"\\\$0\"" "\$*"
	EOF
	chmod +x $rsh &&
	nshost 0 $T $MPIRUN -np 2 --host 10.254.11.1,10.254.11.2 \
		--mca plm_rsh_agent $rsh --mca oob_tcp_if_include eth0 \
		-x FLUX_PMI_DEBUG=1 -x PATH flux start sh -c \
		"flux getattr tbon.endpoint && flux exec -r all hostname" \
		>hosts.out 2>hosts.err &&
	test "$(grep -c "flux-pmi: pmix: rank [01] of 2 on 2 nodes$" hosts.err)" = 2 &&
	grep "^tcp://10.254.11.1:[0-9]*$" hosts.out &&
	grep -v "^tcp:" hosts.out | sort >names.out &&
	printf "node0\nnode1\n" >names.exp &&
	test_cmp names.exp names.out
'
# mpirun gives the initial program a terminal for its output, so
# overlay status would color it (--color=auto): never here.
test_expect_success OMPI 'the 4 brokers form one tree, a job runs on all' '
	$T $MPIRUN -np 4 flux start sh -c \
		"flux overlay status --no-pretty --color=never &&
		 flux run -N4 -n4 flux getattr rank" \
		>out 2>&1 &&
	test "$(grep -c "^[0-3] .*: full$" out)" = 4 &&
	test "$(grep -c "^[0-3]$" out)" = 4
'
test_expect_success OMPI 'PMIX_* and OMPI_COMM_WORLD_* do not reach the initial program' '
	$T $MPIRUN -np 2 flux start sh -c "env; echo end" >out &&
	grep "^end$" out &&
	! grep -E "^(PMIX|OMPI_COMM_WORLD)_" out
'
test_expect_success OMPI 'when PMIx cannot join, the brokers refuse to start alone' '
	test_must_fail $T $MPIRUN -np 2 \
		sh -c "unset PMIX_NAMESPACE; flux start flux getattr size" \
		>out 2>err &&
	test_must_be_empty out &&
	grep "parallel launch (PMIX_RANK=[01]) but no PMI method could join" err
'
test_done

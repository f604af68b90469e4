#!/bin/sh
test_description='an MPICH hello world, compiled here with Debian'"'"'s mpicc,
runs 8 ranks across 4 brokers under the real exec agents and flux-shell
(PMI-1 wire-up, fences through the exec-agent barrier over the tree):
every rank reports the right rank and size'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

T="timeout -k 10 300"

if command -v mpicc >/dev/null 2>&1 &&
	mpicc -o hello "$SHARNESS_TEST_SRCDIR/mpi/hello.c" >mpicc.log 2>&1; then
	test_set_prereq MPICC
fi

test_expect_success MPICC 'start an instance of 4 brokers' '
	start_instance broker 4 &&
	for i in $(seq 600); do
		test "$(flux resource list -n -o "{nnodes}" -s free 2>/dev/null |
			head -n 1)" = 4 && break
		sleep 0.1
	done &&
	test "$(flux resource list -n -o "{nnodes}" -s free)" = 4
'
test_expect_success MPICC 'MPI hello: 8 ranks on 4 brokers, each with its rank and size' '
	$T flux run -N4 -n8 -l ./hello >hello.out &&
	for r in 0 1 2 3 4 5 6 7; do
		grep "^$r: $r of 8: sum 8$" hello.out || return 1
	done &&
	test $(wc -l <hello.out) = 8
'
test_expect_success MPICC 'MPI hello: ranks placed by block, 2 per broker' '
	$T flux run -N4 -n8 -l sh -c "echo \$(flux getattr rank) \$(./hello)" \
		>place.out &&
	for r in 0 1 2 3 4 5 6 7; do
		grep "^$r: $((r / 2)) $r of 8: sum 8$" place.out || return 1
	done
'
test_expect_success MPICC 'MPI hello with a cyclic task map across 4 brokers' '
	$T flux run -N4 -n8 -l -o taskmap="{\"scheme\":\"cyclic\"}" \
		sh -c "echo \$(flux getattr rank) \$(./hello)" >cyclic.out &&
	for r in 0 1 2 3 4 5 6 7; do
		grep "^$r: $((r % 4)) $r of 8: sum 8$" cyclic.out || return 1
	done
'
test_expect_success MPICC 'stop the instance' '
	stop_instance broker
'
test_done

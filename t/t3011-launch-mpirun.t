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
	test "$(grep -c "flux-pmi: pmix: rank [0-3] of 4" err)" = 4
'
test_expect_success OMPI 'the 4 brokers form one tree, a job runs on all' '
	$T $MPIRUN -np 4 flux start sh -c \
		"flux overlay status --no-pretty && flux run -N4 -n4 flux getattr rank" \
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

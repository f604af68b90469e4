#!/bin/sh
test_description='Slurm (Debian slurm-wlm: munged, slurmctld and slurmd
started here with a generated slurm.conf in a temporary directory) runs
srun -N1 -n4 flux start: the brokers form one instance over --mpi=pmi2
(PMI-1 wire on PMI_FD) and over --mpi=pmix (libpmix); with --mpi=none
they fail with a message instead of starting 4 singletons'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

CLUSTER="$SHARNESS_TEST_SRCDIR/slurm-cluster.sh"
T="timeout -k 5 120"
# 4 tasks on a node with fewer CPUs queue forever without -O
SRUN="srun -N1 -n4 -O"

if why=$(sh "$CLUSTER" check 2>&1); then
	test_set_prereq SLURM
else
	say "skipping the Slurm tests: $why"
fi

# libpmix keeps allocations past PMIx_Finalize, which LeakSanitizer
# reports at every broker's exit in the ASAN build: no leak check for the
# brokers that join through PMIx
# (set by env in each task: srun --export does not override a variable
# the caller already exports)
NOLEAK="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# a short path: munged's socket path must fit in sun_path
SLURMDIR=$(mktemp -d /tmp/flux-t3012.XXXXXX)
export SLURM_CONF="$SLURMDIR/slurm.conf"

test_expect_success SLURM 'start munged, slurmctld and slurmd' '
	timeout 90 sh "$CLUSTER" up "$SLURMDIR" &&
	test "$(sinfo -h -o %t)" = idle
'
test_expect_success SLURM 'srun --mpi=pmi2: one instance of size 4' '
	$T $SRUN --mpi=pmi2 flux start flux getattr size >out &&
	test "$(cat out)" = 4
'
test_expect_success SLURM 'srun --mpi=pmi2: the brokers joined over simple' '
	$T $SRUN --mpi=pmi2 --export=ALL,FLUX_PMI_DEBUG=1 \
		flux start true 2>err &&
	test "$(grep -c "flux-pmi: simple: rank [0-3] of 4" err)" = 4
'
test_expect_success SLURM 'srun --mpi=pmix: one instance of size 4, over pmix' '
	$T $SRUN --mpi=pmix --export=ALL,FLUX_PMI_DEBUG=1 \
		$NOLEAK flux start flux getattr size >out 2>err &&
	test "$(cat out)" = 4 &&
	test "$(grep -c "flux-pmi: pmix: rank [0-3] of 4" err)" = 4
'
test_expect_success SLURM 'srun --mpi=pmix: a job runs on the 4 brokers' '
	$T $SRUN --mpi=pmix $NOLEAK flux start \
		flux run -N4 -n4 flux getattr rank >out &&
	test "$(sort out | tr "\n" " ")" = "0 1 2 3 "
'
test_expect_success SLURM 'srun --mpi=pmix: a flux start run by the instance is its own singleton' '
	$T $SRUN --mpi=pmix $NOLEAK \
		flux start flux start flux getattr size >out &&
	test "$(cat out)" = 1
'
test_expect_success SLURM 'srun --mpi=none: the brokers refuse to start alone' '
	test_must_fail $T $SRUN --mpi=none flux start flux getattr size \
		>out 2>err &&
	test_must_be_empty out &&
	test "$(grep -c "parallel launch (SLURM_STEP_NUM_TASKS=4) but no PMI method could join it" err)" = 4
'
test_expect_success SLURM 'srun -n1 --mpi=none: a singleton is fine' '
	$T srun -N1 -n1 --mpi=none flux start flux getattr size >out &&
	test "$(cat out)" = 1
'
# always, even after a failure above
test_expect_success 'stop the Slurm daemons, remove their directory' '
	sh "$CLUSTER" down "$SLURMDIR" &&
	test ! -e "$SLURMDIR"
'
test_done

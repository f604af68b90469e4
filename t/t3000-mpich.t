#!/bin/sh
test_description='MPICH programs wire up unchanged under flux-shell (PMI-1
simple wire protocol, fences through the exec-agent barrier), with one
shell and with two shells of one job on one broker (the stand-in agent of
t/module/agent-fake.c)'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

AGENT_SO="$FLUX_BUILD_DIR/t/module/.libs/agent-fake.so"

if command -v mpicc >/dev/null 2>&1 &&
	mpicc -o hello "$SHARNESS_TEST_SRCDIR/mpi/hello.c" >mpicc.log 2>&1; then
	test_set_prereq MPICC
fi

# job ID NNODES CORES -- SUBMIT-ARGS...: the job record and guest namespace
job () {
	id=$1 nnodes=$2 cores=$3
	shift 4
	ranks=0; test $nnodes -gt 1 && ranks="0-$((nnodes-1))"
	key=$(flux job id --to=dothex $id) &&
	flux submit --dry-run --env=-* --env=PATH=/usr/bin:/bin "$@" >js.$id &&
	echo "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"$ranks\",\"children\":{\"core\":\"$cores\"}}],\"starttime\":0,\"expiration\":0}}" >R.$id &&
	flux kvs put -r job.$key.jobspec="$(cat js.$id)" \
		job.$key.R="$(cat R.$id)" &&
	flux kvs namespace create job-$id
}

# the lines task rank $2 of job $1 wrote to stdout
task_output () {
	flux kvs eventlog get --namespace=job-$1 output |
		grep "\"stream\":\"stdout\",\"rank\":\"$2\",\"data\"" |
		sed 's/.*"data":"\(.*\)"}$/\1/'
}

test_expect_success MPICC 'start an instance with the fake exec-agent' '
	start_instance broker 1 -Sbroker.modules=content,kvs,kvs-watch &&
	flux module load --name=exec-agent $AGENT_SO
'
test_expect_success MPICC 'MPI hello with 4 tasks in one shell' '
	job 1 1 0-3 -- -n4 "$PWD/hello" &&
	run_shell 1 1 &&
	for r in 0 1 2 3; do
		test "$(task_output 1 $r)" = "$r of 4: sum 4\\n" || return 1
	done
'
test_expect_success MPICC 'MPI hello with 2 shells of 2 tasks' '
	job 2 2 0-1 -- -N2 -n4 "$PWD/hello" &&
	run_shell 2 2 &&
	for r in 0 1 2 3; do
		test "$(task_output 2 $r)" = "$r of 4: sum 4\\n" || return 1
	done
'
test_expect_success MPICC 'MPI hello with a cyclic task map' '
	job 3 2 0-1 -- -N2 -n4 -o taskmap="{\"scheme\":\"cyclic\"}" \
		"$PWD/hello" &&
	run_shell 3 2 &&
	for r in 0 1 2 3; do
		test "$(task_output 3 $r)" = "$r of 4: sum 4\\n" || return 1
	done
'
test_expect_success MPICC 'stop the instance' '
	stop_instance broker
'

test_done

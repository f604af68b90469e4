#!/bin/sh
test_description='the guest namespace and exec.eventlog of every job
(job-exec core), and job-info guest.* paths: flux job eventlog -p exec,
flux job wait-event -p exec, watches started before the job starts, a job
canceled before it starts, guest access, reloads of job-exec and of the
job manager during a job'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

SIM=--setattr=system.exec.test.run_duration
RPC="$FLUX_BUILD_DIR/t/rpc-cred"
ME=$(id -u)

# the event names of a job's exec.eventlog, on one line
exec_names () {
	flux job eventlog -p exec $1 | awk "{print \$2}" | tr "\n" " " |
		sed "s/ $//"
}
dec () { flux job id --to=dec $1; }
kvskey () { flux job id --to=kvs $1; }
state () { flux jobs -n -o "{state}" $1; }
wait_state () { # ID STATE
	for i in $(seq 300); do
		test "$(state $1)" = "$2" && return 0
		sleep 0.1
	done
	echo "job $1 is $(state $1), not $2" >&2
	return 1
}

test_expect_success 'start an instance with the default modules' '
	start_instance broker 1 &&
	flux module list | grep job-exec
'
test_expect_success 'a simulated job: exec.eventlog has init starting complete done' '
	id=$(flux submit $SIM=0.1s true) &&
	flux job wait-event -t 60 $id clean &&
	test "$(exec_names $id)" = "init starting complete done" &&
	flux job eventlog -p exec $id | grep "complete status=0" &&
	flux job eventlog -p guest.exec.eventlog $id >long.out &&
	flux job eventlog -p exec $id >short.out &&
	test_cmp long.out short.out &&
	echo $id >job1
'
test_expect_success 'the end of a job (finish release free clean) is one eventlog append' '
	id=$(flux submit $SIM=0.1s true) &&
	flux job wait-event -t 60 $id clean &&
	flux kvs get --treeobj $(kvskey $id).eventlog >evlog.treeobj &&
	last=$(jq -r ".data[-1]" evlog.treeobj) &&
	flux content load $last >evlog.last &&
	cat evlog.last &&
	test "$(jq -r .name evlog.last | tr "\n" " ")" = \
		"finish release free clean "
'
# validate to start are one append when the start comes within the job
# manager's 20 ms hold: on a busy machine a few jobs may be needed
test_expect_success 'validate to start of a job are one eventlog append' '
	for i in 1 2 3 4 5 6; do
		if test $i -gt 1; then
			id=$(flux submit $SIM=0.1s true) &&
			flux job wait-event -t 60 $id clean &&
			flux kvs get --treeobj $(kvskey $id).eventlog \
				>evlog.treeobj || return 1
		fi
		for ref in $(jq -r ".data[]" evlog.treeobj); do
			flux content load $ref | jq -r .name | tr "\n" " " &&
			echo || return 1
		done >evlog.blobs &&
		cat evlog.blobs || return 1
		grep -qx "validate depend priority alloc start " evlog.blobs &&
			break
	done &&
	grep -x "validate depend priority alloc start " evlog.blobs
'
test_expect_success 'after the job: job.<id>.guest holds it, the namespace is gone' '
	id=$(cat job1) &&
	flux kvs get $(kvskey $id).guest.exec.eventlog >copy.out &&
	test $(grep -c "\"name\":" copy.out) = 4 &&
	grep "\"name\":\"done\"" copy.out &&
	flux kvs namespace list >ns.out &&
	! grep "^job-$(dec $id) " ns.out &&
	flux job wait-event -t 10 -p exec $id done
'
test_expect_success 'while a job runs: namespace job-<id> owned by its user, linked from job.<id>.guest' '
	id=$(flux submit $SIM=600s true) &&
	flux job wait-event -t 60 $id start &&
	flux kvs namespace list >ns2.out &&
	grep "^job-$(dec $id) *$ME " ns2.out &&
	flux kvs readlink $(kvskey $id).guest >link.out &&
	grep "job-$(dec $id)" link.out &&
	flux kvs get -N job-$(dec $id) exec.eventlog >live.out &&
	head -1 live.out | grep "\"name\":\"init\"" &&
	flux job wait-event -t 10 -p exec $id starting &&
	flux cancel $id &&
	flux job wait-event -t 60 -p exec $id done &&
	flux job wait-event -t 60 $id clean &&
	test "$(exec_names $id)" = "init starting complete done" &&
	flux job eventlog -p exec $id | grep "complete status=9"
'
test_expect_success 'watches started before the job starts follow it to the end' '
	flux queue stop &&
	id=$(flux submit $SIM=0.5s true) &&
	{ flux job wait-event -t 60 -p exec $id done >wait.out 2>&1 & } &&
	wpid=$! &&
	{ flux job eventlog -F -p exec $id >follow.out 2>&1 & } &&
	fpid=$! &&
	sleep 1 &&
	test "$(state $id)" = SCHED &&
	flux queue start &&
	wait $wpid &&
	wait $fpid &&
	grep " done$" wait.out &&
	awk "{print \$2}" follow.out | tr "\n" " " >follow.names &&
	test "$(cat follow.names)" = "init starting complete done "
'
test_expect_success 'a watch started while the job runs sends each event once' '
	id=$(flux submit $SIM=2s true) &&
	flux job wait-event -t 60 -p exec $id starting &&
	flux job eventlog -F -p exec $id >follow2.out &&
	awk "{print \$2}" follow2.out | tr "\n" " " >follow2.names &&
	test "$(cat follow2.names)" = "init starting complete done "
'
test_expect_success 'a job canceled before it starts ends guest watches (ENODATA), no hang' '
	flux queue stop &&
	id=$(flux submit $SIM=0.5s true) &&
	{ flux job eventlog -F -p exec $id >canceled.out 2>&1 & } &&
	fpid=$! &&
	{ flux job wait-event -t 60 -p exec $id done >canceled2.out 2>&1 & } &&
	wpid=$! &&
	sleep 0.5 &&
	flux cancel $id &&
	wait $fpid &&
	test_must_fail wait $wpid &&
	grep "never received" canceled2.out &&
	test_must_be_empty canceled.out &&
	flux queue start &&
	test_must_fail flux job eventlog -p exec $id 2>canceled3.out &&
	grep "not found" canceled3.out
'
test_expect_success 'guests read only their own jobs guest paths (EPERM)' '
	id=$(cat job1) &&
	test_expect_code 1 $RPC -u 4242 -R 2 -s job-info.eventlog-watch \
		"{\"id\":$(dec $id),\"path\":\"guest.exec.eventlog\",\"flags\":0}" \
		2>perm1.err &&
	grep -i "another user" perm1.err &&
	test_expect_code 1 $RPC -u 4242 -R 2 job-info.lookup \
		"{\"id\":$(dec $id),\"keys\":[\"guest.exec.eventlog\"],\"flags\":0}" \
		2>perm2.err &&
	grep -i "another user" perm2.err &&
	$RPC -u $ME -R 2 -s job-info.eventlog-watch \
		"{\"id\":$(dec $id),\"path\":\"guest.exec.eventlog\",\"flags\":0}" \
		>mine.out &&
	test_line_count = 4 mine.out
'
test_expect_success 'a watch of a running job by another guest is refused too' '
	id=$(flux submit $SIM=600s true) &&
	flux job wait-event -t 60 $id start &&
	test_expect_code 1 $RPC -u 4242 -R 2 -s job-info.eventlog-watch \
		"{\"id\":$(dec $id),\"path\":\"guest.exec.eventlog\",\"flags\":0}" &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean
'
test_expect_success 'guest paths: a key that is not there is ENOENT, WAITCREATE waits' '
	id=$(cat job1) &&
	test_must_fail flux job eventlog -p output $id 2>noout.err &&
	grep "not found" noout.err &&
	flux job wait-event -W -t 10 -p exec $id done
'
test_expect_success 'job-exec reloaded during a job: grafted at unload; reattach, re-starting, then done' '
	id=$(flux submit $SIM=4s true) &&
	flux job wait-event -t 60 -p exec $id starting &&
	flux module remove job-exec &&
	test_must_fail flux kvs readlink $(kvskey $id).guest &&
	flux kvs get $(kvskey $id).guest.exec.eventlog >grafted.out &&
	grep "\"name\":\"starting\"" grafted.out &&
	flux kvs namespace list | grep "^job-$(dec $id) " &&
	flux module load job-exec &&
	flux job wait-event -t 60 $id clean &&
	test "$(exec_names $id)" = \
		"init starting reattach re-starting complete done" &&
	flux job eventlog $id | grep "finish status=0" &&
	flux kvs namespace list >ns3.out &&
	! grep "^job-$(dec $id) " ns3.out
'
# blobs ID: the names in each blob of job ID's eventlog, a line a blob
blobs () {
	for ref in $(flux kvs get --treeobj $(kvskey $1).eventlog |
			jq -r ".data[]"); do
		flux content load $ref | jq -r .name | tr "\n" " " &&
		echo || return 1
	done
}
test_expect_success 'a job that ends within the hold: its life after submit is one append' '
	flux module reload job-manager hold-ms=5000 &&
	id=$(flux submit $SIM=0.1s true) &&
	flux job wait-event -t 60 $id clean &&
	blobs $id >hold.blobs &&
	cat hold.blobs &&
	cat >hold.exp <<-EOT &&
	submit 
	validate depend priority alloc start finish release free clean 
	EOT
	test_cmp hold.exp hold.blobs
'
test_expect_success 'a memo is in the eventlog when it is answered, whatever the hold' '
	id=$(flux submit $SIM=30s true) &&
	flux job wait-event -t 60 $id start &&
	$RPC job-manager.memo "{\"id\":$(flux job id --to=dec $id),\"memo\":{\"uri\":\"x\"}}" &&
	flux job eventlog $id >memo.out &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	grep "memo uri=\"x\"" memo.out
'
test_expect_success 'the job manager refuses a bad argument; hold-ms=0 holds nothing' '
	test_must_fail flux module reload job-manager hold-ms=x &&
	test_must_fail flux module load job-manager bogus=1 &&
	flux dmesg | grep "job-manager.*bad argument bogus=1" &&
	flux module load job-manager hold-ms=0 &&
	id=$(flux submit $SIM=0.1s true) &&
	flux job wait-event -t 60 $id clean &&
	blobs $id >nohold.blobs &&
	cat nohold.blobs &&
	test $(wc -l <nohold.blobs) -ge 4 &&
	flux module reload job-manager &&
	id=$(flux submit $SIM=0.1s true) &&
	flux job wait-event -t 60 $id clean
'
test_expect_success 'the job manager reloaded during a job: the exec.eventlog still ends with done' '
	id=$(flux submit $SIM=3s true) &&
	flux job wait-event -t 60 -p exec $id starting &&
	flux module reload job-manager &&
	flux job wait-event -t 60 $id clean &&
	test "$(exec_names $id)" = "init starting complete done"
'
test_expect_success 'job-exec counts its guest namespaces' '
	flux module stats job-exec | jq -e ".guest.opened == .guest.closed" &&
	flux module stats job-exec | jq -e ".guest.errors == 0" &&
	flux module stats job-info | jq -e ".\"guest-watchers\" == 0"
'
# job-exec's primary commits (the symlink, the copy at job.<id>.guest) are
# LAZY: the job manager's later events, durable, must cover them
test_expect_success 'SIGKILL of rank 0 after real jobs ended: the restart has their copies' '
	rm -rf sk && mkdir sk &&
	cat >sk.sh <<-EOT &&
	flux submit --cc=1-20 --quiet echo a-line >/dev/null &&
	flux queue drain --timeout=120s &&
	flux jobs -a -n -o "{id}" >sk/ids &&
	sleep 0.5 && flux kvs put sk.durable=1 &&
	kill -9 \$(flux getattr broker.pid)
	EOT
	{ flux start -Sstatedir="$(pwd)/sk" sh sk.sh || true; } &&
	test $(wc -l <sk/ids) -eq 20 &&
	cat >sk2.sh <<-EOT &&
	for id in \$(cat sk/ids); do
		flux job eventlog -p exec \$id | tail -1 | cut -d" " -f2 || exit 1
		flux job attach \$id || exit 1
	done
	EOT
	flux start -Sstatedir="$(pwd)/sk" sh sk2.sh >sk.out &&
	test $(grep -c "^done$" sk.out) -eq 20 &&
	test $(grep -c "^a-line$" sk.out) -eq 20
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'

test_done

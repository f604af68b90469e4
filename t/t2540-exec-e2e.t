#!/bin/sh
test_description='real execution end to end in 4 brokers: flux run, the
exec agents, job-exec (realexec, exec.eventlog), flux-shell and flux job
attach together, with no stand-in: task ranks, environment, affinity,
stdin, bounded output, exit codes, time limit, partial release, signals,
ctrl-C, attach, --watch, output files, labels, flux exec, reload of
job-exec and a lost broker.  Every wait is bounded.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# flux run may take a while to end under load here
WAIT_EXIT_TIMEOUT=120

# wait_for FILE PATTERN: until PATTERN is in FILE (60 s at most)
wait_for () {
	for i in $(seq 600); do
		grep -q "$2" $1 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# wait_files N PATTERN: until N files match PATTERN (60 s at most)
wait_files () {
	for i in $(seq 600); do
		test $(ls $2 2>/dev/null | wc -l) -ge $1 && return 0
		sleep 0.1
	done
	return 1
}
# status ID: the finish status of a job (empty if none)
status () {
	flux job eventlog $1 | sed -n "s/.* finish status=\([0-9]*\).*/\1/p"
}
clean () {
	flux job wait-event -t 120 $1 clean >/dev/null
}
# a task that waits (120 s at most) for the file $1 to exist
WAIT_FILE='n=0; while ! test -e $0 && test $n -lt 1200; do sleep 0.1; n=$((n+1)); done'
T="timeout -k 10 120"
test_expect_success 'start an instance of 4 brokers (test-exit-mode=leader)' '
	start_instance four 4 --test-exit-mode=leader &&
	test "$(flux resource list -n -o "{nnodes}" -s free)" = 4
'
test_expect_success 'flux run -N4 -n8 hostname prints 8 lines' '
	$T flux run -N4 -n8 hostname >hostname.out &&
	test $(wc -l <hostname.out) = 8 &&
	test $(sort -u hostname.out | wc -l) = 1
'
test_expect_success 'exec.eventlog of a 4-node job: in order, its times never go back' '
	id=$($T flux submit -N4 true) &&
	clean $id &&
	flux job eventlog -p exec $id >order.out &&
	cat order.out &&
	awk "{print \$2}" order.out | tr "\n" " " >order.names &&
	test "$(cat order.names)" = "init starting shell.init shell.start shell.task-exit complete done " &&
	awk "NR > 1 && \$1 < prev { bad = 1 } { prev = \$1 } END { exit bad }" \
		order.out
'
test_expect_success 'task ranks, local ids, job size and broker ranks are right (-l labels)' '
	$T flux run -N4 -n8 -l sh -c "echo \$FLUX_TASK_RANK \$FLUX_TASK_LOCAL_ID \$FLUX_JOB_SIZE \$(flux getattr rank)" \
		>ranks.out &&
	sort -n ranks.out >ranks.sorted &&
	cat >ranks.expected <<-EOF &&
	0: 0 0 8 0
	1: 1 1 8 0
	2: 2 0 8 1
	3: 3 1 8 1
	4: 4 0 8 2
	5: 5 1 8 2
	6: 6 0 8 3
	7: 7 1 8 3
	EOF
	test_cmp ranks.expected ranks.sorted
'
test_expect_success 'the environment of flux run reaches every task, with FLUX_JOB_ID' '
	E2E_VAR=hello $T flux run -N4 -n4 -v --env=E2E_SET=set \
		sh -c "echo \$E2E_VAR \$E2E_SET \$FLUX_JOB_ID" >env.out 2>env.err &&
	id=$(sed -n "s/^jobid: //p" env.err) &&
	test $(grep -c "^hello set " env.out) = 4 &&
	test $(sort -u env.out | wc -l) = 1 &&
	jobid=$(sed -n "1s/^hello set //p" env.out) &&
	test "$(flux job id --to=dec $jobid)" = "$(flux job id --to=dec $id)" &&
	$T flux run -N4 -n4 --env=-E2E_* sh -c "echo x\${E2E_VAR}x" >env2.out &&
	test $(grep -c "^xx$" env2.out) = 4
'
test_expect_success 'affinity: a task gets the cores of its allocation' '
	$T flux run -N1 -n1 grep Cpus_allowed_list /proc/self/status >aff1.out &&
	test $(sed "s/.*:\s*//" aff1.out) = 0 &&
	ncores=$(flux resource list -n -o "{ncores}" -s free | head -n 1) &&
	if test $ncores -ge 8; then
		$T flux run -N4 -n8 -o cpu-affinity=per-task -l \
			grep Cpus_allowed_list /proc/self/status >aff2.out &&
		test $(sed "s/.*:\s*//" aff2.out | sort -u | wc -l) = 2
	fi
'
test_expect_success 'stdin piped into flux run reaches task 0' '
	echo piped-line | $T flux run -N2 -n2 -l --input=0 cat >stdin.out &&
	test "$(cat stdin.out)" = "0: piped-line" &&
	echo to-all | $T flux run -N2 -n2 -l cat >stdin-all.out &&
	grep "^0: to-all$" stdin-all.out &&
	test $(wc -l <stdin-all.out) = 2
'
test_expect_success 'stdin reaches tasks of the other shells in order, only those named' '
	seq 1000 | $T flux run -N4 -n8 -l --input=3,6 cat >stdin-ranks.out &&
	seq 1000 >seq.1000 &&
	sed -n "s/^3: //p" stdin-ranks.out >stdin.3 &&
	sed -n "s/^6: //p" stdin-ranks.out >stdin.6 &&
	test_cmp seq.1000 stdin.3 &&
	test_cmp seq.1000 stdin.6 &&
	test $(wc -l <stdin-ranks.out) = 2000
'
test_expect_success 'output of every rank of a 4-node job reaches flux run and attach, complete and in order' '
	$T flux run -N4 -n8 sh -c "seq 500 | sed s/^/\$FLUX_TASK_RANK:/; echo e\$FLUX_TASK_RANK >&2" \
		>all.out 2>all.err &&
	id=$(flux job last) &&
	$T flux job attach $id >attach.out 2>attach.err &&
	seq 500 >seq.500 &&
	for r in 0 1 2 3 4 5 6 7; do
		sed -n "s/^$r://p" all.out >all.$r &&
		test_cmp seq.500 all.$r &&
		sed -n "s/^$r://p" attach.out >attach.$r &&
		test_cmp seq.500 attach.$r &&
		grep "^e$r$" all.err && grep "^e$r$" attach.err || return 1
	done &&
	flux job eventlog -p guest.output $id |
		sed -n "s/.*stream=\"\([a-z]*\)\" rank=\"\([0-9,-]*\)\" eof=true.*/\1 \2/p" |
		while read s r; do
			echo "$r" | tr , "\n" | while IFS=- read a b; do
				for i in $(seq $a ${b:-$a}); do echo "$s $i"; done
			done
		done | sort >eof.all &&
	test_line_count = 16 eof.all &&
	test -z "$(uniq -d eof.all)"
'
# A non-leader shell holds its tasks' output a moment (20 ms): a task that
# prints a line and exits costs its shell one request to the leader
# (output, EOFs and exit together), not a send and its answer before the
# last.  A shell kept off the CPU past the hold between the line and the
# exit sends it apart: on a busy machine a few jobs may be needed.
test_expect_success 'a short task of a non-leader shell: one request to the leader' '
	cat >otrace.sh <<-EOT &&
	flux overlay trace -t request,response "*" >otrace.out &
	pid=\$!
	while ! grep -q broker.ping otrace.out; do flux ping -c 1 1 >/dev/null; done
	flux run -N4 -n4 echo hi >otrace.run || exit 1
	n=\$(grep -c broker.ping otrace.out)
	while test \$(grep -c broker.ping otrace.out) -le \$n; do
		flux ping -c 1 1 >/dev/null
	done
	kill \$pid
	EOT
	for i in 1 2 3 4 5; do
		$T sh otrace.sh &&
		test $(grep -c "^hi$" otrace.run) = 4 &&
		nreq=$(grep -c "request .*shell-.*\.output" otrace.out) &&
		nrsp=$(grep -c "response .*shell-.*\.output" otrace.out || true) &&
		echo "job $i: $nreq output requests, $nrsp answers" &&
		test $nreq -ge 3 || return 1
		test $nreq = 3 && test $nrsp = 0 && break
	done &&
	test $nreq = 3 && test $nrsp = 0
'
# big_diag: what a failure of the 100 MB test needs to be understood: the
# job's eventlogs, the tail of its output eventlog, the brokers' logs
big_diag () {
	echo "--- big.err"; tail -20 big.err
	echo "--- big.out: $(wc -c <big.out) bytes"
	bigid=$(sed -n "s/^jobid: //p" big.err)
	if test -n "$bigid"; then
		echo "--- eventlog of $bigid"; flux job eventlog $bigid
		echo "--- exec eventlog"; flux job eventlog -p exec $bigid
		echo "--- output eventlog (last 5, cut)"
		flux job eventlog -p guest.output $bigid | tail -5 | cut -c1-300
	fi
	echo "--- flux dmesg"; flux dmesg | tail -80
	echo "--- flux module list"; flux module list
	echo "--- four.log"; tail -40 four.log
	return 1
}
test_expect_success 'a job printing 100 MB: its output is bounded, the instance stays healthy' '
	{
		echo "step 1: flux run of the 100 MB job" &&
		{ $T flux run -v sh -c "yes | head -c 100000000" >big.out 2>big.err ||
			{ echo "flux run exited $?"; false; }; } &&
		echo "step 2: at most 11 MB of output" &&
		test $(wc -c <big.out) -le 11000000 &&
		echo "step 3: at least 1 MB of output" &&
		test $(wc -c <big.out) -ge 1000000 &&
		echo "step 4: the user is told the output was truncated" &&
		grep "truncated" big.err &&
		echo "step 5: a 4-node job runs after it" &&
		{ $T flux run -N4 -n4 true || { echo "flux run exited $?"; false; }; } &&
		echo "step 6: job-exec is still loaded" &&
		flux module list | grep "^job-exec "
	} || big_diag
'
test_expect_success 'the exit code is the largest of the tasks'"'"' exit codes' '
	test_expect_code 3 $T flux run -N4 -n4 sh -c "exit \$FLUX_TASK_RANK" \
		2>exit3.err &&
	grep "exited with exit code 3" exit3.err
'
# A short job's events reach flux run in one burst at its end, finish
# before the output is read: the word on the exit code still comes last.
test_expect_success 'the exit code message follows the tasks'"'"' stderr' '
	test_expect_code 3 $T flux run -N2 -n2 sh -c "echo oops >&2; exit 3" \
		2>order.err &&
	test $(grep -c "^oops" order.err) -eq 2 &&
	tail -n 1 order.err | grep "task(s) exited with exit code 3"
'
test_expect_success 'a task killed by signal N: exit code 128+N' '
	test_expect_code 137 $T flux run -N2 -n2 sh -c \
		"test \$FLUX_TASK_RANK = 1 && kill -9 \$\$; exit 0" 2>kill9.err &&
	grep "task(s) Killed" kill9.err
'
test_expect_success 'a command not found: exit code 127, one clear error, no crash' '
	test_expect_code 127 $T flux run nosuchcmd >nocmd.out 2>nocmd.err &&
	grep "nosuchcmd.*No such file or directory" nocmd.err &&
	test $(grep -c "No such file" nocmd.err) = 1 &&
	test_must_fail grep -i "segmentation\|job shell" nocmd.err &&
	! grep -i "nosuchcmd" four.log
'
test_expect_success 'a time limit kills the job with SIGALRM (exit 142, as flux-core) and raises timeout' '
	test_expect_code 142 $T flux run -v -t 2s sleep 100 2>tl.err &&
	id=$(sed -n "s/^jobid: //p" tl.err) &&
	flux job eventlog $id | grep "exception type=\"timeout\"" &&
	clean $id
'
# the task that runs on is on the leader shell's node: the leader ends
# only once every shell sent it its last output, as flux-core's does
test_expect_success 'partial release: a -N3 job starts on freed ranks before the first job ends' '
	rm -f partial.go &&
	id=$(flux submit -N4 -n8 sh -c \
		"if test \$FLUX_TASK_RANK = 0; then $WAIT_FILE; fi" partial.go) &&
	flux job wait-event -t 60 $id start &&
	id2=$(flux submit -N3 -n6 true) &&
	flux job wait-event -t 60 $id2 clean &&
	test "$(status $id2)" = 0 &&
	test "$(status $id)" = "" &&
	touch partial.go &&
	clean $id &&
	test "$(status $id)" = 0 &&
	test $(flux job eventlog $id | grep -c " release ") -ge 2
'
test_expect_success 'flux job kill signals reach every task' '
	rm -rf sig && mkdir sig &&
	id=$(flux submit -N4 -n8 sh -c "trap \"touch sig/usr1.\$FLUX_TASK_RANK; exit 0\" USR1;
		touch sig/ready.\$FLUX_TASK_RANK;
		n=0; while test \$n -lt 1200; do sleep 0.1; n=\$((n+1)); done") &&
	wait_files 8 "sig/ready.*" &&
	flux job kill -s SIGUSR1 $id &&
	clean $id &&
	test $(ls sig/usr1.* | wc -l) = 8 &&
	test "$(status $id)" = 0
'
test_expect_success 'ctrl-C to flux run forwards SIGINT to the tasks' '
	rm -rf int && mkdir int &&
	run_bg int1 -v -N2 -n2 sh -c "trap \"touch int/int.\$FLUX_TASK_RANK; exit 0\" INT;
		touch int/ready.\$FLUX_TASK_RANK;
		n=0; while test \$n -lt 1200; do sleep 0.1; n=\$((n+1)); done" &&
	pid=$(cat int1.pid) &&
	wait_files 2 "int/ready.*" &&
	kill -INT $pid &&
	wait_exit int1 &&
	test "$(cat int1.rc)" = 0 &&
	test $(ls int/int.* | wc -l) = 2 &&
	grep "one more ctrl-C within 1s cancels" int1.err
'
test_expect_success 'ctrl-C twice within a second cancels the job' '
	rm -rf int2 && mkdir int2 &&
	run_bg int2 -v -N2 -n2 sh -c "trap \"\" INT; touch int2/ready.\$FLUX_TASK_RANK;
		n=0; while test \$n -lt 1200; do sleep 0.1; n=\$((n+1)); done" &&
	pid=$(cat int2.pid) &&
	wait_files 2 "int2/ready.*" &&
	kill -INT $pid &&
	wait_for int2.err "one more ctrl-C" &&
	kill -INT $pid &&
	id=$(sed -n "s/^jobid: //p" int2.err) &&
	clean $id &&
	wait_exit int2 &&
	test "$(cat int2.rc)" -ne 0 &&
	grep "type=cancel" int2.err
'
test_expect_success 'flux job attach to a running job streams its output' '
	rm -f attach.go &&
	id=$(flux submit -N2 -n2 sh -c "echo before \$FLUX_TASK_RANK; $WAIT_FILE; echo after \$FLUX_TASK_RANK" attach.go) &&
	flux job wait-event -t 60 $id start &&
	$T flux job attach $id >attach.out 2>attach.err &
	pid=$! &&
	wait_for attach.out "before 1" &&
	wait_for attach.out "before 0" &&
	test_must_fail grep after attach.out &&
	touch attach.go &&
	wait $pid &&
	grep "after 0" attach.out && grep "after 1" attach.out
'
test_expect_success 'flux submit --watch prints the output and exits with the job'"'"'s code' '
	test_expect_code 4 $T flux submit --watch -N2 -n2 sh -c "echo watched; exit 4" \
		>watch.out &&
	test $(grep -c "^watched$" watch.out) = 2
'
test_expect_success '--output, --error, --input files with {{id}}' '
	echo from-a-file >in.txt &&
	$T flux run -v -N2 -n2 --output=o.{{id}} --error=e.{{id}} \
		--input=in.txt sh -c "cat; echo err \$FLUX_TASK_RANK >&2" \
		2>files.err &&
	id=$(sed -n "s/^jobid: //p" files.err) &&
	test $(grep -c "^from-a-file$" o.$id) = 2 &&
	grep "err 0" e.$id && grep "err 1" e.$id
'
test_expect_success 'flux exec -r all runs on every broker of the instance' '
	$T flux exec -r all flux getattr rank | sort >exec.out &&
	printf "0\n1\n2\n3\n" >exec.expected &&
	test_cmp exec.expected exec.out
'
job_ranks () {
	flux job info $1 R | jq -r "[.execution.R_lite[].rank] | join(\",\")"
}
test_expect_success 'flux exec --jobid runs inside the job, through its shells, on its ranks' '
	a=$(flux submit -N2 -n2 --exclusive sleep 300) &&
	b=$(flux submit -N2 -n2 --exclusive sleep 300) &&
	flux job wait-event -t 60 $a start &&
	flux job wait-event -t 60 $b start &&
	for j in $a $b; do
		case $(job_ranks $j) in 0-1|0,1) echo $j >xj.low;; 2-3|2,3) echo $j >xj.high;; esac
	done &&
	hi=$(cat xj.high) &&
	$T flux exec --jobid=$hi -l sh -c "echo \$(flux getattr rank) \$(cat /proc/\$PPID/comm)" |
		sort >xj.out &&
	printf "2: 2 flux-shell\n3: 3 flux-shell\n" >xj.expected &&
	test_cmp xj.expected xj.out &&
	test "$($T flux exec -j $hi -r 1 flux getattr rank)" = 3 &&
	test_expect_code 3 $T flux exec -j $hi -x 0 sh -c "exit 3" 2>xj.err &&
	grep "^3: Exit 3" xj.err &&
	test_must_fail $T flux exec -j $hi -r 2 true 2>xj2.err &&
	grep "the job has only 2 ranks" xj2.err &&
	flux cancel $hi && clean $hi
'
# sleeps RANK SVC: how many sleep processes SVC.rexec lists on RANK
sleeps () {
	$FLUX_BUILD_DIR/t/rpc -r $1 $2.rexec.list | grep -o "\"cmd\":\"sleep\"" | wc -l
}
test_expect_success 'flux exec --jobid killed: the shells kill what it started' '
	lo=$(cat xj.low) &&
	svc=$(flux job eventlog -p guest.exec.eventlog $lo | sed -n "s/.*shell.init .*service=\"\([^\"]*\)\".*/\1/p") &&
	test -n "$svc" &&
	{ flux exec -j $lo sleep 200 & } &&
	pid=$! &&
	eventually "sleeps 0 $svc" 1 && eventually "sleeps 1 $svc" 1 &&
	kill -9 $pid &&
	eventually "sleeps 0 $svc" 0 && eventually "sleeps 1 $svc" 0
'
test_expect_success 'flux exec --jobid: a guest may not use the shells'"'"' server, nor a finished job' '
	lo=$(cat xj.low) &&
	svc=$(flux job eventlog -p guest.exec.eventlog $lo | sed -n "s/.*shell.init .*service=\"\([^\"]*\)\".*/\1/p") &&
	test -n "$svc" &&
	$FLUX_BUILD_DIR/t/rpc $svc.rexec.list "{}" | jq -e ".rank == 0" &&
	test_must_fail $FLUX_BUILD_DIR/t/rpc-cred -u 4242 -R 2 $svc.rexec.list "{}" 2>xjg.err &&
	grep "belongs to another user" xjg.err &&
	flux cancel $lo && clean $lo &&
	test_must_fail $T flux exec -j $lo true 2>xj3.err &&
	grep "not running" xj3.err
'
test_expect_success 'reload job-exec during a job: the job completes with 0' '
	rm -f reload.go &&
	id=$(flux submit -N4 -n4 sh -c "$WAIT_FILE" reload.go) &&
	flux job wait-event -t 60 $id start &&
	flux module reload job-exec &&
	touch reload.go &&
	clean $id &&
	test "$(status $id)" = 0 &&
	$T flux run -N4 -n4 true
'
# a kvs reload keeps the guest namespaces (the unload's checkpoint); the
# shells send the commits it refused meanwhile again.  guest.output is
# created by the leader shell after "start": -W waits for it.
test_expect_success 'reload kvs during a job: it completes with 0, all its output kept' '
	rm -f kvsre.go &&
	test_when_finished "touch kvsre.go" &&
	id=$(flux submit -N4 -n4 sh -c "echo before; $WAIT_FILE; echo after" \
		kvsre.go) &&
	flux job wait-event -t 60 $id start &&
	flux job wait-event -W -t 60 -p guest.output $id data >/dev/null &&
	flux module reload kvs &&
	touch kvsre.go &&
	clean $id &&
	test "$(status $id)" = 0 &&
	$T flux job attach $id >kvsre.out &&
	test $(grep -c "^before$" kvsre.out) -eq 4 &&
	test $(grep -c "^after$" kvsre.out) -eq 4 &&
	flux dmesg | grep "kvs.*restored [0-9]* namespaces* besides primary"
'
test_expect_success 'flux run streams every line of its job across two kvs reloads' '
	cat >kvsre-run.sh <<-"EOT" &&
	i=0
	while [ $i -lt 2000 ]; do
		echo $i; i=$((i+1)); [ $((i % 100)) = 0 ] && sleep 0.05
	done
	EOT
	{ sleep 0.7; flux module reload kvs; sleep 0.4; flux module reload kvs; } &
	pid=$! &&
	$T flux run -l -N4 -n4 sh kvsre-run.sh >kvsre-run.out &&
	wait $pid &&
	for r in 0 1 2 3; do
		grep "^$r: " kvsre-run.out | cut -d" " -f2 >kvsre-run.$r &&
		seq 0 1999 | test_cmp - kvsre-run.$r || return 1
	done
'
test_expect_success 'reload kvs three times under 200 short jobs: every job completes' '
	flux submit --cc=1-200 -N1 sh -c "echo hi; sleep 0.02" >kvsre.ids &&
	for i in 1 2 3; do sleep 0.3; flux module reload kvs || exit 1; done &&
	flux queue drain --timeout=120s &&
	flux jobs -n -o "{result}" $(cat kvsre.ids) >kvsre.results &&
	test $(wc -l <kvsre.results) -eq 200 &&
	test $(grep -c COMPLETED kvsre.results) -eq 200 &&
	$T flux run -N4 -n4 true
'
test_expect_success 'SIGKILL of a broker running part of a job: node-failure, the others are released and reused' '
	rm -rf lost && mkdir lost &&
	id=$(flux submit -N4 -n4 sh -c "echo \$(flux getattr broker.pid) >lost/broker.\$(flux getattr rank);
		n=0; while test \$n -lt 1200; do sleep 0.1; n=\$((n+1)); done") &&
	wait_files 4 "lost/broker.*" &&
	kill -9 $(cat lost/broker.3) &&
	flux job wait-event -t 60 $id exception >lost.exc &&
	grep "node-failure.*node failure on $(hostname) (rank 3)" lost.exc &&
	clean $id &&
	flux job eventlog $id | grep " release .*final=true" &&
	$T flux run -N3 -n3 true &&
	test "$(flux resource list -n -o "{nnodes}" -s down)" = 1
'
test_expect_success 'stop the instance' '
	stop_instance four
'
test_done

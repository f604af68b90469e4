#!/bin/sh
test_description='flux run, flux job attach and flux submit --wait/--watch
with simulated jobs: exit codes from the finish status, exceptions,
ctrl-C forwarding and cancel, signals, replay of inactive jobs; output and
stdin through guest eventlogs written by the test in the shell'"'"'s place
(PROTOCOLS-exec.md 4.1, 4.2); usage errors.

Simulated jobs have no shell: the tests marked REAL-SHELL write the
events a shell would (shell.init, shell.start, guest.output) themselves
and use t/stdin-sink as the stdin service; extend them to real jobs when
the job shell lands.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

SIM=--setattr=system.exec.test.run_duration
SINK="$FLUX_BUILD_DIR/t/stdin-sink"

# guest_append ID PATH NAME CONTEXT: append to a job's guest eventlog PATH
# (exec.eventlog, output), in its guest namespace if job-exec made one,
# else under job.<id>.guest in the primary namespace.
guest_append () {
	ns=job-$(flux job id --to=dec $1) &&
	if flux kvs namespace list | grep -q "^$ns "; then
		flux kvs eventlog append -N $ns $2 $3 "$4"
	else
		flux kvs eventlog append $(flux job id --to=kvs $1).guest.$2 $3 "$4"
	fi
}
# a running simulated job that lasts until canceled
running_job () {
	id=$(flux submit $SIM=600s "$@" true) &&
	flux job wait-event -t 60 $id start >/dev/null &&
	echo $id
}
# wait_for FILE PATTERN: until PATTERN is in FILE (60 s at most)
wait_for () {
	for i in $(seq 600); do
		grep -q "$2" $1 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
HEADER='{"version":1,"encoding":{"stdout":"UTF-8","stderr":"UTF-8"},"count":{"stdout":2,"stderr":2},"options":{}}'

test_expect_success 'start an instance of 1 broker with the default modules' '
	start_instance broker 1 &&
	flux module list | grep job-info
'

#
# exit codes
#
test_expect_success 'flux run of a simulated job exits 0, prints nothing' '
	flux run $SIM=0.1s true >run0.out 2>run0.err &&
	test_must_be_empty run0.out &&
	test_must_be_empty run0.err
'
test_expect_success 'flux run -v prints the job id on stderr' '
	flux run -v $SIM=0.1s true 2>runv.err &&
	id=$(sed -n "s/^jobid: //p" runv.err) &&
	flux job id $id &&
	flux job wait-event -t 10 $id clean
'
test_expect_success 'flux run -vv prints the job events' '
	flux run -vv $SIM=0.1s true 2>runvv.err &&
	grep "s: job.submit" runvv.err &&
	grep "s: job.finish {\"status\":0}" runvv.err &&
	grep "s: job.clean" runvv.err
'
test_expect_success 'a nonzero exit status is the exit code, with a message' '
	test_expect_code 2 flux run $SIM=0.1s \
		-S system.exec.test.wait_status=512 true 2>st2.err &&
	grep "flux-run: task(s) exited with exit code 2" st2.err &&
	test_expect_code 127 flux run $SIM=0 \
		-S system.exec.test.wait_status=$((127 << 8)) nosuchcmd
'
test_expect_success 'a signaled shell is 128+N, a signaled task is its code' '
	test_expect_code 137 flux run $SIM=0 \
		-S system.exec.test.wait_status=9 true 2>st9.err &&
	grep "flux-run: job shell Killed" st9.err &&
	test_expect_code 143 flux run $SIM=0 \
		-S system.exec.test.wait_status=$((143 << 8)) true 2>st143.err &&
	grep "flux-run: task(s) Terminated" st143.err
'
test_expect_success 'flux submit --wait: the exit code of the jobs, nothing on stderr' '
	test_expect_code 3 flux submit --wait --cc=1-2 $SIM=0.1s \
		-S system.exec.test.wait_status=768 true >sw.ids 2>sw.err &&
	test_line_count = 2 sw.ids &&
	test_must_be_empty sw.err
'
test_expect_success 'flux run: an exception before the job runs exits 1' '
	test_expect_code 1 flux run -S system.exec.test.mock_exception=init \
		true 2>mock.err &&
	grep "job.exception .* type=exec severity=0" mock.err
'

#
# cancel, ctrl-C, signals
#
test_expect_success 'flux job cancel of a running job: exception printed, nonzero' '
	flux run -v $SIM=600s true 2>cancel.err &
	pid=$! &&
	wait_for cancel.err "^jobid: " &&
	id=$(sed -n "s/^jobid: //p" cancel.err) &&
	flux job wait-event -t 60 $id start &&
	flux job cancel $id because &&
	test_expect_code 137 wait $pid &&
	grep "job.exception $id type=cancel severity=0 because" cancel.err
'
# Each of these fails if flux run ignored the signal (it would not end,
# or would not print the ctrl-C lines) or died of it without forwarding
# it (the job would get no signal: no finish status 2 or 15).
test_expect_success 'ctrl-C once is forwarded to the job as SIGINT' '
	run_bg int1 -v $SIM=600s true &&
	wait_for int1.err "^jobid: " &&
	id=$(sed -n "s/^jobid: //p" int1.err) &&
	flux job wait-event -t 60 $id start &&
	kill -INT $(cat int1.pid) &&
	wait_exit int1 &&
	test "$(cat int1.rc)" = 130 &&
	flux job wait-event -t 10 $id finish >int1.fin &&
	grep "finish status=2\$" int1.fin &&
	grep "one more ctrl-C within 1s cancels" int1.err &&
	grep "job shell Interrupt" int1.err &&
	test_must_fail grep job.exception int1.err
'
test_expect_success 'ctrl-C twice within a second cancels the job' '
	run_bg int2 -v --urgency=hold true &&
	wait_for int2.err "^jobid: " &&
	id=$(sed -n "s/^jobid: //p" int2.err) &&
	kill -INT $(cat int2.pid) &&
	wait_for int2.err "one more ctrl-C" &&
	kill -INT $(cat int2.pid) &&
	wait_exit int2 &&
	test "$(cat int2.rc)" = 1 &&
	grep "job.exception $id type=cancel severity=0 interrupted by ctrl-C" \
		int2.err &&
	flux job wait-event -t 10 $id clean
'
test_expect_success 'SIGTERM is forwarded to the job' '
	run_bg term -v $SIM=600s true &&
	wait_for term.err "^jobid: " &&
	id=$(sed -n "s/^jobid: //p" term.err) &&
	flux job wait-event -t 60 $id start &&
	kill -TERM $(cat term.pid) &&
	wait_exit term &&
	test "$(cat term.rc)" = 143 &&
	flux job wait-event -t 10 $id finish >term.fin &&
	grep "finish status=15\$" term.fin
'
test_expect_success 'SIGTERM to flux run of a job that does not run yet cancels it' '
	run_bg termp -v --urgency=hold $SIM=0 true &&
	wait_for termp.err "^jobid: " &&
	id=$(sed -n "s/^jobid: //p" termp.err) &&
	flux job wait-event -t 60 $id priority &&
	kill -TERM $(cat termp.pid) &&
	wait_exit termp &&
	test "$(cat termp.rc)" = 1 &&
	grep "not running yet: canceling it" termp.err &&
	grep "type=cancel severity=0 interrupted by SIGTERM before it ran" \
		termp.err &&
	flux job wait-event -t 10 $id clean
'
# two signals, not two SIGTERMs: the same signal twice may be delivered
# once.  The second is sent microseconds after the first (the pid read
# once), long before flux run can have heard back from the job manager.
test_expect_success 'a SIGHUP after SIGTERM while it cancels: one cancel, no error' '
	run_bg term2 -v --urgency=hold $SIM=0 true &&
	wait_for term2.err "^jobid: " &&
	id=$(sed -n "s/^jobid: //p" term2.err) &&
	flux job wait-event -t 60 $id priority &&
	pid=$(cat term2.pid) &&
	kill -TERM $pid && kill -HUP $pid &&
	wait_exit term2 &&
	cat term2.err &&
	test "$(cat term2.rc)" = 1 &&
	test "$(grep -c "not running yet: canceling it" term2.err)" = 1 &&
	! grep -e "cancel:" -e "kill:" term2.err &&
	flux job wait-event -t 10 $id clean
'

#
# attach
#
test_expect_success 'flux job attach to an inactive job replays its exit code' '
	id=$(flux submit $SIM=0 -S system.exec.test.wait_status=768 true) &&
	flux job wait-event -t 60 $id clean &&
	test_expect_code 3 flux job attach $id 2>replay.err &&
	grep "task(s) exited with exit code 3" replay.err &&
	flux job attach -q $id 2>/dev/null; test $? = 3
'
test_expect_success 'flux job attach to a canceled pending job: exception, 1' '
	id=$(flux submit --urgency=hold true) &&
	flux job cancel $id &&
	test_expect_code 1 flux job attach --read-only $id 2>pend.err &&
	grep "job.exception $id type=cancel severity=0" pend.err
'
test_expect_success 'flux job attach --wait-event=start returns at start' '
	id=$(running_job) &&
	flux job attach --wait-event=start $id &&
	flux run --wait-event=alloc $SIM=600s true &&
	flux cancel --all
'
test_expect_success 'flux submit --watch follows a simulated job' '
	flux submit --watch $SIM=0.1s true >watch.out &&
	test_line_count = 1 watch.out
'

#
# output, through guest.output written by the test (REAL-SHELL)
#
test_expect_success 'REAL-SHELL: a job with shell.init and output events' '
	id=$(running_job) && echo $id >outjob &&
	guest_append $id exec.eventlog shell.init \
		"{\"leader-rank\":0,\"size\":1,\"service\":\"nosuch-shell\"}" &&
	guest_append $id output header "$HEADER" &&
	guest_append $id output data \
		"{\"stream\":\"stdout\",\"rank\":\"0\",\"data\":\"hello\\nworld\\n\"}" &&
	guest_append $id output data \
		"{\"stream\":\"stderr\",\"rank\":\"1\",\"data\":\"b29wcwo=\",\"encoding\":\"base64\"}" &&
	guest_append $id output data \
		"{\"stream\":\"stdout\",\"rank\":\"1\",\"eof\":true}" &&
	guest_append $id output log \
		"{\"rank\":0,\"level\":3,\"message\":\"boom\",\"component\":\"test\"}" &&
	guest_append $id output redirect \
		"{\"stream\":\"stdout\",\"rank\":\"[0-1]\",\"path\":\"/tmp/out\"}"
'
test_expect_success 'REAL-SHELL: attach prints the output of a running job' '
	flux job attach $(cat outjob) </dev/null >live.out 2>live.err &
	pid=$! &&
	wait_for live.err "redirected" &&
	printf "hello\nworld\n" >live.exp &&
	test_cmp live.exp live.out &&
	grep "^oops$" live.err &&
	grep "s: flux-shell\[0\]: ERROR: test: boom$" live.err &&
	grep "^\[0-1\]: stdout redirected to /tmp/out$" live.err &&
	flux job cancel $(cat outjob) &&
	test_expect_code 137 wait $pid
'
test_expect_success 'REAL-SHELL: attach replays the output of the inactive job' '
	flux job wait-event -t 60 $(cat outjob) clean &&
	test_expect_code 137 flux job attach $(cat outjob) >replay.out \
		2>replay.err &&
	test_cmp live.exp replay.out &&
	grep "^oops$" replay.err &&
	grep "job.exception" replay.err
'
test_expect_success 'REAL-SHELL: --label-io prefixes each line with its rank' '
	test_expect_code 137 flux job attach -l $(cat outjob) >label.out \
		2>label.err &&
	printf "0: hello\n0: world\n" >label.exp &&
	test_cmp label.exp label.out &&
	grep "^1: oops$" label.err
'
test_expect_success 'REAL-SHELL: --quiet drops the log and redirect lines' '
	test_expect_code 137 flux job attach -q $(cat outjob) >q.out 2>q.err &&
	test_cmp live.exp q.out &&
	test_must_fail grep -e redirected -e flux-shell q.err
'
test_expect_success 'REAL-SHELL: -X (--show-exec) prints the exec events' '
	test_expect_code 137 flux job attach -X $(cat outjob) >/dev/null \
		2>x.err &&
	grep "s: exec.shell.init {\"leader-rank\":0" x.err
'

#
# stdin, to t/stdin-sink standing in for the shell's service (REAL-SHELL)
#
# stdin_job NAME [-p]: a running job whose shell.init names the stdin
# service NAME (its id in NAME.id), and t/stdin-sink serving NAME.stdin
# (-p: answering EPIPE), output in NAME.out and NAME.out.log, its pid in
# NAME.pid once it is ready.
stdin_job () {
	id=$(running_job) &&
	guest_append $id exec.eventlog shell.init \
		"{\"leader-rank\":0,\"size\":1,\"service\":\"$1\"}" &&
	echo $id >$1.id &&
	rm -f $1.ready || return 1
	timeout 300 $SINK $2 $1.ready $1 $1.out &
	echo $! >$1.pid
	for i in $(seq 300); do test -e $1.ready && return 0; sleep 0.1; done
	return 1
}
test_expect_success 'REAL-SHELL: a job and a stdin service' '
	dd if=/dev/urandom of=in.bin bs=1024 count=100 2>/dev/null &&
	stdin_job t2530-a
'
test_expect_success 'REAL-SHELL: stdin reaches the service whole, one request at a time' '
	timeout -k 10 300 flux job attach $(cat t2530-a.id) <in.bin >/dev/null \
		2>att.err &
	pid=$! &&
	wait $(cat t2530-a.pid) &&
	cmp in.bin t2530-a.out &&
	test_must_fail grep overlap t2530-a.out.log &&
	test $(grep -c "len=[1-9]" t2530-a.out.log) -ge 4 &&
	grep "rank=all len=[1-9][0-9]* eof=0 encoding=base64" t2530-a.out.log &&
	tail -1 t2530-a.out.log | grep "rank=all len=0 eof=1" &&
	flux job cancel $(cat t2530-a.id) &&
	test_expect_code 137 wait $pid &&
	grep "job.exception .* type=cancel" att.err &&
	test_must_fail grep stdin att.err
'
test_expect_success 'REAL-SHELL: another job and stdin service' '
	printf "line one\nligne \303\251\n" >in.txt &&
	stdin_job t2530-b
'
test_expect_success 'REAL-SHELL: UTF-8 stdin from a pipe goes as text' '
	cat in.txt | timeout -k 10 300 flux job attach $(cat t2530-b.id) >/dev/null \
		2>attb.err &
	pid=$! &&
	wait $(cat t2530-b.pid) &&
	test_cmp in.txt t2530-b.out &&
	grep "len=[1-9].* encoding=UTF-8" t2530-b.out.log &&
	flux job cancel $(cat t2530-b.id) &&
	test_expect_code 137 wait $pid &&
	grep "job.exception .* type=cancel" attb.err
'
test_expect_success 'REAL-SHELL: a job of 3 tasks and a stdin service' '
	stdin_job t2530-c &&
	guest_append $(cat t2530-c.id) exec.eventlog shell.start \
		"{\"taskmap\":{\"version\":1,\"map\":[[0,1,3,1]]}}"
'
test_expect_success 'REAL-SHELL: --stdin-ranks closes the other tasks first' '
	printf "to one\n" >one.txt &&
	timeout -k 10 300 flux job attach --stdin-ranks=1 $(cat t2530-c.id) \
		<one.txt >/dev/null 2>attc.err &
	pid=$! &&
	wait $(cat t2530-c.pid) &&
	cat >t2530-c.exp <<-EOF &&
	rank=0,2 len=0 eof=1 encoding=UTF-8
	rank=1 len=7 eof=0 encoding=UTF-8
	rank=1 len=0 eof=1 encoding=UTF-8
	EOF
	sed "s/rank=\[0,2\]/rank=0,2/" t2530-c.out.log >t2530-c.log &&
	test_cmp t2530-c.exp t2530-c.log &&
	flux job cancel $(cat t2530-c.id) &&
	test_expect_code 137 wait $pid &&
	grep "job.exception .* type=cancel" attc.err
'
test_expect_success 'REAL-SHELL: a job and a stdin service answering EPIPE' '
	stdin_job t2530-d -p
'
test_expect_success 'REAL-SHELL: EPIPE (all tasks closed stdin) stops stdin quietly' '
	yes | timeout -k 10 300 flux job attach $(cat t2530-d.id) >/dev/null \
		2>attd.err &
	pid=$! &&
	wait $(cat t2530-d.pid) &&
	test $(grep -c len= t2530-d.out.log) = 1 &&
	flux job cancel $(cat t2530-d.id) &&
	test_expect_code 137 wait $pid &&
	grep "job.exception .* type=cancel" attd.err &&
	test_must_fail grep stdin attd.err
'
test_expect_success 'REAL-SHELL: a job whose stdin service does not exist' '
	id=$(running_job) &&
	guest_append $id exec.eventlog shell.init \
		"{\"leader-rank\":0,\"size\":1,\"service\":\"t2530-none\"}" &&
	echo $id >none.id
'
test_expect_success 'REAL-SHELL: stdin refused by a missing service is reported' '
	echo data | timeout -k 10 300 flux job attach $(cat none.id) >/dev/null \
		2>atte.err &
	pid=$! &&
	wait_for atte.err "stdin not accepted" &&
	flux job cancel $(cat none.id) &&
	test_expect_code 137 wait $pid &&
	grep "job.exception .* type=cancel" atte.err
'

#
# options and usage errors
#
test_expect_success 'flux run --output, --error, --input, --label-io set the shell options' '
	flux run --dry-run --output=out.{{id}} --error=123 --input=in.txt \
		true >dry.json &&
	jq -e ".attributes.system.shell.options.output.stdout ==
		{\"type\":\"file\",\"path\":\"out.{{id}}\"}" dry.json &&
	jq -e ".attributes.system.shell.options.output.stderr ==
		{\"type\":\"file\",\"path\":\"123\"}" dry.json &&
	jq -e ".attributes.system.shell.options.input.stdin ==
		{\"type\":\"file\",\"path\":\"in.txt\"}" dry.json &&
	flux submit --dry-run -l --output=o true >dryl.json &&
	jq -e ".attributes.system.shell.options.output ==
		{\"stdout\":{\"type\":\"file\",\"path\":\"o\",\"label\":true},
		 \"stderr\":{\"label\":true}}" dryl.json &&
	flux submit --dry-run --input=0 true >dry2.json &&
	jq -e ".attributes.system.shell.options.input.stdin.path == \"0\"" \
		dry2.json &&
	flux run --dry-run --input=0-1 true >dry3.json &&
	jq -e ".attributes.system.shell.options.input == null" dry3.json
'
test_expect_success 'usage errors' '
	test_must_fail flux run 2>u1.err &&
	grep "missing COMMAND" u1.err &&
	test_must_fail flux run --cc=1-2 true 2>u2.err &&
	grep "option of flux submit" u2.err &&
	test_must_fail flux submit --verbose true 2>u3.err &&
	grep "option of flux run" u3.err &&
	test_must_fail flux job attach 2>u4.err &&
	grep "expected one JOBID" u4.err &&
	test_must_fail flux job attach notanid 2>u5.err &&
	grep "invalid job id" u5.err &&
	test_must_fail flux job attach --stdin-ranks=x-y 1 2>u6.err &&
	grep "stdin-ranks" u6.err &&
	test_must_fail flux job attach --stdin-ranks= 1 &&
	test_must_fail flux job attach -r --stdin-ranks=0 1 2>u7.err &&
	grep "read-only" u7.err &&
	test_must_fail flux job attach --bogus 1 &&
	test_must_fail flux job attach 123456789 2>u8.err &&
	grep "No such job" u8.err
'
test_expect_success 'flux job wait: exit 2 when there is no waitable job' '
	test_expect_code 2 flux job wait 2>w.err &&
	grep -i "waitable" w.err
'
test_expect_success 'no job-info watcher is left behind' '
	flux cancel --all &&
	flux queue drain --timeout=60s &&
	for i in $(seq 100); do
		test $($FLUX_BUILD_DIR/t/rpc job-info.stats-get | jq .watchers) = 0 \
			&& break
		sleep 0.1
	done &&
	$FLUX_BUILD_DIR/t/rpc job-info.stats-get | jq -e ".watchers == 0"
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'
# FLUX_JOB_TMPDIR is RUNDIR/jobtmp-SHELLRANK-ID (or in /tmp for a guest),
# a name anyone can compute once the job is submitted: a symlink or a
# directory of someone else put in its place before the job starts is
# never used.
test_expect_success 'a symlink in the place of FLUX_JOB_TMPDIR is not followed' '
	rm -rf jt && mkdir -p jt/rd jt/evil &&
	cat >jt.sh <<-EOF &&
	id=\$(flux submit --urgency=0 sh -c \
		"echo \\\$FLUX_JOB_TMPDIR; touch \"\\\$FLUX_JOB_TMPDIR/x\"") &&
	ln -s "$(pwd)/jt/evil" jt/rd/jobtmp-0-\$id &&
	echo \$id &&
	flux job urgency \$id 16 &&
	flux job attach \$id
	EOF
	cat jt.sh &&
	flux start -Srundir="$(pwd)/jt/rd" sh jt.sh >jt.out &&
	cat jt.out &&
	id=$(head -1 jt.out) &&
	grep "/jt/rd/jobtmp-0-$id-" jt.out &&
	! test -e jt/evil/x
'
# The agent reuses the owner's shells' tmpdirs (a rename instead of a
# mkdir and an rmdir): each job still finds its FLUX_JOB_TMPDIR empty and
# private, whatever the last one left in it or did to it.
test_expect_success 'FLUX_JOB_TMPDIR is reused, empty and private each time' '
	rm -rf tr && mkdir -p tr/rd &&
	cat >tr.sh <<-EOF &&
	set -e
	for i in 1 2 3; do
		flux run sh -c "cd \"\\\$FLUX_JOB_TMPDIR\" && ls -A | wc -l &&
			stat -c %a . && mkdir -p d/e && touch f d/e/g"
	done >tr.runs
	ls tr/rd | grep jobtmp >tr.before
	flux run sh -c "chmod 755 \"\\\$FLUX_JOB_TMPDIR\""
	flux run sh -c "stat -c %a \"\\\$FLUX_JOB_TMPDIR\"" >tr.mode
	flux module stats exec-agent | jq .shells >tr.stats
	flux module remove exec-agent
	ls tr/rd | grep jobtmp >tr.after || true
	EOF
	flux start -Srundir="$(pwd)/tr/rd" sh tr.sh &&
	printf "0\n700\n0\n700\n0\n700\n" >tr.exp &&
	test_cmp tr.exp tr.runs &&
	echo jobtmp-spare-0-3 >tr.before.exp &&
	test_cmp tr.before.exp tr.before &&
	echo 700 >tr.mode.exp &&
	test_cmp tr.mode.exp tr.mode &&
	jq -e ".\"tmpdirs-reused\" == 3" tr.stats &&
	jq -e ".\"tmpdirs-removed\" == 1" tr.stats &&
	test_must_be_empty tr.after
'

test_done

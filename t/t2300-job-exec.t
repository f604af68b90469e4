#!/bin/sh
test_description='job-exec: RFC 32 exec service with simulated execution,
driven by a test driver in the job manager'"'"'s place: start, release and
finish, run_duration, mock exceptions, override, partial release,
expiration, cancel and kill, reattach, bad requests, and throughput'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

DRIVER="$FLUX_BUILD_DIR/t/exec-driver"
EXEC_SO="$FLUX_BUILD_DIR/src/modules/job-exec/.libs/job-exec.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch

# run_exec NAME [MODULE-LOAD-ARGS]: run NAME.script with the driver, load
# job-exec once the driver is registered, wait for the driver, unload
# job-exec.  Output in NAME.out.
run_exec () {
	name=$1; shift
	test $# -gt 0 || set -- job-exec
	modname=$(echo "$1" | sed 's/^--name=//')
	rm -f $name.ready
	$DRIVER -t 60 -r $name.ready $name.script >$name.out 2>$name.err &
	pid=$!
	for i in $(seq 300); do test -e $name.ready && break; sleep 0.1; done
	flux module load "$@" || { kill $pid; return 1; }
	wait $pid
	rc=$?
	flux module remove $modname || rc=1
	cat $name.err >&2
	return $rc
}

test_expect_success 'start an instance of 1 broker' '
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux kvs getroot >/dev/null
'
test_expect_success 'job-exec refuses an unknown argument' '
	test_must_fail flux module load job-exec bogus=1
'
test_expect_success 'without a job manager, job-exec logs why and exits' '
	flux module load job-exec || true &&
	for i in $(seq 100); do
		flux module list | grep -q job-exec || break; sleep 0.1
	done &&
	! flux module list | grep -q job-exec &&
	flux dmesg | grep "job-exec.*job-manager.exec-hello"
'

cat >basic.script <<EOF
R 1 0
start 1 {"exec":{"test":{}}}
wait 1 release=all!
print 1
start 2 {"duration":60}
wait 2 release=all!
print 2
R 3 0
start 3 {"exec":{"test":{"wait_status":256}}}
wait 3 release=all!
print 3
R 4 0
start 4 {"exec":{"test":{"run_duration":1}}}
mark
wait 4 start
sleep 0.3
print 4
wait 4 release=all!
elapsed 0.95 10
print 4
R 5 0
start 5 {"exec":{"test":{"run_duration":"0.2s"}}}
mark
wait 5 release=all!
elapsed 0.19 10
EOF
cat >basic.expected <<EOF
hello job-exec
1: start finish=0 release=all!
2: exception=exec/0:reading R: No such file or directory release=all!
3: start finish=256 release=all!
4: start
elapsed ok
4: start finish=0 release=all!
elapsed ok
EOF
test_expect_success 'start, finish, final release; run_duration honoured' '
	run_exec basic &&
	test_cmp basic.expected basic.out
'

cat >mock.script <<EOF
R 10 0
start 10 {"exec":{"test":{"mock_exception":"init"}}}
wait 10 release=all!
print 10
R 11 0
start 11 {"exec":{"test":{"mock_exception":"run","run_duration":"10s"}}}
wait 11 release=all!
print 11
R 12 0
start 12 {"exec":{"test":{"run_duraton":"1s"}}}
wait 12 release=all!
print 12
start 13 {"exec":{"test":{}}}
wait 13 release=all!
print 13
EOF
cat >mock.expected <<EOF
hello job-exec
10: exception=exec/0:mock initialization exception generated release=all!
11: start exception=exec/0:mock run exception generated finish=9 release=all!
12: exception=exec/0:attributes.system.exec.test.run_duraton is not a known key release=all!
13: exception=exec/0:reading R: No such file or directory release=all!
EOF
test_expect_success 'mock exceptions, bad knobs and missing R raise exec exceptions' '
	run_exec mock &&
	test_cmp mock.expected mock.out
'

cat >partial.script <<EOF
R 20 0-3
start 20 {"exec":{"test":{"release_per_rank":true}}}
wait 20 release=3!
print 20
R 21 2,5
start 21 {"exec":{"test":{"release_per_rank":1}}}
wait 21 !
print 21
R 22 0-3
start 22 {"exec":{"test":{}}}
wait 22 !
print 22
EOF
cat >partial.expected <<EOF
hello job-exec
20: start finish=0 release=0 release=1 release=2 release=3!
21: start finish=0 release=2 release=5!
22: start finish=0 release=all!
EOF
test_expect_success 'release_per_rank: partial releases, then the final one' '
	run_exec partial &&
	test_cmp partial.expected partial.out
'

cat >expire.script <<EOF
R 30 0 0 0.5
start 30 {"exec":{"test":{"run_duration":"10s"}}}
mark
wait 30 release=all!
elapsed 0.45 10
print 30
R 31 0 -5 0.5
start 31 {"exec":{"test":{"run_duration":"1s"}}}
wait 31 release=all!
print 31
R 32 0
start 32 {"exec":{"test":{"run_duration":"inf"}}}
wait 32 start
expiration 32 0.2
wait 32 release=all!
print 32
expiration 32 1
EOF
cat >expire.expected <<EOF
hello job-exec
elapsed ok
30: start exception=timeout/0:resource allocation expired finish=14 release=all!
31: start finish=0 release=all!
expiration 32: ok
32: start exception=timeout/0:resource allocation expired finish=14 release=all!
expiration 32: error 2 job is not active in job-exec
EOF
test_expect_success 'expiration: timeout exception, finish 14 (SIGALRM); start delay not charged; job-exec.expiration' '
	run_exec expire &&
	test_cmp expire.expected expire.out
'

cat >cancel.script <<EOF
R 40 0
start 40 {"exec":{"test":{"run_duration":"10s"}}}
wait 40 start
exception 40 other 1
sleep 0.1
print 40
exception 40 cancel 0
wait 40 release=all!
print 40
R 41 0
start 41 {"exec":{"test":{"run_duration":"10s"}}}
wait 41 start
kill 41 17
sleep 0.1
print 41
kill 41 15
wait 41 release=all!
print 41
R 42 0
start 42 {"exec":{"test":{"run_duration":"10s"}}}
wait 42 start
kill 42 9
wait 42 release=all!
print 42
EOF
cat >cancel.expected <<EOF
hello job-exec
40: start
40: start finish=9 release=all!
41: start
41: start finish=15 release=all!
42: start finish=9 release=all!
EOF
test_expect_success 'job-exception severity 0 ends a job with status 9; shell kill events' '
	run_exec cancel &&
	test_cmp cancel.expected cancel.out
'

cat >override.script <<EOF
R 50 0
start 50 {"exec":{"test":{"override":1}}}
sleep 0.1
print 50
override 50 finish
override 50 start
wait 50 start
override 50 start
override 50 finish 512
wait 50 release=all!
print 50
override 50 start
R 51 0
start 51 {"exec":{"test":{"run_duration":"10s"}}}
wait 51 start
override 51 finish
exception 51 cancel 0
wait 51 !
R 52 0
start 52 {"exec":{"test":{"override":1,"run_duration":"0.1s"}}}
override 52 start
wait 52 release=all!
print 52
EOF
cat >override.expected <<EOF
hello job-exec
50: 
override 50: error 22 Job not running
override 50: ok
override 50: error 22 Job already running
override 50: ok
50: start finish=512 release=all!
override 50: error 2 Job not found
override 51: error 22 Job not in exec override mode
override 52: ok
52: start finish=0 release=all!
EOF
test_expect_success 'override: the job starts and finishes on job-exec.override' '
	run_exec override &&
	test_cmp override.expected override.out
'

cat >reattach.script <<EOF
R 60 0
eventlog 60 -100
reattach 60 {"exec":{"test":{"run_duration":"50s"}}}
wait 60 release=all!
print 60
R 61 0
eventlog 61 -0.5
mark
reattach 61 {"exec":{"test":{"run_duration":"1.5s"}}}
wait 61 release=all!
elapsed 0.8 10
print 61
R 62 0
eventlog 62 0
reattach 62 {"exec":{"test":{"run_duration":"50s","reattach_finish":1}}}
wait 62 release=all!
print 62
R 63 0
start 63 {"exec":{"test":{"run_duration":"10s"}}}
wait 63 start
reattach 63 {"exec":{"test":{"run_duration":"10s"}}}
wait 63 start start
exception 63 cancel 0
wait 63 !
print 63
EOF
cat >reattach.expected <<EOF
hello job-exec
60: start finish=0 release=all!
elapsed ok
61: start finish=0 release=all!
62: start finish=0 release=all!
63: start start finish=9 release=all!
EOF
test_expect_success 'reattach: finish if run_duration elapsed, else the time left' '
	run_exec reattach &&
	test_cmp reattach.expected reattach.out
'

# A reattach carrying the finish the job manager heard (the instance
# stopped before the final release; the guest namespace is gone): no
# shells are looked for, the job is finished again with that status,
# its exec.eventlog says complete, and everything is released.  jobspec
# {} is real execution, and this instance has no exec agents to ask.
cat >heard.script <<EOF
R 80 0
eventlog 80 -1
raw {"id":80,"userid":0,"jobspec":{},"reattach":true,"finish":768}
wait 80 release=all!
print 80
raw {"id":81,"userid":0,"jobspec":{},"reattach":false,"finish":0}
raw {"id":81,"userid":0,"jobspec":{},"reattach":true,"finish":-1}
waiterr 2
EOF
test_expect_success 'reattach with the finish heard: finished again, released' '
	run_exec heard &&
	grep "^80: finish=768 release=all!\$" heard.out &&
	test $(grep -c "^error 71 malformed start request" heard.out) = 2 &&
	flux kvs get $(flux job id --to=kvs 80).guest.exec.eventlog >heard.log &&
	jq -r .name heard.log | tr "\n" " " >heard.names &&
	test "$(cat heard.names)" = "reattach complete done " &&
	jq -se "map(select(.name == \"complete\")) | .[0].context.status == 768" \
		heard.log &&
	flux dmesg | grep "80: reattach: its shells completed (status 768)"
'

cat >bad.script <<EOF
rawns {"id":70,"userid":0,"jobspec":{},"reattach":false}
raw [1]
raw {"id":70}
raw {"id":70,"userid":0,"jobspec":[],"reattach":false}
raw {"id":70,"userid":0,"jobspec":{},"reattach":false,"bogus":1}
raw {"id":-5,"userid":0,"jobspec":{},"reattach":false}
raw
waiterr 7
R 71 0
start 71 {"exec":{"test":{"run_duration":"10s"}}}
wait 71 start
start 71 {"exec":{"test":{}}}
waiterr 8
critical 71 0
critical 71 3
critical 71 x
critical 72 0
exception 71 cancel 0
wait 71 !
R 73 0
start 73 {"exec":{"test":{}}}
wait 73 !
print 73
EOF
test_expect_success 'bad start requests get EPROTO/EEXIST; the module keeps serving' '
	run_exec bad &&
	test $(grep -c "^error 71 " bad.out) -eq 7 &&
	grep "^error 71 start requires the streaming flag" bad.out &&
	grep "^error 71 malformed start request" bad.out &&
	grep "^error 17 job 71 has a start request already" bad.out &&
	grep "^critical 71: ok" bad.out &&
	grep "^critical 71: error 22 ranks: the job has shell ranks 0-0 only" bad.out &&
	grep "^critical 71: error 22 ranks:" bad.out | grep -v "shell ranks" &&
	grep "^critical 72: error 2 " bad.out &&
	grep "^73: start finish=0 release=all!" bad.out
'

test_expect_success 'job-exec.stats-get counts' '
	cat >stats.script <<-EOF &&
	R 80 0
	start 80 {"exec":{"test":{"run_duration":"0.01s"}}}
	wait 80 !
	EOF
	rm -f stats.ready &&
	$DRIVER -t 60 -r stats.ready stats.script >stats.out 2>stats.err &
	pid=$! &&
	for i in $(seq 300); do test -e stats.ready && break; sleep 0.1; done &&
	flux module load job-exec &&
	wait $pid &&
	flux module stats job-exec >stats.json &&
	flux module remove job-exec &&
	grep "\"active\": *0" stats.json &&
	grep "\"testexec\"" stats.json
'

cat >name.script <<EOF
R 90 0
start 90 {"exec":{"test":{}}}
wait 90 !
print 90
EOF
test_expect_success 'loaded under another name, job-exec registers its service' '
	run_exec name --name=exec2 "$EXEC_SO" &&
	grep "^hello job-exec" name.out &&
	grep "^90: start finish=0 release=all!" name.out
'

cat >bench.script <<EOF
bench 10000
EOF
test_expect_success 'throughput: 10000 jobs with run_duration 0' '
	run_exec bench &&
	cat bench.out &&
	grep "^bench 10000 jobs in" bench.out &&
	! grep "WITH ERRORS" bench.out
'

test_expect_success 'stop the instance' '
	stop_instance broker
'

test_done

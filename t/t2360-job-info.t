#!/bin/sh
test_description='job-info: lookup (keys, JSON_DECODE, CURRENT), eventlog
watches, update watches, guest access checks, and the commands flux job
eventlog, wait-event, info and status, over job data written to the KVS
with flux kvs'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc-cred"
MODULES=content,content-sqlite@0,kvs,kvs-watch
ME=$(id -u)
export TZ=UTC

key () { # ID [KEY]
	printf "job.%04x.%04x.%04x.%04x%s" 0 0 0 $1 "${2:+.$2}"
}
append () { # ID TIME NAME [CONTEXT]
	flux kvs eventlog append -t $2 $(key $1 eventlog) $3 ${4:+"$4"}
}
JOBSPEC='{"version":1,"resources":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":1}]}],"tasks":[{"command":["true"],"slot":"task","count":{"per_slot":1}}],"attributes":{"system":{"duration":60}}}'
R='{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0"}}],"nodelist":["node0"],"starttime":1700000002,"expiration":1700000062}}'
signed () { # USERID -> J of JOBSPEC signed "none"
	printf "%s.%s.none" \
		"$(printf "version\0i1\0mechanism\0snone\0userid\0i%s\0" $1 | base64 -w0)" \
		"$(printf "%s" "$JOBSPEC" | base64 -w0)"
}
newjob () { # ID USERID
	append $1 1700000001 submit \
		"{\"userid\":$2,\"urgency\":16,\"flags\":0,\"version\":1}" &&
	flux kvs put "$(key $1 jobspec)=$JOBSPEC" &&
	flux kvs put "$(key $1 J)=$(signed $2)"
}

test_expect_success 'start an instance with job-info' '
	touch keepalive
	flux start -Sbroker.modules=$MODULES \
		sh -c "echo \$FLUX_URI >uri.tmp && mv uri.tmp uri && n=0 &&
		while test -e keepalive && test \$n -lt 9000; do
			sleep 0.1; n=\$((n+1)); done" \
		>broker.log 2>&1 3>&- 4>&- &
	echo $! >broker.pid &&
	for i in $(seq 300); do test -s uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat uri) && export FLUX_URI &&
	flux module load job-info
'
test_expect_success 'write jobs 3001 (mine, complete) and 3002 (user 4242)' '
	newjob 3001 $ME &&
	append 3001 1700000001.5 validate &&
	append 3001 1700000001.6 jobspec-update \
		"{\"attributes.system.duration\":120}" &&
	append 3001 1700000002 alloc &&
	flux kvs put "$(key 3001 R)=$R" &&
	append 3001 1700000002.5 resource-update "{\"expiration\":1700000999}" &&
	append 3001 1700000003 start &&
	append 3001 1700000004 finish "{\"status\":0}" &&
	append 3001 1700000004.5 release "{\"ranks\":\"all\",\"final\":true}" &&
	append 3001 1700000005 free &&
	append 3001 1700000006 clean &&
	newjob 3002 4242 &&
	append 3002 1700000010.25 validate
'

test_expect_success 'lookup: eventlog, jobspec and R as strings' '
	$RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"eventlog\",\"jobspec\",\"R\"],\"flags\":0}" \
		>l1.json &&
	jq -e ".id == 3001 and (.eventlog | type) == \"string\"
		and (.jobspec | fromjson | .attributes.system.duration) == 60
		and (.R | fromjson | .execution.expiration) == 1700000062" l1.json &&
	jq -r .eventlog l1.json | grep -c . >n.out &&
	echo 10 >n.exp && test_cmp n.exp n.out
'
test_expect_success 'lookup: JSON_DECODE gives objects, CURRENT applies updates' '
	$RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"jobspec\",\"R\"],\"flags\":1}" >l2.json &&
	jq -e ".jobspec.attributes.system.duration == 60
		and .R.execution.expiration == 1700000062" l2.json &&
	$RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"jobspec\",\"R\"],\"flags\":3}" >l3.json &&
	jq -e ".jobspec.attributes.system.duration == 120
		and .R.execution.expiration == 1700000999" l3.json &&
	$RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"R\"],\"flags\":2}" | jq -r .R \
		| jq -e ".execution.expiration == 1700000999"
'
test_expect_success 'lookup: errors' '
	test_expect_code 2 $RPC job-info.lookup \
		"{\"id\":3999,\"keys\":[\"eventlog\"],\"flags\":0}" &&
	test_expect_code 2 $RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"nosuchkey\"],\"flags\":0}" &&
	test_expect_code 71 $RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"R\"],\"flags\":4}" &&
	test_expect_code 71 $RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[],\"flags\":0}" &&
	test_expect_code 71 $RPC job-info.lookup "{\"id\":3001}" &&
	test_expect_code 22 $RPC job-info.lookup \
		"{\"id\":3001,\"keys\":[\"../x\"],\"flags\":0}"
'
test_expect_success 'lookup: a guest sees its own jobs only' '
	$RPC -u 4242 -R 2 job-info.lookup \
		"{\"id\":3002,\"keys\":[\"jobspec\"],\"flags\":0}" >g1.json &&
	jq -e ".id == 3002" g1.json &&
	test_expect_code 1 $RPC -u 4242 -R 2 job-info.lookup \
		"{\"id\":3001,\"keys\":[\"jobspec\"],\"flags\":0}" 2>g2.err &&
	grep "another user" g2.err &&
	test_expect_code 2 $RPC -u 4242 -R 2 job-info.lookup \
		"{\"id\":3999,\"keys\":[\"jobspec\"],\"flags\":0}"
'

test_expect_success 'eventlog-watch sends each line and ends after clean' '
	$RPC -s job-info.eventlog-watch \
		"{\"id\":3001,\"path\":\"eventlog\",\"flags\":0}" >w1.out &&
	test_line_count = 10 w1.out &&
	jq -r ".event" w1.out | jq -r .name | tail -1 | grep "^clean$" &&
	jq -e ".event | endswith(\"\n\")" w1.out >/dev/null
'
test_expect_success 'eventlog-watch needs FLAG_STREAMING and good flags' '
	test_expect_code 71 $RPC job-info.eventlog-watch \
		"{\"id\":3001,\"path\":\"eventlog\",\"flags\":0}" &&
	test_expect_code 71 $RPC -s job-info.eventlog-watch \
		"{\"id\":3001,\"path\":\"eventlog\",\"flags\":8}" &&
	test_expect_code 2 $RPC -s job-info.eventlog-watch \
		"{\"id\":3999,\"path\":\"eventlog\",\"flags\":0}" &&
	test_expect_code 22 $RPC -s job-info.eventlog-watch \
		"{\"id\":3001,\"path\":\"a..b\",\"flags\":0}"
'
test_expect_success 'eventlog-watch: INITIAL_SENTINEL after the current events' '
	$RPC -s -c 3 job-info.eventlog-watch \
		"{\"id\":3002,\"path\":\"eventlog\",\"flags\":2}" >w2.out &&
	test_line_count = 3 w2.out &&
	test -z "$(tail -1 w2.out)"
'
test_expect_success 'eventlog-watch: guests, their own job only' '
	$RPC -u 4242 -R 2 -s -c 2 job-info.eventlog-watch \
		"{\"id\":3002,\"path\":\"eventlog\",\"flags\":0}" >w3.out &&
	test_line_count = 2 w3.out &&
	test_expect_code 1 $RPC -u 4242 -R 2 -s job-info.eventlog-watch \
		"{\"id\":3001,\"path\":\"eventlog\",\"flags\":0}"
'

test_expect_success 'flux job eventlog prints the events' '
	flux job eventlog 3001 >e1.out &&
	head -3 e1.out >e1.head &&
	cat >e1.exp <<-EOF &&
	1700000001.000000 submit userid=$ME urgency=16 flags=0 version=1
	1700000001.500000 validate
	1700000001.600000 jobspec-update attributes.system.duration=120
	EOF
	test_cmp e1.exp e1.head &&
	grep "^1700000004.500000 release ranks=\"all\" final=true$" e1.out &&
	test_line_count = 10 e1.out
'
test_expect_success 'flux job eventlog: formats' '
	flux job eventlog -f json 3002 >e2.out &&
	tail -1 e2.out >e2.last &&
	echo "{\"timestamp\":1700000010.25,\"name\":\"validate\"}" >e2.exp &&
	test_cmp e2.exp e2.last &&
	flux job eventlog -T offset 3002 >e3.out &&
	printf "%s\n" "0.000000 submit userid=4242 urgency=16 flags=0 version=1" \
		"9.250000 validate" >e3.exp &&
	test_cmp e3.exp e3.out &&
	flux job eventlog -T iso 3002 | head -1 | grep "^2023-11-14T22:13:21.000000Z submit" &&
	flux job eventlog -H 3001 | head -2 >e4.out &&
	printf "%s\n" "[Nov14 22:13] submit userid=$ME urgency=16 flags=0 version=1" \
		"[  +0.500000] validate" >e4.exp &&
	test_cmp e4.exp e4.out &&
	test_must_fail flux job eventlog -f xml 3001
'
test_expect_success 'flux job eventlog: errors' '
	test_must_fail flux job eventlog 3999 2>e5.err &&
	grep "job 3999 not found" e5.err &&
	test_must_fail flux job eventlog -p exec 3001 2>e6.err &&
	grep "eventlog path guest.exec.eventlog not found" e6.err &&
	test_must_fail flux job eventlog notajob 2>e7.err &&
	grep "error parsing jobid" e7.err
'
test_expect_success 'flux job eventlog -p: a guest path in the job directory' '
	flux kvs eventlog append -t 1700000003.1 $(key 3001 guest.exec.eventlog) \
		shell.init "{\"leader-rank\":0,\"size\":1}" &&
	flux job eventlog -p exec 3001 >e8.out &&
	echo "1700000003.100000 shell.init leader-rank=0 size=1" >e8.exp &&
	test_cmp e8.exp e8.out
'

test_expect_success 'options may follow the job id, as with flux-core' '
	flux job eventlog 3001 -p exec >e9.out &&
	test_cmp e8.exp e9.out &&
	flux job eventlog 3002 -T offset >e10.out &&
	test_cmp e3.exp e10.out &&
	flux job wait-event 3001 finish -q >we0.out &&
	test_line_count = 0 we0.out &&
	flux job info 3001 -o jobspec >/dev/null &&
	test_must_fail flux job eventlog 3001 -x 2>e11.err &&
	grep "unknown option .-x." e11.err &&
	test_must_fail flux job eventlog 3001 --format 2>e12.err &&
	grep "missing argument for .--format." e12.err &&
	test_must_fail flux job eventlog 3001 -- -p exec 2>e13.err &&
	grep "expected one JOBID" e13.err
'

test_expect_success 'flux job wait-event prints the event' '
	flux job wait-event 3001 finish >we1.out &&
	echo "1700000004.000000 finish status=0" >we1.exp &&
	test_cmp we1.exp we1.out &&
	flux job wait-event -q 3001 alloc >we2.out &&
	test_line_count = 0 we2.out &&
	flux job wait-event -v 3001 validate >we3.out &&
	test_line_count = 2 we3.out
'
test_expect_success 'flux job wait-event --match-context and --count' '
	flux job wait-event -m status=0 3001 finish &&
	flux job wait-event --match-context=ranks=all 3001 release &&
	test_must_fail flux job wait-event -m status=1 3001 finish 2>we4.err &&
	grep "event .finish. never received" we4.err &&
	test_must_fail flux job wait-event -c 2 3001 alloc 2>we5.err &&
	grep "never received" we5.err &&
	test_must_fail flux job wait-event -m nokeyvalue 3001 finish
'
test_expect_success 'flux job wait-event waits for an event to come' '
	flux job wait-event -t 30 3002 alloc >we6.out &
	pid=$! &&
	sleep 0.5 &&
	append 3002 1700000020 depend &&
	append 3002 1700000021 alloc &&
	wait $pid &&
	echo "1700000021.000000 alloc" >we6.exp &&
	test_cmp we6.exp we6.out
'
test_expect_success 'flux job wait-event --timeout' '
	test_must_fail flux job wait-event -t 0.3 3002 finish 2>we7.err &&
	grep "wait-event timeout on event .finish." we7.err
'
test_expect_success 'flux job wait-event -W waits for the eventlog' '
	flux job wait-event -W -t 30 3003 submit >we8.out &
	pid=$! &&
	sleep 0.5 &&
	newjob 3003 $ME &&
	wait $pid &&
	grep "submit userid=$ME" we8.out
'
test_expect_success 'flux job eventlog --follow until the job is inactive' '
	flux job eventlog -F 3002 >f1.out &
	pid=$! &&
	sleep 0.3 &&
	append 3002 1700000030 finish "{\"status\":256}" &&
	append 3002 1700000031 clean &&
	wait $pid &&
	tail -1 f1.out | grep "^1700000031.000000 clean$" &&
	test_line_count = 6 f1.out
'
test_expect_success 'no watcher is left behind' '
	for i in $(seq 50); do
		test $($RPC job-info.stats-get | jq .watchers) = 0 && break
		sleep 0.1
	done &&
	$RPC job-info.stats-get | jq -e ".watchers == 0"
'

test_expect_success 'flux job info: current, base and original' '
	flux job info 3001 jobspec | jq -e ".attributes.system.duration == 120" &&
	flux job info --base 3001 jobspec \
		| jq -e ".attributes.system.duration == 60" &&
	flux job info --original 3001 jobspec >orig.out &&
	printf "%s\n" "$JOBSPEC" >orig.exp &&
	test_cmp orig.exp orig.out &&
	flux job info 3001 R | jq -e ".execution.expiration == 1700000999" &&
	flux job info -b 3001 R | jq -e ".execution.expiration == 1700000062" &&
	flux job info 3001 eventlog | tail -1 | grep clean &&
	flux job info 3001 J | grep "\.none$" &&
	test_must_fail flux job info 3001 nosuchkey 2>i1.err &&
	grep "not found" i1.err
'
test_expect_success 'flux job status: exit codes of finished jobs' '
	flux job status 3001 &&
	test_expect_code 1 flux job status 3002 &&
	test_expect_code 1 flux job status -v 3001 3002 2>st1.err &&
	grep "3002: exited with exit code 1" st1.err &&
	append 3003 1700000040 exception \
		"{\"type\":\"cancel\",\"severity\":0,\"note\":\"\"}" &&
	append 3003 1700000041 clean &&
	test_expect_code 1 flux job status 3003 &&
	test_expect_code 42 flux job status -e 42 3003 &&
	flux job status -j 3002 | jq -e ".[0].name == \"finish\""
'

test_expect_success 'update-lookup and update-watch of R' '
	$RPC job-info.update-lookup "{\"id\":3001,\"key\":\"R\",\"flags\":0}" \
		| jq -e ".R.execution.expiration == 1700000999" &&
	newjob 3004 $ME &&
	append 3004 1700000050 alloc &&
	flux kvs put "$(key 3004 R)=$R" &&
	$RPC -s job-info.update-watch "{\"id\":3004,\"key\":\"R\",\"flags\":0}" \
		>u1.out &
	pid=$! &&
	for i in $(seq 100); do test -s u1.out && break; sleep 0.1; done &&
	append 3004 1700000051 resource-update "{\"expiration\":1700005000}" &&
	for i in $(seq 100); do
		test $(wc -l <u1.out) = 2 && break; sleep 0.1
	done &&
	append 3004 1700000052 clean &&
	wait $pid &&
	test_line_count = 2 u1.out &&
	head -1 u1.out | jq -e ".R.execution.expiration == 1700000062" &&
	tail -1 u1.out | jq -e ".R.execution.expiration == 1700005000"
'
test_expect_success 'update-watch: errors' '
	test_expect_code 22 $RPC -s job-info.update-watch \
		"{\"id\":3001,\"key\":\"eventlog\",\"flags\":0}" &&
	test_expect_code 71 $RPC job-info.update-watch \
		"{\"id\":3001,\"key\":\"R\",\"flags\":0}" &&
	test_expect_code 71 $RPC -s job-info.update-watch \
		"{\"id\":3001,\"key\":\"R\",\"flags\":1}" &&
	test_expect_code 1 $RPC -u 4242 -R 2 job-info.update-lookup \
		"{\"id\":3001,\"key\":\"jobspec\",\"flags\":0}"
'

test_expect_success 'stop the instance' '
	rm -f keepalive &&
	wait $(cat broker.pid)
'
test_done

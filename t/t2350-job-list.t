#!/bin/sh
test_description='job-list: the RFC 43 service over a stand-in job manager
journal (t/module/journal-fake.so): list order, attributes, constraints,
list-id waits, job-stats, purge, guests and private mode, bad requests,
and resynchronization when the job manager goes away and comes back'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc-cred"
FAKE="$FLUX_BUILD_DIR/t/module/.libs/journal-fake.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch
ME=$(id -u)

# event helpers for the canned journal
ev () { # TIME NAME [CONTEXT]
	if test -n "$3"; then
		printf '{"timestamp":%s,"name":"%s","context":%s}' "$1" "$2" "$3"
	else
		printf '{"timestamp":%s,"name":"%s"}' "$1" "$2"
	fi
}
submit () { # TIME USERID
	ev $1 submit "{\"userid\":$2,\"urgency\":16,\"flags\":0,\"version\":1}"
}
jobspec () { # NAME [QUEUE]
	q=${2:+,\"queue\":\"$2\"}
	printf '{"version":1,"resources":[{"type":"node","count":2,"with":[{"type":"slot","count":1,"label":"task","with":[{"type":"core","count":2}]}]}],"tasks":[{"command":["%s"],"slot":"task","count":{"per_slot":1}}],"attributes":{"system":{"duration":60%s}}}' "$1" "$q"
}
R='{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-1"}}],"nodelist":["host[0-1]"],"starttime":1700000003,"expiration":1700003600}}'
pending () { # ID TIME USERID NAME PRIORITY [QUEUE]
	printf '{"id":%s,"events":[%s,%s,%s,%s],"jobspec":%s}\n' $1 \
		"$(submit $2 $3)" "$(ev $2.1 validate)" "$(ev $2.2 depend)" \
		"$(ev $2.3 priority "{\"priority\":$5}")" "$(jobspec $4 $6)"
}

test_expect_success 'create a canned journal' '
	{
	printf "{\"id\":1001,\"events\":[%s,%s,%s,%s,%s,%s,%s,%s,%s]," \
		"$(submit 1700000001 $ME)" "$(ev 1700000001.1 validate)" \
		"$(ev 1700000001.2 depend)" \
		"$(ev 1700000001.3 priority {\"priority\":16})" \
		"$(ev 1700000002 alloc)" "$(ev 1700000003 start)" \
		"$(ev 1700000004 finish {\"status\":0})" "$(ev 1700000005 free)" \
		"$(ev 1700000010 clean)" &&
	printf "\"jobspec\":%s,\"R\":%s}\n" "$(jobspec done1)" "$R" &&
	printf "{\"id\":1002,\"events\":[%s,%s,%s,%s]," \
		"$(submit 1700000002 $ME)" "$(ev 1700000002.1 validate)" \
		"$(ev 1700000015 exception "{\"type\":\"cancel\",\"severity\":0,\"note\":\"by me\"}")" \
		"$(ev 1700000020 clean)" &&
	printf "\"jobspec\":%s}\n" "$(jobspec canceled)" &&
	printf "{\"id\":1003,\"events\":[%s,%s,%s,%s,%s],\"jobspec\":%s,\"R\":%s}\n" \
		"$(submit 1700000003 $ME)" "$(ev 1700000003.1 validate)" \
		"$(ev 1700000003.2 depend)" \
		"$(ev 1700000003.3 priority {\"priority\":16})" \
		"$(ev 1700000004 alloc)" "$(jobspec runner)" "$R" &&
	pending 1004 1700000004 $ME pend-lo 10 &&
	pending 1005 1700000005 $ME pend-hi 20 batch &&
	printf "{\"id\":1006,\"events\":[%s,%s,%s],\"jobspec\":%s}\n" \
		"$(submit 1700000006 4242)" "$(ev 1700000006.1 validate)" \
		"$(ev 1700000006.2 dependency-add {\"description\":\"after:1003\"})" \
		"$(jobspec waiter)" &&
	printf "{\"id\":1007,\"events\":[%s,%s,%s,%s,%s],\"jobspec\":%s}\n" \
		"$(submit 1700000007 4242)" "$(ev 1700000007.1 validate)" \
		"$(ev 1700000008 alloc)" "$(ev 1700000009 finish {\"status\":256})" \
		"$(ev 1700000030 clean)" "$(jobspec failer)" &&
	echo "{\"id\":-1,\"events\":[]}"
	} >journal.txt &&
	test_line_count = 8 journal.txt &&
	jq -c . journal.txt >/dev/null
'

test_expect_success 'start an instance with the fake journal and job-list' '
	touch keepalive
	flux start -Sbroker.modules=$MODULES \
		sh -c "echo \$FLUX_URI >uri.tmp && mv uri.tmp uri && n=0 &&
		while test -e keepalive && test \$n -lt 9000; do
			sleep 0.1; n=\$((n+1)); done" \
		>broker.log 2>&1 3>&- 4>&- &
	echo $! >broker.pid &&
	for i in $(seq 300); do test -s uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat uri) && export FLUX_URI &&
	flux module load --name=job-manager $FAKE "file=$PWD/journal.txt" &&
	flux module load job-list
'

list () { # JSON-REQUEST -> ids, one per line
	$RPC job-list.list "$1" | jq -r ".jobs[].id"
}

test_expect_success 'list: pending by priority, then running, then inactive' '
	list "{\"max_entries\":0,\"attrs\":[]}" >ids.out &&
	printf "%s\n" 1005 1004 1006 1003 1007 1002 1001 >ids.exp &&
	test_cmp ids.exp ids.out
'
test_expect_success 'list: max_entries' '
	list "{\"max_entries\":3,\"attrs\":[]}" >max.out &&
	printf "%s\n" 1005 1004 1006 >max.exp &&
	test_cmp max.exp max.out
'
test_expect_success 'list: only the attributes asked for, and id' '
	$RPC job-list.list "{\"max_entries\":1,\"attrs\":[\"name\",\"queue\"]}" \
		| jq -c ".jobs[0]" >attrs.out &&
	echo "{\"id\":1005,\"name\":\"pend-hi\",\"queue\":\"batch\"}" >attrs.exp &&
	test_cmp attrs.exp attrs.out
'
test_expect_success 'list-id: the attributes of an inactive job' '
	$RPC job-list.list-id "{\"id\":1001,\"attrs\":[\"all\"]}" >1001.json &&
	jq -e ".job.state == 64 and .job.result == 1 and .job.success == true
		and .job.userid == $ME and .job.name == \"done1\"
		and .job.ntasks == 2 and .job.nnodes == 2 and .job.ncores == 4
		and .job.nodelist == \"host[0-1]\" and .job.ranks == \"[0-1]\"
		and .job.t_submit == 1700000001 and .job.t_run == 1700000002
		and .job.t_cleanup == 1700000004 and .job.t_inactive == 1700000010
		and .job.waitstatus == 0 and .job.exception_occurred == false
		and .job.duration == 60 and .job.expiration == 1700003600
		and .job.priority == 16 and .job.urgency == 16" 1001.json
'
test_expect_success 'list-id: a job canceled while pending' '
	$RPC job-list.list-id "{\"id\":1002,\"attrs\":[\"all\"]}" >1002.json &&
	jq -e ".job.result == 4 and .job.success == false
		and .job.exception_occurred == true
		and .job.exception_type == \"cancel\"
		and .job.exception_severity == 0
		and .job.exception_note == \"by me\"
		and (.job | has(\"t_run\") | not)
		and (.job | has(\"waitstatus\") | not)" 1002.json
'
test_expect_success 'list-id: a pending job has no t_run, result or nodelist' '
	$RPC job-list.list-id "{\"id\":1004,\"attrs\":[\"all\"]}" >1004.json &&
	jq -e ".job.state == 8 and .job.priority == 10
		and (.job | has(\"t_run\") or has(\"result\") or has(\"nodelist\")
			| not)" 1004.json &&
	$RPC job-list.list-id "{\"id\":1006,\"attrs\":[\"dependencies\"]}" \
		| jq -e ".job.dependencies == [\"after:1003\"]"
'
test_expect_success 'list-attrs lists every attribute' '
	$RPC job-list.list-attrs >la.json &&
	for a in userid urgency priority t_submit t_depend t_run t_cleanup \
		t_inactive state name cwd queue ntasks ncores nnodes ranks \
		nodelist success exception_occurred exception_type \
		exception_severity exception_note result waitstatus annotations \
		dependencies duration expiration; do
		jq -e ".attrs | index(\"$a\")" la.json >/dev/null || return 1
	done
'

constraint () { # CONSTRAINT -> ids
	list "{\"max_entries\":0,\"attrs\":[],\"constraint\":$1}"
}
test_expect_success 'constraint: userid' '
	constraint "{\"userid\":[4242]}" >c1.out &&
	printf "%s\n" 1006 1007 >c1.exp &&
	test_cmp c1.exp c1.out
'
test_expect_success 'constraint: states and results, and/or/not' '
	constraint "{\"states\":[\"pending\"]}" | tr "\n" " " >c2.out &&
	printf "1005 1004 1006 " >c2.exp && test_cmp c2.exp c2.out &&
	constraint "{\"results\":[\"failed\",\"canceled\"]}" | tr "\n" " " \
		>c3.out &&
	printf "1007 1002 " >c3.exp && test_cmp c3.exp c3.out &&
	constraint "{\"or\":[{\"states\":[\"run\"]},{\"results\":[1]}]}" \
		| tr "\n" " " >c4.out &&
	printf "1003 1001 " >c4.exp && test_cmp c4.exp c4.out &&
	constraint "{\"not\":[{\"states\":[\"active\"]}]}" | tr "\n" " " \
		>c5.out &&
	printf "1007 1002 1001 " >c5.exp && test_cmp c5.exp c5.out
'
test_expect_success 'constraint: name, queue, hostlist, ranks, times' '
	test "$(constraint "{\"name\":[\"runner\"]}")" = 1003 &&
	test "$(constraint "{\"queue\":[\"batch\"]}")" = 1005 &&
	test "$(constraint "{\"hostlist\":[\"host1\"]}" | wc -l)" = 2 &&
	test "$(constraint "{\"ranks\":[\"5\"]}" | wc -l)" = 0 &&
	constraint "{\"t_inactive\":[\">=1700000020\"]}" | tr "\n" " " >c6.out &&
	printf "1007 1002 " >c6.exp && test_cmp c6.exp c6.out &&
	test "$(constraint "{\"and\":[{\"t_submit\":[\">1700000004.5\"]},{\"t_submit\":[\"<1700000006.5\"]}]}" | tr "\n" " ")" = "1005 1006 "
'
test_expect_success 'since: inactive jobs before it are left out' '
	list "{\"max_entries\":0,\"attrs\":[],\"since\":1700000015.0}" \
		| tr "\n" " " >since.out &&
	printf "1005 1004 1006 1003 1007 1002 " >since.exp &&
	test_cmp since.exp since.out
'
test_expect_success 'a streaming list sends version 1 first and ends with ENODATA' '
	$RPC -s job-list.list "{\"max_entries\":0,\"attrs\":[]}" >s.out &&
	test_line_count = 1 s.out &&
	jq -e ".version == 1 and (.jobs | length) == 7" s.out
'
test_expect_success 'job-stats counts states and results' '
	$RPC job-list.job-stats "{}" >stats.json &&
	jq -e ".job_states.depend == 1 and .job_states.sched == 2
		and .job_states.run == 1 and .job_states.inactive == 3
		and .job_states.total == 7 and .successful == 1 and .failed == 1
		and .canceled == 1 and .timeout == 0
		and (.queues | length) == 1 and .queues[0].name == \"batch\"
		and .queues[0].job_states.sched == 1" stats.json
'

test_expect_success 'bad requests: EPROTO for a malformed payload' '
	test_expect_code 71 $RPC job-list.list 2>e1.err &&
	test_expect_code 71 $RPC job-list.list "{\"attrs\":[]}" &&
	test_expect_code 71 $RPC job-list.list \
		"{\"max_entries\":-1,\"attrs\":[]}" &&
	test_expect_code 71 $RPC job-list.list-id "{\"attrs\":[]}" &&
	test_expect_code 71 $RPC job-list.list-id "{\"id\":\"x\",\"attrs\":[]}"
'
test_expect_success 'bad requests: EINVAL for bad attributes and constraints' '
	test_expect_code 22 $RPC job-list.list \
		"{\"max_entries\":0,\"attrs\":[\"bogus\"]}" 2>e2.err &&
	grep "bogus is not a valid attribute" e2.err &&
	test_expect_code 22 $RPC job-list.list \
		"{\"max_entries\":0,\"attrs\":[],\"constraint\":{\"foo\":[1]}}" \
		2>e3.err &&
	grep "unknown constraint operator: foo" e3.err &&
	test_expect_code 22 $RPC job-list.list-id \
		"{\"id\":1001,\"attrs\":[],\"state\":999}"
'

test_expect_success 'list-id of an unknown id is ENOENT' '
	test_expect_code 2 $RPC job-list.list-id \
		"{\"id\":424242,\"attrs\":[]}" 2>unk.err &&
	grep "unknown job id" unk.err
'
test_expect_success 'list-id waits for a job whose eventlog is in the KVS' '
	key=$(printf "job.%04x.%04x.%04x.%04x.eventlog" 0 0 0 1008) &&
	flux kvs put "$key=$(submit 1700000040 $ME)" &&
	$RPC job-list.list-id "{\"id\":1008,\"attrs\":[\"name\"]}" \
		>late.out 2>&1 &
	pid=$! &&
	sleep 0.5 &&
	test ! -s late.out &&
	$RPC job-manager.fake-post \
		"{\"id\":1008,\"events\":[$(submit 1700000040 $ME)],\"jobspec\":$(jobspec late)}" &&
	wait $pid &&
	jq -e ".job.name == \"late\"" late.out
'
test_expect_success 'list-id with state waits for the job to reach it' '
	$RPC job-list.list-id "{\"id\":1004,\"attrs\":[\"state\"],\"state\":16}" \
		>run.out 2>&1 &
	pid=$! &&
	sleep 0.5 &&
	test ! -s run.out &&
	$RPC job-manager.fake-post \
		"{\"id\":1004,\"events\":[$(ev 1700000050 alloc)],\"R\":$R}" &&
	wait $pid &&
	jq -e ".job.state == 16" run.out
'
test_expect_success 'live events move jobs between lists' '
	list "{\"max_entries\":0,\"attrs\":[],\"constraint\":{\"states\":[\"running\"]}}" \
		| tr "\n" " " >live.out &&
	printf "1004 1003 " >live.exp &&
	test_cmp live.exp live.out
'
test_expect_success 'job-purge-inactive drops purged jobs and counts them' '
	flux event pub job-purge-inactive "{\"jobs\":[1001,1002]}" &&
	for i in $(seq 50); do
		test "$(constraint "{\"states\":[\"inactive\"]}")" = 1007 && break
		sleep 0.1
	done &&
	test "$(constraint "{\"states\":[\"inactive\"]}")" = 1007 &&
	$RPC job-list.job-stats "{}" | jq -e ".inactive_purged == 2
		and .successful == 0 and .canceled == 0 and .failed == 1"
'

test_expect_success 'a guest lists every listed job (no private mode; 1008 is NEW)' '
	$RPC -u 4242 -R 2 job-list.list "{\"max_entries\":0,\"attrs\":[]}" \
		| jq -e ".jobs | length == 5" &&
	$RPC -u 4242 -R 2 job-list.list-id "{\"id\":1003,\"attrs\":[]}"
'
test_expect_success 'private mode: a guest sees only its own jobs' '
	flux module remove job-list && flux module load job-list private &&
	$RPC -u 4242 -R 2 job-list.list "{\"max_entries\":0,\"attrs\":[]}" \
		| jq -r ".jobs[].id" | tr "\n" " " >priv.out &&
	printf "1006 1007 " >priv.exp &&
	test_cmp priv.exp priv.out &&
	test_expect_code 2 $RPC -u 4242 -R 2 job-list.list-id \
		"{\"id\":1003,\"attrs\":[]}" &&
	test_expect_code 1 $RPC -u 4242 -R 2 job-list.job-stats "{}" &&
	$RPC job-list.list "{\"max_entries\":0,\"attrs\":[]}" \
		| jq -e ".jobs | length >= 7"
'
# flux-core (RFC 43) lists every user's jobs, with name, cwd and nodes, to
# any guest unless private mode is on; in private mode nothing a guest puts
# in the request widens what it sees.
test_expect_success 'private mode: userid -1 or a constraint naming the owner does not widen it' '
	$RPC -u 4242 -R 2 job-list.list \
		"{\"max_entries\":0,\"attrs\":[\"name\",\"cwd\"],\"userid\":-1}" \
		| jq -r ".jobs[].id" | tr "\n" " " >priv2.out &&
	test_cmp priv.exp priv2.out &&
	$RPC -u 4242 -R 2 job-list.list \
		"{\"max_entries\":0,\"attrs\":[\"name\"],\"constraint\":{\"userid\":[$ME]}}" \
		| jq -e ".jobs | length == 0" &&
	$RPC -u 4242 -R 2 job-list.list \
		"{\"max_entries\":0,\"attrs\":[\"name\"],\"constraint\":{\"or\":[{\"userid\":[$ME]},{\"userid\":[4242]}]}}" \
		| jq -r ".jobs[].id" | tr "\n" " " >priv3.out &&
	test_cmp priv.exp priv3.out
'

test_expect_success 'when the journal ends, job-list asks again and resyncs' '
	flux module remove job-list && flux module load job-list &&
	list "{\"max_entries\":0,\"attrs\":[]}" | wc -l >n1 &&
	$RPC job-manager.fake-end &&
	for i in $(seq 50); do
		test "$($RPC job-manager.fake-stats | jq .listeners)" = 1 && break
		sleep 0.1
	done &&
	$RPC job-list.stats-get | jq -e ".journal.streams == 2" &&
	list "{\"max_entries\":0,\"attrs\":[]}" | wc -l >n2 &&
	test_cmp n1 n2
'
test_expect_success 'a new job manager with fewer jobs: the others are dropped' '
	head -3 journal.txt >journal2.txt &&
	echo "{\"id\":-1,\"events\":[]}" >>journal2.txt &&
	flux module remove job-manager &&
	flux module load --name=job-manager $FAKE "file=$PWD/journal2.txt" &&
	for i in $(seq 100); do
		test "$(list "{\"max_entries\":0,\"attrs\":[]}" | tr "\n" " ")" \
			= "1003 1002 1001 " && break
		sleep 0.1
	done &&
	list "{\"max_entries\":0,\"attrs\":[]}" | tr "\n" " " >resync.out &&
	printf "1003 1002 1001 " >resync.exp &&
	test_cmp resync.exp resync.out &&
	$RPC job-list.job-stats "{}" | jq -e ".job_states.total == 3"
'
test_expect_success 'requests wait for the first backlog (none lost at load)' '
	flux module remove job-list &&
	flux module load job-list &&
	list "{\"max_entries\":0,\"attrs\":[]}" | wc -l >n3 &&
	test $(cat n3) = 3
'
test_expect_success 'job-list answers (empty) when there is no job manager' '
	flux module remove job-list &&
	flux module remove job-manager &&
	flux module load job-list &&
	list "{\"max_entries\":0,\"attrs\":[]}" >empty.out &&
	test_line_count = 0 empty.out &&
	flux module load --name=job-manager $FAKE "file=$PWD/journal.txt" &&
	for i in $(seq 100); do
		test $(list "{\"max_entries\":0,\"attrs\":[]}" | wc -l) = 7 && break
		sleep 0.1
	done &&
	test $(list "{\"max_entries\":0,\"attrs\":[]}" | wc -l) = 7
'

test_expect_success 'stop the instance' '
	rm -f keepalive &&
	wait $(cat broker.pid)
'
test_done

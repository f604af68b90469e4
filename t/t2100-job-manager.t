#!/bin/sh
test_description='job-manager: the RFC 21 life of a job and its events,
the scheduler side of RFC 27 and the exec side of RFC 32 (driven by the
test scheduler sched-dummy and test exec service exec-dummy), exceptions,
urgency and priority, dependencies, wait, journal, queue, memo, getattr,
purge and bad requests, on one broker'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
CRED="$FLUX_BUILD_DIR/t/rpc-cred"
SUBMIT="$FLUX_BUILD_DIR/t/jm-submit"
JOURNAL="$FLUX_BUILD_DIR/t/jm-journal"
SCHED="$FLUX_BUILD_DIR/t/module/.libs/sched-dummy.so"
EXEC="$FLUX_BUILD_DIR/t/module/.libs/exec-dummy.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch,job-manager

# jkey ID: the job's KVS directory
jkey () {
	printf "job.%04x.%04x.%04x.%04x" $(($1>>48&65535)) $(($1>>32&65535)) \
		$(($1>>16&65535)) $(($1&65535))
}
evlog () { flux kvs get $(jkey $1).eventlog; }
# names ID: the event names of a job, space separated
names () { evlog $1 | jq -r .name | tr "\n" " " | sed "s/ $//"; }
# ctx ID EVENT JQ: a value from the context of the first EVENT of job ID
ctx () { evlog $1 | jq -c "select(.name==\"$2\") | .context$3" | head -n 1; }
wait_event () {
	flux kvs eventlog wait-event -q -t 20s $(jkey $1).eventlog $2
}
jm () { $RPC job-manager.stats-get | jq -r "$1"; }
# wait_count ID EVENT N: wait until the eventlog of job ID holds N EVENTs
# (an RPC that posts an event answers before the event is committed)
wait_count () {
	_n=0
	while test "$(evlog $1 | jq -c "select(.name==\"$2\")" | wc -l)" -lt $3
	do
		_n=$((_n+1)); test $_n -lt 200 || return 1; sleep 0.1
	done
}
# wait_jm JQ VALUE: until the job-manager stat is VALUE (15s)
wait_jm () {
	for i in $(seq 150); do
		test "$(jm "$1")" = "$2" && return 0
		sleep 0.1
	done
	echo "job-manager $1 is $(jm "$1"), not $2" >&2
	return 1
}
sched () { $RPC sched-dummy.stats | jq -c -r "$1"; }
# wait_sched JQ VALUE: until the sched-dummy stat is VALUE (15s)
wait_sched () {
	for i in $(seq 150); do
		test "$(sched "$1")" = "$2" && return 0
		sleep 0.1
	done
	echo "sched-dummy $1 is $(sched "$1"), not $2" >&2
	return 1
}
execstat () { $RPC exec-dummy.stats | jq -c -r "$1"; }
drain () { timeout 30 $RPC job-manager.drain >/dev/null; }
# load_sched ARGS: (re)load sched-dummy and wait until it is ready
load_sched () {
	flux module remove -f sched-dummy &&
	flux module load $SCHED "$@" &&
	wait_jm .alloc.ready true
}
load_exec () {
	flux module remove -f exec-dummy &&
	flux module load $EXEC "$@" &&
	wait_jm .exec.service exec-dummy
}
# note ID: the note of the first exception of job ID
note () {
	evlog $1 | jq -r "select(.name==\"exception\") | .context.note" | head -n 1
}
# jobspec [EXEC_TEST_JSON [SCHED_KNOB [DEPENDENCIES_JSON]]]
jobspec () {
	_t=${1:-}; test -n "$_t" || _t="{}"
	jq -cn --argjson t "$_t" --arg s "${2:-}" \
		--argjson d "${3:-null}" '{version:1,
		resources:[{type:"slot",count:1,label:"task",
			with:[{type:"core",count:1}]}],
		tasks:[{command:["true"],slot:"task",count:{per_slot:1}}],
		attributes:{system:({duration:0, exec:{test:$t}}
			+ (if $s != "" then {test:{sched:$s}} else {} end)
			+ (if $d != null then {dependencies:$d} else {} end))}}'
}

test_expect_success 'start an instance with the job manager' '
	touch keepalive &&
	flux start -s 1 -Sbroker.modules=$MODULES \
		sh -c "echo \$FLUX_URI >uri.tmp && mv uri.tmp uri && n=0 &&
		while test -e keepalive && test \$n -lt 9000; do
			sleep 0.1; n=\$((n+1)); done" \
		>broker.log 2>&1 3>&- 4>&- &
	echo $! >broker.pid &&
	for i in $(seq 300); do test -s uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat uri) && export FLUX_URI &&
	flux module list | grep job-manager
'
test_expect_success 'an empty job manager' '
	test "$(jm .active_jobs)" = 0 &&
	test "$(jm .inactive_jobs)" = 0 &&
	$RPC job-manager.getinfo "{}" >info.out &&
	test "$(jq .max_jobid info.out)" = 0 &&
	test "$(jm .alloc.ready)" = false &&
	test "$(jm .exec.service)" = null
'

#
# The life of a job, step by step
#
test_expect_success 'without a scheduler a job waits in SCHED' '
	id=$($SUBMIT) && echo $id >life.id &&
	wait_event $id priority &&
	test "$(names $id)" = "submit validate depend priority" &&
	wait_jm .states.sched 1 &&
	$RPC job-manager.alloc-query "{}" >aq.out &&
	test "$(jq -c . aq.out)" = "{\"queue_length\":1,\"alloc_pending\":0,\"running\":0}"
'
test_expect_success 'getinfo reports the largest job id' '
	test "$($RPC job-manager.getinfo "{}" | jq .max_jobid)" = $(cat life.id)
'
test_expect_success 'the submit and priority events carry the RFC 21 keys' '
	id=$(cat life.id) &&
	test "$(ctx $id submit | jq -c "keys")" = \
		"[\"flags\",\"urgency\",\"userid\",\"version\"]" &&
	test "$(ctx $id submit .version)" = 1 &&
	test "$(ctx $id submit .userid)" = $(id -u) &&
	test "$(ctx $id priority)" = "{\"priority\":16}" &&
	test "$(evlog $id | jq -c "select(.name==\"validate\") | .context")" = null
'
test_expect_success 'a scheduler says hello and ready: the job is allocated' '
	load_sched mode=unlimited &&
	id=$(cat life.id) &&
	wait_event $id alloc &&
	test "$(jm .alloc.mode)" = unlimited &&
	test "$(ctx $id alloc .annotations.sched.resource_summary)" = "\"rank0/core0\"" &&
	flux kvs get $(jkey $id).R | jq -e .execution.R_lite &&
	wait_jm .states.run 1
'
test_expect_success 'without an exec service the job waits in RUN, not started' '
	sleep 0.2 &&
	id=$(cat life.id) &&
	test "$(names $id)" = "submit validate depend priority alloc"
'
test_expect_success 'an exec service says hello: the job runs to INACTIVE' '
	load_exec &&
	id=$(cat life.id) &&
	wait_event $id clean &&
	test "$(names $id)" = \
		"submit validate depend priority alloc start finish release free clean" &&
	test "$(ctx $id finish)" = "{\"status\":0}" &&
	test "$(ctx $id release)" = "{\"ranks\":\"all\",\"final\":true}" &&
	test "$(execstat .count.with_R)" = 1 &&
	test "$(evlog $id | jq -c "select(.name==\"free\" or .name==\"clean\" or .name==\"start\") | .context")" = "$(printf "null\nnull\nnull")" &&
	wait_jm .inactive_jobs 1 &&
	test "$(jm .active_jobs)" = 0
'
test_expect_success 'event timestamps never go backwards' '
	evlog $(cat life.id) | jq .timestamp >ts.out &&
	sort -n ts.out >ts.sorted && test_cmp ts.sorted ts.out
'
test_expect_success 'the scheduler freed what it allocated' '
	test "$(sched .allocated)" = 0 &&
	test "$(sched .count.free)" = 1
'
test_expect_success 'many jobs go through; events are batched in commits' '
	c0=$(jm .kvs.commits) &&
	$SUBMIT -q -n 200 &&
	drain &&
	test "$(jm .inactive_jobs)" = 201 &&
	c1=$(jm .kvs.commits) &&
	echo "commits: $((c1 - c0)) for 1800 events, max batch $(jm .kvs.max_batch)" &&
	test $((c1 - c0)) -lt 900 &&
	test "$(jm .kvs.max_batch)" -gt 2
'
test_expect_success 'the events of a job in one commit are one append' '
	id=$(cat life.id) &&
	nev=$(evlog $id | wc -l) &&
	nblobs=$(flux kvs get --treeobj $(jkey $id).eventlog | jq ".data | length") &&
	echo "$nev events in $nblobs blobs" &&
	test $nblobs -lt $nev &&
	$SUBMIT -n 50 >many.ids &&
	drain &&
	for id in $(cat many.ids); do
		test "$(names $id)" = \
			"submit validate depend priority alloc start finish release free clean" ||
		return 1
	done
'
test_expect_success 'R may come in the SUCCESS response (the job manager writes it)' '
	load_sched mode=unlimited r-in-response &&
	id=$($SUBMIT) &&
	wait_event $id clean &&
	flux kvs get $(jkey $id).R | jq -e ".execution.R_lite[0].rank == \"0\"" &&
	load_sched mode=unlimited
'

#
# Exceptions and the exec service's responses
#
test_expect_success 'a failing job: finish status 256' '
	id=$($SUBMIT "$(jobspec "{\"status\":256}")") &&
	wait_event $id clean &&
	test "$(ctx $id finish)" = "{\"status\":256}"
'
test_expect_success 'an exec exception of severity 0 ends the job' '
	id=$($SUBMIT "$(jobspec "{\"exception\":{\"type\":\"test\",\"severity\":0,\"note\":\"boom\"},\"run_duration\":10}")") &&
	wait_event $id clean &&
	test "$(ctx $id exception)" = \
		"{\"type\":\"test\",\"severity\":0,\"note\":\"boom\"}" &&
	test "$(names $id)" = \
		"submit validate depend priority alloc start exception finish release free clean" &&
	test "$(ctx $id finish .status)" = 9
'
test_expect_success 'a severity 1 exception from exec changes nothing' '
	id=$($SUBMIT "$(jobspec "{\"exception\":{\"type\":\"warn\",\"severity\":1}}")") &&
	wait_event $id clean &&
	test "$(ctx $id exception)" = \
		"{\"type\":\"warn\",\"severity\":1,\"note\":\"\"}" &&
	test "$(ctx $id finish .status)" = 0
'
test_expect_success 'partial release: a non-final release before the final one' '
	f0=$(sched .count.free) &&
	id=$($SUBMIT "$(jobspec "{\"partial\":true}")") &&
	wait_event $id clean &&
	test "$(sched .count.free)" = $((f0 + 1)) &&
	test "$(jm .alloc[\"partial-ok\"])" = false &&
	test "$(jm .alloc.sent.free_partial)" = 0 &&
	evlog $id | jq -c "select(.name==\"release\") | .context" >rel.out &&
	printf "%s\n" "{\"ranks\":\"0\",\"final\":false}" \
		"{\"ranks\":\"all\",\"final\":true}" >rel.exp &&
	test_cmp rel.exp rel.out
'
test_expect_success 'a partial release said again is ignored quietly' '
	id=$($SUBMIT "$(jobspec "{\"partial\":true,\"repeat-partial\":true}")") &&
	wait_event $id clean &&
	evlog $id | jq -c "select(.name==\"release\") | .context" >rel2.out &&
	test_cmp rel.exp rel2.out &&
	flux dmesg >rel2.dmesg &&
	grep "$id: start: release ignored: ranks 0 were already released" \
		rel2.dmesg >rel2.lines &&
	! grep -v "job-manager.debug" rel2.lines
'
test_expect_success 'a final release before finish is an exec exception' '
	id=$($SUBMIT "$(jobspec "{\"release-first\":true}")") &&
	wait_event $id clean &&
	test "$(ctx $id exception .type)" = "\"exec\"" &&
	test "$(names $id)" = \
		"submit validate depend priority alloc start release exception free clean"
'
test_expect_success 'a job that never sends start still finishes' '
	id=$($SUBMIT "$(jobspec "{\"nostart\":true}")") &&
	wait_event $id clean &&
	test "$(names $id)" = \
		"submit validate depend priority alloc finish release free clean"
'
test_expect_success 'cancel a running job: exec kills it (status 9), CANCELED' '
	k0=$(execstat .count.killed) &&
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	test "$(execstat .running)" = "[$id]" &&
	$RPC job-manager.raise "{\"id\":$id,\"type\":\"cancel\",\"severity\":0,\"note\":\"stop\"}" &&
	wait_event $id clean &&
	test "$(ctx $id exception)" = \
		"{\"type\":\"cancel\",\"severity\":0,\"note\":\"stop\"}" &&
	test "$(ctx $id finish .status)" = 9 &&
	test "$(execstat .count.killed)" = $((k0 + 1))
'
test_expect_success 'raise publishes job-exception' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	{ flux event sub -c 1 job-exception >exc.out & } &&
	pid=$! && sleep 0.3 &&
	$RPC job-manager.raise "{\"id\":$id,\"type\":\"hey\",\"severity\":3}" &&
	wait $pid &&
	cut -f2 exc.out | jq -c . >exc.json &&
	test "$(cat exc.json)" = "{\"id\":$id,\"type\":\"hey\",\"severity\":3}" &&
	$RPC exec-dummy.finish "{\"id\":$id}" &&
	wait_event $id clean
'
test_expect_success 'raise: bad requests' '
	test_expect_code 2 $RPC job-manager.raise "{\"id\":1,\"type\":\"cancel\",\"severity\":0}" 2>r1.err &&
	grep "unknown or inactive job id" r1.err &&
	id=$(cat life.id) &&
	test_expect_code 2 $RPC job-manager.raise "{\"id\":$id,\"type\":\"cancel\",\"severity\":0}" &&
	test_expect_code 71 $RPC job-manager.raise "{\"id\":$id,\"type\":\"a b\",\"severity\":0}" &&
	test_expect_code 71 $RPC job-manager.raise "{\"id\":$id,\"type\":\"a=b\",\"severity\":0}" &&
	test_expect_code 71 $RPC job-manager.raise "{\"id\":$id,\"type\":\"x\",\"severity\":8}" &&
	test_expect_code 71 $RPC job-manager.raise "{\"id\":$id}"
'

#
# RFC 27 paths
#
test_expect_success 'a job the scheduler denies gets an alloc exception' '
	id=$($SUBMIT "$(jobspec "{}" deny)") &&
	wait_event $id clean &&
	test "$(ctx $id exception)" = \
		"{\"type\":\"alloc\",\"severity\":0,\"note\":\"denied by sched-dummy\"}" &&
	test "$(names $id)" = \
		"submit validate depend priority exception clean"
'
test_expect_success 'cancel a job waiting for resources: sched.cancel, CANCEL' '
	c0=$(sched .count.cancel) && n0=$(jm .alloc.sent.annotate) &&
	id=$($SUBMIT "$(jobspec "{}" hold)") &&
	wait_jm .alloc.sent.annotate $((n0 + 1)) &&
	wait_sched .pending "[$id]" &&
	$RPC job-manager.raise "{\"id\":$id,\"type\":\"cancel\",\"severity\":0}" &&
	wait_event $id clean &&
	test "$(sched .count.cancel)" = $((c0 + 1)) &&
	test "$(names $id)" = "submit validate depend priority exception clean" &&
	test "$(jm .alloc.alloc_pending)" = 0
'
test_expect_success 'annotations reach the journal, not the eventlog' '
	{ $JOURNAL "{\"allow\":{\"annotations\":1}}" >ann.out & } &&
	pid=$! &&
	wait_jm .journal.listeners 1 &&
	id=$($SUBMIT "$(jobspec "{}" hold)") &&
	for i in $(seq 100); do grep -q reason_pending ann.out && break; sleep 0.1; done &&
	grep "\"id\":$id" ann.out | grep "held by sched-dummy" &&
	$RPC job-manager.raise "{\"id\":$id,\"type\":\"cancel\",\"severity\":0}" &&
	wait_event $id clean &&
	for i in $(seq 100); do
		test $(grep -c "\"id\":$id" ann.out) = 2 && break; sleep 0.1
	done &&
	grep "\"id\":$id" ann.out | tail -n 1 | jq -e ".events[0].context.annotations == null" &&
	kill $pid && wait_jm .journal.listeners 0 &&
	! evlog $id | grep annotations
'
test_expect_success 'urgency 0 holds a job: priority 0, never allocated' '
	a0=$(jm .alloc.sent.alloc) &&
	id=$($SUBMIT -u 0) && echo $id >held.id &&
	wait_event $id priority &&
	test "$(ctx $id priority)" = "{\"priority\":0}" &&
	sleep 0.3 &&
	test "$(jm .alloc.sent.alloc)" = $a0 &&
	test "$(jm .alloc.queue_length)" = 0 &&
	test "$(jm .states.sched)" = 1
'
test_expect_success 'raising the urgency releases it (old_urgency, priority event)' '
	id=$(cat held.id) &&
	$RPC job-manager.urgency "{\"id\":$id,\"urgency\":20}" >urg.out &&
	test "$(jq -c . urg.out)" = "{\"old_urgency\":0}" &&
	wait_event $id clean &&
	evlog $id | jq -c "select(.name==\"urgency\" or .name==\"priority\") | [.name,.context]" >urg.events &&
	printf "%s\n" "[\"priority\",{\"priority\":0}]" \
		"[\"urgency\",{\"urgency\":20,\"userid\":$(id -u)}]" \
		"[\"priority\",{\"priority\":20}]" >urg.exp &&
	test_cmp urg.exp urg.events
'
test_expect_success 'urgency 31 expedites: priority 4294967295' '
	id=$($SUBMIT -u 31) &&
	wait_event $id clean &&
	test "$(ctx $id priority)" = "{\"priority\":4294967295}"
'
test_expect_success 'urgency: bad requests' '
	test_expect_code 22 $RPC job-manager.urgency "{\"id\":$(cat life.id),\"urgency\":32}" &&
	test_expect_code 22 $RPC job-manager.urgency "{\"id\":1,\"urgency\":3}" &&
	test_expect_code 22 $RPC job-manager.urgency "{\"id\":$(cat life.id),\"urgency\":3}" 2>inact.err &&
	grep inactive inact.err &&
	test_expect_code 71 $RPC job-manager.urgency "{\"id\":1}" &&
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	test_expect_code 22 $RPC job-manager.urgency "{\"id\":$id,\"urgency\":3}" 2>alloc.err &&
	grep "allocated" alloc.err &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id clean
'
test_expect_success 'alloc order: priority first, then submit order' '
	load_sched mode=limited limit=1 &&
	flux queue stop &&
	a=$($SUBMIT -u 5) && b=$($SUBMIT -u 20) && c=$($SUBMIT -u 10) &&
	d=$($SUBMIT -u 20) &&
	wait_jm .alloc.queue_length 4 &&
	flux queue start &&
	drain &&
	for j in $a $b $c $d; do
		echo "$(evlog $j | jq "select(.name==\"alloc\") | .timestamp") $j"
	done | sort -n | cut -d" " -f2 >order.out &&
	printf "%s\n" $b $d $c $a >order.exp &&
	test_cmp order.exp order.out
'
test_expect_success 'limited mode: no more than limit sched.alloc in flight' '
	load_sched mode=limited limit=2 &&
	a=$($SUBMIT "$(jobspec "{}" hold)") &&
	b=$($SUBMIT "$(jobspec "{}" hold)") &&
	c=$($SUBMIT "$(jobspec "{}" hold)") &&
	wait_jm .alloc.alloc_pending 2 &&
	wait_sched .pending "[$a,$b]" &&
	sleep 0.2 &&
	test "$(jm .alloc.alloc_pending)" = 2 &&
	test "$(jm .alloc.queue_length)" = 1 &&
	echo "$a $b $c" >holds
'
test_expect_success 'prioritize: a new priority of a job in flight is sent' '
	set -- $(cat holds) &&
	$RPC job-manager.urgency "{\"id\":$2,\"urgency\":18}" &&
	wait_sched .last_prioritize "[[$2,18]]" &&
	test "$(sched .pending)" = "[$2,$1]"
'
test_expect_success 'limited mode: an expedited job makes room (sched.cancel)' '
	set -- $(cat holds) &&
	r0=$(jm .alloc.sent.room) &&
	x=$($SUBMIT -u 31) &&
	wait_event $x clean &&
	test $(jm .alloc.sent.room) -gt $r0 &&
	wait_jm .alloc.alloc_pending 2
'
test_expect_success 'holding a job in flight cancels its request' '
	set -- $(cat holds) &&
	wait_jm .alloc.alloc_pending 2 &&
	pend=$(sched .pending) &&
	first=$(echo $pend | jq ".[0]") &&
	$RPC job-manager.urgency "{\"id\":$first,\"urgency\":0}" &&
	for i in $(seq 100); do
		echo $(sched .pending) | jq -e "index($first) == null" && break
		sleep 0.1
	done &&
	echo $(sched .pending) | jq -e "index($first) == null"
'
test_expect_success 'queue stop cancels the requests in flight' '
	flux queue stop &&
	wait_jm .alloc.alloc_pending 0 &&
	wait_sched .pending "[]" &&
	flux cancel $(cat holds) &&
	drain && flux queue start
'
test_expect_success 'a scheduler error suspends scheduling' '
	load_sched mode=unlimited &&
	e=$($SUBMIT "$(jobspec "{}" error)") &&
	wait_jm .alloc.ready false &&
	flux dmesg | grep "sched.alloc: sched-dummy: injected error" &&
	id=$($SUBMIT) &&
	wait_event $id priority && sleep 0.3 &&
	test "$(names $id)" = "submit validate depend priority" &&
	echo "$e $id" >suspended
'
test_expect_success 'a job whose request was lost can still be canceled' '
	set -- $(cat suspended) &&
	$RPC job-manager.raise "{\"id\":$1,\"type\":\"cancel\",\"severity\":0}" &&
	wait_event $1 exception &&
	test "$(jm .states.cleanup)" = 1
'
test_expect_success 'a new scheduler resumes: requeued and canceled jobs end' '
	set -- $(cat suspended) &&
	load_sched mode=unlimited &&
	wait_event $1 clean &&
	wait_event $2 clean &&
	test "$(names $1)" = "submit validate depend priority exception clean"
'
test_expect_success 'sched-hello reports the jobs holding resources' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	load_sched mode=unlimited &&
	test "$(sched .hello)" = "[$id]" &&
	test "$(sched .allocated)" = 1 &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id clean &&
	test "$(sched .allocated)" = 0
'
test_expect_success 'a job that ends while no scheduler is loaded is freed later' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	flux module remove sched-dummy &&
	$RPC exec-dummy.finish "{\"id\":$id}" &&
	wait_event $id release &&
	wait_jm .alloc.ready false &&
	flux dmesg | grep "scheduler: disconnected: suspending scheduling" &&
	test "$(jm .states.cleanup)" = 1 &&
	load_sched mode=unlimited &&
	wait_event $id clean &&
	test "$(sched .hello)" = "[$id]"
'
test_expect_success 'sched-hello and sched-ready: bad requests' '
	test_expect_code 71 $RPC job-manager.sched-hello &&
	test_expect_code 71 $RPC job-manager.sched-ready "{\"mode\":\"fast\"}" &&
	test_expect_code 71 $RPC job-manager.sched-ready "{\"mode\":\"limited\"}" &&
	test_expect_code 71 $RPC job-manager.sched-ready "{\"mode\":\"limited\",\"limit\":0}" &&
	test_expect_code 71 $RPC job-manager.sched-ready "[]"
'

#
# RFC 32 paths
#
test_expect_success 'exec-hello is refused while starts are outstanding' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	test_must_fail flux module load --name=exec-two $EXEC &&
	flux dmesg | grep "jobs have start requests outstanding" &&
	test "$(jm .exec.service)" = exec-dummy &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id clean
'
test_expect_success 'with no start outstanding a new exec service overrides' '
	flux module load --name=exec-two $EXEC &&
	wait_jm .exec.service exec-two &&
	id=$($SUBMIT) && wait_event $id clean &&
	test "$($RPC exec-two.stats | jq .count.start)" = 1 &&
	flux module remove exec-two &&
	load_exec
'
test_expect_success 'an exec service that is gone does not block a new hello' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	flux module remove exec-dummy &&
	load_exec &&
	wait_event $id clean &&
	test "$(execstat .count.reattach)" = 1 &&
	test "$(jm .exec.count.reattach)" -ge 1
'
test_expect_success 'the reattach of a job whose finish was heard says its status' '
	heard=$(execstat .count.heard) &&
	test "$heard" = 0 &&
	id=$($SUBMIT "$(jobspec "{\"linger\":true,\"status\":768}")") &&
	wait_event $id finish &&
	flux module remove exec-dummy &&
	load_exec &&
	wait_event $id clean &&
	test "$(execstat .count.heard)" = 1 &&
	test "$(execstat .count.reattach)" = 1 &&
	evlog $id | grep "\"finish\"" | jq -se "length == 1 and .[0].context.status == 768"
'
# err_cleanup: after the exec error test, pass or fail: its job ended and
# exec-dummy loaded again, saying what it found
err_cleanup () {
	_id=$(cat err.id 2>/dev/null)
	if test -n "$_id" && ! evlog $_id | grep -q "\"clean\""; then
		echo "err_cleanup: job $_id: $(names $_id)"
		$RPC job-manager.raise \
			"{\"id\":$_id,\"type\":\"cancel\",\"severity\":0}"
		wait_event $_id clean || flux dmesg | tail -20
	fi
	load_exec
}
# The job manager sends start as soon as it posts alloc, before that event
# is committed: exec-dummy's error can come back (and the service be
# dropped) while the alloc event is still on its way to the KVS, so wait
# for it before reading the eventlog.  The job is canceled and exec-dummy
# reloaded even when a step fails, or every later test fails with it.
test_expect_success 'an exec error response is fatal to the exec service' '
	test_when_finished "err_cleanup" &&
	id=$($SUBMIT "$(jobspec "{\"error\":true}")") && echo $id >err.id &&
	echo "step 1: the exec service is dropped" &&
	wait_jm .exec.service null &&
	echo "step 2: the job manager says why" &&
	flux dmesg | grep "exec service exec-dummy: start failed" &&
	echo "step 3: the job is allocated, not started" &&
	wait_event $id alloc &&
	test "$(names $id)" = "submit validate depend priority alloc" &&
	echo "step 4: a cancel ends it" &&
	$RPC job-manager.raise "{\"id\":$id,\"type\":\"cancel\",\"severity\":0}" &&
	wait_event $id clean &&
	test "$(names $id)" = \
		"submit validate depend priority alloc exception free clean"
'
test_expect_success 'exec-hello: bad requests' '
	test_expect_code 71 $RPC job-manager.exec-hello "{}" &&
	test_expect_code 71 $RPC job-manager.exec-hello "{\"service\":\"\"}" &&
	test_expect_code 71 $RPC job-manager.exec-hello "{\"service\":\"a b\"}"
'
# a removed module is noticed at its next request (ENOSYS)
test_expect_success 'prolog: start waits for prolog-finish' '
	flux module remove exec-dummy &&
	id=$($SUBMIT) && wait_event $id alloc &&
	wait_jm .exec.service null &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"prolog-start\",\"context\":{\"description\":\"p\"}}" &&
	load_exec && sleep 0.3 &&
	test "$(names $id)" = "submit validate depend priority alloc prolog-start" &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"prolog-finish\",\"context\":{\"description\":\"p\",\"status\":0}}" &&
	wait_event $id clean
'
test_expect_success 'a failed prolog is a fatal prolog exception' '
	flux module remove exec-dummy &&
	id=$($SUBMIT) && wait_event $id alloc &&
	wait_jm .exec.service null &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"prolog-start\",\"context\":{\"description\":\"p\"}}" &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"prolog-finish\",\"context\":{\"description\":\"p\",\"status\":1}}" &&
	wait_event $id clean &&
	test "$(ctx $id exception .type)" = "\"prolog\"" &&
	load_exec
'
test_expect_success 'epilog: free waits for epilog-finish' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $id start &&
	flux module remove sched-dummy &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id release &&
	wait_jm .alloc.ready false &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"epilog-start\",\"context\":{\"description\":\"e\"}}" &&
	load_sched mode=unlimited && sleep 0.3 &&
	test "$(names $id)" = \
		"submit validate depend priority alloc start finish release epilog-start" &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"epilog-finish\",\"context\":{\"description\":\"e\",\"status\":0}}" &&
	wait_event $id clean
'
test_expect_success 'post-event: refused events and bad requests' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $id start &&
	test_expect_code 22 $RPC job-manager.post-event "{\"id\":$id,\"name\":\"clean\"}" &&
	test_expect_code 22 $RPC job-manager.post-event "{\"id\":$id,\"name\":\"epilog-start\",\"context\":{\"description\":\"e\"}}" 2>ep.err &&
	grep "not allowed in state RUN" ep.err &&
	test_expect_code 22 $RPC job-manager.post-event "{\"id\":$id,\"name\":\"prolog-start\",\"context\":{}}" &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"debug.hello\",\"context\":{\"x\":1}}" &&
	$RPC job-manager.post-event "{\"id\":$id,\"name\":\"set-flags\",\"context\":{\"flags\":[\"debug\"]}}" &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id clean &&
	evlog $id | grep debug.hello
'

#
# Dependencies (RFC 26)
#
test_expect_success 'afterany: waits for the antecedent to end' '
	a=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $a start &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afterany\",\"value\":\"$a\"}]")") &&
	wait_event $b dependency-add &&
	test "$(ctx $b dependency-add)" = "{\"description\":\"afterany=$a\"}" &&
	sleep 0.2 && test "$(names $b)" = "submit validate dependency-add" &&
	$RPC job-manager.raise "{\"id\":$a,\"type\":\"cancel\",\"severity\":0}" &&
	wait_event $b clean &&
	test "$(names $b)" = \
		"submit validate dependency-add dependency-remove depend priority alloc start finish release free clean"
'
test_expect_success 'afterok on a failed job: a depend exception' '
	a=$($SUBMIT "$(jobspec "{\"status\":256,\"run_duration\":0.5}")") &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afterok\",\"value\":\"$a\"}]")") &&
	wait_event $b clean &&
	test "$(ctx $b exception .type)" = "\"depend\"" &&
	note $b | grep "antecedent job failed"
'
test_expect_success 'afterok on a job that completed already: no dependency' '
	a=$($SUBMIT) && wait_event $a clean &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afterok\",\"value\":\"$a\"}]")") &&
	wait_event $b clean &&
	test "$(names $b)" = \
		"submit validate depend priority alloc start finish release free clean"
'
test_expect_success 'afternotok: satisfied by failure, fails on success' '
	a=$($SUBMIT "$(jobspec "{\"status\":256}")") && wait_event $a clean &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afternotok\",\"value\":\"$a\"}]")") &&
	wait_event $b clean && test "$(ctx $b finish .status)" = 0 &&
	c=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afternotok\",\"value\":\"$b\"}]")") &&
	wait_event $c clean && note $c | grep succeeded
'
test_expect_success 'after: satisfied when the antecedent starts' '
	a=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $a start &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"after\",\"value\":\"$a\"}]")") &&
	wait_event $b clean &&
	c=$($SUBMIT -u 0 "$(jobspec "{}")") && wait_event $c priority &&
	d=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"after\",\"value\":\"$c\"}]")") &&
	wait_event $d dependency-add &&
	$RPC job-manager.raise "{\"id\":$c,\"type\":\"cancel\",\"severity\":0}" &&
	wait_event $d clean && note $d | grep "never started" &&
	$RPC exec-dummy.finish "{\"id\":$a}" && wait_event $a clean
'
# t is 3 to 4 s ahead: under load a submission can take more than a
# second, and a begin time already past at validation adds no dependency
test_expect_success 'begin-time: waits until then' '
	t=$(($(date +%s) + 4)) &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"begin-time\",\"value\":\"$t\"}]")") &&
	wait_event $b dependency-add &&
	test "$(ctx $b dependency-add)" = "{\"description\":\"begin-time=$t\"}" &&
	wait_event $b clean &&
	test "$(ctx $b dependency-remove)" = "{\"description\":\"begin-time=$t\"}" &&
	test $(evlog $b | jq "select(.name==\"dependency-remove\") | .timestamp | floor") -ge $t
'
test_expect_success 'several dependencies, and one that is met already' '
	a=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $a start &&
	p=$($SUBMIT) && wait_event $p clean &&
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afterany\",\"value\":\"$a\"},{\"scheme\":\"afterok\",\"value\":\"$p\"},{\"scheme\":\"begin-time\",\"value\":\"1\"}]")") &&
	wait_event $b dependency-add &&
	test $(evlog $b | grep -c dependency-add) = 1 &&
	$RPC exec-dummy.finish "{\"id\":$a}" && wait_event $b clean
'
test_expect_success 'bad dependencies: depend exceptions with a reason' '
	b=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"string\",\"value\":\"x\"}]")") &&
	wait_event $b clean &&
	test "$(note $b)" = "dependency scheme \"string\" is not supported" &&
	c=$($SUBMIT "$(jobspec "{}" "" "[{\"scheme\":\"afterany\",\"value\":\"12345\"}]")") &&
	wait_event $c clean && note $c | grep "job not found" &&
	d=$($SUBMIT "$(jobspec "{}" "" "{\"scheme\":\"afterany\"}")") &&
	wait_event $d clean && note $d | grep "must be an array"
'

#
# wait
#
test_expect_success 'wait for a waitable job' '
	id=$($SUBMIT -f 4) &&
	$RPC job-manager.wait "{\"id\":$id}" >w.out &&
	test "$(jq -c . w.out)" = "{\"id\":$id,\"success\":true,\"errstr\":\"\"}"
'
test_expect_success 'wait for any waitable job, a zombie first' '
	id=$($SUBMIT -f 4 "$(jobspec "{\"status\":512}")") &&
	wait_event $id clean &&
	$RPC job-manager.wait "{\"id\":-1}" >w2.out &&
	test "$(jq -c . w2.out)" = \
		"{\"id\":$id,\"success\":false,\"errstr\":\"task(s) exited with exit code 2\"}"
'
test_expect_success 'wait: a cancelled job reports its exception' '
	id=$($SUBMIT -f 4 "$(jobspec "{\"hang\":true}")") && wait_event $id start &&
	{ $RPC job-manager.wait "{\"id\":$id}" >w3.out & } && pid=$! &&
	wait_jm .waiters 1 &&
	$RPC job-manager.raise "{\"id\":$id,\"type\":\"cancel\",\"severity\":0,\"note\":\"bye\"}" &&
	wait $pid &&
	test "$(jq -r .errstr w3.out)" = "Fatal exception type=cancel bye"
'
test_expect_success 'wait: ECHILD when there is nothing to wait for' '
	test_expect_code 10 $RPC job-manager.wait "{\"id\":-1}" &&
	test_expect_code 10 $RPC job-manager.wait "{\"id\":$(cat life.id)}" &&
	id=$($SUBMIT -f 4) && $RPC job-manager.wait "{\"id\":$id}" &&
	test_expect_code 10 $RPC job-manager.wait "{\"id\":$id}" 2>wait.err &&
	grep "already been waited" wait.err
'
test_expect_success 'wait: one waiter per job; a disconnected waiter is dropped' '
	id=$($SUBMIT -f 4 "$(jobspec "{\"hang\":true}")") && wait_event $id start &&
	{ $RPC job-manager.wait "{\"id\":$id}" >/dev/null & } && pid=$! &&
	wait_jm .waiters 1 &&
	test_expect_code 10 $RPC job-manager.wait "{\"id\":$id}" &&
	test_expect_code 10 $RPC job-manager.wait "{\"id\":-1}" &&
	kill $pid && wait_jm .waiters 0 &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id clean &&
	$RPC job-manager.wait "{\"id\":-1}" | jq -e ".id == $id"
'

#
# journal, memo, getattr, update, kill
#
test_expect_success 'events-journal: backlog, sentinel, then each event' '
	h=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $h start &&
	{ $JOURNAL "{}" >j.out & } && pid=$! &&
	wait_jm .journal.listeners 1 &&
	id=$($SUBMIT) && wait_event $id clean &&
	for i in $(seq 100); do grep -q "\"clean\"" j.out && break; sleep 0.1; done &&
	kill $pid && wait_jm .journal.listeners 0 &&
	head -n 1 j.out | jq -e ".id == $h and (.events | length) == 6 and .jobspec.version == 1 and .R.version == 1" &&
	sed -n 2p j.out | jq -e ".id == -1 and .events == []" &&
	tail -n +3 j.out | jq -r ".events[0].name" | tr "\n" " " >j.names &&
	test "$(cat j.names)" = \
		"submit validate depend priority annotations alloc start finish release free clean " &&
	tail -n +3 j.out | jq -s -e "map(select(.events[0].name==\"submit\")) | .[0] | .jobspec.attributes.system.exec.test != null" &&
	tail -n +3 j.out | jq -s -e "map(select(.events[0].name==\"alloc\")) | .[0] | .R.execution.R_lite[0].rank == \"0\"" &&
	$RPC exec-dummy.finish "{\"id\":$h}" && wait_event $h clean
'
test_expect_success 'events-journal with full: inactive jobs from the KVS too' '
	n=$(jm .inactive_jobs) &&
	{ $JOURNAL "{\"full\":true}" >jf.out & } &&
	pid=$! &&
	for i in $(seq 100); do grep -q "\"id\":-1" jf.out && break; sleep 0.1; done &&
	kill $pid &&
	test $(grep -c "\"clean\"" jf.out) = $n &&
	grep "\"id\":$(cat life.id)" jf.out | jq -e ".jobspec.version == 1 and .R != null"
'
test_expect_success 'events-journal: deny filter, and bad requests' '
	{ $JOURNAL "{\"deny\":{\"submit\":1,\"validate\":1}}" >jd.out & } &&
	pid=$! && wait_jm .journal.listeners 1 &&
	id=$($SUBMIT) && wait_event $id clean &&
	for i in $(seq 100); do grep -q "\"clean\"" jd.out && break; sleep 0.1; done &&
	kill $pid &&
	! grep "\"submit\"" jd.out && ! grep "\"validate\"" jd.out &&
	grep "\"depend\"" jd.out &&
	test_expect_code 71 $RPC job-manager.events-journal "{}" &&
	test_expect_code 71 $RPC -s job-manager.events-journal "{\"allow\":1}"
'
test_expect_success 'events-journal-cancel ends the stream with ENODATA' '
	$JOURNAL -c 1 >jc.out &&
	test "$(tail -n 1 jc.out)" = ENODATA &&
	head -n 1 jc.out | jq -e ".id == -1" &&
	wait_jm .journal.listeners 0
'
test_expect_success 'memo: posted, merged, null removes; volatile is not logged' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $id start &&
	$RPC job-manager.memo "{\"id\":$id,\"memo\":{\"a\":1,\"b\":\"x\"}}" &&
	$RPC job-manager.memo "{\"id\":$id,\"memo\":{\"a\":null}}" &&
	$RPC job-manager.memo "{\"id\":$id,\"memo\":{\"v\":1},\"volatile\":true}" &&
	wait_count $id memo 2 &&
	evlog $id | jq -c "select(.name==\"memo\") | .context" >memo.out &&
	printf "%s\n" "{\"a\":1,\"b\":\"x\"}" "{\"a\":null}" >memo.exp &&
	test_cmp memo.exp memo.out &&
	test_expect_code 71 $RPC job-manager.memo "{\"id\":$id,\"memo\":{}}" &&
	test_expect_code 2 $RPC job-manager.memo "{\"id\":1,\"memo\":{\"a\":1}}" &&
	echo $id >running.id
'
test_expect_success 'getattr: jobspec, R and eventlog of an active job' '
	id=$(cat running.id) &&
	$RPC job-manager.getattr "{\"id\":$id,\"attrs\":[\"jobspec\",\"R\",\"eventlog\"]}" >ga.out &&
	jq -e ".jobspec.version == 1 and .R.version == 1" ga.out &&
	jq -r .eventlog ga.out | jq -r .name | grep -x start &&
	test_expect_code 2 $RPC job-manager.getattr "{\"id\":$id,\"attrs\":[\"foo\"]}" &&
	test_expect_code 2 $RPC job-manager.getattr "{\"id\":1,\"attrs\":[\"R\"]}"
'
test_expect_success 'the environment reaches the exec service, not getattr' '
	n=$(execstat .count.with_env) &&
	jobspec "{}" | jq -c ".attributes.system.environment = {HOME:\"/h\"}" >env.json &&
	id=$($SUBMIT "$(cat env.json)") && wait_event $id clean &&
	test "$(execstat .count.with_env)" = $((n + 1)) &&
	id=$($SUBMIT -u 0 "$(cat env.json)") && wait_event $id priority &&
	$RPC job-manager.getattr "{\"id\":$id,\"attrs\":[\"jobspec\"]}" >genv.out &&
	jq -e ".jobspec.attributes.system | has(\"environment\") | not" genv.out &&
	jq -e ".jobspec.attributes.system.duration == 0" genv.out &&
	$RPC job-manager.urgency "{\"id\":$id,\"urgency\":16}" &&
	wait_event $id clean &&
	test "$(execstat .count.with_env)" = $((n + 2))
'
test_expect_success 'getattr of an inactive job reads the KVS' '
	id=$(cat life.id) &&
	$RPC job-manager.getattr "{\"id\":$id,\"attrs\":[\"jobspec\",\"R\",\"eventlog\"]}" >gi.out &&
	jq -e ".jobspec.version == 1 and .R.version == 1" gi.out &&
	jq -r .eventlog gi.out | tail -n 1 | jq -e ".name == \"clean\""
'
test_expect_success 'kill publishes shell-ID.kill to a running job' '
	id=$(cat running.id) &&
	{ flux event sub -c 1 shell-$id. >kill.out & } && pid=$! && sleep 0.3 &&
	$RPC job-manager.kill "{\"id\":$id,\"signum\":15}" &&
	wait $pid &&
	test "$(cut -f1 kill.out)" = shell-$id.kill &&
	test "$(cut -f2 kill.out | jq -c .)" = "{\"signum\":15}" &&
	test_expect_code 22 $RPC job-manager.kill "{\"id\":$id,\"signum\":0}" &&
	test_expect_code 22 $RPC job-manager.kill "{\"id\":$(cat life.id),\"signum\":15}"
'
test_expect_success 'killall and raiseall count what they act on' '
	$RPC job-manager.killall "{\"dry_run\":true,\"userid\":-1,\"signum\":15}" | jq -e ".count == 1 and .errors == 0" &&
	$RPC job-manager.raiseall "{\"dry_run\":true,\"userid\":-1,\"states\":62,\"severity\":0,\"type\":\"cancel\"}" | jq -e ".count == 1" &&
	$RPC job-manager.raiseall "{\"dry_run\":false,\"userid\":$(id -u),\"states\":48,\"severity\":0,\"type\":\"cancel\"}" | jq -e ".count == 1 and .errors == 0" &&
	wait_event $(cat running.id) clean &&
	test_expect_code 71 $RPC job-manager.raiseall "{\"dry_run\":true,\"userid\":-1,\"states\":64,\"severity\":0,\"type\":\"cancel\"}"
'
test_expect_success 'update: the duration of a pending job (jobspec-update)' '
	id=$($SUBMIT -u 0) && wait_event $id priority &&
	$RPC job-manager.update "{\"id\":$id,\"updates\":{\"attributes.system.duration\":60}}" &&
	wait_event $id jobspec-update &&
	test "$(ctx $id jobspec-update)" = "{\"attributes.system.duration\":60}" &&
	test_expect_code 22 $RPC job-manager.update "{\"id\":$id,\"updates\":{\"version\":2}}" &&
	$RPC job-manager.urgency "{\"id\":$id,\"urgency\":16}" && wait_event $id clean
'
test_expect_success 'update limits: a guest may shorten its job, not lengthen it' '
	guest=$(($(id -u)+4242)) &&
	id=$($SUBMIT -u 0 -U $guest \
		"$(jobspec | jq -c ".attributes.system.duration=60")") &&
	wait_event $id priority &&
	upd () {
		$CRED -u $guest -R 2 job-manager.update \
			"{\"id\":$id,\"updates\":{\"attributes.system.duration\":$1}}"
	} &&
	test_expect_code 1 upd 120 2>longer.err &&
	grep "only the instance owner may increase" longer.err &&
	test_expect_code 1 upd 0 2>unlimited.err &&
	grep "only the instance owner may make" unlimited.err &&
	upd 30 && wait_event $id jobspec-update &&
	test_expect_code 1 upd 45 &&
	$RPC job-manager.update "{\"id\":$id,\"updates\":{\"attributes.system.duration\":0}}" &&
	wait_count $id jobspec-update 2 &&
	test "$(evlog $id | jq -c "select(.name==\"jobspec-update\") | .context")" \
		= "$(printf "%s\n%s" "{\"attributes.system.duration\":30}" \
			"{\"attributes.system.duration\":0}")" &&
	$RPC job-manager.raise "{\"id\":$id,\"severity\":0,\"type\":\"cancel\",\"note\":\"\"}" &&
	wait_event $id clean
'
test_expect_success 'update: the duration of a running job (resource-update)' '
	id=$($SUBMIT "$(jobspec "{\"hang\":true}")") && wait_event $id start &&
	$RPC job-manager.update "{\"id\":$id,\"updates\":{\"attributes.system.duration\":100}}" &&
	test "$(sched .count.expiration)" = 1 &&
	start=$(flux kvs get $(jkey $id).R | jq .execution.starttime) &&
	wait_event $id resource-update &&
	ctx $id resource-update .expiration | jq -e ". == $start + 100" &&
	$RPC exec-dummy.finish "{\"id\":$id}" && wait_event $id clean
'

#
# queue, drain, idle
#
test_expect_success 'a disabled queue refuses submissions' '
	flux queue disable maintenance now &&
	flux queue status >qs.out &&
	grep "Job submission is disabled: maintenance now" qs.out &&
	test_must_fail $SUBMIT 2>sub.err &&
	grep "job submission is disabled: maintenance now" sub.err &&
	flux queue enable &&
	flux queue status | grep "Job submission is enabled" &&
	id=$($SUBMIT) && wait_event $id clean
'
test_expect_success 'a stopped queue keeps jobs in SCHED' '
	flux queue stop for a test &&
	flux queue status | grep "Scheduling is stopped: for a test" &&
	id=$($SUBMIT) && wait_event $id priority && sleep 0.2 &&
	test "$(names $id)" = "submit validate depend priority" &&
	flux queue start &&
	flux queue status | grep "Scheduling is started" &&
	wait_event $id clean
'
test_expect_success 'queue requests: named queues do not exist' '
	$RPC job-manager.queue-list "{}" | jq -e ".queues == []" &&
	test_expect_code 22 $RPC job-manager.queue-status "{\"name\":\"batch\"}" &&
	test_expect_code 22 $RPC job-manager.queue-enable "{\"enable\":true,\"all\":false,\"name\":\"x\"}" &&
	test_expect_code 22 $RPC job-manager.queue-enable "{\"enable\":false,\"all\":true}"
'
test_expect_success 'idle answers once nothing runs, with the pending count' '
	h=$($SUBMIT -u 0) && r=$($SUBMIT "$(jobspec "{\"hang\":true}")") &&
	wait_event $r start &&
	{ flux queue idle >idle.out & } && pid=$! && sleep 0.3 &&
	test ! -s idle.out &&
	$RPC exec-dummy.finish "{\"id\":$r}" &&
	wait $pid &&
	test "$(cat idle.out)" = "1 pending job" &&
	echo $h >held2.id
'
test_expect_success 'drain answers once no job is active' '
	{ flux queue drain & } && pid=$! && sleep 0.3 &&
	kill -0 $pid &&
	flux cancel $(cat held2.id) &&
	wait $pid &&
	test "$(jm .active_jobs)" = 0 &&
	flux queue drain --timeout=5s
'

#
# purge
#
test_expect_success 'purge counts without force, removes with it' '
	n=$(jm .inactive_jobs) &&
	$RPC job-manager.purge "{\"num_limit\":5,\"batch\":10000}" | jq -e ".count == $n - 5" &&
	test "$(jm .inactive_jobs)" = $n &&
	{ flux event sub -c 1 job-purge-inactive >purge.ev & } && pid=$! && sleep 0.3 &&
	$RPC job-manager.purge "{\"num_limit\":5,\"batch\":10000,\"force\":true}" | jq -e ".count == $n - 5" &&
	wait $pid &&
	test $(cut -f2 purge.ev | jq ".jobs | length") = $((n - 5)) &&
	test "$(jm .inactive_jobs)" = 5 &&
	test_must_fail flux kvs get $(jkey $(cat life.id)).eventlog
'
test_expect_success 'purge-id of one job; an active job cannot be purged' '
	id=$($SUBMIT) && wait_event $id clean &&
	$RPC job-manager.purge-id "{\"id\":$id,\"force\":true}" | jq -e ".count == 1" &&
	test_must_fail flux kvs get $(jkey $id).eventlog &&
	test_expect_code 2 $RPC job-manager.purge-id "{\"id\":$id}" &&
	a=$($SUBMIT -u 0) && wait_event $a priority &&
	test_expect_code 22 $RPC job-manager.purge-id "{\"id\":$a,\"force\":true}" &&
	flux cancel $a && drain
'

#
# bad requests
#
test_expect_success 'submit: bad batches are refused as a whole' '
	test_expect_code 71 $RPC job-manager.submit "{}" &&
	test_expect_code 71 $RPC job-manager.submit "{\"jobs\":[]}" &&
	test_expect_code 71 $RPC job-manager.submit "{\"jobs\":[{\"id\":1}]}" &&
	j="{\"id\":77,\"userid\":0,\"urgency\":16,\"t_submit\":1.5,\"flags\":0,\"jobspec\":{}}" &&
	test_expect_code 17 $RPC job-manager.submit "{\"jobs\":[$j,$j]}" &&
	bad="{\"id\":78,\"userid\":0,\"urgency\":40,\"t_submit\":1.5,\"flags\":0,\"jobspec\":{}}" &&
	test_expect_code 71 $RPC job-manager.submit "{\"jobs\":[$bad]}" &&
	test "$(jm .active_jobs)" = 0 &&
	id=$($SUBMIT) && wait_event $id clean &&
	old="{\"id\":$id,\"userid\":0,\"urgency\":16,\"t_submit\":1.5,\"flags\":0,\"jobspec\":{}}" &&
	test_expect_code 17 $RPC job-manager.submit "{\"jobs\":[$old]}"
'
test_expect_success 'requests with a payload of the wrong shape get EPROTO' '
	for t in urgency memo update getattr raise kill wait raiseall killall \
		queue-status queue-enable queue-start post-event purge-id; do
		test_expect_code 71 $RPC job-manager.$t "[1]" || return 1
	done
'
test_expect_success 'the job manager logged no internal errors' '
	flux dmesg >dmesg.out &&
	! grep "job-manager.crit" dmesg.out
'
test_expect_success 'the instance shuts down cleanly' '
	rm -f keepalive &&
	wait $(cat broker.pid)
'

test_done

#!/bin/sh
test_description='sched-simple: RFC 27 with a test driver in the job
manager'"'"'s place and a fake resource module (RFC 28): first fit, R in
the KVS before success, pending and priority, cancel, deny, expiration,
resource status, up/down, hello replay after a reload, limited and
unlimited modes, bad requests, and 1024 nodes'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
DRIVER="$FLUX_BUILD_DIR/t/sched-driver"
FAKE="$FLUX_BUILD_DIR/t/module/.libs/resource-fake.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch

# R with N nodes "node<i>" of C cores (and G gpus if G > 0)
make_R () {
	gpu=""
	test "$3" -gt 0 && gpu=",\"gpu\":\"$(seq -s, 0 $(($3-1)) |
		sed 's/^0,.*,\([0-9]*\)$/0-\1/; s/^0,\([0-9]*\)$/0-\1/')\""
	cat <<-EOF
	{"version":1,"execution":{"R_lite":[{"rank":"0-$(($1-1))",
	 "children":{"core":"0-$(($2-1))"$gpu}}],
	 "nodelist":["node[0-$(($1-1))]"],"starttime":0,"expiration":0}}
	EOF
}

# run_sched NAME [DRIVER-OPTIONS]: run NAME.script with the driver, load
# sched-simple (with $SCHED_ARGS) once the driver is registered, wait for
# the driver, unload sched-simple.  Output in NAME.out.
run_sched () {
	name=$1; shift
	rm -f $name.ready
	$DRIVER -t 60 -r $name.ready "$@" $name.script >$name.out 2>$name.err &
	pid=$!
	for i in $(seq 300); do test -e $name.ready && break; sleep 0.1; done
	flux module load sched-simple $SCHED_ARGS || { kill $pid; return 1; }
	wait $pid
	rc=$?
	flux module remove sched-simple || rc=1
	cat $name.err >&2
	return $rc
}

test_expect_success 'start an instance of 1 broker' '
	make_R 4 4 1 >R4.json &&
	make_R 1024 64 0 >R1024.json &&
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux kvs getroot >/dev/null
'
test_expect_success 'load the fake resource module with 4 nodes' '
	flux module load --name=resource $FAKE "$PWD/R4.json" &&
	flux module list | grep "^resource " &&
	test_expect_code 71 $RPC resource.acquire 2>nostream.err &&
	grep "acquire requires streaming" nostream.err
'
test_expect_success 'sched-simple refuses bad arguments' '
	test_must_fail flux module load sched-simple queue-depth=0 &&
	test_must_fail flux module load sched-simple queue-depth=x &&
	test_must_fail flux module load sched-simple bogus
'
test_expect_success 'without a job manager, sched-simple says why and waits for one' '
	flux module load sched-simple &&
	for i in $(seq 100); do
		flux dmesg | grep -q "sched-simple.*job-manager.sched-hello" &&
			break
		sleep 0.1
	done &&
	flux dmesg | grep "sched-simple.*job-manager.sched-hello: .*: waiting for the job manager to come back" &&
	flux module stats sched-simple | jq -e ".state == \"hello\"" &&
	flux module remove sched-simple
'

cat >basic.script <<EOF
alloc 1 16 s=1,c=2
wait 1 success
R 1
alloc 2 16 s=1,c=1,g=1,t=60
wait 2 success
R 2
alloc 3 16 N=2,s=1,c=4,x
wait 3 success
R 3
status
free 1
wait 1 free
free 2
wait 2 free
free 3
wait 3 free
status
EOF
test_expect_success 'first fit; R is in the KVS before success' '
	run_sched basic &&
	cat >basic.exp <<-EOF &&
	ready limited 8
	1 success rank0/core[0-1]
	1 R rank0/core[0-1] duration=0
	2 success rank0/core2,gpu0
	2 R rank0/core2,gpu0 duration=60
	3 success rank[1-2]/core[0-3],gpu0
	3 R rank[1-2]/core[0-3],gpu0 duration=0
	status all=rank[0-3]/core[0-3],gpu0 down= allocated=rank0/core[0-2],gpu0 rank[1-2]/core[0-3],gpu0
	1 free
	2 free
	3 free
	status all=rank[0-3]/core[0-3],gpu0 down= allocated=
	EOF
	test_cmp basic.exp basic.out
'

cat >pending.script <<EOF
alloc 10 16 N=4,s=1,c=1,x
wait 10 success
alloc 11 16 s=1,c=1
wait 11 annotate
alloc 12 10 s=1,c=1
alloc 13 20 s=2,c=4
wait 13 annotate
cancel 12
wait 12 cancel
prioritize 11=30
free 10
wait 11 success
wait 13 success
cancel 11
free 11
wait 11 free
free 13
wait 13 free
EOF
test_expect_success 'pending jobs: annotation, priority order, cancel' '
	run_sched pending &&
	cat >pending.exp <<-EOF &&
	ready limited 8
	10 success rank[0-3]/core[0-3],gpu0
	11 annotate insufficient resources
	13 annotate insufficient resources
	12 cancel
	10 free
	11 success rank0/core0
	13 success rank[1-2]/core[0-3]
	11 free
	13 free
	EOF
	test_cmp pending.exp pending.out
'

cat >bad-jobspec.json <<EOF
{"version":1,"resources":[{"type":"socket","count":1}],
 "tasks":[],"attributes":{"system":{}}}
EOF
cat >deny.script <<EOF
alloc 20 16 N=5,s=1,c=1
wait 20 deny
alloc 21 16 s=17,c=1
wait 21 deny
alloc 22 16 s=1,c=1,g=2
wait 22 deny
alloc 23 16 @bad-jobspec.json
wait 23 deny
EOF
test_expect_success 'what can never fit is denied with the reason' '
	run_sched deny &&
	cat >deny.exp <<-EOF &&
	ready limited 8
	20 deny unsatisfiable request: 5 nodes requested, the instance has 4
	21 deny unsatisfiable request: 17 slots of 1 core, the instance can hold at most 16 such slots
	22 deny unsatisfiable request: 1 slot of 1 core and 2 gpus, the instance can hold at most 0 such slots
	23 deny invalid jobspec: resources[0]: the first resource must be a node or a slot
	EOF
	test_cmp deny.exp deny.out
'

cat >expiration.script <<EOF
alloc 30 16 s=1,c=1,t=10
wait 30 success
R 30
expiration 30 100
expiration 31 100
expiration 30 -5
free 30
wait 30 free
EOF
test_expect_success 'sched.expiration' '
	run_sched expiration &&
	cat >expiration.exp <<-EOF &&
	ready limited 8
	30 success rank0/core0
	30 R rank0/core0 duration=10
	30 expiration ok
	31 expiration error: job has no allocation
	30 expiration error: expiration must be after the starttime
	30 free
	EOF
	test_cmp expiration.exp expiration.out
'

cat >updown.script <<EOF
sh $RPC resource.fake-update '{"down":"0-1"}' >/dev/null
alloc 40 16 N=2,s=1,c=4,x
wait 40 success
status
alloc 41 16 N=1,s=1,c=1,x
wait 41 annotate
sh $RPC resource.fake-update '{"up":"0"}' >/dev/null
wait 41 success
free 40
free 41
wait 41 free
sh $RPC resource.fake-update '{"up":"1"}' >/dev/null
EOF
test_expect_success 'down ranks are not allocated; up ranks are' '
	run_sched updown &&
	cat >updown.exp <<-EOF &&
	ready limited 8
	40 success rank[2-3]/core[0-3],gpu0
	status all=rank[0-3]/core[0-3],gpu0 down=rank[0-1]/core[0-3],gpu0 allocated=rank[2-3]/core[0-3],gpu0
	41 annotate insufficient resources
	41 success rank0/core[0-3],gpu0
	40 free
	41 free
	EOF
	test_cmp updown.exp updown.out
'

cat >reload.script <<EOF
alloc 50 16 s=1,c=2
alloc 51 16 N=1,s=1,c=1,x
wait 50 success
wait 51 success
alloc 52 16 N=4,s=1,c=1,x
wait 52 annotate
sh flux module remove sched-simple && flux module load sched-simple
hello
status
alloc 53 20 s=1,c=2
wait 53 success
free 50
free 51
free 53
wait 52 success
free 52
wait 52 free
EOF
test_expect_success 'reload: allocations come back through hello, pending requests are sent again' '
	run_sched reload &&
	cat >reload.exp <<-EOF &&
	ready limited 8
	50 success rank0/core[0-1]
	51 success rank1/core[0-3],gpu0
	52 annotate insufficient resources
	ready limited 8
	status all=rank[0-3]/core[0-3],gpu0 down= allocated=rank0/core[0-1] rank1/core[0-3],gpu0
	52 annotate insufficient resources
	53 success rank0/core[2-3]
	50 free
	51 free
	53 free
	52 success rank[0-3]/core[0-3],gpu0
	52 free
	EOF
	test_cmp reload.exp reload.out
'

cat >replay.R <<EOF
{"version":1,"execution":{"R_lite":[{"rank":"3","children":{"core":"0-3"}}],
 "nodelist":["node3"],"starttime":1,"expiration":0}}
EOF
cat >replay.script <<EOF
status
alloc 61 16 N=4,s=1,c=1
wait 61 annotate
free 60
wait 60 free
wait 61 success
free 61
wait 61 free
status
EOF
test_expect_success 'a job that holds resources at start is replayed from its R' '
	run_sched replay -j 60:replay.R &&
	cat >replay.exp <<-EOF &&
	ready limited 8
	status all=rank[0-3]/core[0-3],gpu0 down= allocated=rank3/core[0-3]
	61 annotate insufficient resources
	60 free
	61 success rank[0-3]/core0
	61 free
	status all=rank[0-3]/core[0-3],gpu0 down= allocated=
	EOF
	test_cmp replay.exp replay.out
'

cat >limited.script <<EOF
alloc 70 16 N=4,s=1,c=4
wait 70 success
alloc 71 16 s=1,c=1
alloc 72 16 s=1,c=1
alloc 73 16 s=1,c=1
wait 71 annotate
sh flux module stats sched-simple | jq -r '"pending \\(.pending)"'
free 70
wait 71 success
wait 72 success
wait 73 success
free 71
free 72
free 73
wait 73 free
sh flux module stats sched-simple | jq -r '"timed \\(.commits > 0 and ."commit-time" > 0)"'
EOF
test_expect_success 'limited mode: queue-depth=2 (the driver holds the rest)' '
	SCHED_ARGS=queue-depth=2 run_sched limited &&
	grep -x "ready limited 2" limited.out &&
	grep -x "timed true" limited.out &&
	grep -x "pending 2" limited.out &&
	test $(grep -c "annotate" limited.out) -eq 1 &&
	grep -x "73 success rank0/core2" limited.out
'
test_expect_success 'unlimited mode: queue-depth=unlimited' '
	SCHED_ARGS=queue-depth=unlimited run_sched limited &&
	grep -x "ready unlimited -1" limited.out &&
	grep -x "pending 3" limited.out &&
	grep -x "73 success rank0/core2" limited.out
'

test_expect_success 'bad requests get EPROTO; unknown jobs ENOENT' '
	printf "echo loaded\n" >idle.script &&
	rm -f idle.ready &&
	{ $DRIVER -t 30 -r idle.ready idle.script >idle.out 2>&1 & } &&
	pid=$! &&
	for i in $(seq 300); do test -e idle.ready && break; sleep 0.1; done &&
	flux module load sched-simple &&
	wait $pid &&
	grep -x loaded idle.out &&
	test_expect_code 71 $RPC sched.alloc "{}" 2>alloc.err &&
	grep "expected {id:I priority:I userid:i jobspec:o}" alloc.err &&
	test_expect_code 71 $RPC sched.free "{\"id\":\"x\"}" &&
	test_expect_code 71 $RPC sched.expiration "{\"id\":1}" &&
	test_expect_code 2 $RPC sched.expiration \
		"{\"id\":1,\"expiration\":5.0}" &&
	test_expect_code 71 $RPC feasibility.check "{}"
'
test_expect_success 'feasibility.check and sched.resource-status' '
	$RPC feasibility.check "{\"jobspec\":{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":16,\"with\":[{\"type\":\"core\",\"count\":1}]}]}}" &&
	test_expect_code 22 $RPC feasibility.check "{\"jobspec\":{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":17,\"with\":[{\"type\":\"core\",\"count\":1}]}]}}" 2>feas.err &&
	grep "the instance can hold at most 16" feas.err &&
	$RPC sched.resource-status | jq -e ".all.execution.nodelist[0] == \"node[0-3]\"" &&
	flux module stats sched-simple | jq -e ".state == \"ready\"" &&
	flux module remove sched-simple
'

# 1024 nodes of 64 cores: 1000 single-node jobs and 24 more, then one that
# must wait, then everything freed
test_expect_success 'switch the fake resource module to 1024 nodes' '
	flux module remove resource &&
	flux module load --name=resource $FAKE "$PWD/R1024.json"
'
test_expect_success '1024 nodes: 1024 whole-node jobs run, the next one waits' '
	{
		for i in $(seq 1 1025); do echo "alloc $i 16 N=1,s=1,c=64,x"; done
		for i in $(seq 1 1024); do echo "wait $i success"; done
		echo "wait 1025 annotate"
		echo "status"
		for i in $(seq 1 1024); do echo "free $i"; done
		echo "wait 1025 success"
		echo "free 1025"
		echo "wait 1025 free"
	} >big.script &&
	SCHED_ARGS=queue-depth=unlimited run_sched big &&
	test $(grep -c " success rank[0-9]*/core\[0-63\]" big.out) -eq 1025 &&
	grep -x "1024 success rank1023/core\[0-63\]" big.out &&
	grep -x "1025 annotate insufficient resources" big.out &&
	grep -x "status all=rank\[0-1023\]/core\[0-63\] down= allocated=rank\[0-1023\]/core\[0-63\]" big.out &&
	grep -x "1025 success rank0/core\[0-63\]" big.out
'

test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'

test_done

#!/bin/sh
test_description='real execution: job-exec (realexec) and the exec agents
of every broker run jobs without system.exec.test with a stand-in job
shell (exec-agent-shell.sh): exit status, partial release, barriers,
cancel and kill-timeout, time limit, reload of job-exec (reattach), a
lost broker (node-failure), bad requests and guests, and in 64 brokers
of fanout 2 the reduction of shell exits up the tree'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

SH="$SHARNESS_TEST_SRCDIR/exec-agent-shell.sh"
RPC="$FLUX_BUILD_DIR/t/rpc"
RPC_CRED="$FLUX_BUILD_DIR/t/rpc-cred"
PMI_CLIENT="$FLUX_BUILD_DIR/t/pmi-client"
S="-S exec.job_shell=$SH"
DEFAULT_MODULES=content,content-sqlite@0,kvs,kvs-watch,resource,job-manager@0,job-info@0,job-list@0,job-ingest,exec-agent,job-exec@0,sched-simple@0

# status ID: the finish status of a job (empty if none)
status () {
	flux job eventlog $1 | sed -n "s/.* finish status=\([0-9]*\).*/\1/p"
}
clean () {
	flux job wait-event -t 120 $1 clean
}

test_expect_success 'start an instance of 1 broker' '
	start_instance one 1 &&
	flux module list | grep "^exec-agent "
'
test_expect_success 'a job runs the job shell and completes with its status' '
	id=$(flux submit $S -S test_shell="{\"exit\":3}" true) &&
	clean $id &&
	flux job eventlog $id >one.events &&
	grep " start" one.events && grep " release" one.events &&
	test "$(status $id)" = 768 &&
	flux dmesg | grep "exec-agent.*shell stdout: test shell: job $(flux job id --to=dec $id)"
'
test_expect_success 'the shell gets FLUX_KVS_NAMESPACE=job-<id> and a cwd of /' '
	dec=$(flux job id --to=dec $id) &&
	flux dmesg | grep "test shell: job $dec.* ns job-$dec cwd /$"
'
test_expect_success 'a shell that cannot start: exec exception with the reason' '
	id=$(flux submit -S exec.job_shell=/nonexistent/shell true) &&
	clean $id &&
	flux job eventlog $id >nosh.events &&
	grep "exception type=\"exec\".*/nonexistent/shell: no such file" \
		nosh.events &&
	! grep " start" nosh.events
'
test_expect_success 'job-exec job-shell= sets the default shell, a bad option is refused' '
	flux module reload job-exec job-shell=$SH kill-timeout=1s &&
	id=$(flux submit -S test_shell="{\"exit\":2}" true) &&
	clean $id &&
	test "$(status $id)" = 512 &&
	flux module stats job-exec | jq -e ".implementations.realexec.\"kill-timeout\" == 1" &&
	test_must_fail flux module reload job-exec kill-timeout=0 &&
	flux module load job-exec job-shell=$SH kill-timeout=1s
'
test_expect_success 'bad payloads to each exec-agent method get EPROTO' '
	test_expect_code 71 $RPC exec-agent.start "{}" 2>bad1.err &&
	grep "malformed start" bad1.err &&
	test_expect_code 71 $RPC exec-agent.start \
		"{\"id\":1,\"userid\":0,\"ranks\":\"0\",\"R\":{},\"jobspec\":{},\"reattach\":false,\"opts\":{}}" \
		2>bad2.err &&
	grep "streaming" bad2.err &&
	test_expect_code 71 $RPC -s exec-agent.start \
		"{\"id\":1,\"userid\":0,\"ranks\":\"5-7\",\"R\":{},\"jobspec\":{},\"reattach\":false,\"opts\":{}}" \
		2>bad3.err &&
	grep "ranks" bad3.err &&
	test_expect_code 71 $RPC -s exec-agent.start \
		"{\"id\":1,\"userid\":0,\"ranks\":\"x\",\"R\":{},\"jobspec\":{},\"reattach\":false,\"opts\":{}}" &&
	test_expect_code 71 $RPC exec-agent.kill "{\"id\":1}" &&
	test_expect_code 71 $RPC exec-agent.kill "{\"id\":1,\"signum\":0}" &&
	test_expect_code 71 $RPC exec-agent.barrier "{\"id\":1,\"seq\":\"a\"}" &&
	test_expect_code 71 $RPC exec-agent.barrier "{\"id\":1,\"seq\":1,\"data\":[]}" &&
	test_expect_code 71 $RPC exec-agent.shell-info "[]" &&
	test_expect_code 71 $RPC exec-agent.shell-info &&
	test_expect_code 2 $RPC exec-agent.kill "{\"id\":1,\"signum\":15}" &&
	test_expect_code 2 $RPC -s exec-agent.start \
		"{\"id\":1,\"userid\":0,\"ranks\":\"0\",\"R\":{},\"jobspec\":{},\"reattach\":true,\"opts\":{}}" &&
	flux module stats exec-agent | jq -e ".count.bad_request >= 10" &&
	flux module list | grep "^exec-agent "
'
test_expect_success 'a guest cannot call exec-agent.start or kill, nor touch the owner'"'"'s job; its shell-info has the CPUs of its cores only' '
	id=$(flux submit -S test_shell="{\"sleep\":60}" true) &&
	flux job wait-event -t 60 $id start &&
	dec=$(flux job id --to=dec $id) &&
	test_expect_code 1 $RPC_CRED -u 4242 -R 2 -s exec-agent.start \
		"{\"id\":1,\"userid\":4242,\"ranks\":\"0\",\"R\":{},\"jobspec\":{},\"reattach\":false,\"opts\":{}}" \
		2>guest1.err &&
	grep "requires owner" guest1.err &&
	test_must_fail $RPC_CRED -u 4242 -R 2 exec-agent.kill \
		"{\"id\":$dec,\"signum\":9}" &&
	test_must_fail $RPC_CRED -u 4242 -R 2 exec-agent.shell-info \
		"{\"id\":$dec}" &&
	test_must_fail $RPC_CRED -u 4242 -R 2 exec-agent.barrier \
		"{\"id\":$dec,\"seq\":1}" &&
	$RPC exec-agent.shell-info "{\"id\":$dec}" >info.json &&
	jq -e ".rank == 0 and .size == 1" info.json &&
	core=$(flux job info $id R | jq -r ".execution.R_lite[0].children.core") &&
	jq -e --arg c "$core" "(.cpus | keys) == [\$c] and (.cpus[\$c] | test(\"^0x[0-9a-f]{8}\"))" info.json &&
	jq -e "has(\"topology\") | not" info.json &&
	flux job eventlog $id | grep -v " finish" &&
	flux cancel $id && clean $id
'
test_expect_success 'stop the instance of 1 broker' '
	stop_instance one
'

test_expect_success 'start an instance of 4 brokers (kill-timeout 1s)' '
	start_instance four 4 --test-exit-mode=leader &&
	flux module reload job-exec kill-timeout=1s
'
test_expect_success 'a job on 4 nodes: start, exit, finish with the largest status' '
	id=$(flux submit -N4 $S -S test_shell="{\"ranks\":{\"1\":{\"exit\":5}}}" true) &&
	clean $id &&
	test "$(status $id)" = 1280
'
test_expect_success 'exits of status 0 below rank 0 arrive as ends of stream' '
	flux module stats exec-agent >ends.before &&
	id=$(flux submit -N4 $S -S test_shell="{\"exit\":0}" true) &&
	clean $id &&
	test "$(status $id)" = 0 &&
	flux module stats exec-agent >ends.after &&
	test $(($(jq .children.end ends.after) - $(jq .children.end ends.before))) -ge 2 &&
	# each child ends its stream with its exit (one may have sent its own
	# shell exit alone within a window, were it an interior agent)
	test $(($(jq .children.exited ends.after) - $(jq .children.exited ends.before))) -le 1
'
test_expect_success 'partial release: a shell that outlives the others gives >= 2 release events' '
	id=$(flux submit -N4 $S -S test_shell="{\"ranks\":{\"2\":{\"sleep\":3}}}" true) &&
	clean $id &&
	flux job eventlog $id >partial.events &&
	test $(grep -c " release .*final=false" partial.events) -ge 2 &&
	# the last rank is released once its shell is gone, before finish;
	# the final release (after the guest namespace copy) names no rank
	grep " release ranks=\"2\" final=false" partial.events &&
	test "$(grep -A1 " release ranks=\"2\"" partial.events |
		awk "NR == 2 {print \$2}")" = finish &&
	grep " release ranks=\"\" final=true" partial.events &&
	flux module stats sched-simple | jq -e ".\"free-errors\" == 0" &&
	test "$(status $id)" = 0
'
test_expect_success 'barriers: 4 shells meet twice, each answer holds all of them' '
	id=$(flux submit -N4 $S -S test_shell="{\"barrier\":3}" true) &&
	clean $id &&
	test "$(status $id)" = 0 &&
	flux module stats exec-agent | jq -e ".count.barriers >= 3"
'
# A job's PMI exchange passes through the agents of its brokers, which
# run as the instance owner: what they hold at once is bounded.  Each
# rank puts 36 KB: the agent that gets a second rank's share, over the
# 64 KB it may hold, refuses it.
test_expect_success 'barrier-max: an exchange over the limit fails its job, not a broker' '
	flux exec -r all flux module reload exec-agent barrier-max=64k </dev/null &&
	$RPC -r 3 exec-agent.stats-get | jq -e ".barrier.limit == 65536" &&
	test_must_fail flux run -N4 -n4 $PMI_CLIENT -k 40 >big.out 2>big.err &&
	cat big.err &&
	grep "over .*limit" big.err &&
	too=0 &&
	for r in 0 1 2 3; do
		$RPC -r $r exec-agent.stats-get >bstats.$r &&
		jq -c .barrier bstats.$r &&
		jq -e ".barrier.held == 0" bstats.$r &&
		too=$((too + $(jq ".barrier.\"too-big\"" bstats.$r))) || return 1
	done &&
	test $too -ge 1 &&
	flux run -N4 -n4 $PMI_CLIENT -k 4 >small.out &&
	test $(grep -c ": ok 4 " small.out) = 4 &&
	jq -e ".barrier.\"held-max\" > 0" bstats.0 &&
	test_must_fail flux module reload exec-agent barrier-max=lots 2>bad.err &&
	flux exec -r all sh -c "flux module list | grep -q ^exec-agent || flux module load exec-agent" </dev/null &&
	flux exec -r all flux module reload exec-agent </dev/null &&
	$RPC -r 3 exec-agent.stats-get | jq -e ".barrier.limit == 268435456"
'
test_expect_success 'cancel: SIGTERM to the shells, the job ends' '
	id=$(flux submit -N4 $S -S test_shell="{\"sleep\":300}" true) &&
	flux job wait-event -t 60 $id start &&
	flux cancel $id &&
	clean $id &&
	flux job eventlog $id >cancel.events &&
	grep "exception type=\"cancel\"" cancel.events &&
	test "$(status $id)" = 15
'
test_expect_success 'cancel of shells that ignore SIGTERM: SIGKILL after kill-timeout' '
	rm -rf ign && mkdir ign &&
	id=$(flux submit -N2 $S -S test_shell="{\"ignore_term\":1,\"dir\":\"$PWD/ign\",\"sleep\":300}" true) &&
	flux job wait-event -t 60 $id start &&
	for i in $(seq 600); do
		test -s ign/0.pid && test -s ign/1.pid && break; sleep 0.1
	done &&
	test -s ign/0.pid && test -s ign/1.pid &&
	flux cancel $id &&
	clean $id &&
	test "$(status $id)" = 9
'
test_expect_success 'a time limit: exception timeout, SIGALRM to the shells first (as flux-core)' '
	id=$(flux submit -N2 -t 2s $S -S test_shell="{\"sleep\":300}" true) &&
	clean $id &&
	flux job eventlog $id >timeout.events &&
	grep "exception type=\"timeout\"" timeout.events &&
	test "$(status $id)" = 14
'
test_expect_success 'shell-exit-timeout: a bad value is refused' '
	test_must_fail flux module reload job-exec shell-exit-timeout=soon &&
	flux module load job-exec kill-timeout=1s
'
test_expect_success 'shell-exit-timeout: shells still running after the leader exited end the job' '
	flux module reload job-exec kill-timeout=1s shell-exit-timeout=1s &&
	flux module stats job-exec |
		jq -e ".implementations.realexec.\"shell-exit-timeout\" == 1" &&
	id=$(flux submit -N2 $S -S test_shell="{\"ranks\":{\"1\":{\"sleep\":300}}}" true) &&
	clean $id &&
	flux job eventlog $id >exitt.events &&
	grep "exception type=\"exec\".*job shells still active on $(hostname) (rank 1) 1s after leader shell exit" exitt.events &&
	test "$(status $id)" = 15
'
test_expect_success 'shell-exit-timeout=0: none, the others may run on' '
	flux module reload job-exec kill-timeout=1s shell-exit-timeout=0 &&
	id=$(flux submit -N2 $S -S test_shell="{\"ranks\":{\"1\":{\"sleep\":3}}}" true) &&
	clean $id &&
	! flux job eventlog $id | grep exception &&
	test "$(status $id)" = 0 &&
	flux module reload job-exec kill-timeout=1s
'
test_expect_success 'reload job-exec while a job runs: the shells go on, it completes with 0' '
	id=$(flux submit -N4 $S -S test_shell="{\"sleep\":4}" true) &&
	flux job wait-event -t 60 $id start &&
	flux module reload job-exec kill-timeout=1s &&
	clean $id &&
	test "$(status $id)" = 0 &&
	! flux job eventlog $id | grep exception &&
	flux module stats exec-agent | jq -e ".count.reattach >= 1" &&
	flux dmesg | grep "exec-agent.*orphaned by a disconnect"
'
test_expect_success 'remove and load job-exec while a job runs: it completes with 0' '
	id=$(flux submit -N4 $S -S test_shell="{\"sleep\":4}" true) &&
	flux job wait-event -t 60 $id start &&
	flux module remove job-exec &&
	flux module load job-exec kill-timeout=1s &&
	clean $id &&
	test "$(status $id)" = 0
'
test_expect_success 'reload the job manager while a job runs: it completes with 0' '
	id=$(flux submit -N4 $S -S test_shell="{\"sleep\":4}" true) &&
	flux job wait-event -t 60 $id start &&
	flux module reload job-manager &&
	clean $id &&
	test "$(status $id)" = 0 &&
	! flux job eventlog $id | grep exception
'
test_expect_success 'the job finishing while the job manager is away: its status on its return, no exception' '
	id=$(flux submit -N4 $S -S test_shell="{\"sleep\":1,\"exit\":3}" true) &&
	flux job wait-event -t 60 $id start &&
	flux module remove job-manager &&
	key=$(flux job id --to=kvs $id).guest &&
	for i in $(seq 300); do
		flux kvs get --treeobj $key | jq -e ".type == \"dirref\"" >/dev/null &&
			break
		sleep 0.1
	done &&
	flux kvs get --treeobj $key | jq -e ".type == \"dirref\"" &&
	flux module load job-manager &&
	clean $id &&
	test "$(status $id)" = 768 &&
	! flux job eventlog $id | grep exception
'
test_expect_success 'the job finishing while job-exec is away completes on its return' '
	id=$(flux submit -N4 $S -S test_shell="{\"sleep\":1}" true) &&
	flux job wait-event -t 60 $id start &&
	flux module remove job-exec &&
	sleep 3 &&
	flux module stats exec-agent | jq -e ".count.orphans_done == 1" &&
	flux module load job-exec kill-timeout=1s &&
	clean $id &&
	test "$(status $id)" = 0
'
test_expect_success 'SIGKILL of broker 3 during a job: node-failure, others released and reused' '
	rm -rf pids && mkdir pids &&
	pid=$($RPC -r 3 attr.get "{\"name\":\"broker.pid\"}" | jq -r .value) &&
	id=$(flux submit -N4 $S -S test_shell="{\"dir\":\"$PWD/pids\",\"sleep\":300}" true) &&
	flux job wait-event -t 60 $id start &&
	for i in $(seq 300); do test -s pids/3.pid && break; sleep 0.1; done &&
	test -s pids/3.pid &&
	kill -9 $pid &&
	clean $id &&
	{ kill -9 -$(cat pids/3.pid) 2>/dev/null || true; } &&
	flux job eventlog $id >lost.events &&
	grep "exception type=\"node-failure\".*node failure on $(hostname) (rank 3)" lost.events &&
	grep " release .*final=true" lost.events &&
	test "$(flux resource list -n -o "{nnodes}" -s down)" = 1 &&
	id=$(flux submit -N3 $S -S test_shell="{\"exit\":0}" true) &&
	clean $id &&
	test "$(status $id)" = 0
'
test_expect_success 'stop the instance of 4 brokers' '
	stop_instance four || true
'

test_expect_success 'start an instance of 64 brokers, fanout 2 (reduce-window 100ms)' '
	start_instance big 64 -Stbon.fanout=2 \
		-Sbroker.modules="$(echo $DEFAULT_MODULES |
			sed "s/exec-agent/exec-agent reduce-window=100ms/")" &&
	flux module stats exec-agent | jq -e ".size == 64 and .fanout == 2"
'
test_expect_success 'a 64-node job whose shells exit together: rank 0 hears a handful of exits' '
	rm -rf sync && mkdir sync && mkfifo sync/go &&
	id=$(flux submit -N64 $S -S test_shell="{\"dir\":\"$PWD/sync\",\"wait\":\"$PWD/sync/go\"}" true) &&
	flux job wait-event -t 120 $id start &&
	for i in $(seq 1200); do
		test $(ls sync | grep -c pid) = 64 && break; sleep 0.1
	done &&
	test $(ls sync | grep -c pid) = 64 &&
	sleep 2 &&
	flux module stats exec-agent >big.before &&
	timeout 30 sh -c ": >sync/go" &&
	clean $id &&
	test "$(status $id)" = 0 &&
	flux module stats exec-agent >big.after &&
	before=$(jq ".children.exited + .children.end" big.before) &&
	after=$(jq ".children.exited + .children.end" big.after) &&
	echo "rank 0 received $((after - before)) exited responses and" \
		"ends of stream (exits of status 0) from its children" \
		"for 64 shells" &&
	test $((after - before)) -ge 2 && test $((after - before)) -le 10 &&
	test $(flux job eventlog $id | grep -c " release ") -le 10
'
test_expect_success 'fanout 2: a leaf exit code passes an interior agent whose shell exits 0' '
	id=$(flux submit -N4 $S -S test_shell="{\"ranks\":{\"3\":{\"exit\":7}}}" true) &&
	clean $id &&
	test "$(status $id)" = 1792 &&
	id=$(flux submit -N4 $S -S test_shell="{\"exit\":0}" true) &&
	clean $id &&
	test "$(status $id)" = 0
'
test_expect_success 'release-window: 20ms by default, set at load, a bad value refused' '
	flux module stats exec-agent |
		jq -e ".\"release-window\" == 0.02 and .\"reduce-window\" == 0.1" &&
	test_must_fail flux module reload exec-agent release-window=soon &&
	flux module load exec-agent reduce-window=100ms release-window=50ms &&
	flux module stats exec-agent | jq -e ".\"release-window\" == 0.05" &&
	id=$(flux submit -N2 $S -S test_shell="{\"exit\":0}" true) &&
	clean $id &&
	test "$(status $id)" = 0
'
test_expect_success 'stop the instance of 64 brokers' '
	stop_instance big
'
test_done

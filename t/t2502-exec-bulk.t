#!/bin/sh
test_description='rexec.bulk-exec: flux exec on many ranks sends one request
down the tree and hears each subtree'"'"'s outcomes combined (7 brokers,
fanout 2: rank 0 has children 1 and 2, rank 1 has 3 and 4, rank 2 has 5
and 6)'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc-cred"
RANKRPC="$FLUX_BUILD_DIR/t/rpc"
CMD='{"cmdline":["true"],"env":{},"opts":{},"channels":[]}'

# bulk_stat RANK KEY: a counter of rank RANK's bulk-exec
bulk_stat () {
	$RANKRPC -r $1 rexec.stats-get | jq ".bulk[\"$2\"]"
}

test_expect_success 'start 7 brokers, fanout 2' '
	start_instance bulk 7 -Stbon.fanout=2 &&
	flux exec -r 0 true </dev/null
'
test_expect_success 'every rank runs the command once, output labeled' '
	flux exec -l -r all flux getattr rank </dev/null | sort >labels.out &&
	for r in 0 1 2 3 4 5 6; do echo "$r: $r"; done >labels.exp &&
	test_cmp labels.exp labels.out
'
test_expect_success 'it went through bulk-exec, not one exec per rank' '
	n0=$(bulk_stat 0 sessions) &&
	n4=$(bulk_stat 4 sessions) &&
	flux exec -r all true </dev/null &&
	test $(bulk_stat 0 sessions) -eq $((n0 + 1)) &&
	test $(bulk_stat 4 sessions) -eq $((n4 + 1))
'
# Each child of rank 0 sends its end, which says its subtree exited 0: 2
# responses (a report each too if the ranks ended more than the hold
# apart).  One exec per rank would bring rank 0 five responses for each
# of 6 ranks below it.  A failure is reported, once per distinct outcome.
test_expect_success 'rank 0 hears a handful of messages from its children' '
	c0=$(bulk_stat 0 child-responses) &&
	flux exec -r all true </dev/null &&
	c1=$(bulk_stat 0 child-responses) &&
	test $((c1 - c0)) -ge 2 && test $((c1 - c0)) -le 4 &&
	for i in 1 2 3 4 5; do
		flux exec -r all true </dev/null &&
		c2=$(bulk_stat 0 child-responses) &&
		echo $((c2 - c1)) >>ends.out &&
		c1=$c2 || return 1
	done &&
	cat ends.out && grep -x 2 ends.out &&
	test_expect_code 1 flux exec -r all false </dev/null 2>false.err &&
	c2=$(bulk_stat 0 child-responses) &&
	test $((c2 - c1)) -ge 4 && test $((c2 - c1)) -le 6 &&
	grep "^\[0-6\]: Exit 1" false.err
'
test_expect_success 'an exit 0 apart from the rest: still exit 0, others reported' '
	test_expect_code 3 flux exec -r all \
		sh -c "test \$(flux getattr rank) = 5 || exit 3; sleep 0.5" \
		</dev/null 2>apart.err &&
	grep "^\[0-4,6\]: Exit 3" apart.err &&
	! grep "\[.*5.*\]" apart.err &&
	flux exec -r all sh -c "test \$(flux getattr rank) = 2 && sleep 0.5; true" \
		</dev/null
'
test_expect_success 'ranks below rank 0 only, and -x' '
	flux exec -l -r 3-6 -x 5 echo x </dev/null | sort >sub.out &&
	printf "3: x\n4: x\n6: x\n" >sub.exp &&
	test_cmp sub.exp sub.out
'
test_expect_success 'stdout and stderr, lines kept whole' '
	flux exec -r 1-2 sh -c "echo out; echo err >&2" </dev/null \
		>both.out 2>both.err &&
	test "$(cat both.out)" = "$(printf "out\nout")" &&
	test "$(cat both.err)" = "$(printf "err\nerr")"
'
test_expect_success 'statuses: one summary line each, the worst wins' '
	test_expect_code 6 flux exec -r all \
		sh -c "r=\$(flux getattr rank); test \$r -lt 5 || exit \$r; \
			test \$((r % 2)) = 0 || exit 1" </dev/null 2>st.err &&
	grep "^\[1,3\]: Exit 1" st.err &&
	grep "^5: Exit 5" st.err &&
	grep "^6: Exit 6" st.err &&
	test_line_count = 3 st.err
'
test_expect_success 'a missing command: one error line, exit 127' '
	test_expect_code 127 flux exec -r all /nonexistent/cmd </dev/null \
		2>nx.err &&
	grep "^flux-exec: Error: rank \[0-6\]: /nonexistent/cmd: No such file" \
		nx.err &&
	test_line_count = 1 nx.err
'
test_expect_success 'a process killed by a signal' '
	test_expect_code 137 flux exec -r 2,5 sh -c "kill -9 \$\$" </dev/null \
		2>k.err &&
	grep "^\[2,5\]: Killed" k.err
'
test_expect_success 'stdin is empty (closed at once)' '
	flux exec -r all cat </dev/null >cat.out &&
	! test -s cat.out &&
	flux exec -n -r all cat </dev/zero >cat2.out &&
	! test -s cat2.out &&
	flux exec -r 1,4 readlink /proc/self/fd/0 </dev/null >fd0.out &&
	test "$(sort -u fd0.out)" = /dev/null
'
test_expect_success 'SIGTERM to flux exec reaches every rank' '
	flux exec -r all sleep 100 </dev/null &
	pid=$! &&
	wait_list 0 sleep 1 && wait_list 6 sleep 1 && wait_list 3 sleep 1 &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid &&
	wait_list 6 sleep 0 && wait_list 3 sleep 0
'
test_expect_success 'a client killed takes its processes on every rank' '
	flux exec -r all sleep 100 </dev/null &
	pid=$! &&
	wait_list 4 sleep 1 && wait_list 5 sleep 1 &&
	kill -9 $pid &&
	for r in 0 1 2 3 4 5 6; do wait_list $r sleep 0 || return 1; done &&
	test $(bulk_stat 0 running) -eq 0 &&
	test $(bulk_stat 2 running) -eq 0
'
test_expect_success 'FLUX_EXEC_BULK=0: one exec per rank, same output' '
	n0=$(bulk_stat 0 sessions) &&
	FLUX_EXEC_BULK=0 flux exec -l -r all flux getattr rank </dev/null \
		| sort >per.out &&
	test_cmp labels.exp per.out &&
	test $(bulk_stat 0 sessions) -eq $n0
'
test_expect_success 'bad requests are refused' '
	test_expect_code 71 $RPC -s rexec.bulk-exec "{}" &&
	test_expect_code 71 $RPC -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":1}" &&
	test_expect_code 22 $RPC -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":8,\"ranks\":\"0\"}" &&
	test_expect_code 22 $RPC -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"x\"}" &&
	test_expect_code 22 $RPC -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"7\"}" &&
	test_expect_code 71 $RPC -s rexec.bulk-exec \
		"{\"cmd\":{},\"flags\":3,\"ranks\":\"0\"}" &&
	test_expect_code 71 $RPC rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"0\"}" 2>ns.err &&
	grep "must be streaming" ns.err &&
	test_expect_code 22 $RANKRPC -r 1 -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"2\"}" &&
	test_expect_code 3 $RPC rexec.bulk-kill "{\"matchtag\":1,\"signum\":15}" &&
	test_expect_code 22 $RPC rexec.bulk-kill "{\"matchtag\":1,\"signum\":0}" &&
	test_expect_code 1 $RPC -u 4242 -R 2 -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"0\"}"
'
# vmrss RANK: the resident memory of rank RANK's broker, in KiB
vmrss () {
	pid=$(flux exec -r $1 flux getattr broker.pid </dev/null) &&
	awk "/^VmRSS/ {print \$2}" /proc/$pid/status
}
test_expect_success 'much output under flow control: all of it, in order' '
	flux exec -r all -l sh -c "seq 30000" </dev/null >seq.out &&
	for r in 0 1 2 3 4 5 6; do seq 30000 | sed "s/^/$r: /"; done \
		| sort >seq.exp &&
	sort seq.out | test_cmp seq.exp - &&
	seq 30000 >seq.6 &&
	sed -n "s/^6: //p" seq.out | test_cmp seq.6 - &&
	test $(bulk_stat 0 credits) -gt 0
'
# Without flow control, `yes` on 7 ranks grew each broker by hundreds
# of MB a second until the instance fell over.
test_expect_success 'a client that does not read: processes wait, memory stays' '
	p6=$(bulk_stat 6 pauses) &&
	{ flux exec -r all -n yes | sleep 300 & } &&
	reader=$! &&
	sleep 3 &&
	for r in 0 1 6; do
		kb=$(vmrss $r) && echo "rank $r: $kb KiB" &&
		{ asan_build || test $kb -lt 262144; } || return 1
	done &&
	n6=$(bulk_stat 6 pauses) && echo "rank 6 pauses: $p6 -> $n6" &&
	test $n6 -gt $p6 &&
	test $(bulk_stat 0 running) -eq 1 &&
	kill $reader &&
	for r in 0 1 2 3 4 5 6; do
		eventually "bulk_stat $r running" 0 || return 1
	done
'
# Ranks 1-6 write 74 KB each to a client that credits nothing: each
# child of rank 0 gets its subtree's output and end to rank 0 within its
# window, but rank 0 can pass on only a window of it: its session ends
# with output and its end still queued when the client is killed.
test_expect_success 'a client killed while output and ends wait: every session ends' '
	SEQ="{\"cmdline\":[\"seq\",\"14000\"],\"env\":{},\"opts\":{},\"channels\":[]}" &&
	s1=$(bulk_stat 1 sessions) &&
	s2=$(bulk_stat 2 sessions) &&
	{ $RPC -s rexec.bulk-exec \
		"{\"cmd\":$SEQ,\"flags\":3,\"ranks\":\"1-6\"}" >raw.out & } &&
	client=$! &&
	eventually "bulk_stat 1 sessions" $((s1 + 1)) &&
	eventually "bulk_stat 2 sessions" $((s2 + 1)) &&
	eventually "bulk_stat 1 running" 0 &&
	eventually "bulk_stat 2 running" 0 &&
	r0=$(bulk_stat 0 running) &&
	echo "rank 0 running: $r0; client got $(wc -c <raw.out) bytes" &&
	test "$r0" -eq 1 &&
	kill -0 $client && kill -9 $client &&
	eventually "bulk_stat 0 running" 0
'
test_expect_success 'bulk-credit: bad requests are refused, a bad window too' '
	test_expect_code 71 $RPC rexec.bulk-credit "{}" &&
	test_expect_code 71 $RPC rexec.bulk-credit "{\"matchtag\":1}" &&
	test_expect_code 22 $RPC rexec.bulk-credit \
		"{\"matchtag\":1,\"bytes\":-2}" &&
	test_expect_code 3 $RPC rexec.bulk-credit \
		"{\"matchtag\":1,\"bytes\":100}" &&
	test_expect_code 22 $RPC -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"0\",\"window\":10}" &&
	test_expect_code 22 $RPC -s rexec.bulk-exec \
		"{\"cmd\":$CMD,\"flags\":3,\"ranks\":\"0\",\"window\":100000000000}"
'
test_expect_success 'stop the instance' '
	stop_instance bulk
'
# With guests allowed, rank 0's rexec refuses requests that come from
# another broker (no local role), as flux-core's does: flux exec from
# rank 1 then falls back to one exec per rank, which reaches ranks 1 and
# 2 directly; rank 0 itself stays out of reach from there.
test_expect_success 'guests allowed: from rank 1, -r 1-2 still runs, rank 0 refuses' '
	cat >fromrank1.sh <<-"EOF" &&
	export FLUX_URI=$(flux exec -r 1 flux getattr local-uri </dev/null)
	flux exec -l -r 1-2 flux getattr rank </dev/null | sort >guest.out
	flux exec -r 0 true </dev/null 2>guest.err && exit 1
	grep "rank 0: .*Operation not permitted" guest.err
	EOF
	flux start -s 3 -Saccess.allow-guest-user=true sh fromrank1.sh &&
	printf "1: 1\n2: 2\n" >guest.exp &&
	test_cmp guest.exp guest.out
'
# rank 0 has children 1 and 2, rank 1 has 3
test_expect_success 'start 4 brokers, fanout 2, a lost broker not fatal' '
	start_instance lostb 4 --test-exit-mode=leader -Stbon.fanout=2 &&
	flux exec -r 3 flux getattr broker.pid >rank3.pid </dev/null
'
test_expect_success 'a broker lost while its process runs: an error for its rank' '
	flux exec -r all sh -c "test \$(flux getattr rank) != 3 || exec sleep 100; sleep 1" \
		</dev/null >lost.out 2>lost.err &
	pid=$! &&
	wait_list 3 sh 1 &&
	$RANKRPC -r 3 rexec.list | jq -r ".procs[0].pid" >sleep.pid &&
	kill -9 $(cat rank3.pid) &&
	kill -9 $(cat sleep.pid) &&
	test_expect_code 68 wait $pid &&
	grep "Error: rank 3: .*" lost.err &&
	test $(grep -c Error lost.err) -eq 1 &&
	test $(bulk_stat 0 running) -eq 0 &&
	test $(bulk_stat 1 running) -eq 0
'
test_expect_success 'the ranks left still run commands' '
	flux exec -l -r 0-2 echo ok </dev/null | sort >left.out &&
	printf "0: ok\n1: ok\n2: ok\n" >left.exp &&
	test_cmp left.exp left.out
'
test_expect_success 'stop that instance' '
	stop_instance lostb; ! kill -0 $(cat lostb.pid) 2>/dev/null
'
test_done

#!/bin/sh
test_description='kvs-watch: flux kvs get --watch/--waitcreate/--append,
eventlog watches, cancel, namespaces, disconnect, guests, many watchers
and bad requests, on an instance of 4 brokers'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
KW="$FLUX_BUILD_DIR/t/kvswatch"
# 1,000 commits from one client (a flux command each costs 45 ms under ASAN)
KVSTEST="$FLUX_BUILD_DIR/src/modules/kvs/test/kvstest"
MODULES=content,content-sqlite@0,kvs,kvs-watch

# lookup flags (PROTOCOLS.md 4)
WATCH=4 WAITCREATE=8 FULL=64 UNIQ=128 APPEND=256 STREAM=512 SENTINEL=1024

# One instance for the whole script (start_instance), stopped by the last
# test.
test_expect_success 'start an instance of 4 brokers with kvs-watch' '
	start_instance broker 4 -Sbroker.modules=$MODULES &&
	flux kvs getroot >/dev/null
'

# kwstat RANK JQ-FILTER: a value from kvs-watch.stats-get on RANK
kwstat () {
	$RPC -r $1 kvs-watch.stats-get {} | jq -r "$2"
}
# wait_stat RANK JQ-FILTER VALUE: wait (up to 15s) until it is VALUE
wait_stat () {
	for i in $(seq 150); do
		test "$(kwstat $1 "$2")" = "$3" && return 0
		sleep 0.1
	done
	echo "rank $1: $2 is $(kwstat $1 "$2"), not $3" >&2
	return 1
}
# wait_watchers RANK N [NS]: wait until RANK has N watchers (in NS) and
# no lookup in flight or queued, so that their first values are known.
wait_watchers () {
	if test -n "$3"; then
		wait_stat $1 ".namespaces[\"$3\"].watchers // 0" $2
	else
		wait_stat $1 .watchers $2
	fi &&
	wait_stat $1 '."lookups-active" + ."lookups-queued"' 0
}
# no_watchers: wait until no rank has a watcher (of an earlier test) left
no_watchers () {
	for r in 0 1 2 3; do wait_stat $r .watchers 0 || return 1; done
}

test_expect_success 'kvs-watch runs on every rank, with no watcher' '
	for r in 0 1 2 3; do
		test "$(kwstat $r .watchers)" = 0 &&
		test "$(kwstat $r ".\"namespace-count\"")" = 0 || return 1
	done
'
test_expect_success 'get --watch --count=1 prints the current value' '
	flux kvs put test.a=1 &&
	flux kvs get --watch --count=1 test.a >a.out &&
	echo 1 >a.exp &&
	test_cmp a.exp a.out
'
test_expect_success 'a watch on rank 3 sees writes made from rank 0' '
	no_watchers &&
	{ $KW -r 3 -e -c 3 -t 20 test.a >a3.out & } &&
	pid=$! &&
	wait_watchers 3 1 primary &&
	flux kvs put test.a=2 &&
	flux kvs put test.a=3 &&
	wait $pid &&
	printf "1\n2\n3\nENODATA\n" >a3.exp &&
	test_cmp a3.exp a3.out
'
test_expect_success 'canceling a watch ends it with ENODATA; no watcher left' '
	grep -x ENODATA a3.out &&
	wait_watchers 3 0
'
test_expect_success 'get --watch follows commits in order' '
	no_watchers &&
	flux kvs put test.seq=0 &&
	{ $KW -r 1 -t 20 test.seq >seq.out & } &&
	pid=$! &&
	wait_watchers 1 1 &&
	for i in $(seq 1 30); do flux kvs put test.seq=$i || return 1; done &&
	for i in $(seq 150); do
		test "$(tail -n 1 seq.out)" = 30 && break; sleep 0.1
	done &&
	kill $pid && wait_watchers 1 0 &&
	test "$(tail -n 1 seq.out)" = 30 &&
	sort -n seq.out | uniq >seq.sorted &&
	test_cmp seq.sorted seq.out
'
test_expect_success 'get --watch sees a commit of the same value again' '
	no_watchers &&
	flux kvs put test.same=x &&
	{ flux kvs get --watch --count=3 test.same >same.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put test.same=x &&
	flux kvs put test.same=x &&
	wait $pid &&
	printf "x\nx\nx\n" >same.exp &&
	test_cmp same.exp same.out
'
test_expect_success 'get --watch --uniq prints only changed values' '
	no_watchers &&
	flux kvs put test.u=1 &&
	{ flux kvs get --watch --uniq --count=3 test.u >u.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put test.u=1 && flux kvs put test.u=1 &&
	flux kvs put test.u=2 && flux kvs put test.u=2 &&
	flux kvs put test.u=3 &&
	wait $pid &&
	printf "1\n2\n3\n" >u.exp &&
	test_cmp u.exp u.out
'
test_expect_success 'normalized keys match: a..b. watches a.b' '
	no_watchers &&
	flux kvs put test.norm.a=1 &&
	{ flux kvs get --watch --count=2 test..norm...a. >norm.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put .test.norm..a=2 &&
	wait $pid &&
	printf "1\n2\n" >norm.exp &&
	test_cmp norm.exp norm.out
'
test_expect_success 'a watch ends with ENOENT when its key is removed' '
	no_watchers &&
	flux kvs put test.gone=1 &&
	{ flux kvs get --watch test.gone >gone.out 2>gone.err & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs unlink test.gone &&
	test_must_fail wait $pid &&
	grep "No such file or directory" gone.err
'
test_expect_success 'without --full a replaced parent dir goes unnoticed' '
	no_watchers &&
	flux kvs put test.full.d.x=old test.full.new.x=new &&
	{ $KW -f $(($WATCH|$FULL)) -c 2 -t 20 test.full.d.x >full.out & } &&
	pid1=$! &&
	{ $KW -f $WATCH -t 20 test.full.d.x >nofull.out & } &&
	pid2=$! &&
	wait_watchers 0 2 &&
	flux kvs put --treeobj test.full.d="$(flux kvs get --treeobj test.full.new)" &&
	wait $pid1 &&
	printf "old\nnew\n" >full.exp &&
	test_cmp full.exp full.out &&
	kill $pid2 && wait_watchers 0 0 &&
	echo old >nofull.exp &&
	test_cmp nofull.exp nofull.out
'
test_expect_success 'a missing key fails with ENOENT, a missing namespace with ENOTSUP' '
	test_must_fail flux kvs get --watch --count=1 test.nokey 2>nokey.err &&
	grep "No such file or directory" nokey.err &&
	test_must_fail $KW -n nosuchns test.nokey 2>nons.err &&
	grep "Operation not supported" nons.err
'

#
# waitcreate
#
test_expect_success 'get --waitcreate of an existing key returns at once' '
	flux kvs get --waitcreate test.a >wc0.out &&
	echo 3 >wc0.exp &&
	test_cmp wc0.exp wc0.out
'
test_expect_success 'get --waitcreate waits for the key (watch on rank 2)' '
	no_watchers &&
	{ $KW -r 2 -f $WAITCREATE -t 20 test.later >wc1.out & } &&
	pid=$! &&
	wait_watchers 2 1 &&
	test_must_be_empty wc1.out &&
	flux kvs put test.later=here &&
	wait $pid &&
	echo here >wc1.exp &&
	test_cmp wc1.exp wc1.out &&
	wait_watchers 2 0
'
test_expect_success 'flux kvs get --watch --waitcreate sees the key created' '
	no_watchers &&
	{ flux kvs get --watch --waitcreate --count=2 test.wc2 >wc2.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put test.wc2=a &&
	flux kvs put test.wc2=b &&
	wait $pid &&
	printf "a\nb\n" >wc2.exp &&
	test_cmp wc2.exp wc2.out
'
test_expect_success 'waitcreate of a namespace that does not exist yet' '
	no_watchers &&
	{ $KW -r 1 -n wcns -f $(($WATCH|$WAITCREATE)) -c 1 -t 20 k >wcns.out & } &&
	pid=$! &&
	wait_watchers 1 1 wcns &&
	test "$(kwstat 1 .namespaces.wcns.waiting)" = 1 &&
	flux kvs namespace create wcns &&
	flux kvs put -N wcns k=v &&
	wait $pid &&
	echo v >wcns.exp &&
	test_cmp wcns.exp wcns.out
'
test_expect_success 'namespace removal ends its watchers with ENOTSUP' '
	no_watchers &&
	flux kvs namespace create rmns &&
	flux kvs put -N rmns k=1 &&
	{ $KW -r 2 -n rmns -t 20 k >rm.out 2>rm.err & } &&
	pid1=$! &&
	{ $KW -r 3 -n rmns -f $(($WATCH|$WAITCREATE)) -t 20 other 2>rm2.err & } &&
	pid2=$! &&
	wait_watchers 2 1 rmns &&
	wait_watchers 3 1 rmns &&
	flux kvs namespace remove rmns &&
	test_must_fail wait $pid1 &&
	test_must_fail wait $pid2 &&
	echo 1 >rm.exp &&
	test_cmp rm.exp rm.out &&
	grep "Operation not supported" rm.err &&
	grep "Operation not supported" rm2.err &&
	wait_stat 2 ".\"namespace-count\"" 0
'

#
# append and eventlogs
#
test_expect_success 'get --watch --append prints each appended value once' '
	no_watchers &&
	flux kvs put test.app=abc &&
	{ flux kvs get --watch --append --count=4 test.app >app.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put --append test.app=d &&
	flux kvs put --append test.app=e test.app=f &&
	wait $pid &&
	printf "abc\nd\ne\nf\n" >app.exp &&
	test_cmp app.exp app.out
'
test_expect_success 'an APPEND watch fails with EINVAL when the value is overwritten' '
	no_watchers &&
	{ flux kvs get --watch --append test.app >app2.out 2>app2.err & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put test.app=xyz &&
	test_must_fail wait $pid &&
	grep "Invalid argument" app2.err
'
test_expect_success 'an APPEND watch of a directory fails with EISDIR' '
	test_must_fail flux kvs get --watch --append test.full 2>app3.err &&
	grep "Is a directory" app3.err
'
test_expect_success '1000 appends watched on rank 2: each seen once, in order' '
	no_watchers &&
	{ $KW -r 2 -f $(($WATCH|$APPEND|$WAITCREATE)) -L 1000 -t 30 \
		test.big >big.out & } &&
	pid=$! &&
	wait_watchers 2 1 &&
	$KVSTEST appends 1000 test.big &&
	wait $pid &&
	seq 1000 >big.exp &&
	test_cmp big.exp big.out
'
test_expect_success 'the APPEND watch loaded at most a blob per append (stats)' '
	loads=$(kwstat 2 .loads) &&
	echo "content loads on rank 2: $loads" &&
	test $loads -ge 1 && test $loads -le 1000
'
# the kvs folds the blobs of a long valref (apply.c): 16 + log2 (bytes)
test_expect_success 'after 1000 appends the valref holds at most 30 blobs' '
	flux kvs get --treeobj test.big >bigref.json &&
	n=$(jq ".data | length" bigref.json) &&
	echo "$n blobs" &&
	test $n -gt 16 && test $n -le 30 &&
	flux kvs get --raw test.big >bigget.out &&
	test_cmp big.exp bigget.out
'
test_expect_success 'a new APPEND watch of the folded value reads it all' '
	no_watchers &&
	$KW -r 3 -f $(($WATCH|$APPEND)) -L 1000 -t 30 test.big >big2.out &&
	test_cmp big.exp big2.out
'
test_expect_success 'an eventlog of 40 entries, folded as it grows, followed' '
	no_watchers &&
	{ flux kvs eventlog get --watch --waitcreate \
		--count=40 test.ev40 >ev40.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	for i in $(seq 40); do
		flux kvs eventlog append test.ev40 e$i || return 1
	done &&
	wait $pid &&
	awk "{print \$2}" ev40.out >ev40.names &&
	seq 40 | sed "s/^/e/" >ev40.exp &&
	test_cmp ev40.exp ev40.names &&
	n=$(flux kvs get --treeobj test.ev40 | jq ".data | length") &&
	echo "40 entries in $n blobs" &&
	test $n -lt 25
'
test_expect_success 'eventlog get --watch and wait-event follow an eventlog' '
	no_watchers &&
	flux kvs eventlog append test.ev submit &&
	{ flux kvs eventlog get --watch --count=3 test.ev >ev.out & } &&
	pid1=$! &&
	{ flux kvs eventlog wait-event -t 20 test.ev finish >wait.out & } &&
	pid2=$! &&
	wait_watchers 0 2 &&
	flux kvs eventlog append test.ev start "{\"x\":1}" &&
	flux kvs eventlog append test.ev finish &&
	wait $pid1 && wait $pid2 &&
	awk "{print \$2}" ev.out >ev.names &&
	printf "submit\nstart\nfinish\n" >ev.exp &&
	test_cmp ev.exp ev.names &&
	grep finish wait.out
'
test_expect_success 'eventlog get --watch --waitcreate sees a new eventlog' '
	no_watchers &&
	{ flux kvs eventlog get --watch --waitcreate --count=2 test.ev2 >ev2.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs eventlog append test.ev2 one &&
	flux kvs eventlog append test.ev2 two &&
	wait $pid &&
	test_line_count = 2 ev2.out
'
test_expect_success 'WATCH_INITIAL_SENTINEL comes after the initial data only' '
	no_watchers &&
	flux kvs put test.sent=1 &&
	flux kvs put --append test.sent=2 &&
	{ $KW -f $(($WATCH|$APPEND|$SENTINEL)) -c 3 -t 20 test.sent >sent.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux kvs put --append test.sent=3 &&
	wait $pid &&
	printf "1\n2\nSENTINEL\n3\n" >sent.exp &&
	test_cmp sent.exp sent.out
'
test_expect_success 'STREAM sends the blobs of a value, then ENODATA' '
	$KW -r 3 -f $STREAM -e test.sent >stream.out &&
	printf "1\n2\n3\nENODATA\n" >stream.exp &&
	test_cmp stream.exp stream.out &&
	$KW -f $STREAM -e test.a >stream2.out &&
	printf "3\nENODATA\n" >stream2.exp &&
	test_cmp stream2.exp stream2.out &&
	test_must_fail $KW -f $STREAM test.full 2>stream3.err &&
	grep "Is a directory" stream3.err
'

#
# scaling, disconnect
#
test_expect_success '250 watchers of different keys each see only their own changes' '
	no_watchers &&
	keys="" && puts="" &&
	for i in $(seq 250); do
		keys="$keys test.many.k$i" && puts="$puts test.many.k$i=init"
	done &&
	flux kvs put $puts &&
	l0=$(kwstat 2 .lookups) &&
	{ $KW -r 2 -l -c 2 -t 30 $keys >many.out & } &&
	pid=$! &&
	wait_watchers 2 250 &&
	even="" && odd="" &&
	for i in $(seq 250); do
		if test $((i % 2)) = 0; then even="$even test.many.k$i=a$i"
		else odd="$odd test.many.k$i=b$i"; fi
	done &&
	flux kvs put $even &&
	flux kvs put $odd &&
	wait $pid &&
	for i in $(seq 250); do
		echo "test.many.k$i: init"
		if test $((i % 2)) = 0; then echo "test.many.k$i: a$i"
		else echo "test.many.k$i: b$i"; fi
	done | sort >many.exp &&
	sort many.out >many.sorted &&
	test_cmp many.exp many.sorted &&
	l1=$(kwstat 2 .lookups) &&
	echo "lookups on rank 2: $((l1 - l0))" &&
	test $((l1 - l0)) -eq 500
'
test_expect_success 'a client that goes away leaves no watcher behind' '
	no_watchers &&
	keys="" &&
	for i in $(seq 50); do keys="$keys test.dc$i"; done &&
	{ $KW -r 1 -f $(($WATCH|$WAITCREATE)) $keys & } &&
	pid=$! &&
	wait_watchers 1 50 &&
	test "$(kwstat 1 .senders)" = 1 &&
	kill -9 $pid &&
	wait_watchers 1 0 &&
	test "$(kwstat 1 .senders)" = 0 &&
	test "$(kwstat 1 ".\"namespace-count\"")" = 0
'

#
# guests
#
test_expect_success 'a guest cannot watch the primary namespace' '
	test_must_fail $KW -u 5001 -R 2 -c 1 -t 20 test.a 2>g1.err &&
	grep "Operation not permitted" g1.err &&
	test_must_fail $KW -u 5001 -R 2 -f $WAITCREATE test.a 2>g2.err &&
	grep "Operation not permitted" g2.err
'
test_expect_success 'a guest watches its own namespace, not another guest' '
	flux kvs namespace create -o 5001 gns &&
	flux kvs put -N gns k=mine &&
	$KW -r 2 -n gns -u 5001 -R 2 -c 1 -t 20 k >g3.out &&
	echo mine >g3.exp &&
	test_cmp g3.exp g3.out &&
	test_must_fail $KW -r 2 -n gns -u 5002 -R 2 -c 1 -t 20 k 2>g4.err &&
	grep "Operation not permitted" g4.err &&
	flux kvs namespace remove gns
'

#
# bad requests
#
test_expect_success 'malformed kvs-watch.lookup requests get EPROTO' '
	test_expect_code 71 $RPC -s kvs-watch.lookup &&
	test_expect_code 71 $RPC -s kvs-watch.lookup "[1]" &&
	test_expect_code 71 $RPC -s kvs-watch.lookup "{\"key\":\"a\"}" &&
	test_expect_code 71 $RPC -r 1 -s kvs-watch.lookup \
		"{\"namespace\":\"primary\",\"key\":1,\"flags\":4}" &&
	test_expect_code 71 $RPC kvs-watch.lookup \
		"{\"namespace\":\"primary\",\"key\":\"a\",\"flags\":4}" &&
	test_expect_code 71 $RPC kvs-watch.lookup \
		"{\"namespace\":\"primary\",\"key\":\"a\",\"flags\":512}"
'
test_expect_success 'bad flag combinations get EINVAL' '
	for f in $(($WATCH|$STREAM)) $FULL $UNIQ $APPEND \
		$(($WATCH|$SENTINEL)) 4096; do
		test_expect_code 22 $RPC -s kvs-watch.lookup \
			"{\"namespace\":\"primary\",\"key\":\"a\",\"flags\":$f}" \
			|| return 1
	done
'
test_expect_success 'malformed cancels and events are counted and ignored' '
	no_watchers &&
	b0=$(kwstat 0 ".\"bad-requests\"") &&
	e0=$(kwstat 0 ".\"bad-events\"") &&
	test_expect_code 124 timeout 1 $RPC kvs-watch.cancel "{\"matchtag\":\"x\"}" &&
	{ $KW -t 20 -c 2 test.a >bad.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	flux event pub kvs.namespace-primary-setroot "{\"namespace\":\"primary\"}" &&
	flux event pub kvs.namespace-primary-removed "{\"x\":1}" &&
	wait_stat 0 ".\"bad-events\"" $((e0 + 2)) &&
	test "$(kwstat 0 ".\"bad-requests\"")" = $((b0 + 1)) &&
	flux dmesg >dmesg.out &&
	grep "kvs-watch.err.*malformed setroot event" dmesg.out &&
	grep "kvs-watch.warning.*malformed kvs-watch.cancel" dmesg.out &&
	flux kvs put test.a=4 &&
	wait $pid &&
	printf "3\n4\n" >bad.exp &&
	test_cmp bad.exp bad.out
'
test_expect_success 'the module still serves after all that' '
	flux kvs get --watch --count=1 test.a >after.out &&
	echo 4 >after.exp &&
	test_cmp after.exp after.out
'

# kvs-watch subscribes to a namespace's events only while it has watchers
# (and KVSWATCH_UNFOLLOW_DELAY = 5 s more): commits to namespaces nobody
# watches must not wake it.  The sleeps only give an event that should
# not come the time to come.
test_expect_success 'kvs-watch gets no events of a namespace nobody watches' '
	no_watchers &&
	wait_stat 0 .followed 0 &&
	e0=$(kwstat 0 .events) &&
	flux kvs put follow.a=1 &&
	flux kvs put follow.a=2 &&
	sleep 0.5 &&
	test "$(kwstat 0 .events)" = "$e0"
'
test_expect_success 'a watcher makes it follow the namespace' '
	f0=$(kwstat 0 .follows) &&
	{ flux kvs get --watch --count=2 follow.a >follow.out & } &&
	pid=$! &&
	wait_watchers 0 1 &&
	test "$(kwstat 0 .followed)" = 1 &&
	test "$(kwstat 0 .follows)" = $((f0 + 1)) &&
	flux kvs put follow.a=3 &&
	wait $pid &&
	printf "2\n3\n" >follow.exp &&
	test_cmp follow.exp follow.out &&
	test "$(kwstat 0 .events)" -gt "$e0"
'
test_expect_success 'and stops following it a while after the last watcher' '
	wait_stat 0 .followed 0 &&
	e1=$(kwstat 0 .events) &&
	flux kvs put follow.a=4 &&
	sleep 0.5 &&
	test "$(kwstat 0 .events)" = "$e1"
'
test_expect_success 'the kvs reloading ends no watch: a refused lookup waits for kvs.online' '
	flux kvs put rl.k=1 &&
	flux module remove kvs &&
	{ flux kvs get --watch --count=2 rl.k >rl.out 2>rl.err & } &&
	pid=$! &&
	wait_stat 0 .refused 1 &&
	kill -0 $pid &&
	flux module load kvs &&
	for i in $(seq 150); do grep -q 1 rl.out && break; sleep 0.1; done &&
	flux kvs put rl.k=2 &&
	wait $pid &&
	printf "1\n2\n" >rl.exp &&
	test_cmp rl.exp rl.out
'
test_expect_success 'no watcher is left on any rank' '
	for r in 0 1 2 3; do
		wait_stat $r .watchers 0 &&
		wait_stat $r ".\"lookups-active\"" 0 || return 1
	done
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'

test_done

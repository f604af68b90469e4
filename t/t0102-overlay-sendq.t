#!/bin/sh
test_description='what a broker holds for one overlay peer is bounded
(tbon.sendq-limit, issue 25): a child that stops reading while events
flow is declared lost past the limit, and its parent does not grow'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"
# AddressSanitizer keeps freed memory in quarantine: RSS says nothing there.
if ldd "$(command -v flux-broker)" 2>/dev/null | grep -q libasan; then
	test_set_prereq SANITIZER
fi

FLOOD="$FLUX_BUILD_DIR/t/client-flood"

# stop.sh N: SIGSTOP rank 1, publish N events of 64 KB on rank 0, report
# rank 0's RSS growth (kB) in growth.out, the log in dmesg.out.
cat >stop.sh <<EOF
pid0=\$(flux getattr broker.pid)
pid1=\$(flux exec -r 1 flux getattr broker.pid) || exit 1
kill -STOP \$pid1
rss0=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid0/status)
$FLOOD publish \$1 65536 || { kill -CONT \$pid1; exit 1; }
sleep 1
rss1=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid0/status)
echo \$((rss1 - rss0)) >growth.out
flux dmesg >dmesg.out
flux overlay status >status.out 2>&1
kill -CONT \$pid1
EOF

test_expect_success 'a bad tbon.sendq-limit is refused' '
	test_must_fail flux start -Stbon.sendq-limit=lots true 2>bad.err &&
	grep "tbon.sendq-limit must be a byte count" bad.err &&
	flux start flux getattr tbon.sendq-limit >default.out &&
	test $(cat default.out) = 268435456
'
test_expect_success 'a stopped child under 50 MB of events, limit 4M: lost, parent bounded' '
	timeout -k 10 120 flux start -s 2 --test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh stop.sh 800 &&
	cat growth.out status.out &&
	grep "child rank 1: [0-9]* bytes wait to be sent to it, over tbon.sendq-limit (4194304): it does not read: lost" dmesg.out &&
	grep "1 .*: lost" status.out &&
	{ test_have_prereq SANITIZER || test $(cat growth.out) -lt 16384; }
'
test_expect_success 'the same with the default limit: the parent holds it all' '
	timeout -k 10 120 flux start -s 2 --test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 sh stop.sh 800 &&
	cat growth.out status.out &&
	! grep "does not read" dmesg.out &&
	{ test_have_prereq SANITIZER || test $(cat growth.out) -gt 40000; }
'
# released.sh N: as stop.sh, then wait up to 30 s (rank 1 still stopped)
# for rank 0 to log that what ZeroMQ held for rank 1 was released.
cat >released.sh <<EOF
pid1=\$(flux exec -r 1 flux getattr broker.pid) || exit 1
kill -STOP \$pid1
$FLOOD publish \$1 65536 || { kill -CONT \$pid1; exit 1; }
for i in \$(seq 300); do
	flux dmesg | grep -q "bytes ZeroMQ held for it were released" && break
	sleep 0.1
done
flux dmesg >dmesg.out
kill -CONT \$pid1
EOF
test_expect_success 'what ZeroMQ held for the lost child is released while it stays stopped' '
	timeout -k 10 120 flux start -s 2 --test-exit-mode=leader \
		-Stbon.heartbeat=0.2 -Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh released.sh 800 &&
	grep "does not read: lost" dmesg.out &&
	grep "child rank 1: the [0-9]* bytes ZeroMQ held for it were released" dmesg.out
'
# churn.sh N: clients on rank 0 follow rank 1's log (a streaming RPC held
# below rank 0) and go away; rank 0's count of the RPCs in flight below
# it (the broker's own included: one may come and go, so the script
# waits, 10 s at most, for each count it expects) before, while 5
# follow, and after N more came and went, in before/during/after.out.
cat >churn.sh <<EOF
tracked () {
	$FLUX_BUILD_DIR/t/rpc broker.stats-get |
		sed -n 's/.*"tracked-rpcs":\([0-9]*\).*/\1/p'
}
flux ping -r 1 -c 1 broker >/dev/null
before=\$(tracked)
echo \$before >before.out
for i in \$(seq 5); do
	$FLUX_BUILD_DIR/t/rpc -r 1 -s log.dmesg "{\"follow\":true,\"nobacklog\":true}" >/dev/null &
	echo \$! >>followers
done
n=0
while test \$(tracked) -lt \$((before + 5)) && test \$n -lt 100; do
	sleep 0.1; n=\$((n + 1))
done
tracked >during.out
kill \$(cat followers)
wait
for i in \$(seq \$1); do
	$FLUX_BUILD_DIR/t/rpc -r 1 -s log.dmesg "{\"follow\":true,\"nobacklog\":true}" >/dev/null &
	pid=\$!
	sleep 0.05
	kill \$pid
	wait \$pid
done
flux ping -r 1 -c 1 broker >/dev/null
n=0
while test \$(tracked) -gt \$((before + 1)) && test \$n -lt 100; do
	sleep 0.1; n=\$((n + 1))
done
tracked >after.out
EOF
# The old code kept one entry per client gone (36 after this run).
test_expect_success 'RPCs held below a broker by clients that went away are forgotten' '
	flux start -s 2 sh churn.sh 30 &&
	cat before.out during.out after.out &&
	test $(cat during.out) -ge $(($(cat before.out) + 5)) &&
	test $(cat after.out) -le $(($(cat before.out) + 1))
'
# upflood.sh N: SIGSTOP rank 0, and a client of rank 1 sends N requests
# of 64 KB to rank 0 at once; SIGCONT rank 0 after 3 s.  Rank 1's queue
# to its parent (tbon.sendq-limit 4M) is full long before N*64 KB: the
# client is refused (EAGAIN), the link stays up.  Rank 1's RSS growth (kB)
# in upgrowth.out, its log in updmesg.out, the burst's count in
# upburst.out, a ping of rank 1 through rank 0 after in upping.out.
cat >upflood.sh <<EOF
pid0=\$(flux getattr broker.pid)
pid1=\$(flux exec -r 1 flux getattr broker.pid) || exit 1
uri1=\$(flux exec -r 1 flux getattr local-uri) || exit 1
pad=\$(printf "%065536d" 0)
rss0=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid1/status)
kill -STOP \$pid0
FLUX_URI=\$uri1 $FLUX_BUILD_DIR/t/rpc -r 0 -b \$1 broker.ping "{\"pad\":\"\$pad\"}" >upburst.out &
sleep 3
rss1=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid1/status)
kill -CONT \$pid0
wait
echo \$((rss1 - rss0)) >upgrowth.out
flux ping -r 1 -c 1 broker >upping.out 2>&1
FLUX_URI=\$uri1 flux dmesg >updmesg.out
EOF
test_expect_success 'a client of rank 1 flooding rank 0 is refused EAGAIN; the link to the parent stays' '
	timeout -k 10 120 flux start -s 2 --test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh upflood.sh 200 &&
	cat upburst.out upgrowth.out upping.out &&
	grep "the link to the parent is full" updmesg.out &&
	! grep "over tbon.sendq-limit" updmesg.out &&
	grep "answered 200 failed [1-9]" upburst.out &&
	grep "^1!broker.ping .* time=" upping.out &&
	{ test_have_prereq SANITIZER || test $(cat upgrowth.out) -lt 16384; }
'
# downflood.sh N: SIGSTOP rank 1, and a client of rank 0 sends N
# requests of 64 KB to rank 1 at once; SIGCONT rank 1 after 3 s.  Rank
# 0's queue to the child (tbon.sendq-limit 4M) is full long before
# N*64 KB: the client is refused (EAGAIN), rank 1 is not lost.  The
# burst's count in downburst.out, rank 0's log in downdmesg.out, a ping
# of rank 1 after in downping.out.
cat >downflood.sh <<EOF
pid1=\$(flux exec -r 1 flux getattr broker.pid) || exit 1
pad=\$(printf "%065536d" 0)
kill -STOP \$pid1
$FLUX_BUILD_DIR/t/rpc -r 1 -b \$1 broker.ping "{\"pad\":\"\$pad\"}" >downburst.out &
sleep 3
kill -CONT \$pid1
wait
flux ping -r 1 -c 1 broker >downping.out 2>&1
flux dmesg >downdmesg.out
flux overlay status >downstatus.out 2>&1
EOF
test_expect_success 'a client of rank 0 flooding a stopped child is refused EAGAIN; the child is not lost' '
	timeout -k 10 120 flux start -s 2 --test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh downflood.sh 200 &&
	cat downburst.out downping.out downstatus.out &&
	grep "the link to child rank 1 is full (.* bytes wait to be sent to it): try again later (local clients may use 2097152 of tbon.sendq-limit 4194304): request broker.ping refused" downdmesg.out &&
	! grep "over tbon.sendq-limit" downdmesg.out &&
	grep "answered 200 failed [1-9]" downburst.out &&
	grep "^1!broker.ping .* time=" downping.out
'
# What a broker logs when it drops an event of a local client going up
# (tests 8 and the last one).
client_drop_line='the link to the parent is full: .* (local clients may use 2097152 of tbon.sendq-limit 4194304): event flood.raw from a local client dropped'
# childflood.sh N: on a chain 0-1-2, SIGSTOP rank 0, and a client of
# rank 2 sends N raw events of 64 KB: rank 2 passes them to rank 1, whose
# queue to its stopped parent fills.  Rank 1's RSS growth (kB) in
# cgrowth.out, its stats in cstats.out, its log in cdmesg.out (rank 2's
# in cdmesg2.out), a ping of rank 2 through ranks 0 and 1 after SIGCONT
# in cping.out.  On a loaded machine rank 1 may read its child's link
# more slowly than the client writes: then rank 2's link to rank 1 fills
# first and rank 2 drops (the client's count in craw.out), not rank 1.
cat >childflood.sh <<EOF
pid0=\$(flux getattr broker.pid)
pid1=\$(flux exec -r 1 flux getattr broker.pid) || exit 1
uri1=\$(flux exec -r 1 flux getattr local-uri) || exit 1
uri2=\$(flux exec -r 2 flux getattr local-uri) || exit 1
rss0=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid1/status)
kill -STOP \$pid0
FLUX_URI=\$uri2 $FLOOD rawpub \$1 65536 >craw.out || { kill -CONT \$pid0; exit 1; }
# rank 2 may still be passing the events up under load: wait (30 s at
# most) until rank 1 drops some, unless rank 2 did, then 1 s more
for i in \$(seq 300); do
	grep -q "^dropped [1-9]" craw.out && break
	FLUX_URI=\$uri1 $FLUX_BUILD_DIR/t/rpc broker.stats-get |
		grep -q "\"upstream-dropped\":[1-9]" && break
	sleep 0.1
done
sleep 1
rss1=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid1/status)
FLUX_URI=\$uri1 $FLUX_BUILD_DIR/t/rpc broker.stats-get >cstats.out
kill -CONT \$pid0
echo \$((rss1 - rss0)) >cgrowth.out
flux ping -r 2 -c 1 broker >cping.out 2>&1
FLUX_URI=\$uri1 flux dmesg >cdmesg.out
FLUX_URI=\$uri2 flux dmesg >cdmesg2.out
EOF
test_expect_success 'a child flooding events up while the parent is stopped: dropped, the link stays (3 levels)' '
	timeout -k 10 120 flux start -s 3 -Stbon.topo=kary:1 \
		--test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh childflood.sh 400 &&
	cat craw.out cgrowth.out cstats.out cping.out &&
	grep "sent 400" craw.out &&
	if grep "^dropped [1-9]" craw.out; then
		grep "$client_drop_line" cdmesg2.out
	else
		grep "\"upstream-dropped\":[1-9]" cstats.out &&
		grep "the link to the parent is full: .* (events from here or below may use 3670016 of tbon.sendq-limit 4194304): event flood.raw from this broker or below dropped" cdmesg.out
	fi &&
	! grep "over tbon.sendq-limit" cdmesg.out cdmesg2.out &&
	grep "^2!broker.ping .* time=" cping.out &&
	{ test_have_prereq SANITIZER || test $(cat cgrowth.out) -lt 16384; }
'
# modflood.sh N: on a chain 0-1-2, a test module on rank 1 publishes N
# events of 64 KB at once while rank 0 is stopped (the module's pipe to
# the broker may hold them all for a moment: N*64 KB of the growth).  Rank 1's RSS growth
# (kB) in mgrowth.out, its stats in mstats.out, its log in mdmesg.out, a
# ping of rank 2 after SIGCONT in mping.out.
cat >modflood.sh <<EOF
pid0=\$(flux getattr broker.pid)
pid1=\$(flux exec -r 1 flux getattr broker.pid) || exit 1
uri1=\$(flux exec -r 1 flux getattr local-uri) || exit 1
export FLUX_URI=\$uri1
flux module load $FLUX_BUILD_DIR/t/module/.libs/testmod.so || exit 1
rss0=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid1/status)
kill -STOP \$pid0
$FLUX_BUILD_DIR/t/rpc testmod.publish "{\"count\":\$1,\"size\":65536}" >mpub.out ||
	{ kill -CONT \$pid0; exit 1; }
$FLUX_BUILD_DIR/t/rpc broker.ping >/dev/null
sleep 1
rss1=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid1/status)
$FLUX_BUILD_DIR/t/rpc broker.stats-get >mstats.out
kill -CONT \$pid0
echo \$((rss1 - rss0)) >mgrowth.out
flux ping -r 2 -c 1 broker >mping.out 2>&1
flux dmesg >mdmesg.out
flux module remove testmod
EOF
test_expect_success 'a module flooding events up while the parent is stopped: dropped, the link stays (3 levels)' '
	timeout -k 10 120 flux start -s 3 -Stbon.topo=kary:1 \
		--test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh modflood.sh 200 &&
	cat mpub.out mgrowth.out mstats.out mping.out &&
	grep "\"count\":200" mpub.out &&
	grep "the link to the parent is full: .* (events from here or below may use 3670016 of tbon.sendq-limit 4194304): event testmod.flood from this broker or below dropped" mdmesg.out &&
	! grep "over tbon.sendq-limit" mdmesg.out &&
	grep "\"upstream-dropped\":[1-9]" mstats.out &&
	grep "^2!broker.ping .* time=" mping.out &&
	{ test_have_prereq SANITIZER || test $(cat mgrowth.out) -lt 20480; }
'
# tracklimit.sh N: on a chain 0-1-2, a client of rank 0 sends N streaming
# requests that wait on rank 2 (log.dmesg follow): rank 0 and rank 1
# track them (rank 0 forgets those rank 1 refused once it answers).  The answers in tl.out, the counts of rank 0 and 1 while
# they wait in tl.during0/1, rank 1's once the client left in tl.after1,
# rank 1's log in tl.dmesg.
cat >tracklimit.sh <<EOF
tracked () {
	$FLUX_BUILD_DIR/t/rpc -r \$1 broker.stats-get |
		sed -n 's/.*"tracked-rpcs":\([0-9]*\).*/\1/p'
}
uri1=\$(flux exec -r 1 flux getattr local-uri) || exit 1
flux ping -r 2 -c 1 broker >/dev/null || exit 1
$FLOOD pending 2 log.dmesg \$1 '{"follow":true,"nobacklog":true}' >tl.out &
pid=\$!
for i in \$(seq 600); do grep -q answered tl.out && break; sleep 0.1; done
tracked 0 >tl.during0
tracked 1 >tl.during1
kill -USR1 \$pid && wait \$pid
n=0
while test \$(tracked 1) -gt 1 && test \$n -lt 100; do
	sleep 0.1; n=\$((n + 1))
done
tracked 1 >tl.after1
FLUX_URI=\$uri1 flux dmesg >tl.dmesg
EOF
test_expect_success 'RPCs a live client has waiting below an intermediate broker are bounded (3 levels)' '
	flux start -s 3 -Stbon.topo=kary:1 -Sbroker.tracked-rpc-limit=100 \
		sh tracklimit.sh 300 &&
	cat tl.out tl.during0 tl.during1 tl.after1 &&
	grep "refused 200$" tl.out &&
	grep "refused: Resource temporarily unavailable: rank 1 holds 100 requests of this sender in flight below rank 2 (broker.tracked-rpc-limit 100): try again later" tl.out &&
	test $(cat tl.during1) -le 101 &&
	test $(cat tl.after1) -le 1 &&
	grep "rank 1 holds 100 requests of this sender .*: log.dmesg from .* (uid $(id -u)) refused" tl.dmesg
'
# forged.sh: two clients of rank 0 each send 60 requests that wait on
# rank 2 (matchtags 1001.. and 2001..), each naming the same other
# sender below its own id.
cat >forged.sh <<EOF
for i in 1 2; do
	CLIENT_FLOOD_ROUTE=somebody-else CLIENT_FLOOD_TAG0=\${i}001 \
		$FLOOD pending 2 log.dmesg 60 '{"follow":true,"nobacklog":true}' >forged.\$i &
	echo \$! >>forged.pids
	for j in \$(seq 600); do grep -q answered forged.\$i && break; sleep 0.1; done
done
kill -USR1 \$(cat forged.pids)
wait
EOF
test_expect_success 'a client naming another sender does not count against it' '
	flux start -s 3 -Stbon.topo=kary:1 -Sbroker.tracked-rpc-limit=100 \
		sh forged.sh &&
	cat forged.1 forged.2 &&
	grep "answered 0 refused 0" forged.1 &&
	grep "answered 0 refused 0" forged.2
'
test_expect_success 'RPCs a client has waiting below its own broker are charged to it' '
	flux start -s 3 -Stbon.topo=kary:1 -Sbroker.client-sendq-limit=64k \
		sh tracklimit.sh 300 &&
	cat tl.out tl.during0 &&
	grep "refused: No space left on device: this connection holds too much: [0-9]* of its requests wait below this broker (broker.client-sendq-limit)" tl.out &&
	test $(cat tl.during0) -lt 200 &&
	test $(cat tl.after1) -le 1
'
test_expect_success 'broker.tracked-rpc-limit must be a count' '
	test_must_fail flux start -Sbroker.tracked-rpc-limit=x true 2>tl.err &&
	grep "broker.tracked-rpc-limit must be a count of at least 1, not x" tl.err &&
	flux start flux getattr broker.tracked-rpc-limit >tl.dflt &&
	test $(cat tl.dflt) = 65536
'
# rawself.sh N: on 2 brokers, SIGSTOP rank 0, and a client of rank 1
# sends N raw events of 64 KB: rank 1 drops what passes the local
# clients' share of its link; the client reads its own count of drops
# in rank 1's broker.stats-get (rself.out), rank 1's log in rselfdmesg.out.
cat >rawself.sh <<EOF
pid0=\$(flux getattr broker.pid)
uri1=\$(flux exec -r 1 flux getattr local-uri) || exit 1
kill -STOP \$pid0
FLUX_URI=\$uri1 $FLOOD rawpub \$1 65536 >rself.out || { kill -CONT \$pid0; exit 1; }
kill -CONT \$pid0
FLUX_URI=\$uri1 flux dmesg >rselfdmesg.out
EOF
# client_drop_line is what test 8 looks for on rank 2 when, on a loaded
# machine, the flood is dropped there: here it always is.
test_expect_success 'raw events of a local client dropped going up are counted for it in broker.stats-get' '
	timeout -k 10 120 flux start -s 2 --test-exit-mode=leader \
		-Stbon.torpid_max=100 -Stbon.lost_max=200 \
		-Stbon.sendq-limit=4M sh rawself.sh 200 &&
	cat rself.out &&
	grep "sent 200" rself.out &&
	grep "^dropped [1-9][0-9]* of them" rself.out &&
	grep "$client_drop_line" rselfdmesg.out
'
test_done

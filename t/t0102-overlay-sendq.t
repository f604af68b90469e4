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
test_done

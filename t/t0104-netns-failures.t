#!/bin/sh
test_description='node failures in a virtual cluster of 7 hosts (network
namespaces, one broker per host from a config file, a binary tree: 0 over
1 and 2, 1 over 3 and 4, 2 over 5 and 6): a cut link (the host turns
torpid, then lost, within the configured timeouts; its job gets
node-failure; it rejoins once the link is back and its broker restarted),
a killed interior broker (its subtree lost, its jobs node-failure, a job
elsewhere goes on; the subtree recovers), and rank 0 restarted with its
statedir while a job runs on the other hosts (the job ends with an
exception that says why, never silently)'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# Namespaces are $STEM-<pid>-*: no other test uses this stem, and each run
# has its own (the bridge and addresses live inside them, so runs of
# t0100/t0101/t0103 in parallel cannot meet this one).  netns-test.sh:
# the skip check, PREFIX, the clean-up, no_process_left, wait_gone.
STEM=flux-t0104
. "$SHARNESS_TEST_SRCDIR/netns-test.sh"
NODES=7
DIR=$TMPDIR/c

NETNS_SUBNET=10.254.2
NETNS_PORT=8072
NETNS_TOPO=kary:2
# Short timeouts: heartbeats every 0.5s, torpid after 1.5s of silence,
# lost after 4s.  Silence is checked once per heartbeat.  Set in the
# config file under flux-core's keys (torpid_min is its keepalive period,
# tcp_user_timeout its time to drop a dead peer), as a site would.
HB=0.5 TORPID=1.5 LOST=4
NETNS_TBON="\"torpid_min\": $HB, \"torpid_max\": \"${TORPID}s\", \"tcp_user_timeout\": \"${LOST}s\""
export NETNS_SUBNET NETNS_PORT NETNS_TOPO NETNS_TBON

# The instance is driven from here, through rank 0's local socket (a path:
# reachable from every network namespace).  Rank 0 runs no initial
# program and keeps its KVS in a statedir, so that it can be restarted.
FLUX_URI=local://$DIR/run0/local-0
export FLUX_URI

# start_broker I [ARGS...]: the broker of host I, in the background
start_broker () {
	i=$1
	shift
	"$CLUSTER" broker "$PREFIX" "$i" "$DIR" "$@" \
		>>"$DIR/broker$i.log" 2>&1 </dev/null &
}
start_rank0 () {
	start_broker 0 -Sstatedir="$DIR/state" -Sbroker.rc2_none=1
}
now () {
	date +%s.%N
}
sum () {
	awk "BEGIN { print $1 + $2 + $3 }"
}
# wait_until SECONDS CMD...: run CMD every 0.1s until it succeeds
wait_until () {
	deadline=$(awk -v t="$(now)" -v s="$1" 'BEGIN { printf "%f", t + s }')
	shift
	until "$@" 2>/dev/null; do
		awk -v t="$(now)" -v d="$deadline" 'BEGIN { exit !(t > d) }' &&
			{ echo "timed out: $*"; return 1; }
		sleep 0.1
	done
}
# below T0 MAX: print the seconds since T0, fail unless less than MAX
below () {
	awk -v t0="$1" -v max="$2" -v t="$(now)" \
		'BEGIN { d = t - t0; printf "%.2f\n", d; exit !(d < max) }'
}
group_is () {
	test "$(timeout 10 $RPC groups.get "{\"name\":\"$1\"}")" = \
		"{\"members\":\"$2\"}"
}
status_has () {
	timeout 10 flux overlay status | grep -q "$1"
}
node_empty () {
	for i in "$@"; do
		test -z "$(ip netns pids $PREFIX-n$i)" || return 1
	done
}
pid_of () {
	timeout 10 $RPC -r $1 attr.get "{\"name\":\"broker.pid\"}" |
		sed -e "s/.*\"value\":\"\([0-9]*\)\".*/\1/"
}
# state_is ID STATE: the job is in STATE (R, F, CD...)
state_is () {
	test "$(timeout 10 flux jobs -n -a -o "{status_abbrev}" $1)" = "$2"
}
all_up () {
	wait_until 60 group_is broker.online 0-6 &&
	wait_until 30 status_has "0 node0: full" &&
	test "$(timeout 10 flux overlay status | grep -c ": full")" -eq 7
}

test_expect_success 'config [tbon] times: a value that is no duration is refused' '
	echo "{\"tbon\": {\"tcp_user_timeout\": \"soon\"}}" >bad.json &&
	test_must_fail timeout 30 flux-broker -c bad.json true 2>bad.err &&
	grep "config tbon.tcp_user_timeout must be a duration" bad.err &&
	echo "{\"tbon\": {\"torpid_max\": 7, \"lost_max\": \"1m\"}}" >ok.json &&
	timeout -k 10 30 flux-broker -c ok.json true
'
test_expect_success "set up $NODES hosts; start one broker on each" '
	"$CLUSTER" up "$PREFIX" $NODES "$DIR" &&
	grep "\"tcp_user_timeout\": \"4s\"" "$DIR/boot.json" &&
	mkdir -p "$DIR/state" &&
	for i in $(seq 1 6); do start_broker $i || return 1; done &&
	start_rank0 &&
	all_up &&
	timeout -k 10 60 flux run -N7 hostname | sort >hosts.out &&
	seq -f node%g 0 6 >hosts.exp &&
	test_cmp hosts.exp hosts.out
'

test_expect_success 'cut the link of leaf host 6: torpid, then lost, in time' '
	id=$(timeout 30 flux submit -N7 -n7 sleep 300) &&
	echo $id >cut.id &&
	# every shell past its start barrier: the tasks run
	timeout 60 flux job wait-event -t 60 -p guest.exec.eventlog $id \
		shell.start &&
	t0=$(now) &&
	"$NET" cut $PREFIX 6 &&
	wait_until 20 group_is broker.torpid 6 &&
	below $t0 $(sum $TORPID $HB 3) >torpid.time &&
	wait_until 20 status_has "6 node6: lost" &&
	below $t0 $(sum $LOST $HB 3) >lost.time &&
	timeout 30 flux job wait-event -t 30 $id exception >cut.exc &&
	below $t0 $(sum $LOST $HB 4) >exc.time &&
	echo "torpid after $(cat torpid.time)s, lost after $(cat lost.time)s," \
		"node-failure after $(cat exc.time)s" &&
	grep "type=\"node-failure\"" cut.exc &&
	grep "node6 (rank 6)" cut.exc &&
	timeout 30 flux job wait-event -t 30 $id clean &&
	# the leader shell was told the shell is lost (it logs it), so it
	# ends with its SIGTERMed task instead of waiting for the lost
	# shell output until the kill sequence SIGKILL (5s later)
	timeout 10 flux job eventlog -p guest.exec.eventlog $id >cut.exec &&
	grep "message=\"node failure on node6 (rank 6)\" component=\"exception\"" \
		cut.exec &&
	timeout 10 flux job eventlog $id >cut.eventlog &&
	grep "finish status=36608" cut.eventlog &&
	# torpid was seen before lost, neither before its time (silence
	# began at most one heartbeat before the cut), and the lost host
	# left the group
	awk "BEGIN { exit !($(cat torpid.time) < $(cat lost.time)) }" &&
	awk "BEGIN { exit !($(cat torpid.time) >= $TORPID - $HB) }" &&
	awk "BEGIN { exit !($(cat lost.time) >= $LOST - $HB) }" &&
	wait_until 10 group_is broker.torpid "" &&
	timeout 10 flux overlay status >cut-status.out &&
	grep "2 node2: degraded" cut-status.out &&
	grep "0 node0: degraded" cut-status.out &&
	timeout 10 flux dmesg >cut-dmesg.out &&
	grep "broker on rank 6 is torpid" cut-dmesg.out &&
	grep "broker on rank 6 lost" cut-dmesg.out &&
	timeout 10 flux resource list -n -s down -o "{nodelist}" >cut-down.out &&
	grep -x node6 cut-down.out
'
test_expect_success 'host 6 lost its parent too: its broker and shell left' '
	wait_until 20 node_empty 6 &&
	grep "parent lost" "$DIR/broker6.log"
'
test_expect_success 'the link back and host 6 restarted: it rejoins and runs jobs' '
	"$NET" mend $PREFIX 6 &&
	start_broker 6 &&
	all_up &&
	wait_until 30 eval "test -z \"\$(flux resource list -n -s down -o {nodelist})\"" &&
	timeout -k 10 60 flux run -N7 hostname | sort >rejoin.out &&
	test_cmp hosts.exp rejoin.out
'

test_expect_success 'kill interior broker 1: its subtree (1, 3, 4) is lost' '
	# job B on hosts 0, 2, 5, 6 only; job A on every host
	timeout 10 flux resource drain 1,3-4 netns-test &&
	idb=$(timeout 30 flux submit -N4 -n4 \
		sh -c "while ! test -e $TMPDIR/go; do sleep 0.1; done; hostname") &&
	timeout 60 flux job wait-event -t 60 -p guest.exec.eventlog $idb \
		shell.start &&
	timeout 10 flux resource undrain 1,3-4 &&
	ida=$(timeout 30 flux submit -N7 -n7 sleep 300) &&
	timeout 60 flux job wait-event -t 60 -p guest.exec.eventlog $ida \
		shell.start &&
	echo $idb >b.id &&
	pid1=$(pid_of 1) && test -n "$pid1" &&
	t0=$(now) &&
	kill -9 $pid1 &&
	timeout 30 flux job wait-event -t 30 $ida exception >a.exc &&
	below $t0 $(sum $LOST $HB 4) &&
	grep "type=\"node-failure\"" a.exc &&
	wait_until 20 group_is broker.online 0,2,5-6 &&
	timeout 10 flux overlay status >mid-status.out &&
	cat mid-status.out &&
	grep "1 node1: lost" mid-status.out &&
	grep "3 node3: lost" mid-status.out &&
	grep "4 node4: lost" mid-status.out &&
	grep "2 node2: full" mid-status.out &&
	timeout 10 flux resource list -n -s down -o "{nodelist}" >mid-down.out &&
	grep -x "node\[1,3-4\]" mid-down.out &&
	# the children of the lost broker left on their own, and the shell
	# of job A on host 1 killed its task when its broker died
	wait_until 20 node_empty 1 3 4 &&
	# job A ends: its live ranks are free for the next test (its leader
	# was told its lost shells, it does not wait for their output)
	timeout 60 flux job wait-event -t 60 $ida clean
'
test_expect_success 'a job on the other hosts goes on, new jobs run there' '
	state_is $(cat b.id) R &&
	timeout -k 10 60 flux run -N4 hostname | sort >others.out &&
	printf "node%s\n" 0 2 5 6 >others.exp &&
	test_cmp others.exp others.out
'
test_expect_success 'restart hosts 1, 3, 4: the subtree recovers and runs jobs' '
	for i in 1 3 4; do start_broker $i || return 1; done &&
	all_up &&
	wait_until 30 eval "test -z \"\$(flux resource list -n -s down -o {nodelist})\"" &&
	touch $TMPDIR/go &&
	timeout 60 flux job wait-event -t 60 $(cat b.id) clean &&
	timeout -k 10 30 flux job attach $(cat b.id) | sort >b.out &&
	test_cmp others.exp b.out &&
	timeout -k 10 60 flux run -N7 hostname | sort >recover.out &&
	test_cmp hosts.exp recover.out
'

test_expect_success 'kill rank 0 while a job runs on hosts 1-6: all leave' '
	timeout 10 flux resource drain 0 netns-test &&
	idc=$(timeout 30 flux submit -N6 -n6 \
		sh -c "while ! test -e $TMPDIR/go2; do sleep 0.1; done") &&
	timeout 60 flux job wait-event -t 60 -p guest.exec.eventlog $idc \
		shell.start &&
	timeout 10 flux resource undrain 0 &&
	echo $idc >c.id &&
	timeout 10 flux jobs -a -n -o "{id}" | sort >jobs-before.out &&
	pid0=$(pid_of 0) && test -n "$pid0" &&
	kill -9 $pid0 &&
	# every broker loses its parent, and its shells with it
	wait_until 30 node_empty 0 1 2 3 4 5 6
'
test_expect_success 'rank 0 restarted with its statedir: the job is not lost silently' '
	start_rank0 &&
	for i in $(seq 1 6); do start_broker $i || return 1; done &&
	all_up &&
	idc=$(cat c.id) &&
	timeout 30 flux job wait-event -t 30 $idc clean &&
	timeout 10 flux job eventlog $idc >c.eventlog &&
	cat c.eventlog &&
	grep "exception type=\"exec\" severity=0" c.eventlog &&
	grep "cannot be reattached: its shells are gone (the instance restarted while it ran)" c.eventlog &&
	state_is $idc F &&
	test_must_fail timeout -k 10 30 flux job attach $idc 2>c.attach.err &&
	grep "shells are gone" c.attach.err &&
	# the jobs of before are all still known
	timeout 10 flux jobs -a -n -o "{id}" | sort >jobs-after.out &&
	test_cmp jobs-before.out jobs-after.out &&
	timeout -k 10 60 flux run -N7 hostname | sort >restart.out &&
	test_cmp hosts.exp restart.out
'
test_expect_success 'shut down: every broker stops, nothing is left' '
	timeout -k 10 60 flux shutdown --quiet &&
	wait_until 30 node_empty 0 1 2 3 4 5 6 &&
	"$CLUSTER" down "$PREFIX" &&
	test -z "$(ip netns list | grep "^$PREFIX-")"
'
test_done

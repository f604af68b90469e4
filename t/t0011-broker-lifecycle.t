#!/bin/sh
test_description='brokers start and stop without hanging: a torpid child
that comes back, a shared rundir, a broker lost during start-up or after
it, and the overlay status of lost descendants'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"

# The pids of the brokers started from this test directory (other tests
# may run brokers at the same time: those have another cwd).
my_brokers () {
	for p in $(pgrep -x flux-broker); do
		test "$(readlink /proc/$p/cwd)" = "$(pwd -P)" && echo $p
	done
	return 0
}
# Kill what a failed test left behind (each pid was checked as ours).
kill_my_brokers () {
	for p in $(my_brokers); do kill -9 $p; done
	return 0
}
no_brokers_left () {
	test -z "$(my_brokers)"
}
# pid_of RANK: the pid of the broker of RANK
cat >pid_of.sh <<EOF
$RPC -r \$1 attr.get '{"name":"broker.pid"}' | sed -e 's/.*"value":"\([0-9]*\)".*/\1/'
EOF

test_expect_success 'a child torpid then back: rank 0 still exits' '
	cat >torpid.sh <<-EOT &&
	pid=\$(sh pid_of.sh 1)
	test -n "\$pid" || exit 1
	kill -STOP \$pid
	sleep 2.5
	kill -CONT \$pid
	sleep 1
	flux dmesg >torpid.dmesg
	EOT
	timeout -k 10 60 flux start -s 2 -Stbon.heartbeat=0.2 \
		-Stbon.torpid_max=1 -Stbon.lost_max=0 sh torpid.sh;
	rc=$? &&
	kill_my_brokers &&
	grep "rank 1 is torpid" torpid.dmesg &&
	test $rc = 0
'
# Issue 26: flux-core's broker.torpid group.  A child stopped for longer
# than tbon.torpid_max is in it; on SIGCONT it leaves it; the instance
# still exits 0 (the shutdown hang after a torpid child is fixed).
test_expect_success 'broker.torpid: a stopped child is in it, leaves on SIGCONT' '
	cat >torpidgrp.sh <<-EOT &&
	get () {
		$RPC groups.get "{\"name\":\"broker.torpid\"}"
	}
	pid=\$(sh pid_of.sh 1)
	test -n "\$pid" || exit 1
	get >tg.before || exit 1
	kill -STOP \$pid
	n=0
	while ! get | grep -q "\"members\":\"1\""; do
		n=\$((n+1))
		test \$n -lt 300 || { kill -CONT \$pid; exit 1; }
		sleep 0.1
	done
	get >tg.during
	kill -CONT \$pid
	n=0
	while ! get | grep -q "\"members\":\"\""; do
		n=\$((n+1))
		test \$n -lt 300 || exit 1
		sleep 0.1
	done
	get >tg.after
	EOT
	timeout -k 10 90 flux start -s 2 -Stbon.heartbeat=0.2 \
		-Stbon.torpid_max=1 -Stbon.lost_max=0 sh torpidgrp.sh;
	rc=$? &&
	kill_my_brokers &&
	test $rc = 0 &&
	grep "\"members\":\"\"" tg.before &&
	grep "\"members\":\"1\"" tg.during &&
	grep "\"members\":\"\"" tg.after &&
	no_brokers_left
'
test_expect_success 'FINALIZE has a bound: a child that never leaves is left' '
	cat >stuck.sh <<-EOT &&
	pid=\$(sh pid_of.sh 1)
	test -n "\$pid" || exit 1
	echo \$pid >stuck.pid
	kill -STOP \$pid
	EOT
	t0=$(date +%s) &&
	timeout -k 10 60 flux start -s 2 -Stbon.lost_max=0 \
		-Sbroker.finalize-timeout=2s sh stuck.sh 2>stuck.err;
	rc=$? &&
	t1=$(date +%s) &&
	kill -CONT $(cat stuck.pid) 2>/dev/null;
	kill_my_brokers &&
	test $rc != 124 &&
	test $((t1 - t0)) -lt 40 &&
	grep "finalize: rank 1 did not leave within 2s" stuck.err
'
test_expect_success 'flux start -s 4 with one shared rundir' '
	rd=$(mktemp -d "$TMPDIR/rd.XXXXXX") &&
	timeout -k 10 120 flux start -s 4 -Stbon.topo=kary:2 -Srundir=$rd \
		sh -c "flux getattr size && flux getattr tbon.endpoint && \
		$RPC -r 3 broker.ping {}" >shared.out;
	rc=$? &&
	kill_my_brokers &&
	test $rc = 0 &&
	head -1 shared.out >size.out &&
	echo 4 >size.exp &&
	test_cmp size.exp size.out &&
	grep "^ipc://$rd/tbon-0$" shared.out &&
	grep "\"rank\":3" shared.out &&
	ls $rd >rd.ls &&
	grep "^tbon-1$" rd.ls
'
test_expect_success 'quorum delayed: rank 0 logs the ranks it waits for' '
	cat >$TMPDIR/rc1-slow.sh <<-EOT &&
	#!/bin/sh
	test "\$(flux getattr rank)" = 3 && sleep 4
	exit 0
	EOT
	chmod +x $TMPDIR/rc1-slow.sh &&
	timeout -k 10 120 flux start -s 4 -Stbon.topo=kary:2 -Sbroker.quorum-warn=1s \
		-Sbroker.rc1_path=$TMPDIR/rc1-slow.sh true 2>slow.err;
	rc=$? &&
	kill_my_brokers &&
	test $rc = 0 &&
	grep "quorum delayed: after 1s, still waiting for rank(s) 1,3" slow.err
'
test_expect_success 'a broker that fails during start-up ends flux start' '
	cat >$TMPDIR/rc1-fail.sh <<-EOT &&
	#!/bin/sh
	test "\$(flux getattr rank)" = 3 && exit 1
	exit 0
	EOT
	chmod +x $TMPDIR/rc1-fail.sh &&
	timeout -k 10 120 flux start -s 4 -Sbroker.rc1_path=$TMPDIR/rc1-fail.sh \
		true 2>fail.err;
	rc=$? &&
	kill_my_brokers &&
	test $rc != 0 && test $rc != 124 &&
	grep "flux-start: rank 3: exited with status 1" fail.err &&
	grep "flux-start: rank 3 failed: stopping the instance" fail.err
'
test_expect_success 'overlay status: a lost grandchild makes rank 0 degraded' '
	cat >grand.sh <<-EOT &&
	pid=\$(sh pid_of.sh 3)
	test -n "\$pid" || exit 1
	flux overlay status --timeout=30 >before.out
	kill -9 \$pid
	flux overlay status --wait=degraded --timeout=30 >after.out
	flux overlay status --down >down.out
	flux overlay status --highlight=3 --color=never >hl.out
	flux overlay status --down --color >color.out
	EOT
	timeout -k 10 120 flux start -s 4 -Stbon.topo=kary:2 --test-exit-mode=leader sh grand.sh;
	rc=$? &&
	kill_my_brokers &&
	test $rc = 0 &&
	grep "^0 .*: full$" before.out &&
	grep "^0 .*: degraded$" after.out &&
	grep "1 .*: degraded$" after.out &&
	grep "3 .*: lost" after.out &&
	grep "2 .*: full$" after.out &&
	h=$(hostname) &&
	printf "0 $h: degraded\n└─ 1 $h: degraded\n   └─ 3 $h: lost%s\n" \
		"$(sed -n "s/^.*3 [^:]*: lost//p" after.out)" >down.exp &&
	test_cmp down.exp down.out &&
	grep "^<<0 $h>>: degraded$" hl.out &&
	grep "^├─ <<1 $h>>: degraded$" hl.out &&
	grep "^│  └─ <<3 $h>>: lost" hl.out &&
	grep "^└─ 2 $h: full$" hl.out &&
	test $(grep -c "<<" hl.out) = 3 &&
	printf "0 $h: \033[31mdegraded\033[0m\n" >color.exp &&
	head -1 color.out >color.1 &&
	test_cmp color.exp color.1
'
test_expect_success 'overlay lookup, parentof; disconnect drops a subtree, its job fails' '
	cat >disc.sh <<-EOT &&
	set -x
	flux overlay parentof 3 >parent3 &&
	flux overlay parentof 1 >parent1 &&
	! flux overlay parentof 0 2>parent0.err &&
	flux overlay lookup 0-1 >lookup.hosts &&
	flux overlay lookup \$(hostname) >lookup.ranks &&
	! flux overlay lookup 9 2>lookup9.err &&
	! flux overlay disconnect \$(hostname) 2>dischost.err &&
	! flux overlay disconnect --parent=2 3 2>notchild.err &&
	! flux overlay disconnect 0 2>root.err &&
	! $FLUX_BUILD_DIR/t/rpc-cred -u 4242 -R 2 overlay.disconnect-subtree \
		"{\"rank\":2}" 2>guest.err &&
	flux overlay errors --timeout=30 >noerrors.out &&
	id=\$(flux submit -N4 sleep 300) &&
	flux job wait-event -t 60 \$id start &&
	flux overlay disconnect 1 2>disc.err &&
	flux overlay status --no-pretty --wait=degraded --timeout=30 >disc.status &&
	flux overlay status --no-pretty -v --timeout=30 >disc.vstatus &&
	flux overlay errors --timeout=30 >disc.errors &&
	flux job wait-event -t 60 \$id clean &&
	flux job eventlog \$id >disc.eventlog &&
	! flux overlay disconnect 1 2>again.err &&
	flux run -N2 true
	EOT
	timeout -k 10 120 flux start -s 4 -Stbon.topo=kary:2 \
		--test-exit-mode=leader sh disc.sh;
	rc=$? &&
	kill_my_brokers &&
	test $rc = 0 &&
	test "$(cat parent3)" = 1 && test "$(cat parent1)" = 0 &&
	grep "rank 0 has no parent" parent0.err &&
	test "$(cat lookup.hosts)" = "$(hostname),$(hostname)" &&
	test "$(cat lookup.ranks)" = 0-3 &&
	grep "the ranks of this instance are 0-3" lookup9.err &&
	grep "names 4 brokers" dischost.err &&
	grep "rank 3 is not a child of rank 2" notchild.err &&
	grep "rank 0 has no parent" root.err &&
	grep "requires owner credentials" guest.err &&
	test_must_be_empty noerrors.out &&
	grep "asking $(hostname) (rank 0) to disconnect child $(hostname) (rank 1)" \
		disc.err &&
	grep "^1 .*: lost" disc.status &&
	grep "^3 .*: lost" disc.status &&
	grep "^2 .*: full" disc.status &&
	grep "^1 .*: lost for .* disconnected by request" disc.vstatus &&
	printf "%s: %s\n" $(hostname) "disconnected by request" \
		$(hostname) "lost parent" >disc.errors.exp &&
	test_cmp disc.errors.exp disc.errors &&
	grep "exception type=\"node-failure\"" disc.eventlog &&
	grep "rank 1 is not online" again.err
'
test_expect_success 'overlay trace prints the messages of the overlay links' '
	cat >trace.sh <<-EOT &&
	flux overlay trace -c 2 -t request,response "broker.ping" >trace.out &
	pid=\$!
	while kill -0 \$pid 2>/dev/null; do flux ping -c 1 1 >/dev/null; done
	wait \$pid || exit 1
	flux overlay trace -f -c 3 -r 1 -t request,response "broker.*" >trace.full &
	pid=\$!
	while kill -0 \$pid 2>/dev/null; do flux ping -c 1 1 >/dev/null; done
	wait \$pid || exit 1
	flux exec -r 1 flux overlay trace -H -c 2 -t control >trace.ctl || exit 1
	! $FLUX_BUILD_DIR/t/rpc-cred -u 4242 -R 2 -s overlay.trace \
		"{\"typemask\":15,\"topic_glob\":\"*\"}" 2>trace.guest
	! flux overlay trace -t bogus 2>trace.bad
	EOT
	timeout -k 10 120 flux start -s 3 --test-exit-mode=leader sh trace.sh;
	rc=$? &&
	kill_my_brokers &&
	test $rc = 0 &&
	cat trace.out trace.full trace.ctl &&
	grep "^20[0-9-]*T[0-9:.]*Z tx 1 request broker.ping \[[0-9]*\]$" trace.out &&
	grep "^20[0-9-]*T[0-9:.]*Z rx 1 response broker.ping \[[0-9]*\]$" trace.out &&
	grep "tx 1 request broker.ping \[[0-9]*\] {\"seq\":0" trace.full &&
	grep "rx 1 response broker.ping \[[0-9]*\] {.*\"rank\":1}" trace.full &&
	grep "^\[+0.000000\] [rt]x 0 control heartbeat 0$" trace.ctl &&
	test $(wc -l <trace.ctl) = 2 &&
	grep "requires owner credentials" trace.guest &&
	grep "unknown type .bogus." trace.bad
'
# Early teardown: a broker that cannot set up exits with one line saying
# why, never on an assertion or a signal (issue 25): exit code 1 to 123.
early_fail () {
	timeout -k 5 60 "$@" 2>early.err
	rc=$?
	cat early.err
	echo "exit code $rc"
	# not 124/137: timeout(1) ended it; 143 is flux start stopping the
	# other brokers with SIGTERM once one failed
	test $rc -ge 1 && test $rc != 124 && test $rc != 137 &&
	! grep -i "assert\|sanitizer\|core dumped" early.err
}
test_expect_success 'a rundir that cannot be created: a clear message' '
	early_fail flux start -Srundir=/proc/nonexistent/dir true &&
	grep "flux-broker: cannot create rundir /proc/nonexistent/dir" early.err &&
	early_fail flux start -s 2 -Srundir=/proc/nonexistent/dir true &&
	grep "cannot create rundir" early.err
'
test_expect_success 'a default rundir that cannot be created (TMPDIR): a clear message' '
	early_fail env TMPDIR=/proc/nonexistent flux start true &&
	grep "flux-broker: cannot create a rundir in /proc/nonexistent" early.err
'
test_expect_success 'a statedir that is a file: a clear message' '
	touch notadir &&
	early_fail flux start -Sstatedir="$(pwd)/notadir" true &&
	grep "flux-broker: statedir .*/notadir: not a directory" early.err
'
if test "$(id -u)" = 0 && command -v runuser >/dev/null &&
	runuser -u nobody -- test -x "$(command -v flux-broker)"; then
	test_set_prereq NOBODY
fi
test_expect_success NOBODY 'as another user, a rundir or statedir not writable: a clear message' '
	mkdir -p ro/sub && chmod 555 ro &&
	early_fail runuser -u nobody -- env PATH="$PATH" \
		flux start -Srundir="$(pwd)/ro/new" true &&
	grep "cannot create rundir .*/ro/new: Permission denied" early.err &&
	early_fail runuser -u nobody -- env PATH="$PATH" \
		flux start -Srundir="$(pwd)/ro/sub" true &&
	grep "rundir .*/ro/sub: cannot create files in it: Permission denied" early.err &&
	early_fail runuser -u nobody -- env PATH="$PATH" TMPDIR=/tmp \
		flux start -Sstatedir="$(pwd)/ro/sub" true &&
	grep "statedir .*/ro/sub: cannot create files in it" early.err
'
test_expect_success 'a config that cannot be read or parsed: a clear message' '
	early_fail flux start -c "$(pwd)/noconfig" true &&
	grep "flux-broker: config: .*noconfig: No such file or directory" early.err &&
	mkdir -p badconf && echo "[bogus" >badconf/a.toml &&
	early_fail flux start -c "$(pwd)/badconf" true &&
	grep "flux-broker: config: .*a.toml:1:" early.err
'
test_expect_success 'a tbon.endpoint port in use: a clear message, flux start ends' '
	python3 -c "import socket,sys,time
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(60)" >port.out &
	holder=$! &&
	for i in $(seq 50); do test -s port.out && break; sleep 0.1; done &&
	port=$(cat port.out) &&
	early_fail flux start -s 2 -Stbon.endpoint=tcp://127.0.0.1:$port true;
	rc=$?
	kill $holder; kill_my_brokers;
	test $rc = 0 &&
	grep "flux-broker: cannot bind tcp://127.0.0.1:$port: Address already in use" early.err
'
test_done

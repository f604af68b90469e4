#!/bin/sh
test_description='flux start and the broker: instances of 1..64 brokers,
routing to every rank, events, attributes, orderly shutdown, lost brokers'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"

# No broker started from this test directory is still running (other
# tests may run brokers at the same time: those have another cwd).
no_brokers_left () {
	for p in $(pgrep -x flux-broker); do
		test "$(readlink /proc/$p/cwd)" = "$(pwd -P)" && return 1
	done
	return 0
}

test_expect_success 'flux start runs the initial program and exits with its status' '
	flux start true &&
	test_expect_code 1 flux start false &&
	test_expect_code 3 flux start sh -c "exit 3"
'
test_expect_success 'the initial program gets FLUX_URI of rank 0' '
	flux start sh -c "echo \$FLUX_URI" >uri.out &&
	grep "^local://.*/local-0$" uri.out
'
test_expect_success 'a singleton broker answers attributes' '
	flux start flux getattr size >size.out &&
	echo 1 >size.exp &&
	test_cmp size.exp size.out
'
for n in 1 2 4 16 64; do
	test_expect_success "size $n: every rank answers broker.ping" "
		flux start -s $n sh -c '
			for r in \$(seq 0 $(($n - 1))); do
				$RPC -r \$r broker.ping {} || exit 1
			done' >ping.$n.out &&
		test \$(grep -c '\"rank\"' ping.$n.out) -eq $n &&
		no_brokers_left
	"
done
test_expect_success 'size 16: attributes describe the tree' '
	cat >tree.sh <<-EOT &&
	flux getattr size
	flux getattr tbon.maxlevel
	flux getattr tbon.descendants
	$RPC -r 15 attr.get "{\"name\":\"tbon.level\"}"
	EOT
	flux start -s 16 -Stbon.topo=kary:2 sh tree.sh >tree.out &&
	cat >tree.exp <<-EOT &&
	16
	4
	15
	{"value":"4","flags":1}
	EOT
	test_cmp tree.exp tree.out
'
test_expect_success 'an unknown rank gets EHOSTUNREACH, an unknown service ENOSYS' '
	flux start -s 4 sh -c "
		! $RPC -r 99 broker.ping {} 2>err1 &&
		! $RPC nosuch.method 2>err2 &&
		! $RPC -r 3 nosuch.method 2>err3" &&
	grep "broker.ping: No route to host: rank 99: no such rank (size 4)" err1 &&
	grep "Function not implemented" err2 &&
	grep "Function not implemented" err3
'
test_expect_success 'events published on rank 0 arrive in order' '
	flux start -s 4 sh -c "
		flux event sub -c 3 test. >events.out &
		sleep 0.3 &&
		for i in 1 2 3; do flux event pub test.e\$i; done &&
		wait" &&
	cut -f1 events.out >topics.out &&
	printf "test.e1\ntest.e2\ntest.e3\n" >topics.exp &&
	test_cmp topics.exp topics.out
'
test_expect_success 'flux shutdown stops the instance with no broker left' '
	flux start -s 4 sh -c "flux shutdown; sleep 30" &&
	no_brokers_left
'
# kill.sh RANK: SIGKILL the broker of RANK (its pid from attr.get)
cat >kill.sh <<EOF
pid=\$($RPC -r \$1 attr.get '{"name":"broker.pid"}' | sed -e 's/.*"value":"\([0-9]*\)".*/\1/')
test -n "\$pid" && kill -9 "\$pid"
EOF
test_expect_success 'SIGKILL of a leaf: pings to it fail, the rest keep working' '
	cat >leaf.sh <<-EOT &&
	sh kill.sh 15 || exit 1
	sleep 1
	$RPC -r 15 broker.ping {} 2>leaf.err && exit 1
	$RPC -r 14 broker.ping {} && $RPC -r 7 broker.ping {}
	EOT
	flux start -s 16 --test-exit-mode=leader sh leaf.sh &&
	grep "No route to host: rank 15 is lost" leaf.err &&
	no_brokers_left
'
test_expect_success 'SIGKILL of an interior broker: its subtree is unreachable' '
	cat >interior.sh <<-EOT &&
	sh kill.sh 3 || exit 1
	sleep 1
	$RPC -r 3 broker.ping {} 2>int3.err && exit 1
	$RPC -r 7 broker.ping {} 2>int7.err && exit 1
	$RPC -r 4 broker.ping {}
	EOT
	flux start -s 16 -Stbon.topo=kary:2 --test-exit-mode=leader sh interior.sh &&
	grep "No route to host: rank 3 is lost" int3.err &&
	grep "No route to host: rank 7 is unreachable: rank 3 on the route is lost" int7.err &&
	sleep 1 && no_brokers_left
'
MOD="$FLUX_BUILD_DIR/t/module/.libs/testmod.so"
test_expect_success 'module reload: new arguments; -f loads what is not loaded' '
	cat >reload.sh <<-EOT &&
	flux module reload $MOD 2>notloaded.err && exit 1
	flux module reload -f $MOD one || exit 1
	$RPC testmod.hello >hello1.out || exit 1
	flux module reload $MOD two three || exit 1
	$RPC testmod.hello >hello2.out || exit 1
	flux module reload --name=tm2 $MOD 2>noname.err && exit 1
	flux module load --name=tm2 $MOD four || exit 1
	flux module reload --name=tm2 $MOD five || exit 1
	$RPC tm2.hello >hello3.out || exit 1
	flux module list >list.out
	EOT
	flux start sh reload.sh &&
	grep "testmod: module is not loaded" notloaded.err &&
	grep "\"args\":\[\"one\"\]" hello1.out &&
	grep "\"args\":\[\"two\",\"three\"\]" hello2.out &&
	grep "tm2" noname.err &&
	grep "\"name\":\"tm2\",\"args\":\[\"five\"\]" hello3.out &&
	test $(grep -c "^testmod " list.out) = 1 &&
	test $(grep -c "^tm2 " list.out) = 1
'
test_expect_success 'module load of a loaded module: one clear line' '
	test_must_fail flux start flux module load kvs 2>dup.err &&
	test "$(cat dup.err)" = "flux-module: kvs: a module of that name is already loaded"
'
test_expect_success 'modules: load, route requests to them, list, remove' '
	cat >mod.sh <<-EOT &&
	flux module load $MOD one two || exit 1
	$RPC testmod.hello || exit 1
	flux module list | grep testmod || exit 1
	flux module remove testmod || exit 1
	$RPC testmod.hello 2>gone.err && exit 1
	flux module load $MOD fail-init 2>init.err && exit 1
	exit 0
	EOT
	flux start sh mod.sh >mod.out &&
	grep "{\"name\":\"testmod\",\"args\":\[\"one\",\"two\"\]}" mod.out &&
	grep "Function not implemented" gone.err &&
	test -s init.err
'
test_expect_success 'a request sent while its module is removed always gets an answer' '
	cat >race.sh <<-EOT &&
	flux module load $MOD || exit 1
	( for i in \$(seq 1 100); do
		flux module reload $MOD || exit 1
	  done ) &
	rlpid=\$!
	n=0
	while kill -0 \$rlpid 2>/dev/null; do
		$RPC -b 200 testmod.hello >>burst.out || exit 1
		n=\$((n + 1))
	done
	wait \$rlpid || exit 1
	echo \$n >bursts.out
	EOT
	flux start sh race.sh &&
	test $(cat bursts.out) -ge 5 &&
	grep "failed [1-9]" burst.out
'
test_expect_success 'module remove --cancel: a module that does not stop is abandoned after 1 s' '
	cat >cancel.sh <<-EOT &&
	pid=\$(flux getattr broker.pid)
	nthreads () { grep -lx testmod /proc/\$pid/task/*/comm | wc -l; }
	flux module load $MOD || exit 1
	$RPC testmod.stall "{\"seconds\":4}" >late.out &
	rpcpid=\$!
	sleep 0.3
	t0=\$(date +%s%N)
	flux module remove --cancel testmod || exit 1
	echo \$(( (\$(date +%s%N) - t0) / 1000000 )) >cancel.ms
	flux module list >list.out
	$RPC testmod.hello 2>gone.err && exit 1
	flux module load $MOD again || exit 1
	$RPC testmod.hello >hello.out || exit 1
	nthreads >threads.during
	wait \$rpcpid || exit 1
	sleep 0.5
	nthreads >threads.after
	$RPC testmod.hello >hello2.out || exit 1
	flux dmesg >dmesg.out
	EOT
	flux start sh cancel.sh &&
	ms=$(cat cancel.ms) && test $ms -ge 900 && test $ms -lt 3000 &&
	! grep "^testmod " list.out &&
	grep "Function not implemented" gone.err &&
	grep "\"args\":\[\"again\"\]" hello.out &&
	test $(cat threads.during) = 2 &&
	test -f late.out &&
	test $(cat threads.after) = 1 &&
	grep "\"args\":\[\"again\"\]" hello2.out &&
	grep "module testmod did not stop within 1.0 s: abandoned" dmesg.out
'
test_expect_success 'broker.module-group: the modules named share one thread' '
	cat >threads.sh <<-"EOT" &&
	flux getattr broker.module-group
	cat /proc/$(flux getattr broker.pid)/task/*/comm
	flux kvs put grp.a=1 && flux kvs get grp.a
	EOT
	flux start sh threads.sh >group.out &&
	head -n 1 group.out | grep "^rexec,content,kvs,kvs-watch,job-manager" &&
	grep -x modgroup group.out &&
	! grep -x kvs group.out && ! grep -x job-manager group.out &&
	grep -x content-sqlite group.out && grep -x resource group.out &&
	flux start -Sbroker.module-group= sh threads.sh >nogroup.out &&
	! grep -x modgroup nogroup.out &&
	grep -x kvs nogroup.out && grep -x job-manager nogroup.out &&
	flux start -Sbroker.module-group=kvs,content sh threads.sh >two.out &&
	grep -x modgroup two.out && ! grep -x kvs two.out &&
	! grep -x content two.out && grep -x job-manager two.out &&
	test "$(tail -n 1 two.out)" = 1
'
test_expect_success 'broker.module-group: a module of the group loads, serves, unloads, loads again' '
	cat >grouped.sh <<-EOT &&
	pid=\$(flux getattr broker.pid)
	flux module load $MOD first || exit 1
	$RPC testmod.hello >hello1.out || exit 1
	grep -lx testmod /proc/\$pid/task/*/comm | wc -l >own.threads
	flux module remove testmod || exit 1
	$RPC testmod.hello 2>gone.err && exit 1
	flux module load $MOD second || exit 1
	$RPC testmod.hello >hello2.out || exit 1
	flux kvs put grp.b=2 && flux kvs get grp.b >kvs.out
	EOT
	flux start -Sbroker.module-group=kvs,content,testmod sh grouped.sh &&
	grep "\"args\":\[\"first\"\]" hello1.out &&
	test $(cat own.threads) = 0 &&
	grep "Function not implemented" gone.err &&
	grep "\"args\":\[\"second\"\]" hello2.out &&
	test "$(cat kvs.out)" = 2
'
test_expect_success 'module remove --cancel: a module stuck in its initialisation' '
	cat >initstall.sh <<-EOT &&
	flux module load $MOD stall-init=20 2>initstall.err &
	loadpid=\$!
	sleep 0.5
	flux module list | grep "^testmod .* I " || exit 1
	flux module remove --cancel testmod || exit 1
	wait \$loadpid && exit 1
	flux module load $MOD || exit 1
	$RPC testmod.hello >hello.out
	EOT
	flux start sh initstall.sh &&
	grep "module exited during initialization: Operation canceled" \
		initstall.err &&
	grep "\"name\":\"testmod\"" hello.out
'
test_expect_success 'module remove waits for a busy module; --cancel after it ends both' '
	cat >wait.sh <<-EOT &&
	flux module load $MOD || exit 1
	$RPC testmod.stall "{\"seconds\":1.5}" >/dev/null &
	sleep 0.3
	t0=\$(date +%s%N)
	flux module remove testmod || exit 1
	echo \$(( (\$(date +%s%N) - t0) / 1000000 )) >wait.ms
	flux module load $MOD || exit 1
	$RPC testmod.stall "{\"seconds\":5}" >/dev/null &
	sleep 0.3
	flux module remove testmod &
	rmpid=\$!
	sleep 0.2
	flux module remove testmod 2>busy.err && exit 1
	flux module remove --cancel testmod || exit 1
	wait \$rmpid || exit 1
	flux module list >list2.out
	EOT
	flux start sh wait.sh &&
	ms=$(cat wait.ms) && test $ms -ge 1000 &&
	grep "already being removed" busy.err &&
	! grep "^testmod " list2.out
'
test_expect_success 'shutdown: a module that does not stop is abandoned after broker.module-stop-timeout' '
	cat >stuck.sh <<-EOT &&
	flux module load $MOD || exit 1
	$RPC testmod.stall "{\"seconds\":20}" >/dev/null 2>&1 &
	sleep 0.3
	EOT
	t0=$(date +%s) &&
	flux start -Sbroker.module-stop-timeout=1s sh stuck.sh 2>stuck.err &&
	test $(($(date +%s) - t0)) -lt 10 &&
	grep "module testmod did not stop within 1s of the shutdown: abandoned" stuck.err &&
	test_must_fail flux start -Sbroker.module-stop-timeout=soon true 2>bad.err &&
	grep "broker.module-stop-timeout must be a duration" bad.err
'
test_expect_success 'shutdown: a default module reloaded by hand keeps its place' '
	cat >order.sh <<-EOT &&
	flux module reload job-manager || exit 1
	flux module load $MOD || exit 1
	flux module reload kvs || exit 1
	EOT
	flux start -Slog-stderr-level=7 sh order.sh 2>order.err &&
	sed -n "s/.*shutdown: unloading \([a-z-]*\).*/\1/p" order.err >order.out &&
	test "$(head -1 order.out)" = testmod &&
	pos () { grep -nx "$1" order.out | cut -d: -f1; } &&
	test $(pos job-manager) -lt $(pos kvs) &&
	test $(pos job-ingest) -lt $(pos job-manager) &&
	test $(pos kvs) -lt $(pos content) &&
	! grep "final eventlog commit failed" order.err
'
test_expect_success 'parent lost: a broker whose module does not stop still exits' '
	cat >orphan.sh <<-EOT &&
	$RPC -r 3 module.load "{\"path\":\"$MOD\"}" || exit 1
	pid3=\$($RPC -r 3 attr.get "{\"name\":\"broker.pid\"}" | sed -e "s/.*\"value\":\"\([0-9]*\)\".*/\1/")
	$RPC -r 3 testmod.stall "{\"seconds\":20}" >/dev/null 2>&1 &
	sleep 0.3
	sh kill.sh 1 || exit 1
	for i in \$(seq 1 50); do
		kill -0 \$pid3 2>/dev/null || exit 0
		sleep 0.2
	done
	echo "rank 3 (pid \$pid3) still running" >&2
	exit 1
	EOT
	flux start -s 4 -Stbon.topo=kary:2 --test-exit-mode=leader \
		-Sbroker.module-stop-timeout=1s \
		sh orphan.sh
'
test_expect_success 'module to module: a burst of requests keeps its order; a module that is gone answers ENOSYS' '
	cat >order.sh <<-EOT &&
	flux module load --name=tmb $MOD || exit 1
	for i in 1 2 3 4 5 6; do
		flux module load --name=tma\$i $MOD || exit 1
		$RPC tma\$i.burst "{\\"service\\":\\"tmb\\",\\"count\\":2000}" || exit 1
		$RPC tmb.order-get >order.\$i.out || exit 1
		flux module remove tma\$i || exit 1
	done >burst.out
	flux module load --name=tma $MOD || exit 1
	flux module remove tmb || exit 1
	$RPC tma.burst "{\\"service\\":\\"tmb\\",\\"count\\":3}" >gone.out || exit 1
	EOT
	flux start sh order.sh &&
	test $(grep -c "\"count\":2000,\"ok\":2000,\"errnum\":0" burst.out) -eq 6 &&
	cat >inorder.py <<-EOF &&
	import json, sys
	for path in sys.argv[1:]:
	    seqs = json.load (open (path))["seqs"]
	    if seqs != list (range (2000)):
	        sys.exit ("%s: out of order or missing" % path)
	EOF
	python3 inorder.py order.1.out order.2.out order.3.out order.4.out \
		order.5.out order.6.out &&
	grep "\"count\":3,\"ok\":0,\"errnum\":38" gone.out
'
test_expect_success 'overlay status --wait follows the status as it changes' '
	cat >wait.sh <<-EOT &&
	pid=\$($RPC -r 2 attr.get "{\"name\":\"broker.pid\"}" | sed "s/.*value\":\"\([0-9]*\).*/\1/")
	(sleep 1; kill -9 \$pid) &
	flux overlay status --wait=degraded --timeout=20 >wait.out
	EOT
	flux start -s 4 --test-exit-mode=leader sh wait.sh;
	grep "^0 .*degraded" wait.out &&
	grep "2 .*lost" wait.out
'
test_expect_success 'module list shows the services a module registered' '
	flux start flux module list >modsvc.out &&
	grep "^content-sqlite .* content-backing$" modsvc.out
'
test_expect_success 'flux shutdown from outside streams the log of the shutdown' '
	flux start -s 2 sh -c "flux getattr local-uri >sd.uri; sleep 60" &
	pid=$! &&
	for i in $(seq 1 50); do test -s sd.uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat sd.uri) flux shutdown 2>sd.err &&
	wait $pid;
	grep "broker.info\[0\]: shutdown: run->cleanup" sd.err &&
	! grep "unloading" sd.err
'
test_expect_success 'module trace prints the messages between the broker and a module' '
	cat >mtrace.sh <<-EOT &&
	flux kvs put mt=1 || exit 1
	flux module trace -c 2 -f -T kvs.lookup kvs >mtrace.out &
	pid=\$!
	while kill -0 \$pid 2>/dev/null; do flux kvs get mt >/dev/null; done
	wait \$pid || exit 1
	flux module trace -c 1 -t event -T "heartbeat.*" >mtrace.ev || exit 1
	! $FLUX_BUILD_DIR/t/rpc-cred -u 4242 -R 2 -s module.trace \
		"{\"typemask\":15,\"topic_glob\":\"*\"}" 2>mtrace.guest
	EOT
	flux start sh mtrace.sh &&
	cat mtrace.out mtrace.ev &&
	grep "^20[0-9-]*T[0-9:.]*Z tx kvs request kvs.lookup \[[0-9]*\] {\"key\":\"mt\"" mtrace.out &&
	grep "^20[0-9-]*T[0-9:.]*Z rx kvs response kvs.lookup \[[0-9]*\] {" mtrace.out &&
	grep "Z rx heartbeat event heartbeat.pulse \[0\]$" mtrace.ev &&
	grep "requires owner credentials" mtrace.guest
'
test_expect_success 'state-machine.monitor: the state, each change, ENODATA at final' '
	RPC=$FLUX_BUILD_DIR/t/rpc-cred &&
	flux start $RPC -s state-machine.monitor "{\"final\":5}" >sm.run &&
	echo "{\"state\":5}" >sm.run.exp &&
	test_cmp sm.run.exp sm.run &&
	test_must_fail flux start $RPC -u 4242 -R 2 -s state-machine.monitor \
		"{}" 2>sm.guest &&
	grep "requires owner credentials" sm.guest &&
	flux start -s 2 sh -c "flux getattr local-uri >sm.uri; sleep 60" &
	pid=$! &&
	for i in $(seq 1 50); do test -s sm.uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat sm.uri) $RPC -s state-machine.monitor \
		"{\"final\":8}" >sm.out &
	mpid=$! &&
	for i in $(seq 1 50); do test -s sm.out && break; sleep 0.1; done &&
	FLUX_URI=$(cat sm.uri) flux shutdown 2>/dev/null &&
	wait $mpid && wait $pid;
	printf "{\"state\":%d}\n" 5 6 7 8 >sm.exp &&
	test_cmp sm.exp sm.out
'
test_expect_success 'a size 1 instance has its host name in hostlist' '
	flux start -s 1 flux getattr hostlist >hl.out &&
	test "$(cat hl.out)" = "$(hostname)"
'
# A hostlist past what PMI carries to every rank (above 64 KiB) comes
# down the tree instead; broker.boot-hostlist-chunks=0 takes that path
# with a short one.  Fanout 2: ranks 3-6 ask parents still waiting.
test_expect_success 'every rank gets the hostlist through the tree' '
	timeout -k 10 120 flux start -s 7 -Stbon.fanout=2 \
		-Sbroker.boot-hostlist-chunks=0 \
		flux exec -r all -l flux getattr hostlist >tree.out &&
	test $(wc -l <tree.out) -eq 7 &&
	h=$(hostname) &&
	for r in 0 1 2 3 4 5 6; do
		grep -x "$r: $h,$h,$h,$h,$h,$h,$h" tree.out || return 1
	done
'
test_expect_success 'broker.hostlist answers a client with the hostlist' '
	timeout -k 10 120 flux start -s 2 -Sbroker.boot-hostlist-chunks=0 \
		$FLUX_BUILD_DIR/t/rpc broker.hostlist >bh.out &&
	jq -e ".hostlist == \"$(hostname),$(hostname)\"" bh.out
'
test_expect_success 'broker.boot-hostlist-chunks: a bad value is refused' '
	test_must_fail timeout -k 10 60 flux start -s 1 \
		-Sbroker.boot-hostlist-chunks=65 true 2>bhc.err &&
	grep "invalid value for broker.boot-hostlist-chunks=.65." bhc.err
'
test_expect_success 'log-stderr-level: set at runtime, checked, takes effect' '
	flux start sh -c "flux logger -s debug before; \
		flux setattr log-stderr-level 7 && flux logger -s debug after; \
		flux setattr log-stderr-level 8" 2>lvl.err >lvl.out;
	! grep before lvl.err &&
	grep after lvl.err &&
	grep "invalid value" lvl.err &&
	test_must_fail flux start -Slog-stderr-level=x true 2>lvl2.err &&
	grep "must be 0-7" lvl2.err
'
test_expect_success 'what the initial program left in the background is stopped' '
	flux start sh -c "sleep 1000 & echo \$! >bg.pid" &&
	pid=$(cat bg.pid) &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 $pid 2>/dev/null || break; sleep 0.2
	done &&
	! kill -0 $pid 2>/dev/null
'
test_expect_success 'tbon.endpoint with a wildcard port shows the bound port' '
	flux start -s 2 "-Stbon.endpoint=tcp://127.0.0.1:*" \
		flux getattr tbon.endpoint >ep.out &&
	grep -E "^tcp://127.0.0.1:[0-9]+$" ep.out
'
test_expect_success 'broker.modules: NAME@IDSET with arguments, in order' '
	cat >modlist.sh <<-EOT &&
	$RPC -r 1 testmod.hello || exit 1
	$RPC -r 2 testmod.hello || exit 1
	$RPC -r 3 testmod.hello 2>r3.err && exit 1
	$RPC -r 0 testmod.hello 2>r0.err && exit 1
	exit 0
	EOT
	flux start -s 4 "-Sbroker.modules=content,$MOD@1-2 a1  a2,kvs" \
		sh modlist.sh >modlist.out &&
	test $(grep -c "{\"name\":\"testmod\",\"args\":\[\"a1\",\"a2\"\]}" modlist.out) -eq 2 &&
	grep "Function not implemented" r3.err &&
	grep "Function not implemented" r0.err
'
test_expect_success 'broker.modules: a bad entry fails the start with a message' '
	test_must_fail flux start "-Sbroker.modules=content,@1" true 2>bad.err &&
	grep "bad entry" bad.err
'
test_expect_success 'a module loaded on rank 2 of 4 serves nodeid 2' '
	cat >mod2.sh <<-EOT &&
	$RPC -r 2 module.load "{\"path\":\"$MOD\",\"args\":[]}" || exit 1
	$RPC -r 2 testmod.hello || exit 1
	$RPC -r 1 testmod.hello 2>r1.err && exit 1
	exit 0
	EOT
	flux start -s 4 sh mod2.sh &&
	grep "Function not implemented" r1.err
'
test_expect_success 'logger and dmesg' '
	flux start -s 2 sh -c "flux logger hello-from-t0010 && flux dmesg" >dmesg.out &&
	grep hello-from-t0010 dmesg.out
'
cat >garbage.py <<EOF
import os, socket, sys, random
path = os.environ["FLUX_URI"][len("local://"):]
random.seed(42)
payloads = [bytes(random.getrandbits(8) for _ in range(4096)),
            b"\x12\x00\xee\xff\x00\x00\x00\x05abc",            # truncated
            b"\x12\x00\xee\xff\x3f\xff\xff\xff" + b"x" * 100,  # huge length
            b"\xff\xee\x00\x12\x00\x00\x00\x16" + b"\x00" * 22]  # bad magic
def frame(mtype, flags, parts, aux1=0, aux2=0):
    import struct
    proto = struct.pack(">BBBBIIII", 0x8E, 1, mtype, flags, 0xFFFFFFFF, 0,
                        aux1, aux2)
    body = b"".join(bytes([len(x)]) + x for x in parts + [proto])
    return b"\x12\x00\xee\xff" + struct.pack(">I", len(body)) + body
# valid frames with nonsense in them
payloads += [
    frame(2, 0x09, [b"", b"no.such.topic"], 0, 7),                 # response to nobody
    frame(2, 0x09, [b"deadbeef", b"", b"x.y"], 0, 7),              # response, bogus route
    frame(8, 0, [], 1, 2),                                         # control message
    frame(1, 0x0b, [b"", b"broker.ping", b"not json\x00"], 5, 1),  # ping to rank 5
    frame(1, 0x0b, [b"", b"attr.get", b"[1,2]\x00"], 0xFFFFFFFF, 2),  # array payload
    frame(1, 0x09, [b"", b"event.subscribe"], 0xFFFFFFFF, 3),      # no payload
    frame(4, 0x01, [b"t" * 200]),                                  # event from a client
]
for p in payloads:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.recv(1)
    s.sendall(p)
    s.close()
EOF
test_expect_success 'garbage on the local socket does not hurt the broker' '
	flux start -s 2 sh -c "
		python3 garbage.py &&
		$RPC -r 1 broker.ping {} &&
		flux getattr size"
'
test_expect_success 'flux overlay status draws the tree of 8 brokers' '
	flux start -s 8 flux overlay status --timeout=30 >overlay.out &&
	test $(grep -c ": full" overlay.out) -eq 8
'
test_expect_success 'size 16: 2000 events reach the deepest leaf, all in order' '
	flux start -s 16 $FLUX_BUILD_DIR/bench/brokerbench events 2000 >ev16.out &&
	grep "2000 delivered to rank 15" ev16.out &&
	grep "in order" ev16.out
'
test_done

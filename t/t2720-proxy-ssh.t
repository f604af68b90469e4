#!/bin/sh
test_description='flux proxy over ssh (root): an sshd of its own on
127.0.0.1 and a free port, with host and user keys made for the test;
flux relay; the ssh:// connector (FLUX_SSH, FLUX_SSH_RCMD); flux proxy
ssh://root@127.0.0.1:PORT/PATH running flux getattr and flux run, and a
sub-instance reached through its remote URI; a lost ssh connection ends
the proxy with an error instead of a hang.  sshd is stopped at the end,
even after a failure.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

if test "$(id -u)" != 0; then
	skip_all='needs root (an sshd of its own)'
	test_done
fi
for cmd in /usr/sbin/sshd ssh ssh-keygen python3; do
	if ! command -v $cmd >/dev/null; then
		skip_all="needs $cmd (the openssh-server and openssh-client packages)"
		test_done
	fi
done

T="timeout -k 10 120"
# no blank in the paths sshd reads (the trash directory has one)
TOP=$(mktemp -d /tmp/flux-t2720.XXXXXX)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
FLUX_SSH=$TOP/ssh
export FLUX_SSH

cleanup () {
	if test -s $TOP/refuse.pid; then
		kill $(cat $TOP/refuse.pid) 2>/dev/null
	fi
	if test -s $TOP/sshd.pid; then
		kill $(cat $TOP/sshd.pid) 2>/dev/null
	fi
	rm -rf $TOP
}

# the broker's socket path of instance NAME (start_instance)
sock () {
	sed "s|^local://||" $1.uri
}

test_expect_success 'set up: keys, an sshd on 127.0.0.1, FLUX_SSH' '
	ssh-keygen -q -t ed25519 -N "" -f $TOP/host_key &&
	ssh-keygen -q -t ed25519 -N "" -f $TOP/id &&
	cp $TOP/id.pub $TOP/authorized_keys &&
	cat >$TOP/sshd_config <<-EOT &&
	Port $PORT
	ListenAddress 127.0.0.1
	HostKey $TOP/host_key
	AuthorizedKeysFile $TOP/authorized_keys
	PidFile $TOP/sshd.pid
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	StrictModes no
	UsePAM no
	EOT
	cat >$FLUX_SSH <<-EOT &&
	#!/bin/sh
	exec ssh -F /dev/null -i $TOP/id -o BatchMode=yes \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR "\$@"
	EOT
	chmod +x $FLUX_SSH &&
	mkdir -p /run/sshd &&
	/usr/sbin/sshd -f $TOP/sshd_config -E $TOP/sshd.log &&
	for i in $(seq 300); do
		$FLUX_SSH -p $PORT root@127.0.0.1 true && break
		sleep 0.1
	done &&
	test "$($FLUX_SSH -p $PORT root@127.0.0.1 echo hello)" = hello
'
test_expect_success 'start an instance of 2 brokers' '
	start_instance top 2 --test-exit-mode=leader &&
	S=$(sock top) && URI=ssh://root@127.0.0.1:$PORT$S
'
test_expect_success 'flux relay: the accept byte, then frames; bad paths' '
	flux relay --help | grep "Usage: flux relay" &&
	test_must_fail flux relay 2>err1 && grep "expected one PATH" err1 &&
	test_must_fail flux relay /nonexistent/sock </dev/null 2>err2 &&
	grep "nonexistent/sock" err2 &&
	flux relay $S </dev/null >out3 &&
	test "$(od -An -tx1 out3 | tr -d " ")" = 00 &&
	flux relay local://$S </dev/null >out4 && test_cmp out3 out4
'
test_expect_success 'ssh:// connector: flux getattr through ssh and flux relay' '
	test "$(FLUX_URI=$URI $T flux getattr size)" = 2 &&
	test "$(FLUX_URI=ssh://127.0.0.1:$PORT$S $T flux getattr rank)" = 0
'
test_expect_success 'flux proxy ssh://root@127.0.0.1:PORT/PATH flux getattr size' '
	test "$($T flux proxy $URI flux getattr size)" = 2 &&
	test "$($T flux proxy $URI printenv FLUX_URI)" = $URI
'
test_expect_success 'flux proxy ssh://... flux run -N2 hostname' '
	$T flux proxy $URI flux run -N2 hostname >run.out &&
	test_line_count = 2 run.out &&
	test "$(sort -u run.out)" = "$(hostname)" &&
	test_expect_code 5 $T flux proxy $URI sh -c "exit 5"
'
command -v script >/dev/null && test_set_prereq SCRIPT
cat >int.sh <<'SCRIPT'
trap 'echo caught SIGINT; exit 7' INT
echo waiting
while :; do sleep 1; done
SCRIPT
test_expect_success SCRIPT 'ctrl-C on a terminal reaches the job, not ssh' '
	rm -f int.in && mkfifo int.in || return 1
	{ $T script -qfec "exec flux proxy $URI flux run sh int.sh" /dev/null \
		<int.in >int.out 2>&1; echo $? >int.rc; } &
	exec 8>int.in &&
	for i in $(seq 600); do grep -q waiting int.out && break; sleep 0.1; done &&
	printf "\003" >&8 &&
	for i in $(seq 600); do test -s int.rc && break; sleep 0.1; done &&
	exec 8>&- &&
	cat int.out &&
	test "$(cat int.rc)" = 7 &&
	grep "caught SIGINT" int.out &&
	! grep -i "connection" int.out
'
test_expect_success 'FLUX_SSH_RCMD names the remote flux' '
	cat >$TOP/rflux <<-EOT &&
	#!/bin/sh
	echo rcmd >>$TOP/rcmd.log
	exec flux "\$@"
	EOT
	chmod +x $TOP/rflux &&
	test "$(FLUX_SSH_RCMD="PATH=$PATH $TOP/rflux" FLUX_URI=$URI \
		$T flux getattr size)" = 2 &&
	test "$(cat $TOP/rcmd.log)" = rcmd
'
test_expect_success 'a sub-instance reached through its ssh:// URI' '
	id=$(flux alloc --bg -N1) &&
	remote=$($T flux uri --remote --wait $id) &&
	echo $remote | grep "^ssh://$(hostname)/" &&
	path=${remote#ssh://$(hostname)} &&
	test "$($T flux proxy ssh://root@127.0.0.1:$PORT$path \
		flux getattr instance-level)" = 1 &&
	$T flux proxy ssh://root@127.0.0.1:$PORT$path flux shutdown \
		>shutdown.out 2>&1 &&
	! grep "connection lost" shutdown.out &&
	flux job wait-event -t 60 $id clean
'
test_expect_success 'bad ssh:// URIs and unreachable hosts fail with a message' '
	test_must_fail env FLUX_URI=ssh://127.0.0.1 flux getattr size 2>e1 &&
	grep "expected ssh://\[USER@\]HOST\[:PORT\]/PATH" e1 &&
	test_must_fail env FLUX_URI=ssh://127.0.0.1:0x1/x flux getattr size \
		2>e2 && grep "bad port" e2 &&
	test_must_fail env FLUX_URI=ssh://-oProxyCommand=x/x flux getattr size \
		2>e3 && grep "bad host" e3 &&
	test_must_fail $T flux proxy ssh://root@127.0.0.1:$PORT/no/such/sock \
		true 2>e4 && grep "no answer from flux relay on root@127.0.0.1" e4 &&
	grep "/no/such/sock" e4 &&
	test_must_fail env FLUX_SSH=/nonexistent FLUX_URI=$URI \
		flux getattr size 2>e5 && grep "cannot run /nonexistent" e5
'
# refuse.py PATH: a socket at PATH whose "broker" refuses with EPERM
cat >refuse.py <<'SCRIPT'
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
open(sys.argv[1] + ".ready", "w").close()
while True:
    c, _ = s.accept()
    c.send(bytes([1]))
    c.close()
SCRIPT
test_expect_success 'a broker'"'"'s refusal comes through flux relay as it is' '
	{ python3 refuse.py $TOP/refuse.sock >/dev/null 2>&1 &
	  echo $! >$TOP/refuse.pid; } &&
	for i in $(seq 300); do test -e $TOP/refuse.sock.ready && break; sleep 0.1; done &&
	test_must_fail env FLUX_URI=ssh://root@127.0.0.1:$PORT$TOP/refuse.sock \
		$T flux getattr size 2>refused.err &&
	kill $(cat $TOP/refuse.pid) && rm $TOP/refuse.pid &&
	cat refused.err &&
	grep "connection refused by broker: Operation not permitted" refused.err
'
test_expect_success 'a lost ssh connection ends the proxy with an error' '
	sshd=$(cat $TOP/sshd.pid) && test -n "$sshd" || return 1
	{ $T flux proxy $URI sh -c "echo \$\$ >cmd.pid; exec sleep 300" \
		2>lost.err; echo $? >lost.rc; } &
	for i in $(seq 600); do
		test -s cmd.pid && pgrep -P $sshd >/dev/null && break
		sleep 0.1
	done &&
	test -s cmd.pid &&
	kill -9 $(pgrep -P $sshd) &&
	for i in $(seq 600); do test -s lost.rc && break; sleep 0.1; done &&
	cat lost.err &&
	test "$(cat lost.rc)" = 1 &&
	grep "connection lost" lost.err &&
	! kill -0 $(cat cmd.pid) 2>/dev/null
'
test_expect_success 'the instance is still fine; stop it and sshd' '
	test "$(FLUX_URI=$URI $T flux getattr size)" = 2 &&
	stop_instance top &&
	sshd=$(cat $TOP/sshd.pid) && kill $sshd &&
	for i in $(seq 300); do
		kill -0 $sshd 2>/dev/null || break
		sleep 0.1
	done &&
	! kill -0 $sshd 2>/dev/null
'
cleanup
test_done

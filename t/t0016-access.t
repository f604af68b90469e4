#!/bin/sh
test_description='what the broker leaves readable by others: the mode of
every file it creates, what a guest can reach, unauthenticated overlay
connections'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
GUEST="setpriv --reuid=4242 --regid=4242 --clear-groups"

# modes DIR...: "MODE TYPE NAME" for every file under DIR (DIR included)
cat >modes.sh <<'EOF'
find "$@" -printf "%m %y %f\n" | sort -k3
EOF

test_expect_success 'every file of rundir and statedir: 0600, directories 0700' '
	rd=$(mktemp -d -u "$TMPDIR/rd.XXXXXX") &&
	sd=$(mktemp -d -u "$TMPDIR/sd.XXXXXX") &&
	flux start -s 2 -Srundir=$rd -Sstatedir=$sd \
		sh -c "flux kvs put a=1 && sh modes.sh $rd $sd" >modes.out &&
	cat modes.out &&
	grep "^600 f content.sqlite$" modes.out &&
	grep "^600 s local-1$" modes.out &&
	grep "^600 s tbon-0$" modes.out &&
	grep "^700 d rd\." modes.out &&
	grep "^700 d sd\." modes.out &&
	! grep -v -E "^(700 d|600 [fs]) " modes.out
'
test_expect_success 'content.sqlite in a temporary rundir: 0600 too' '
	flux start sh -c "flux kvs put a=1 && \
		sh modes.sh \$(flux getattr rundir)" >modes2.out &&
	cat modes2.out &&
	grep "^600 f content.sqlite$" modes2.out &&
	grep "^700 d flux-" modes2.out &&
	! grep -v -E "^(700 d|600 [fs]) " modes2.out
'
test_expect_success 'a store made 0644 before is made 0600' '
	sd=$(mktemp -d "$TMPDIR/sd.XXXXXX") &&
	flux start -Sstatedir=$sd flux kvs put a=1 &&
	chmod 644 $sd/content.sqlite &&
	flux start -Sstatedir=$sd sh modes.sh $sd >modes3.out &&
	grep "^600 f content.sqlite$" modes3.out
'
test_expect_success 'allow-guest-user: a guest reaches the socket and nothing else' '
	rd=$(mktemp -d -u "$TMPDIR/rd.XXXXXX") &&
	cat >guest.sh <<-EOT &&
	sh modes.sh $rd >gmodes.out
	$GUEST flux getattr size >gsize.out 2>gsize.err
	echo "size=\$?"
	$GUEST ls $rd >gls.out 2>&1
	echo "ls=\$?"
	$GUEST cat $rd/content.sqlite >/dev/null 2>&1
	echo "cat=\$?"
	EOT
	flux start -s 2 -Srundir=$rd -Saccess.allow-guest-user=1 \
		sh guest.sh >guest.out &&
	cat guest.out gmodes.out &&
	grep "^size=0$" guest.out &&
	test "$(cat gsize.out)" = 2 &&
	grep "^ls=[1-9]" guest.out &&
	grep "^cat=[1-9]" guest.out &&
	grep "^711 d rd\." gmodes.out &&
	grep "^666 s local-0$" gmodes.out &&
	grep "^600 s tbon-0$" gmodes.out &&
	grep "^600 f content.sqlite$" gmodes.out &&
	! grep -v -E "^(711 d |666 s local-|600 [fs] )" gmodes.out
'
test_expect_success 'without allow-guest-user a guest is refused' '
	flux start sh -c "$GUEST flux getattr size" 2>refused.err;
	test $? != 0 &&
	cat refused.err &&
	grep -i "denied\|not permitted" refused.err
'
# flood.py PORT PID N: N TCP connections to 127.0.0.1:PORT, held, then
# each sends a ZMTP 3.0 greeting asking for the NULL mechanism (a failed
# handshake for a CURVE server) and closes; prints the fds of PID before,
# during, after
cat >flood.py <<'EOF'
import os, socket, sys, time
port, pid, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def nfds():
    return len(os.listdir("/proc/%d/fd" % pid))
before = nfds()
socks = []
for i in range(n):
    socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
time.sleep(2)
during = nfds()
for s in socks:
    try:
        s.send(b"\xff" + b"\0" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\0")
               + b"\0" * 32)
    except OSError:
        pass
time.sleep(1)
for s in socks:
    s.close()
time.sleep(2)
print("fds before %d during %d after %d" % (before, during, nfds()))
EOF
test_expect_success 'unauthenticated TCP connections: bounded, logged to dmesg at a bounded rate' '
	cat >flood.sh <<-EOT &&
	port=\$(flux getattr tbon.endpoint | sed "s/.*://")
	pid=\$(flux getattr broker.pid)
	python3 flood.py \$port \$pid 2000 >flood.out || exit 1
	python3 flood.py \$port \$pid 50 >flood2.out || exit 1
	flux dmesg >flood.dmesg
	flux overlay status --timeout=30 >flood.status
	EOT
	flux start -s 2 "-Stbon.endpoint=tcp://127.0.0.1:*" sh flood.sh \
		2>flood.err &&
	cat flood.out &&
	before=$(awk "{print \$3}" flood.out) &&
	during=$(awk "{print \$5}" flood.out) &&
	test $((during - before)) -lt 200 &&
	cat flood2.out &&
	before=$(awk "{print \$3}" flood2.out) &&
	during=$(awk "{print \$5}" flood2.out) &&
	test $((during - before)) -ge 40 &&
	echo "stderr: $(wc -l <flood.err) lines" &&
	test $(wc -l <flood.err) -lt 20 &&
	grep "overlay: more than 64 connections not yet authenticated" \
		flood.dmesg &&
	test $(grep -c "overlay: " flood.dmesg) -lt 40 &&
	grep "^0 .*: full$" flood.status
'
test_done

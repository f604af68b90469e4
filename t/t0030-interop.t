#!/bin/sh
test_description='what flux-core clients send and expect (issue 26): raw
events with a route stack, a lost connection is an error, heartbeat.pulse,
the groups service and flux uptime, ping route strings'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"

# rawev.py: speaks the local connector byte for byte as flux-core's libflux
# does (PROTOCOLS.md 1.1).  Connection A subscribes to "interop."; B sends
# the EVENT frame flux-core's `flux event pub` (without -s) sends: FLAG_ROUTE
# set, an empty route stack, userid unknown, rolemask 0, seq 0; then B asks
# attr.get, so that it is shown still connected; A must get the event.
cat >rawev.py <<'EOF'
import os, socket, struct, sys
path = os.environ["FLUX_URI"][len("local://"):]
def frame(mtype, flags, parts, aux1=0, aux2=0):
    proto = struct.pack(">BBBBIIII", 0x8E, 1, mtype, flags, 0xFFFFFFFF, 0,
                        aux1, aux2)
    body = b""
    for x in parts + [proto]:
        body += (bytes([len(x)]) if len(x) < 255
                 else b"\xff" + struct.pack(">I", len(x))) + x
    return struct.pack("=I", 0xFFEE0012) + struct.pack(">I", len(body)) + body
def readn(s, n):
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            sys.exit("connection closed by the broker")
        buf += b
    return buf
def recv(s):
    magic, = struct.unpack("=I", readn(s, 4))
    assert magic == 0xFFEE0012, "bad magic"
    n, = struct.unpack(">I", readn(s, 4))
    body = readn(s, n)
    parts, i = [], 0
    while i < n:
        size = body[i]; i += 1
        if size == 0xFF:
            size, = struct.unpack(">I", body[i:i+4]); i += 4
        parts.append(body[i:i+size]); i += size
    p = parts[-1]
    return dict(type=p[2], flags=p[3], aux1=struct.unpack(">I", p[12:16])[0],
                parts=parts)
def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    assert readn(s, 1) == b"\x00", "handshake"
    return s
a = connect()
# request: route flag, empty stack, topic, JSON payload + NUL; nodeid ANY
a.sendall(frame(1, 0x0b, [b"", b"event.subscribe",
                          b'{"topic":"interop."}\x00'], 0xFFFFFFFF, 1))
r = recv(a)
assert r["type"] == 2 and r["aux1"] == 0, "subscribe failed: %r" % r
b = connect()
b.sendall(frame(4, 0x0b, [b"", b"interop.raw", b'{"n":42}\x00']))
b.sendall(frame(1, 0x0b, [b"", b"attr.get", b'{"name":"size"}\x00'],
                0xFFFFFFFF, 7))
r = recv(b)
assert r["type"] == 2 and r["aux1"] == 0, "publisher lost: %r" % r
print("publisher still connected")
e = recv(a)
assert e["type"] == 4, "expected an event: %r" % e
print("event", e["parts"][-3].decode(), e["parts"][-2][:-1].decode(),
      "seq", e["aux1"], "flags 0x%02x" % e["flags"])
EOF

test_expect_success 'a raw routed event (flux-core event pub) is published' '
	flux start -s 1 python3 rawev.py >rawev.out &&
	cat rawev.out &&
	grep "^publisher still connected" rawev.out &&
	grep "^event interop.raw {\"n\":42} seq [1-9]" rawev.out
'
test_expect_success 'the event is published without a route delimiter' '
	grep "flags 0x03$" rawev.out
'
test_expect_success 'a raw routed event from rank 1 is forwarded and published' '
	cat >rank1.sh <<-EOT &&
	uri=\$($RPC -r 1 attr.get "{\"name\":\"local-uri\"}" |
		sed "s/.*value\":\"\([^\"]*\)\".*/\1/")
	FLUX_URI=\$uri python3 rawev.py
	EOT
	flux start -s 2 sh rank1.sh >rank1.out &&
	cat rank1.out &&
	grep "^publisher still connected" rank1.out &&
	grep "^event interop.raw {\"n\":42} seq [1-9]" rank1.out
'
test_expect_success 'flux event sub sees heartbeat.pulse' '
	flux start -s 1 flux event sub -c 2 heartbeat.pulse >pulse.out &&
	test $(grep -c "^heartbeat.pulse" pulse.out) -eq 2
'
test_expect_success 'heartbeat period from the module argument' '
	cat >period.sh <<-EOT &&
	flux module reload heartbeat period=0.1s || exit 1
	start=\$(date +%s)
	flux event sub -c 20 heartbeat.pulse >/dev/null || exit 1
	echo \$((\$(date +%s) - start)) >period.secs
	EOT
	flux start -s 1 sh period.sh &&
	test $(cat period.secs) -lt 30
'
test_expect_success 'heartbeat period from the config, and a bad argument' '
	echo "{\"heartbeat\":{\"period\":\"0.1s\"}}" >hb.json &&
	flux start -c hb.json sh -c "flux event sub -c 20 heartbeat.pulse" \
		>cpulse.out &&
	test $(grep -c "^heartbeat.pulse" cpulse.out) -eq 20 &&
	flux start -s 1 sh -c "! flux module reload heartbeat period=0s"
'
test_expect_success 'a command whose broker dies exits non-zero, saying why' '
	cat >lost.sh <<-EOT &&
	flux event sub heartbeat.pulse >lost.out 2>lost.err &
	sub=\$!
	flux ping -i 0.2 broker >ping.out 2>ping.err &
	ping=\$!
	n=0
	while ! test -s lost.out && test \$n -lt 300; do sleep 0.1; n=\$((n+1)); done
	while ! test -s ping.out && test \$n -lt 300; do sleep 0.1; n=\$((n+1)); done
	kill -9 \$(flux getattr broker.pid)
	wait \$ping
	echo \$? >ping.rc
	wait \$sub
	echo \$? >lost.rc.tmp && mv lost.rc.tmp lost.rc
	EOT
	flux start -s 1 sh lost.sh;
	n=0 &&
	while ! test -s lost.rc && test $n -lt 300; do sleep 0.1; n=$((n+1)); done &&
	cat lost.err &&
	test "$(cat lost.rc)" -ne 0 &&
	grep "lost the connection to the broker" lost.err &&
	test "$(cat ping.rc)" -ne 0 &&
	grep "Connection reset by peer" ping.err
'
test_expect_success 'groups: broker.online has every rank; flux uptime' '
	cat >online.sh <<-EOT &&
	$RPC groups.get "{\"name\":\"broker.online\"}" >online.out &&
	$RPC groups.get "{\"name\":\"nosuch\"}" >nosuch.out &&
	flux uptime >uptime.out
	EOT
	flux start -s 4 sh online.sh &&
	grep "\"members\":\"0-3\"" online.out &&
	grep "\"members\":\"\"" nosuch.out &&
	grep "size 4" uptime.out && ! grep offline uptime.out
'
test_expect_success 'groups: join and leave on ranks 1 and 3 reach rank 0' '
	cat >join.sh <<-EOT &&
	$RPC -r 1 groups.join "{\"name\":\"g\"}" || exit 1
	$RPC -r 3 groups.join "{\"name\":\"g\"}" || exit 1
	$RPC -r 3 groups.join "{\"name\":\"g\"}" 2>eexist.err && exit 1
	$RPC -r 2 groups.leave "{\"name\":\"g\"}" 2>enoent.err && exit 1
	$RPC -r 1 groups.get "{\"name\":\"g\"}" 2>rank1.err && exit 1
	n=0
	while ! $RPC groups.get "{\"name\":\"g\"}" | grep -q "\"1,3\""; do
		test \$n -lt 300 || exit 1; sleep 0.1; n=\$((n+1))
	done
	$RPC -r 1 groups.leave "{\"name\":\"g\"}" || exit 1
	n=0
	while ! $RPC groups.get "{\"name\":\"g\"}" | grep -q "\"3\""; do
		test \$n -lt 300 || exit 1; sleep 0.1; n=\$((n+1))
	done
	EOT
	flux start -s 4 sh join.sh &&
	grep "already a member" eexist.err &&
	grep "not a member" enoent.err &&
	grep "send to rank 0" rank1.err
'
test_expect_success 'groups: a malformed groups.update is refused (EPROTO)' '
	cat >upd.sh <<-EOT &&
	$RPC groups.update "{\"updates\":{\"g\":{\"join\":\"0\",\"leave\":\"\"}}}" 2>upd0.err && exit 1
	$RPC -r 1 groups.update "{\"updates\":{\"g\":{\"join\":\"2\",\"leave\":\"\"}}}" 2>upd1.err && exit 1
	$RPC groups.update "{\"updates\":[]}" 2>upd2.err && exit 1
	$RPC groups.get "{\"name\":\"g\"}" >upd.out
	EOT
	flux start -s 4 sh upd.sh &&
	grep "malformed" upd0.err && grep "malformed" upd1.err &&
	grep "malformed" upd2.err &&
	grep "\"members\":\"\"" upd.out
'
test_expect_success 'groups: a streaming get follows broker.online as a broker dies' '
	cat >stream.sh <<-EOT &&
	$RPC -s groups.get "{\"name\":\"broker.online\"}" >stream.out &
	rpc=\$!
	pid=\$($RPC -r 3 attr.get "{\"name\":\"broker.pid\"}" |
		sed "s/.*value\":\"\([0-9]*\).*/\1/")
	n=0
	while ! grep -q "0-3" stream.out; do
		test \$n -lt 300 || break; sleep 0.1; n=\$((n+1))
	done
	# the resource set is defined (rank 3 has reported its hardware):
	# killed before that, rank 0 would wait for it for ever
	timeout 60 $RPC resource.status {} >/dev/null
	kill -9 \$pid
	n=0
	while ! grep -q "\"0-2\"" stream.out; do
		test \$n -lt 600 || break; sleep 0.1; n=\$((n+1))
	done
	kill \$rpc
	timeout 60 flux uptime >uptime3.out
	EOT
	flux start -s 4 --test-exit-mode=leader sh stream.sh;
	cat stream.out &&
	grep "\"members\":\"0-3\"" stream.out &&
	grep "\"members\":\"0-2\"" stream.out &&
	grep "1 offline" uptime3.out
'
test_expect_success 'ping route strings have the ids doc/guide/flux-core-interop.md says' '
	cat >route.sh <<-EOT &&
	flux ping -c1 broker >route.local &&
	flux ping -c1 1 >route.down &&
	FLUX_URI=\$($RPC -r 3 attr.get "{\"name\":\"local-uri\"}" |
		sed "s/.*value\":\"\([^\"]*\)\".*/\1/") flux ping -c1 0 >route.up
	EOT
	flux start -s 4 -Stbon.topo=kary:2 sh route.sh &&
	grep -E "\([0-9a-f]{8}![0-9a-f]{8}\)$" route.local &&
	grep -E "\([0-9a-f]{8}![0-9a-f]{8}\)$" route.down &&
	grep -E "\([0-9a-f]{8}!3!1![0-9a-f]{8}\)$" route.up
'
test_done

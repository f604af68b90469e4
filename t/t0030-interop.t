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
	n=0
	while ! test -s lost.out && test \$n -lt 300; do sleep 0.1; n=\$((n+1)); done
	kill -9 \$(flux getattr broker.pid)
	wait \$sub
	echo \$? >lost.rc.tmp && mv lost.rc.tmp lost.rc
	EOT
	flux start -s 1 sh lost.sh;
	n=0 &&
	while ! test -s lost.rc && test $n -lt 300; do sleep 0.1; n=$((n+1)); done &&
	cat lost.err &&
	test "$(cat lost.rc)" -ne 0 &&
	grep "lost the connection to the broker" lost.err
'
test_done

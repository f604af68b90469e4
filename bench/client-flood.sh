#!/bin/bash
# Local clients against the broker's memory bounds (issue 25).  Run from a
# build directory's bench/ or give the build directory as $1.  Two attacks:
#   1. 5,000 connections subscribe to every event and never read, while
#      another client publishes 2,000 events of 64 KB;
#   2. 6 connections announce 1 GiB frames and send what the broker takes.
# Each runs against a fresh broker with broker.client-queue-limit=$LIMIT
# (default 256M; the broker's own default is a quarter of the RAM, at most
# 4G) while flux ping asks every 25 ms.  Prints the broker's peak RSS (its
# VmHWM) against the limit, the worst ping time, the longest loop turn in
# the broker's CPU time during the attack (broker.stats-get "turn-cpu-max":
# what a request may wait behind, whatever the machine's load), and what
# the attackers saw.
# A baseline comes first: the same pings to an idle broker (on a shared
# machine the worst ping of an idle broker is far from its median).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
LIMIT=${LIMIT:-256M}
SUBS=${SUBS:-5000}
EVENTS=${EVENTS:-2000}
flood="$build/t/client-flood"
make -C "$build/t" client-flood >/dev/null
unset FLUX_URI
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

attack () {
    flux start -Sbroker.modules=heartbeat -Sbroker.client-queue-limit=$LIMIT \
        -Sbroker.client-frame-timeout=${TIMEOUT:-10s} sh -c "
    cd $tmp
    pid=\$(flux getattr broker.pid)
    echo \"limit: \$(flux getattr broker.client-queue-limit)\"
    rss0=\$(awk '/^VmRSS/ {print \$2}' /proc/\$pid/status)
    $1
    flux module stats --clear broker
    flux ping -c 400 -i 0.025 broker >ping.out &
    ping=\$!
    t0=\$(date +%s.%N)
    $2
    t1=\$(date +%s.%N)
    wait \$ping
    $3
    hwm=\$(awk '/^VmHWM/ {print \$2}' /proc/\$pid/status)
    turn=\$(flux module stats broker |
        sed -n 's/.*\"turn-cpu-max\": *\\([0-9.e-]*\\).*/\\1/p' |
        awk '{ printf \"%.2f\", \$1 * 1000 }')
    stats=\$(flux module stats broker)
    phases=\$(for k in prep io rest; do echo \"\$stats\" |
        sed -n \"s/.*\\\"turn-\$k-cpu-max\\\": *\\([0-9.e-]*\\).*/\\1/p\" |
        awk -v k=\$k '{ printf \"%s %.2f \", k, \$1 * 1000 }'; done)
    echo \"attack took \$(echo \"\$t1 - \$t0\" | bc) s\"
    echo \"broker RSS before: \$rss0 kB, peak: \$hwm kB\"
    echo \"longest loop turn: \$turn ms of the broker's CPU\"
    echo \"longest per phase (ms): \$phases\"
    sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' ping.out | sort -n | awk '
        { t[NR] = \$1 }
        END { printf \"pings answered: %d of 400: median %s ms, p99 %s ms, \" \
              \"worst %s ms\\n\", NR, t[int((NR + 1) / 2)], \
              t[int(NR * 0.99)], t[NR] }'
    flux dmesg >dmesg.out
    echo \"disconnections logged: \$(grep -c disconnecting dmesg.out) in full,\" \
        \"\$(sed -n 's/.* \\([0-9]*\\) more clients cut.*/\\1/p' dmesg.out |
            awk '{ s += \$1 } END { print s + 0 }') counted in summary lines\"
    "
}

echo "== baseline: no attack"
attack ":" "sleep 10" ":"

echo "== $SUBS subscribers that never read, $EVENTS events of 64 KB"
attack "$flood subscribe $SUBS >subs.out & subs=\$!
        while ! grep -q ready subs.out 2>/dev/null; do sleep 0.1; done" \
    "$flood publish $EVENTS 65536" \
    "kill -USR1 \$subs; wait \$subs; cat subs.out"

echo "== 6 connections announcing 1 GiB and sending part of it"
attack ":" \
    "$flood partial 6 1073741824 1073741824 ${PARTIAL_WAIT:-20}" \
    ":"

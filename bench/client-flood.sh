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
build=$(cd "${1:-$(dirname "$0")/..}" && pwd) # absolute: the attack runs in $tmp
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
    flux module stats broker >stats1.json
    $3
    flux module stats broker >stats2.json
    hwm=\$(awk '/^VmHWM/ {print \$2}' /proc/\$pid/status)
    echo \"attack took \$(echo \"\$t1 - \$t0\" | bc) s\"
    echo \"broker RSS before: \$rss0 kB, peak: \$hwm kB\"
    # each line from one stats-get: the figures are of the same turns
    for f in stats1 stats2; do
        test \$f = stats1 && when=\"during the pings\" ||
            when=\"with the attackers' exit\"
        jq -r --arg when \"\$when\" '\"longest loop turn \\(\$when): \" +
            (.\"turn-cpu-max\" * 1e3 * 100 | round / 100 | tostring) +
            \" ms of CPU (per phase, ms: prep \" +
            ((.\"turn-prep-cpu-max\" // 0) * 1e3 * 100 | round / 100 | tostring) +
            \" input \" +
            ((.\"turn-input-cpu-max\" // 0) * 1e3 * 100 | round / 100 | tostring) +
            \" io \" +
            ((.\"turn-io-cpu-max\" // 0) * 1e3 * 100 | round / 100 | tostring) +
            \" rest \" +
            ((.\"turn-rest-cpu-max\" // 0) * 1e3 * 100 | round / 100 | tostring) +
            \"); waits: self \" + (.\"self-wait-turns-max\" | tostring) +
            \" read \" + (.\"read-wait-turns-max\" | tostring) + \" turns\"' \\
            \$f.json
        jq -r '\"  it did: \" + (.\"turn-longest\" | tostring)' \$f.json
    done
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

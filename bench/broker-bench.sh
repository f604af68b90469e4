#!/bin/bash
# Broker benchmarks (issue 3): run from a build directory's bench/ or give
# the build directory as $1.  Prints:
#   - flux start -s N true wall time, N = 1 4 16 64 128 (median of 3)
#   - broker.ping round trip to rank 0 and to rank 15 of 16 (depth 4)
#   - events/s delivered through every level of a 16-broker instance
#   - RSS of an idle broker (rank 1 of 4)
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
bb="$build/bench/brokerbench"
unset FLUX_URI

median3 () { sort -n | sed -n 2p; }

for n in 1 4 16 64 128; do
    t=$(for i in 1 2 3; do
            /usr/bin/time -f %e flux start -s $n true 2>&1 >/dev/null | tail -1
        done | median3)
    echo "flux start -s $n true: ${t} s (median of 3)"
done
flux start -s 16 sh -c "$bb ping 0 5000; $bb ping 15 5000; $bb events 20000"
flux start -s 4 sh -c '
    pid=$(flux getattr broker.pid)
    sleep 1
    for p in $(pgrep -x flux-broker); do
        [ "$p" = "$pid" ] && continue
        echo "idle broker RSS: $(ps -o rss= -p $p | tr -d " ") KiB (pid $p)"
        break
    done'

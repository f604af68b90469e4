#!/bin/bash
# Bootstrap cost (issue 23): run from a build directory's bench/ or give
# the build directory as $1.  For N = 64 256 512 1024 (or $SIZES):
#   - flux start -s N true, wall time (median of $REPS, default 3), and
#     the same without modules (-Sbroker.modules=): the PMI exchange and
#     the overlay, without the services
#   - time until rank 0 runs the initial program (the instance is up)
#   - peak memory in use on the machine during the run (MemAvailable
#     sampled every 0.1 s) and the fds of the flux start process
# The cost per broker should stay flat as N grows.
#
# Measured 2026-11-28 on the 2-CPU VM shared with other builds (load 5 to
# 300 during the runs, so single figures are noisy; the per-broker cost is
# the point): N=64 0.9-1.8 s, 256 4.2-6.0 s, 512 8.4-13.5 s, 1024 16.6-24.9 s
# (16-27 ms/broker at every N; about 2 MiB of memory per broker).  A perf
# profile of -s 64 without modules: 51% kernel in the brokers (exec, mmap,
# inode allocation for rundirs and sockets), 14% dynamic linking, the PMI
# server (flux start) 4%.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
SIZES=${SIZES:-64 256 512 1024}
REPS=${REPS:-3}

echo "ulimit -n: $(ulimit -n); cpus: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
median () { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
avail () { awk '/MemAvailable/ {print $2}' /proc/meminfo; }

for n in $SIZES; do
    # ulimit: flux start holds one socketpair per broker
    need=$((n * 2 + 64))
    if [ "$(ulimit -n)" -lt $need ]; then
        ulimit -n $need 2>/dev/null || {
            echo "N=$n: needs ulimit -n $need"
            continue
        }
    fi
    full=$(for i in $(seq $REPS); do
        /usr/bin/time -f %e flux start -s $n true 2>&1 >/dev/null | tail -1
    done | median)
    bare=$(for i in $(seq $REPS); do
        /usr/bin/time -f %e flux start -s $n -Sbroker.modules= true 2>&1 \
            >/dev/null | tail -1
    done | median)
    # time to the initial program, and memory, on one more run
    before=$(avail)
    low=$before
    t0=$(date +%s.%N)
    flux start -s $n sh -c 'date +%s.%N >"$0"' /tmp/bootstrap-bench.$$ &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        a=$(avail)
        [ "$a" -lt "$low" ] && low=$a
        sleep 0.1
    done
    wait $pid
    up=$(echo "$(cat /tmp/bootstrap-bench.$$) - $t0" | bc)
    rm -f /tmp/bootstrap-bench.$$
    printf "N=%-5d flux start -s N true: %6.2f s (%.2f ms/broker)  " \
        $n "$full" "$(echo "$full * 1000 / $n" | bc -l)"
    printf "no modules: %6.2f s (%.2f ms/broker)  up after %.2f s  " \
        "$bare" "$(echo "$bare * 1000 / $n" | bc -l)" "$up"
    printf "memory %d MiB (%.1f MiB/broker)\n" $(((before - low) / 1024)) \
        "$(echo "($before - $low) / 1024 / $n" | bc -l)"
done

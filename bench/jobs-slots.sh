#!/bin/bash
# Is the 1-broker rate of real jobs bound by the CPU or by the latency of
# its job slots?  (issue 21; doc: the closing note of stop 54.)  The same
# NJOBS one-core /bin/true jobs run in a 1-broker instance whose R gives
# it SLOTS cores (resource.path), on the machine's own CPUs, so that
# SLOTS jobs run at a time however many CPUs there are.  With as many
# slots as CPUs the rate is 2 / (a slot's cycle: alloc to free); with
# more, jobs overlap each other's waits, and the rate rises up to what
# the CPUs can do.  For each run: jobs/s and the share of CPU time idle
# (/proc/stat, all CPUs) while the jobs ran.  Runs alternate, ROUNDS
# times, so the machine's drift weighs on each alike.
# Usage: bash bench/jobs-slots.sh [BUILD]
# Env: NJOBS (1000), ROUNDS (2), SLOTS ("N 2N", N = nproc), AFFINITY
# (off: cores of R need not exist here, so tasks are not bound; "on"
# binds them when SLOTS is at most nproc).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
ncpu=$(nproc)
NJOBS=${NJOBS:-1000}
ROUNDS=${ROUNDS:-2}
SLOTS=${SLOTS:-"$ncpu $((2 * ncpu))"}
AFFINITY=${AFFINITY:-off}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $ncpu CPUs; $NJOBS jobs a run; cpu-affinity=$AFFINITY;" \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    for n in $SLOTS; do
        cat >"$tmp/R.json" <<EOF
{"version":1,"execution":{"R_lite":[{"rank":"0","children":{"core":"0-$((n - 1))"}}],"starttime":0,"expiration":0,"nodelist":["$(hostname)"]}}
EOF
        out=$(NJOBS=$NJOBS AFFINITY=$AFFINITY flux start -s 1 \
            -Sresource.path="$tmp/R.json" bash -c '
            set -e
            flux submit --cc=1-20 --quiet -o cpu-affinity=$AFFINITY /bin/true
            flux queue drain
            read -r c u n s i w rest </proc/stat
            t0=$(date +%s.%N)
            flux submit --cc=1-$NJOBS --quiet -o cpu-affinity=$AFFINITY \
                /bin/true
            flux queue drain
            t1=$(date +%s.%N)
            read -r c u2 n2 s2 i2 w2 rest </proc/stat
            busy=$(( (u2 - u) + (n2 - n) + (s2 - s) ))
            idle=$(( (i2 - i) + (w2 - w) ))
            printf "%.1f jobs/s, idle %d%%\n" \
                "$(echo "$NJOBS / ($t1 - $t0)" | bc -l)" \
                $(( idle * 100 / (busy + idle) ))')
        echo "round $r: $n slots: $out"
    done
done

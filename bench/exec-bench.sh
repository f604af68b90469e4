#!/bin/bash
# flux exec launch cost (issue 21): `flux exec -r all true` on N brokers
# (default 8; the target is 64: "within 1.5x of what those launches
# alone cost at the machine's fork+exec rate on its cores").  Run from a
# build directory (or give it as $1); N is $2, repetitions $3 (default 5).
# Prints each run's wall time, the best, and the floor: N launches of
# /bin/true at bench/floors' spawn_true time, spread over the machine's
# cores (nproc), with the ratio of the two.  Env: MODULES (default
# "rexec": the brokers load only the rexec module; "all": the default
# modules of an instance, which run beside and share the same cores).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
n=${2:-8}
reps=${3:-5}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI

spawn_ms=$("$build/bench/floors" spawn | awk '/^spawn_true:/ {print $2}')
cores=$(nproc)
floor_ms=$(echo "$n * $spawn_ms / $cores" | bc -l)

export EB_REPS="$reps"
modules=${MODULES:-rexec}
mopt="-Sbroker.modules=$modules"
[ "$modules" = all ] && mopt=""
times=$(flux start -s "$n" $mopt bash -c '
    set -e
    flux exec -r all true  # warm up: every broker up, every path cached
    for i in $(seq $EB_REPS); do
        t0=$(date +%s.%N)
        flux exec -r all true
        t1=$(date +%s.%N)
        echo "($t1 - $t0) * 1000" | bc -l
    done')
i=0
for t in $times; do
    i=$((i + 1))
    printf "run %d: flux exec -r all true on %d brokers: %.1f ms\n" $i "$n" "$t"
done
best=$(printf "%s\n" $times | sort -g | head -1)
printf "best: %.1f ms\n" "$best"
printf "modules: %s\n" "$modules"
printf "floor: %d launches x %.3f ms (floors spawn_true) / %d cores = %.1f ms\n" \
    "$n" "$spawn_ms" "$cores" "$floor_ms"
printf "ratio: %.2f (target <= 1.5 at 64 brokers)\n" \
    "$(echo "$best / $floor_ms" | bc -l)"

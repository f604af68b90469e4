#!/bin/bash
# Real execution speed (issue 21), each figure beside its floor measured
# in the same run.  Run from a build directory (or give it as $1).
#   - floors: fork+exec+wait of /bin/true (bench/floors spawn_true) and
#     the ceiling of real jobs it allows: 1 / (2 x spawn), a job being two
#     launches (its shell and its task)
#   - NJOBS (300) real /bin/true jobs, 1 broker: jobs/s beside the
#     target of issue 21 (400 jobs/s, or 60% of the ceiling when that is
#     lower), and the rank-0 broker's peak RSS (VmHWM) after them
#   - the same on 4 brokers of the same cores (ratio to the 1-broker rate)
#   - `flux run /bin/true` (1 broker) and `flux run -N4 -n4 hostname`
#     (4 brokers) latency, median of LAT (10)
#   - on 64 brokers (SIZE64, 0 skips): `flux run -N64 true` (128 launches)
#     and `flux exec -r all true` (64), best of REPS (3), beside the floor:
#     the launches at spawn_true spread over the machine's cores (nproc);
#     the execs run after the jobs, once the instance is idle
# Env: NJOBS (300), LAT (10), REPS (3), SIZE64 (64), START_OPTS (extra
# flux start options, to compare settings in one run).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export NJOBS=${NJOBS:-300} LAT=${LAT:-10} REPS=${REPS:-3}
big=${SIZE64:-64}

spawn_ms=$("$build/bench/floors" spawn | awk '/^spawn_true:/ {print $2}')
cores=$(nproc)
ceiling=$(echo "1000 / (2 * $spawn_ms)" | bc -l)
# the 1-broker target: 400 jobs/s, or 60% of the ceiling when lower
target=$(echo "t = 0.6 * $ceiling; if (t < 400) t else 400" | bc -l)
printf "floor: fork+exec+wait /bin/true %.3f ms (%.0f/s); real-job ceiling %.1f jobs/s, 60%% = %.1f; 1-broker target %.1f jobs/s\n" \
    "$spawn_ms" "$(echo "1000 / $spawn_ms" | bc -l)" "$ceiling" \
    "$(echo "0.6 * $ceiling" | bc -l)" "$target"

# inner: runs in an instance; prints "name value"
inner='
set -e
ms () { date +%s.%N; }
t0=$(ms)
flux submit --cc=1-$NJOBS --quiet /bin/true
flux queue drain
t1=$(ms)
echo "jobs $(echo "$NJOBS / ($t1 - $t0)" | bc -l)"
bad=$(flux jobs -a -n -o "{result}" | grep -vc COMPLETED || true)
echo "notcompleted $bad"
pid=$(flux getattr broker.pid)
echo "vmhwm $(awk "/^VmHWM/ {print \$2 / 1024}" /proc/$pid/status)"
for i in $(seq $LAT); do
    t0=$(ms); flux run $RUNARGS >/dev/null; t1=$(ms)
    echo "lat $(echo "($t1 - $t0) * 1000" | bc -l)"
done
'
median () { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
get () { awk -v k="$1" '$1 == k {print $2}'; }

out1=$(RUNARGS="/bin/true" flux start -s 1 $START_OPTS bash -c "$inner")
r1=$(echo "$out1" | get jobs)
printf "jobs, 1 broker: %.1f jobs/s (%.0f%% of the ceiling, %.0f%% of the target; %s not COMPLETED)\n" \
    "$r1" "$(echo "100 * $r1 / $ceiling" | bc -l)" \
    "$(echo "100 * $r1 / $target" | bc -l)" "$(echo "$out1" | get notcompleted)"
printf "rank-0 broker VmHWM after %d jobs: %.1f MiB\n" "$NJOBS" \
    "$(echo "$out1" | get vmhwm)"
printf "flux run /bin/true, 1 broker: %.1f ms (median of %d)\n" \
    "$(echo "$out1" | get lat | median)" "$LAT"

out4=$(RUNARGS="-N4 -n4 hostname" flux start -s 4 $START_OPTS bash -c "$inner")
r4=$(echo "$out4" | get jobs)
printf "jobs, 4 brokers: %.1f jobs/s (%.0f%% of the 1-broker rate; %s not COMPLETED)\n" \
    "$r4" "$(echo "100 * $r4 / $r1" | bc -l)" "$(echo "$out4" | get notcompleted)"
printf "flux run -N4 -n4 hostname, 4 brokers: %.1f ms (median of %d)\n" \
    "$(echo "$out4" | get lat | median)" "$LAT"

[ "$big" -gt 0 ] || exit 0
out64=$(flux start -s "$big" $START_OPTS bash -c '
    set -e
    ms () { date +%s.%N; }
    flux run -N'"$big"' true; flux exec -r all true   # warm up
    for i in $(seq $REPS); do
        t0=$(ms); flux run -N'"$big"' true; t1=$(ms)
        echo "run $(echo "($t1 - $t0) * 1000" | bc -l)"
    done
    # not right after a job: what follows its end (the shells exit, the
    # KVS, job-list) would still be running on the same cores
    flux queue idle; sleep 1
    for i in $(seq $REPS); do
        t0=$(ms); flux exec -r all true; t1=$(ms)
        echo "exec $(echo "($t1 - $t0) * 1000" | bc -l)"
    done')
for what in run exec; do
    if [ $what = run ]; then n=$((2 * big)); cmd="flux run -N$big true"
    else n=$big; cmd="flux exec -r all true"; fi
    best=$(echo "$out64" | get $what | sort -g | head -1)
    floor=$(echo "$n * $spawn_ms / $cores" | bc -l)
    printf "%s, %d brokers: %.1f ms (best of %d); floor %d launches x %.3f ms / %d cores = %.1f ms; ratio %.2f (target <= 1.5)\n" \
        "$cmd" "$big" "$best" "$REPS" "$n" "$spawn_ms" "$cores" "$floor" \
        "$(echo "$best / $floor" | bc -l)"
done

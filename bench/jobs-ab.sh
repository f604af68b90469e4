#!/bin/bash
# Compare the real-job throughput of two sets of broker modules on a
# shared machine (issue 21).  One run's jobs/s moves by 10-20% with the
# load of the moment here, more than most changes do; so the two sides
# run in turn, A B then B A ..., PAIRS times, and the medians are
# compared, with the figures that explain them beside: the scheduler's
# R commit (the kvs.commit the next job's start waits for) and the
# sqlite transactions (fsyncs) of the run.
#   Each run: a fresh `flux start -s SIZE`, 100 jobs to warm up, then
#   NJOBS /bin/true jobs, submitted at once, timed to the queue's drain.
# Usage: bench/jobs-ab.sh BUILD DIR_A DIR_B
#   BUILD  a build directory (its flux and its modules)
#   DIR_A, DIR_B  directories of module .so files found before the
#          build's own (module_path), e.g. copies of another build's
#          .libs/kvs.so; "-" for the build's modules alone
# Env: PAIRS (4), NJOBS (1000), SIZE (1), START_OPTS (more flux start
# options).
set -e
[ $# = 3 ] || { echo "Usage: $0 BUILD DIR_A DIR_B" >&2; exit 1; }
build=$(cd "$1" && pwd)
export PATH="$build/src/cmd:$PATH"
unset FLUX_URI
pairs=${PAIRS:-4} njobs=${NJOBS:-1000} size=${SIZE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

modpath () {
    local p=""
    [ "$1" != - ] && p="$(cd "$1" && pwd):"
    for d in "$build"/src/modules/*/.libs; do p="$p$d:"; done
    echo "${p%:}"
}
# run DIR: prints "jobs/s R-commit-ms sqlite-commits"
run () {
    # shellcheck disable=SC2086,SC2016
    flux start -s "$size" -Sconf.module_path="$(modpath "$1")" $START_OPTS \
        bash -c '
        set -e
        flux submit --cc=1-100 --quiet /bin/true; flux queue drain
        s0=$(flux module stats content-sqlite | jq .commits)
        t0=$(date +%s.%N)
        flux submit --cc=1-'"$njobs"' --quiet /bin/true; flux queue drain
        t1=$(date +%s.%N)
        s1=$(flux module stats content-sqlite | jq .commits)
        r=$(flux module stats sched-simple |
            jq ".\"commit-time\" / .commits * 1000")
        echo "$(echo "'"$njobs"' / ($t1 - $t0)" | bc -l) $r $((s1 - s0))"'
}
for i in $(seq "$pairs"); do
    if [ $((i % 2)) = 1 ]; then
        a=$(run "$2"); b=$(run "$3")
    else
        b=$(run "$3"); a=$(run "$2")
    fi
    echo "$a $b" >>"$tmp/runs"
    echo "$a $b" | awk '{printf "A %6.1f jobs/s  R %.3f ms  %d fsyncs | B %6.1f jobs/s  R %.3f ms  %d fsyncs\n", $1, $2, $3, $4, $5, $6}'
done
sort -g -k1 "$tmp/runs" | awk '{a[NR]=$1; r[NR]=$2} END {m=int((NR+1)/2); printf "median A %.1f jobs/s", a[m]}'
sort -g -k4 "$tmp/runs" | awk '{b[NR]=$4} END {m=int((NR+1)/2); printf ", B %.1f jobs/s", b[m]}'
sort -g -k2 "$tmp/runs" | awk '{r[NR]=$2} END {m=int((NR+1)/2); printf "; R commit A %.3f ms", r[m]}'
sort -g -k5 "$tmp/runs" | awk '{r[NR]=$5} END {m=int((NR+1)/2); printf ", B %.3f ms\n", r[m]}'

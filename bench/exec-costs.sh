#!/bin/bash
# What a real /bin/true job costs the rank-0 broker (issue 21), in units
# that the load of a shared machine does not blur the way wall-clock
# rates do.  Run from a build directory (or give it as $1).
#   - CPU per job: the broker's utime+stime (all its module threads),
#     and the shells' and tasks' (reaped children of the broker and of its
#     shell launcher, job-cpu.sh), over NJOBS
#     (200) jobs after 20 to warm up, from /proc/PID/stat
#   - context switches per job of the broker's threads
#   - with strace (if installed and STRACE is not 0): syscalls per job of
#     the broker's threads, fdatasync among them, in a second instance
#   - jobs/s of each run, for reference only
# Env: NJOBS (200), STRACE (1), START_OPTS (extra flux start options,
# e.g. -Scontent.lazy-delay-ms=0, to compare settings in one run).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export NJOBS=${NJOBS:-200}

export JOB_CPU="$(cd "$(dirname "$0")" && pwd)/job-cpu.sh"
flux start -s 1 $START_OPTS bash -c '
set -e
pid=$(flux getattr broker.pid)
tck=$(getconf CLK_TCK)
. "$JOB_CPU"
cs () { cat /proc/$pid/task/*/status | awk "/ctxt_switches/ {s += \$2} END {print s}"; }
flux submit --cc=1-20 --quiet /bin/true; flux queue drain
read -r -a a < /proc/$pid/stat
b0=$((a[13] + a[14])); c0=$(job_cpu_ticks $pid); s0=$(cs)
t0=$(date +%s.%N)
flux submit --cc=1-$NJOBS --quiet /bin/true; flux queue drain
t1=$(date +%s.%N)
read -r -a a < /proc/$pid/stat
b1=$((a[13] + a[14])); c1=$(job_cpu_ticks $pid); s1=$(cs)
printf "jobs/s %.1f (for reference: wall clock)\n" \
    "$(echo "$NJOBS / ($t1 - $t0)" | bc -l)"
printf "broker CPU per job: %.2f ms\n" \
    "$(echo "($b1 - $b0) * 1000 / $tck / $NJOBS" | bc -l)"
printf "shells and tasks CPU per job: %.2f ms\n" \
    "$(echo "($c1 - $c0) * 1000 / $tck / $NJOBS" | bc -l)"
printf "broker context switches per job: %.0f\n" \
    "$(echo "($s1 - $s0) / $NJOBS" | bc -l)"
'

[ "${STRACE:-1}" != 0 ] && command -v strace >/dev/null || exit 0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
export EC_OUT="$out"
flux start -s 1 $START_OPTS bash -c '
set -e
pid=$(flux getattr broker.pid)
flux submit --cc=1-20 --quiet /bin/true; flux queue drain
args=$(ls /proc/$pid/task | sed "s/^/-p /")
strace -c -o "$EC_OUT" $args 2>/dev/null &
sp=$!
sleep 1
flux submit --cc=1-$NJOBS --quiet /bin/true; flux queue drain
kill -INT $sp; wait $sp || true
'
awk -v n="$NJOBS" '$NF == "total" {printf "broker syscalls per job: %.0f\n", $4 / n}
    $NF == "fdatasync" {printf "fdatasync per job: %.1f\n", $4 / n}' "$out"

#!/bin/bash
# What one real 1-node /bin/true job costs the rank-0 broker (issue 21),
# thread by thread, in CPU time (which the load of a shared machine
# blurs less than jobs/s).  Run from a build directory (or give it as $1).
#   - CPU per job of each thread of the broker (the broker thread, the
#     ZeroMQ I/O threads, "modgroup" for the modules of broker.module-group
#     and one thread for each other module: START_OPTS=
#     -Sbroker.module-group= gives every module its own, to compare), from
#     /proc/PID/task/*/schedstat, over NJOBS (500) jobs after 20 to warm
#     up; and the shells' and tasks' CPU (reaped children, /proc/PID/stat)
#   - messages per job each module sent and received (module stats-get:
#     tx/rx by type), and a few module counters that are numbers
#     (kvs commits, content-sqlite stores and syncs, ...)
# Env: NJOBS (500), START_OPTS (extra flux start options), MODS (the
# modules whose stats are read), MODDIR (a directory of module .so files
# found before the build's: to compare old and new modules in turn, e.g.
# MODDIR=/tmp/old with copies of the old build's .libs/NAME.so), BRIEF (1:
# print the totals and the busiest threads only).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
export JOB_CPU="$(cd "$(dirname "$0")" && pwd)/job-cpu.sh"
unset FLUX_URI
export NJOBS=${NJOBS:-500}
if [ -n "$MODDIR" ]; then
    mp=$MODDIR
    for d in "$build"/src/modules/*/.libs; do mp=$mp:$d; done
    START_OPTS="$START_OPTS -Sconf.module_path=$mp"
fi
export MODS=${MODS:-"kvs kvs-watch content content-sqlite job-ingest job-manager sched-simple job-exec job-info job-list"}

flux start -s 1 $START_OPTS bash -c '
set -e
pid=$(flux getattr broker.pid)
tck=$(getconf CLK_TCK)
threads () { # "name ns voluntary-cs involuntary-cs" per thread name
    for t in /proc/$pid/task/*; do
        printf "%s %s %s %s\n" "$(tr " " _ <$t/comm)" \
            "$(cut -d" " -f1 $t/schedstat)" \
            "$(awk "/^voluntary_ctxt/ {v = \$2} /^nonvoluntary_ctxt/ {n = \$2} END {print v, n}" $t/status)"
    done | awk "{s[\$1] += \$2; v[\$1] += \$3; n[\$1] += \$4}
        END {for (k in s) print k, s[k], v[k], n[k]}" | sort
}
stats () { # "module.key value" for every numeric leaf of stats-get
    for m in $MODS; do
        flux module stats $m 2>/dev/null | python3 -c "
import json, sys
def walk(p, o):
    if isinstance(o, dict):
        for k, v in o.items(): walk(p + \".\" + k, v)
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        print(p, o)
try: walk(sys.argv[1], json.load(sys.stdin))
except ValueError: pass
" $m
    done | sort
}
. "$JOB_CPU"
flux submit --cc=1-20 --quiet /bin/true; flux queue drain
threads >/tmp/bjc.a.$$; stats >/tmp/bjc.sa.$$
c0=$(job_cpu_ticks $pid)
t0=$(date +%s.%N)
flux submit --cc=1-$NJOBS --quiet /bin/true; flux queue drain
t1=$(date +%s.%N)
c1=$(job_cpu_ticks $pid)
threads >/tmp/bjc.b.$$; stats >/tmp/bjc.sb.$$
printf "jobs/s %.1f (wall clock, for reference); load %s; VmHWM %s MiB\n" \
    "$(echo "$NJOBS / ($t1 - $t0)" | bc -l)" "$(cut -d" " -f1-3 /proc/loadavg)" \
    "$(awk "/^VmHWM/ {print int(\$2 / 1024)}" /proc/$pid/status)"
echo "per job, by thread: CPU ms, voluntary and involuntary context switches"
join /tmp/bjc.a.$$ /tmp/bjc.b.$$ | awk -v n=$NJOBS "
    {d = (\$5 - \$2) / 1e6 / n; v = (\$6 - \$3) / n; w = (\$7 - \$4) / n
     s += d; sv += v; sw += w
     printf \"  %-16s %.3f %5.1f %5.1f\n\", \$1, d, v, w}
    END {printf \"  %-16s %.3f %5.1f %5.1f\n\", \"TOTAL\", s, sv, sw}"
printf "  %-16s %.3f\n" "shells+tasks" "$(echo "($c1 - $c0) * 1000 / $tck / $NJOBS" | bc -l)"
echo "module counters per job (changed ones):"
join /tmp/bjc.sa.$$ /tmp/bjc.sb.$$ | awk -v n=$NJOBS "
    \$3 != \$2 {printf \"  %-50s %.2f\n\", \$1, (\$3 - \$2) / n}"
rm -f /tmp/bjc.[ab].$$ /tmp/bjc.s[ab].$$
'

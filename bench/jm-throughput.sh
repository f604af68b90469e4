#!/bin/bash
# Job manager throughput (issue 5): submit -> INACTIVE for N jobs on one
# broker, with the test scheduler (sched-dummy, unlimited) and the test
# exec service (exec-dummy, run_duration 0) in place of sched-simple and
# job-exec, so the figure is the job manager's own (plus the KVS).
# Jobs go in through t/jm-submit (1024 per KVS commit and per
# job-manager.submit, as job-ingest batches).  Run from a build directory
# (or give it as $1); counts default to 1000 10000.  Prints per count:
# jobs/s, events/s (10 events per job), KVS commits and the largest batch,
# and the broker's RSS after the run.  $JMB_SCHED_ARGS are sched-dummy's
# arguments (default "mode=unlimited"; add r-in-response to have R come
# in the alloc response instead of a KVS commit per job by the scheduler
# and a lookup by the job manager).  JMB_EXEC=job-exec loads the real
# job-exec (simulated execution, with its guest namespace and
# exec.eventlog per job) in place of exec-dummy.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
shift || true
counts=${*:-1000 10000}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export JMB_T="$build/t"
export JMB_SCHED_ARGS="${JMB_SCHED_ARGS:-mode=unlimited}"
export JMB_EXEC="${JMB_EXEC:-exec-dummy}"

for n in $counts; do
    flux start -s 1 \
        -Sbroker.modules=content,content-sqlite@0,kvs,kvs-watch,job-manager \
        bash -c '
        set -e
        T=$JMB_T; n='$n'
        flux module load $T/module/.libs/sched-dummy.so $JMB_SCHED_ARGS
        if test "$JMB_EXEC" = job-exec; then
            flux module load job-exec
        else
            flux module load $T/module/.libs/exec-dummy.so
        fi
        t0=$(date +%s.%N)
        $T/jm-submit -q -n $n -b 1024
        $T/rpc job-manager.drain >/dev/null
        t1=$(date +%s.%N)
        stats=$($T/rpc job-manager.stats-get)
        ev=$(echo "$stats" | jq .journal.events)
        commits=$(echo "$stats" | jq .kvs.commits)
        maxb=$(echo "$stats" | jq .kvs.max_batch)
        rss=$(grep VmRSS /proc/$PPID/status | awk "{print \$2}")
        echo "$n $t0 $t1 $ev $commits $maxb $rss" | awk "{
            t = \$3 - \$2;
            printf \"%6d jobs: %.2f s  %.0f jobs/s  %.0f events/s  \", \$1, t, \$1 / t, \$4 / t;
            printf \"(%d events, %d KVS commits, max %d events/commit)  broker RSS %.1f MiB\n\", \$4, \$5, \$6, \$7 / 1024 }"
    '
done

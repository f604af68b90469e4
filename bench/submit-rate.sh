#!/bin/bash
# Submission rate (issue 5): `flux submit --cc=1-N --quiet
# --setattr=system.exec.test.run_duration=0 true` against one broker with
# job-ingest and the fake job manager (t/module/fake-jm.so, which only
# records), so the figure is flux submit + job-ingest + the KVS, without
# the real job-manager.  Run from a build directory (or give it as $1);
# N defaults to 1000, repeated 5 times.  Prints jobs/s per run, with the
# environment of the caller and with --env=-* (an empty environment), and
# the broker CPU seconds of the last run of each.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
n=${2:-1000}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export SRB_T="$build/t" SRB_N="$n"

flux start -s 1 -Sbroker.modules=content,content-sqlite@0,kvs,kvs-watch,job-ingest \
    bash -c '
    set -e
    flux module load --name=job-manager $SRB_T/module/.libs/fake-jm.so
    flux submit --quiet true
    cpu () { awk "{print \$14+\$15}" /proc/$PPID/stat; }
    for env in "" "--env=-*"; do
        for i in 1 2 3 4 5; do
            c0=$(cpu); t0=$(date +%s.%N)
            flux submit --cc=1-$SRB_N --quiet $env \
                --setattr=system.exec.test.run_duration=0 true
            t1=$(date +%s.%N); c1=$(cpu)
            echo "${env:-environment} run $i: $(echo "$SRB_N / ($t1 - $t0)" | bc) jobs/s"
        done
        echo "${env:-environment}: broker CPU $(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l | cut -c1-5) s for $SRB_N jobs"
    done'

#!/bin/bash
# sched-simple in a 1-broker instance (issue 5): 1,024 configured nodes of
# 64 cores (the fake resource module of t/), N single-node jobs sent at
# once by t/sched-driver (in the job manager's place, unlimited mode),
# then freed; a first round warms up, the second is measured.  Run from a build directory's bench/ or give the build
# directory as $1; N (default 1000) from the environment.  Prints the wall
# time to the last success and to the last free, the sched-simple thread's
# CPU time per alloc (sched-simple.rusage who=thread), and its own
# figures: commits and the time spent in first fit.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
N=${N:-1000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf '{"version":1,"execution":{"R_lite":[{"rank":"0-1023","children":{"core":"0-63"}}],"nodelist":["node[0-1023]"],"starttime":0,"expiration":0}}\n' >R.json
RU="$build/t/rpc sched-simple.rusage '{\"who\":\"thread\"}'"
# one round to warm up (the module thread's heap grows), one measured
round () {
    for i in $(seq $1 $2); do echo "alloc $i 16 N=1,s=1,c=64,x"; done
    for i in $(seq $1 $2); do echo "wait $i success"; done
    echo elapsed
    echo "sh $RU >ru1"
    for i in $(seq $1 $2); do echo "free $i"; done
    for i in $(seq $1 $2); do echo "wait $i free"; done
    echo elapsed
}
{
    round 1 $N
    echo "sh $RU >ru0"
    echo elapsed
    round $((N + 1)) $((2 * N))
} >burst.script
cat >run.sh <<EOS
flux module load --name=resource $build/t/module/.libs/resource-fake.so \$PWD/R.json
$build/t/sched-driver -n -t 300 -r ready burst.script >burst.out &
pid=\$!
while ! test -e ready; do sleep 0.05; done
flux module load sched-simple queue-depth=unlimited
wait \$pid
flux module stats sched-simple >stats.json
flux module remove sched-simple
EOS
flux start -s 1 -Sbroker.modules=content,content-sqlite@0,kvs,kvs-watch \
    sh ./run.sh
set -- $(awk '/^elapsed/ {print $2}' burst.out | tail -2)
echo "$N allocs of 1 node (of 1024): $(echo "$1*1000" | bc -l | xargs printf %.1f) ms to the last success, $(echo "$N/$1" | bc -l | xargs printf %.0f) allocs/s"
echo "$N frees: $(echo "$2*1000" | bc -l | xargs printf %.1f) ms"
jq -rs '"sched-simple thread cpu: \(((.[1].utime+.[1].stime)-(.[0].utime+.[0].stime))*1e6/'$N' | floor) us per alloc"' ru0 ru1
jq -r '"commits: \(.commits); first fit: \(."alloc-time"*1e6/.allocs*100|floor/100) us per alloc"' stats.json

#!/bin/bash
# Compare the latency of one job between two builds on a shared machine
# (issue 21): both instances are up at once and their runs alternate
# A B B A ... one job at a time, so that the load of the moment falls on
# both alike (whichever runs first in a pair does better: the other
# instance's tail work, its commits, still runs).  Per build: the wall
# time of `flux run` and, from each job's two eventlogs, the links of
# its chain, as median (minimum) in ms:
#   submit->alloc            ingest, job manager, scheduler (R committed)
#   starting->shell.init     agents, shell start-up, barrier 1
#   shell.init->complete     tasks, barrier 2, output, shells' exits
#   complete->release        the guest namespace copied, final release
#   release->clean           job manager: free, clean
#   submit->clean            the whole job
# Usage: bench/exec-ab.sh BUILD_A BUILD_B   (build directories)
# Env: SIZE (4 brokers), ARGS ("-N4 -n4 hostname"), N (40 jobs each).
set -e
[ $# = 2 ] || { echo "Usage: $0 BUILD_A BUILD_B" >&2; exit 1; }
builds=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
size=${SIZE:-4} args=${ARGS:--N4 -n4 hostname} n=${N:-40}
tmp=$(mktemp -d)
trap 'rm -f "$tmp"/keep.*; wait; rm -rf "$tmp"' EXIT
unset FLUX_URI

for k in 0 1; do
    touch "$tmp/keep.$k"
    "${builds[$k]}/src/cmd/flux" start -s "$size" sh -c \
        "echo \$FLUX_URI >$tmp/uri.$k.tmp && mv $tmp/uri.$k.tmp $tmp/uri.$k &&
         while test -e $tmp/keep.$k; do sleep 0.2; done" &
done
for k in 0 1; do
    while ! test -e "$tmp/uri.$k"; do sleep 0.1; done
done
run () { # k: one job on build k, its wall time in ms
    local t0 t1
    t0=$(date +%s%N)
    FLUX_URI=$(cat "$tmp/uri.$1") "${builds[$1]}/src/cmd/flux" run $args >/dev/null
    t1=$(date +%s%N)
    echo "$1 $(( (t1 - t0) / 1000 ))" >>"$tmp/wall"
}
for k in 0 1; do run $k; run $k; run $k; done # warm up
: >"$tmp/wall"
for i in $(seq "$n"); do
    if [ $((i % 2)) = 1 ]; then run 0; run 1; else run 1; run 0; fi
done

stats () { # median (min) of the numbers on stdin
    sort -g | awk '{a[NR] = $1} END {printf "%.1f (%.1f)", a[int((NR + 1) / 2)], a[1]}'
}
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $n jobs each: $args on $size brokers"
echo "median (min) ms: wall | submit->alloc starting->shell.init shell.init->complete complete->release release->clean submit->clean"
for k in 0 1; do
    F=${builds[$k]}/src/cmd/flux
    export FLUX_URI=$(cat "$tmp/uri.$k")
    for id in $($F jobs -a -n -o "{id}" | head -n "$n"); do
        { $F job eventlog "$id"; $F job eventlog -p exec "$id"; } | awk '
            {t[$2] = $1; if ($2 == "release" && $0 ~ /final=true/) rf = $1}
            END {printf "%.3f %.3f %.3f %.3f %.3f %.3f\n",
                (t["alloc"] - t["submit"]) * 1000,
                (t["shell.init"] - t["starting"]) * 1000,
                (t["complete"] - t["shell.init"]) * 1000,
                (rf - t["complete"]) * 1000, (t["clean"] - rf) * 1000,
                (t["clean"] - t["submit"]) * 1000}'
    done >"$tmp/iv.$k"
    unset FLUX_URI
    printf "%s: %s |" "${builds[$k]}" \
        "$(awk -v k=$k '$1 == k {print $2 / 1000}' "$tmp/wall" | stats)"
    for c in 1 2 3 4 5 6; do
        printf " %s" "$(awk -v c=$c '{print $c}' "$tmp/iv.$k" | stats)"
    done
    echo
done

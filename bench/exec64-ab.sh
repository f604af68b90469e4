#!/bin/bash
# Compare `flux exec -r all true` between two builds on a shared machine
# (issue 21): both SIZE-broker instances are up at once and their runs
# alternate A B B A ..., so that the load of the moment falls on both
# alike.  Per build, over N runs: the wall time (median, minimum), the
# CPU of the flux exec process (median; needs perf, else "-"), the CPU
# of all its instance's brokers per run (sum of every thread's schedstat,
# read before the run and 50 ms after it, so the disconnects that follow
# the client's exit count too) and their voluntary context switches
# (wakeups) per run.  stdin is /dev/null, as in bench/exec-jobs.sh run
# without a terminal.
# Usage: bench/exec64-ab.sh BUILD_A BUILD_B   (build directories; the
# same one twice with OPTS_A/OPTS_B compares settings)
# Env: SIZE (64), N (30), SUB (exec: the flux subcommand, e.g. run),
# ARGS ("-r all true"), OPTS_A, OPTS_B (extra
# flux start options of each instance, e.g. -Stbon.fanout=64).
set -e
[ $# = 2 ] || { echo "Usage: $0 BUILD_A BUILD_B" >&2; exit 1; }
builds=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
size=${SIZE:-64} n=${N:-30} sub=${SUB:-exec} args=${ARGS:--r all true}
opts=("$OPTS_A" "$OPTS_B")
tmp=$(mktemp -d)
trap 'rm -f "$tmp"/keep.*; wait; rm -rf "$tmp"' EXIT
unset FLUX_URI
perf=$(command -v perf || true)

for k in 0 1; do
    touch "$tmp/keep.$k"
    "${builds[$k]}/src/cmd/flux" start -s "$size" ${opts[$k]} sh -c \
        "echo \$PPID >$tmp/pid.$k &&
         echo \$FLUX_URI >$tmp/uri.$k.tmp && mv $tmp/uri.$k.tmp $tmp/uri.$k &&
         while test -e $tmp/keep.$k; do sleep 0.2; done" &
done
for k in 0 1; do
    while ! test -e "$tmp/uri.$k"; do sleep 0.1; done
done
# the brokers: the children of flux start, the parent of rank 0
for k in 0 1; do
    start=$(ps -o ppid= -p "$(cat "$tmp/pid.$k")")
    brokers[$k]=$(ps -o pid= --ppid $start)
done
usage () { # k: "cpu_ns wakeups" of instance k's brokers
    local p t a b c v s=0 w=0
    for p in ${brokers[$1]}; do
        for t in /proc/$p/task/*; do
            read a b c <"$t/schedstat" 2>/dev/null || continue
            v=$(awk '/^voluntary_ctxt/ {print $2}' "$t/status" 2>/dev/null)
            s=$((s + a)) w=$((w + ${v:-0}))
        done
    done
    echo "$s $w"
}
run () { # k
    local t0 t1 c0 w0 c1 w1 cpu=-
    read c0 w0 < <(usage $1)
    t0=$(date +%s%N)
    if [ -n "$perf" ]; then
        FLUX_URI=$(cat "$tmp/uri.$1") $perf stat -x, -e task-clock \
            -o "$tmp/perf" "${builds[$1]}/src/cmd/flux" $sub $args \
            </dev/null >/dev/null
    else
        FLUX_URI=$(cat "$tmp/uri.$1") "${builds[$1]}/src/cmd/flux" $sub $args \
            </dev/null >/dev/null
    fi
    t1=$(date +%s%N)
    [ -n "$perf" ] && cpu=$(awk -F, '/task-clock/ {print $1}' "$tmp/perf")
    sleep 0.05
    read c1 w1 < <(usage $1)
    echo "$1 $(( (t1 - t0) / 1000 )) $cpu $(( (c1 - c0) / 1000 )) $((w1 - w0))" \
        >>"$tmp/res"
}
for k in 0 1; do run $k; run $k; done # warm up
: >"$tmp/res"
for i in $(seq "$n"); do
    if [ $((i % 2)) = 1 ]; then run 0; run 1; else run 1; run 0; fi
done

med () { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
min () { sort -g | head -1; }
echo "load $(cut -d' ' -f1-3 /proc/loadavg); $n runs each of flux $sub $args on $size brokers"
echo "build: wall ms median (min) | flux $sub CPU ms | brokers CPU ms per run median (min) | broker wakeups per run"
for k in 0 1; do
    col () { awk -v k=$k -v c=$1 '$1 == k {print $c}' "$tmp/res"; }
    printf "%s %s: %.1f (%.1f) | %s | %.1f (%.1f) | %d\n" \
        "${builds[$k]}" "${opts[$k]}" \
        "$(col 2 | med | awk '{print $1 / 1000}')" \
        "$(col 2 | min | awk '{print $1 / 1000}')" \
        "$(col 3 | med)" \
        "$(col 4 | med | awk '{print $1 / 1000}')" \
        "$(col 4 | min | awk '{print $1 / 1000}')" \
        "$(col 5 | med)"
done

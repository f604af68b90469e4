#!/bin/bash
# What `flux exec -r all true` and `flux run -N64 true` cost on 64
# brokers of this machine (issue 21), in CPU time, which the load of a
# shared machine blurs less than wall clock.  Run from a build directory
# (or give it as $1).
#   - the floor, same run: bench/floors spawn (wall per fork+exec+wait of
#     /bin/true) and the CPU one launch takes (getrusage of floors and
#     its children over its run)
#   - per operation, REPS (5) times: wall; the CPU of everything the
#     instance runs (brokers, their children, the client) from a
#     cpuacct cgroup when run as root with cgroup v1's cpuacct mounted
#     (else: the brokers' threads only, from schedstat); the client's
#     own CPU (perf stat task-clock, with its children); and the brokers'
#     CPU by thread name (broker thread, modgroup, each other module),
#     summed over ranks, their sum, and (with the cgroup) what the brokers
#     ran: all CPU less the brokers' threads, the client and perf stat's
#     own (measured first): the shells and their tasks, or flux exec's
#     processes
# Env: REPS (5), SIZE (64), START_OPTS (extra flux start options),
# OPS ("exec run": which operations; also idle; timeline: the events of
# a -N$SIZE job, ms after its submission; and shell=PATH: run with
# that flux-shell, e.g. OPS="run shell=/tmp/old-shell run shell=...").
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export REPS=${REPS:-5} SIZE=${SIZE:-64} OPS=${OPS:-exec run}

read -r fms fcpu < <(python3 - "$build/bench/floors" <<'EOF'
import subprocess, sys, resource, time
t0 = time.monotonic()
out = subprocess.run([sys.argv[1], "spawn"], capture_output=True, text=True).stdout
t1 = time.monotonic()
ms = float(out.split()[1])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
n = (t1 - t0) * 1000 / ms  # launches (floors runs about 1 s)
print(ms, (r.ru_utime + r.ru_stime) * 1000 / n)
EOF
)
printf "floor: fork+exec+wait /bin/true %.3f ms wall, %.3f ms CPU per launch; load %s\n" \
    "$fms" "$fcpu" "$(cut -d' ' -f1-3 /proc/loadavg)"
cores=$(nproc)

cg=/sys/fs/cgroup/cpuacct/exec64-$$
if [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/cpuacct ] && mkdir "$cg" 2>/dev/null; then
    # this shell goes in (so do flux start, every broker and all they
    # run), and back to the root at the end so the group can go
    trap 'echo $$ > /sys/fs/cgroup/cpuacct/cgroup.procs; rmdir "$cg" || true' EXIT
    echo $$ > "$cg/cgroup.procs"
    export EXEC64_CG=$cg
fi

flux start -s "$SIZE" $START_OPTS bash -c '
set -e
r0=$(flux getattr broker.pid)
starter=$(awk "{print \$4}" /proc/$r0/stat)
pids=$(cat /proc/$starter/task/*/children)
threads () { # name ns, summed by thread name over every broker
    python3 -c "
import os, sys
s = {}
for p in sys.argv[1:]:
    for t in os.listdir(f\"/proc/{p}/task\"):
        try:
            n = open(f\"/proc/{p}/task/{t}/comm\").read().strip()
            v = int(open(f\"/proc/{p}/task/{t}/schedstat\").read().split()[0])
        except OSError:
            continue
        s[n] = s.get(n, 0) + v
for k in sorted(s):
    print(k, s[k])
" $pids
}
total () {
    if [ -n "$EXEC64_CG" ]; then cat $EXEC64_CG/cpuacct.usage
    else threads | awk "{s += \$2} END {print s}"; fi
}
ms () { date +%s.%N; }
# what perf stat itself costs (ms), the median of 3, to leave out of
# what the brokers ran (only with the cgroup, where it is counted)
perf_ms=0
if [ -n "$EXEC64_CG" ]; then
    perf_ms=$(for i in 1 2 3; do
        c0=$(total)
        perf stat -x, -e task-clock -o /tmp/exec64.p.$$ true
        c1=$(total)
        echo "($c1 - $c0) / 1000000 - $(awk -F, "/task-clock/ {print \$1}" /tmp/exec64.p.$$)" | bc -l
    done | sort -g | sed -n 2p)
    printf "perf stat itself: %.1f ms of CPU (left out of what the brokers ran)\n" "$perf_ms"
fi
one () { # label command...
    local lab=$1; shift
    "$@" >/dev/null # warm up
    for i in $(seq $REPS); do
        threads >/tmp/exec64.a.$$
        c0=$(total); t0=$(ms)
        perf stat -x, -e task-clock -o /tmp/exec64.p.$$ "$@" >/dev/null
        t1=$(ms); c1=$(total)
        threads >/tmp/exec64.b.$$
        cl=$(awk -F, "/task-clock/ {print \$1}" /tmp/exec64.p.$$)
        printf "%s: wall %.1f ms, all CPU %.1f ms, client %.1f ms; " "$lab" \
            "$(echo "($t1 - $t0) * 1000" | bc -l)" \
            "$(echo "($c1 - $c0) / 1000000" | bc -l)" "$cl"
        join /tmp/exec64.a.$$ /tmp/exec64.b.$$ \
            | awk -v all="$(echo "($c1 - $c0) / 1000000" | bc -l)" \
                -v client="$cl" -v cg="$EXEC64_CG" -v perf="$perf_ms" \
                "{d = (\$3 - \$2) / 1e6; b += d; if (d >= 0.5) printf \"%s %.1f \", \$1, d}
                 END {printf \"; brokers %.1f ms\", b;
                      if (cg != \"\") printf \", what they ran %.1f ms\", all - b - client - perf;
                      print \"\"}"
    done
    rm -f /tmp/exec64.[abp].$$
}
for op in $OPS; do
    case $op in
    exec) one "exec -r all true" flux exec -r all true ;;
    run) one "run -N$SIZE true" flux run -N$SIZE true ;;
    idle) one "idle 0.2 s" sleep 0.2 ;;
    timeline) # the events of one job (both eventlogs), ms after submit
        flux run -N$SIZE true # warm up
        for i in $(seq $REPS); do
            t0=$(ms)
            id=$(flux submit -N$SIZE true)
            flux job attach $id >/dev/null 2>&1 || true
            t1=$(ms)
            { flux job eventlog $id; flux job eventlog -p exec $id; } \
                | awk -v t0=$t0 "{printf \"%.1f %s\n\", (\$1 - t0) * 1000, \$2}" \
                | sort -n | tr "\n" " "
            echo "| attach returned $(echo "($t1 - $t0) * 1000" | bc -l | cut -c1-6)"
        done ;;
    shell=*) # the same job with another flux-shell, to compare (A/B)
        one "run -N$SIZE true (${op#shell=})" flux run -N$SIZE \
            --setattr=system.exec.job_shell=${op#shell=} true ;;
    esac
done
'
printf "floors: exec %d launches x %.3f ms / %d cores = %.1f ms wall, %.1f ms CPU; run %d: %.1f ms wall, %.1f ms CPU\n" \
    "$SIZE" "$fms" "$cores" "$(echo "$SIZE * $fms / $cores" | bc -l)" \
    "$(echo "$SIZE * $fcpu" | bc -l)" $((2 * SIZE)) \
    "$(echo "2 * $SIZE * $fms / $cores" | bc -l)" \
    "$(echo "2 * $SIZE * $fcpu" | bc -l)"

#!/bin/bash
# flux jobs and job-list (issue 5): for each N in $NS (default "1000
# 10000"), a 1-broker instance gets N inactive jobs from the stand-in
# journal (t/module/journal-fake.so synth=N), then job-list is loaded and
# `flux jobs -a -c 0` (the default format) is timed, R times (default 20):
# median and best wall time, also for -o {id} and for the bare
# job-list.list RPC (t/rpc-cred) with the default format's attributes;
# `flux getattr rank` (start a command, one RPC) gives the floor.  CPU
# is the command's user+sys (from bash's times, includes date(1)), and
# with perf(1) its task-clock.
# The broker's RSS is printed before job-list is loaded and after it has
# taken in the N jobs (the difference is job-list's).  Run from a build
# directory's bench/ or give the build directory as $1.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
NS=${NS:-"1000 10000"}
R=${R:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
ATTRS='["userid","state","result","name","ntasks","nnodes","t_run","t_cleanup","duration","dependencies","annotations","nodelist","priority","urgency","queue"]'

cat >run.sh <<'EOS'
#!/bin/bash
set -e
build=$1 n=$2 r=$3 attrs=$4
rss () { awk '/VmRSS/ { print $2 }' /proc/$(flux getattr broker.pid)/status; }
# time CMD... r times: median and best wall time, and the mean CPU time
# (user+sys) of the command itself (bash's times), in ms
# the children's user+sys time so far: times must run in this shell
snap () { times >times.out; }
snap_ms () {
    tail -1 times.out | tr 'ms' '  ' \
        | awk '{ printf "%d", ($1 * 60 + $2 + $3 * 60 + $4) * 1000 }'
}
timeit () {
    local ts=() c0 c1
    snap
    c0=$(snap_ms)
    for i in $(seq $r); do
        local t0=$(date +%s%N)
        "$@" >/dev/null
        ts+=($(( ($(date +%s%N) - t0) / 1000 )))
    done
    snap
    c1=$(snap_ms)
    # the command's own CPU time, precisely, when perf is there
    local tc=""
    if command -v perf >/dev/null 2>&1; then
        tc=$(perf stat -r $r -e task-clock "$@" 2>&1 >/dev/null \
            | awk '/task-clock/ { printf ", task-clock %.1f ms", $1 }')
    fi
    printf '%s\n' "${ts[@]}" | sort -n \
        | awk -v cpu=$(( (c1 - c0) / r )) -v tc="$tc" '{ a[NR] = $1 } END {
            printf "median %.1f ms, best %.1f ms (cpu %d ms%s)\n",
                a[int((NR + 1) / 2)] / 1000, a[1] / 1000, cpu, tc }'
}
flux module load --name=job-manager $build/t/module/.libs/journal-fake.so synth=$n
before=$(rss)
flux module load job-list
test $(flux jobs -a -c 0 -n -o '{id}' | wc -l) = $n
after=$(rss)
echo "N=$n: broker RSS ${before} KiB before job-list, ${after} KiB with it" \
    "($(( (after - before) / 1024 )) MiB, $(( (after - before) * 1024 / n )) bytes/job)"
echo "  flux getattr rank (a floor): $(timeit flux getattr rank)"
echo "  flux jobs -a -c 0:           $(timeit flux jobs -a -c 0)"
echo "  flux jobs -a -c 0 -o {id}:   $(timeit flux jobs -a -c 0 -o '{id}')"
echo "  job-list.list RPC:           $(timeit $build/t/rpc-cred job-list.list \
    "{\"max_entries\":0,\"attrs\":$attrs,\"constraint\":{\"states\":[\"inactive\"]}}")"
EOS
chmod +x run.sh
for n in $NS; do
    flux start -Sbroker.modules=content,content-sqlite@0,kvs,kvs-watch \
        ./run.sh "$build" $n $R "$ATTRS"
done

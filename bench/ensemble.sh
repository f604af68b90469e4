#!/bin/bash
# Ensembles through a sub-instance (issue 24, RFC 8).  Run from a build
# directory (or give it as $1).  In a top-level instance of 2 brokers:
#   - NJOBS (10000) short real jobs (/bin/true) submitted to the top-level
#     instance: jobs/s
#   - the same NJOBS submitted by a `flux batch -N2 -nCORES` script to its
#     own 2-node sub-instance holding all the cores: jobs/s inside it (from the first submit to the
#     last job's end, as the script measures it), and the whole batch job
#     from submit to clean
#   - `flux alloc -N2 true`: the time to its return, median of LAT (5)
# NJOBS=1000 for a quick run.  SIM=1 uses simulated jobs (no shell).
set -e
build=$(cd "${1:-$(dirname "$0")/..}" && pwd)
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export NJOBS=${NJOBS:-10000} LAT=${LAT:-5}
if [ "${SIM:-0}" = 1 ]; then
    export JOBARGS="--setattr=system.exec.test.run_duration=0s"
    kind=simulated
else
    export JOBARGS=""
    kind=real
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

cat >ensemble.sh <<'SCRIPT'
#!/bin/bash
set -e
ms () { date +%s.%N; }
t0=$(ms)
flux submit --cc=1-$NJOBS --quiet $JOBARGS /bin/true
flux queue drain
t1=$(ms)
echo "jobs $(echo "$NJOBS / ($t1 - $t0)" | bc -l)"
echo "notcompleted $(flux jobs -a -n -o "{result}" | grep -vc COMPLETED || true)"
SCRIPT
chmod +x ensemble.sh

out=$(flux start -s 2 bash -c '
    set -e
    ms () { date +%s.%N; }
    # the same NJOBS through the top-level instance
    t0=$(ms)
    flux submit --cc=1-$NJOBS --quiet $JOBARGS /bin/true
    flux queue drain
    t1=$(ms)
    echo "top $(echo "$NJOBS / ($t1 - $t0)" | bc -l)"
    echo "topbad $(flux jobs -a -n -o "{result}" | grep -vc COMPLETED || true)"
    # through a 2-node sub-instance holding every core of the top level
    ncores=$(flux resource list -n -s free -o "{ncores}")
    t0=$(ms)
    id=$(flux batch -N2 -n$ncores ensemble.sh)
    flux job wait-event -t 3600 $id clean >/dev/null
    t1=$(ms)
    echo "batch $(echo "$t1 - $t0" | bc -l)"
    echo "batchstatus $(flux job eventlog $id | sed -n "s/.* finish status=\([0-9]*\).*/\1/p")"
    cat flux-*.out
    for i in $(seq $LAT); do
        t0=$(ms); flux alloc -N2 true; t1=$(ms)
        echo "alloc $(echo "($t1 - $t0) * 1000" | bc -l)"
    done')
get () { awk -v k="$1" '$1 == k {print $2}'; }
median () { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
top=$(echo "$out" | get top)
sub=$(echo "$out" | get jobs)
printf "%d %s jobs, top-level instance (2 brokers): %.1f jobs/s (%s not COMPLETED)\n" \
    "$NJOBS" "$kind" "$top" "$(echo "$out" | get topbad)"
printf "%d %s jobs, 2-node sub-instance (flux batch -N2): %.1f jobs/s (%.0f%% of the top level; %s not COMPLETED)\n" \
    "$NJOBS" "$kind" "$sub" "$(echo "100 * $sub / $top" | bc -l)" \
    "$(echo "$out" | get notcompleted)"
printf "the batch job, submit to clean: %.2f s (finish status %s)\n" \
    "$(echo "$out" | get batch)" "$(echo "$out" | get batchstatus)"
printf "flux alloc -N2 true: %.1f ms (median of %d)\n" \
    "$(echo "$out" | get alloc | median)" "$LAT"

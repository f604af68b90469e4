#!/bin/bash
# The floor a job shell sets (issue 21): what one flux-shell costs beside
# a bare /bin/true launch, and the floor of `flux run -N64 true` that
# counts the shell's real cost beside the given one (128 launches of
# /bin/true).  Run from a build directory (or give it as $1).
#   - bench/floors spawn: wall per fork+exec+wait of /bin/true
#   - perf stat -r N (N=200): CPU (task-clock) and wall of /bin/true, and
#     of flux-shell's start-up alone: exec of the shell binary, link,
#     connect, its first request (shell-info, answered ENOENT: no such
#     job) and its exit, in a 1-broker instance
#   - NJOBS (100) real 1-node `true` jobs on 1 broker: the CPU of the
#     broker's reaped children per job (the shell and its task, from
#     /proc/PID/stat cutime+cstime) and their minor page faults, beside
#     bench/floors fault: what a fault costs here and how many one
#     /bin/true launch takes
# Env: N (200), NJOBS (100), SIZE (64).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
export JOB_CPU="$(cd "$(dirname "$0")" && pwd)/job-cpu.sh"
unset FLUX_URI
export N=${N:-200} NJOBS=${NJOBS:-100} SHELL_BIN="$build/src/shell/flux-shell"
size=${SIZE:-64}
cores=$(nproc)

floors=$("$build/bench/floors" spawn fault)
floor () { echo "$floors" | awk -v k="$1:" '$1 == k {print $2}'; }
spawn=$(floor spawn_true)
fault_cow=$(floor fault_cow)
spawn_faults=$(floor spawn_true_faults)
# "CPU-ms wall-ms" of a command run N times
pstat () {
    perf stat -r "$N" -x, -e task-clock "$@" 2>&1 >/dev/null \
        | awk -F, '/task-clock/ {print $1}'
}
wall () {
    local t0 t1
    t0=$(date +%s.%N)
    for i in $(seq "$N"); do "$@" >/dev/null 2>&1 || true; done
    t1=$(date +%s.%N)
    echo "($t1 - $t0) * 1000 / $N" | bc -l
}
true_cpu=$(pstat /bin/true)
true_wall=$(wall /bin/true)

out=$(flux start -s 1 bash -c '
set -e
export FLUX_KVS_NAMESPACE=job-12345
pstat () {
    perf stat -r "$N" -x, -e task-clock "$@" 2>&1 >/dev/null \
        | awk -F, "/task-clock/ {print \$1}"
}
echo "shell_cpu $(pstat $SHELL_BIN 12345)"
t0=$(date +%s.%N)
for i in $(seq $N); do $SHELL_BIN 12345 >/dev/null 2>&1 || true; done
t1=$(date +%s.%N)
echo "shell_wall $(echo "($t1 - $t0) * 1000 / $N" | bc -l)"
unset FLUX_KVS_NAMESPACE
pid=$(flux getattr broker.pid)
tck=$(getconf CLK_TCK)
. "$JOB_CPU"
flux submit --cc=1-10 --quiet true; flux queue drain
c0=$(job_cpu_ticks $pid)
f0=$(job_minflt $pid)
flux submit --cc=1-$NJOBS --quiet true; flux queue drain
c1=$(job_cpu_ticks $pid)
f1=$(job_minflt $pid)
echo "job_children $(echo "($c1 - $c0) * 1000 / $tck / $NJOBS" | bc -l)"
echo "job_minflt $(echo "($f1 - $f0) / $NJOBS" | bc -l)"
')
get () { echo "$out" | awk -v k="$1" '$1 == k {print $2}'; }
shell_cpu=$(get shell_cpu)
shell_wall=$(get shell_wall)
job=$(get job_children)
job_faults=$(get job_minflt)

printf "load %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "/bin/true: spawn floor %.3f ms wall (bench/floors); %.3f ms CPU, %.3f ms wall (run by bash, %d times)\n" \
    "$spawn" "$true_cpu" "$true_wall" "$N"
printf "flux-shell start-up to its first answer: %.3f ms CPU (%.1fx /bin/true), %.3f ms wall\n" \
    "$shell_cpu" "$(echo "$shell_cpu / $true_cpu" | bc -l)" "$shell_wall"
printf "a 1-node true job's shell + task, 1 broker: %.3f ms CPU (%.1fx a /bin/true launch)\n" \
    "$job" "$(echo "$job / $true_cpu" | bc -l)"
printf "page faults (bench/floors fault): %.2f us each (copy on write); a /bin/true launch takes %.1f (%.3f ms at that price); a 1-node true job's shell + task %.1f (%.3f ms)\n" \
    "$fault_cow" "$spawn_faults" "$(echo "$spawn_faults * $fault_cow / 1000" | bc -l)" \
    "$job_faults" "$(echo "$job_faults * $fault_cow / 1000" | bc -l)"
printf "flux run -N%d floors: given %d x %.3f ms / %d cores = %.1f ms; counting the shell's start-up alone: %d x (%.3f + %.3f) ms CPU / %d = %.1f ms; counting a real shell + task: %d x %.3f / %d = %.1f ms\n" \
    "$size" $((2 * size)) "$spawn" "$cores" "$(echo "2 * $size * $spawn / $cores" | bc -l)" \
    "$size" "$shell_cpu" "$true_cpu" "$cores" \
    "$(echo "$size * ($shell_cpu + $true_cpu) / $cores" | bc -l)" \
    "$size" "$job" "$cores" "$(echo "$size * $job / $cores" | bc -l)"

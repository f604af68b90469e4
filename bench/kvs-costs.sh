#!/bin/bash
# What one durable KVS commit costs the broker, in counts that do not
# depend on how fast the machine happens to be at the moment: thread
# wakeups (context switches, epoll_wait returns), futex calls and eventfd
# writes per commit (perf stat on the broker process), and CPU time per
# commit for each broker thread (/proc/PID/task/*/stat).  Timings on a
# shared 2-core machine vary by +-30% from one minute to the next; these
# counts do not, so they tell whether a change to the message path helped.
#
# Usage: bench/kvs-costs.sh [BUILD_DIR] [NCLIENTS] [COUNT]
#   BUILD_DIR  a build directory (default: the one this script is in)
#   NCLIENTS   concurrent clients of bench/kvs-commit (default 1)
#   COUNT      commits per client (default 3000)
# Needs perf (linux-perf) for the counts; without it, prints the CPU only.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
nclients=${2:-1}
count=${3:-3000}
total=$((nclients * count))
flux=$build/src/cmd/flux
commit=$build/bench/kvs-commit
[ -x "$flux" ] && [ -x "$commit" ] || {
    echo "kvs-costs: no flux or bench/kvs-commit in $build" >&2
    exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/state"
export PATH="$build/src/cmd:$PATH"
unset FLUX_URI
export KC_WORK=$work KC_COMMIT=$commit KC_N=$nclients KC_C=$count
perf=$(command -v perf || true)
export KC_PERF=$perf

"$flux" start -Sstatedir="$work/state" bash -c '
    set -e
    pid=$(flux getattr broker.pid)
    snap () {
        for t in /proc/$pid/task/*; do
            echo "$(tr " " _ <$t/comm) $(awk "{print \$14+\$15}" $t/stat)"
        done | sort >"$1"
    }
    snap $KC_WORK/cpu0
    if [ -n "$KC_PERF" ]; then
        $KC_PERF stat -x, -o $KC_WORK/perf.csv -p $pid \
            -e context-switches,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_futex,syscalls:sys_enter_write \
            -- $KC_COMMIT $KC_N $KC_C kc
    else
        $KC_COMMIT $KC_N $KC_C kc
    fi
    snap $KC_WORK/cpu1
'
echo "per commit ($nclients client(s) x $count, durable):"
if [ -s "$work/perf.csv" ]; then
    awk -F, -v n=$total '$1 ~ /^[0-9]/ {
        name = $3; sub(/^syscalls:sys_enter_/, "", name)
        printf "  %-18s %8.2f\n", name, $1 / n }' "$work/perf.csv"
fi
hz=$(getconf CLK_TCK)
join "$work/cpu0" "$work/cpu1" | awk -v n=$total -v hz=$hz '{
    us = ($3 - $2) * 1e6 / hz / n
    if (us > 0) printf "  cpu %-14s %8.1f us\n", $1, us }'

#!/bin/bash
# Bootstrap of a virtual cluster (issue 23): NODES (8) hosts in network
# namespaces (t/netns-cluster.sh), one broker per host from a config file,
# no launcher.  Run as root from a build directory (or give it as $1).
# Each of RUNS (5) rounds starts all the brokers at once and measures:
#   online  from the start to every broker in broker.online (rank 0's
#           initial program starts after quorum: it records the time)
#   total   the whole `flux start`-style run: start, `flux run -NNODES
#           true` as the initial program, shutdown, every broker gone
# and prints the median, min and max of each.  The topology is
# $NETNS_TOPO (default kary:2, depth 3 for 8 hosts).
set -e
build=$(cd "${1:-$(dirname "$0")/..}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
NODES=${NODES:-8} RUNS=${RUNS:-5}
CLUSTER="$src/t/netns-cluster.sh"
NET="$src/t/netns-net.sh"
"$NET" check || exit 1
export NETNS_SUBNET=${NETNS_SUBNET:-10.254.8} NETNS_PORT=${NETNS_PORT:-8078}
export NETNS_TOPO=${NETNS_TOPO:-kary:2}
PREFIX=flux-bench-boot-$$
work=$(mktemp -d)
trap '"$CLUSTER" down $PREFIX >/dev/null 2>&1; rm -rf "$work"' EXIT
"$CLUSTER" up $PREFIX "$NODES" "$work/c" >/dev/null
ms () { date +%s.%N; }
# median min max of the numbers on stdin
stats () {
    sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.3f s  min %.3f s  max %.3f s\n", m, v[1], v[NR] }'
}
gone () {
    for i in $(seq 200); do
        test -z "$("$NET" pids $PREFIX)" && return 0
        sleep 0.05
    done
    echo "brokers left running" >&2
    return 1
}
cat >"$work/online.sh" <<'EOF'
date +%s.%N >"$WORK/online.t"
flux getattr size >"$WORK/size"
EOF
cat >"$work/job.sh" <<'EOF'
flux run -N$NODES true
EOF
export WORK=$work NODES
for r in $(seq "$RUNS"); do
    rm -rf "$work"/c/run*
    t0=$(ms)
    timeout 120 "$CLUSTER" start $PREFIX "$NODES" "$work/c" \
        sh "$work/online.sh" >/dev/null
    gone
    test "$(cat "$work/size")" = "$NODES"
    awk -v a="$t0" -v b="$(cat "$work/online.t")" \
        'BEGIN { print b - a }' >>"$work/online"
    rm -rf "$work"/c/run*
    t0=$(ms)
    timeout 120 "$CLUSTER" start $PREFIX "$NODES" "$work/c" \
        sh "$work/job.sh" >/dev/null
    gone
    awk -v a="$t0" -v b="$(ms)" 'BEGIN { print b - a }' >>"$work/total"
done
echo "$NODES netns hosts, $NETNS_TOPO, $RUNS runs (load $(cut -d' ' -f1 /proc/loadavg))"
echo "start to all online:        $(stats <"$work/online")"
echo "start, flux run -N$NODES true, exit: $(stats <"$work/total")"

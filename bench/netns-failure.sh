#!/bin/bash
# Time to notice a lost host (issue 23), in a virtual cluster of 4 hosts
# (network namespaces, t/netns-cluster.sh, one broker per host from a
# config file, kary:2: host 3 is a leaf under host 1).  Run as root from a
# build directory (or give it as $1).  RUNS (5) rounds of each:
#   kill   a 4-host job runs; host 3's broker gets kill -9: time to the
#          job's node-failure exception (its timestamp in the eventlog)
#   cut    a 4-host job runs; host 3's link goes down (ip link): time to
#          the exception; then the link comes back, host 3's broker (gone
#          with its parent) is restarted for the next round
# beside the configured timeouts: tbon.heartbeat HB (0.5), tbon.torpid_max
# TORPID (1.5), tbon.lost_max LOST (3).
set -e
build=$(cd "${1:-$(dirname "$0")/..}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$build/src/cmd:$build/src/broker:$PATH"
RPC="$build/t/rpc"
RUNS=${RUNS:-5} HB=${HB:-0.5} TORPID=${TORPID:-1.5} LOST=${LOST:-3}
CLUSTER="$src/t/netns-cluster.sh"
NET="$src/t/netns-net.sh"
"$NET" check || exit 1
export NETNS_SUBNET=${NETNS_SUBNET:-10.254.9} NETNS_PORT=${NETNS_PORT:-8079}
export NETNS_TOPO=kary:2
export NETNS_BROKER_OPTS="-Stbon.heartbeat=$HB -Stbon.torpid_max=$TORPID -Stbon.lost_max=$LOST"
PREFIX=flux-bench-fail-$$
work=$(mktemp -d)
trap '"$CLUSTER" down $PREFIX >/dev/null 2>&1; rm -rf "$work"' EXIT
"$CLUSTER" up $PREFIX 4 "$work/c" >/dev/null
export FLUX_URI=local://$work/c/run0/local-0
ms () { date +%s.%N; }
stats () {
    sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.3f s  min %.3f s  max %.3f s\n", m, v[1], v[NR] }'
}
start_broker () {
    i=$1
    shift
    # in a subshell: not a job of ours, whose kill -9 bash would report
    ("$CLUSTER" broker $PREFIX "$i" "$work/c" "$@" \
        >>"$work/c/broker$i.log" 2>&1 </dev/null &)
}
# wait_for SECONDS CMD...
wait_for () {
    local n=$(awk -v s="$1" 'BEGIN { print int(s * 10) }')
    shift
    for i in $(seq "$n"); do
        "$@" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "timed out: $*" >&2
    return 1
}
all_online () {
    test "$(timeout 10 $RPC groups.get '{"name":"broker.online"}')" = \
        '{"members":"0-3"}'
}
host3_gone () {
    test -z "$(ip netns pids $PREFIX-n3)"
}
# one_round kill|cut: seconds from the fault to the node-failure exception
one_round () {
    local id t0 t1 pid
    id=$(flux submit -N4 -n4 sleep 300)
    flux job wait-event -t 60 "$id" start >/dev/null
    if test "$1" = kill; then
        pid=$(timeout 10 $RPC -r 3 attr.get '{"name":"broker.pid"}' |
            sed -e 's/.*"value":"\([0-9]*\)".*/\1/')
        t0=$(ms)
        kill -9 "$pid"
    else
        t0=$(ms)
        "$NET" cut $PREFIX 3
    fi
    t1=$(flux job wait-event -t 60 "$id" exception | cut -d' ' -f1)
    flux job wait-event -t 60 "$id" clean >/dev/null
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
    test "$1" = kill || "$NET" mend $PREFIX 3
    wait_for 30 host3_gone
    start_broker 3
    wait_for 60 all_online
}
for i in 1 2 3; do start_broker $i; done
start_broker 0 -Sbroker.rc2_none=1
wait_for 60 all_online
for r in $(seq "$RUNS"); do
    one_round kill >>"$work/kill"
    one_round cut >>"$work/cut"
done
echo "4 netns hosts; heartbeat ${HB} s, torpid_max ${TORPID} s," \
    "lost_max ${LOST} s; $RUNS runs (load $(cut -d' ' -f1 /proc/loadavg))"
echo "kill -9 of a leaf broker to node-failure: $(stats <"$work/kill")"
echo "cut link of a leaf host to node-failure:  $(stats <"$work/cut")"
timeout 60 flux shutdown --quiet

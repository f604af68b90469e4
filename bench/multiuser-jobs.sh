#!/bin/bash
# Real jobs/s of a guest through the IMP beside the instance owner's
# (issue 22).  Root only: it makes two users (the owner and a guest), a private munged with a fresh key,
# flux-imp setuid in a temporary directory with a root-owned config, and
# a 1-broker instance run by the unprivileged owner with exec.imp, as
# t/t2620-multiuser.t does.  Then, in that instance:
#   - NJOBS (200) /bin/true jobs submitted by the owner (flux submit --cc,
#     J signed "none", shell spawned directly): jobs/s to drain
#   - NJOBS by the guest (J signed with munge and verified by job-ingest,
#     each shell started as flux-imp exec SHELL ID, which runs
#     flux imp_exec_helper to read J and verifies it again): jobs/s
#   - flux run /bin/true latency, median of LAT (10), owner and guest
# Run from a build directory (or give it as $1).  Env: NJOBS, LAT.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ "$(id -u)" = 0 ] || { echo "multiuser-jobs.sh: needs root" >&2; exit 1; }
NJOBS=${NJOBS:-200}
LAT=${LAT:-10}
FLUX=$build/src/cmd/flux
OWNER=fluxb-owner
GUEST=fluxb-guest
TOP=$(mktemp -d /tmp/flux-bench-mu.XXXXXX)
chmod 755 "$TOP"
SAFE_PATH=$build/src/cmd:/usr/sbin:/usr/bin:/sbin:/bin
export FLUX_MUNGE_SOCKET=$TOP/munge/munge.socket
RD=$TOP/owner/rundir
helper=$(cd "$(dirname "$0")/../t" && pwd)/munge-helper.sh

cleanup () {
    touch "$TOP/done" 2>/dev/null || true
    if [ -f "$TOP/start.pid" ]; then
        pid=$(cat "$TOP/start.pid")
        for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    "$helper" stop "$TOP/munge" || true
    for u in $GUEST $OWNER; do pkill -9 -u $u 2>/dev/null || true; userdel $u 2>/dev/null || true; done
    rm -rf "$TOP"
}
trap cleanup EXIT

as () { # USER CMD...
    u=$1; shift
    setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups \
        env FLUX_URI="local://$RD/local-0" HOME=/ PATH="$SAFE_PATH" "$@"
}

for u in $OWNER $GUEST; do id $u >/dev/null 2>&1 || useradd -M -N -d / -s /bin/sh $u; done
"$helper" start "$TOP/munge"
mkdir -m 755 "$TOP/imp" "$TOP/imp/conf.d" "$TOP/conf" "$TOP/owner"
chown $OWNER "$TOP/owner"
cp "$build/src/imp/flux-imp-test" "$TOP/imp/flux-imp"
chown root:root "$TOP/imp/flux-imp"
chmod 4755 "$TOP/imp/flux-imp"
cat >"$TOP/imp/conf.d/imp.json" <<EOT
{"exec": {"allowed-users": ["$OWNER"],
          "allowed-shells": ["$build/src/shell/flux-shell"]},
 "sign": {"max-ttl": 600, "allowed-types": ["munge"],
          "munge": {"socket-path": "$FLUX_MUNGE_SOCKET"}}}
EOT
chmod 644 "$TOP/imp/conf.d/imp.json"
echo "{\"exec\": {\"imp\": \"$TOP/imp/flux-imp\"}}" >"$TOP/conf/exec.json"
chmod 644 "$TOP/conf/exec.json"

(cd "$TOP" && setpriv --reuid=$OWNER --regid="$(id -g $OWNER)" --init-groups \
    env HOME=/ PATH="$SAFE_PATH" FLUX_IMP_CONFIG_PATTERN="$TOP/imp/conf.d/*.json" \
    "$FLUX" start -c "$TOP/conf" -Srundir="$RD" -Saccess.allow-guest-user=true \
    sh -c "while ! test -f $TOP/done; do sleep 0.2; done" >"$TOP/start.out" 2>&1 &
    echo $! >"$TOP/start.pid")
# wait for the state run (every module loaded)
for _ in $(seq 600); do
    as $GUEST "$FLUX" uptime 2>/dev/null | grep -q " run " && break
    sleep 0.1
done

ms () { date +%s.%N; }
median () { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

rate () { # USER: NJOBS /bin/true jobs, jobs/s until the queue is drained
    u=$1
    t0=$(ms)
    (cd / && as "$u" "$FLUX" submit --cc=1-"$NJOBS" --quiet /bin/true)
    as $OWNER "$FLUX" queue drain
    t1=$(ms)
    echo "$NJOBS / ($t1 - $t0)" | bc -l
}
latency () { # USER: median flux run /bin/true in ms
    u=$1
    for _ in $(seq "$LAT"); do
        t0=$(ms); (cd / && as "$u" "$FLUX" run /bin/true); t1=$(ms)
        echo "($t1 - $t0) * 1000" | bc -l
    done | median
}

as $OWNER "$FLUX" run /bin/true; (cd / && as $GUEST "$FLUX" run /bin/true)  # warm up
r_owner=$(rate $OWNER)
r_guest=$(rate $GUEST)
bad=$(as $OWNER "$FLUX" jobs -a -n -o "{result}" | grep -vc COMPLETED || true)
l_owner=$(latency $OWNER)
l_guest=$(latency $GUEST)
printf "owner: %d /bin/true jobs at %.1f jobs/s; flux run %.1f ms (median of %d)\n" \
    "$NJOBS" "$r_owner" "$l_owner" "$LAT"
printf "guest through the IMP: %d jobs at %.1f jobs/s (%.0f%% of the owner's); flux run %.1f ms\n" \
    "$NJOBS" "$r_guest" "$(echo "100 * $r_guest / $r_owner" | bc -l)" "$l_guest"
printf "jobs not COMPLETED: %s\n" "$bad"

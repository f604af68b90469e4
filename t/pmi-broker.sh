#!/bin/sh
# pmi-broker.sh - a stand-in flux-broker for `flux start -s N` tests: it
# does a PMI-1 exchange over PMI_FD, then rank 0 runs the initial program
# (the arguments after "--"), exec'd so that signals reach it.
# FAKE_BROKER_MODE selects misbehavior: kill1early (rank 1 kills itself
# before PMI), kill1 (rank 1 kills itself after PMI), abort1 (rank 1 sends
# cmd=abort), sleep1 (rank 1 ignores SIGTERM and sleeps), sleepall (every
# rank sleeps after PMI).
log=${FAKE_BROKER_LOG:-/dev/null}

pmi() {
    printf '%s\n' "$1" >&3 || exit 1
    read -r reply <&3 || exit 1
    echo "$PMI_RANK: $reply" >>"$log"
}

test "$PMI_FD" = 3 || { echo "PMI_FD=$PMI_FD" >&2; exit 1; }
if test "$FAKE_BROKER_MODE" = kill1early && test "$PMI_RANK" = 1; then
    kill -9 $$
fi
if test "$FAKE_BROKER_MODE" = abort1 && test "$PMI_RANK" = 1; then
    printf 'cmd=abort exitcode=7 error_msg=rank one gives up\n' >&3
    exec sleep 30
fi
pmi "cmd=init pmi_version=1 pmi_subversion=1"
pmi "cmd=get_my_kvsname"
kvs=$(echo "$reply" | sed -n 's/.*kvsname=\([^ ]*\).*/\1/p')
pmi "cmd=put kvsname=$kvs key=card$PMI_RANK value=rank$PMI_RANK"
pmi "cmd=barrier_in"
next=$(( (PMI_RANK + 1) % PMI_SIZE ))
pmi "cmd=get kvsname=$kvs key=card$next"
case "$reply" in
    *"value=rank$next"*) ;;
    *) echo "rank $PMI_RANK: bad get reply: $reply" >&2; exit 1 ;;
esac
pmi "cmd=finalize"
echo "$PMI_RANK: args: $*" >>"$log"

case "$FAKE_BROKER_MODE" in
    kill1) test "$PMI_RANK" = 1 && kill -9 $$ ;;
    sleep1) test "$PMI_RANK" = 1 && { trap '' TERM; exec sleep 30; } ;;
    sleepall) exec sleep 30 ;;
esac
if test "$PMI_RANK" = 0; then
    while test $# -gt 0 && test "$1" != "--"; do shift; done
    test $# -gt 0 && shift
    test $# -gt 0 && exec "$@"
    exit 0
fi
sleep 0.2
exit 0

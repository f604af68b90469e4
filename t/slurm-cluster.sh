#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors
#
# slurm-cluster.sh - a one-node Slurm (munged, slurmctld, slurmd from
# Debian's slurm-wlm) kept entirely in a directory, for launcher tests.
#
#   slurm-cluster.sh check        exit 0 if it can run here (root, the
#                                 daemons installed), else print why, exit 1
#   slurm-cluster.sh up DIR       write DIR/slurm.conf and a munge key,
#                                 start the three daemons, wait (60 s at
#                                 most) for the node to be idle.  Then use
#                                 SLURM_CONF=DIR/slurm.conf srun ...
#   slurm-cluster.sh down DIR     stop the daemons (SIGTERM, then SIGKILL),
#                                 kill any step left, remove DIR
#
# No file outside DIR is written: SLURM_CONF points the commands at the
# configuration, munged gets its own socket.  The ports are chosen from
# the pid so that two runs do not collide.  The node has as many CPUs as
# this machine: run more tasks than that with srun -O (overcommit).
set -u

die () {
    echo "slurm-cluster: $*" >&2
    exit 1
}

check () {
    test "$(id -u)" = 0 || die "not root (slurmd must run as root)"
    for p in munged mungekey slurmctld slurmd srun sinfo; do
        command -v $p >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v $p \
            >/dev/null 2>&1 || die "$p not found (apt-get install slurm-wlm munge)"
    done
    test -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmi2.so ||
        test -n "$(ls /usr/lib/*/slurm-wlm/mpi_pmi2.so 2>/dev/null)" ||
        die "Slurm's mpi/pmi2 plugin is missing"
}

up () {
    d=$1
    PATH=$PATH:/usr/sbin
    mkdir -p "$d/spool" "$d/state" "$d/munge" || die "cannot make $d"
    # munged wants its socket directory (and those above) searchable by all
    chmod 755 "$d" "$d/munge"
    host=$(hostname -s)
    base=$((20000 + ($$ % 2000) * 2))
    mungekey --create --keyfile "$d/munge/munge.key" >/dev/null 2>&1 ||
        die "mungekey failed"
    munged -F --key-file="$d/munge/munge.key" \
        --socket="$d/munge/munge.sock" --pid-file="$d/munge/munged.pid" \
        --log-file="$d/munge/munged.log" --seed-file="$d/munge/seed" \
        >/dev/null 2>&1 &
    echo $! >"$d/munged.pid"
    cat >"$d/slurm.conf" <<EOF
ClusterName=fluxtest
SlurmctldHost=$host
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid.file
SlurmdPidFile=$d/slurmd.pid.file
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$d/slurm.conf"
    n=0
    until munge -S "$d/munge/munge.sock" -n </dev/null >/dev/null 2>&1; do
        n=$((n + 1))
        test $n -lt 100 || die "munged did not start ($d/munge/munged.log)"
        sleep 0.1
    done
    slurmctld -D -i >"$d/slurmctld.out" 2>&1 &
    echo $! >"$d/slurmctld.pid"
    slurmd -D >"$d/slurmd.out" 2>&1 &
    echo $! >"$d/slurmd.pid"
    n=0
    until test "$(sinfo -h -o %t 2>/dev/null)" = idle; do
        n=$((n + 1))
        if test $n -ge 600; then
            tail -5 "$d/slurmctld.log" "$d/slurmd.log" >&2
            die "the node is not idle after 60 s"
        fi
        sleep 0.1
    done
}

down () {
    d=$1
    test -d "$d" || return 0
    export SLURM_CONF="$d/slurm.conf"
    # steps first (scancel needs the controller), then the daemons
    PATH=$PATH:/usr/sbin timeout 10 scancel --full --user=root >/dev/null 2>&1
    for p in slurmd slurmctld munged; do
        test -s "$d/$p.pid" && kill "$(cat "$d/$p.pid")" 2>/dev/null
    done
    n=0
    while test $n -lt 50; do
        alive=0
        for p in slurmd slurmctld munged; do
            test -s "$d/$p.pid" && kill -0 "$(cat "$d/$p.pid")" 2>/dev/null &&
                alive=1
        done
        test $alive = 0 && break
        n=$((n + 1))
        sleep 0.1
    done
    for p in slurmd slurmctld munged; do
        test -s "$d/$p.pid" && kill -9 "$(cat "$d/$p.pid")" 2>/dev/null
    done
    rm -rf "$d"
}

case "${1:-}" in
check) check ;;
up) test $# = 2 || die "usage: up DIR"; check && up "$2" ;;
down) test $# = 2 || die "usage: down DIR"; down "$2" ;;
*) die "usage: slurm-cluster.sh check | up DIR | down DIR" ;;
esac

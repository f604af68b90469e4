#!/bin/sh
# Install the Debian packages needed to build and test flux-c.
# Idempotent: quiet and quick when everything is already installed.
set -e
PKGS="build-essential autoconf automake libtool pkg-config
 libzmq3-dev libczmq-dev libsodium-dev libjansson-dev libuv1-dev
 libsqlite3-dev libzstd-dev libhwloc-dev libmunge-dev munge libpmix-dev libyaml-dev
 libjemalloc-dev
 sharness clang clang-format libclang-rt-14-dev valgrind iproute2 procps python3
 mpich libmpich-dev
 openmpi-bin slurm-wlm openssh-server"

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
        || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
# Open MPI takes over the mpi/mpirun alternatives when installed: keep
# MPICH's mpicc and mpiexec the defaults (t3000, t3001; t3011 names
# mpirun.openmpi)
if [ -x /usr/bin/mpicc.mpich ]; then
    $SUDO update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null
    $SUDO update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null
fi

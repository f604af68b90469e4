#!/bin/bash
# The cost flux start adds over a launcher (issue 23): run from a build
# directory's bench/ or give the build directory as $1.  Medians of $REPS
# (default 5) wall times of
#   srun -N1 -n4 -O [--mpi=pmi2|pmix] true  vs  ... flux start true
#   mpiexec.hydra -n 4 [-pmi-port] true      vs  ... flux start true
#   mpirun.openmpi -np 4 true                vs  ... flux start true
# Slurm runs as t/slurm-cluster.sh makes it (root; stopped at the end);
# a launcher that is missing is skipped with the reason.
#
# Measured 2026-11-28 (load about 10, medians of 5): mpiexec.hydra -n 4
# 0.023 s, + flux start 0.114 s; -pmi-port 0.025 / 0.146 s; mpirun.openmpi
# -np 4 0.096 / 0.244 s; srun --mpi=pmi2 0.201 / 0.302 s; srun --mpi=pmix
# 0.181 / 0.290 s: flux start adds 0.09-0.15 s.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
src=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
REPS=${REPS:-5}

median () { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
t () {
    local s e
    for i in $(seq $REPS); do
        s=$(date +%s%N)
        "$@" >/dev/null 2>&1 || echo "failed: $*" >&2
        e=$(date +%s%N)
        echo "($e - $s) / 1000000000" | bc -l
    done | median
}
pair () {
    local name=$1
    shift
    local a b
    a=$(t "$@" true)
    b=$(t "$@" flux start true)
    printf "%-36s %6.3f s   + flux start: %6.3f s   (adds %6.3f s)\n" \
        "$name" "$a" "$b" "$(echo "$b - $a" | bc -l)"
}

if command -v mpiexec.hydra >/dev/null; then
    pair "mpiexec.hydra -n 4" mpiexec.hydra -n 4
    pair "mpiexec.hydra -pmi-port -n 4" mpiexec.hydra -pmi-port -n 4
else
    echo "mpiexec.hydra: not installed (apt-get install mpich)"
fi
if command -v mpirun.openmpi >/dev/null; then
    ompi="mpirun.openmpi --oversubscribe"
    [ "$(id -u)" = 0 ] && ompi="$ompi --allow-run-as-root"
    pair "mpirun.openmpi -np 4 (pmix)" $ompi -np 4
else
    echo "mpirun.openmpi: not installed (apt-get install openmpi-bin)"
fi
if why=$(sh "$src/t/slurm-cluster.sh" check 2>&1); then
    dir=$(mktemp -d /tmp/flux-bench-slurm.XXXXXX)
    trap 'sh "$src/t/slurm-cluster.sh" down "$dir"' EXIT
    sh "$src/t/slurm-cluster.sh" up "$dir"
    export SLURM_CONF="$dir/slurm.conf"
    pair "srun -N1 -n4 -O --mpi=pmi2" srun -N1 -n4 -O --mpi=pmi2
    pair "srun -N1 -n4 -O --mpi=pmix" srun -N1 -n4 -O --mpi=pmix
else
    echo "srun: $why"
fi

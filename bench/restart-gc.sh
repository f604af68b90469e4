#!/bin/bash
# Restart and storage (issues 4 and 5): N simulated jobs run into a
# statedir on one broker; then the instance is started again on it
# (time until the initial program runs: the job manager has replayed
# every eventlog), then stopped with `flux shutdown --gc` and started
# once more (the collection runs before the store is opened).  Run from a
# build directory (or give it as $1); N defaults to 20000.  Prints the
# statedir per job, the restart time and broker VmHWM, what the
# collection kept and took, and the restart time after it.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
n=${2:-20000}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
sd=$(mktemp -d /tmp/restart-gc.XXXXXX)
trap 'rm -rf "$sd"' EXIT

now () { date +%s.%N; }
mib () { du -sm "$sd" | cut -f1; }

t0=$(now)
flux start -Sstatedir="$sd" sh -c "
    flux submit --quiet --cc=1-$n \
        --setattr=system.exec.test.run_duration=0.001s true &&
    flux queue drain"
t1=$(now)
size=$(du -sk "$sd" | cut -f1)
echo "$n jobs: $(echo "$n / ($t1 - $t0)" | bc) jobs/s;" \
    "statedir $(mib) MiB, $((size / n)) KiB a job"

t0=$(now)
flux start -Sstatedir="$sd" sh -c "
    echo \"restart: ready in \$(echo \"\$(date +%s.%N) - $t0\" | bc) s,\" \
        \"\$(flux jobs -a --stats-only)\"
    grep VmHWM /proc/\$(flux getattr broker.pid)/status |
        awk '{print \"restart: broker VmHWM\", int(\$2 / 1024), \"MiB\"}'
    flux shutdown --quiet --gc; sleep 60"

t0=$(now)
flux start -Sstatedir="$sd" sh -c "
    echo \"after gc: ready in \$(echo \"\$(date +%s.%N) - $t0\" | bc) s,\" \
        \"\$(flux jobs -a --stats-only)\"
    flux module stats content-sqlite | jq -r '.gc |
        \"gc: kept \(.kept) of \(.before) objects,\" +
        \" file \(.file_before / 1048576 | floor) -> \" +
        \"\(.file_after / 1048576 | floor) MiB, \(.seconds * 100 | round / 100) s\"'"
echo "statedir after gc: $(mib) MiB"

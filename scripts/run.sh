#!/bin/bash
# Set up everything and run the project's main job: start a Flux instance
# of 4 brokers on this machine and use it (overlay tree, ping across it),
# then run the messaging and broker benchmarks.  (Jobs come with the job
# control plane; until then this is what an instance can do.)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p build/run
cd build/run
[ -f Makefile ] || "$top/configure" -q
make -j"$(nproc)" >/dev/null
export PATH="$PWD/src/cmd:$PWD/src/broker:$PATH"
unset FLUX_URI

echo "=== flux start -s 4: an instance of 4 brokers"
flux start -s 4 sh -c '
    echo "size $(flux getattr size), hosts $(flux getattr hostlist)"
    flux overlay status
    flux ping -c 3 3
    flux logger "hello from the main job"
    flux dmesg | tail -1'
echo "=== messaging benchmark"
./bench/msgbench "$@"
echo "=== broker benchmarks"
"$top/bench/broker-bench.sh" "$PWD"

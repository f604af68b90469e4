#!/bin/bash
# Set up everything and run the project's main job: start a Flux instance
# of 4 brokers on this machine and use it (overlay tree, ping across it, the
# KVS, resources, and jobs through the whole control plane with simulated
# execution — real process launch is the next piece of work), then print
# what the machine allows (bench/floors) and run the messaging and broker
# benchmarks.
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
    flux dmesg | grep "hello from the main job"
    flux kvs put demo.greeting="hello from the KVS" && flux kvs get demo.greeting
    flux resource list
    echo "submitting 100 jobs (simulated execution, 10 ms each)"
    flux submit --cc=1-100 --quiet \
        --setattr=system.exec.test.run_duration=0.01s true
    flux queue drain
    flux jobs -a | head -5
    echo "results: $(flux jobs -a -n -o "{result}" | sort | uniq -c | tr -s " ")"'
echo "=== what this machine allows (no Flux code)"
./bench/floors -d "$PWD"
echo "=== messaging benchmark"
./bench/msgbench "$@"
echo "=== broker benchmarks"
"$top/bench/broker-bench.sh" "$PWD"
echo "=== real execution (issue 21), each figure beside its floor"
"$top/bench/exec-jobs.sh" "$PWD"

#!/bin/bash
# Set up everything and run the project's main job: start a Flux instance
# of 4 brokers on this machine and use it (overlay tree, ping across it, the
# KVS, resources, real jobs across the brokers: flux run, flux exec, 100
# /bin/true jobs, and simulated ones), then print what the machine allows
# (bench/floors) and run the messaging and broker benchmarks.
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
    echo "flux run -N4 -n8: 8 tasks on 4 brokers"
    flux run -N4 -n8 --label-io sh -c "echo rank \$FLUX_TASK_RANK of \$FLUX_JOB_SIZE on broker \$(flux getattr rank)" | sort -n
    echo "stdin reaches task 0:" && echo "hello, task 0" | flux run cat
    echo "flux exec -r all: one process on every broker"
    flux exec -r all -l flux getattr rank | sort
    echo "submitting 100 real /bin/true jobs"
    flux submit --cc=1-100 --quiet /bin/true
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
